//! [`GgufStr`]: a key, string value or tensor name as the file stores it, bytes that are usually,
//! but not always, UTF-8.

use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A GGUF string (a key, a string value, a tensor name) borrowed from a file: its stored bytes.
///
/// The spec says these are UTF-8, but ggml's reader (`gguf.cpp`) takes them as raw bytes and never
/// checks, so llama.cpp loads a model whose token strings, keys or tensor names are not valid UTF-8.
/// This crate accepts what ggml accepts: such a file opens, and its bytes are kept exactly
/// ([`as_bytes`](Self::as_bytes)) and written back unchanged by the writer and every
/// [`ops`](crate::ops) function.
///
/// - [`to_str`](Self::to_str) gives the `&str` (free when the parser already checked the bytes, as
///   it does in one SIMD pass over a whole string array) or the UTF-8 error.
/// - [`to_string_lossy`](Self::to_string_lossy) replaces bad bytes with U+FFFD.
/// - `Display` writes a valid string as it is and each byte of an invalid sequence as `\xNN`
///   (Rust's [`u8::escape_ascii`] form), so that nothing is lost in what is shown; `Debug` is
///   `Debug` of the `&str` with the same escapes for the bad bytes.
/// - Equality, ordering and hashing are those of the bytes; a `GgufStr` compares equal to a
///   `&str` with the same bytes.
/// - `Serialize`: a string when UTF-8, else bytes.
///
/// ```
/// use gguf_serde::GgufStr;
///
/// let ok = GgufStr::from("tokenizer.ggml.tokens");
/// assert_eq!(ok, "tokenizer.ggml.tokens");
/// assert_eq!(ok.to_str(), Ok("tokenizer.ggml.tokens"));
///
/// let bad = GgufStr::from_bytes(b"ab\xffc");
/// assert!(bad.to_str().is_err());
/// assert_eq!(bad.as_bytes(), b"ab\xffc");
/// assert_eq!(bad.to_string(), r"ab\xffc");
/// assert_eq!(bad.to_string_lossy(), "ab\u{fffd}c");
/// ```
#[derive(Clone, Copy, Default)]
pub struct GgufStr<'a> {
    bytes: &'a [u8],
    /// The bytes are known to be UTF-8 (checked by whoever made the value); `false` means not
    /// known, and [`to_str`](Self::to_str) checks.
    utf8: bool,
}

impl<'a> GgufStr<'a> {
    /// The string of `bytes`, whatever they are.
    pub const fn from_bytes(bytes: &'a [u8]) -> GgufStr<'a> {
        GgufStr { bytes, utf8: false }
    }

    /// `bytes`, known to be UTF-8 by the caller, who checked them (the parser's one pass over a
    /// run of strings). The flag only spares [`to_str`](Self::to_str) its check: with it set on
    /// bytes that are not UTF-8, `to_str` would hand out an invalid `&str`.
    pub(crate) const fn from_checked(bytes: &'a [u8]) -> GgufStr<'a> {
        GgufStr { bytes, utf8: true }
    }

    /// The stored bytes.
    pub const fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Length in bytes.
    pub const fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether there are no bytes.
    pub const fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The string as `&str`.
    ///
    /// # Errors
    /// [`std::str::Utf8Error`] if the bytes are not UTF-8 (`valid_up_to` is the offset of the
    /// first bad byte within the string). The layers that know where the string is in the file
    /// turn it into [`FormatError::InvalidUtf8`](crate::FormatError::InvalidUtf8) with the key
    /// and the absolute offset ([`Kv::key_str`](crate::Kv::key_str),
    /// [`TensorInfo::name_str`](crate::TensorInfo::name_str), [`Gguf::get_str`](crate::Gguf::get_str),
    /// serde).
    #[inline]
    pub fn to_str(&self) -> Result<&'a str, std::str::Utf8Error> {
        if self.utf8 {
            // SAFETY: `utf8` is set only by `from_checked` (bytes the parser validated) and
            // `From<&str>`.
            #[allow(unsafe_code)]
            return Ok(unsafe { std::str::from_utf8_unchecked(self.bytes) });
        }
        std::str::from_utf8(self.bytes)
    }

    /// Whether the bytes are valid UTF-8.
    pub fn is_utf8(&self) -> bool {
        self.to_str().is_ok()
    }

    /// The string with every invalid sequence replaced by U+FFFD (borrowed when valid).
    pub fn to_string_lossy(&self) -> Cow<'a, str> {
        match self.to_str() {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => String::from_utf8_lossy(self.bytes),
        }
    }

