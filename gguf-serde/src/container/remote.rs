//! Reading the metadata of a GGUF file over HTTP(S) with range requests, without downloading it
//! (cargo feature `remote`).
//!
//! [`HttpRangeReader`] is a `Read + Seek` over a URL: every read it cannot serve from the bytes
//! already fetched becomes one `GET` with a `Range: bytes=START-END` header, so
//! [`Gguf::from_reader`] (which asks only for the bytes the parser needs, plus an 8 KiB
//! read-ahead, and takes the file's length from `Seek`) reads the header, the key/value block
//! and the tensor infos of a remote file and nothing of its tensor data. [`Gguf::from_url`] does
//! both steps; `hf://OWNER/REPO[@REVISION]/PATH` names a file on the Hugging Face hub
//! ([`resolve_hf_uri`]).
//!
//! Requests grow while the parser reads on (the first asks for [`RemoteOptions::first_request`]
//! bytes, each next one twice the last, up to [`RemoteOptions::max_request`]; a read that does
//! not go on where the last answer ended starts over at the first size), so a 6 MB vocabulary
//! takes a handful of round trips and at most one request's worth of overshoot.
//! This follows RFC 9110 §14 (range requests): a `206 Partial Content` answer with a
//! `Content-Range: bytes START-END/TOTAL` header whose range is the one asked for (or, at the end
//! of the file, shorter by what the file lacks) and a body of exactly that length.
//!
//! Whatever the server does wrong is a [`RemoteError`], wrapped in the [`std::io::Error`] that
//! `Read` returns (so [`Gguf::from_reader`] reports it as [`Error::Io`](crate::Error) with the
//! URL in its context; [`RemoteError::find`] gets it back). Nothing the server says is trusted
//! for an allocation: a body is read up to the length asked for, plus one byte to see that it is
//! longer, and a length that changes between answers is refused.

use std::fmt;
use std::io::{self, Read, Seek, SeekFrom};
use std::time::Duration;

use super::{Gguf, MetadataOnly};
use crate::error::{Error, Result};

/// How [`HttpRangeReader`] talks to the server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RemoteOptions {
    /// Bytes asked for by the first request (default 256 KiB: a file with a small vocabulary
    /// needs no second one).
    pub first_request: u64,
    /// The most bytes one request asks for; each request asks twice what the one before did, up
    /// to this (default 8 MiB).
    pub max_request: u64,
    /// The longest one request may take, connecting, redirects and the body included (default
    /// 30 s). A server that takes longer gives [`RemoteError::Timeout`].
    pub timeout: Duration,
    /// How many redirects a request may follow (default 10; the hub redirects `resolve` URLs to
    /// its storage once; 0 follows none). More gives [`RemoteError::TooManyRedirects`].
    pub max_redirects: u32,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            first_request: 256 * 1024,
            max_request: 8 * 1024 * 1024,
            timeout: Duration::from_secs(30),
            max_redirects: 10,
        }
    }
}

impl RemoteOptions {
    /// The defaults (see each field).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`RemoteOptions::timeout`], at most [`RemoteOptions::MAX_TIMEOUT`] (a longer one
    /// is that).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.min(Self::MAX_TIMEOUT);
        self
    }

    /// The longest timeout (one day): longer ones are cut to it, so that a deadline computed
    /// from it cannot overflow.
    pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

    /// Sets [`RemoteOptions::first_request`] and [`RemoteOptions::max_request`] in bytes. A
    /// value below 1 is raised to 1 and a maximum below the first to the first (tiny requests
    /// work, slowly: one round trip each).
    pub fn request_sizes(mut self, first: u64, max: u64) -> Self {
        self.first_request = first.max(1);
        self.max_request = max.max(self.first_request);
        self
    }

    /// Sets [`RemoteOptions::max_redirects`].
    pub fn max_redirects(mut self, n: u32) -> Self {
        self.max_redirects = n;
        self
    }
}

