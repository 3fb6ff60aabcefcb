//! A small HTTP/1.1 server on 127.0.0.1 that serves one file at every path, or several files each
//! at its own path, with byte ranges (RFC 9110 §14), or misbehaves in one chosen way, for the
//! tests of remote reading (`Gguf::from_url`, `ShardedGguf::from_url`, `gguf inspect https://…`).
//! It answers every `GET` on one thread per connection, keeps connections alive, and counts
//! requests and body bytes sent.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How the server answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behaviour {
    /// `206` with the range asked for (clamped to the file), `416` past its end.
    Ranges,
    /// Redirects (`302`) every request for `/moved/...` to the same path without `/moved`, as
    /// the hub redirects `resolve` URLs to its storage; otherwise [`Behaviour::Ranges`].
    RedirectOnce,
    /// `200` with the whole file, ignoring `Range`.
    NoRanges,
    /// `200` with the whole file and a `Content-Range` for all of it (`bytes 0-LAST/LEN`): a
    /// server that names a range but does not answer with one.
    WholeWithContentRange,
    /// `206` whose `Content-Range` promises the range asked for but whose body (and
    /// `Content-Length`) has half of it.
    ShortBody,
    /// `206` with the right headers, then half the body, then the connection is closed.
    CutBody,
    /// `206` with the right headers, then nothing (until the client gives up).
    StallBody,
    /// `206` whose body (and `Content-Length`) has 100 bytes more than its `Content-Range`.
    LongBody,
    /// `206` whose `Content-Range` starts one byte later than asked.
    WrongStart,
    /// `206` with the first half of the range asked for, `Content-Range` and body alike (a
    /// range that ends early, short of the end of the file).
    ShortRange,
    /// `206` answers whose `Content-Range` total grows by one with every request.
    ChangingTotal,
    /// `302` to the same URL, for ever.
    RedirectLoop,
    /// Reads the request and never answers (until the client gives up).
    Stall,
    /// `404`.
    NotFound,
    /// `403 Forbidden` for a path that ends with this text; otherwise [`Behaviour::Ranges`]
    /// (one shard of a split model that the server refuses).
    ForbiddenAt(&'static str),
}

/// What the server serves.
enum Files {
    /// One file at every path.
    Any(Vec<u8>),
    /// Each file at its own path (`/NAME`); any other path is `404 Not Found`.
    ByPath(HashMap<String, Vec<u8>>),
}

impl Files {
    fn get(&self, path: &str) -> Option<&[u8]> {
        match self {
            Files::Any(b) => Some(b),
            Files::ByPath(m) => m.get(path.trim_start_matches('/')).map(Vec::as_slice),
        }
    }
}

/// A running server; it stops when the test process ends.
pub struct RangeServer {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    requests: Arc<AtomicU64>,
    sent: Arc<AtomicU64>,
}

impl RangeServer {
    /// Serves `bytes` at every path, behaving as `behaviour` says.
    pub fn start(bytes: Vec<u8>, behaviour: Behaviour) -> RangeServer {
        Self::serve_files(Files::Any(bytes), behaviour)
    }

    /// Serves each file at `/NAME` (`NAME` may hold `/`; [`url`](Self::url) gives its URL), and
    /// `404 Not Found` at any other path, behaving as `behaviour` says.
    pub fn start_files(files: Vec<(String, Vec<u8>)>, behaviour: Behaviour) -> RangeServer {
        Self::serve_files(Files::ByPath(files.into_iter().collect()), behaviour)
    }

    fn serve_files(files: Files, behaviour: Behaviour) -> RangeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let base = format!("http://{}", listener.local_addr().expect("local addr"));
        let requests = Arc::new(AtomicU64::new(0));
        let sent = Arc::new(AtomicU64::new(0));
        let bytes = Arc::new(files);
        let (r, s) = (requests.clone(), sent.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (bytes, r, s) = (bytes.clone(), r.clone(), s.clone());
                std::thread::spawn(move || {
                    let _ = serve(conn, &bytes, behaviour, &r, &s);
                });
            }
        });
        RangeServer { base, requests, sent }
    }

    /// The URL of `name` on this server.
    pub fn url(&self, name: &str) -> String {
        format!("{}/{name}", self.base)
    }

    /// Requests answered so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    /// Body bytes sent so far.
    pub fn bytes_sent(&self) -> u64 {
        self.sent.load(Ordering::SeqCst)
    }
}

