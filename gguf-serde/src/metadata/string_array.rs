//! [`StringArray`]: an owned `array<string>` in two allocations, for vocabularies.

use std::fmt;
use std::ops::Index;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::container::wire::{num_at, string_at};
use crate::format::{Endian, ValueType};

/// The newtype name with which [`StringArray`] asks a deserializer for a whole string array at
/// once. Our deserializer answers an `array<string>` with a map of one entry, whose key is
/// [`RAW_LE`] or [`RAW_BE`] (the byte order) and whose value is the stored elements as bytes
/// (`visit_borrowed_bytes`): a `u64` length and the string's bytes, for each string. Any other
/// deserializer sees a transparent newtype.
pub(crate) const STRING_ARRAY_TOKEN: &str = "\0gguf_serde::StringArray";
/// The key of the raw elements of a little-endian file (see [`STRING_ARRAY_TOKEN`]).
pub(crate) const RAW_LE: &str = "\0gguf_serde::StringArray::le";
/// The key of the raw elements of a big-endian file (see [`STRING_ARRAY_TOKEN`]).
pub(crate) const RAW_BE: &str = "\0gguf_serde::StringArray::be";

/// An owned array of strings held in two allocations, all the strings' bytes in one buffer and
/// their end offsets in another, rather than one allocation per string as `Vec<String>` makes.
///
/// Meant for `tokenizer.ggml.tokens` (Gemma 3: 262,144 strings, 2.3 MB) and other large string
/// arrays that must outlive the file they are read from; where they need not, `Vec<&str>` borrows
/// and copies nothing. As a serde field type it reads a GGUF `array<string>`:
///
/// ```
/// # fn main() -> gguf_serde::Result<()> {
/// use gguf_serde::StringArray;
///
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Vocab {
///     #[serde(rename = "tokenizer.ggml.tokens")]
///     tokens: StringArray,
/// }
///
/// let bytes = gguf_serde::to_vec(&Vocab { tokens: StringArray::from(vec!["<pad>", "a", "é"]) })?;
/// let v: Vocab = gguf_serde::from_slice(&bytes)?;
/// assert_eq!(v.tokens.len(), 3);
/// assert_eq!(v.tokens.get(2), Some("é"));
/// assert_eq!(&v.tokens[0], "<pad>");
/// assert_eq!(v.tokens.iter().collect::<Vec<_>>(), ["<pad>", "a", "é"]);
/// # Ok(())
/// # }
/// ```
///
/// From this crate's deserializer the array is copied in one pass over its stored bytes (no
/// per-string visit, no second UTF-8 check: the parser checked every string when the file was
/// opened; an array with a string that is not UTF-8 is refused naming `key[i]` and its offset,
/// as for `Vec<String>`); from any other serde format it reads a sequence
/// of strings, each copied into the buffer (no allocation per string). It writes as a sequence of
/// strings: through this crate's serializer an `array<string>`, also when empty; through
/// `serde_json` a JSON array.
///
/// Memory: the strings' bytes (read from a file: with 16 bytes to spare, room the one-pass copy
/// writes its blocks into) plus one `usize` (8 bytes on 64-bit targets) per string
/// (`Vec<String>`: the bytes, 24 bytes per string, and the allocator's overhead of each of its
/// allocations).
///
/// Time: reading into a `StringArray` makes two allocations for the whole array, where a
/// `Vec<String>` makes one `malloc` and one `free` per string (each `String` owns its bytes,
/// whatever the format and however it is filled); BENCHMARKS.md ("Metadata walk vs ggml") has
/// the measurements beside ggml's own walk.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct StringArray {
    /// Every string's bytes, one after the other.
    bytes: String,
    /// `ends[i]`: where string `i` ends in `bytes` (it starts where string `i - 1` ends, or at 0).
    ends: Vec<usize>,
}

impl StringArray {
    /// An empty array.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty array with room for `strings` strings of `bytes` bytes in all.
    pub fn with_capacity(strings: usize, bytes: usize) -> Self {
        StringArray { bytes: String::with_capacity(bytes), ends: Vec::with_capacity(strings) }
    }