/// What went wrong talking to a server. Returned inside the `std::io::Error` of
/// [`HttpRangeReader`]'s `Read`, and by [`HttpRangeReader::open`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// The URL is not `http://`, `https://` or a well-formed `hf://OWNER/REPO[@REV]/PATH`.
    #[error("not a remote file URL: {url:?} ({reason})")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The server answered a range request with the whole file (`200 OK`) or without a usable
    /// `Content-Range`: it does not serve ranges, and the file is not downloaded whole instead.
    #[error("the server does not serve byte ranges (status {status}{}): refusing to download the whole file", content_range_suffix(.content_range))]
    NoRangeSupport {
        /// The answer's status code.
        status: u16,
        /// Its `Content-Range` header, if it had one.
        content_range: Option<String>,
    },
    /// An answer with a status other than 206 (404, 403, 416, 5xx, …).
    #[error("HTTP status {status} for bytes {start}-{end}")]
    Status {
        /// The status code.
        status: u16,
        /// The first byte asked for.
        start: u64,
        /// The last byte asked for (inclusive).
        end: u64,
    },
    /// The answer's `Content-Range` is not the range asked for, or its total length differs from
    /// the one the first answer gave.
    #[error("the server answered bytes {start}-{end} with Content-Range {content_range:?}")]
    WrongRange {
        /// The first byte asked for.
        start: u64,
        /// The last byte asked for (inclusive).
        end: u64,
        /// The `Content-Range` header as received.
        content_range: String,
    },
    /// The body is shorter or longer than its `Content-Range` says (a connection closed before
    /// the promised length included).
    #[error("the server sent {} for bytes {start}-{end} ({expected} expected){}", crate::format::count(*.got, "byte"), if *.more { " and more" } else { "" })]
    WrongLength {
        /// The first byte asked for.
        start: u64,
        /// The last byte of the range the server promised (inclusive).
        end: u64,
        /// Bytes promised.
        expected: u64,
        /// Bytes received (at most `expected` + 1: reading stops there).
        got: u64,
        /// Whether the body went on past what was promised.
        more: bool,
    },
    /// A later answer gives another total length than the first one did (the file changed on the
    /// server, or the server lies about it).
    #[error("the file's length changed from {was} to {} between answers (Content-Range {content_range:?})", crate::format::count(*.now, "byte"))]
    LengthChanged {
        /// The length the first answer gave.
        was: u64,
        /// The length this answer gives.
        now: u64,
        /// This answer's `Content-Range` header.
        content_range: String,
    },
    /// More redirects than [`RemoteOptions::max_redirects`] (a redirect loop, say).
    #[error("more than {max} redirects")]
    TooManyRedirects {
        /// The limit.
        max: u32,
    },
    /// A request took longer than [`RemoteOptions::timeout`].
    #[error("no complete answer within {0:?}")]
    Timeout(Duration),
    /// The connection failed (host not found, refused, TLS, a malformed answer, …).
    #[error("HTTP request failed: {0}")]
    Transport(String),
}

fn content_range_suffix(c: &Option<String>) -> String {
    c.as_ref().map_or_else(String::new, |c| format!(", Content-Range {c:?}"))
}

impl RemoteError {
    /// The `RemoteError` inside an error of this crate or of `Read`, or anywhere in the
    /// `source()` chain of another error (an `anyhow::Error`, say); `None` if there is none. A
    /// `Gguf::from_reader` over an [`HttpRangeReader`] reports it as
    /// [`ErrorKind::Io`](crate::ErrorKind::Io), so this is how to get the kind back.
    pub fn find<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a RemoteError> {
        let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
        while let Some(e) = cur {
            if let Some(r) = e.downcast_ref::<RemoteError>() {
                return Some(r);
            }
            let io = e.downcast_ref::<io::Error>().or_else(|| e.downcast_ref::<Error>().and_then(Error::as_io));
            if let Some(io) = io {
                if let Some(inner) = io.get_ref() {
                    if let Some(r) = inner.downcast_ref::<RemoteError>() {
                        return Some(r);
                    }
                }
            }
            cur = e.source();
        }
        None
    }
}

