//! The one driver of the parser: it gives the parser the bytes of a source until the parser is
//! done, reading more where it asks for more ([`Step::NeedMore`]).
//!
//! - A slice or a memory mapping ([`Whole`]) is the whole file: the parser never asks for more.
//! - A `Read` ([`Pieces`]) is read into a buffer in pieces, each what the parser asks for plus
//!   up to a read-ahead ([`READ_AHEAD`]) while the source has it. With the length known
//!   (`Read + Seek`), the parser decides every count from it and asks only for bytes it then
//!   parses, so at most the read-ahead is read past the end of the tensor infos. With the length
//!   unknown (a plain `Read`), a count is checked by reading as far as it claims (at most to the
//!   end of the source); when the source ends, the parser is told the length and decides exactly
//!   as for the whole file in memory.

use std::io::{self, Read};

use super::parse::{Goal, Layout, Parser, Step};
use crate::error::{Error, Result};

/// Read granularity: the most that is read past what the parser asked for.
pub(crate) const READ_AHEAD: usize = 8 * 1024;

/// The room made for a piece of a source of known length before it is read, while the bytes
/// read so far are fewer.
const PIECE_ROOM: usize = 64 * 1024;

/// Where the driver gets the file's bytes.
pub(crate) trait Feed {
    /// The bytes from the start of the file, as far as read.
    fn bytes(&self) -> &[u8];

    /// The file's length, if known.
    fn len(&self) -> Option<u64>;

    /// Reads on so that [`bytes`](Self::bytes) reaches `end` if the file has that many bytes
    /// (the length becomes known when the source ends first).
    ///
    /// # Errors
    /// [`Error::Io`] from the reader, or if it ends before the length it claimed.
    fn fill(&mut self, end: u64) -> Result<()>;
}

/// A file wholly in memory (a slice, a mapping).
pub(crate) struct Whole<'a>(pub(crate) &'a [u8]);

impl Feed for Whole<'_> {
    fn bytes(&self) -> &[u8] {
        self.0
    }

    fn len(&self) -> Option<u64> {
        Some(self.0.len() as u64)
    }

    fn fill(&mut self, _end: u64) -> Result<()> {
        Ok(())
    }
}

/// A file read from a `Read` into a buffer, in pieces.
pub(crate) struct Pieces<R> {
    reader: R,
    buf: Vec<u8>,
    len: Option<u64>,
    read_ahead: usize,
    /// What reading is for, in I/O errors.
    context: &'static str,
}

impl<R: Read> Pieces<R> {
    /// A feed from `reader`, positioned at the start of a file of `len` bytes (`None`: unknown).
    pub(crate) fn new(reader: R, len: Option<u64>, context: &'static str) -> Self {
        Pieces { reader, buf: Vec::new(), len, read_ahead: READ_AHEAD, context }
    }

    /// The same with another read-ahead (tests and fuzzing: 0 makes the parser stop at every
    /// item).
    pub(crate) fn with_read_ahead(mut self, read_ahead: usize) -> Self {
        self.read_ahead = read_ahead;
        self
    }

    /// The bytes read.
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

impl<R: Read> Feed for Pieces<R> {
    fn bytes(&self) -> &[u8] {
        &self.buf
    }

    fn len(&self) -> Option<u64> {
        self.len
    }

    fn fill(&mut self, end: u64) -> Result<()> {
        let have = self.buf.len() as u64;
        let mut to = end.saturating_add(self.read_ahead as u64);
        if let Some(len) = self.len {
            to = to.min(len);
        }
        // `take` bounds the read: the buffer grows only as far as the reader really yields bytes.
        // Room for the piece first, so that a piece is one or two calls of the reader where it
        // has the bytes, not `read_to_end`'s growth from 32 bytes (ten calls for 8 KiB): at most
        // what was read so far, and with the length known (the piece is then within the file)
        // at least up to 64 KiB; no more memory than the bytes read or the file's length pay for.
        let piece = usize::try_from(to.saturating_sub(have)).unwrap_or(usize::MAX);
        let room = if self.len.is_some() { PIECE_ROOM } else { 0 };
        self.buf.reserve(piece.min(self.buf.len().max(room)));
        (&mut self.reader)
            .take(to.saturating_sub(have))
            .read_to_end(&mut self.buf)
            .map_err(|e| Error::io(self.context, e))?;
        let got = self.buf.len() as u64;
        if got < to {
            // The source ended.
            match self.len {
                None => self.len = Some(got),
                Some(_) if got < end => {
                    let e = io::Error::new(io::ErrorKind::UnexpectedEof, "file shorter than its length");
                    return Err(Error::io(self.context, e));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}

/// Parses `feed` up to `goal`.
///
/// # Errors
/// Any validation error (a file that ends early is refused as the whole file in memory would
/// be: the parser, told the length, turns what it needs into the same error); [`Error::Io`]
/// from the feed.
pub(crate) fn parse<F: Feed>(feed: &mut F, goal: Goal) -> Result<Layout> {
    let mut parser = Parser::new(goal, feed.len());
    loop {
        match parser.resume(feed.bytes())? {
            Step::Done(layout) => return Ok(layout),
            Step::NeedMore { offset, needed } => {
                let (have, knew) = (feed.bytes().len(), feed.len());
                feed.fill(offset.saturating_add(needed))?;
                parser.set_len(feed.len());
                if feed.bytes().len() == have && feed.len() == knew {
                    // Not reached: with the length known and every byte read, nothing is asked.
                    let e = io::Error::new(io::ErrorKind::UnexpectedEof, "no more bytes");
                    return Err(Error::io("reading GGUF", e));
                }
            }
        }
    }
}