    /// The number of strings.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are no strings.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// String `i`, or `None` if `i >= len()`.
    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)?;
        let start = match i.checked_sub(1) {
            Some(p) => self.ends.get(p).copied().unwrap_or(0),
            None => 0,
        };
        self.str_between(start, end)
    }

    /// `bytes[start..end]`, for `start` and `end` taken from `ends` (or 0): both are character
    /// boundaries, so only the bounds are checked.
    #[inline]
    fn str_between(&self, start: usize, end: usize) -> Option<&str> {
        let b = self.bytes.as_bytes().get(start..end)?;
        debug_assert!(self.bytes.is_char_boundary(start) && self.bytes.is_char_boundary(end));
        // SAFETY: every value of `ends` is a character boundary of `bytes` (`push` appends a
        // whole `&str`; `from_raw` checks each end), so `b` is valid UTF-8.
        #[allow(unsafe_code)]
        Some(unsafe { std::str::from_utf8_unchecked(b) })
    }

    /// The strings in order.
    pub fn iter(&self) -> StringArrayIter<'_> {
        StringArrayIter { array: self, start: 0, front: 0, back: self.ends.len() }
    }

    /// Appends a string.
    pub fn push(&mut self, s: &str) {
        self.bytes.push_str(s);
        self.ends.push(self.bytes.len());
    }

    /// All the strings' bytes, one after the other (their total length is `as_str().len()`).
    pub fn as_str(&self) -> &str {
        &self.bytes
    }

    /// The strings as a `Vec<String>`.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }

    /// A copy of the strings of a string array read from a file; `None` if the elements of
    /// `array` are not strings, or one of them is not UTF-8 (a `StringArray` holds text; the
    /// bytes are in [`ArrayRef::strings`](crate::ArrayRef::strings)). Also `None` for an empty
    /// array of another element type, which serde reads as an empty `StringArray` (as it reads an
    /// empty `Vec<String>`).
    pub fn from_array(array: &crate::ArrayRef<'_>) -> Option<Self> {
        if let Some(whole) = Self::from_utf8_array(array) {
            return Some(whole);
        }
        let strings = array.strings()?;
        let total = array.raw_bytes().len().saturating_sub(strings.len().saturating_mul(8));
        let mut out = StringArray::with_capacity(strings.len(), total);
        for s in strings {
            out.push(s.to_str().ok()?);
        }
        Some(out)
    }

    /// A copy of `array`, an `array<string>` read by this crate's parser that found every one of
    /// its strings UTF-8 ([`ArrayRef::is_utf8`](crate::ArrayRef::is_utf8)); `None` for any other
    /// array. One pass over the stored elements and no second UTF-8 check: what
    /// [`StringArray`]'s `Deserialize` gets from this crate's deserializer (`metadata::de::bulk`).
    pub(crate) fn from_utf8_array(array: &crate::ArrayRef<'_>) -> Option<Self> {
        if array.elem_type() != ValueType::String || !array.is_utf8() {
            return None;
        }
        let count = usize::try_from(array.len()).ok()?;
        let raw = array.raw_bytes();
        // A validated array: `count` strings, each an 8-byte length and its body.
        let total = raw.len().checked_sub(count.checked_mul(8)?)?;
        let (bytes, ends) = copy_bodies(raw, array.endian(), count, total);
        if ends.len() != count || bytes.len() != total {
            return None;
        }
        // SAFETY: every string of the array is UTF-8, the parser's verdict (`is_utf8` is set only
        // by it, after checking every string; as for `GgufStr::to_str`), so their concatenation
        // is too, and each end in `ends` is a character boundary.
        #[allow(unsafe_code)]
        let bytes = unsafe { String::from_utf8_unchecked(bytes) };
        Some(StringArray { bytes, ends })
    }

    /// The strings of the stored elements `raw` of an `array<string>` (see
    /// [`STRING_ARRAY_TOKEN`]): checked, since any deserializer may send them.
    fn from_raw(raw: &[u8], endian: Endian) -> Result<Self, String> {
        // First the lengths alone, to reserve exactly (a fresh allocation is paid for in page
        // faults of all of it) and to refuse a malformed run before copying anything.
        let (mut pos, mut count, mut total) = (0usize, 0usize, 0usize);
        while pos < raw.len() {
            let Some(len) = num_at::<u64>(raw, pos, endian) else {
                return Err(format!("string {count} of the raw array: its length field is cut at byte {pos}"));
            };
            let Some((body, end)) = string_at(raw, pos, endian) else {
                return Err(format!(
                    "string {count} of the raw array: length {len} at byte {pos} runs past its end ({})",
                    crate::format::count(raw.len(), "byte")
                ));
            };
            total = total.saturating_add(body.len());
            count = count.saturating_add(1);
            pos = end;
        }
        let (bytes, ends) = copy_bodies(raw, endian, count, total);
        // One check of all the bytes, and of every string's end being a character boundary:
        // then each string is valid UTF-8 on its own.
        // (simdutf8: std's check is several times slower on a vocabulary's non-ASCII text.)
        if simdutf8::basic::from_utf8(&bytes).is_err() {
            let valid = simdutf8::compat::from_utf8(&bytes).map_or_else(|e| e.valid_up_to(), str::len);
            let i = ends.partition_point(|&end| end <= valid);
            return Err(format!("string {i} of the raw array is not UTF-8"));
        }
        // SAFETY: checked just above.
        #[allow(unsafe_code)]
        let bytes = unsafe { String::from_utf8_unchecked(bytes) };
        if let Some(i) = ends.iter().position(|&e| !bytes.is_char_boundary(e)) {
            return Err(format!("string {i} of the raw array is not UTF-8"));
        }
        Ok(StringArray { bytes, ends })
    }
}