/// The error as an [`io::Error`] (how [`HttpRangeReader`]'s `Read` reports it, and what the
/// [`Error`] of [`Gguf::from_url`] holds), with the error inside ([`RemoteError::find`] gets it
/// back) and the kind: `TimedOut` for [`Timeout`](RemoteError::Timeout), `InvalidInput` for
/// [`BadUrl`](RemoteError::BadUrl), `UnexpectedEof` for a [`WrongLength`](RemoteError::WrongLength)
/// body shorter than promised, `Other` for the rest (a body longer than promised among them).
impl From<RemoteError> for io::Error {
    fn from(e: RemoteError) -> Self {
        let kind = match e {
            RemoteError::Timeout(_) => io::ErrorKind::TimedOut,
            RemoteError::BadUrl { .. } => io::ErrorKind::InvalidInput,
            RemoteError::WrongLength { expected, got, .. } if got < expected => io::ErrorKind::UnexpectedEof,
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, e)
    }
}

/// The `https://` URL of a file on the Hugging Face hub named `hf://OWNER/REPO[@REVISION]/PATH`
/// (the revision defaults to `main`): `https://huggingface.co/OWNER/REPO/resolve/REVISION/PATH`,
/// the URL the hub serves a file's bytes from. Any other URL is returned as it is.
///
/// # Errors
/// [`RemoteError::BadUrl`] for an `hf://` URL without an owner, a repository or a path.
pub fn resolve_hf_uri(url: &str) -> std::result::Result<String, RemoteError> {
    if scheme(url) != Some("hf") {
        return Ok(url.to_owned());
    }
    let rest = url.get("hf://".len()..).unwrap_or_default();
    let bad = |reason| RemoteError::BadUrl { url: url.to_owned(), reason };
    let mut parts = rest.splitn(3, '/');
    let owner = parts.next().filter(|s| !s.is_empty()).ok_or_else(|| bad("no owner"))?;
    let repo = parts.next().filter(|s| !s.is_empty()).ok_or_else(|| bad("no repository"))?;
    let path = parts.next().filter(|s| !s.is_empty()).ok_or_else(|| bad("no file path"))?;
    let (repo, revision) = match repo.split_once('@') {
        Some((r, rev)) if !r.is_empty() && !rev.is_empty() => (r, rev),
        Some(_) => return Err(bad("empty repository or revision around '@'")),
        None => (repo, "main"),
    };
    Ok(format!("https://huggingface.co/{owner}/{repo}/resolve/{revision}/{path}"))
}

pub use super::url::is_remote;
use super::url::scheme;

/// A remote file as `Read + Seek`, fetched with HTTP range requests as it is read (see the
/// [module docs](self)). Holds the bytes of the last answer only.
pub struct HttpRangeReader {
    agent: ureq::Agent,
    url: String,
    options: RemoteOptions,
    len: u64,
    pos: u64,
    /// The bytes of the last answer and where they start in the file.
    window: Vec<u8>,
    window_start: u64,
    next_request: u64,
    requests: u64,
    fetched: u64,
}

impl fmt::Debug for HttpRangeReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRangeReader")
            .field("url", &self.url)
            .field("len", &self.len)
            .field("pos", &self.pos)
            .field("requests", &self.requests)
            .field("fetched", &self.fetched)
            .finish()
    }
}

