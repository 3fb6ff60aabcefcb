//! Remote reading (`Gguf::from_url`, cargo feature `remote`) against a local HTTP server that
//! serves byte ranges (`common::range_server`), and each way the server can get ranges wrong.
//! The expected reading of a file is that of the same bytes in memory (`Gguf::from_slice`, the
//! reader the rest of this suite checks against the spec and ggml).
#![cfg(feature = "remote")]

use std::io::{Read, Seek, SeekFrom};
use std::time::Duration;

use gguf_serde::container::remote::{HttpRangeReader, RemoteError, RemoteOptions};
use gguf_serde::Gguf;

use crate::common::range_server::{Behaviour, RangeServer};
use crate::common::{gt, ty, with_deadline, B};

/// A file whose metadata is `tokens` strings long and whose one tensor has `data` bytes (F32).
fn file(tokens: u64, data: usize) -> Vec<u8> {
    let mut b = B::le();
    b.header(3, 1, 2);
    b.kv("general.architecture", ty::STRING).str("llama");
    b.kv("tokenizer.ggml.tokens", ty::ARRAY).arr(ty::STRING, tokens);
    for i in 0..tokens {
        b.str(format!("token-{i}"));
    }
    b.tensor("w", &[(data / 4) as u64], gt::F32, 0);
    b.pad(32);
    b.data(data, 7);
    b.bytes()
}

/// What a reading holds, to compare a remote reading with the local one.
fn describe<S: gguf_serde::container::Source>(g: &Gguf<S>) -> String {
    let mut s = format!("v{} a{} d{} len{}\n", g.version(), g.alignment(), g.data_offset(), g.file_len());
    for kv in g.metadata() {
        s += &format!("{} {:?}\n", kv.key, kv.value.to_owned_value());
    }
    for t in g.tensors() {
        s += &format!("{} {} {:?} {} {}\n", t.name, t.dtype.name(), &*t.shape, t.relative_offset, t.nbytes);
    }
    s
}

fn remote_error(e: &gguf_serde::Error) -> RemoteError {
    RemoteError::find(e).unwrap_or_else(|| panic!("not a RemoteError: {e}")).clone()
}

#[test]
fn reads_the_metadata_without_the_tensor_data() {
    let bytes = file(20_000, 8 << 20);
    let local = Gguf::from_slice(&bytes).unwrap();
    let server = RangeServer::start(bytes.clone(), Behaviour::Ranges);
    let opts = RemoteOptions::default().request_sizes(16 * 1024, 1 << 20);
    let (remote, stats) = Gguf::from_url(&server.url("m.gguf"), &opts).unwrap();
    assert_eq!(describe(&remote), describe(&local));
    assert_eq!(stats.file_len, bytes.len() as u64);
    assert_eq!(stats.bytes_fetched, server.bytes_sent());
    assert_eq!(stats.requests, server.requests());
    // The metadata is about 250 KB: several growing requests, and no more than one request's
    // worth (1 MiB) past the tensor infos, of a 8 MiB file.
    assert!(stats.requests > 2, "{stats:?}");
    assert!(stats.bytes_fetched < local.tensor_infos_end() + (1 << 20), "{stats:?}");
}

#[test]
fn a_small_file_is_read_in_one_request_and_a_redirect_is_followed() {
    let bytes = file(10, 4096);
    let server = RangeServer::start(bytes.clone(), Behaviour::RedirectOnce);
    let (remote, stats) = Gguf::from_url(&server.url("moved/m.gguf"), &RemoteOptions::default()).unwrap();
    assert_eq!(describe(&remote), describe(&Gguf::from_slice(&bytes).unwrap()));
    // One redirect and one range request for the whole (small) file.
    assert_eq!((stats.requests, stats.bytes_fetched), (1, bytes.len() as u64));
    assert_eq!(server.requests(), 2);
}

#[test]
fn a_malformed_remote_file_gives_the_local_error() {
    let mut bytes = file(1000, 4096);
    bytes.truncate(5000);
    let local = Gguf::from_slice(&bytes).unwrap_err();
    let server = RangeServer::start(bytes, Behaviour::Ranges);
    let opts = RemoteOptions::default().request_sizes(1024, 4096);
    let remote = Gguf::from_url(&server.url("m.gguf"), &opts).unwrap_err();
    assert!(local.as_format().is_some(), "{local}");
    assert_eq!(format!("{:?}", remote.as_format()), format!("{:?}", local.as_format()), "{remote} vs {local}");
}