/// The bodies of the length-prefixed strings of `raw` one after the other, and where each ends
/// in them, up to the first string that does not lie wholly in `raw`. `count` and `total` (the
/// number of strings and their total length) size the two buffers; a wrong guess costs a
/// reallocation, not a wrong result.
///
/// A body of at most 16 bytes is copied as a fixed 16-byte block (when `raw` has 16 bytes from
/// its start), then the buffer cut back to its length: one vector move instead of a `memcpy`
/// call per string, which was a sixth of a vocabulary's read (most tokens are short).
fn copy_bodies(raw: &[u8], endian: Endian, count: usize, total: usize) -> (Vec<u8>, Vec<usize>) {
    const BLOCK: usize = 16;
    let mut ends = Vec::with_capacity(count);
    // The slack lets the last short bodies' blocks land in the reservation too.
    let mut bytes = Vec::with_capacity(total.saturating_add(BLOCK));
    let mut pos = 0usize;
    while let Some((body, end)) = string_at(raw, pos, endian) {
        let at = bytes.len();
        let start = pos.saturating_add(8);
        match raw.get(start..start.saturating_add(BLOCK)) {
            Some(block) if body.len() <= BLOCK && bytes.capacity().saturating_sub(at) >= BLOCK => {
                bytes.extend_from_slice(block);
                bytes.truncate(at.saturating_add(body.len()));
            }
            _ => bytes.extend_from_slice(body),
        }
        ends.push(bytes.len());
        pos = end;
    }
    (bytes, ends)
}

impl fmt::Debug for StringArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Index<usize> for StringArray {
    type Output = str;

    /// String `i`.
    ///
    /// # Panics
    /// If `i >= len()`, as a slice does.
    fn index(&self, i: usize) -> &str {
        match self.get(i) {
            Some(s) => s,
            None => panic!("index {i} out of range for a StringArray of {} strings", self.len()),
        }
    }
}

impl<S: AsRef<str>> From<Vec<S>> for StringArray {
    fn from(v: Vec<S>) -> Self {
        v.iter().collect()
    }
}

impl<S: AsRef<str>> FromIterator<S> for StringArray {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut out = StringArray::new();
        out.extend(iter);
        out
    }
}

impl<S: AsRef<str>> Extend<S> for StringArray {
    fn extend<I: IntoIterator<Item = S>>(&mut self, iter: I) {
        for s in iter {
            self.push(s.as_ref());
        }
    }
}

impl From<StringArray> for Vec<String> {
    fn from(a: StringArray) -> Self {
        a.to_vec()
    }
}

impl<'a> IntoIterator for &'a StringArray {
    type Item = &'a str;
    type IntoIter = StringArrayIter<'a>;

    fn into_iter(self) -> StringArrayIter<'a> {
        self.iter()
    }
}

/// The strings of a [`StringArray`], in order ([`StringArray::iter`]).
#[derive(Clone, Debug)]
pub struct StringArrayIter<'a> {
    array: &'a StringArray,
    /// Where string `front` starts.
    start: usize,
    front: usize,
    back: usize,
}

impl<'a> Iterator for StringArrayIter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.front >= self.back {
            return None;
        }
        let end = *self.array.ends.get(self.front)?;
        let s = self.array.str_between(self.start, end);
        self.start = end;
        self.front = self.front.saturating_add(1);
        s
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back.saturating_sub(self.front);
        (n, Some(n))
    }
}

impl DoubleEndedIterator for StringArrayIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front >= self.back {
            return None;
        }
        self.back = self.back.saturating_sub(1);
        self.array.get(self.back)
    }
}

impl ExactSizeIterator for StringArrayIter<'_> {}

impl Serialize for StringArray {
    /// A sequence of strings, marked as `array<string>` for this crate's serializer (so that an
    /// empty array keeps its type); other formats see the sequence.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Seq<'a>(&'a StringArray);
        impl Serialize for Seq<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
                for s in self.0 {
                    seq.serialize_element(s)?;
                }
                seq.end()
            }
        }
        serializer.serialize_newtype_struct(crate::metadata::array_token(ValueType::String), &Seq(self))
    }
}