impl HttpRangeReader {
    /// Opens `url` (`http://`, `https://`, or `hf://`, see [`resolve_hf_uri`]) with one range
    /// request for its first [`RemoteOptions::first_request`] bytes, which also gives the file's
    /// length.
    ///
    /// # Errors
    /// A [`RemoteError`]: [`BadUrl`](RemoteError::BadUrl),
    /// [`NoRangeSupport`](RemoteError::NoRangeSupport) when the server answers with the whole
    /// file, [`Status`](RemoteError::Status) (a 404, say), [`WrongRange`](RemoteError::WrongRange),
    /// [`WrongLength`](RemoteError::WrongLength), [`TooManyRedirects`](RemoteError::TooManyRedirects),
    /// [`Timeout`](RemoteError::Timeout), [`Transport`](RemoteError::Transport).
    pub fn open(url: &str, options: &RemoteOptions) -> std::result::Result<Self, RemoteError> {
        let resolved = resolve_hf_uri(url)?;
        if !matches!(scheme(&resolved), Some("http" | "https")) {
            return Err(RemoteError::BadUrl { url: url.to_owned(), reason: "not http://, https:// or hf://" });
        }
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(options.timeout.min(RemoteOptions::MAX_TIMEOUT)))
            .max_redirects(options.max_redirects)
            .max_redirects_will_error(true)
            .http_status_as_error(false)
            .build();
        let mut r = HttpRangeReader {
            agent: config.into(),
            url: resolved,
            options: options.clone(),
            len: 0,
            pos: 0,
            window: Vec::new(),
            window_start: 0,
            next_request: options.first_request.max(1),
            requests: 0,
            fetched: 0,
        };
        let first = r.next_request;
        let total = r.fetch(0, first, None)?;
        r.len = total;
        r.next_request = first.saturating_mul(2).min(options.max_request);
        Ok(r)
    }

    /// The URL the bytes come from (an `hf://` URL resolved).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The file's length in bytes, from the first answer's `Content-Range`.
    pub fn file_len(&self) -> u64 {
        self.len
    }

    /// How many range requests were made so far.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// How many body bytes were received so far.
    pub fn bytes_fetched(&self) -> u64 {
        self.fetched
    }

    /// One range request for `want` bytes from `start` (fewer at the end of the file). Replaces
    /// the window with the answer; returns its length and the file's total length. `total` is
    /// the length known from an earlier answer, which this one must repeat.
    fn fetch(&mut self, start: u64, want: u64, total: Option<u64>) -> std::result::Result<u64, RemoteError> {
        // `want >= 1`, so `start + want - 1` cannot underflow; saturating at u64::MAX.
        let mut end = start.saturating_add(want.max(1).saturating_sub(1));
        if let Some(t) = total {
            end = end.min(t.saturating_sub(1));
        }
        self.requests = self.requests.saturating_add(1);
        let timeout = self.options.timeout;
        let max = self.options.max_redirects;
        let map = |e: ureq::Error| match e {
            ureq::Error::Timeout(_) => RemoteError::Timeout(timeout),
            ureq::Error::TooManyRedirects => RemoteError::TooManyRedirects { max },
            ureq::Error::Io(io) if io.kind() == io::ErrorKind::TimedOut => RemoteError::Timeout(timeout),
            e => RemoteError::Transport(e.to_string()),
        };
        let mut resp = self
            .agent
            .get(&self.url)
            .header("Range", format!("bytes={start}-{end}"))
            .header("Accept-Encoding", "identity")
            .call()
            .map_err(map)?;
        let status = resp.status().as_u16();
        let content_range = resp.headers().get("content-range").and_then(|v| v.to_str().ok()).map(str::to_owned);
        if status == 200 {
            return Err(RemoteError::NoRangeSupport { status, content_range });
        }
        // ureq follows redirects up to the limit and errors past it, but with a limit of 0 it
        // hands the redirect back: that is one redirect more than allowed too.
        if matches!(status, 301 | 302 | 303 | 307 | 308) {
            return Err(RemoteError::TooManyRedirects { max });
        }
        if status != 206 {
            return Err(RemoteError::Status { status, start, end });
        }
        let Some(content_range) = content_range else {
            return Err(RemoteError::NoRangeSupport { status, content_range: None });
        };
        let wrong = || RemoteError::WrongRange { start, end, content_range: content_range.clone() };
        let (got_start, got_end, got_total) = parse_content_range(&content_range).ok_or_else(wrong)?;
        // The range must start where asked, end no later than asked, and end early only at the
        // end of the file; the total must stay what it was.
        let ends_right = got_end == end || (got_end < end && got_end.checked_add(1) == Some(got_total));
        if got_start != start || !ends_right || got_end >= got_total {
            return Err(wrong());
        }
        if let Some(was) = total.filter(|&t| t != got_total) {
            return Err(RemoteError::LengthChanged { was, now: got_total, content_range });
        }
        // `got_start <= got_end < got_total <= u64::MAX` (checked above), so this cannot wrap.
        let expected = got_end.saturating_sub(got_start).saturating_add(1);
        // Read at most one byte more than promised, so that a longer body is seen but never held.
        let mut body = Vec::with_capacity(usize::try_from(expected.min(self.options.max_request)).unwrap_or(0));
        let read = resp.body_mut().as_reader().take(expected.saturating_add(1)).read_to_end(&mut body);
        // `read_to_end` keeps what it read before an error: a body cut short (the connection
        // closed before the promised length) is a short body, whatever the transport says.
        let got = body.len() as u64;
        if let Err(e) = read {
            let inner = e.get_ref().and_then(|i| i.downcast_ref::<ureq::Error>());
            if e.kind() == io::ErrorKind::TimedOut || matches!(inner, Some(ureq::Error::Timeout(_))) {
                return Err(RemoteError::Timeout(timeout));
            }
            if got >= expected {
                return Err(RemoteError::Transport(e.to_string()));
            }
        }
        self.fetched = self.fetched.saturating_add(got);
        if got != expected {
            return Err(RemoteError::WrongLength {
                start,
                end: got_end,
                expected,
                got: got.min(expected),
                more: got > expected,
            });
        }
        self.window = body;
        self.window_start = start;
        Ok(got_total)
    }
}

