//! The bytes of the format at their lowest: the magic, numbers in a file's byte order, and the
//! length-prefixed strings of string values and string arrays. Everything that reads GGUF bytes
//! reads them through here: the parser (`parse/`), the value decoder (`value.rs`), the writer's
//! magic (`write.rs`), string arrays ([`StringArray`](crate::StringArray)) and the importance
//! matrix reader ([`ops::imatrix`](crate::ops::imatrix)).
//!
//! Spec: ggml `docs/gguf.md`, "File Structure": every number is stored in the file's byte order
//! (little-endian, or big-endian for a byte-swapped file: [`Endian::detect`]); a string is a
//! `u64` byte length followed by that many bytes, without a terminator.
//!
//! Nothing here checks UTF-8 or allocates: these are bounds-checked reads of a byte slice, and a
//! read past its end gives 0 or `None`, never a panic.

use crate::format::{Endian, ValueType, MAX_DEPTH};

/// The four bytes every GGUF file starts with.
pub(crate) const MAGIC: [u8; 4] = *b"GGUF";

/// Bytes of a string's length field.
pub(crate) const STRING_LEN: usize = 8;

/// A number stored in a file: read from its first bytes in the file's byte order.
pub(crate) trait Stored: Sized + Default {
    /// The number at the start of `b`; 0 when `b` is shorter than the number.
    fn read(b: &[u8], endian: Endian) -> Self;
}

macro_rules! stored {
    ($($t:ty),*) => {$(
        impl Stored for $t {
            #[inline(always)]
            fn read(b: &[u8], endian: Endian) -> $t {
                match b.first_chunk() {
                    Some(&raw) => match endian {
                        Endian::Little => <$t>::from_le_bytes(raw),
                        Endian::Big => <$t>::from_be_bytes(raw),
                    },
                    None => <$t>::default(),
                }
            }
        }
    )*};
}
stored!(u8, i8, u16, i16, u32, i32, f32, u64, i64, f64);

/// The number of type `T` at the start of `b`, in byte order `endian` (0 if `b` is shorter).
#[inline(always)]
pub(crate) fn num<T: Stored>(b: &[u8], endian: Endian) -> T {
    T::read(b, endian)
}

/// The number of type `T` at `pos` of `b`, if `b` holds all of it.
#[inline(always)]
pub(crate) fn num_at<T: Stored>(b: &[u8], pos: usize, endian: Endian) -> Option<T> {
    let end = pos.checked_add(std::mem::size_of::<T>())?;
    Some(T::read(b.get(pos..end)?, endian))
}

/// The string whose length field starts at `pos` of `bytes`: its body, and where the next item
/// starts. `None` if the length field or the body does not lie wholly in `bytes`.
#[inline(always)]
pub(crate) fn string_at(bytes: &[u8], pos: usize, endian: Endian) -> Option<(&[u8], usize)> {
    let len: u64 = num_at(bytes, pos, endian)?;
    let start = pos.checked_add(STRING_LEN)?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    Some((bytes.get(start..end)?, end))
}

/// A run of length-prefixed strings from `pos` in `bytes`: the end of the longest run of at most
/// `max` strings that lie wholly in `bytes` and whose 8-byte length fields are all ASCII
/// (< 0x80), and the number of strings in it (0 if the first one does not qualify).
///
/// Each string of such a run is delimited by ASCII bytes, so it starts and ends on a character
/// boundary of the run: the run is valid UTF-8 exactly when every string in it is, and one SIMD
/// validation of the run stands for one per string (the parser's string arrays).
#[inline]
#[allow(
    clippy::arithmetic_side_effects,
    reason = "at <= bytes.len() - 8 (loop condition), body + len <= bytes.len() (checked just before), \
              n < max: nothing overflows, and this is the hot loop of string arrays"
)]
pub(crate) fn ascii_length_run(bytes: &[u8], pos: usize, max: u64, endian: Endian) -> (usize, u64) {
    // This loop runs at the latency of one load and one addition per string: the next position
    // is `body + len`, with `body` computed while the length is loaded.
    let Some(last) = bytes.len().checked_sub(STRING_LEN) else { return (pos, 0) };
    let (mut at, mut n) = (pos, 0u64);
    while n < max && at <= last {
        let Some(&raw) = bytes.get(at..at + STRING_LEN).and_then(<[u8]>::first_chunk::<8>) else { break };
        if u64::from_ne_bytes(raw) & 0x8080_8080_8080_8080 != 0 {
            break;
        }
        let len = match endian {
            Endian::Little => u64::from_le_bytes(raw),
            Endian::Big => u64::from_be_bytes(raw),
        };
        let body = at + STRING_LEN;
        if len > (bytes.len() - body) as u64 {
            break;
        }
        at = body + len as usize;
        n += 1;
    }
    (at, n)
}

/// Where the `len` elements of type `elem` that start at `start` in `bytes` end (an array's
/// elements; an element of type ARRAY is a `u32` element type and a `u64` count, then its own
/// elements). For bytes the parser validated, the walk cannot fail; on any other bytes a walk
/// that leaves `bytes`, meets an unknown type or nests deeper than [`MAX_DEPTH`] gives the end of
/// `bytes`. Allocates nothing: the nesting is held inline.
pub(crate) fn elements_end(bytes: &[u8], start: usize, elem: ValueType, len: u64, endian: Endian) -> usize {
    elements_end_checked(bytes, start, elem, len, endian).unwrap_or(bytes.len())
}