impl<'de> Deserialize<'de> for StringArray {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_newtype_struct(STRING_ARRAY_TOKEN, ArrayVisitor)
    }
}

/// [`StringArray`]'s visitor (recognized by its type in `metadata::de::bulk`).
pub(crate) struct ArrayVisitor;

impl<'de> Visitor<'de> for ArrayVisitor {
    type Value = StringArray;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of strings")
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<StringArray, D::Error> {
        d.deserialize_seq(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<StringArray, A::Error> {
        // A size hint is a claim: reserve at most 64 Ki strings before they are seen.
        let n = seq.size_hint().unwrap_or(0).min(64 * 1024);
        let mut out = StringArray::with_capacity(n, n.saturating_mul(8));
        while seq.next_element_seed(PushStr(&mut out))?.is_some() {}
        Ok(out)
    }

    /// The whole array from this crate's deserializer (see [`STRING_ARRAY_TOKEN`]).
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StringArray, A::Error> {
        let endian = match map.next_key::<RawKey>()? {
            Some(RawKey(e)) => e,
            None => return Err(de::Error::invalid_type(de::Unexpected::Map, &self)),
        };
        let out = map.next_value_seed(RawElems(endian))?;
        if map.next_key::<RawKey>()?.is_some() {
            return Err(de::Error::invalid_length(2, &"one entry of raw string-array elements"));
        }
        Ok(out)
    }
}

/// One element of a sequence, appended to the array without an allocation of its own.
struct PushStr<'a>(&'a mut StringArray);

impl<'de> DeserializeSeed<'de> for PushStr<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for PushStr<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.0.push(s);
        Ok(())
    }
}

/// The key of the raw entry: its byte order.
struct RawKey(Endian);

impl<'de> Deserialize<'de> for RawKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RawKey;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of strings")
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<RawKey, E> {
                match s {
                    RAW_LE => Ok(RawKey(Endian::Little)),
                    RAW_BE => Ok(RawKey(Endian::Big)),
                    _ => Err(E::invalid_type(de::Unexpected::Map, &self)),
                }
            }
        }
        d.deserialize_str(V)
    }
}

/// The value of the raw entry: the stored elements.
struct RawElems(Endian);

impl<'de> DeserializeSeed<'de> for RawElems {
    type Value = StringArray;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<StringArray, D::Error> {
        d.deserialize_bytes(self)
    }
}

impl<'de> Visitor<'de> for RawElems {
    type Value = StringArray;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the stored elements of a string array")
    }

    fn visit_bytes<E: de::Error>(self, raw: &[u8]) -> Result<StringArray, E> {
        StringArray::from_raw(raw, self.0).map_err(E::custom)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn raw(strings: &[&[u8]], endian: Endian) -> Vec<u8> {
        let mut out = Vec::new();
        for s in strings {
            let n = s.len() as u64;
            out.extend(match endian {
                Endian::Little => n.to_le_bytes(),
                Endian::Big => n.to_be_bytes(),
            });
            out.extend(*s);
        }
        out
    }

    #[test]
    fn raw_elements_are_checked_string_by_string() {
        let ok = raw(&[b"ab", b"", "é".as_bytes()], Endian::Big);
        assert_eq!(StringArray::from_raw(&ok, Endian::Big).unwrap().to_vec(), ["ab", "", "é"]);
        // Valid UTF-8 as a whole, but "é" (C3 A9) split over two strings.
        let split = raw(&[b"a", &[0xc3], &[0xa9]], Endian::Little);
        let e = StringArray::from_raw(&split, Endian::Little).unwrap_err();
        assert_eq!(e, "string 1 of the raw array is not UTF-8");
        // Not UTF-8 at all, in the third string.
        let bad = raw(&[b"a", b"b", &[0xff]], Endian::Little);
        assert_eq!(StringArray::from_raw(&bad, Endian::Little).unwrap_err(), "string 2 of the raw array is not UTF-8");
        // A length past the end, a cut length field.
        let mut long = raw(&[b"abc"], Endian::Little);
        long.truncate(10);
        assert!(StringArray::from_raw(&long, Endian::Little).unwrap_err().contains("length 3 at byte 0 runs past"));
        assert!(StringArray::from_raw(&[1, 0, 0], Endian::Little).unwrap_err().contains("length field is cut"));
        // A huge length does not overflow.
        let huge = u64::MAX.to_le_bytes();
        assert!(StringArray::from_raw(&huge, Endian::Little).unwrap_err().contains("runs past"));
    }
}
