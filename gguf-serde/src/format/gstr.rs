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

/// A name shown in an error message: in double quotes, escaped as `Debug` escapes a string,
/// except that each `\xNN` (two lowercase hex digits) is written as it is. The names that errors
/// hold are [`GgufStr`]'s `Display` form, in which each byte that is not UTF-8 is `\xNN` already:
/// `Debug` would escape that backslash again (`"w.\\xc3("`), where `GgufStr`'s own `Debug`
/// shows `"w.\xc3("`. (A valid name that holds the text `\xNN` itself shows the same as the
/// byte: the ambiguity of the `Display` form.)
pub(crate) struct Quoted<'a>(pub(crate) &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = |c: &u8| matches!(c, b'0'..=b'9' | b'a'..=b'f');
        let is_escape = |s: &str| matches!(s.as_bytes(), [b'\\', b'x', h, l, ..] if hex(h) && hex(l));
        f.write_str("\"")?;
        let mut rest = self.0;
        while !rest.is_empty() {
            let at = rest.match_indices('\\').map(|(i, _)| i).find(|&i| is_escape(&rest[i..])).unwrap_or(rest.len());
            let (plain, tail) = rest.split_at(at);
            let shown = format!("{plain:?}");
            f.write_str(shown.strip_prefix('"').and_then(|s| s.strip_suffix('"')).unwrap_or(&shown))?;
            // `\xNN` is 4 ASCII bytes
            let (escape, after) = tail.split_at(tail.len().min(4));
            f.write_str(escape)?;
            rest = after;
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
    fn quoted_shows_bad_bytes_once_escaped_as_debug_does() {
        // GgufStr's Display form, quoted: its `\xNN` kept, the rest escaped as `Debug` escapes a
        // string (so as GgufStr's own `Debug` shows the name)
        for bytes in [&b"w.\xc3("[..], b"test.k\xffey", b"a\"b\n\\c\xe9", b"plain"] {
            let g = GgufStr::from_bytes(bytes);
            assert_eq!(Quoted(&g.to_string()).to_string(), format!("{g:?}"), "{bytes:?}");
        }
        assert_eq!(Quoted(r"w.\xc3(").to_string(), r#""w.\xc3(""#);
        // a backslash not followed by two lowercase hex digits is escaped
        assert_eq!(Quoted(r"a\xZZ\x4").to_string(), r#""a\\xZZ\\x4""#);
    }

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
    }
}
