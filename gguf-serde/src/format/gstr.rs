//! [`GgufStr`]: a key, string value or tensor name as the file stores it, bytes that are usually,
//! but not always, UTF-8; its one reversible text form ([`GgufStr::escaped`],
//! [`GgufStr::unescape`]).

use std::borrow::Cow;
use std::fmt::{self, Write as _};
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
/// - `Display` writes the escaped form ([`escaped`](Self::escaped)): the text as it is, but for
///   a backslash (`\\`), control and invisible characters (`\n`, `\t`, `\r`, `\0`, `\u{1b}`,
///   as Rust's [`char::escape_debug`] writes them) and each byte of a sequence that is not
///   UTF-8 (`\xNN`). The form is reversible ([`unescape`](Self::unescape) gives the bytes back):
///   the text `\xff` (4 characters) is shown `\\xff`, the byte FF `\xff`. A name of plain
///   printable text (every standard key and tensor name) is shown as it is. `Debug` is the same
///   between double quotes, with `"` escaped (`\"`): Rust's `Debug` of the `&str` when the bytes
///   are UTF-8.
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
/// // The text `\xff` is not the byte FF: the backslash is escaped.
/// assert_eq!(GgufStr::from(r"ab\xffc").to_string(), r"ab\\xffc");
/// assert_eq!(GgufStr::unescape(r"ab\xffc").unwrap(), b"ab\xffc");
/// assert_eq!(GgufStr::unescape(r"ab\\xffc").unwrap(), br"ab\xffc");
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

    /// The escaped form `Display` writes (see the [type docs](Self)): the text as it is, but
    /// `\\` for a backslash, `\n`, `\t`, `\r`, `\0` and `\u{…}` for control and invisible
    /// characters ([`char::escape_debug`]), `\xNN` for each byte of a sequence that is not UTF-8.
    /// Borrowed when nothing needs escaping. Reversed by [`GgufStr::unescape`]: the form in which
    /// text outputs show keys and tensor names, and in which the `gguf` commands take them.
    pub fn escaped(&self) -> Cow<'a, str> {
        // Printable ASCII but the backslash (every standard key and tensor name): as it is.
        if self.bytes.iter().all(|&b| matches!(b, 0x20..=0x7e) && b != b'\\') {
            if let Ok(s) = self.to_str() {
                return Cow::Borrowed(s);
            }
        }
        match self.to_str() {
            Ok(s) if !s.chars().any(needs_escape) => Cow::Borrowed(s),
            _ => {
                let mut out = String::with_capacity(self.bytes.len());
                // Writing to a `String` cannot fail.
                let _ = write_escaped(&mut out, self.bytes, false);
                Cow::Owned(out)
            }
        }
    }

    /// The bytes of `text` in the escaped form of [`GgufStr::escaped`]: `\\` is a backslash,
    /// `\xNN` (two hex digits) the byte NN, `\u{H…}` (1 to 6 hex digits) that character in
    /// UTF-8, `\n`, `\t`, `\r`, `\0`, `\"` and `\'` as in Rust; every other character is
    /// itself. So `unescape(s.escaped())` is `s`'s bytes, and Rust's `Debug` of a string (without
    /// its quotes) reads back too.
    ///
    /// # Errors
    /// [`UnescapeError`] (with the byte offset of the backslash in `text`) for a backslash
    /// followed by anything else, `\x` without two hex digits, or a `\u{…}` that is not a
    /// character.
    pub fn unescape(text: &str) -> Result<Vec<u8>, UnescapeError> {
        let mut out = Vec::with_capacity(text.len());
        let mut chars = text.char_indices();
        while let Some((at, c)) = chars.next() {
            if c != '\\' {
                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                continue;
            }
            let bad = |problem| UnescapeError { text: text.to_owned(), at, problem };
            match chars.next().map(|(_, c)| c) {
                Some('\\') => out.push(b'\\'),
                Some('"') => out.push(b'"'),
                Some('\'') => out.push(b'\''),
                Some('0') => out.push(0),
                Some('t') => out.push(b'\t'),
                Some('n') => out.push(b'\n'),
                Some('r') => out.push(b'\r'),
                Some('x') => {
                    let hex: String = chars.by_ref().take(2).map(|(_, c)| c).collect();
                    let byte = Some(&hex)
                        .filter(|h| h.len() == 2 && h.bytes().all(|b| b.is_ascii_hexdigit()))
                        .and_then(|h| u8::from_str_radix(h, 16).ok())
                        .ok_or_else(|| bad(UnescapeProblem::Hex))?;
                    out.push(byte);
                }
                Some('u') => {
                    let mut hex = String::new();
                    let mut open = chars.next().map(|(_, c)| c) == Some('{');
                    while open {
                        match chars.next().map(|(_, c)| c) {
                            Some('}') => open = false,
                            Some(c) if c.is_ascii_hexdigit() && hex.len() < 6 => hex.push(c),
                            _ => return Err(bad(UnescapeProblem::Unicode)),
                        }
                    }
                    let c = Some(&hex)
                        .filter(|h| !h.is_empty())
                        .and_then(|h| u32::from_str_radix(h, 16).ok())
                        .and_then(char::from_u32)
                        .ok_or_else(|| bad(UnescapeProblem::Unicode))?;
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                other => return Err(bad(UnescapeProblem::Unknown(other))),
            }
        }
        Ok(out)
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

/// Whether `c` is escaped in the form of [`GgufStr::escaped`] (quotes are not).
fn needs_escape(c: char) -> bool {
    c != '"' && c != '\'' && c.escape_debug().len() != 1
}

/// Writes the escaped form of `bytes` (see [`GgufStr::escaped`]); `quoted`: inside double
/// quotes, with `"` escaped as well.
fn write_escaped(out: &mut impl fmt::Write, bytes: &[u8], quoted: bool) -> fmt::Result {
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' if quoted => out.write_str("\\\"")?,
                '"' | '\'' => out.write_char(c)?,
                c => write!(out, "{}", c.escape_debug())?,
            }
        }
        for b in chunk.invalid() {
            write!(out, "\\x{b:02x}")?;
        }
    }
    Ok(())
}

