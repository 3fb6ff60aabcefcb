//! `gguf inspect` and `gguf validate` of `http://` files, against a local server that serves byte
//! ranges (`gguf_tests::support::range_server`): standard output is what the same command prints
//! for the file on disk, the cost goes to standard error, and a server that gets ranges wrong
//! fails the command with the reason.

use gguf_tests::support::range_server::{Behaviour, RangeServer};

use crate::gguf;

fn small() -> (std::path::PathBuf, Vec<u8>) {
    let path = crate::small_path();
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

#[test]
fn inspect_of_a_url_prints_what_inspect_of_the_file_prints() {
    let (path, bytes) = small();
    let server = RangeServer::start(bytes.clone(), Behaviour::Ranges);
    let url = server.url("small.gguf");
    for extra in [&[][..], &["--json"][..], &["--stored-order"][..]] {
        let local = gguf(&[&["inspect", path.to_str().unwrap()], extra].concat());
        let remote = gguf(&[&["inspect", &url], extra].concat());
        assert!(local.status.success() && remote.status.success(), "{remote:?}");
        assert_eq!(String::from_utf8_lossy(&remote.stdout), String::from_utf8_lossy(&local.stdout), "{extra:?}");
        let err = String::from_utf8_lossy(&remote.stderr);
        assert!(
            err.contains(&format!("{url}: fetched {} bytes of {} in 1 range request", bytes.len(), bytes.len())),
            "{err}"
        );
    }
}

#[test]
fn validate_of_a_url() {
    let (_, bytes) = small();
    let server = RangeServer::start(bytes, Behaviour::Ranges);
    let url = server.url("small.gguf");
    let out = gguf(&["validate", &url]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{url}: OK (version 3, 3 keys, 3 tensors)\n"));

    // A truncated file is reported as the file on disk is, naming the URL.
    let (_, mut bytes) = small();
    bytes.truncate(100);
    let dir = gguf_tests::temp_dir("remote-validate");
    let cut = dir.join("cut.gguf");
    std::fs::write(&cut, &bytes).unwrap();
    let local = gguf(&["validate", cut.to_str().unwrap()]);
    let server = RangeServer::start(bytes, Behaviour::Ranges);
    let url = server.url("cut.gguf");
    let out = gguf(&["validate", &url]);
    assert_eq!((out.status.code(), local.status.code()), (Some(1), Some(1)), "{out:?}");
    let local = String::from_utf8_lossy(&local.stdout).replace(cut.to_str().unwrap(), &url);
    assert!(local.contains(&format!("{url}: INVALID: ")), "{local}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), local);
}

#[test]
fn a_server_without_ranges_fails_inspect_with_the_reason() {
    let (_, bytes) = small();
    for (behaviour, reason) in [
        (Behaviour::NoRanges, "does not serve byte ranges"),
        (Behaviour::NotFound, "HTTP status 404"),
        (Behaviour::RedirectLoop, "more than 10 redirects"),
    ] {
        let server = RangeServer::start(bytes.clone(), behaviour);
        // Upper case: URL schemes are case-insensitive.
        let out = gguf(&["inspect", &server.url("small.gguf").replacen("http", "HTTP", 1)]);
        assert!(!out.status.success(), "{behaviour:?}: {out:?}");
        assert!(out.stdout.is_empty(), "{behaviour:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(reason) && err.contains(&server.base[7..]), "{behaviour:?}: {err}");
    }
}

#[test]
fn the_timeout_comes_from_gguf_http_timeout() {
    let (_, bytes) = small();
    let server = RangeServer::start(bytes, Behaviour::Stall);
    let out = crate::gguf_env(&["inspect", &server.url("small.gguf")], &[("GGUF_HTTP_TIMEOUT", "0.5")]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no complete answer within 500ms"), "{out:?}");
    let bad = crate::gguf_env(&["inspect", &server.url("small.gguf")], &[("GGUF_HTTP_TIMEOUT", "1e20")]);
    assert_eq!(bad.status.code(), Some(1), "{bad:?}");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("GGUF_HTTP_TIMEOUT=\"1e20\""), "{bad:?}");
}

#[test]
fn a_format_error_of_a_remote_file_names_the_url() {
    let (_, mut bytes) = small();
    bytes.truncate(100);
    let server = RangeServer::start(bytes, Behaviour::Ranges);
    let url = server.url("cut.gguf");
    let out = gguf(&["inspect", &url]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{url}: ")), "{err}");
}