/// Each mistake of a server is its [`RemoteError`], inside an I/O error whose kind says what it
/// is to code that sees only `std::io` (`From<RemoteError> for io::Error`): `UnexpectedEof` for
/// a body shorter than its `Content-Range` (the connection closed early included), `Other` for
/// the rest, a body longer than promised among them.
#[test]
fn each_range_mistake_is_a_typed_error() {
    use std::io::ErrorKind::{Other, UnexpectedEof};
    let bytes = file(2000, 4096);
    let opts = RemoteOptions::default().request_sizes(1024, 4096);
    type Check = fn(&RemoteError) -> bool;
    let cases: &[(Behaviour, Check, std::io::ErrorKind)] = &[
        (Behaviour::NoRanges, |e| matches!(e, RemoteError::NoRangeSupport { status: 200, content_range: None }), Other),
        (
            Behaviour::WholeWithContentRange,
            |e| matches!(e, RemoteError::NoRangeSupport { status: 200, content_range: Some(c) } if c.starts_with("bytes 0-")),
            Other,
        ),
        (Behaviour::NotFound, |e| matches!(e, RemoteError::Status { status: 404, start: 0, end: 1023 }), Other),
        (
            Behaviour::ShortBody,
            |e| matches!(e, RemoteError::WrongLength { start: 0, expected: 1024, got: 512, more: false, .. }),
            UnexpectedEof,
        ),
        (
            Behaviour::LongBody,
            |e| matches!(e, RemoteError::WrongLength { expected: 1024, got: 1024, more: true, .. }),
            Other,
        ),
        (Behaviour::WrongStart, |e| matches!(e, RemoteError::WrongRange { start: 0, end: 1023, .. }), Other),
        // Bytes 0-511 for 0-1023 of a longer file: a range may end early only at the file's end.
        (
            Behaviour::ShortRange,
            |e| matches!(e, RemoteError::WrongRange { start: 0, end: 1023, content_range } if content_range.starts_with("bytes 0-511/")),
            Other,
        ),
        // The first answer gives the length; the second one changes it.
        (
            Behaviour::ChangingTotal,
            |e| matches!(e, RemoteError::LengthChanged { was, now, .. } if *now == *was + 1),
            Other,
        ),
        (
            Behaviour::CutBody,
            |e| matches!(e, RemoteError::WrongLength { start: 0, expected: 1024, got: 512, .. }),
            UnexpectedEof,
        ),
        (Behaviour::RedirectLoop, |e| matches!(e, RemoteError::TooManyRedirects { max: 10 }), Other),
    ];
    for (behaviour, ok, kind) in cases {
        let server = RangeServer::start(bytes.clone(), *behaviour);
        let e = Gguf::from_url(&server.url("m.gguf"), &opts).unwrap_err();
        let r = remote_error(&e);
        assert!(ok(&r), "{behaviour:?}: {r:?} ({e})");
        assert_eq!(e.as_io().map(std::io::Error::kind), Some(*kind), "{behaviour:?}: {e}");
        // Nothing was read whole: a server without ranges sent the file, but it was not taken.
        assert!(e.to_string().contains(&server.base), "{behaviour:?}: the error names the URL: {e}");
    }
}

#[test]
fn a_server_that_never_answers_times_out() {
    let server = RangeServer::start(file(10, 64), Behaviour::Stall);
    let url = server.url("m.gguf");
    let e = with_deadline(Duration::from_secs(60), move || {
        Gguf::from_url(&url, &RemoteOptions::default().timeout(Duration::from_millis(500))).unwrap_err()
    });
    assert_eq!(remote_error(&e), RemoteError::Timeout(Duration::from_millis(500)));
    assert_eq!(e.as_io().map(std::io::Error::kind), Some(std::io::ErrorKind::TimedOut), "{e}");
}

/// The `std::io::Error` a `RemoteError` becomes has the kind its docs give: `TimedOut`,
/// `InvalidInput` for a bad URL, `UnexpectedEof` for a body shorter than promised, `Other` for
/// the rest; the error inside is the one converted.
#[test]
fn each_remote_error_becomes_an_io_error_of_its_kind() {
    use std::io::ErrorKind as K;
    let length = |expected, got, more| RemoteError::WrongLength { start: 0, end: expected - 1, expected, got, more };
    for (e, kind) in [
        (RemoteError::Timeout(Duration::from_secs(3)), K::TimedOut),
        (RemoteError::BadUrl { url: "ftp://x".into(), reason: "not http" }, K::InvalidInput),
        (length(10, 4, false), K::UnexpectedEof),
        (length(10, 11, true), K::Other),
        (RemoteError::Status { status: 404, start: 0, end: 9 }, K::Other),
        (RemoteError::TooManyRedirects { max: 2 }, K::Other),
        (RemoteError::NoRangeSupport { status: 200, content_range: None }, K::Other),
    ] {
        let io = std::io::Error::from(e.clone());
        assert_eq!(io.kind(), kind, "{e}");
        assert_eq!(io.get_ref().and_then(|i| i.downcast_ref::<RemoteError>()), Some(&e));
    }
}