    /// The string as shown by `Display` (valid text as is, bad bytes as `\xNN`), borrowed when
    /// valid: for error messages and names in reports.
    pub fn escaped(&self) -> Cow<'a, str> {
        match self.to_str() {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => Cow::Owned(self.to_string()),
        }
    }

    /// Whether the bytes start with `prefix`.
    pub fn starts_with(&self, prefix: &str) -> bool {
        self.bytes.starts_with(prefix.as_bytes())
    }

    /// Whether the bytes end with `suffix`.
    pub fn ends_with(&self, suffix: &str) -> bool {
        self.bytes.ends_with(suffix.as_bytes())
    }
}

impl fmt::Display for GgufStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Ok(s) = self.to_str() {
            return f.pad(s);
        }
        for chunk in self.bytes.utf8_chunks() {
            f.write_str(chunk.valid())?;
            for b in chunk.invalid() {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for GgufStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Ok(s) = self.to_str() {
            return fmt::Debug::fmt(s, f);
        }
        f.write_str("\"")?;
        for chunk in self.bytes.utf8_chunks() {
            for c in chunk.valid().chars() {
                write!(f, "{}", c.escape_debug())?;
            }
            for b in chunk.invalid() {
                write!(f, "\\x{b:02x}")?;
            }
        }
        f.write_str("\"")
    }
}

impl PartialEq for GgufStr<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes
    }
}

impl Eq for GgufStr<'_> {}

impl PartialOrd for GgufStr<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for GgufStr<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.bytes.cmp(other.bytes)
    }
}

impl Hash for GgufStr<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.bytes.hash(state);
    }
}

impl PartialEq<str> for GgufStr<'_> {
    fn eq(&self, other: &str) -> bool {
        self.bytes == other.as_bytes()
    }
}

impl PartialEq<&str> for GgufStr<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.bytes == other.as_bytes()
    }
}

impl PartialEq<String> for GgufStr<'_> {
    fn eq(&self, other: &String) -> bool {
        self.bytes == other.as_bytes()
    }
}

impl PartialEq<GgufStr<'_>> for str {
    fn eq(&self, other: &GgufStr<'_>) -> bool {
        self.as_bytes() == other.bytes
    }
}

impl PartialEq<GgufStr<'_>> for &str {
    fn eq(&self, other: &GgufStr<'_>) -> bool {
        self.as_bytes() == other.bytes
    }
}

impl<'a> From<&'a str> for GgufStr<'a> {
    fn from(s: &'a str) -> GgufStr<'a> {
        GgufStr::from_checked(s.as_bytes())
    }
}

impl<'a> From<&'a &str> for GgufStr<'a> {
    fn from(s: &'a &str) -> GgufStr<'a> {
        GgufStr::from_checked(s.as_bytes())
    }
}

impl<'a> From<&'a String> for GgufStr<'a> {
    fn from(s: &'a String) -> GgufStr<'a> {
        GgufStr::from_checked(s.as_bytes())
    }
}

impl<'a> From<&'a [u8]> for GgufStr<'a> {
    fn from(b: &'a [u8]) -> GgufStr<'a> {
        GgufStr::from_bytes(b)
    }
}

impl<'a> From<&'a Vec<u8>> for GgufStr<'a> {
    fn from(b: &'a Vec<u8>) -> GgufStr<'a> {
        GgufStr::from_bytes(b)
    }
}

impl AsRef<[u8]> for GgufStr<'_> {
    fn as_ref(&self) -> &[u8] {
        self.bytes
    }
}

