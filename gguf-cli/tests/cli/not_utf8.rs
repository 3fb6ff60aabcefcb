//! A file whose key, token string, string value and tensor name are not UTF-8
//! (`gguf_tests::support::not_utf8`): ggml's `gguf_init_from_file` reads it (the `ggml_read`
//! harness of the llama.cpp build, the oracle), and so does every command; `set`, `split` +
//! `merge` and `quantize` write those bytes back as they were, which ggml's reading of each output
//! shows line for line against its reading of the input.

use std::path::Path;

use gguf_tests::ggml_read::{assert_ggml_reads_as_we_do, ggml_read_dump};
use gguf_tests::support::not_utf8;
use gguf_tests::{llama_run_harness, temp_dir};

use super::{gguf, gguf_ok, rewrite_with_every_command, s};

/// ggml's lines for the keys and tensors that hold bytes that are not UTF-8 (the token array by its
/// hash), tensor lines without their offset (a quantized file orders its tensors by name).
fn odd_lines(harness: &Path, file: &Path) -> Vec<String> {
    ggml_read_dump(harness, file)
        .into_iter()
        .filter(|l| l.contains("\\x") || l.starts_with("kv tokenizer.ggml.tokens "))
        .map(|l| {
            let mut w: Vec<&str> = l.split(' ').collect();
            if w.first() == Some(&"tensor") && w.len() > 5 {
                w.remove(w.len() - 3);
            }
            w.join(" ")
        })
        .collect()
}

#[test]
fn inspect_shows_escapes_and_validate_warns() {
    let dir = temp_dir("not-utf8-inspect");
    let f = dir.join("odd.gguf");
    std::fs::write(&f, not_utf8()).unwrap();
    let text = gguf_ok(&["inspect", s(&f)]);
    // Rust's `escape_debug` of the valid part, `\xNN` for each byte that is not UTF-8; names
    // unquoted, string values quoted.
    for want in [r"  test.k\xffey ", r#"["a", "\xe2\x96", "▁b"]"#, r#""caf\xe9""#, r"  w.\xc3( "] {
        assert!(text.contains(want), "{want} not in:\n{text}");
    }
    let json: serde_json::Value = serde_json::from_str(&gguf_ok(&["inspect", "--json", s(&f)])).unwrap();
    assert_eq!(json["metadata"][1]["key"], r"test.k\xffey");
    assert_eq!(json["metadata"][3]["value"], serde_json::json!({"escaped": r"caf\xe9"}));
    assert_eq!(json["tensors"][0]["name"], r"w.\xc3(");
    for args in [vec!["validate"], vec!["validate", "--ggml"]] {
        let o = gguf(&[&args[..], &[s(&f)]].concat());
        let out = String::from_utf8(o.stdout).unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {out}");
        assert_eq!(out.lines().filter(|l| l.contains("not valid UTF-8")).count(), 4, "{args:?}: {out}");
    }
    // `show` finds the tensor by the name as inspect shows it.
    assert!(gguf_ok(&["show", s(&f), r"w.\xc3(", "--rows", "0"]).contains(r"tensor:    w.\xc3("));
    // `diff` names the key escaped.
    let g = dir.join("other.gguf");
    std::fs::write(&g, not_utf8().into_iter().map(|b| if b == 7 { 8 } else { b }).collect::<Vec<_>>()).unwrap();
    let o = gguf(&["diff", s(&f), s(&g)]);
    assert!(String::from_utf8_lossy(&o.stdout).contains(r"key test.k\xffey: u32 = 7 -> u32 = 8"), "{o:?}");
}

#[test]
fn ggml_reads_what_set_split_merge_and_quantize_write() {
    let Some(harness) = llama_run_harness() else { return };
    let dir = temp_dir("not-utf8-ops");
    let src = dir.join("odd.gguf");
    std::fs::write(&src, not_utf8()).unwrap();
    // ggml accepts the file and reads it as we do.
    assert_ggml_reads_as_we_do(&harness, &src);
    let want = odd_lines(&harness, &src);
    assert_eq!(want.len(), 4, "{want:?}");

    let out = rewrite_with_every_command(&src, &dir);
    assert_eq!(std::fs::read(&out.merged).unwrap(), not_utf8(), "merge gives back the file split");
    for out in [&out.edited, &out.merged, &out.quantized] {
        assert_ggml_reads_as_we_do(&harness, out);
        assert_eq!(odd_lines(&harness, out), want, "{}", out.display());
    }
    // The shards: the key and the token in the first, each tensor name in its shard.
    let shards: Vec<String> = out.shards.iter().flat_map(|p| odd_lines(&harness, p)).collect();
    assert_eq!(shards, want);
}

/// The tensors of [`tiny_llama`] that are not ASCII: not UTF-8 (a lone `FF`, a cut 3-byte
/// sequence) and UTF-8 (`é`, two bytes).
const ODD_NAMES: [&[u8]; 3] = [b"x\xff.weight", b"x\xe2\x82.weight", "x\u{e9}.weight".as_bytes()];

/// A one-layer llama model that llama-quantize takes (F32, 256 wide): `token_embd.weight`,
/// `blk.0.attn_q.weight`, `blk.0.ffn_down.weight` and the [`ODD_NAMES`], written to `path`.
pub(crate) fn tiny_llama(path: &Path) -> Vec<Vec<u8>> {
    llama_with(path, &ODD_NAMES, |_| {})
}

/// [`tiny_llama`] with the tensors `odd` in place of the [`ODD_NAMES`], and the pairs `kvs` adds
/// after the llama keys.
pub(crate) fn llama_with(
    path: &Path,
    odd: &[&[u8]],
    kvs: impl FnOnce(&mut gguf_serde::GgufWriter<gguf_serde::AtomicFile>),
) -> Vec<Vec<u8>> {
    use gguf_serde::{GgmlType, GgufStr, GgufWriter};
    let mut w = GgufWriter::create(path).unwrap();
    w.add_kv("general.architecture", "llama").unwrap();
    for (k, v) in [("context_length", 128u32), ("embedding_length", 256), ("block_count", 1)] {
        w.add_kv(&format!("llama.{k}"), v).unwrap();
    }
    for (k, v) in [("feed_forward_length", 256u32), ("attention.head_count", 4), ("attention.head_count_kv", 4)] {
        w.add_kv(&format!("llama.{k}"), v).unwrap();
    }
    w.add_kv("llama.attention.layer_norm_rms_epsilon", 1e-5f32).unwrap();
    kvs(&mut w);
    let mut names: Vec<Vec<u8>> =
        ["token_embd.weight", "blk.0.attn_q.weight", "blk.0.ffn_down.weight"].map(|n| n.as_bytes().to_vec()).into();
    names.extend(odd.iter().map(|n| n.to_vec()));
    for n in &names {
        let rows = if n.as_slice() == b"token_embd.weight" { 16 } else { 256 };
        w.add_tensor_ne(GgufStr::from_bytes(n), GgmlType::F32, &[256, rows]).unwrap();
    }
    for (i, n) in names.iter().enumerate() {
        let rows = if n.as_slice() == b"token_embd.weight" { 16 } else { 256 };
        let data: Vec<u8> = (0..256 * rows)
            .flat_map(|j| (((j * 7919 + i * 104729) % 2003) as f32 / 1000.0 - 1.0).to_le_bytes())
            .collect();
        w.write_tensor_data(&data).unwrap();
    }
    w.commit().unwrap();
    names
}

