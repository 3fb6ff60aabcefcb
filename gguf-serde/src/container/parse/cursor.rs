//! The parser's cursor: bounds-checked reads of the bytes read so far, which say `Truncated` when
//! the file ends before and ask for more bytes while they are not read yet; and scalar values.

use super::*;

/// The bytes read so far at a position of the file.
pub(super) struct Cursor<'a> {
    pub(super) data: &'a [u8],
    pub(super) pos: usize,
    /// The file's length, if known; `data` is at most that long.
    pub(super) len: Option<u64>,
    pub(super) endian: Endian,
}

impl<'a> Cursor<'a> {
    /// Bytes of the file from `pos` on (those read so far while its length is unknown; every
    /// error that reports this is decided with the length known).
    pub(super) fn remaining(&self) -> u64 {
        self.len.unwrap_or(self.data.len() as u64).saturating_sub(self.pos as u64)
    }

    /// Whether the file has `n` bytes from `pos` on; asks for them while its length is unknown.
    pub(super) fn has(&self, n: u64) -> Res<bool> {
        if self.data.len().saturating_sub(self.pos) as u64 >= n {
            return Ok(true);
        }
        match self.len {
            Some(len) => Ok(len.saturating_sub(self.pos as u64) >= n),
            None => Err(Halt::More { offset: self.pos as u64, needed: n }),
        }
    }

    /// Takes `n` bytes: `Truncated` if the file ends before, `More` if they are not read yet.
    pub(super) fn take(&mut self, n: u64, item: Item, key: Option<&str>) -> Res<&'a [u8]> {
        let start = self.pos;
        let end = usize::try_from(n).ok().and_then(|n| start.checked_add(n));
        if let Some((end, bytes)) = end.and_then(|end| Some((end, self.data.get(start..end)?))) {
            self.pos = end;
            return Ok(bytes);
        }
        match self.len {
            Some(len) if (start as u64).saturating_add(n) > len => Err(FormatError::Truncated {
                item,
                owner: key.map(str::to_owned),
                offset: start as u64,
                needed: n,
                available: self.remaining(),
            }
            .into()),
            _ => Err(Halt::More { offset: start as u64, needed: n }),
        }
    }

    pub(super) fn u32(&mut self, item: Item, key: Option<&str>) -> Res<u32> {
        let b = self.take(4, item, key)?;
        Ok(num(b, self.endian))
    }

    pub(super) fn u64(&mut self, item: Item, key: Option<&str>) -> Res<u64> {
        let b = self.take(8, item, key)?;
        Ok(num(b, self.endian))
    }

    /// Reads a `u64` length and checks it against the bytes left in the file.
    pub(super) fn length(&mut self, item: Item, key: Option<&str>) -> Res<u64> {
        let at = self.pos as u64;
        let n = self.u64(item, key)?;
        if !self.has(n)? {
            return Err(FormatError::TooLong {
                item,
                owner: key.map(str::to_owned),
                offset: at,
                count: n,
                remaining: self.remaining(),
            }
            .into());
        }
        Ok(n)
    }

    /// A `u64`-length-prefixed string, any bytes (ggml does not check UTF-8 either); returns its
    /// byte range.
    pub(super) fn string(&mut self, item: Item, key: Option<&str>) -> Res<Range<usize>> {
        let n = self.length(item, key)?;
        let start = self.pos;
        self.take(n, item, key)?;
        Ok(start..self.pos)
    }

    pub(super) fn str_at(&self, r: &Range<usize>) -> GgufStr<'a> {
        str_in(self.data, r)
    }
}

/// The string at `r` of `data` (empty past the end; every range comes from the parser).
pub(super) fn str_in<'a>(data: &'a [u8], r: &Range<usize>) -> GgufStr<'a> {
    GgufStr::from_bytes(data.get(r.clone()).unwrap_or_default())
}

/// A fixed-size value. A BOOL is any byte, read as ggml's `gguf_reader::read(bool &)` reads it:
/// 0 is false, anything else true (the spec allows only 0 and 1; `gguf validate` warns).
pub(super) fn scalar(c: &mut Cursor<'_>, t: ValueType, key: &str) -> Res<ValueRef<'static>> {
    let size = t.fixed_size().unwrap_or(1) as u64;
    let bytes = c.take(size, Item::Value, Some(key))?;
    Ok(decode_fixed(t, bytes, c.endian))
}