/// A UTF-8 string as a string; any other as its bytes (what serde formats call bytes: an array
/// of numbers in JSON), so that nothing is lost.
impl serde::Serialize for GgufStr<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.to_str() {
            Ok(s) => serializer.serialize_str(s),
            Err(_) => serializer.serialize_bytes(self.bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_escapes_only_bad_bytes() {
        let s = GgufStr::from_bytes(b"\xe2\x96\x81hi\xc3(\\");
        assert_eq!(s.to_string(), "\u{2581}hi\\xc3(\\");
        assert_eq!(format!("{s:?}"), "\"\u{2581}hi\\xc3(\\\\\"");
        assert_eq!(s.to_string_lossy(), "\u{2581}hi\u{fffd}(\\");
        assert_eq!(s.to_str().map_err(|e| e.valid_up_to()), Err(5));
        let ok = GgufStr::from_bytes("é".as_bytes());
        assert_eq!((ok.to_string(), format!("{ok:?}")), ("é".to_owned(), "\"é\"".to_owned()));
    }

    #[test]
    fn equality_is_by_bytes() {
        assert_eq!(GgufStr::from_bytes(b"a.b"), GgufStr::from("a.b"));
        assert_eq!(GgufStr::from_bytes(b"a.b"), "a.b");
        assert!(GgufStr::from_bytes(b"a\xff") != "a");
        assert!(GgufStr::from("a") < GgufStr::from_bytes(b"a\xff"));
        assert!(GgufStr::from("a.b") != GgufStr::from("a.c"));
        // Against text, on either side, as `str`, `&str` and `String`.
        let (s, same, other) = (GgufStr::from_bytes(b"a.b"), "a.b", "a.c");
        assert!(s == *same && s != *other);
        assert!(s == same && s != other);
        let (same_owned, other_owned) = (same.to_owned(), other.to_owned());
        assert!(s == same_owned && s != other_owned);
        assert!(*same == s && *other != s);
        assert!(same == s && other != s);
        // Hashing is that of the bytes (whether made from text or bytes), as for `[u8]`.
        let hash = |h: &dyn Fn(&mut std::collections::hash_map::DefaultHasher)| {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            h(&mut hasher);
            hasher.finish()
        };
        let of_bytes = hash(&|h| b"a.b"[..].hash(h));
        assert_eq!(hash(&|h| GgufStr::from("a.b").hash(h)), of_bytes);
        assert_eq!(hash(&|h| GgufStr::from_bytes(b"a.b").hash(h)), of_bytes);
    }

    #[test]
    fn lengths_affixes_and_validity_are_of_the_bytes() {
        // "é" is two bytes in UTF-8 (U+00E9 = C3 A9); 0xFF is never UTF-8 (RFC 3629).
        let s = GgufStr::from("é.x");
        assert_eq!((s.len(), s.is_empty(), s.is_utf8()), (4, false, true));
        let empty = GgufStr::from_bytes(b"");
        assert_eq!((empty.len(), empty.is_empty(), empty.is_utf8()), (0, true, true));
        let bad = GgufStr::from_bytes(b"blk.\xff.attn_q");
        assert!(!bad.is_utf8() && !GgufStr::from_bytes(b"\xc3").is_utf8());
        assert!(bad.starts_with("blk.") && !bad.starts_with("blk.0") && !bad.starts_with("x"));
        assert!(bad.ends_with(".attn_q") && !bad.ends_with("attn_k") && !bad.ends_with("x"));
    }

    #[test]
    fn conversions_keep_the_bytes() {
        let bytes: &[u8] = b"a\xffb";
        let vec = bytes.to_vec();
        for (s, want) in [
            (GgufStr::from(&"tok"), &b"tok"[..]),
            (GgufStr::from(&"tok".to_owned()), b"tok"),
            (GgufStr::from(bytes), bytes),
            (GgufStr::from(&vec), bytes),
        ] {
            assert_eq!((s.as_bytes(), s.as_ref()), (want, want));
        }
        assert_eq!(GgufStr::from(&"tok").to_str(), Ok("tok"));
    }
}