fn elements_end_checked(bytes: &[u8], start: usize, elem: ValueType, len: u64, endian: Endian) -> Option<usize> {
    // Open arrays, outermost first: element type and elements left.
    let mut stack = [(ValueType::U8, 0u64); MAX_DEPTH];
    let mut depth = 1usize;
    *stack.first_mut()? = (elem, len);
    let mut pos = start;
    while let Some(top) = depth.checked_sub(1).and_then(|d| stack.get_mut(d)) {
        let (elem, left) = *top;
        if left == 0 {
            depth = depth.checked_sub(1)?;
            continue;
        }
        match elem {
            ValueType::String => {
                // Every string of this array: each consumes at least its length field.
                let mut k = 0;
                while k < left {
                    pos = string_at(bytes, pos, endian)?.1;
                    k = k.checked_add(1)?;
                }
                top.1 = 0;
            }
            ValueType::Array => {
                top.1 = left.checked_sub(1)?;
                let id: u32 = num_at(bytes, pos, endian)?;
                let inner = ValueType::from_id(id)?;
                let count: u64 = num_at(bytes, pos.checked_add(4)?, endian)?;
                pos = pos.checked_add(12)?;
                *stack.get_mut(depth)? = (inner, count);
                depth = depth.checked_add(1)?;
            }
            fixed => {
                let size = u64::try_from(fixed.fixed_size()?).ok()?;
                let n = usize::try_from(left.checked_mul(size)?).ok()?;
                pos = pos.checked_add(n)?;
                top.1 = 0;
            }
        }
        if pos > bytes.len() {
            return None;
        }
    }
    Some(pos)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn le_strings(items: &[&str]) -> Vec<u8> {
        let mut b = Vec::new();
        for s in items {
            b.extend_from_slice(&(s.len() as u64).to_le_bytes());
            b.extend_from_slice(s.as_bytes());
        }
        b
    }

    #[test]
    fn numbers_in_both_byte_orders_and_short_slices() {
        assert_eq!(num::<u32>(&[1, 0, 0, 0], Endian::Little), 1);
        assert_eq!(num::<u32>(&[0, 0, 0, 1], Endian::Big), 1);
        assert_eq!(num::<u64>(&[1, 2, 3], Endian::Little), 0);
        assert_eq!(num_at::<u16>(&[9, 1, 2], 1, Endian::Little), Some(0x0201));
        assert_eq!(num_at::<u16>(&[9, 1], 1, Endian::Little), None);
        assert_eq!(num_at::<u16>(&[], usize::MAX, Endian::Little), None);
    }

    #[test]
    fn strings_are_found_and_bounded() {
        let b = le_strings(&["ab", "", "é"]);
        assert_eq!(string_at(&b, 0, Endian::Little), Some((&b"ab"[..], 10)));
        assert_eq!(string_at(&b, 10, Endian::Little), Some((&b""[..], 18)));
        assert_eq!(string_at(&b, 18, Endian::Little), Some(("é".as_bytes(), 28)));
        assert_eq!(string_at(&b, 28, Endian::Little), None);
        assert_eq!(string_at(&b[..27], 18, Endian::Little), None);
        let mut huge = u64::MAX.to_le_bytes().to_vec();
        huge.push(0);
        assert_eq!(string_at(&huge, 0, Endian::Little), None);
        // The run stops before a length field with a byte >= 0x80 and at `max`.
        assert_eq!(ascii_length_run(&b, 0, 10, Endian::Little), (28, 3));
        assert_eq!(ascii_length_run(&b, 0, 2, Endian::Little), (18, 2));
        assert_eq!(ascii_length_run(&huge, 0, 10, Endian::Little), (0, 0));
    }

    #[test]
    fn elements_end_walks_nested_arrays() {
        // [[1u8, 2u8], []] of u8 arrays, then a trailing byte.
        let mut b = Vec::new();
        for n in [2u64, 0] {
            b.extend_from_slice(&(ValueType::U8 as u32).to_le_bytes());
            b.extend_from_slice(&n.to_le_bytes());
            b.extend(std::iter::repeat_n(7u8, n as usize));
        }
        b.push(0xFF);
        assert_eq!(elements_end(&b, 0, ValueType::Array, 2, Endian::Little), 26);
        assert_eq!(elements_end(&b, 0, ValueType::Array, 1, Endian::Little), 14);
        // Past the end, an unknown type, and more nesting than MAX_DEPTH give the end of `bytes`.
        assert_eq!(elements_end(&b, 0, ValueType::Array, 3, Endian::Little), b.len());
        assert_eq!(elements_end(&[0xEE; 12], 0, ValueType::Array, 1, Endian::Little), 12);
        let mut deep = Vec::new();
        for _ in 0..MAX_DEPTH + 1 {
            deep.extend_from_slice(&(ValueType::Array as u32).to_le_bytes());
            deep.extend_from_slice(&1u64.to_le_bytes());
        }
        assert_eq!(elements_end(&deep, 0, ValueType::Array, 1, Endian::Little), deep.len());
        let s = le_strings(&["a", "bc"]);
        assert_eq!(elements_end(&s, 0, ValueType::String, 2, Endian::Little), s.len());
        assert_eq!(elements_end(&[0; 8], 0, ValueType::F32, 2, Endian::Little), 8);
        // Fixed-size elements past the end (12 bytes of F32 in 8), the walk then over.
        assert_eq!(elements_end(&[0; 8], 0, ValueType::F32, 3, Endian::Little), 8);
        assert_eq!(elements_end(&[0; 8], 0, ValueType::F32, u64::MAX, Endian::Little), 8);
    }
}