/// An importance matrix of `names` (256 weights each, one expert) in llama-imatrix's GGUF
/// format and in its legacy `.dat` format.
fn imatrices(dir: &Path, names: &[Vec<u8>]) {
    use gguf_serde::{GgmlType, GgufStr, GgufWriter};
    let sums = |i: usize| -> Vec<f32> { (0..256).map(|j| 0.01 + ((j * 31 + i * 17) % 97) as f32).collect() };
    let mut w = GgufWriter::create(dir.join("im.gguf")).unwrap();
    w.add_kv("general.type", "imatrix").unwrap();
    w.add_kv("imatrix.datasets", vec!["text.txt".to_owned()]).unwrap();
    w.add_kv("imatrix.chunk_count", 1u32).unwrap();
    w.add_kv("imatrix.chunk_size", 64u32).unwrap();
    for n in names {
        for (suffix, ne) in [(&b".in_sum2"[..], [256u64, 1]), (b".counts", [1, 1])] {
            let name = [n.as_slice(), suffix].concat();
            w.add_tensor_ne(GgufStr::from_bytes(&name), GgmlType::F32, &ne).unwrap();
        }
    }
    for i in 0..names.len() {
        w.write_tensor_data(&sums(i).iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
        w.write_tensor_data(&2f32.to_le_bytes()).unwrap();
    }
    w.commit().unwrap();
    // .dat: entry count, then per entry the name, ncall and the values (already times ncall).
    let mut dat = (names.len() as i32).to_le_bytes().to_vec();
    for (i, n) in names.iter().enumerate() {
        dat.extend((n.len() as i32).to_le_bytes());
        dat.extend(n);
        dat.extend(2i32.to_le_bytes());
        dat.extend(256i32.to_le_bytes());
        dat.extend(sums(i).iter().flat_map(|x| x.to_le_bytes()));
    }
    dat.extend(1i32.to_le_bytes());
    dat.extend(8i32.to_le_bytes());
    dat.extend(b"text.txt");
    std::fs::write(dir.join("im.dat"), dat).unwrap();
}

/// Runs `program ARGS` in `dir`, asserting success.
pub(crate) fn run_in(dir: &Path, program: &Path, args: &[&std::ffi::OsStr]) -> std::process::Output {
    let o =
        gguf_tests::output_with_deadline(std::process::Command::new(program).current_dir(dir).args(args), crate::HANG);
    assert!(o.status.success(), "{} {args:?}: {}", program.display(), String::from_utf8_lossy(&o.stderr));
    o
}

/// An importance matrix whose entry names are not UTF-8 (GGUF and `.dat`) is used as
/// llama-quantize uses it, matching entries to tensors by bytes: the files are byte-identical
/// (both run in the same folder with the same relative names, which go into
/// `quantize.imatrix.file`), and the weights did change the odd tensors' data.
#[test]
fn importance_matrix_entries_that_are_not_utf8_are_used_as_llama_quantize_uses_them() {
    let Some(lq) = gguf_tests::llama_quantize() else { return };
    let dir = temp_dir("not-utf8-imatrix");
    let names = tiny_llama(&dir.join("m.gguf"));
    imatrices(&dir, &names);
    // The dataset name `tex\xfe.txt` and file names with the byte FF: llama-quantize writes
    // their bytes to `quantize.imatrix.dataset` and `quantize.imatrix.file`.
    use std::os::unix::ffi::OsStrExt;
    for (from, to) in [("im.gguf", &b"im\xff.gguf"[..]), ("im.dat", b"im\xff.dat")] {
        let mut bytes = std::fs::read(dir.join(from)).unwrap();
        let at = bytes.windows(8).position(|w| w == b"text.txt").unwrap();
        bytes[at + 3] = 0xfe;
        std::fs::write(dir.join(std::ffi::OsStr::from_bytes(to)), bytes).unwrap();
    }
    let ours = std::path::PathBuf::from(env!("CARGO_BIN_EXE_gguf"));
    let os = |s: &str| std::ffi::OsString::from(s);
    run_in(&dir, &ours, &[&os("quantize"), &os("-q"), &os("m.gguf"), &os("plain.gguf"), &os("Q4_K_M")]);
    let plain = gguf_serde::Gguf::open(dir.join("plain.gguf")).unwrap();
    for im in [&b"im.gguf"[..], b"im.dat", b"im\xff.gguf", b"im\xff.dat"] {
        let im_os = std::ffi::OsStr::from_bytes(im).to_owned();
        let im = String::from_utf8_lossy(im);
        let args = |out: &str| [os("--imatrix"), im_os.clone(), os("m.gguf"), os(out), os("Q4_K_M"), os("2")];
        let theirs = run_in(&dir, &lq, &args("theirs.gguf").iter().map(|a| a.as_os_str()).collect::<Vec<_>>());
        let log = String::from_utf8_lossy(&theirs.stdout);
        assert!(log.contains(&format!("loaded {} importance matrix entries", names.len())), "{im}: {log}");
        let mut ours_args = vec![os("quantize"), os("-q")];
        ours_args.extend(args("ours.gguf"));
        run_in(&dir, &ours, &ours_args.iter().map(|a| a.as_os_str()).collect::<Vec<_>>());
        let (a, b) = (std::fs::read(dir.join("theirs.gguf")).unwrap(), std::fs::read(dir.join("ours.gguf")).unwrap());
        assert!(a == b, "{im}: files differ (sizes {} and {})", a.len(), b.len());
        let with = gguf_serde::Gguf::open(dir.join("ours.gguf")).unwrap();
        for n in ODD_NAMES {
            let (x, y) = (with.tensor(n).unwrap(), plain.tensor(n).unwrap());
            assert_eq!(x.dtype, gguf_serde::GgmlType::Q4_K);
            assert_ne!(with.tensor_data(&x).unwrap(), plain.tensor_data(&y).unwrap(), "{im}: {n:?} used no weights");
        }
        drop(with);
        std::fs::remove_file(dir.join("ours.gguf")).unwrap();
    }
}

/// `(name as inspect shows it, target type upper-cased)` of each tensor in llama-quantize's
/// `--dry-run` log (`[   4/  14] NAME   - [...], type = f32, size = ... (q4_K)`; a kept tensor
/// has no `(TYPE)`), its names read as bytes.
pub(crate) fn llama_dry_run(log: &[u8]) -> Vec<(String, String)> {
    let mut v = Vec::new();
    for line in log.split(|&b| b == b'\n').filter(|l| l.starts_with(b"[")) {
        let Some(at) = line.windows(2).position(|w| w == b"] ") else { continue };
        let rest = &line[at + 2..];
        let name = rest.split(|&b| b == b' ').next().unwrap();
        let text = String::from_utf8_lossy(rest);
        let src = text.split_once("type = ").map(|(_, t)| t.split(',').next().unwrap().trim().to_owned()).unwrap();
        let target = match text.trim_end().rsplit_once('(') {
            Some((_, t)) if text.trim_end().ends_with(')') => t.trim_end_matches(')').to_owned(),
            _ => src,
        };
        v.push((gguf_serde::GgufStr::from_bytes(name).to_string(), target.to_ascii_uppercase()));
    }
    v.sort();
    v
}

/// `(name, target)` of each tensor in `gguf quantize --dry-run`'s table.
pub(crate) fn our_dry_run(out: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8(out.to_vec()).unwrap();
    let mut v: Vec<(String, String)> = text
        .lines()
        .skip(1)
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() >= 5 && !l.contains(" converted, ") && !l.starts_with("left out: "))
                .then(|| (w[0].to_owned(), w[3].to_owned()))
        })
        .collect();
    v.sort();
    v
}

/// `--tensor-type` patterns match bytes as llama-quantize's std::regex does: the type each
/// tensor gets is llama-quantize's `--dry-run` choice, for patterns where matching characters
/// would differ (`.` over a two-byte character or a bad byte, classes, counted lengths, a
/// pattern whose own bytes are not UTF-8 or not ASCII).
#[test]
fn tensor_type_patterns_match_bytes_as_llama_quantize() {
    use std::os::unix::ffi::OsStrExt;
    let Some(lq) = gguf_tests::llama_quantize() else { return };
    let dir = temp_dir("not-utf8-tensor-type");
    tiny_llama(&dir.join("m.gguf"));
    let ours = std::path::PathBuf::from(env!("CARGO_BIN_EXE_gguf"));
    let patterns: [&[u8]; 9] = [
        br"x.\.weight=q8_0",
        br"x..\.weight=q8_0",
        br"x[^a]\.weight=q8_0",
        b"^.{9}$=q8_0",
        b"^.{10}$=q8_0",
        b"x\xff=q5_0",
        b"X\xe2\x82=q5_0",
        "X\u{c9}=q5_0".as_bytes(),
        "x\u{e9}=q5_0".as_bytes(),
    ];
    for p in patterns {
        let os = std::ffi::OsStr::from_bytes;
        let args = [os(b"--tensor-type"), os(p), os(b"m.gguf"), os(b"Q4_K_M")];
        let theirs = run_in(&dir, &lq, &[&[os(b"--dry-run")][..], &args].concat());
        let mine = run_in(&dir, &ours, &[&[os(b"quantize"), os(b"--dry-run")][..], &args].concat());
        let want = llama_dry_run(&[theirs.stdout, theirs.stderr].concat());
        assert_eq!(want.len(), 6, "{}: {want:?}", String::from_utf8_lossy(p));
        assert_eq!(our_dry_run(&mine.stdout), want, "{}", String::from_utf8_lossy(p));
    }
}

