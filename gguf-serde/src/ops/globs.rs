//! The tensor-name globs of `--exclude` ([`NameGlobs`]), shared by planning, requantizing and
//! dequantizing.

use globset::{Candidate, Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{QuantizeError, Result};

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
#[derive(Clone, Debug)]
pub struct NameGlobs {
    patterns: Vec<String>,
    set: GlobSet,
}

impl NameGlobs {
    /// Compiles `patterns`.
    ///
    /// # Errors
    /// [`QuantizeError::Refused`] naming the first pattern that is not a valid glob, and why.
    pub fn new<P: AsRef<str>>(patterns: &[P]) -> Result<Self> {
        let mut set = GlobSetBuilder::new();
        for p in patterns {
            set.add(name_glob(p.as_ref())?);
        }
        let set = set.build().map_err(|e| QuantizeError::refused(format!("cannot compile the name globs: {e}")))?;
        Ok(NameGlobs { patterns: patterns.iter().map(|p| p.as_ref().to_owned()).collect(), set })
    }

    /// The first pattern (in the order given) that matches all of `name` (its bytes: a `&str`,
    /// or the bytes of a name that is not UTF-8), if any.
    pub fn first_match(&self, name: impl AsRef<[u8]>) -> Option<&str> {
        let first = with_candidate(name.as_ref(), |c| self.set.matches_candidate(c)).into_iter().min()?;
        self.patterns.get(first).map(String::as_str)
    }

    /// Whether some pattern matches all of `name` (its bytes).
    pub fn is_match(&self, name: impl AsRef<[u8]>) -> bool {
        with_candidate(name.as_ref(), |c| self.set.is_match_candidate(c))
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

impl Default for NameGlobs {
    /// No patterns: matches no name.
    fn default() -> Self {
        NameGlobs { patterns: Vec::new(), set: GlobSet::empty() }
    }
}

/// `pattern` as a glob over a tensor name (see [`NameGlobs`]): `*` crosses `.` (names have no
/// path separators), `\` escapes on every platform.
fn name_glob(pattern: &str) -> Result<Glob> {
    GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .map_err(|e| QuantizeError::refused(format!("{pattern:?} is not a valid glob: {}", e.kind())).into())
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

    #[test]
    fn invalid_globs_are_refused_with_the_pattern() {
        for bad in ["blk.[0-3", "*.{up,down", "[z-a]"] {
            let e = NameGlobs::new(&["*.weight", bad]).unwrap_err();
            assert!(e.to_string().contains(&format!("{bad:?}")), "{bad}: {e}");
        }
    }
}
