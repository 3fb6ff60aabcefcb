//! How paths, option values and counts read in messages and listings (issue 28): a path or an
//! option's value in the one reversible form names are shown in (`\\` a backslash, `\xNN` a byte
//! that is not UTF-8, `\n`, `\u{1b}` a control character; printable UTF-8 as it is), shown
//! once, in text and JSON; and counts in the singular for 1.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use gguf_serde::GgufStr;
use gguf_tests::temp_dir;

use super::not_utf8::gguf_os;
use super::{gguf, s};

/// Standard output and error of a run, as text (the tool writes nothing that is not UTF-8).
fn texts(o: &std::process::Output) -> (String, String) {
    (String::from_utf8(o.stdout.clone()).unwrap(), String::from_utf8(o.stderr.clone()).unwrap())
}

/// `inspect` lists the shards of a split model by path, escaped once: the prefix with the byte FE
/// as `p\xfe`, the text prefix `n\q` as `n\\q` (its backslash escaped), in the text table and in
/// the JSON "path", and each reads back (unescaped) as the file's name.
#[test]
fn inspect_shows_shard_paths_escaped_once() {
    let dir = temp_dir("display-shards");
    let d = dir.as_os_str().as_bytes();
    let small = crate::small_path();
    let m = small.as_os_str().as_bytes();
    for (prefix, shown) in [(&b"p\xfe"[..], r"p\xfe"), (br"n\q", r"n\\q")] {
        let out = [d, b"/", prefix].concat();
        let o = gguf_os(&[b"split", b"--split-max-tensors", b"1", m, &out]);
        assert!(o.status.success(), "{o:?}");
        let first = [&out[..], b"-00001-of-00003.gguf"].concat();
        let (text, err) = texts(&gguf_os(&[b"inspect", &first]));
        assert!(err.is_empty(), "{err}");
        let rows: Vec<&str> = text.lines().filter(|l| l.contains("-of-00003.gguf")).collect();
        assert_eq!(rows.len(), 3, "{text}");
        for (i, row) in rows.iter().enumerate() {
            let want = format!("{}/{shown}-0000{}-of-00003.gguf", dir.display(), i + 1);
            let path = row.split_whitespace().nth(1).unwrap();
            assert_eq!(path, want, "{text}");
            let file = [&out[..], format!("-0000{}-of-00003.gguf", i + 1).as_bytes()].concat();
            assert_eq!(GgufStr::unescape(path).unwrap(), file);
        }
        let (json, _) = texts(&gguf_os(&[b"inspect", b"--json", &first]));
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let paths: Vec<&str> = v["shards"].as_array().unwrap().iter().map(|s| s["path"].as_str().unwrap()).collect();
        assert_eq!(paths, rows.iter().map(|r| r.split_whitespace().nth(1).unwrap()).collect::<Vec<_>>());
    }
}