/// `--tensor-type` patterns are ECMAScript as llama-quantize's `std::regex` (libstdc++) reads
/// them, not `regex` crate syntax: `\u00ff` is the byte FF, `\0` NUL, `\cx` the letter x,
/// negated classes take bytes above 127 (`\W` would be lower-cased to `\w`, as llama-quantize
/// lower-cases the whole pattern), a class takes a pattern's own bytes, ranges compare
/// signed bytes (`[\x80-\xff]`). Each tensor's type is llama-quantize's `--dry-run` choice; a
/// pattern std::regex refuses (`\x{ff}`, `[a-\xff]`, `(?<n>`) makes llama-quantize fail and ours
/// a usage error naming std::regex's error; a look-ahead, which std::regex takes, ours refuses
/// (a documented difference).
#[test]
fn tensor_type_patterns_are_ecmascript_as_llama_quantize_reads_them() {
    use std::os::unix::ffi::OsStrExt;
    let Some(lq) = gguf_tests::llama_quantize() else { return };
    let dir = temp_dir("not-utf8-tensor-type-ecma");
    tiny_llama(&dir.join("m.gguf"));
    let ours = std::path::PathBuf::from(env!("CARGO_BIN_EXE_gguf"));
    let os = std::ffi::OsStr::from_bytes;
    let args = |p: &[u8]| [os(b"--tensor-type").to_owned(), os(p).to_owned(), "m.gguf".into(), "Q4_K_M".into()];
    let run = |program: &Path, pre: &[&str], p: &[u8]| {
        let mut c = std::process::Command::new(program);
        c.current_dir(&dir).args(pre).args(args(p));
        gguf_tests::output_with_deadline(&mut c, crate::HANG)
    };
    let accepted: [&[u8]; 14] = [
        br"x\u00ff=q5_0",
        br"x\u01ff\.=q5_0",
        br"\cx\xff=q5_0",
        br"^\cx[^\w]\.=q5_0",
        br"[^\w][^_\w]\.weight$=q5_0",
        br"x[\x80-\xff]\.=q5_0",
        br"x[^\0-\x7f]{2}\.=q5_0",
        br"x\0?\xff=q5_0",
        b"x[\xe9\xff]=q5_0",
        br"[[:alpha:]][^[:alnum:]]\.=q5_0",
        br"x[^\d]\d*\.=q5_0",
        br"x\q*[\u00e2]\x82=q5_0",
        br"(x|y)\xc3{1,}\xa9=q5_0",
        br"x\b.\.w**=q5_0",
    ];
    for p in accepted {
        let theirs = run(&lq, &["--dry-run"], p);
        assert!(theirs.status.success(), "{}: {theirs:?}", String::from_utf8_lossy(p));
        let mine = run(&ours, &["quantize", "--dry-run"], p);
        assert!(mine.status.success(), "{}: {mine:?}", String::from_utf8_lossy(p));
        let want = llama_dry_run(&[theirs.stdout, theirs.stderr].concat());
        assert_eq!(want.len(), 6, "{}: {want:?}", String::from_utf8_lossy(p));
        assert!(want.iter().any(|(_, t)| t == "Q5_0"), "{}: no tensor matched: {want:?}", String::from_utf8_lossy(p));
        assert_eq!(our_dry_run(&mine.stdout), want, "{}", String::from_utf8_lossy(p));
    }
    let refused: [(&[u8], &str); 6] = [
        (br"x\x{ff}=q5_0", "error_escape"),
        (br"x\u00f=q5_0", "error_escape"),
        (br"x[a-\xff]=q5_0", "error_range"),
        (br"x[\x00-\xff]=q5_0", "error_range"),
        (br"x(?<n>a)=q5_0", "error_paren"),
        (br"x[[:word:]]=q5_0", "error_collate"),
    ];
    for (p, code) in refused {
        let theirs = run(&lq, &["--dry-run"], p);
        assert!(!theirs.status.success(), "llama-quantize took {}", String::from_utf8_lossy(p));
        let mine = run(&ours, &["quantize", "--dry-run"], p);
        let err = String::from_utf8_lossy(&mine.stderr);
        assert_eq!(mine.status.code(), Some(2), "{}: {err}", String::from_utf8_lossy(p));
        assert!(err.contains("--tensor-type") && err.contains(&format!("std::regex refuses it ({code})")), "{err}");
    }
    // --tensor-type-file: each word is cut at a NUL byte, as llama-quantize passes it on as a C
    // string.
    std::fs::write(dir.join("tt.txt"), b"\tx\\u00ff=q5_0\0ignored\n^\\cx[^\\w]=q8_0").unwrap();
    let file = |program: &Path, pre: &[&str]| {
        let mut c = std::process::Command::new(program);
        c.current_dir(&dir).args(pre).args(["--tensor-type-file", "tt.txt", "m.gguf", "Q4_K_M"]);
        gguf_tests::output_with_deadline(&mut c, crate::HANG)
    };
    let (theirs, mine) = (file(&lq, &["--dry-run"]), file(&ours, &["quantize", "--dry-run"]));
    assert!(theirs.status.success() && mine.status.success(), "{theirs:?}\n{mine:?}");
    let want = llama_dry_run(&[theirs.stdout, theirs.stderr].concat());
    assert!(want.iter().any(|(n, t)| n == r"x\xff.weight" && t == "Q5_0"), "{want:?}");
    assert_eq!(our_dry_run(&mine.stdout), want);
    let theirs = run(&lq, &["--dry-run"], br"x(?!a)=q5_0");
    assert!(theirs.status.success(), "{theirs:?}");
    let mine = run(&ours, &["quantize", "--dry-run"], br"x(?!a)=q5_0");
    assert_eq!(mine.status.code(), Some(2), "{mine:?}");
    assert!(String::from_utf8_lossy(&mine.stderr).contains("look-ahead"), "{mine:?}");
}

/// `--exclude` takes a glob given as bytes that are not UTF-8 (each byte matching itself, as a
/// literal or in a class) in `quantize`, `dequantize` and `export`: the tensor it names is kept
/// (quantize's plan says by which pattern, shown escaped), left as it is, or left out.
#[test]
fn exclude_takes_globs_that_are_not_utf8() {
    use gguf_serde::{GgmlType, Gguf};
    let dir = temp_dir("not-utf8-exclude");
    let m = dir.join("m.gguf");
    tiny_llama(&m);
    let path = m.as_os_str().as_encoded_bytes();
    let plan = gguf_os(&[b"quantize", b"--dry-run", b"--exclude", b"x\xff.weight", path, b"Q8_0"]);
    assert!(plan.status.success(), "{plan:?}");
    let text = String::from_utf8(plan.stdout).unwrap();
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("kept (--exclude")).collect();
    assert_eq!(rows.len(), 1, "{text}");
    assert!(rows[0].starts_with(r"x\xff.weight ") && rows[0].ends_with(r"kept (--exclude x\xff.weight)"), "{text}");
    let q8 = dir.join("q8.gguf");
    let q8_path = q8.as_os_str().as_encoded_bytes();
    let o = gguf_os(&[b"quantize", b"-q", b"--exclude", b"x[\xfe\xff]*", path, q8_path, b"Q8_0"]);
    assert!(o.status.success(), "{o:?}");
    let f = Gguf::open(&q8).unwrap();
    let kept: Vec<_> = f
        .tensors()
        .filter(|t| t.dtype == GgmlType::F32 && t.shape.len() == 2)
        .map(|t| t.name.as_bytes().to_vec())
        .collect();
    assert_eq!(kept, [b"x\xff.weight".to_vec()]);
    let back = dir.join("back.gguf");
    let o = gguf_os(&[b"dequantize", b"-q", b"--exclude", b"x\xff*", q8_path, back.as_os_str().as_encoded_bytes()]);
    assert!(o.status.success(), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("converted to F32, 1 kept"), "{o:?}");
    let st = dir.join("m.safetensors");
    let o = gguf_os(&[
        b"export",
        b"--exclude",
        b"?\xff*",
        b"--exclude",
        b"*\x82.weight",
        path,
        st.as_os_str().as_encoded_bytes(),
    ]);
    assert!(o.status.success(), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("2 excluded"), "{o:?}");
}