/// A server that is not there (a refused connection) is a transport error, not a timeout.
#[test]
fn a_refused_connection_is_a_transport_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/m.gguf");
    let e = with_deadline(Duration::from_secs(60), move || {
        Gguf::from_url(&url, &RemoteOptions::default().timeout(Duration::from_secs(20))).unwrap_err()
    });
    assert!(matches!(remote_error(&e), RemoteError::Transport(_)), "{e}");
}

#[test]
fn a_body_that_stops_coming_times_out() {
    let server = RangeServer::start(file(10, 64), Behaviour::StallBody);
    let url = server.url("m.gguf");
    let e = with_deadline(Duration::from_secs(60), move || {
        Gguf::from_url(&url, &RemoteOptions::default().timeout(Duration::from_millis(500))).unwrap_err()
    });
    assert_eq!(remote_error(&e), RemoteError::Timeout(Duration::from_millis(500)));
}

#[test]
fn a_huge_timeout_is_cut_to_a_day() {
    let day = Duration::from_secs(24 * 3600);
    assert_eq!(RemoteOptions::MAX_TIMEOUT, day);
    for (asked, kept) in [(Duration::MAX, day), (day + Duration::from_nanos(1), day), (day, day), (day / 2, day / 2)] {
        assert_eq!(RemoteOptions::default().timeout(asked).timeout, kept, "{asked:?}");
    }
    let o = RemoteOptions::default().timeout(Duration::MAX);
    let server = RangeServer::start(file(10, 64), Behaviour::Ranges);
    assert!(Gguf::from_url(&server.url("m.gguf"), &o).is_ok());
}

#[test]
fn urls_that_are_not_remote_files_are_refused() {
    for url in ["ftp://x/y.gguf", "hf://owner", "HF://owner/repo", "model.gguf"] {
        let e = Gguf::from_url(url, &RemoteOptions::default()).unwrap_err();
        assert!(matches!(remote_error(&e), RemoteError::BadUrl { .. }), "{url}: {e}");
        assert_eq!(e.as_io().map(std::io::Error::kind), Some(std::io::ErrorKind::InvalidInput), "{url}: {e}");
    }
}

/// Shard `no` (0-based) of `count` of a model with one F32 tensor of 8 values per shard (`t{no}`),
/// with the split keys in the order `llama-gguf-split` writes them (`split.no`,
/// `split.tensors.count`, `split.count`); the first shard also has `general.architecture`.
fn shard(no: u16, count: u16) -> Vec<u8> {
    let mut b = B::le();
    b.header(3, 1, if no == 0 { 4 } else { 3 });
    if no == 0 {
        b.kv("general.architecture", ty::STRING).str("llama");
    }
    b.kv("split.no", ty::U16).u16(no);
    b.kv("split.tensors.count", ty::I32).i32(i32::from(count));
    b.kv("split.count", ty::U16).u16(count);
    b.tensor(format!("t{no}"), &[8], gt::F32, 0);
    b.pad(32);
    b.data(32, no as u8);
    b.bytes()
}

/// What a split model holds, to compare a remote reading with the local one.
fn describe_model<S: gguf_serde::container::Source>(m: &gguf_serde::ShardedGguf<S>) -> String {
    let mut s = format!("{} shards\n", m.shard_count());
    for kv in m.metadata() {
        s += &format!("{} {:?}\n", kv.key, kv.value.to_owned_value());
    }
    for t in m.tensors() {
        s += &format!(
            "{} {} {} {:?} {}\n",
            t.shard,
            t.info.name,
            t.info.dtype.name(),
            &*t.info.shape,
            t.info.data_offset
        );
    }
    s
}

