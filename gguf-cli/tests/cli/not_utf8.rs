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
    // Rust's `escape_debug` of the valid part, `\xNN` for each byte that is not UTF-8.
    for want in [r#""test.k\xffey""#, r#"["a", "\xe2\x96", "▁b"]"#, r#""caf\xe9""#, r#""w.\xc3(""#] {
        assert!(text.contains(want), "{want} not in:\n{text}");
    }
    let json: serde_json::Value = serde_json::from_str(&gguf_ok(&["inspect", "--json", s(&f)])).unwrap();
    assert_eq!(json["metadata"][1]["key"], r"test.k\xffey");
    assert_eq!(json["metadata"][3]["value"], r"caf\xe9");
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
fn tiny_llama(path: &Path) -> Vec<Vec<u8>> {
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
    let mut names: Vec<Vec<u8>> =
        ["token_embd.weight", "blk.0.attn_q.weight", "blk.0.ffn_down.weight"].map(|n| n.as_bytes().to_vec()).into();
    names.extend(ODD_NAMES.map(<[u8]>::to_vec));
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
fn run_in(dir: &Path, program: &Path, args: &[&std::ffi::OsStr]) -> std::process::Output {
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
    let ours = std::path::PathBuf::from(env!("CARGO_BIN_EXE_gguf"));
    let os = |s: &str| std::ffi::OsString::from(s);
    run_in(&dir, &ours, &[&os("quantize"), &os("-q"), &os("m.gguf"), &os("plain.gguf"), &os("Q4_K_M")]);
    let plain = gguf_serde::Gguf::open(dir.join("plain.gguf")).unwrap();
    for im in ["im.gguf", "im.dat"] {
        let args = |out: &str| [os("--imatrix"), os(im), os("m.gguf"), os(out), os("Q4_K_M"), os("2")];
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
fn llama_dry_run(log: &[u8]) -> Vec<(String, String)> {
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
fn our_dry_run(out: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8(out.to_vec()).unwrap();
    let mut v: Vec<(String, String)> = text
        .lines()
        .skip(1)
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() >= 5 && !l.contains(" tensors: ")).then(|| (w[0].to_owned(), w[3].to_owned()))
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