/// `gguf set FILE KEY VALUE` writes a string value that is not UTF-8, given as raw bytes or, with
/// `--escaped`, in the escaped form inspect shows: both give the same file, gguf-py reads the
/// value's bytes, and setting the old value back gives the original file byte for byte. A
/// number type is refused for such bytes.
#[test]
fn set_writes_string_values_that_are_not_utf8() {
    use gguf_serde::Gguf;
    let dir = temp_dir("not-utf8-set-value");
    let (f, g) = (dir.join("f.gguf"), dir.join("g.gguf"));
    odd_file(&f, &[b"general.name", b"x.value"], &[b"w"]);
    let original = std::fs::read(&f).unwrap();
    std::fs::copy(&f, &g).unwrap();
    let (fp, gp) = (f.as_os_str().as_encoded_bytes(), g.as_os_str().as_encoded_bytes());
    let value: &[u8] = b"caf\xe9 \\ \"\xff\x01";
    let ok = |args: &[&[u8]]| {
        let o = gguf_os(args);
        assert!(o.status.success(), "{o:?}");
    };
    ok(&[b"set", fp, b"general.name", value]);
    ok(&[b"set", gp, b"general.name", br#"caf\xe9 \\ \"\xff\u{1}"#, b"--escaped"]);
    ok(&[b"set", fp, b"x.value", b"\xfe"]);
    ok(&[b"set", gp, b"x.value", br"\xfe", b"--escaped"]);
    assert!(std::fs::read(&f).unwrap() == std::fs::read(&g).unwrap(), "raw and escaped values differ");
    let file = Gguf::open(&f).unwrap();
    let bytes = |k: &[u8]| file.get(k).and_then(|v| v.as_gguf_str().map(|s| s.as_bytes().to_vec()));
    assert_eq!(bytes(b"general.name").as_deref(), Some(value));
    if let Some(py) = gguf_tests::python() {
        let script = "import sys, gguf\nr = gguf.GGUFReader(sys.argv[1])\nfor k in ('general.name', 'x.value'):\n    f = r.fields[k]\n    print(bytes(f.parts[f.data[0]]).hex())";
        let o = std::process::Command::new(py).args(["-c", script]).arg(&f).output().unwrap();
        assert!(o.status.success(), "{o:?}");
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        assert_eq!(String::from_utf8(o.stdout).unwrap(), format!("{}\n{}\n", hex(value), hex(b"\xfe")));
    }
    let dry = gguf_os(&[b"set", b"--dry-run", fp, b"general.name", b"z\xfe"]);
    assert!(
        String::from_utf8_lossy(&dry.stdout)
            .starts_with(r#"~ key general.name: string = "caf\xe9 \\ \"\xff\u{1}" -> string = "z\xfe""#),
        "{dry:?}"
    );
    let bad = gguf_os(&[b"set", fp, b"general.name", b"1\xff", b"--type", b"u32"]);
    assert_eq!(bad.status.code(), Some(1), "{bad:?}");
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains(r#""1\xff" is not UTF-8 text, so not a valid u32"#),
        "{bad:?}"
    );
    ok(&[b"set", fp, b"general.name", b"0"]);
    ok(&[b"set", fp, b"x.value", b"1"]);
    assert!(std::fs::read(&f).unwrap() == original, "setting the old values back changed the file");
}

/// A file of `keys` (each a STRING of its index) and F32 `[2]` tensors `names` (tensor `i`
/// holds `[2i, 2i + 1]`), written to `path`.
fn odd_file(path: &Path, keys: &[&[u8]], names: &[&[u8]]) {
    use gguf_serde::{GgmlType, GgufStr, GgufWriter, ValueRef};
    let mut w = GgufWriter::create(path).unwrap();
    w.add_kv("general.architecture", "llama").unwrap();
    for (i, k) in keys.iter().enumerate() {
        let v = i.to_string();
        w.add_kv_ref(GgufStr::from_bytes(k), ValueRef::String(GgufStr::from(v.as_str()))).unwrap();
    }
    for n in names {
        w.add_tensor_ne(GgufStr::from_bytes(n), GgmlType::F32, &[2]).unwrap();
    }
    for i in 0..names.len() {
        let data: Vec<u8> = [2 * i, 2 * i + 1].iter().flat_map(|&x| (x as f32).to_le_bytes()).collect();
        w.write_tensor_data(&data).unwrap();
    }
    w.commit().unwrap();
}

/// Runs `gguf ARGS` (any bytes), with its output (standard output and error captured).
pub(crate) fn gguf_os(args: &[&[u8]]) -> std::process::Output {
    use std::os::unix::ffi::OsStrExt;
    gguf_tests::output_with_deadline(
        crate::gguf_command().args(args.iter().map(|a| std::ffi::OsStr::from_bytes(a))),
        crate::HANG,
    )
}

/// The text `\xff` (four characters) and the byte FF never print alike: every command shows keys
/// and tensor names in one escaped form (a backslash as `\\`, a bad byte as `\xNN`, control
/// characters as `\n`, `\u{1b}`, `\0`), unquoted, in text and JSON; no raw control byte reaches
/// the output. The expected texts are the escaping's own definition (Rust's `escape_debug` plus
/// `\xNN`), written out by hand.
#[test]
fn names_print_in_one_reversible_form_everywhere() {
    let dir = temp_dir("not-utf8-escaped");
    let (lit, inv, ctl) = (dir.join("lit.gguf"), dir.join("inv.gguf"), dir.join("ctl.gguf"));
    odd_file(&lit, &[br"zz.a\xffbc", br#""q.a\xffbc""#], &[br"w\xff"]);
    odd_file(&inv, &[b"zz.a\xffbc", b"q.a\xffbc"], &[b"w\xff"]);
    odd_file(&ctl, &[b"evil\n\x1b[31mRED", b"n\x00ul"], &[b"t\n\x1b[2J\x00.weight"]);
    let text = |f: &Path| gguf_ok(&["inspect", s(f)]);
    let (tl, ti, tc) = (text(&lit), text(&inv), text(&ctl));
    assert!(tl.contains(r"  zz.a\\xffbc ") && tl.contains(r#"  "q.a\\xffbc" "#) && tl.contains(r"  w\\xff "), "{tl}");
    assert!(ti.contains(r"  zz.a\xffbc ") && ti.contains(r"  q.a\xffbc ") && ti.contains(r"  w\xff "), "{ti}");
    assert!(tc.contains(r"  evil\n\u{1b}[31mRED ") && tc.contains(r"  n\0ul "), "{tc}");
    assert!(tc.contains(r"  t\n\u{1b}[2J\0.weight "), "{tc}");
    let json =
        |f: &Path| -> serde_json::Value { serde_json::from_str(&gguf_ok(&["inspect", "--json", s(f)])).unwrap() };
    let (jl, ji) = (json(&lit), json(&inv));
    assert_eq!(jl["metadata"][1]["key"], r"zz.a\\xffbc");
    assert_eq!(ji["metadata"][1]["key"], r"zz.a\xffbc");
    assert_eq!(jl["tensors"][0]["name"], r"w\\xff");
    assert_eq!(ji["tensors"][0]["name"], r"w\xff");
    let o = gguf(&["diff", s(&lit), s(&inv)]);
    let d = String::from_utf8(o.stdout).unwrap();
    for line in [r"- key zz.a\\xffbc: ", r"+ key zz.a\xffbc: ", r"- tensor w\\xff: ", r"+ tensor w\xff: "] {
        assert!(d.lines().any(|l| l.starts_with(line)), "{line} not in:\n{d}");
    }
    let dj: serde_json::Value = serde_json::from_slice(&gguf(&["diff", "--json", s(&lit), s(&inv)]).stdout).unwrap();
    let names: Vec<&str> = dj["changes"].as_array().unwrap().iter().filter_map(|c| c["name"].as_str()).collect();
    assert!(names.contains(&r"zz.a\\xffbc") && names.contains(&r"zz.a\xffbc"), "{names:?}");
    // Control characters never reach the output raw: one line per change.
    for args in [
        vec!["diff", s(&ctl), s(&lit)],
        vec!["show", s(&ctl), r"t\n\u{1b}[2J\0.weight"],
        vec!["quantize", "--dry-run", s(&ctl), "Q8_0"],
        vec!["validate", s(&ctl)],
        vec!["inspect", s(&ctl)],
    ] {
        let o = gguf(&args);
        assert!(o.status.code() != Some(2), "{args:?}: {o:?}");
        assert!(!o.stdout.iter().any(|&b| b == 0x1b || b == 0), "{args:?}: {}", String::from_utf8_lossy(&o.stdout));
        if args[0] == "diff" {
            // 2 keys and 1 tensor only in ctl, 2 keys and 1 tensor only in lit, the count.
            assert_eq!(o.stdout.iter().filter(|&&b| b == b'\n').count(), 7, "{}", String::from_utf8_lossy(&o.stdout));
        }
    }
}

/// Every command that takes a key or tensor name takes the escaped form inspect shows (and raw
/// bytes on Unix): the key whose bytes are not UTF-8 is set in place (no second key), renamed
/// and removed; `show` reaches the tensor named with the text `w\xff` and the one named with
/// the byte FF, each its own (their values tell them apart); a bad escape is a usage error.
#[test]
fn names_are_taken_back_in_the_form_inspect_shows() {
    use gguf_serde::{Gguf, GgufStr, ValueRef};
    let dir = temp_dir("not-utf8-names-in");
    let f = dir.join("f.gguf");
    odd_file(&f, &[b"zz.a\xffbc", br"zz.a\xffbc"], &[br"w\xff", b"w\xff", b"n\x00x"]);
    let keys = || Gguf::open(&f).unwrap().metadata().map(|kv| kv.key.as_bytes().to_vec()).collect::<Vec<_>>();
    let value = |k: &[u8]| Gguf::open(&f).unwrap().get(k).map(|v| format!("{v:?}"));
    gguf_ok(&["set", s(&f), r"zz.a\xffbc", "x"]);
    assert_eq!(keys().len(), 3);
    assert_eq!(value(b"zz.a\xffbc"), Some(format!("{:?}", ValueRef::String(GgufStr::from("x")))));
    assert_eq!(value(br"zz.a\xffbc"), Some(format!("{:?}", ValueRef::String(GgufStr::from("1")))));
    let dry = gguf_ok(&["set", "--dry-run", s(&f), r"zz.a\\xffbc", "y"]);
    assert!(dry.starts_with(r#"~ key zz.a\\xffbc: string = "1" -> string = "y""#), "{dry}");
    gguf_ok(&["rename", s(&f), r"zz.a\xffbc", r"zz.b\xfe"]);
    assert_eq!(keys()[1], b"zz.b\xfe");
    // Raw bytes on the command line.
    let o = gguf_os(&[b"rm", f.as_os_str().as_encoded_bytes(), b"zz.b\xfe"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(keys(), [&b"general.architecture"[..], br"zz.a\xffbc"]);
    gguf_ok(&["rm", s(&f), r"zz.a\\xffbc"]);
    assert_eq!(keys(), [b"general.architecture"]);
    let shown = |name: &str| -> (String, String) {
        let j: serde_json::Value = serde_json::from_str(&gguf_ok(&["show", "--json", s(&f), name])).expect("JSON");
        (j["name"].as_str().unwrap().to_owned(), j["min"].to_string())
    };
    assert_eq!(shown(r"w\\xff"), (r"w\\xff".to_owned(), "0".to_owned()));
    assert_eq!(shown(r"w\xff"), (r"w\xff".to_owned(), "2".to_owned()));
    assert_eq!(shown(r"n\0x"), (r"n\0x".to_owned(), "4".to_owned()));
    assert_eq!(shown(r"n\x00x"), (r"n\0x".to_owned(), "4".to_owned()));
    for bad in [r"w\q", r"w\x4"] {
        let o = gguf(&["show", s(&f), bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {o:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("TENSOR"), "{o:?}");
    }
}

/// In JSON a string value that is UTF-8 is the string itself (backslashes and newlines as JSON
/// writes them); one that is not is `{"escaped": TEXT}`.
#[test]
fn json_string_values_are_unambiguous() {
    use gguf_serde::{GgufStr, GgufWriter, ValueRef};
    let dir = temp_dir("not-utf8-json-values");
    let f = dir.join("v.gguf");
    let mut w = GgufWriter::create(&f).unwrap();
    w.add_kv("lit", r"caf\xe9").unwrap();
    w.add_kv_ref("inv", ValueRef::String(GgufStr::from_bytes(b"caf\xe9"))).unwrap();
    w.add_kv("tmpl", "{% a %}\n\\").unwrap();
    w.commit().unwrap();
    let j: serde_json::Value = serde_json::from_str(&gguf_ok(&["inspect", "--json", s(&f)])).unwrap();
    assert_eq!(j["metadata"][0]["value"], r"caf\xe9");
    assert_eq!(j["metadata"][1]["value"], serde_json::json!({"escaped": r"caf\xe9"}));
    assert_eq!(j["metadata"][2]["value"], "{% a %}\n\\");
    let text = gguf_ok(&["inspect", s(&f)]);
    assert!(text.contains(r#""caf\\xe9""#) && text.contains(r#""caf\xe9""#), "{text}");
}

/// `export` writes keys and tensor names escaped and `import` reads them back: a file with a key
/// and tensor names that are not UTF-8 (and the text `\xff` beside the byte FF) comes back byte
/// for byte. A tensor that would take the name `__metadata__` is refused, naming it.
#[test]
fn export_and_import_keep_names_that_are_not_utf8() {
    let dir = temp_dir("not-utf8-export");
    let (f, st, back) = (dir.join("f.gguf"), dir.join("f.safetensors"), dir.join("back.gguf"));
    odd_file(&f, &[b"k\xff", br"k\xff", b"tab\there"], &[br"xtra_w.a\xffbc", b"xtra_w.a\xffbc", b"\x01"]);
    gguf_ok(&["export", s(&f), s(&st)]);
    gguf_ok(&["import", s(&st), s(&back)]);
    assert!(std::fs::read(&f).unwrap() == std::fs::read(&back).unwrap(), "import gives other bytes");
    let m = dir.join("m.gguf");
    odd_file(&m, &[], &[b"__metadata__"]);
    let o = gguf(&["export", s(&m), s(&dir.join("m.safetensors"))]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("tensor __metadata__") && err.contains("metadata entry"), "{err}");
    assert!(!dir.join("m.safetensors").exists());
}

/// `inspect --memory` of a file whose `general.architecture` is not UTF-8 takes it as the
/// architecture it is, one llama.cpp does not know, as it takes `llamx`: its keys are read by
/// bytes and the estimate is the one for the same keys under `llamx` (2 layers, context 256,
/// embedding 64, 4 heads: K and V each 2 × 256 cells × 16 × 4 heads × 2 bytes per layer, as
/// llama.cpp's F16 cache), and a missing key is named escaped.
#[test]
fn memory_takes_an_architecture_that_is_not_utf8() {
    use gguf_serde::{GgufStr, GgufWriter, ValueRef};
    let dir = temp_dir("not-utf8-memory");
    let write = |arch: &[u8], keys: bool| {
        let f = dir.join("a.gguf");
        let mut w = GgufWriter::create(&f).unwrap();
        w.add_kv_ref("general.architecture", ValueRef::String(GgufStr::from_bytes(arch))).unwrap();
        if keys {
            for (k, v) in [("block_count", 2u32), ("context_length", 256), ("embedding_length", 64)] {
                w.add_kv_ref(GgufStr::from_bytes(&[arch, b".", k.as_bytes()].concat()), ValueRef::U32(v)).unwrap();
            }
            let heads = [arch, b".attention.head_count"].concat();
            w.add_kv_ref(GgufStr::from_bytes(&heads), ValueRef::U32(4)).unwrap();
        }
        w.commit().unwrap();
        f
    };
    let memory = |arch: &[u8]| -> serde_json::Value {
        let f = write(arch, true);
        let o = gguf(&["inspect", "--json", "--memory", s(&f)]);
        assert!(o.status.success(), "{o:?}");
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()["memory"].clone()
    };
    let odd = memory(b"ll\xffma");
    assert_eq!(odd, memory(b"llamx"));
    let per_layer = 2 * 256 * 16 * 4;
    assert_eq!(odd["k_bytes"], 2 * per_layer);
    assert_eq!(odd["kv_bytes"], 4 * per_layer);
    let f = write(b"ll\xffma", true);
    let o = gguf(&["inspect", "--memory", s(&f)]);
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains("(256 cells, 2 layers)"), "{o:?}");
    let f = write(b"ll\xffma", false);
    let o = gguf(&["inspect", "--memory", s(&f)]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(r#"--memory: the file has no "ll\xffma.block_count""#), "{err}");
}

/// `validate` warns about a NUL byte in a key or tensor name, and says what llama.cpp reads
/// instead: the name ggml's reader gives (the `ggml_read` harness, which prints C strings as
/// llama.cpp uses them), when the harness is built.
#[test]
fn validate_warns_about_nul_bytes_in_names() {
    let dir = temp_dir("not-utf8-nul");
    let f = dir.join("nul.gguf");
    odd_file(&f, &[b"k\x00x"], &[b"x.weight\x00jk"]);
    for args in [vec!["validate", s(&f)], vec!["validate", "--ggml", s(&f)]] {
        let o = gguf(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {o:?}");
        let out = String::from_utf8(o.stdout).unwrap();
        let warnings: Vec<&str> = out.lines().filter(|l| l.contains("holds a NUL byte")).collect();
        assert_eq!(warnings.len(), 2, "{out}");
        // Each at the offset of its first byte, after its 8-byte length.
        let bytes = std::fs::read(&f).unwrap();
        let at = |needle: &[u8]| (0..bytes.len()).find(|&i| bytes[i..].starts_with(needle)).unwrap();
        let key = format!(r#"key at offset {} holds a NUL byte (key "k\0x"): llama.cpp reads it as "k""#, at(b"k\0x"));
        assert!(warnings[0].contains(&key), "{out}");
        let tensor = format!(
            r#"tensor name at offset {} holds a NUL byte (tensor "x.weight\0jk"): llama.cpp names it "x.weight""#,
            at(b"x.weight\0jk")
        );
        assert!(warnings[1].contains(&tensor), "{out}");
    }
    if let Some(harness) = llama_run_harness() {
        let lines = ggml_read_dump(&harness, &f);
        assert!(lines.iter().any(|l| l.starts_with("kv k ")), "{lines:?}");
        assert!(lines.iter().any(|l| l.starts_with("tensor x.weight ")), "{lines:?}");
    }
}

/// `quantize` takes paths that are not UTF-8, as the other commands do.
#[test]
fn quantize_takes_paths_that_are_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let dir = temp_dir("not-utf8-paths");
    let src = dir.join(std::ffi::OsStr::from_bytes(b"in\xff.gguf"));
    let out = dir.join(std::ffi::OsStr::from_bytes(b"out\xfe.gguf"));
    tiny_llama(&src);
    let o = gguf_os(&[b"quantize", b"-q", src.as_os_str().as_bytes(), out.as_os_str().as_bytes(), b"Q8_0"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        gguf_serde::Gguf::open(&out).unwrap().tensor("blk.0.attn_q.weight").unwrap().dtype,
        gguf_serde::GgmlType::Q8_0
    );
}

/// `rm`, `rename` and `set` refusals quote the key once, in the escaped form inspect prints (the
/// escaping's definition, written out by hand): not the `Debug` of the escaped text, which
/// doubles every backslash.
#[test]
fn edit_errors_quote_keys_once() {
    let dir = temp_dir("not-utf8-edit-errors");
    let f = dir.join("e.gguf");
    odd_file(&f, &[br"bad.key\xff", b"k"], &[]);
    let err = |args: &[&[u8]]| {
        let o = gguf_os(args);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        String::from_utf8(o.stderr).unwrap()
    };
    let p = f.as_os_str().as_encoded_bytes();
    let e = err(&[b"rm", p, b"no.\xfe\n"]);
    assert!(e.contains(r#"cannot edit "no.\xfe\n": no such key to remove"#), "{e}");
    let e = err(&[b"rename", p, b"k", br"bad.key\\xff"]);
    assert!(e.contains(r#"cannot edit "k": cannot rename to "bad.key\\xff": that key exists"#), "{e}");
    let e = err(&[b"set", p, b"x..\xfe", b"1"]);
    assert!(e.contains(r#"cannot edit "x..\xfe": a segment between dots is empty"#), "{e}");
    let e = err(&[b"set", p, b"k\xfe", b"x", b"--type", b"u32"]);
    assert!(e.contains(r#"cannot edit "k\xfe": "x" is not a valid u32"#), "{e}");
}

/// `set` takes a new key of any bytes, as `rename` does and as ggml reads it (not UTF-8, UTF-8
/// that is not ASCII, a NUL): setting a key gives the file that setting another key and renaming
/// it to that one gives, also with `--dry-run`, and ggml reads it as we do. A new key that is
/// empty or over 65,535 bytes is refused by both, naming no offset (there is no output file).
#[test]
fn set_takes_new_keys_rename_takes() {
    use gguf_serde::{Gguf, GgufStr, ValueRef};
    let dir = temp_dir("not-utf8-set-key");
    let (f, g) = (dir.join("f.gguf"), dir.join("g.gguf"));
    odd_file(&f, &[b"k"], &[b"w"]);
    let ok = |args: &[&[u8]]| {
        let o = gguf_os(args);
        assert!(o.status.success(), "{args:?}: {o:?}");
        o
    };
    let (fp, gp) = (f.as_os_str().as_encoded_bytes(), g.as_os_str().as_encoded_bytes());
    for (key, shown) in [(&b"new\xff"[..], r"new\xff"), ("caf\u{e9}".as_bytes(), "caf\u{e9}"), (b"a\\0b", r"a\0b")] {
        std::fs::copy(&f, &g).unwrap();
        let dry = ok(&[b"set", b"--dry-run", fp, key, b"v"]);
        assert_eq!(String::from_utf8_lossy(&dry.stdout), format!("+ key {shown}: string = \"v\"\n"));
        ok(&[b"set", fp, key, b"v"]);
        ok(&[b"set", gp, b"tmp", b"v"]);
        ok(&[b"rename", gp, b"tmp", key]);
        assert!(std::fs::read(&f).unwrap() == std::fs::read(&g).unwrap(), "{shown}: set and rename differ");
        let want = GgufStr::unescape(shown).unwrap();
        let file = Gguf::open(&f).unwrap();
        assert_eq!(file.get(&want), Some(ValueRef::String(GgufStr::from("v"))), "{shown}");
        // The harness prints C strings: a key with a NUL is cut there (see
        // `validate_warns_about_nul_bytes_in_names`), so the file is compared before that one.
        if let Some(harness) = llama_run_harness().filter(|_| !want.contains(&0)) {
            assert_ggml_reads_as_we_do(&harness, &f);
        }
    }
    let long = vec![b'a'; 65536];
    for (args, len) in [
        (vec![&b"set"[..], fp, b"", b"v"], 0),
        (vec![b"set", b"--dry-run", fp, b"", b"v"], 0),
        (vec![b"rename", fp, b"k", b""], 0),
        (vec![b"set", fp, &long[..], b"v"], 65536),
        (vec![b"rename", fp, b"k", &long[..]], 65536),
    ] {
        let before = std::fs::read(&f).unwrap();
        let o = gguf_os(&args);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&format!("a new key must be 1 to 65,535 bytes long, not {len}")), "{err}");
        assert!(!err.contains("offset"), "{err}");
        assert!(std::fs::read(&f).unwrap() == before, "a refused edit changed the file");
    }
}

/// `set --escaped` refuses a VALUE that is not UTF-8 (the escaped form is text: such a byte is
/// written `\xNN`), a usage error naming VALUE, and leaves the file as it was.
#[test]
fn set_escaped_refuses_a_value_that_is_not_utf8() {
    let dir = temp_dir("not-utf8-set-escaped");
    let f = dir.join("f.gguf");
    odd_file(&f, &[b"k"], &[]);
    let before = std::fs::read(&f).unwrap();
    let p = f.as_os_str().as_encoded_bytes();
    for args in [[&b"set"[..], p, b"k", b"caf\xe9", b"--escaped"], [b"set", p, b"new", b"caf\xe9", b"--escaped"]] {
        let o = gguf_os(&args);
        assert_eq!(o.status.code(), Some(2), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(r#"VALUE "caf\xe9" is not UTF-8, which --escaped does not take"#), "{err}");
        assert!(std::fs::read(&f).unwrap() == before, "a refused set changed the file");
    }
}

/// A URL (`hf://`, `http://`, `https://`) holding a byte that is not UTF-8 is refused as a bad
/// URL, named escaped, not opened as a local path.
#[test]
fn urls_that_are_not_utf8_are_bad_urls() {
    for url in [&b"hf://o/r\xff/x.gguf"[..], b"https://h/x\xfe.gguf", b"HTTP://h/\xff"] {
        let shown = gguf_serde::GgufStr::from_bytes(url);
        for cmd in [&b"inspect"[..], b"validate"] {
            let o = gguf_os(&[cmd, url]);
            assert_eq!(o.status.code(), Some(1), "{o:?}");
            let out = [o.stdout, o.stderr].concat();
            let text = String::from_utf8_lossy(&out);
            assert!(
                text.contains(&format!("not a remote file URL: {shown:?} (it holds a byte that is not UTF-8")),
                "{text}"
            );
            assert!(!text.contains("No such file"), "{text}");
        }
    }
}

/// `validate` warns about a key that is not ASCII (UTF-8 or not), as the spec requires ASCII
/// keys, and about a string value or tensor name that is not UTF-8, as the spec asks for UTF-8.
#[test]
fn validate_warns_about_keys_that_are_not_ascii() {
    let dir = temp_dir("not-utf8-validate-keys");
    let f = dir.join("f.gguf");
    odd_file(&f, &["caf\u{e9}".as_bytes(), b"k\xff", b"plain"], &[b"w\xfe"]);
    let bytes = std::fs::read(&f).unwrap();
    let at = |needle: &[u8]| bytes.windows(needle.len()).position(|w| w == needle).unwrap();
    let o = gguf(&["validate", s(&f)]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let out = String::from_utf8(o.stdout).unwrap();
    let ascii = "(the spec requires ASCII keys; ggml and llama.cpp accept any bytes)";
    let caf = format!("key at offset {} is not ASCII (key \"caf\u{e9}\") {ascii}", at("caf\u{e9}".as_bytes()));
    assert!(out.contains(&caf), "{out}");
    let kff = out.lines().find(|l| l.contains(r#"(key "k\xff")"#)).unwrap_or_default();
    assert!(kff.contains(&format!("offset {}", at(b"k\xff"))) && kff.ends_with(ascii), "{out}");
    let w = out.lines().find(|l| l.contains(r#""w\xfe""#)).unwrap_or_default();
    assert!(w.ends_with("(the spec asks for UTF-8; ggml and llama.cpp accept any bytes)"), "{out}");
    assert!(!out.contains("plain"), "{out}");
}

/// `inspect --memory` of a file whose `general.architecture` is UTF-8 with a control byte or a
/// backslash names the missing key escaped and quoted (as inspect shows names), never with the
/// raw byte.
#[test]
fn memory_escapes_an_architecture_with_control_bytes() {
    use gguf_serde::GgufWriter;
    let dir = temp_dir("memory-arch-escaped");
    for (arch, shown) in [
        ("lla\nm", r#""lla\nm.block_count""#),
        ("lla\x1bm", r#""lla\u{1b}m.block_count""#),
        ("lla\0m", r#""lla\0m.block_count""#),
        ("lla\\m", r#""lla\\m.block_count""#),
    ] {
        let f = dir.join("a.gguf");
        let mut w = GgufWriter::create(&f).unwrap();
        w.add_kv("general.architecture", arch).unwrap();
        w.commit().unwrap();
        let o = gguf(&["inspect", "--memory", s(&f)]);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(err.contains(&format!("the file has no {shown}")), "{arch:?}: {err}");
        assert!(!err.trim_end().contains(['\n', '\x1b', '\0']), "{arch:?}: {err}");
    }
}

/// Shards whose prefix is not UTF-8 (`r\xff-00001-of-00002.gguf`, as llama-gguf-split names
/// them) are shards: `merge` gives back the file llama-gguf-split split, `hash` prints
/// llama-gguf-hash's lines, and `inspect`, `quantize` (with and without `--keep-split`) and
/// `ShardedGguf::open` read the whole model.
#[test]
fn shards_named_with_bytes_that_are_not_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let (Some(split), Some(hash)) =
        (gguf_tests::llama_tool("llama-gguf-split"), gguf_tests::llama_tool("llama-gguf-hash"))
    else {
        return;
    };
    let dir = temp_dir("not-utf8-shards");
    let src = dir.join("src.gguf");
    tiny_llama(&src);
    let os = |b: &[u8]| OsStr::from_bytes(b).to_owned();
    run_in(&dir, &split, &[&os(b"--split-max-tensors"), &os(b"3"), src.as_os_str(), &os(b"r\xff")]);
    let first = os(b"r\xff-00001-of-00002.gguf");
    let ours = |args: &[&OsStr]| {
        let o = gguf_tests::output_with_deadline(crate::gguf_command().current_dir(&dir).args(args), crate::HANG);
        assert!(o.status.success(), "gguf {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        o
    };
    // llama-gguf-split merges them (keeping the split keys, with `split.count = 0`); ours gives
    // back the file llama-gguf-split split, byte for byte.
    run_in(&dir, &split, &[&os(b"--merge"), &first, &os(b"theirs.gguf")]);
    ours(&[&os(b"merge"), &first, &os(b"ours.gguf")]);
    assert!(std::fs::read(dir.join("ours.gguf")).unwrap() == std::fs::read(&src).unwrap());
    // A shard hashes the whole model: llama-gguf-hash's lines for each shard, in order.
    let second = os(b"r\xff-00002-of-00002.gguf");
    let theirs = [run_in(&dir, &hash, &[&first]).stdout, run_in(&dir, &hash, &[&second]).stdout].concat();
    assert!(ours(&[&os(b"hash"), &first]).stdout == theirs);
    let text = String::from_utf8(ours(&[&os(b"inspect"), &first]).stdout).unwrap();
    assert!(text.contains("blk.0.attn_q.weight"), "{text}");
    ours(&[&os(b"quantize"), &os(b"-q"), &first, &os(b"q.gguf"), &os(b"Q8_0")]);
    assert_eq!(gguf_serde::Gguf::open(dir.join("q.gguf")).unwrap().tensor_count(), 3 + ODD_NAMES.len());
    ours(&[&os(b"quantize"), &os(b"-q"), &os(b"--keep-split"), &first, &os(b"k.gguf"), &os(b"Q8_0")]);
    let model = gguf_serde::ShardedGguf::open(dir.join(&first)).unwrap();
    assert_eq!((model.shard_count(), model.tensor_count()), (2, 3 + ODD_NAMES.len()));
    let (prefix, no, count) = gguf_serde::container::parse_shard_path(dir.join(&first)).unwrap();
    assert_eq!((prefix, no, count), (dir.join(os(b"r\xff")), 0, 2));
}

/// `quantize --override-kv` takes the bytes of its argument (Unix): key `ov.\xff` = string
/// `a\xfeb` is written as those bytes, byte-identical to llama-quantize's output for the same
/// option.
#[test]
fn override_kv_takes_bytes_as_llama_quantize() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let Some(lq) = gguf_tests::llama_quantize() else { return };
    let dir = temp_dir("not-utf8-override-kv");
    tiny_llama(&dir.join("m.gguf"));
    let ov = OsStr::from_bytes(b"ov.\xff=str:a\xfeb");
    let args = |out: &'static str| {
        [OsStr::new("--override-kv"), ov, OsStr::new("m.gguf"), OsStr::new(out), OsStr::new("Q8_0")]
    };
    run_in(&dir, &lq, &args("theirs.gguf"));
    let ours = std::path::PathBuf::from(env!("CARGO_BIN_EXE_gguf"));
    run_in(&dir, &ours, &[&[OsStr::new("quantize"), OsStr::new("-q")][..], &args("ours.gguf")].concat());
    let (a, b) = (std::fs::read(dir.join("theirs.gguf")).unwrap(), std::fs::read(dir.join("ours.gguf")).unwrap());
    assert!(a == b, "files differ (sizes {} and {})", a.len(), b.len());
    let f = gguf_serde::Gguf::open(dir.join("ours.gguf")).unwrap();
    assert_eq!(f.get(b"ov.\xff"), Some(gguf_serde::ValueRef::String(gguf_serde::GgufStr::from_bytes(b"a\xfeb"))));
}

/// `--override-kv` reads an `int` or `float` value as llama-quantize does (C's `atol`/`atof` in
/// llama.cpp's `string_parse_kv_override`): `int:` is 0, `int:7x` 7, `int:\xff` 0, `float:1\xff`
/// 1.0; the output is byte-identical to llama-quantize's for the same options.
#[test]
fn override_kv_reads_numbers_as_llama_quantize() {
    use gguf_serde::ValueRef;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = temp_dir("override-kv-atol");
    tiny_llama(&dir.join("m.gguf"));
    let ovs: [&[u8]; 4] = [b"o.empty=int:", b"o.trail=int:7x", b"o.bad=int:\xff", b"o.f=float:1\xff"];
    let args = |out: &'static str| {
        let mut a: Vec<&OsStr> = Vec::new();
        for ov in ovs {
            a.extend([OsStr::new("--override-kv"), OsStr::from_bytes(ov)]);
        }
        a.extend([OsStr::new("m.gguf"), OsStr::new(out), OsStr::new("Q8_0")]);
        a
    };
    let ours = std::path::PathBuf::from(env!("CARGO_BIN_EXE_gguf"));
    run_in(&dir, &ours, &[&[OsStr::new("quantize"), OsStr::new("-q")][..], &args("ours.gguf")].concat());
    let f = gguf_serde::Gguf::open(dir.join("ours.gguf")).unwrap();
    for (k, v) in [("o.empty", 0u32), ("o.trail", 7), ("o.bad", 0)] {
        assert_eq!(f.get(k), Some(ValueRef::U32(v)), "{k}");
    }
    assert_eq!(f.get("o.f"), Some(ValueRef::F32(1.0)));
    let Some(lq) = gguf_tests::llama_quantize() else { return };
    run_in(&dir, &lq, &args("theirs.gguf"));
    let (a, b) = (std::fs::read(dir.join("theirs.gguf")).unwrap(), std::fs::read(dir.join("ours.gguf")).unwrap());
    assert!(a == b, "files differ (sizes {} and {})", a.len(), b.len());
}

/// A model whose tensor names, keys and strings hold NUL bytes is quantized as llama-quantize
/// quantizes it, which takes each as a C string (ggml's `ggml_set_name`, `gguf_set_kv`): a name
/// ends at its first NUL for every rule (`blk.0.attn_v\xff\0.weight` is `blk.0.attn_v\xff`, which
/// does not end in `weight` and is kept; `blk.0.ffn_up.weight\0x` is quantized and sorted as
/// `blk.0.ffn_up.weight`; a `--tensor-type` pattern `\0` matches no name) and is written so (a
/// name empty once cut, `\0abc.weight`, is left out, as llama-quantize drops it); a key
/// and a string (also in an array) are cut the same way, and a key equal to an earlier one once cut
/// replaces it at the end. The `--dry-run` plan is llama-quantize's and the files are
/// byte-identical; two names equal once cut are refused by both.
#[test]
fn quantize_cuts_names_at_a_nul_as_llama_quantize() {
    use gguf_serde::{GgufStr, ValueRef};
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let Some(lq) = gguf_tests::llama_quantize() else { return };
    let dir = temp_dir("quantize-nul-names");
    let names: [&[u8]; 4] =
        [b"blk.0.attn_v\xff\x00.weight", b"blk.0.ffn_up.weight\x00x", b"x\xff.weight", b"\x00abc.weight"];
    llama_with(&dir.join("m.gguf"), &names, |w| {
        w.add_kv_ref(GgufStr::from_bytes(b"test.k\x00x"), ValueRef::U32(1)).unwrap();
        w.add_kv("test.s", "ab\0cd").unwrap();
        w.add_kv("test.a", vec!["a\0b".to_owned(), "c".to_owned()]).unwrap();
        w.add_kv("test.k", 2u32).unwrap();
        w.add_kv("test.after", 3u32).unwrap();
    });
    let ours = std::path::PathBuf::from(env!("CARGO_BIN_EXE_gguf"));
    let os = OsStr::from_bytes;
    for opts in [&[][..], &[os(b"--tensor-type"), os(b"\\0=q8_0")], &[os(b"--pure")]] {
        let args = |pre: &[&'static [u8]], post: &[&'static [u8]]| -> Vec<&OsStr> {
            pre.iter().map(|a| os(a)).chain(opts.iter().copied()).chain(post.iter().map(|a| os(a))).collect()
        };
        let theirs = run_in(&dir, &lq, &args(&[b"--dry-run"], &[b"m.gguf", b"Q4_0"]));
        let mine = run_in(&dir, &ours, &args(&[b"quantize", b"--dry-run"], &[b"m.gguf", b"Q4_0"]));
        let want = llama_dry_run(&[theirs.stdout, theirs.stderr].concat());
        assert_eq!(want.len(), 6, "{opts:?}: {want:?}");
        assert!(want.contains(&(r"blk.0.attn_v\xff".to_owned(), "F32".to_owned())), "{opts:?}: {want:?}");
        assert_eq!(our_dry_run(&mine.stdout), want, "{opts:?}");
        run_in(&dir, &lq, &args(&[], &[b"m.gguf", b"theirs.gguf", b"Q4_0", b"2"]));
        run_in(&dir, &ours, &args(&[b"quantize", b"-q", b"--force"], &[b"m.gguf", b"ours.gguf", b"Q4_0", b"2"]));
        let (a, b) = (std::fs::read(dir.join("theirs.gguf")).unwrap(), std::fs::read(dir.join("ours.gguf")).unwrap());
        assert!(a == b, "{opts:?}: files differ (sizes {} and {})", a.len(), b.len());
    }
    // --keep-split of the model split a tensor per shard: each shard line of the dry run counts
    // the tensors the real run writes into it (the one whose name starts with a NUL is left out
    // of its shard, which is still written; llama-quantize crashes on this input).
    let split =
        super::gguf(&["split", "--split-max-tensors", "1", super::s(&dir.join("m.gguf")), super::s(&dir.join("sq"))]);
    assert!(split.status.success(), "{}", String::from_utf8_lossy(&split.stderr));
    let first = std::fs::read_dir(&*dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("sq-00001-of-"))
        .expect("the first shard");
    let ks = dir.join("ks.gguf");
    let dry = super::gguf(&["quantize", "--dry-run", "--keep-split", super::s(&first), super::s(&ks), "Q4_0"]);
    let real = super::gguf(&["quantize", "-q", "--keep-split", super::s(&first), super::s(&ks), "Q4_0"]);
    assert!(real.status.success(), "{}", String::from_utf8_lossy(&real.stderr));
    let mut shards = 0;
    let mut total = 0;
    for line in String::from_utf8_lossy(&dry.stdout).lines() {
        let Some((path, n)) = line.rsplit_once(": ") else { continue };
        let n = n.strip_suffix(" tensors").or_else(|| n.strip_suffix(" tensor"));
        let Some(n) = n.and_then(|n| n.parse::<usize>().ok()) else { continue };
        let written = gguf_serde::Gguf::open(path).unwrap_or_else(|e| panic!("{path}: {e}")).tensor_count();
        assert_eq!(n, written, "{path}: the dry run counts {n}, the shard holds {written}");
        shards += 1;
        total += n;
    }
    assert_eq!((shards, total), (7, 6), "{}", String::from_utf8_lossy(&dry.stdout));

    // What llama-quantize wrote, read back: the cut names, keys and strings.
    let f = gguf_serde::Gguf::open(dir.join("theirs.gguf")).unwrap();
    assert!(f.tensor(&b"blk.0.attn_v\xff"[..]).is_some() && f.tensor("blk.0.ffn_up.weight").is_some());
    assert_eq!(f.tensor_count(), 6);
    assert_eq!(f.get("test.s"), Some(ValueRef::String("ab".into())));
    let keys: Vec<String> = f.metadata().map(|kv| kv.key.to_string()).collect();
    // `test.k` (the second pair) replaced `test.k\0x` (the first) and went to the end then.
    assert_eq!(keys[8..12], ["test.s", "test.a", "test.k", "test.after"], "{keys:?}");
    assert_eq!(f.get("test.k"), Some(ValueRef::U32(2)));

    // Both refuse `file`, llama-quantize saying `theirs`, we `ours`; nothing is written.
    let both_refuse = |file: &str, theirs: &str, ours: &str| {
        let o = std::process::Command::new(&lq).current_dir(&*dir).args([file, "t.gguf", "Q4_0"]).output().unwrap();
        let log = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && log.contains(theirs), "{log}");
        let o = super::gguf(&["quantize", "-q", super::s(&dir.join(file)), super::s(&dir.join("o.gguf")), "Q4_0"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains(ours), "{err}");
        assert!(!dir.join("o.gguf").exists() && !dir.join("t.gguf").exists());
    };
    // Two names equal up to a NUL.
    llama_with(&dir.join("dup.gguf"), &[b"x.weight\x00a", b"x.weight\x00b"], |_| {});
    both_refuse("dup.gguf", "tensor 'x.weight' is duplicated", r#"two tensors are named "x.weight" up to a NUL byte"#);
    // A name of 64 bytes, 8 once cut (which our writer refuses to write: made byte by byte): ggml
    // refuses to read it.
    let long = [&b"y.weight\x00"[..], &[b'z'; 55]].concat();
    let mut b = gguf_tests::support::B::le();
    b.header(3, 1, 1).kv("general.architecture", 8).str("llama");
    b.tensor(&long, &[32, 2], 0, 0).pad(32).data(256, 1);
    std::fs::write(dir.join("long.gguf"), b.bytes()).unwrap();
    both_refuse("long.gguf", "tensor name 0 is too long: 64 >= 64", "a tensor name of 64 bytes");
}

/// Refusals of option values and paths that are not UTF-8 show them in the escaped form `inspect`
/// shows names in (`\xNN`), never lossily (U+FFFD), and a glob that is not UTF-8 is refused with
/// the reason a UTF-8 one gets.
#[test]
fn quantize_refusals_show_bytes_that_are_not_utf8_escaped() {
    use std::os::unix::ffi::OsStrExt;
    let dir = temp_dir("not-utf8-quantize-refusals");
    let model = dir.join("m.gguf");
    tiny_llama(&model);
    std::fs::write(dir.join(std::ffi::OsStr::from_bytes(b"t\xfe.txt")), "a=q9").unwrap();
    let m = model.as_os_str().as_bytes();
    let file = |name: &[u8]| [dir.as_os_str().as_bytes(), b"/", name].concat();
    let (t_fe, n_fe) = (file(b"t\xfe.txt"), file(b"n\xfe.txt"));
    let cases: [(&[&[u8]], u8, String); 6] = [
        (&[b"--tensor-type", b"x\xff"], 2, r"invalid value 'x\xff' for '--tensor-type <PATTERN=TYPE>'".into()),
        (&[b"--override-kv", b"x\xff"], 2, r"invalid value 'x\xff' for '--override-kv <KEY=TYPE:VALUE>'".into()),
        (&[b"--tensor-type-file", &t_fe], 2, format!(r#"--tensor-type-file {}/t\xfe.txt:1: invalid quantization type "q9""#, dir.display())),
        (&[b"--tensor-type-file", &n_fe], 1, format!(r"reading {}/n\xfe.txt: ", dir.display())),
        (&[b"--exclude", b"[\xff"], 2, r#"invalid value '[\xff' for '--exclude <GLOB>': "[\xff" is not a valid glob: unclosed character class; missing ']'"#.into()),
        (&[b"--exclude", b"{\xff"], 2, r#""{\xff" is not a valid glob: unclosed alternate group; missing '}'"#.into()),
    ];
    for (opts, code, want) in cases {
        let o = gguf_os(&[&[&b"quantize"[..]][..], opts, &[m, b"o.gguf", b"Q4_0"]].concat());
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(i32::from(code)), "{err}");
        assert!(err.contains(&want) && !err.contains('\u{fffd}'), "want {want}, got {err}");
    }
}