/// `bytes START-END/TOTAL` as three numbers (a `*` total is not accepted: the length is needed).
fn parse_content_range(v: &str) -> Option<(u64, u64, u64)> {
    let rest = v.trim().strip_prefix("bytes")?.trim_start();
    let (range, total) = rest.split_once('/')?;
    let (a, b) = range.split_once('-')?;
    let num = |s: &str| -> Option<u64> {
        let s = s.trim();
        if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    let (a, b, t) = (num(a)?, num(b)?, num(total)?);
    (a <= b).then_some((a, b, t))
}

impl Read for HttpRangeReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() || self.pos >= self.len {
            return Ok(0);
        }
        let window_end = self.window_start.saturating_add(self.window.len() as u64);
        if self.pos < self.window_start || self.pos >= window_end {
            // Sequential reading grows the requests; a jump starts over at the first size.
            let want = if self.pos == window_end {
                let w = self.next_request;
                self.next_request = w.saturating_mul(2).min(self.options.max_request);
                w
            } else {
                let first = self.options.first_request.max(1);
                self.next_request = first.saturating_mul(2).min(self.options.max_request);
                first
            };
            // A read larger than the request size is served by one request of its size.
            let want = want.min(self.options.max_request).max(buf.len() as u64);
            self.fetch(self.pos, want, Some(self.len))?;
        }
        // In the window now: `pos - window_start < window.len()`.
        let at =
            usize::try_from(self.pos.saturating_sub(self.window_start)).map_err(|_| io::ErrorKind::InvalidInput)?;
        let have = self.window.get(at..).unwrap_or_default();
        let n = buf.len().min(have.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), have.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.pos = self.pos.saturating_add(n as u64);
        Ok(n)
    }
}

impl Seek for HttpRangeReader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let new = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        let new =
            new.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start of the file"))?;
        self.pos = new;
        Ok(new)
    }
}