impl fmt::Display for GgufStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.escaped())
    }
}

impl fmt::Debug for GgufStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('"')?;
        write_escaped(f, self.bytes, true)?;
        f.write_char('"')
    }
}

/// A name shown in an error message: the escaped form ([`GgufStr::escaped`]) that errors hold,
/// between double quotes with `"` escaped, so the same text as [`GgufStr`]'s `Debug` of the
/// name's bytes. (`Debug` of the escaped `String` would escape its backslashes a second time:
/// `"w.\\xc3("` for the name that `GgufStr` shows as `"w.\xc3("`.)
pub(crate) struct Quoted<'a>(pub(crate) &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('"')?;
        for c in self.0.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                c => f.write_char(c)?,
            }
        }
        f.write_char('"')
    }
}

/// Why [`GgufStr::unescape`] refused a text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{text}`: {problem} at byte {at} (a backslash is written `\\\\`)")]
#[non_exhaustive]
pub struct UnescapeError {
    /// The text.
    pub text: String,
    /// The byte offset of the backslash that starts the bad escape.
    pub at: usize,
    /// What is wrong.
    pub problem: UnescapeProblem,
}

/// What is wrong with an escape ([`UnescapeError`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UnescapeProblem {
    /// `\x` without two hex digits after it.
    #[error("`\\x` takes two hex digits")]
    Hex,
    /// `\u` without `{`, 1 to 6 hex digits and `}` that make a character.
    #[error("`\\u` takes `{{H}}`, 1 to 6 hex digits naming a character")]
    Unicode,
    /// A backslash before another character (or at the end of the text: `None`).
    #[error("unknown escape `\\{}`", .0.map(String::from).unwrap_or_default())]
    Unknown(Option<char>),
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