fn serve(
    conn: TcpStream,
    files: &Files,
    behaviour: Behaviour,
    requests: &AtomicU64,
    sent: &AtomicU64,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut conn = conn;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
        let mut range = None;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h)? == 0 {
                return Ok(());
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((name, value)) = h.split_once(':') {
                if name.eq_ignore_ascii_case("range") {
                    range = parse_range(value.trim());
                }
            }
        }
        let n = requests.fetch_add(1, Ordering::SeqCst);
        let head = |status: &str, extra: &str, body_len: usize| {
            format!("HTTP/1.1 {status}\r\nContent-Length: {body_len}\r\n{extra}\r\n")
        };
        let served = if behaviour == Behaviour::RedirectOnce { path.strip_prefix("/moved") } else { None };
        let Some(file) = files.get(served.unwrap_or(&path)) else {
            conn.write_all(head("404 Not Found", "", 0).as_bytes())?;
            continue;
        };
        let len = file.len() as u64;
        match behaviour {
            Behaviour::Stall => {
                std::thread::sleep(std::time::Duration::from_secs(600));
                return Ok(());
            }
            Behaviour::NotFound => {
                conn.write_all(head("404 Not Found", "", 0).as_bytes())?;
                continue;
            }
            Behaviour::ForbiddenAt(end) if path.ends_with(end) => {
                conn.write_all(head("403 Forbidden", "", 0).as_bytes())?;
                continue;
            }
            Behaviour::RedirectLoop => {
                conn.write_all(head("302 Found", &format!("Location: {path}\r\n"), 0).as_bytes())?;
                continue;
            }
            Behaviour::RedirectOnce if path.starts_with("/moved/") => {
                let to = &path["/moved".len()..];
                conn.write_all(head("302 Found", &format!("Location: {to}\r\n"), 0).as_bytes())?;
                continue;
            }
            Behaviour::NoRanges | Behaviour::WholeWithContentRange => {
                let extra = if behaviour == Behaviour::NoRanges {
                    String::new()
                } else {
                    format!("Content-Range: bytes 0-{}/{len}\r\n", len.saturating_sub(1))
                };
                conn.write_all(head("200 OK", &extra, file.len()).as_bytes())?;
                sent.fetch_add(len, Ordering::SeqCst);
                conn.write_all(file)?;
                continue;
            }
            _ => {}
        }
        let Some((start, end)) = range else {
            conn.write_all(head("200 OK", "", file.len()).as_bytes())?;
            conn.write_all(file)?;
            continue;
        };
        if start >= len {
            conn.write_all(
                head("416 Range Not Satisfiable", &format!("Content-Range: bytes */{len}\r\n"), 0).as_bytes(),
            )?;
            continue;
        }
        let end = end.min(len - 1);
        let end = if behaviour == Behaviour::ShortRange { start + (end - start) / 2 } else { end };
        let body = &file[start as usize..=end as usize];
        let (cr_start, total) = match behaviour {
            Behaviour::WrongStart => (start + 1, len),
            Behaviour::ChangingTotal => (start, len + n),
            _ => (start, len),
        };
        let content_range = format!("Content-Range: bytes {cr_start}-{end}/{total}\r\n");
        let body: Vec<u8> = match behaviour {
            Behaviour::ShortBody => body[..body.len() / 2].to_vec(),
            Behaviour::LongBody => body.iter().copied().chain(std::iter::repeat_n(0u8, 100)).collect(),
            _ => body.to_vec(),
        };
        if behaviour == Behaviour::CutBody || behaviour == Behaviour::StallBody {
            conn.write_all(head("206 Partial Content", &content_range, body.len()).as_bytes())?;
            if behaviour == Behaviour::StallBody {
                std::thread::sleep(std::time::Duration::from_secs(600));
            }
            conn.write_all(&body[..body.len() / 2])?;
            sent.fetch_add(body.len() as u64 / 2, Ordering::SeqCst);
            return conn.shutdown(std::net::Shutdown::Both);
        }
        conn.write_all(head("206 Partial Content", &content_range, body.len()).as_bytes())?;
        sent.fetch_add(body.len() as u64, Ordering::SeqCst);
        conn.write_all(&body)?;
    }
}

/// `bytes=START-END` (END inclusive; `bytes=START-` to the end).
fn parse_range(v: &str) -> Option<(u64, u64)> {
    let (a, b) = v.strip_prefix("bytes=")?.split_once('-')?;
    let start = a.trim().parse().ok()?;
    let end = if b.trim().is_empty() { u64::MAX } else { b.trim().parse().ok()? };
    (start <= end).then_some((start, end))
}
