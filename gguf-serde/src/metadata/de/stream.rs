//! Reading just the key/value block of a GGUF file from a plain `Read`.
//!
//! The header and the key/value pairs are walked by their lengths and copied into a buffer; the
//! reader is not read past the last pair (apart from what a `BufReader` buffers), so a model's
//! tensor data is never read. Every length is read through `Read::take`, so the buffer grows only
//! as far as the reader really yields bytes, whatever a hostile length claims. The buffer is then
//! a complete, tensor-less GGUF file (the same header with a tensor count of 0) that the
//! container validates as usual; byte offsets in errors are those of the original file. When the
//! walk meets something it cannot follow (the reader ends early, an unknown type id, arrays
//! nested too deep) it stops, and the container's validation reports the problem with its key
//! and offset.

use std::io::{BufReader, Read};

use crate::error::{Error, Result};
use crate::format::{ValueType, MAX_DEPTH};

struct Walker<R> {
    r: R,
    buf: Vec<u8>,
    big: bool,
}

/// The walk cannot go on (see the module docs); not an error by itself.
struct Stop;

type Step<T> = std::result::Result<T, Stop>;

impl<R: Read> Walker<R> {
    fn copy(&mut self, n: u64) -> Result<Step<()>> {
        let before = self.buf.len() as u64;
        (&mut self.r).take(n).read_to_end(&mut self.buf).map_err(|e| Error::io("reading GGUF", e))?;
        Ok(if self.buf.len() as u64 - before == n { Ok(()) } else { Err(Stop) })
    }

    fn num<const N: usize>(&mut self) -> Result<Step<[u8; N]>> {
        if let Err(stop) = self.copy(N as u64)? {
            return Ok(Err(stop));
        }
        let mut b = self.buf.get(self.buf.len() - N..).and_then(|b| <[u8; N]>::try_from(b).ok()).unwrap_or([0; N]);
        if self.big {
            b.reverse();
        }
        Ok(Ok(b))
    }

    fn u32(&mut self) -> Result<Step<u32>> {
        Ok(self.num::<4>()?.map(u32::from_le_bytes))
    }

    fn u64(&mut self) -> Result<Step<u64>> {
        Ok(self.num::<8>()?.map(u64::from_le_bytes))
    }

    fn string(&mut self) -> Result<Step<()>> {
        match self.u64()? {
            Ok(n) => self.copy(n),
            Err(stop) => Ok(Err(stop)),
        }
    }

    fn value(&mut self, t: ValueType, depth: usize) -> Result<Step<()>> {
        match t {
            ValueType::String => self.string(),
            ValueType::Array => {
                if depth > MAX_DEPTH {
                    return Ok(Err(Stop));
                }
                let Ok(id) = self.u32()? else { return Ok(Err(Stop)) };
                let Ok(n) = self.u64()? else { return Ok(Err(Stop)) };
                let Some(elem) = ValueType::from_id(id) else { return Ok(Err(Stop)) };
                match elem.fixed_size() {
                    Some(size) => self.copy(n.saturating_mul(size as u64)),
                    None => {
                        for _ in 0..n {
                            if let Err(stop) = self.value(elem, depth + 1)? {
                                return Ok(Err(stop));
                            }
                        }
                        Ok(Ok(()))
                    }
                }
            }
            t => self.copy(t.fixed_size().unwrap_or(1) as u64),
        }
    }

    fn kv_block(&mut self) -> Result<Step<()>> {
        let Ok(_tensor_count) = self.u64()? else { return Ok(Err(Stop)) };
        let Ok(n_kv) = self.u64()? else { return Ok(Err(Stop)) };
        for _ in 0..n_kv {
            if let Err(stop) = self.string()? {
                return Ok(Err(stop));
            }
            let Ok(id) = self.u32()? else { return Ok(Err(Stop)) };
            let Some(t) = ValueType::from_id(id) else { return Ok(Err(Stop)) };
            if let Err(stop) = self.value(t, 1)? {
                return Ok(Err(stop));
            }
        }
        Ok(Ok(()))
    }
}

/// Reads the header and key/value block from `reader` into a tensor-less GGUF file.
pub(super) fn read_kv_block<R: Read>(reader: R) -> Result<Vec<u8>> {
    let mut w = Walker { r: BufReader::new(reader), buf: Vec::new(), big: false };
    if w.copy(8)?.is_ok() && w.buf.get(..4) == Some(b"GGUF".as_slice()) {
        let raw = w.buf.get(4..8).and_then(|b| <[u8; 4]>::try_from(b).ok()).map(u32::from_le_bytes).unwrap_or(0);
        w.big = raw & 0xffff == 0 && raw != 0;
        // Whether the walk finished or stopped, the container validates what was read.
        let _ = w.kv_block()?;
    }
    if let Some(count) = w.buf.get_mut(8..16) {
        count.fill(0);
    }
    Ok(w.buf)
}
