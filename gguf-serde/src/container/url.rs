//! Telling a remote file's URL from a path, without the HTTP client of `container::remote`
//! (cargo feature `remote`), so that a tool built without it can still say why it cannot read
//! `https://…`.

/// Whether `s` names a remote file: it starts with `http://`, `https://` or `hf://`, the scheme
/// in any case (schemes are case-insensitive, RFC 3986 §3.1). A local path that starts so needs
/// `./` in front.
///
/// ```
/// use gguf_serde::container::is_remote;
/// assert!(is_remote("https://huggingface.co/x/y/resolve/main/m.gguf"));
/// assert!(is_remote("HF://owner/repo/m.gguf"));
/// assert!(!is_remote("models/m.gguf") && !is_remote("./https://x"));
/// ```
pub fn is_remote(s: &str) -> bool {
    scheme(s).is_some()
}

/// The scheme of a remote file URL, lower case (`http`, `https`, `hf`).
pub(crate) fn scheme(s: &str) -> Option<&'static str> {
    let (scheme, _) = s.split_once("://")?;
    ["http", "https", "hf"].into_iter().find(|k| scheme.eq_ignore_ascii_case(k))
}
