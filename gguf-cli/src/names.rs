//! How the commands take a key or tensor name: in the escaped form the text outputs show
//! (`GgufStr::escaped`: `\xNN` for a byte that is not UTF-8, `\\` for a backslash, `\n`, `\u{…}`
//! for control characters), read back with `GgufStr::unescape`; or, on Unix, an argument that
//! is not UTF-8 as its bytes.

use std::ffi::OsStr;

use gguf_serde::GgufStr;

/// The bytes of the name in the argument `arg` (shown as `what` in errors): an argument that is
/// text is read in the escaped form ([`GgufStr::unescape`]); one that is not UTF-8 (Unix) is
/// taken as its bytes, unchanged.
///
/// # Errors
/// A usage error (exit status 2) for text with a bad escape (`\q`, `\x4`).
pub(crate) fn name_arg(arg: &OsStr, what: &str) -> anyhow::Result<Vec<u8>> {
    match arg.to_str() {
        Some(text) => GgufStr::unescape(text).map_err(|e| crate::out::usage(format!("{what} {e}"))),
        None => Ok(arg.as_encoded_bytes().to_vec()),
    }
}
