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

#[cfg(test)]
mod tests {
    use super::{is_remote, scheme};

    /// A remote file is told by its scheme, `http`, `https` or `hf`, in any case (RFC 3986 §3.1:
    /// schemes are case-insensitive), followed by `://`; anything else is a path.
    #[test]
    fn remote_files_are_told_by_their_scheme_in_any_case() {
        for (s, want) in [
            ("http://example.com/m.gguf", Some("http")),
            ("https://huggingface.co/x/y/resolve/main/m.gguf", Some("https")),
            ("HTTPS://example.com/m.gguf", Some("https")),
            ("hf://owner/repo/m.gguf", Some("hf")),
            ("Hf://owner/repo/m.gguf", Some("hf")),
            ("models/m.gguf", None),
            ("./https://x", None),
            ("ftp://example.com/m.gguf", None),
            ("https:/example.com/m.gguf", None),
            ("https", None),
            ("", None),
        ] {
            assert_eq!((scheme(s), is_remote(s)), (want, want.is_some()), "{s:?}");
        }
    }
}