/// A file path as this crate's messages (and the `gguf` command's) show it: in
/// [`GgufStr::escaped`]'s form of its bytes, the form in which keys and tensor names are shown,
/// so that the message names the one file it is about and writes nothing raw to a terminal.
/// A path that is printable UTF-8 without a backslash is shown as it is; otherwise a backslash
/// is `\\`, a byte that is not UTF-8 (a path on Unix may be any bytes) `\xNN`, and a control
/// character `\n`, `\t`, `\u{1b}` and so on, reversed by [`GgufStr::unescape`]. So the text path
/// `m\xff.gguf` (shown `m\\xff.gguf`) and the path holding the byte FF (shown `m\xff.gguf`) are
/// told apart, where [`Path::display`](std::path::Path::display) shows such a byte as U+FFFD
/// and a newline or an escape sequence raw.
///
/// ```
/// # #[cfg(unix)] {
/// use std::os::unix::ffi::OsStrExt;
/// use std::path::Path;
/// use gguf_serde::format::shown_path;
///
/// assert_eq!(shown_path(Path::new("m\u{e9}.gguf")), "m\u{e9}.gguf");
/// let path = Path::new(std::ffi::OsStr::from_bytes(b"m\xff.gguf"));
/// assert_eq!(shown_path(path), r"m\xff.gguf");
/// assert_eq!(shown_path(Path::new(r"m\xff.gguf")), r"m\\xff.gguf");
/// assert_eq!(shown_path(Path::new("r\n\u{1b}[31m.gguf")), r"r\n\u{1b}[31m.gguf");
/// # }
/// ```
pub fn shown_path<P: AsRef<std::path::Path> + ?Sized>(path: &P) -> Cow<'_, str> {
    GgufStr::from_bytes(path.as_ref().as_os_str().as_encoded_bytes()).escaped()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_shows_a_name_as_gguf_str_debug_does() {
        // the escaped form quoted, `"` escaped: GgufStr's own `Debug` of the bytes
        for bytes in [&b"w.\xc3("[..], b"test.k\xffey", b"a\"b\n\\c\xe9", b"plain", br"lit\xff"] {
            let g = GgufStr::from_bytes(bytes);
            assert_eq!(Quoted(&g.to_string()).to_string(), format!("{g:?}"), "{bytes:?}");
        }
        assert_eq!(Quoted(r"w.\xc3(").to_string(), r#""w.\xc3(""#);
    }

    #[test]
    fn display_escapes_bad_bytes_backslashes_and_controls() {
        let s = GgufStr::from_bytes(b"\xe2\x96\x81hi\xc3(\\");
        assert_eq!(s.to_string(), "\u{2581}hi\\xc3(\\\\");
        assert_eq!(format!("{s:?}"), "\"\u{2581}hi\\xc3(\\\\\"");
        assert_eq!(s.to_string_lossy(), "\u{2581}hi\u{fffd}(\\");
        assert_eq!(s.to_str().map_err(|e| e.valid_up_to()), Err(5));
        let ok = GgufStr::from_bytes("é".as_bytes());
        assert_eq!((ok.to_string(), format!("{ok:?}")), ("é".to_owned(), "\"é\"".to_owned()));
        assert!(matches!(ok.escaped(), Cow::Borrowed(_)));
        // Controls as Rust's escape_debug writes them; quotes only in Debug.
        let c = GgufStr::from("a\nb\0\u{1b}[\"'");
        assert_eq!(c.to_string(), r#"a\nb\0\u{1b}["'"#);
        assert_eq!(format!("{c:?}"), format!("{:?}", "a\nb\0\u{1b}[\"'"));
        assert_eq!(format!("[{:>6}]", GgufStr::from("a\n")), r"[   a\n]");
    }

    /// `unescape` reverses `escaped` for any bytes, and reads Rust's `Debug` of a string.
    #[test]
    fn unescape_reverses_escaped() {
        let cases: [&[u8]; 9] = [
            b"plain.name",
            b"a\\xffb",
            b"a\xffb",
            b"\xe2\x82",
            b"\x00\x01\x7f\n\t\r\"'",
            "\u{2581}\u{301}\u{200b}\u{9b}é".as_bytes(),
            b"\\\\\\",
            b"",
            b"\xc3(\xed\xa0\x80",
        ];
        for bytes in cases {
            let s = GgufStr::from_bytes(bytes);
            assert_eq!(GgufStr::unescape(&s.escaped()).unwrap(), bytes, "{s}");
            let debug = format!("{s:?}");
            let inner = debug.strip_prefix('"').and_then(|d| d.strip_suffix('"')).unwrap();
            assert_eq!(GgufStr::unescape(inner).unwrap(), bytes, "{s:?}");
        }
        assert_eq!(GgufStr::unescape(r"\x41\u{42}\'").unwrap(), b"AB'");
        let problem = |t: &str| GgufStr::unescape(t).unwrap_err().problem;
        assert_eq!(problem(r"a\q"), UnescapeProblem::Unknown(Some('q')));
        assert_eq!(problem("a\\"), UnescapeProblem::Unknown(None));
        for t in [r"\x4", r"\x+f", r"\xg0"] {
            assert_eq!(problem(t), UnescapeProblem::Hex, "{t}");
        }
        for t in [r"\u41", r"\u{}", r"\u{110000}", r"\u{d800}", r"\u{1234567}", r"\u{41"] {
            assert_eq!(problem(t), UnescapeProblem::Unicode, "{t}");
        }
        // At most 6 hex digits, as in Rust's `\u{…}`, leading zeros included.
        assert_eq!(GgufStr::unescape(r"\u{000041}").unwrap(), b"A");
        assert_eq!(problem(r"\u{0000041}"), UnescapeProblem::Unicode);
        assert_eq!(GgufStr::unescape(r"ab\q").unwrap_err().at, 2);
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
