//! Remote files for `inspect` and `validate`: `https://…`, `http://…` and
//! `hf://OWNER/REPO[@REVISION]/PATH` are read with HTTP range requests (header, key/value pairs
//! and tensor infos only; cargo feature `remote`, on by default).

use gguf_serde::format::shown_path;
use std::path::Path;

/// Whether a command-line file argument names a remote file
/// ([`gguf_serde::container::is_remote`]: `http://`, `https://` or `hf://`), by its scheme: one
/// that holds a byte that is not UTF-8 after the scheme is a URL too (refused by [`open`] and
/// [`open_model`] as a bad URL), not a path.
pub fn is_remote(path: &Path) -> bool {
    gguf_serde::container::is_remote(&String::from_utf8_lossy(path.as_os_str().as_encoded_bytes()))
}

/// The text of the URL `url`.
///
/// # Errors
/// A URL that is not UTF-8 (a URL is text), named in the escaped form of names (`\xNN`).
pub fn url_text(url: &Path) -> anyhow::Result<&str> {
    url.to_str().ok_or_else(|| {
        let shown = gguf_serde::GgufStr::from_bytes(url.as_os_str().as_encoded_bytes());
        anyhow::anyhow!("not a remote file URL: {shown:?} (it holds a byte that is not UTF-8; a URL is text)")
    })
}

/// `e` with the URL in front when it does not name it yet: I/O errors do, a format error says
/// where in the file but not which file.
pub fn name_url(e: anyhow::Error, url: &Path) -> anyhow::Error {
    if e.downcast_ref::<gguf_serde::Error>().is_some_and(|g| g.as_io().is_none()) {
        e.context(shown_path(&url).to_string())
    } else {
        e
    }
}

/// Says on standard error what reading a remote file cost, so that standard output is what the
/// same command prints for the file on disk.
pub fn report(url: &Path, requests: u64, bytes_fetched: u64, file_len: u64) {
    eprintln!(
        "{}: fetched {} of {file_len} in {}",
        shown_path(&url),
        crate::out::count(bytes_fetched, "byte"),
        crate::out::count(requests, "range request")
    );
}

/// The options of the requests: the defaults, with the timeout from `GGUF_HTTP_TIMEOUT`
/// (seconds) when it is set.
#[cfg(feature = "remote")]
fn options() -> anyhow::Result<gguf_serde::container::remote::RemoteOptions> {
    use anyhow::Context;
    let mut o = gguf_serde::container::remote::RemoteOptions::default();
    if let Ok(s) = std::env::var("GGUF_HTTP_TIMEOUT") {
        let timeout = s
            .parse::<f64>()
            .ok()
            .filter(|v| *v > 0.0)
            .and_then(|v| std::time::Duration::try_from_secs_f64(v).ok())
            .filter(|d| *d <= gguf_serde::container::remote::RemoteOptions::MAX_TIMEOUT)
            .with_context(|| format!("GGUF_HTTP_TIMEOUT={s:?}: expected a number of seconds above 0, at most 86400"))?;
        o = o.timeout(timeout);
    }
    Ok(o)
}

/// Reads the metadata of the remote file `url`.
///
/// # Errors
/// What [`gguf_serde::Gguf::from_url`] returns, with the URL as context.
#[cfg(feature = "remote")]
pub fn open(
    url: &Path,
) -> anyhow::Result<(gguf_serde::Gguf<gguf_serde::container::MetadataOnly>, gguf_serde::container::remote::RemoteStats)>
{
    let url = url_text(url)?;
    Ok(gguf_serde::Gguf::from_url(url, &options()?)?)
}

/// Reads the metadata of the remote model `url`: one file, or every shard of a split model named by
/// any of its shards (`…-00001-of-00003.gguf`), the shards read in parallel.
///
/// # Errors
/// What [`gguf_serde::ShardedGguf::from_url`] returns (each error names its URL).
#[cfg(feature = "remote")]
pub fn open_model(
    url: &Path,
) -> anyhow::Result<(
    gguf_serde::ShardedGguf<gguf_serde::container::MetadataOnly>,
    Vec<gguf_serde::container::remote::RemoteStats>,
)> {
    let url = url_text(url)?;
    Ok(gguf_serde::ShardedGguf::from_url(url, &options()?)?)
}

/// Without the `remote` feature a URL is refused with a message saying so.
#[cfg(not(feature = "remote"))]
pub fn open_model(
    url: &Path,
) -> anyhow::Result<(gguf_serde::ShardedGguf<gguf_serde::container::MetadataOnly>, Vec<Stats>)> {
    url_text(url)?;
    anyhow::bail!("{}: remote files need the `remote` feature of gguf-cli", shown_path(&url))
}

/// Without the `remote` feature a URL is refused with a message saying so.
#[cfg(not(feature = "remote"))]
pub fn open(url: &Path) -> anyhow::Result<(gguf_serde::Gguf<gguf_serde::container::MetadataOnly>, Stats)> {
    url_text(url)?;
    anyhow::bail!("{}: remote files need the `remote` feature of gguf-cli", shown_path(&url))
}

/// Stand-in for the statistics without the `remote` feature.
#[cfg(not(feature = "remote"))]
pub struct Stats {
    pub requests: u64,
    pub bytes_fetched: u64,
    pub file_len: u64,
}