/// `ShardedGguf::from_url` reads every shard from any shard's URL, as `ShardedGguf::open` reads the
/// same shards on disk; each shard that cannot be had is a typed error naming its URL.
#[test]
fn a_split_model_is_read_from_any_shards_url_as_from_disk() {
    use gguf_serde::{ErrorKind, ShardError, ShardedGguf};
    let dir = crate::common::temp_dir();
    let names: Vec<String> = (1..=3).map(|i| format!("m-{i:05}-of-00003.gguf")).collect();
    let files: Vec<(String, Vec<u8>)> =
        names.iter().enumerate().map(|(i, n)| (format!("q8/{n}"), shard(i as u16, 3))).collect();
    for (n, (_, bytes)) in names.iter().zip(&files) {
        std::fs::write(dir.path().join(n), bytes).unwrap();
    }
    let local = ShardedGguf::open(dir.path().join(&names[1])).unwrap();
    let server = RangeServer::start_files(files.clone(), Behaviour::Ranges);
    let url = |i: usize| server.url(&format!("q8/{}", names[i]));
    for given in [0, 2] {
        let (remote, stats) = ShardedGguf::from_url(&url(given), &RemoteOptions::default()).unwrap();
        assert_eq!(describe_model(&remote), describe_model(&local));
        let urls: Vec<String> = remote.shard_paths().map(|p| p.to_str().unwrap().to_owned()).collect();
        assert_eq!(urls, (0..3).map(url).collect::<Vec<_>>());
        assert_eq!(
            stats.iter().map(|s| s.file_len).collect::<Vec<_>>(),
            files.iter().map(|f| f.1.len() as u64).collect::<Vec<_>>()
        );
        let t = remote.tensor("t1").unwrap();
        assert!(matches!(remote.tensor_data(&t).unwrap_err().kind(), ErrorKind::DataNotLoaded { .. }));
    }

    // The third shard missing (404): ShardError::Missing naming its URL.
    let server = RangeServer::start_files(files[..2].to_vec(), Behaviour::Ranges);
    let e = ShardedGguf::from_url(&server.url(&format!("q8/{}", names[0])), &RemoteOptions::default()).unwrap_err();
    match e.kind() {
        ErrorKind::Shard(ShardError::Missing { path, index: 3, count: 3, .. }) => {
            assert_eq!(path.to_str().unwrap(), server.url(&format!("q8/{}", names[2])))
        }
        _ => panic!("{e}"),
    }
    // The second shard from a split into 4: a Mismatch of split.count naming its URL.
    let mut foreign = files.clone();
    foreign[1].1 = shard(1, 4);
    let server = RangeServer::start_files(foreign, Behaviour::Ranges);
    let e = ShardedGguf::from_url(&server.url(&format!("q8/{}", names[0])), &RemoteOptions::default()).unwrap_err();
    match e.kind() {
        ErrorKind::Shard(ShardError::Mismatch { path, key: "split.count", expected: 3, found: Some(4), .. }) => {
            assert_eq!(path.to_str().unwrap(), server.url(&format!("q8/{}", names[1])))
        }
        _ => panic!("{e}"),
    }
    // A 403 for the second shard: the HTTP error, with the shard named.
    let server = RangeServer::start_files(files.clone(), Behaviour::ForbiddenAt("-00002-of-00003.gguf"));
    let e = ShardedGguf::from_url(&server.url(&format!("q8/{}", names[0])), &RemoteOptions::default()).unwrap_err();
    assert!(matches!(remote_error(&e), RemoteError::Status { status: 403, .. }), "{e}");
    assert_eq!(e.shard().and_then(|p| p.to_str()), Some(server.url(&format!("q8/{}", names[1])).as_str()));
    // An unsplit file is one shard.
    let server = RangeServer::start(file(3, 64), Behaviour::Ranges);
    let (one, stats) = ShardedGguf::from_url(&server.url("one.gguf"), &RemoteOptions::default()).unwrap();
    assert_eq!((one.shard_count(), stats.len(), one.tensor_count()), (1, 1, 1));
}