impl Gguf<MetadataOnly> {
    /// Reads the metadata and tensor infos of a remote file (`http://`, `https://` or
    /// `hf://OWNER/REPO[@REVISION]/PATH`) with HTTP range requests, as [`Gguf::from_reader`]
    /// reads a local one: no tensor data is fetched. Cargo feature `remote`.
    ///
    /// ```no_run
    /// use gguf_serde::Gguf;
    /// use gguf_serde::container::remote::RemoteOptions;
    ///
    /// let url = "hf://unsloth/gemma-3-270m-it-GGUF/gemma-3-270m-it-Q8_0.gguf";
    /// let (file, stats) = Gguf::from_url(url, &RemoteOptions::default())?;
    /// println!("{:?}: {} tensors, {} bytes fetched in {} requests",
    ///          file.get("general.architecture"), file.tensor_count(), stats.bytes_fetched, stats.requests);
    /// # Ok::<(), gguf_serde::Error>(())
    /// ```
    ///
    /// Returns the file and the reader's counters (requests made, bytes fetched).
    ///
    /// # Errors
    /// [`Error::Io`](crate::Error) wrapping a [`RemoteError`] (see [`RemoteError::find`]) for what
    /// the server did wrong; any validation error of [`Gguf::from_reader`], tensor bounds checked
    /// against the length the server gave.
    pub fn from_url(url: &str, options: &RemoteOptions) -> Result<(Self, RemoteStats)> {
        let mut r = HttpRangeReader::open(url, options).map_err(|e| Error::io(format!("opening {url}"), e.into()))?;
        let file = Gguf::from_reader(&mut r).map_err(|e| e.of_url(url))?;
        Ok((file, RemoteStats { url: r.url, file_len: r.len, requests: r.requests, bytes_fetched: r.fetched }))
    }
}

/// What reading a remote file cost (from [`Gguf::from_url`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemoteStats {
    /// The URL fetched (an `hf://` URL resolved).
    pub url: String,
    /// The file's length in bytes, as the server gave it.
    pub file_len: u64,
    /// Range requests made.
    pub requests: u64,
    /// Body bytes received.
    pub bytes_fetched: u64,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn content_range_is_parsed_strictly() {
        assert_eq!(parse_content_range("bytes 0-99/1000"), Some((0, 99, 1000)));
        assert_eq!(parse_content_range("bytes 5-5/6"), Some((5, 5, 6)));
        assert_eq!(parse_content_range("bytes 0-99/*"), None);
        assert_eq!(parse_content_range("bytes 9-1/100"), None);
        assert_eq!(parse_content_range("bytes +1-9/100"), None);
        assert_eq!(parse_content_range("items 0-9/100"), None);
        assert_eq!(parse_content_range("bytes 0-99999999999999999999999/1"), None);
    }

    #[test]
    fn hf_uris_resolve_to_the_hub() {
        assert_eq!(
            resolve_hf_uri("hf://ggml-org/gemma-3-270m-GGUF/gemma-3-270m-Q8_0.gguf").unwrap(),
            "https://huggingface.co/ggml-org/gemma-3-270m-GGUF/resolve/main/gemma-3-270m-Q8_0.gguf"
        );
        assert_eq!(
            resolve_hf_uri("hf://a/b@v1.0/sub/dir/f.gguf").unwrap(),
            "https://huggingface.co/a/b/resolve/v1.0/sub/dir/f.gguf"
        );
        assert_eq!(resolve_hf_uri("https://x/y.gguf").unwrap(), "https://x/y.gguf");
        for bad in ["hf://", "hf://a", "hf://a/b", "hf://a/b/", "hf:///b/c", "hf://a/@x/c", "hf://a/b@/c"] {
            assert!(matches!(resolve_hf_uri(bad), Err(RemoteError::BadUrl { .. })), "{bad}");
        }
    }
}
