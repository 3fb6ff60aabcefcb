//! The tensor-name globs of `--exclude` ([`NameGlobs`]), shared by planning, requantizing and
//! dequantizing.

use globset::{Candidate, Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{QuantizeError, Result};
use crate::format::GgufStr;

/// The tensor-name globs of `exclude` ([`DequantizeOptions::exclude`](crate::ops::dequantize::DequantizeOptions::exclude),
/// [`QuantizeParams::exclude`](crate::ops::quantize::QuantizeParams::exclude), `gguf quantize
/// --exclude`), compiled once. The syntax is `globset`'s, matched against the whole name:
///
/// | pattern | matches |
/// |---|---|
/// | `*` | any run of bytes, none included (`.` too: `blk.*.ffn_up.weight`) |
/// | `?` | exactly one byte |
/// | `[abc]`, `[a-z]`, `[!0-9]` | one ASCII byte in the class (or, with `!`, one byte not in it) |
/// | `{a,b}` | either alternative (`*.{weight,bias}`) |
/// | `\` | takes the next character literally (`\*`, `\?`, `\[`) |
///
/// Anything else matches itself, case-sensitively. A pattern that is not a valid glob (an
/// unclosed `[` or `{`, a reversed range `[z-a]`) is refused, not read literally.
///
/// Names are matched as bytes (on Unix; elsewhere a name that is not UTF-8 is matched in its
/// lossy form, each bad sequence as U+FFFD): `?` and a class are one byte, so a non-ASCII
/// character of n bytes takes n of them (`x??.weight` matches `xé.weight`), a byte that is not
/// UTF-8 takes one (`x?.weight` matches `x\xff.weight`), and `*` matches either.
///
/// A pattern is bytes too: a byte of it that is not UTF-8 (an argument given as raw bytes)
/// matches that byte, as a literal or in a class (`x[\xfe\xff].weight`, the bytes FE and FF,
/// matches `x\xff.weight`).
#[derive(Clone, Debug)]
pub struct NameGlobs {
    /// The patterns, shown as [`GgufStr`] shows bytes (escaped where not UTF-8).
    patterns: Vec<String>,
    /// The patterns that are UTF-8, with their index in `patterns`.
    set: GlobSet,
    set_index: Vec<usize>,
    /// The others, each compiled to a regular expression over bytes, with its index.
    bytes: Vec<(usize, regex::bytes::Regex)>,
}

impl NameGlobs {
    /// Compiles `patterns` (each a `&str`, or bytes that are not UTF-8).
    ///
    /// # Errors
    /// [`QuantizeError::Refused`] naming the first pattern that is not a valid glob, and why.
    pub fn new<P: AsRef<[u8]>>(patterns: &[P]) -> Result<Self> {
        let mut set = GlobSetBuilder::new();
        let (mut set_index, mut bytes) = (Vec::new(), Vec::new());
        for (i, p) in patterns.iter().enumerate() {
            match std::str::from_utf8(p.as_ref()) {
                Ok(text) => {
                    set.add(name_glob(text)?);
                    set_index.push(i);
                }
                Err(_) => bytes.push((i, byte_glob(p.as_ref())?)),
            }
        }
        let set = set.build().map_err(|e| QuantizeError::refused(format!("cannot compile the name globs: {e}")))?;
        let patterns = patterns.iter().map(|p| GgufStr::from_bytes(p.as_ref()).to_string()).collect();
        Ok(NameGlobs { patterns, set, set_index, bytes })
    }

    /// The first pattern (in the order given) that matches all of `name` (its bytes: a `&str`,
    /// or the bytes of a name that is not UTF-8), if any; shown as [`GgufStr`] shows bytes.
    pub fn first_match(&self, name: impl AsRef<[u8]>) -> Option<&str> {
        let name = name.as_ref();
        let in_set = with_candidate(name, |c| self.set.matches_candidate(c));
        let first = in_set
            .into_iter()
            .filter_map(|i| self.set_index.get(i).copied())
            .chain(self.bytes.iter().filter(|(_, re)| re.is_match(name)).map(|(i, _)| *i))
            .min()?;
        self.patterns.get(first).map(String::as_str)
    }

    /// Whether some pattern matches all of `name` (its bytes).
    pub fn is_match(&self, name: impl AsRef<[u8]>) -> bool {
        let name = name.as_ref();
        with_candidate(name, |c| self.set.is_match_candidate(c)) || self.bytes.iter().any(|(_, re)| re.is_match(name))
    }
}

/// `f` of `name` as globset matches it: its bytes on Unix (a path of any bytes), else its lossy
/// text.
fn with_candidate<R>(name: &[u8], f: impl FnOnce(&Candidate<'_>) -> R) -> R {
    #[cfg(unix)]
    let c = {
        use std::os::unix::ffi::OsStrExt;
        Candidate::new(std::ffi::OsStr::from_bytes(name))
    };
    #[cfg(not(unix))]
    let lossy = String::from_utf8_lossy(name);
    #[cfg(not(unix))]
    let c = Candidate::new(&*lossy);
    f(&c)
}

/// The first of the private-use characters that stand for a pattern's bytes that are not UTF-8
/// (byte `b` as `PLACEHOLDER + b`) while globset parses it.
const PLACEHOLDER: u32 = 0xF0000;

/// A pattern with bytes that are not UTF-8, compiled as globset compiles a glob (its
/// [`Glob::regex`], matched with globset's options), each such byte standing for itself: it is
/// parsed with a private-use character in its place, whose UTF-8 form in the regular
/// expression is then replaced by the byte.
fn byte_glob(pattern: &[u8]) -> Result<regex::bytes::Regex> {
    use std::fmt::Write;
    let shown = GgufStr::from_bytes(pattern);
    let stand_in = |b: u8| char::from_u32(PLACEHOLDER + u32::from(b)).unwrap_or(char::REPLACEMENT_CHARACTER);
    let mut text = String::new();
    for chunk in pattern.utf8_chunks() {
        if chunk.valid().chars().any(|c| (PLACEHOLDER..PLACEHOLDER + 256).contains(&u32::from(c))) {
            return Err(QuantizeError::refused(format!(
                "\"{shown}\" mixes bytes that are not UTF-8 with characters U+F0000 to U+F00FF, which stand for them"
            ))
            .into());
        }
        text.push_str(chunk.valid());
        text.extend(chunk.invalid().iter().map(|&b| stand_in(b)));
    }
    let glob = glob_of(&text).map_err(|e| {
        // The reason as for a UTF-8 pattern, each stand-in shown as its byte.
        let mut why = String::new();
        for c in e.kind().to_string().chars() {
            match u32::from(c).checked_sub(PLACEHOLDER).filter(|b| *b < 256) {
                Some(b) => {
                    let _ = write!(why, "\\x{b:02x}");
                }
                None => why.push(c),
            }
        }
        QuantizeError::refused(format!("\"{shown}\" is not a valid glob: {why}"))
    })?;
    // globset writes a non-ASCII character as the `\xNN` escapes of its UTF-8 bytes: one pass
    // puts each stand-in's four escapes back as the one byte.
    let stand_ins: std::collections::HashMap<String, u8> = (0x80..=0xffu8)
        .map(|b| {
            let mut utf8 = [0u8; 4];
            let mut escaped = String::new();
            for u in stand_in(b).encode_utf8(&mut utf8).bytes() {
                let _ = write!(escaped, "\\x{u:02x}");
            }
            (escaped, b)
        })
        .collect();
    let (mut re, mut rest) = (String::new(), glob.regex());
    while let Some(c) = rest.chars().next() {
        match rest.get(..16).and_then(|head| stand_ins.get(head)) {
            Some(b) => {
                let _ = write!(re, "\\x{b:02x}");
                rest = rest.get(16..).unwrap_or_default();
            }
            None => {
                re.push(c);
                rest = rest.get(c.len_utf8()..).unwrap_or_default();
            }
        }
    }
    regex::bytes::RegexBuilder::new(&re)
        .dot_matches_new_line(true)
        .build()
        .map_err(|e| QuantizeError::refused(format!("\"{shown}\" is not a valid glob: {e}")).into())
}

impl Default for NameGlobs {
    /// No patterns: matches no name.
    fn default() -> Self {
        NameGlobs { patterns: Vec::new(), set: GlobSet::empty(), set_index: Vec::new(), bytes: Vec::new() }
    }
}

/// `pattern` as a glob over a tensor name (see [`NameGlobs`]): `*` crosses `.` (names have no
/// path separators), `\` escapes on every platform.
fn name_glob(pattern: &str) -> Result<Glob> {
    glob_of(pattern)
        .map_err(|e| QuantizeError::refused(format!("{pattern:?} is not a valid glob: {}", e.kind())).into())
}

/// `pattern` compiled with the options of [`NameGlobs`] (`*` crosses `.`, `\` escapes).
fn glob_of(pattern: &str) -> std::result::Result<Glob, globset::Error> {
    GlobBuilder::new(pattern).literal_separator(false).backslash_escape(true).build()
}

#[cfg(test)]
mod tests {
    use super::NameGlobs;

    /// Whether the one glob `pattern` matches all of `name`.
    fn glob(pattern: &str, name: &str) -> bool {
        NameGlobs::new(&[pattern]).expect("a valid glob").is_match(name)
    }

    #[test]
    fn glob_patterns() {
        assert!(glob("*norm*", "blk.0.attn_norm.weight"));
        assert!(glob("token_embd.weight", "token_embd.weight"));
        assert!(!glob("token_embd.weight", "token_embd.weight2"));
        assert!(glob("blk.*.ffn_*", "blk.12.ffn_up.weight"));
        assert!(!glob("blk.*.ffn_", "blk.12.ffn_up.weight"));
        assert!(glob("*", "anything"));
        assert!(glob("*.weight", "output.weight"));
        assert!(!glob("*.bias", "output.weight"));
        // Bytes: `?` is one byte, whatever UTF-8 says of it.
        assert!(!glob("x?.weight", "x\u{fffd}.weight"));
        assert!(NameGlobs::new(&["x?.weight"]).unwrap().is_match(b"x\xff.weight"));
        assert!(NameGlobs::new(&["x??.weight"]).unwrap().is_match("x\u{e9}.weight"));
        assert!(NameGlobs::new(&["x*.weight"]).unwrap().is_match(b"x\xe2\x82.weight"));
        // Case-sensitive, whole-name.
        assert!(!glob("*.WEIGHT", "output.weight"));
        assert!(!glob("output", "output.weight"));
    }

    #[test]
    fn question_mark_is_one_character() {
        assert!(glob("blk.?.attn_q.weight", "blk.7.attn_q.weight"));
        assert!(!glob("blk.?.attn_q.weight", "blk.17.attn_q.weight"));
        assert!(!glob("blk.?.attn_q.weight", "blk..attn_q.weight"));
        assert!(glob("blk.??.attn_q.weight", "blk.17.attn_q.weight"));
    }

    #[test]
    fn classes_match_one_character_of_a_set() {
        assert!(glob("blk.[0-3].*", "blk.2.ffn_up.weight"));
        assert!(!glob("blk.[0-3].*", "blk.4.ffn_up.weight"));
        assert!(!glob("blk.[0-3].*", "blk.12.ffn_up.weight"));
        assert!(glob("blk.[!0-3].*", "blk.4.ffn_up.weight"));
        assert!(!glob("blk.[!0-3].*", "blk.2.ffn_up.weight"));
        assert!(glob("*.ffn_[gu]*", "blk.0.ffn_gate.weight"));
        assert!(glob("*.ffn_[gu]*", "blk.0.ffn_up.weight"));
        assert!(!glob("*.ffn_[gu]*", "blk.0.ffn_down.weight"));
    }

    #[test]
    fn alternatives_match_either() {
        let p = "blk.*.ffn_{up,down}.weight";
        assert!(glob(p, "blk.3.ffn_up.weight"));
        assert!(glob(p, "blk.3.ffn_down.weight"));
        assert!(!glob(p, "blk.3.ffn_gate.weight"));
        assert!(glob("{token_embd,output}.weight", "output.weight"));
        assert!(!glob("{token_embd,output}.weight", "output_norm.weight"));
    }

    #[test]
    fn backslash_takes_the_next_character_literally() {
        assert!(glob(r"a\*b", "a*b"));
        assert!(!glob(r"a\*b", "axb"));
        assert!(glob(r"x\?", "x?"));
        assert!(!glob(r"x\?", "xy"));
    }

    #[test]
    fn the_first_matching_pattern_is_named() {
        let globs = NameGlobs::new(&["*.bias", "blk.*", "*.weight"]).unwrap();
        assert_eq!(globs.first_match("blk.0.attn_q.weight"), Some("blk.*"));
        assert_eq!(globs.first_match("output.weight"), Some("*.weight"));
        assert_eq!(globs.first_match("rope_freqs"), None);
        assert_eq!(NameGlobs::default().first_match("anything"), None);
    }

    /// A pattern's bytes that are not UTF-8 match themselves, as literals, in classes and in
    /// alternatives; the pattern is named escaped.
    #[test]
    fn patterns_that_are_not_utf8_match_their_bytes() {
        let g = |p: &[u8], n: &[u8]| NameGlobs::new(&[p]).expect("a valid glob").is_match(n);
        assert!(g(b"x\xff.weight", b"x\xff.weight"));
        assert!(!g(b"x\xff.weight", b"x\xfe.weight"));
        assert!(!g(b"x\xff.weight", "x\u{ff}.weight".as_bytes()));
        assert!(g(b"x[\xfe\xff]*", b"x\xfe.weight"));
        assert!(!g(b"x[!\xfe\xff]*", b"x\xfe.weight"));
        assert!(g(b"x[!\xfe\xff]*", b"xa.weight"));
        assert!(g(b"x[\x80-\xff][\x80-\xff].w*", b"x\xe2\x82.weight"));
        assert!(!g(b"x[\x80-\xfe].w*", b"x\xff.weight"));
        assert!(g(b"{a,x\xff}.*", b"x\xff.weight"));
        assert!(g(b"\xc3\xa9?\\*\xff\xfe", b"\xc3\xa9a*\xff\xfe"));
        let globs = NameGlobs::new(&[&b"a*"[..], b"x\xff*", b"x*"]).unwrap();
        assert_eq!(globs.first_match(b"x\xff.weight"), Some(r"x\xff*"));
        assert_eq!(globs.first_match(b"xy"), Some("x*"));
        let e = NameGlobs::new(&[&b"x\xff[a"[..]]).unwrap_err();
        assert!(e.to_string().contains(r#""x\xff[a" is not a valid glob"#), "{e}");
        assert!(NameGlobs::new(&[&b"x\xff\xf3\xb0\x82\x80"[..]]).is_err(), "a stand-in character beside a bad byte");
    }

    #[test]
    fn invalid_globs_are_refused_with_the_pattern() {
        for bad in ["blk.[0-3", "*.{up,down", "[z-a]"] {
            let e = NameGlobs::new(&["*.weight", bad]).unwrap_err();
            assert!(e.to_string().contains(&format!("{bad:?}")), "{bad}: {e}");
        }
    }
}