/// A range reader with requests of 64 to 256 bytes over 5000 bytes that differ at every position
/// of a window (a wrong offset reads other bytes), the bytes, and their server.
fn range_reader() -> (HttpRangeReader, Vec<u8>, RangeServer) {
    let bytes: Vec<u8> = (0..5000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let server = RangeServer::start(bytes.clone(), Behaviour::Ranges);
    let opts = RemoteOptions::default().request_sizes(64, 256);
    (HttpRangeReader::open(&server.url("m.bin"), &opts).unwrap(), bytes, server)
}

#[test]
fn the_range_reader_reads_the_bytes_at_each_position_after_any_seek() {
    let (mut r, bytes, _server) = range_reader();
    assert_eq!(r.file_len(), 5000);
    // Sequential reads, then jumps back (before, at and inside the window) and forward.
    let mut at = 0u64;
    for (to, n) in [(0, 100), (100, 300), (1000, 10), (990, 30), (1000, 5), (0, 64), (4990, 10), (2000, 700)] {
        if to != at {
            assert_eq!(r.seek(SeekFrom::Start(to)).unwrap(), to);
        }
        let mut buf = vec![0u8; n];
        r.read_exact(&mut buf).unwrap();
        assert_eq!(buf, bytes[to as usize..to as usize + n], "{n} bytes at {to}");
        at = to + n as u64;
    }
    // At the end a read gives nothing.
    r.seek(SeekFrom::End(0)).unwrap();
    assert_eq!(r.read(&mut [0u8; 4]).unwrap(), 0);
}

/// A reader's URL (`url`), and its `Debug`, which shows the URL, the file's length, where it is,
/// and the requests and bytes it has fetched (as the server counted them).
#[test]
fn a_range_readers_debug_shows_its_url_length_position_and_fetches() {
    let (mut r, _, server) = range_reader();
    assert_eq!(r.url(), server.url("m.bin"));
    r.seek(SeekFrom::Start(1234)).unwrap();
    r.read_exact(&mut [0u8; 10]).unwrap();
    let debug = format!("{r:?}");
    for part in [
        format!("url: {:?}", server.url("m.bin")),
        "len: 5000".to_string(),
        "pos: 1244".to_string(),
        format!("requests: {}", server.requests()),
        format!("fetched: {}", server.bytes_sent()),
    ] {
        assert!(debug.contains(&part), "{part} in {debug}");
    }
}

/// Request sizes as the module docs give them: the first `first_request` bytes, each next one
/// twice the last up to `max_request` while reading goes on where the last answer ended, and a
/// jump elsewhere starting over at the first size. Counted by the server.
#[test]
fn requests_double_while_reading_on_and_start_over_after_a_jump() {
    let (mut r, bytes, server) = range_reader();
    let read_on = |r: &mut HttpRangeReader, from: usize, to: usize| {
        for at in (from..to).step_by(10) {
            let mut buf = [0u8; 10];
            r.read_exact(&mut buf).unwrap();
            assert_eq!(buf, bytes[at..at + 10], "at {at}");
        }
    };
    // 0-999 in reads of 10 bytes: requests of 64 (the open), 128, then 256 four times.
    read_on(&mut r, 0, 1000);
    assert_eq!((server.requests(), server.bytes_sent()), (6, 64 + 128 + 4 * 256));
    // A jump to 3000, then 3000-3499: 64, 128, 256, 256 again.
    r.seek(SeekFrom::Start(3000)).unwrap();
    read_on(&mut r, 3000, 3500);
    assert_eq!((server.requests(), server.bytes_sent()), (6 + 4, 1216 + 64 + 128 + 2 * 256));
    assert_eq!(r.requests(), server.requests());
    assert_eq!(r.bytes_fetched(), server.bytes_sent());
}

/// `NoRangeSupport`'s message gives the status and, when the server sent one, the
/// `Content-Range` it named, as sent.
#[test]
fn a_server_without_ranges_is_named_with_its_content_range() {
    let bytes = file(10, 64);
    let len = bytes.len();
    for (behaviour, expected) in [
        (Behaviour::NoRanges, "(status 200)".to_string()),
        (Behaviour::WholeWithContentRange, format!("(status 200, Content-Range \"bytes 0-{}/{len}\")", len - 1)),
    ] {
        let server = RangeServer::start(bytes.clone(), behaviour);
        let e = remote_error(&Gguf::from_url(&server.url("m.gguf"), &RemoteOptions::default()).unwrap_err());
        assert_eq!(
            e.to_string(),
            format!("the server does not serve byte ranges {expected}: refusing to download the whole file"),
            "{behaviour:?}"
        );
    }
}

/// `max_redirects` is the number of redirects followed (ureq's count, the field's docs): one
/// redirect needs 1, and 0 refuses it with `TooManyRedirects`. The builder keeps the options set
/// before it.
#[test]
fn max_redirects_is_the_number_of_redirects_followed() {
    let opts = RemoteOptions::default().request_sizes(100, 300).max_redirects(0);
    assert_eq!((opts.first_request, opts.max_request, opts.max_redirects), (100, 300, 0));
    let bytes = file(10, 64);
    let server = RangeServer::start(bytes.clone(), Behaviour::RedirectOnce);
    let e = Gguf::from_url(&server.url("moved/m.gguf"), &opts).unwrap_err();
    assert_eq!(remote_error(&e), RemoteError::TooManyRedirects { max: 0 });
    let (g, _) = Gguf::from_url(&server.url("moved/m.gguf"), &opts.clone().max_redirects(1)).unwrap();
    assert_eq!(describe(&g), describe(&Gguf::from_slice(&bytes).unwrap()));
}