/// A path or an option's value in a message is escaped whenever it must be, not only when it is
/// not UTF-8: the text path `p\xff.gguf` shows as `p\\xff.gguf`, the path with the byte FF as
/// `p\xff.gguf`; a newline or an escape character never reaches the terminal raw. In
/// `validate --json` the two paths differ too.
#[test]
fn paths_and_values_in_messages_are_escaped_reversibly() {
    let dir = temp_dir("display-paths");
    let d = dir.as_os_str().as_bytes();
    let file = |name: &[u8]| [d, b"/", name].concat();
    let (text_ff, byte_ff, newline) = (file(br"p\xff.gguf"), file(b"p\xff.gguf"), file(b"r\n\x1b[31m.gguf"));
    let mut shown = Vec::new();
    for (path, want) in [(&text_ff, r"p\\xff.gguf"), (&byte_ff, r"p\xff.gguf"), (&newline, r"r\n\u{1b}[31m.gguf")] {
        let (_, err) = texts(&gguf_os(&[b"inspect", path]));
        let want = format!("I/O error opening {}/{want}: ", dir.display());
        assert!(err.contains(&want), "want {want}, got {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!err.contains('\u{1b}'), "{err}");
        shown.push(want);
    }
    let o = gguf_os(&[b"validate", b"--json", &text_ff, &byte_ff, &newline]);
    let v: serde_json::Value = serde_json::from_str(&texts(&o).0).unwrap();
    let paths: Vec<Vec<u8>> =
        v.as_array().unwrap().iter().map(|r| GgufStr::unescape(r["path"].as_str().unwrap()).unwrap()).collect();
    assert_eq!(paths, [text_ff, byte_ff, newline]);

    // An option's value: clap's refusal shows it escaped.
    let small = crate::small_path();
    let o = gguf_os(&[b"show", small.as_os_str().as_bytes(), b"w_f32", b"--rows", b"x\n\x1b[31m"]);
    let err = texts(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(r"invalid value 'x\n\u{1b}[31m' for '--rows <R>'"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err}");
    // An unknown argument too.
    let o = gguf_os(&[b"inspect", small.as_os_str().as_bytes(), b"a\x1bb"]);
    let err = texts(&o).1;
    assert!(o.status.code() == Some(2) && err.contains(r"a\u{1b}b") && !err.contains('\u{1b}'), "{err}");
}

/// Counts read in the singular for 1: `inspect --memory` of a model of one layer and a context of
/// one token, `split --dry-run` and `show` of a tensor of 1 byte, the truncation errors with 1
/// byte left, and `validate`'s warnings about 1 string of an array.
#[test]
fn counts_of_one_are_singular() {
    let dir = temp_dir("display-counts");
    let model = dir.join("one-layer.gguf");
    super::not_utf8::tiny_llama(&model); // llama.block_count 1
    let (text, err) = texts(&gguf(&["inspect", "--memory", "--ctx", "256", s(&model)]));
    assert!(text.contains("(256 cells, 1 layer)"), "{text}{err}");
    let (text, err) = texts(&gguf(&["inspect", "--memory", "--ctx", "1", s(&model)]));
    assert!(text.contains("(llama.cpp on the CPU, context 1 token)"), "{text}{err}");

    // A tensor of 1 element of 1 byte (I8): its shard's bytes, its row's values.
    let one = dir.join("one.gguf");
    let mut w = gguf_serde::GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_tensor("t", gguf_serde::GgmlType::I8, &[1]).unwrap();
    w.write_tensor_data(&[5]).unwrap();
    std::fs::write(&one, w.finish().unwrap()).unwrap();
    let (text, err) = texts(&gguf(&["split", "--dry-run", "--split-max-tensors", "1", s(&one), s(&dir.join("oo"))]));
    assert!(text.starts_with("1 shard\n") && text.contains(": 1 tensor, 1 byte of tensor data"), "{text}{err}");
    let (text, err) = texts(&gguf(&["show", s(&one), "t"]));
    assert!(text.contains("rows (1 of 1, 1 value each):"), "{text}{err}");

    // tests/data/small.gguf cut 1 byte into a tensor name's bytes, and 1 byte into its tensor
    // count (the header's u64 at offset 16).
    let bytes = std::fs::read(crate::small_path()).unwrap();
    let (name, header) = (dir.join("name.gguf"), dir.join("header.gguf"));
    std::fs::write(&name, &bytes[..198]).unwrap();
    std::fs::write(&header, &bytes[..9]).unwrap();
    let (text, _) = texts(&gguf(&["validate", s(&name), s(&header)]));
    assert!(text.contains("tensor name at offset 189 claims 6 bytes, more than the 1 byte left can hold"), "{text}");
    assert!(text.contains("at offset 8 needs 8 bytes, only 1 remains"), "{text}");

    // String arrays with 1 and 3 strings that are not UTF-8, and 1 and 2 that hold a NUL byte;
    // arrays of arrays of strings with one of each; a key and a string with a NUL byte. Each
    // finding names the offset of the string's first byte (after its 8-byte length), found here
    // by searching the file's bytes.
    let mut b = gguf_tests::support::B::le();
    b.header(3, 0, 9).kv("general.architecture", 8).str("llama");
    b.kv("a.one", 9).arr(8, 2).str("ok").str(b"\xff");
    b.kv("a.three", 9).arr(8, 3).str(b"\xfe").str(b"\xfd").str(b"\xfc");
    b.kv("n.one", 9).arr(8, 1).str(b"a\0b");
    b.kv("n.two", 9).arr(8, 2).str(b"x\0").str(b"y\0");
    b.kv("a.nested", 9).arr(9, 2).arr(8, 1).str("ok").arr(8, 2).str("fine").str(b"q\xfb");
    b.kv("n.nested", 9).arr(9, 2).arr(8, 1).str("okay").arr(8, 1).str(b"z\0z");
    b.kv(b"n.k\0ey", 4).u32(1);
    b.kv("n.str", 8).str(b"s\0tr");
    let f = dir.join("strings.gguf");
    let bytes = b.bytes();
    std::fs::write(&f, &bytes).unwrap();
    let at = |needle: &[u8]| {
        let mut found = (0..bytes.len()).filter(|&i| bytes[i..].starts_with(needle));
        let i = found.next().unwrap_or_else(|| panic!("{needle:?} is not in the file"));
        assert_eq!(found.next(), None, "{needle:?} twice in the file");
        i
    };
    let (text, err) = texts(&gguf(&["validate", s(&f)]));
    for want in [
        format!(r#"1 string of key a.one is not valid UTF-8, at index 1 (offset {}): "\xff""#, at(b"\xff")),
        format!(
            r#"3 strings of key a.three are not valid UTF-8, the first at index 0 (offset {}): "\xfe""#,
            at(b"\xfe")
        ),
        format!(
            r#"1 string of key a.nested is not valid UTF-8, at offset {} (in an inner array): "q\xfb""#,
            at(b"q\xfb")
        ),
        format!(
            r#"1 string of key n.one holds a NUL byte, at index 0 (offset {}): llama.cpp reads "a\0b" as "a""#,
            at(b"a\0b")
        ),
        format!(
            r#"2 strings of key n.two hold a NUL byte, the first at index 0 (offset {}): llama.cpp reads "x\0" as "x""#,
            at(b"x\0")
        ),
        format!(
            r#"1 string of key n.nested holds a NUL byte, at offset {} (in an inner array): llama.cpp reads "z\0z" as "z""#,
            at(b"z\0z")
        ),
        format!(r#"key at offset {} holds a NUL byte (key "n.k\0ey"): llama.cpp reads it as "n.k""#, at(b"n.k\0ey")),
        format!(r#"string at offset {} holds a NUL byte (key n.str): llama.cpp reads it as "s""#, at(b"s\0tr")),
    ] {
        assert!(text.contains(&want), "want {want}, got {text}{err}");
    }
    // Every warning names an offset.
    let warnings: Vec<&str> = text.lines().filter(|l| l.contains(": warning: ")).collect();
    assert_eq!(warnings.len(), 8, "{text}");
    assert!(warnings.iter().all(|w| w.contains("offset ")), "{text}");
    assert!(!text.contains("(s)"), "{text}");
}

/// `gguf quantize` names what is wrong with its positional TYPE and NTHREADS and its option files:
/// IN and an argument that is not a file type (nor a `.gguf` OUT) is an unknown file type;
/// NTHREADS that is not UTF-8 is refused as `--threads` refuses it; a missing
/// `--tensor-type-file` or `--imatrix` names the option.
#[test]
fn quantize_names_the_bad_argument() {
    let dir = temp_dir("display-quantize");
    let model = dir.join("m.gguf");
    super::not_utf8::tiny_llama(&model);
    let m = model.as_os_str().as_bytes();
    let err = |args: &[&[u8]], code: i32| {
        let o = gguf_os(&[&[&b"quantize"[..], b"--dry-run"][..], args].concat());
        let (_, err) = texts(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        err
    };
    let e = err(&[m, b"Q8\xff"], 2);
    assert!(e.contains(r#"unknown file type "Q8\xff""#), "{e}");
    let e = err(&[m, b"out.gguf"], 2);
    assert!(e.contains("missing the file type after OUT out.gguf"), "{e}");
    let positional = err(&[m, b"o.gguf", b"Q8_0", b"2\xff"], 2);
    let option = err(&[b"--threads", b"2\xff", m, b"o.gguf", b"Q8_0"], 2);
    assert!(positional.contains(r#"invalid nthread "2\xff": not UTF-8 text"#), "{positional}");
    assert!(option.contains(r"invalid value '2\xff' for '--threads <N>': not UTF-8 text"), "{option}");
    let nope = dir.join(OsStr::from_bytes(b"nope\xff.txt"));
    let nope = nope.as_os_str().as_bytes();
    let shown = format!(r"{}/nope\xff.txt", dir.display());
    let e = err(&[b"--tensor-type-file", nope, m, b"o.gguf", b"Q8_0"], 1);
    assert!(e.contains(&format!("--tensor-type-file: reading {shown}: ")), "{e}");
    let e = err(&[b"--imatrix", nope, m, b"o.gguf", b"Q8_0"], 1);
    assert!(e.contains(&format!("--imatrix: I/O error reading {shown}: ")), "{e}");
}
