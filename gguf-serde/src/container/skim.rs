//! Reading exactly the metadata of a file from a stream.
//!
//! [`read_metadata`] walks the structure of the header, key/value pairs and tensor infos without
//! validating content, reading each item as its length says, so that [`super::Gguf::from_reader`]
//! holds the metadata and nothing of the tensor data (beyond a small read-ahead buffer). It stops
//! at the first thing that is malformed; the validating parser then reports it precisely.

use std::io::{self, Read};

use crate::format::ValueType;
use crate::format::{MAX_DEPTH, MAX_DIMS};

/// Read granularity: the most that is read past the end of the tensor infos.
pub(crate) const READ_AHEAD: usize = 8 * 1024;

struct Skim<R> {
    r: R,
    /// Bytes read so far (the metadata, plus up to `READ_AHEAD` beyond `pos`).
    buf: Vec<u8>,
    /// Bytes walked so far.
    pos: usize,
    big_endian: bool,
    /// Bytes of the file not yet walked.
    remaining: u64,
}

/// `Ok(false)`: stop (end of file or malformed).
type Step = io::Result<bool>;

impl<R: Read> Skim<R> {
    /// Walks the next `n` bytes, reading them if needed; `false` if the file has fewer left,
    /// after reading all it has (so the parser sees the same cut file as from a slice).
    fn bytes(&mut self, n: u64) -> Step {
        let short = n > self.remaining;
        let n = n.min(self.remaining);
        let end = self.pos.saturating_add(usize::try_from(n).unwrap_or(usize::MAX));
        if end > self.buf.len() {
            // Read what is missing, plus up to READ_AHEAD more while the file has it.
            let unread = self.remaining.saturating_sub((self.buf.len() - self.pos) as u64);
            let want = ((end - self.buf.len()) as u64).saturating_add(READ_AHEAD as u64).min(unread);
            (&mut self.r).take(want).read_to_end(&mut self.buf)?;
            if self.buf.len() < end {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "file shorter than its length"));
            }
        }
        self.pos = end;
        self.remaining -= n;
        Ok(!short)
    }

    fn num<const N: usize>(&mut self) -> io::Result<Option<u64>> {
        let at = self.pos;
        if !self.bytes(N as u64)? {
            return Ok(None);
        }
        let mut b = [0u8; 8];
        let src = self.buf.get(at..at + N).unwrap_or_default();
        if self.big_endian {
            b.get_mut(8 - N..).unwrap_or_default().copy_from_slice(src);
            Ok(Some(u64::from_be_bytes(b)))
        } else {
            b.get_mut(..N).unwrap_or_default().copy_from_slice(src);
            Ok(Some(u64::from_le_bytes(b)))
        }
    }

    /// A u64 length followed by that many bytes.
    fn string(&mut self) -> Step {
        match self.num::<8>()? {
            Some(n) => self.bytes(n),
            None => Ok(false),
        }
    }

    fn value(&mut self, ty: ValueType, depth: usize) -> Step {
        match ty {
            ValueType::String => self.string(),
            ValueType::Array => {
                let Some(elem) = self.num::<4>()?.and_then(|id| ValueType::from_id(id as u32)) else {
                    return Ok(false);
                };
                let Some(count) = self.num::<8>()? else { return Ok(false) };
                if depth > MAX_DEPTH || count > self.remaining / elem.min_size() as u64 {
                    return Ok(false);
                }
                match elem.fixed_size() {
                    Some(size) => self.bytes(count * size as u64),
                    None => {
                        for _ in 0..count {
                            if !self.value(elem, depth + 1)? {
                                return Ok(false);
                            }
                        }
                        Ok(true)
                    }
                }
            }
            t => self.bytes(t.fixed_size().unwrap_or(1) as u64),
        }
    }

    fn all(&mut self) -> Step {
        if !self.bytes(8)? || self.buf.get(..4) != Some(b"GGUF") {
            return Ok(false);
        }
        let raw = self.buf.get(4..8).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes).unwrap_or(0);
        self.big_endian = raw & 0xffff == 0 && raw != 0;
        let (Some(n_tensors), Some(n_kv)) = (self.num::<8>()?, self.num::<8>()?) else { return Ok(false) };
        // The same minimum sizes as the parser: anything claiming more stops here.
        if n_kv > self.remaining / 14 || n_tensors > self.remaining / 24 {
            return Ok(false);
        }
        for _ in 0..n_kv {
            if !self.string()? {
                return Ok(false);
            }
            let Some(ty) = self.num::<4>()?.and_then(|id| ValueType::from_id(id as u32)) else { return Ok(false) };
            if !self.value(ty, 1)? {
                return Ok(false);
            }
        }
        for _ in 0..n_tensors {
            if !self.string()? {
                return Ok(false);
            }
            let Some(n_dims) = self.num::<4>()?.filter(|&n| n <= MAX_DIMS as u64) else { return Ok(false) };
            if !self.bytes(n_dims * 8 + 4 + 8)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Reads the bytes from the start of the file to the end of its tensor infos (or to the first
/// malformed item, or to the end of a file that is cut short). Reads at most [`READ_AHEAD`] bytes
/// more from `reader`; allocates only for bytes the file really has.
pub(crate) fn read_metadata<R: Read>(reader: R, file_len: u64) -> io::Result<Vec<u8>> {
    let mut s = Skim { r: reader, buf: Vec::new(), pos: 0, big_endian: false, remaining: file_len };
    s.all()?;
    // Drop the read-ahead: the buffer holds the metadata only.
    s.buf.truncate(s.pos);
    Ok(s.buf)
}
