//! `gguf quantize` and `gguf dequantize`: converted tensors equal gguf-py's dequantize-then-
//! quantize of the input (gguf.quants), kept tensors are byte-identical, metadata is kept with
//! general.file_type updated; `gguf quantize` takes llama-quantize's arguments and refuses what it
//! refuses (the byte-for-byte comparison with llama-quantize is in tests/tests/interop/quantize_llama.rs).

use gguf_serde::{GgmlType, Gguf, ValueRef};
use gguf_tests::{model, python, run_py, temp_dir};
use serde_json::Value as Json;

use super::gguf;

fn names_of(j: &Json, k: &str) -> Vec<String> {
    j[k].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
}

#[test]
fn quantize_small_keeps_tensors_whose_names_llama_quantize_never_quantizes() {
    let input = crate::small_path();
    let dir = temp_dir("quantize_small");
    let out = dir.join("q4_0.gguf");
    // IN OUT TYPE, as llama-quantize takes them; file types are case-insensitive.
    let o = gguf(&["quantize", "-q", input.to_str().unwrap(), out.to_str().unwrap(), "q4_0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&out).unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    // llama-quantize quantizes only names ending in "weight": these three are copied, in name order.
    let types: Vec<_> = f.tensors().map(|t| (t.name.to_str().unwrap(), t.dtype)).collect();
    assert_eq!(types, [("e_bf16", GgmlType::BF16), ("w_f32", GgmlType::F32), ("w_q8_0", GgmlType::Q8_0)]);
    // The keys as they were, then general.quantization_version = 2 and general.file_type = 2.
    let keys: Vec<_> = f.metadata().map(|kv| kv.key).collect();
    assert_eq!(
        keys,
        ["general.architecture", "test.answer", "test.note", "general.quantization_version", "general.file_type"]
    );
    assert_eq!(f.get("general.quantization_version"), Some(ValueRef::U32(2)));
    assert_eq!(f.get("general.file_type"), Some(ValueRef::U32(2)));
    let orig = Gguf::open(&input).unwrap();
    assert_eq!((f.tensor_count(), orig.tensor_count()), (3, 3));
    for t in f.tensors() {
        assert_eq!(f.tensor_data(&t).unwrap(), orig.tensor_data_by_name(t.name).unwrap(), "{}", t.name);
    }
    // The dry run says why, and writes nothing.
    let o = gguf(&["quantize", "--dry-run", input.to_str().unwrap(), "Q4_0"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("w_f32") && text.contains("kept (name does not end in weight)"), "{text}");
    // An existing output is refused without --force, and a ggml type that is no file type is refused.
    let o = gguf(&["quantize", "-q", input.to_str().unwrap(), out.to_str().unwrap(), "Q8_0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("exists (use --force to replace it)"));
    // (a usage error: exit 2, as an unknown file type)
    let o = gguf(&["quantize", "-q", "--force", input.to_str().unwrap(), out.to_str().unwrap(), "--type", "MXFP4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("MXFP4 is a ggml tensor type, not a llama.cpp file type"));
    // A missing importance matrix, and a legacy .dat one cut inside its first name (entry count
    // 1, name length 8, 3 of its bytes): refused before anything is written.
    let cut = out.with_file_name("cut.dat");
    std::fs::write(&cut, [1u8, 0, 0, 0, 8, 0, 0, 0, b'a', b'b', b'c']).unwrap();
    for (imatrix, why) in [
        ("no-such-imatrix.dat", "reading no-such-imatrix.dat"),
        (cut.to_str().unwrap(), "file truncated: name of entry 1 at offset 8 needs 8 bytes"),
    ] {
        let o = gguf(&[
            "quantize",
            "-q",
            "--force",
            "--imatrix",
            imatrix,
            input.to_str().unwrap(),
            out.to_str().unwrap(),
            "Q4_0",
        ]);
        assert_eq!(o.status.code(), Some(1));
        let err = String::from_utf8_lossy(&o.stderr);
        // The file named once (an I/O error names it itself; otherwise `--imatrix FILE:`).
        assert!(err.matches(imatrix).count() == 1 && err.contains(why), "{err}");
        assert_eq!(std::fs::read(&out).unwrap(), bytes, "a refused run changed the output");
    }
}

#[test]
fn exclude_and_dequantize() {
    let input = crate::small_path();
    let dir = temp_dir("dequantize_small");
    let out = dir.join("f32.gguf");
    let o = gguf(&["dequantize", "-q", input.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let f = Gguf::open(&out).unwrap();
    let types: Vec<_> = f.tensors().map(|t| t.dtype).collect();
    assert_eq!(types, [GgmlType::F32, GgmlType::F32, GgmlType::F32]);
    assert_eq!(Gguf::open(&input).unwrap().tensor_count(), 3, "every tensor of the input is written");
    // e_bf16 holds (i - 48) / 16, exact in bf16 and f32.
    let e = f.tensor_data_by_name("e_bf16").unwrap();
    let want: Vec<u8> = (0..96).flat_map(|i| ((i as f32 - 48.0) / 16.0).to_le_bytes()).collect();
    assert_eq!(e, &want[..]);

    let out2 = dir.join("excl.gguf");
    let o = gguf(&["dequantize", input.to_str().unwrap(), out2.to_str().unwrap(), "-t", "Q4_0"]);
    assert!(!out2.exists());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("dequantize converts to F32, F16 or BF16, not Q4_0"));
}

/// `--exclude` takes globs: `?`, classes and alternatives keep exactly the tensors they name
/// (small.gguf: `w_f32` F32, `w_q8_0` Q8_0, `e_bf16` BF16); an invalid glob is refused.
#[test]
fn exclude_takes_globs() {
    let input = crate::small_path();
    let dir = temp_dir("exclude_globs");
    for (i, (glob, want)) in [
        ("w_{q8_0,zz}", [GgmlType::F32, GgmlType::Q8_0, GgmlType::F32]),
        ("e_bf1[0-9]", [GgmlType::F32, GgmlType::F32, GgmlType::BF16]),
        ("?_*", [GgmlType::F32, GgmlType::Q8_0, GgmlType::BF16]),
        ("w_q?_0", [GgmlType::F32, GgmlType::Q8_0, GgmlType::F32]),
        ("w_q??_0", [GgmlType::F32, GgmlType::F32, GgmlType::F32]),
        ("[!w]_*", [GgmlType::F32, GgmlType::F32, GgmlType::BF16]),
    ]
    .into_iter()
    .enumerate()
    {
        let out = dir.join(format!("{i}.gguf"));
        let o = gguf(&["dequantize", "-q", "--exclude", glob, input.to_str().unwrap(), out.to_str().unwrap()]);
        assert!(o.status.success(), "{glob}: {}", String::from_utf8_lossy(&o.stderr));
        let types: Vec<_> = Gguf::open(&out).unwrap().tensors().map(|t| t.dtype).collect();
        assert_eq!(types, want, "--exclude {glob}");
    }
    let out = dir.join("bad.gguf");
    // An invalid glob is a usage error (exit 2) that names the pattern, checked before any file
    // is read: not "cannot quantize" from a dequantize, nor "writing" a file that is not written.
    let o = gguf(&["dequantize", "--exclude", "w_[q", input.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("\"w_[q\" is not a valid glob"), "{o:?}");
    assert!(!err.contains("cannot quantize") && !err.contains("writing"), "{err}");
    assert!(!out.exists());
    let o = gguf(&["quantize", "--dry-run", "--exclude", "{a,b", "no-such-file.gguf", "Q8_0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a valid glob"), "{o:?}");
}

/// A malformed `--tensor-type` (a bad regular expression, an unknown type) or `--override-kv`
/// is a usage error (exit 2) naming the option and the value, checked before any file is read,
/// as a bad `--exclude` glob is.
#[test]
fn bad_tensor_type_and_override_are_usage_errors() {
    for (flag, value, says) in [
        ("--tensor-type", "attn_(v=q8_0", "tensor type pattern \"attn_(v\""),
        ("--tensor-type", "attn_v=q9_9", "invalid quantization type \"q9_9\""),
        ("--tensor-type", "attn_v", "expected PATTERN=TYPE"),
        ("--override-kv", "general.name=bytes:x", "general.name=bytes:x"),
    ] {
        let o = gguf(&["quantize", "--dry-run", flag, value, "no-such-file.gguf", "Q8_0"]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(flag) && err.contains(says), "{flag} {value}: {err}");
        assert!(!err.contains("no-such-file"), "checked before the file is opened: {err}");
    }
}

#[test]
fn quantize_gemma_to_q8_0() {
    let Some(path) = model("gemma-3-270m-q4_k_m.gguf") else { return };
    let dir = temp_dir("quantize_gemma");
    let out = dir.join("q8_0.gguf");
    let o = gguf(&[
        "quantize",
        "-q",
        path.to_str().unwrap(),
        out.to_str().unwrap(),
        "--type",
        "Q8_0",
        "--threads",
        "2",
        "--exclude",
        "blk.1.*",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (a, b) = (Gguf::open(&path).unwrap(), Gguf::open(&out).unwrap());
    assert_eq!(b.kv_count(), 33);
    assert_eq!(b.get("general.file_type"), Some(ValueRef::U32(7)));
    assert_eq!(b.tensor_count(), a.tensor_count());
    // llama-quantize's order: tensors without a layer first, then by layer, each by name.
    let names: Vec<&str> = b.tensors().map(|t| t.name.to_str().unwrap()).collect();
    assert_eq!(names.len(), 236);
    assert_eq!(
        &names[..4],
        ["output_norm.weight", "token_embd.weight", "blk.0.attn_k.weight", "blk.0.attn_k_norm.weight"]
    );
    let mut converted = 0;
    for y in b.tensors() {
        let x = a.tensor(y.name).unwrap();
        converted += usize::from(y.dtype != x.dtype);
        assert_eq!(&*x.shape, &*y.shape);
        // Gemma's rows (640, 1024, 2048) are whole Q8_0 blocks; token_embd.weight (tied) follows
        // the output rule, which keeps Q8_0 for a Q8_0 file.
        let want = if x.shape.len() < 2 || y.name.starts_with("blk.1.") { x.dtype } else { GgmlType::Q8_0 };
        assert_eq!(y.dtype, want, "{}", y.name);
    }
    // Counted from the input: the 2-D tensors outside blk.1 that are not Q8_0 already.
    let to_convert = a
        .tensors()
        .filter(|x| x.shape.len() >= 2 && !x.name.starts_with("blk.1.") && x.dtype != GgmlType::Q8_0)
        .count();
    assert_eq!(converted, to_convert);
    // One tensor of each source type against gguf-py (checking all 117 takes gguf-py ~45 s).
    let Some(py) = python() else { return };
    let check = ["blk.0.attn_k.weight", "blk.0.attn_output.weight", "blk.0.ffn_down.weight", "output_norm.weight"];
    let mut args = vec![path.to_str().unwrap(), out.to_str().unwrap()];
    args.extend(check);
    let r = run_py(&py, "requant_check.py", &args);
    assert_eq!(names_of(&r, "checked"), ["blk.0.attn_k.weight", "blk.0.attn_output.weight", "blk.0.ffn_down.weight"]);
    assert_eq!(names_of(&r, "same"), ["output_norm.weight"]);
    assert_eq!((names_of(&r, "mismatched").len(), names_of(&r, "unsupported").len()), (0, 0), "{r}");
}

#[test]
fn iq_types_need_an_importance_matrix_where_llama_quantize_does() {
    let Some(path) = model("SmolLM2-135M-Instruct.Q4_1.gguf") else { return };
    let dir = temp_dir("quantize_iq");
    let out = dir.join("x.gguf");
    // IQ2_XXS needs an importance matrix (refused before anything is written, as llama-quantize does).
    let o = gguf(&["quantize", "-q", path.to_str().unwrap(), out.to_str().unwrap(), "IQ2_XXS"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("this quantization requires an importance matrix (offending tensor: blk.3.ffn_down.weight, target type: IQ2_XXS)"), "{err}");
    assert!(err.contains("give one with --imatrix"), "{err}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "a failed quantize left a file");
    // Its dry run prints the plan and fails with the same refusal.
    let o = gguf(&["quantize", "--dry-run", path.to_str().unwrap(), "IQ2_XXS"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("blk.3.ffn_down.weight"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("the real run would fail")
            && err.contains("requires an importance matrix (offending tensor: blk.3.ffn_down.weight"),
        "{err}"
    );
    // IQ3_XS needs none (its IQ3_S and IQ3_XXS tensors quantize without weights): the dry run
    // goes through. SmolLM2's 576-wide rows are no whole 256-blocks: IQ3_XS's middle-layer
    // ffn_up rule falls back.
    let o = gguf(&["quantize", "--dry-run", path.to_str().unwrap(), "iq3_xs"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("fallback from IQ3_XXS (mix: ffn_up)"), "{text}");
    assert!(text.contains("IQ3_XXS") && text.contains("IQ3_S"), "{text}");
}

/// `gguf quantize --imatrix FILE --exclude-weights NAME` and llama-quantize with the same
/// arguments write the same bytes (the file name goes into `quantize.imatrix.file` as given:
/// both run in the same folder with the same relative name). The importance matrix is made by
/// llama-imatrix from SmolLM2 on a short fixed text (2 chunks of 64 tokens).
#[test]
fn quantize_with_an_importance_matrix_as_llama_quantize() {
    let Some(lq) = gguf_tests::llama_quantize() else { return };
    let Some(imatrix) = gguf_tests::llama_tool("llama-imatrix") else { return };
    let Some(path) = model("SmolLM2-135M-Instruct.Q4_1.gguf") else { return };
    let dir = temp_dir("quantize_imatrix_cli");
    let words = "a small model reads plain text about rivers mountains numbers cities and the sea";
    let text: Vec<&str> = words.split(' ').cycle().take(400).collect();
    std::fs::write(dir.join("text.txt"), text.join(" ")).unwrap();
    let run = |cmd: &std::path::Path, args: &[&str]| {
        let o = std::process::Command::new(cmd).current_dir(&*dir).args(args).output().unwrap();
        assert!(o.status.success(), "{}: {}", cmd.display(), String::from_utf8_lossy(&o.stderr));
    };
    let model = path.to_str().unwrap();
    let imx = ["-m", model, "-f", "text.txt", "-o", "im.gguf", "-c", "64", "--chunks", "2", "-t", "2", "--no-ppl"];
    run(&imatrix, &imx);
    let opts = ["--allow-requantize", "--imatrix", "im.gguf", "--exclude-weights", "attn_k"];
    let mut theirs = opts.to_vec();
    theirs.extend([model, "theirs.gguf", "Q4_K_S", "2"]);
    run(&lq, &theirs);
    let mut ours = vec!["quantize", "-q"];
    ours.extend(opts);
    ours.extend([model, "ours.gguf", "Q4_K_S", "2"]);
    run(std::path::Path::new(env!("CARGO_BIN_EXE_gguf")), &ours);
    let (a, b) = (std::fs::read(dir.join("theirs.gguf")).unwrap(), std::fs::read(dir.join("ours.gguf")).unwrap());
    assert!(a == b, "files differ (sizes {} and {})", a.len(), b.len());
    let f = Gguf::open(dir.join("ours.gguf")).unwrap();
    assert_eq!(f.get("quantize.imatrix.file"), Some(ValueRef::String("im.gguf".into())));
    assert_eq!(f.get("quantize.imatrix.dataset"), Some(ValueRef::String("text.txt".into())));
    assert_eq!(f.get("quantize.imatrix.chunks_count"), Some(ValueRef::U32(2)));
}

/// `--include-weights`/`--exclude-weights` pick entries of an importance matrix: without
/// `--imatrix` they are a usage error (exit 2), not silently ignored.
#[test]
fn weight_filters_need_an_imatrix() {
    let small = crate::small_path();
    let dir = gguf_tests::temp_dir("cli_weights_need_imatrix");
    let out = dir.join("q.gguf");
    for flag in ["--include-weights", "--exclude-weights"] {
        let o = crate::gguf(&["quantize", flag, "w", small.to_str().unwrap(), out.to_str().unwrap(), "Q8_0"]);
        assert_eq!(o.status.code(), Some(2), "{flag}: {o:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("--imatrix"), "{flag}: {o:?}");
        assert!(!out.exists());
    }
}

/// A dry run refuses what the real run refuses: an `--override-kv` the writer cannot store
/// (`general.alignment` not a power of two) made the dry run exit 0 while the real run failed.
/// Both now exit 1 with the writer's reason, and nothing is written.
#[test]
fn dry_run_refuses_an_override_the_real_run_refuses() {
    let small = crate::small_path();
    let dir = temp_dir("cli_quantize_dry_override");
    let out = dir.join("q.gguf");
    let (small, out_s) = (small.to_str().unwrap(), out.to_str().unwrap());
    let ok = gguf(&["quantize", "--dry-run", "--override-kv", "general.alignment=int:64", small, out_s, "Q8_0"]);
    assert!(ok.status.success(), "{ok:?}");
    for dry in [true, false] {
        let mut args = vec!["quantize", "--override-kv", "general.alignment=int:48", small, out_s, "Q8_0"];
        if dry {
            args.insert(1, "--dry-run");
        }
        let o = gguf(&args);
        assert_eq!(o.status.code(), Some(1), "dry run {dry}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("general.alignment is 48, not a power of two"), "dry run {dry}: {err}");
        // Named as the option, not by an offset of the output that was never written.
        assert!(err.contains("--override-kv general.alignment") && !err.contains("of the output"), "{err}");
        assert!(!out.exists());
    }
    // A float or a bool is not a u32, whatever its value.
    for v in ["float:64", "bool:true", "str:64"] {
        let o = gguf(&["quantize", "--override-kv", &format!("general.alignment={v}"), small, out_s, "Q8_0"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{v}: {err}");
        assert!(err.contains("general.alignment has type") && err.contains("expected u32"), "{v}: {err}");
        assert!(!out.exists());
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no temporary file is left");
}

/// A one-layer llama-like model (F32 `token_embd`, `blk.0.ffn_down`, `blk.0.attn_q`, 256 wide)
/// and an importance matrix GGUF (as llama-imatrix writes one) with an entry for `ffn_down`
/// only, both written into `dir`.
fn model_and_imatrix(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    use gguf_serde::GgufWriter;
    let model = dir.join("m.gguf");
    let mut w = GgufWriter::create(&model).unwrap();
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("llama.block_count", 1u32).unwrap();
    let names = ["token_embd.weight", "blk.0.attn_q.weight", "blk.0.ffn_down.weight"];
    for n in names {
        w.add_tensor_ne(n, GgmlType::F32, &[256, 2]).unwrap();
    }
    for (i, _) in names.iter().enumerate() {
        let data: Vec<u8> = (0..512).flat_map(|j| ((j * 7 + i) as f32 / 100.0 - 2.0).to_le_bytes()).collect();
        w.write_tensor_data(&data).unwrap();
    }
    w.commit().unwrap();
    let imatrix = dir.join("im.gguf");
    let mut w = GgufWriter::create(&imatrix).unwrap();
    w.add_kv("general.type", "imatrix").unwrap();
    w.add_kv("imatrix.datasets", vec!["text.txt".to_owned()]).unwrap();
    w.add_kv("imatrix.chunk_count", 1u32).unwrap();
    w.add_kv("imatrix.chunk_size", 64u32).unwrap();
    w.add_tensor_ne("blk.0.ffn_down.weight.in_sum2", GgmlType::F32, &[256, 1]).unwrap();
    w.add_tensor_ne("blk.0.ffn_down.weight.counts", GgmlType::F32, &[1, 1]).unwrap();
    let sums: Vec<u8> = (0..256).flat_map(|j| (1.0 + j as f32).to_le_bytes()).collect();
    w.write_tensor_data(&sums).unwrap();
    w.write_tensor_data(&4f32.to_le_bytes()).unwrap();
    w.commit().unwrap();
    (model, imatrix)
}

/// `--dry-run` with `--imatrix` shows, per tensor, whether it is quantized with the matrix's
/// weights; when `--include-weights` leaves no entry, the command says so before a type that
/// needs a matrix is refused (llama-quantize goes on as without one, and so refuses Q2_K_S).
#[test]
fn dry_run_shows_the_importance_matrix_entries() {
    let dir = temp_dir("cli_quantize_dry_imatrix");
    let (model, imatrix) = model_and_imatrix(&dir);
    let (m, im) = (model.to_str().unwrap(), imatrix.to_str().unwrap());
    let o = gguf(&["quantize", "--dry-run", "--imatrix", im, m, "Q4_K_M"]);
    assert!(o.status.success(), "{o:?}");
    let text = String::from_utf8(o.stdout).unwrap();
    let column = |name: &str| -> String {
        let line = text.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no {name}: {text}"));
        line.split_whitespace().nth(4).unwrap().to_owned()
    };
    assert!(text.lines().next().unwrap().contains("imatrix"), "{text}");
    assert_eq!(column("blk.0.ffn_down.weight"), "yes", "{text}");
    assert_eq!(column("blk.0.attn_q.weight"), "no", "{text}");
    // Without --imatrix there is no such column.
    let plain = String::from_utf8(gguf(&["quantize", "--dry-run", m, "Q4_K_M"]).stdout).unwrap();
    assert!(!plain.lines().next().unwrap().contains("imatrix"), "{plain}");

    let o = gguf(&["quantize", "--dry-run", "--imatrix", im, "--include-weights", "nothing", m, "Q2_K_S"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no entry is left after --include-weights/--exclude-weights"), "{err}");
    assert!(err.contains("requires an importance matrix"), "{err}");
    // The hint says what to do with the matrix given, not to give one.
    assert!(err.contains("--include-weights/--exclude-weights left no entry of"), "{err}");
    assert!(!err.contains("give one with --imatrix"), "{err}");
    // With the entry kept, Q2_K_S goes through as far as the matrix goes.
    let o = gguf(&["quantize", "--dry-run", "--imatrix", im, m, "Q2_K_S"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("no entry is left"), "{err}");
}

/// An output that cannot be created (its folder does not exist) is named once, with the
/// operating system's reason and no temporary file name; with `--keep-split`, by the shard.
#[test]
fn an_unwritable_output_is_named_once() {
    let small = crate::small_path();
    let dir = temp_dir("cli_quantize_unwritable");
    let out = dir.join("no-such-folder").join("q.gguf");
    for keep_split in [false, true] {
        let mut args = vec!["quantize", "-q", small.to_str().unwrap(), out.to_str().unwrap(), "Q8_0"];
        if keep_split {
            args.insert(1, "--keep-split");
        }
        let o = gguf(&args);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        let named = if keep_split { dir.join("no-such-folder/q-00001-of-00001.gguf") } else { out.clone() };
        let named = named.display().to_string();
        assert_eq!(err.matches(&named).count(), 1, "{err}");
        assert!(err.contains("No such file or directory"), "{err}");
        assert!(!err.contains(".gguf-tmp-") && !err.contains("NNNNN"), "{err}");
    }
}

/// Usage errors found after parsing (exit 2, as clap's): a file type or thread count that is no
/// such thing, a missing file type, options that exclude each other, a malformed
/// `--tensor-type-file` entry. A missing input is named once; `dequantize` refuses a shard of a
/// split model (it would write an orphan shard under a plain name) and names the merge to run.
#[test]
fn usage_errors_after_parsing_exit_2() {
    let small = crate::small_path();
    let s = small.to_str().unwrap();
    let dir = temp_dir("cli_quantize_usage");
    let out = dir.join("o.gguf");
    let o_s = out.to_str().unwrap();
    let tt = dir.join("tt.txt");
    std::fs::write(&tt, "attn_v=q8_0\nattn_(v=q8_0\n").unwrap();
    let im = dir.join("im.dat");
    std::fs::write(&im, [0u8; 8]).unwrap();
    for (args, says) in [
        (vec!["quantize", s, o_s, "Q9_Z"], "unknown file type \"Q9_Z\""),
        (vec!["quantize", s, o_s, "--type", "q9_z"], "unknown file type \"q9_z\""),
        (vec!["quantize", s], "missing the file type"),
        (vec!["quantize", s, o_s, "Q8_0", "abc"], "invalid nthread \"abc\""),
        (vec!["quantize", s, o_s, "Q8_0", "3", "--threads", "2"], "two thread counts"),
        (
            vec![
                "quantize",
                s,
                o_s,
                "Q8_0",
                "--imatrix",
                im.to_str().unwrap(),
                "--include-weights",
                "a",
                "--exclude-weights",
                "b",
            ],
            "cannot be used together",
        ),
        (
            vec!["quantize", s, o_s, "Q8_0", "--tensor-type-file", tt.to_str().unwrap()],
            "tensor type pattern \"attn_(v\"",
        ),
    ] {
        let o = gguf(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!out.exists());
    }
    let missing = dir.join("no-such-model.gguf");
    let o = gguf(&["quantize", missing.to_str().unwrap(), o_s, "Q8_0"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&o.stderr).matches("no-such-model.gguf").count(), 1, "{o:?}");

    let prefix = dir.join("sp");
    let o = gguf(&["split", "--split-max-tensors", "1", s, prefix.to_str().unwrap()]);
    assert!(o.status.success(), "{o:?}");
    let first = dir.join("sp-00001-of-00003.gguf");
    let o = gguf(&["dequantize", first.to_str().unwrap(), o_s]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("shard 1 of a model split into 3 files") && err.contains("gguf merge"), "{err}");
    assert!(!out.exists());
}

/// `dequantize` refuses to write over its input (even with --force) or an existing file without
/// --force, as `quantize` does; `split --split-max-tensors 0` and an empty IN or OUT of `quantize`
/// are usage errors, a second file type beside --type is named as such, and a merge that cannot
/// create its output names the output.
#[test]
fn outputs_are_not_replaced_by_surprise() {
    let small = crate::small_path();
    let dir = temp_dir("cli_dequantize_force");
    let input = dir.join("in.gguf");
    std::fs::copy(&small, &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let (i, out) = (input.to_str().unwrap(), dir.join("out.gguf"));
    let o_s = out.to_str().unwrap();
    for force in [false, true] {
        let mut args = vec!["dequantize", "-q", i, i];
        if force {
            args.push("--force");
        }
        let o = gguf(&args);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("input and output files are the same"), "{o:?}");
        assert_eq!(std::fs::read(&input).unwrap(), before, "the input was changed");
    }
    std::fs::write(&out, b"mine").unwrap();
    let o = gguf(&["dequantize", "-q", i, o_s]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("exists (use --force to replace it)"), "{o:?}");
    assert_eq!(std::fs::read(&out).unwrap(), b"mine");
    assert!(gguf(&["dequantize", "-q", "--force", i, o_s]).status.success());
    assert!(Gguf::open(&out).is_ok());

    let o = gguf(&["split", "--split-max-tensors", "0", "no-such-file.gguf", dir.join("sp").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("--split-max-tensors"), "{o:?}");
    for args in [vec!["quantize", i, "", "Q8_0"], vec!["quantize", "", o_s, "Q8_0"]] {
        let o = gguf(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("an empty argument"), "{o:?}");
    }
    let o = gguf(&["quantize", i, dir.join("q.gguf").to_str().unwrap(), "Q8_0", "--type", "Q4_0"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("two file types: Q8_0 and --type Q4_0"), "{o:?}");

    let prefix = dir.join("sp");
    assert!(gguf(&["split", "--split-max-tensors", "1", i, prefix.to_str().unwrap()]).status.success());
    let merged = dir.join("no-such-folder").join("m.gguf");
    let o = gguf(&["merge", dir.join("sp-00001-of-00003.gguf").to_str().unwrap(), merged.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains(merged.to_str().unwrap()), "{o:?}");
}

/// `--tensor-type` and `--tensor-type-file` rules are taken in command-line order across both
/// options, a file's rules at its place, as llama-quantize (`tools/quantize/quantize.cpp`)
/// collects them; the first matching rule wins. Each case's plan is llama-quantize's `--dry-run`
/// choice, and the files are byte-identical.
#[test]
fn quantize_takes_tensor_type_rules_in_command_line_order() {
    use super::not_utf8::{llama_dry_run, our_dry_run, run_in, tiny_llama};
    use std::ffi::OsStr;
    let Some(lq) = gguf_tests::llama_quantize() else { return };
    let dir = temp_dir("quantize-rule-order");
    tiny_llama(&dir.join("m.gguf"));
    std::fs::write(dir.join("a.txt"), "attn=q8_0").unwrap();
    std::fs::write(dir.join("b.txt"), "ffn=q5_1\nattn=q4_1").unwrap();
    let ours = std::path::PathBuf::from(env!("CARGO_BIN_EXE_gguf"));
    let cases: [&[&str]; 4] = [
        &["--tensor-type-file", "a.txt", "--tensor-type", "attn=q5_0"],
        &["--tensor-type", "attn=q5_0", "--tensor-type-file", "a.txt"],
        &["--tensor-type", "ffn=q5_0", "--tensor-type-file", "b.txt", "--tensor-type-file", "a.txt"],
        &["--tensor-type-file", "a.txt", "--tensor-type", "ffn=q8_0", "--tensor-type-file", "b.txt"],
    ];
    let mut seen = Vec::new();
    for opts in cases {
        let with = |pre: &[&str], post: &[&str]| -> Vec<std::ffi::OsString> {
            pre.iter().chain(opts).chain(post).map(|a| a.into()).collect()
        };
        fn os(v: &[std::ffi::OsString]) -> Vec<&OsStr> {
            v.iter().map(|a| a.as_os_str()).collect()
        }
        let theirs = run_in(&dir, &lq, &os(&with(&["--dry-run"], &["m.gguf", "Q4_0"])));
        let mine = run_in(&dir, &ours, &os(&with(&["quantize", "--dry-run"], &["m.gguf", "Q4_0"])));
        let want = llama_dry_run(&[theirs.stdout, theirs.stderr].concat());
        assert_eq!(want.len(), 6, "{opts:?}: {want:?}");
        assert_eq!(our_dry_run(&mine.stdout), want, "{opts:?}");
        seen.push(want);
        run_in(&dir, &lq, &os(&with(&[], &["m.gguf", "theirs.gguf", "Q4_0", "2"])));
        run_in(&dir, &ours, &os(&with(&["quantize", "-q", "--force"], &["m.gguf", "ours.gguf", "Q4_0", "2"])));
        let (a, b) = (std::fs::read(dir.join("theirs.gguf")).unwrap(), std::fs::read(dir.join("ours.gguf")).unwrap());
        assert!(a == b, "{opts:?}: files differ (sizes {} and {})", a.len(), b.len());
    }
    // The order matters in each pair of cases: the plans differ.
    assert_ne!(seen[0], seen[1]);
    assert_ne!(seen[2], seen[3]);
}

/// `--override-kv KEY=float:X` reads X as llama-quantize does, with C's `atof` (glibc's
/// `strtod`), then writes it as FLOAT32: hexadecimal floats (`0x1p3` is 8, `0X.8p1` 1), `inf`,
/// `nan` (and their signs; a NaN's payload `nan(0x4000000000000)`, as glibc reads it and C's
/// conversion to float keeps its top bits), an exponent without digits left out (`1e` is 1), leading white space
/// skipped (` 2.5`, `\v3`), a value past the FLOAT32 range infinity. Each value is the one C gives
/// (`(float)atof(X)`, computed with glibc), and the file is byte-identical to llama-quantize's.
#[test]
fn override_kv_reads_floats_as_llama_quantize() {
    use std::ffi::OsStr;
    let dir = temp_dir("override-kv-atof");
    super::not_utf8::tiny_llama(&dir.join("m.gguf"));
    // The text and the bits of `(float)atof(text)` in glibc.
    let cases: [(&str, u32); 18] = [
        ("0x1p3", 0x41000000),
        ("0X.8p1", 0x3f800000),
        ("inf", 0x7f800000),
        ("nan", 0x7fc00000),
        ("1e", 0x3f800000),
        (" 2.5", 0x40200000),
        ("-nan", 0xffc00000),
        ("-inf", 0xff800000),
        ("INFINITY", 0x7f800000),
        ("0x1p-149", 0x00000001),
        ("1e39", 0x7f800000),
        ("-0x", 0x80000000),
        ("0x1.fffffefffffffp127", 0x7f7fffff),
        ("\x0b3", 0x40400000),
        ("nan(0x4000000000000)", 0x7fe00000),
        ("-nan(0x4000000000000)", 0xffe00000),
        ("nan(0xfffffffffffff)", 0x7fffffff),
        ("nan(abc)", 0x7fc00000),
    ];
    let ovs: Vec<String> = cases.iter().enumerate().map(|(i, (text, _))| format!("o.f{i}=float:{text}")).collect();
    let args = |out: &'static str| {
        let mut a: Vec<&OsStr> = Vec::new();
        for ov in &ovs {
            a.extend([OsStr::new("--override-kv"), OsStr::new(ov)]);
        }
        a.extend([OsStr::new("m.gguf"), OsStr::new(out), OsStr::new("Q8_0")]);
        a
    };
    let ours = std::path::PathBuf::from(env!("CARGO_BIN_EXE_gguf"));
    super::not_utf8::run_in(
        &dir,
        &ours,
        &[&[OsStr::new("quantize"), OsStr::new("-q")][..], &args("ours.gguf")].concat(),
    );
    let f = Gguf::open(dir.join("ours.gguf")).unwrap();
    for (i, (text, bits)) in cases.iter().enumerate() {
        match f.get(format!("o.f{i}").as_str()) {
            Some(ValueRef::F32(x)) => assert_eq!(x.to_bits(), *bits, "{text:?}: {x}"),
            other => panic!("{text:?}: {other:?}"),
        }
    }
    let Some(lq) = gguf_tests::llama_quantize() else { return };
    super::not_utf8::run_in(&dir, &lq, &args("theirs.gguf"));
    let (a, b) = (std::fs::read(dir.join("theirs.gguf")).unwrap(), std::fs::read(dir.join("ours.gguf")).unwrap());
    assert!(a == b, "files differ (sizes {} and {})", a.len(), b.len());
}
