//! `gguf_serde::ops::quantize::plan_file_type` and `ops::requant::requantize` against llama.cpp's own
//! `llama-quantize` (found by `gguf_tests::llama_quantize`): the type it chose for each tensor
//! (its `--dry-run` log) equals our plan for every file type, with and without `--pure`; the
//! files it writes are byte-identical to ours where we have the quantizers, also with an
//! importance matrix made by `llama-imatrix` (GGUF and legacy `.dat`, `--include-weights`,
//! `--exclude-weights`), and the plans with one are its `--dry-run --imatrix` plans.
//!
//! The sources are the real models dequantized to F32 (and the quantized originals, which
//! llama-quantize takes with `--allow-requantize`). In `scripts/test.sh` only SmolLM2-135M runs:
//! every plan of the whole model, the files of one file type of each codec family and plan branch
//! from its first 4 layers ([`SUITE_LAYERS`]) and two whole-model files requantized from the
//! original; the same files of the whole model, its ten IQ1/IQ2/IQ3 file types and Gemma 3 270M
//! run nightly (`scripts/test-nightly.sh`; `scripts/quantize-matrix.sh` runs the Gemma 3 ones).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use gguf_serde::ops::dequantize::{dequantize, DequantizeOptions};
use gguf_serde::ops::file_type::LlamaFileType;
use gguf_serde::ops::imatrix::Imatrix;
use gguf_serde::ops::kv_override::KvOverride;
use gguf_serde::ops::quantize::{plan_file_type, QuantizeParams, TensorTypeOverride};
use gguf_serde::ops::requant::requantize;
use gguf_serde::{GgmlType, Gguf, ImatrixProblem};
use gguf_tests::{llama_quantize, model, workspace_root};

/// A folder shared by this file's tests (the F32 models are made once).
pub(super) fn work() -> &'static Path {
    static W: OnceLock<PathBuf> = OnceLock::new();
    W.get_or_init(|| {
        let d = workspace_root().join("target/test-tmp/quantize_llama");
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

/// `name` dequantized to F32 with `convert` (as `gguf dequantize`), made once per run.
fn f32_model(name: &str) -> Option<PathBuf> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let src = model(name)?;
    let out = work().join(format!("{name}.f32.gguf"));
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !out.exists() {
        let f = Gguf::open(&src).unwrap();
        let tmp = work().join(format!("{name}.f32.tmp.gguf"));
        dequantize(&f, &tmp, &DequantizeOptions::new(GgmlType::F32)).unwrap();
        std::fs::rename(&tmp, &out).unwrap();
    }
    Some(out)
}

/// [`f32_model`] cut to its first `n` layers (`blk.N.` tensors with `N < n`, and
/// `{arch}.block_count` = `n`), which llama-quantize takes like the whole model; made once per run.
fn f32_layers(name: &str, n: u32) -> Option<PathBuf> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let full = f32_model(name)?;
    let out = work().join(format!("{name}.f32.{n}-layers.gguf"));
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !out.exists() {
        gguf_tests::cut_layers(&full, &out, n);
    }
    Some(out)
}

const SMOLLM2: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
const GEMMA: &str = "gemma-3-270m-q4_k_m.gguf";

/// llama-quantize's `--dry-run` choice for each tensor, `(name, ggml type name upper-cased)` in
/// its order; `None` if it fails.
fn llama_plan(lq: &Path, input: &Path, ftype: &str, pure: bool) -> Option<Vec<(String, String)>> {
    llama_plan_with(lq, input, ftype, if pure { &["--pure"] } else { &[] })
}

/// [`llama_plan`] with the options `args` (e.g. `--imatrix FILE`).
pub(super) fn llama_plan_with(lq: &Path, input: &Path, ftype: &str, args: &[&str]) -> Option<Vec<(String, String)>> {
    let mut cmd = Command::new(lq);
    cmd.arg("--dry-run").args(args);
    let o = cmd.arg(input).arg(ftype).output().expect("running llama-quantize");
    if !o.status.success() {
        return None;
    }
    // "[  12/ 272] blk.0.attn_v.weight - [ 576, 64, 1, 1], type = f32, size = 0.141 MiB -> 0.037 MiB (q5_0)"
    // or, when kept, "... type = f32, size = 0.002 MiB".
    let log = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    let mut v = Vec::new();
    for line in log.lines().filter(|l| l.starts_with('[') && l.contains("] ")) {
        let Some((_, rest)) = line.split_once("] ") else { continue };
        let Some(name) = rest.split_whitespace().next() else { continue };
        let Some((_, ty)) = rest.split_once("type = ") else { continue };
        let src = ty.split(',').next().unwrap_or_default().trim();
        let target = match rest.rsplit_once('(') {
            Some((_, t)) if rest.ends_with(')') => t.trim_end_matches(')'),
            _ => src,
        };
        v.push((name.to_owned(), target.to_ascii_uppercase()));
    }
    assert!(!v.is_empty(), "no tensor lines in llama-quantize's log:\n{log}");
    Some(v)
}

pub(super) fn our_plan(input: &Path, p: &QuantizeParams) -> gguf_serde::Result<Vec<(String, String)>> {
    let f = Gguf::open(input).unwrap();
    let plan = plan_file_type(&f, p)?.into_iter();
    Ok(plan.map(|t| (String::from_utf8_lossy(&t.name).into_owned(), t.target.name().to_ascii_uppercase())).collect())
}

/// Every file type, with and without --pure: our plan is llama-quantize's (or both fail).
fn plans_equal_for_every_file_type(input: &Path) {
    let Some(lq) = llama_quantize() else { return };
    let mut compared = 0;
    for &ft in LlamaFileType::ALL {
        for pure in [false, true] {
            let mut p = QuantizeParams::new(ft);
            p.pure = pure;
            let ours = our_plan(input, &p);
            match llama_plan(&lq, input, ft.name(), pure) {
                Some(theirs) => {
                    let ours =
                        ours.unwrap_or_else(|e| panic!("{ft} pure={pure}: we fail ({e}), llama-quantize does not"));
                    assert_eq!(ours, theirs, "{ft} pure={pure}: per-tensor types differ");
                    compared += 1;
                }
                None => assert!(ours.is_err(), "{ft} pure={pure}: llama-quantize fails, we do not"),
            }
        }
    }
    assert!(compared >= 60, "only {compared} plans compared");
}

#[test]
fn smollm2_plans_equal_llama_quantize_for_every_file_type() {
    let Some(input) = f32_model(SMOLLM2) else { return };
    plans_equal_for_every_file_type(&input);
}

#[test]
#[ignore = "Gemma 3 at every file type takes minutes: run with --ignored, or scripts/quantize-matrix.sh"]
fn gemma_plans_equal_llama_quantize_for_every_file_type() {
    let Some(input) = f32_model(GEMMA) else { return };
    plans_equal_for_every_file_type(&input);
}

/// Runs llama-quantize `args` (options, then IN OUT TYPE 2) and our `requantize` with `p` on 2
/// threads; asserts both files are byte-identical.
pub(super) fn same_file(lq: &Path, input: &Path, tag: &str, args: &[&str], ftype: &str, p: &QuantizeParams) {
    let (theirs, ours) = (work().join(format!("{tag}.llama.gguf")), work().join(format!("{tag}.ours.gguf")));
    let start = std::time::Instant::now();
    let o = Command::new(lq).args(args).arg(input).arg(&theirs).arg(ftype).arg("2").output().unwrap();
    assert!(o.status.success(), "llama-quantize {tag}: {}", String::from_utf8_lossy(&o.stderr));
    let theirs_s = start.elapsed().as_secs_f64();
    let f = Gguf::open(input).unwrap();
    let mut p = p.clone();
    p.threads = Some(2);
    let start = std::time::Instant::now();
    requantize(&f, &ours, &p, None).unwrap_or_else(|e| panic!("{tag}: {e}"));
    // Seen with --nocapture: the IQ types are slow in both tools.
    eprintln!("{tag}: llama-quantize {theirs_s:.1} s, ours {:.1} s (2 threads each)", start.elapsed().as_secs_f64());
    let (a, b) = (std::fs::read(&theirs).unwrap(), std::fs::read(&ours).unwrap());
    let first = a.iter().zip(&b).position(|(x, y)| x != y);
    assert!(a == b, "{tag}: files differ (sizes {} and {}, first differing byte {first:?})", a.len(), b.len());
    let _ = std::fs::remove_file(&theirs);
    let _ = std::fs::remove_file(&ours);
}

fn params(ft: LlamaFileType, pure: bool) -> QuantizeParams {
    let mut p = QuantizeParams::new(ft);
    p.pure = pure;
    p
}

/// The SmolLM2 layers the per-commit byte-identity tests quantize: its first 4 (and the tensors
/// outside the layers, `token_embd` the largest). Every rule of these cases is reached there: the
/// plan's layer rules (`use_more_bits`: the first and last eighth and every third layer between,
/// here layers 2 and 3 against 0 and 1) and each codec on every tensor shape the model has. The plans
/// of the whole model are compared at every file type by
/// `smollm2_plans_equal_llama_quantize_for_every_file_type`, and whole-model files by
/// `requantizing_the_quantized_original_gives_llama_quantizes_bytes`; the same cases on the whole
/// model run nightly (the `smollm2_whole_model_*` tests).
const SUITE_LAYERS: u32 = 4;

/// One file type of each codec family and plan branch through both tools, byte-identical files:
/// Q8_0 (a legacy block codec for every matrix), Q4_K_M (the k-quant mix of the plan), Q4_K_M
/// `--pure`, IQ4_XS (the IQ4 codecs, with the IQ4_NL fallback of the 576-wide rows), MXFP4_MOE
/// (no expert tensors: the dense matrices' types); then the options (`--tensor-type` with a
/// case-insensitive regex, `--token-embedding-type`, `--override-kv`) and COPY.
fn files_cases(lq: &Path, input: &Path, tag: &str) {
    use LlamaFileType as F;
    for (ft, pure) in
        [(F::Q8_0, false), (F::Q4_K_M, false), (F::Q4_K_M, true), (F::IQ4_XS, false), (F::MXFP4_MOE, false)]
    {
        let args: &[&str] = if pure { &["--pure"] } else { &[] };
        same_file(lq, input, &format!("{tag}-{ft}-{pure}"), args, ft.name(), &params(ft, pure));
    }
    let mut p = QuantizeParams::new(LlamaFileType::Q5_K_S);
    // Layers 0 and 1 only: the other layers' ffn_down keep the plan's type.
    p.tensor_types = vec![
        TensorTypeOverride::parse("attn_v=q8_0").unwrap(),
        TensorTypeOverride::parse("BLK\\.[0-1]\\.ffn_down=q6_k").unwrap(),
    ];
    p.token_embedding_type = Some(GgmlType::Q4_0);
    p.kv_overrides = vec![
        KvOverride::parse("general.name=str:renamed").unwrap(),
        KvOverride::parse("test.count=int:-12").unwrap(),
        KvOverride::parse("general.file_type=int:99").unwrap(),
    ];
    let args = [
        "--tensor-type",
        "attn_v=q8_0",
        "--tensor-type",
        "BLK\\.[0-1]\\.ffn_down=q6_k",
        "--token-embedding-type",
        "q4_0",
        "--override-kv",
        "general.name=str:renamed",
        "--override-kv",
        "test.count=int:-12",
        "--override-kv",
        "general.file_type=int:99",
    ];
    same_file(lq, input, &format!("{tag}-options"), &args, "Q5_K_S", &p);
    // COPY rewrites in llama-quantize's layout and keeps general.file_type.
    let mut p = QuantizeParams::new(LlamaFileType::F32);
    p.only_copy = true;
    same_file(lq, input, &format!("{tag}-copy"), &[], "COPY", &p);
}

/// [`files_cases`] on SmolLM2's first [`SUITE_LAYERS`] layers.
#[test]
fn smollm2_files_are_byte_identical_to_llama_quantize() {
    let Some(lq) = llama_quantize() else { return };
    let Some(input) = f32_layers(SMOLLM2, SUITE_LAYERS) else { return };
    files_cases(&lq, &input, "smollm2");
}

#[test]
#[ignore = "nightly (scripts/test-nightly.sh): the suite's smollm2_files_are_byte_identical_to_llama_quantize on the whole SmolLM2"]
fn smollm2_whole_model_files_are_byte_identical_to_llama_quantize() {
    let Some(lq) = llama_quantize() else { return };
    let Some(input) = f32_model(SMOLLM2) else { return };
    files_cases(&lq, &input, "smollm2-whole");
}

#[test]
fn requantizing_the_quantized_original_gives_llama_quantizes_bytes() {
    let Some(lq) = llama_quantize() else { return };
    let Some(input) = model(SMOLLM2) else { return };
    for ft in [LlamaFileType::Q8_0, LlamaFileType::Q4_K_M] {
        same_file(&lq, &input, &format!("smollm2-q4_1-{ft}"), &["--allow-requantize"], ft.name(), &params(ft, false));
    }
}

#[test]
#[ignore = "five Gemma 3 quantizations take minutes: run with --ignored, or scripts/quantize-matrix.sh"]
fn gemma_files_are_byte_identical_to_llama_quantize() {
    let Some(lq) = llama_quantize() else { return };
    let Some(input) = f32_model(GEMMA) else { return };
    use LlamaFileType as F;
    for (ft, pure) in [(F::Q4_K_M, false), (F::Q3_K_M, false), (F::Q2_K, true), (F::TQ2_0, false), (F::Q6_K, false)] {
        let args: &[&str] = if pure { &["--pure"] } else { &[] };
        same_file(&lq, &input, &format!("gemma-{ft}-{pure}"), args, ft.name(), &params(ft, pure));
    }
    let Some(orig) = model(GEMMA) else { return };
    same_file(&lq, &orig, "gemma-q4_k_m-q8_0", &["--allow-requantize"], "Q8_0", &params(F::Q8_0, false));
}

#[test]
fn types_needing_an_importance_matrix_are_refused_as_llama_quantize_does() {
    let Some(lq) = llama_quantize() else { return };
    let Some(input) = f32_model(SMOLLM2) else { return };
    let f = Gguf::open(&input).unwrap();
    for ft in [LlamaFileType::IQ2_XXS, LlamaFileType::Q2_K_S, LlamaFileType::IQ1_M] {
        let theirs = work().join(format!("imatrix-{ft}.llama.gguf"));
        let o = Command::new(&lq).arg(&input).arg(&theirs).arg(ft.name()).output().unwrap();
        assert!(!o.status.success(), "llama-quantize {ft} without an imatrix succeeded");
        let log = String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
        assert!(log.contains("this quantization requires an importance matrix!"), "{log}");
        let offending = log.split("offending tensor: ").nth(1).and_then(|s| s.split_whitespace().next()).unwrap();
        let target = log.split("target type: ").nth(1).and_then(|s| s.split_whitespace().next()).unwrap();
        let ours = work().join(format!("imatrix-{ft}.ours.gguf"));
        let e = requantize(&f, &ours, &QuantizeParams::new(ft), None).unwrap_err();
        let msg = e.to_string();
        assert!(e.as_quantize().is_some(), "{e:?}");
        assert!(msg.contains("requires an importance matrix"), "{msg}");
        assert!(msg.contains(&format!("offending tensor: {offending},")), "{msg} (llama-quantize: {offending})");
        assert!(msg.to_lowercase().contains(&format!("target type: {}", target.to_lowercase())), "{msg}");
        assert!(!ours.exists() && !theirs.exists());
    }
}

/// The fixed text `llama-imatrix` reads: 400 words, so that two 64-token chunks fill.
pub(super) fn imatrix_text() -> PathBuf {
    let p = work().join("imatrix-text.txt");
    if !p.exists() {
        let words: Vec<&str> =
            "the quick brown fox jumps over the lazy dog while a small model reads plain text about rivers \
             mountains numbers and cities"
                .split_whitespace()
                .collect();
        let text: Vec<&str> = (0..400).map(|i| words[(i * 7) % words.len()]).collect();
        std::fs::write(&p, text.join(" ") + "\n").unwrap();
    }
    p
}

/// An importance matrix of `model` (a file in `models/`) made by llama.cpp's `llama-imatrix` on
/// [`imatrix_text`] (2 chunks of 64 tokens, 2 threads, about 10 s), in its GGUF format (`dat`
/// false) or the legacy `.dat` format; made once per run. `None` (after a skip) without
/// llama.cpp or the model.
fn llama_imatrix(model_name: &str, dat: bool) -> Option<PathBuf> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let tool = gguf_tests::llama_tool("llama-imatrix")?;
    let src = model(model_name)?;
    let out = work().join(format!("{model_name}.imatrix.{}", if dat { "dat" } else { "gguf" }));
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !out.exists() {
        let tmp = work().join(format!("{model_name}.imatrix.tmp"));
        let o = Command::new(tool)
            .arg("-m")
            .arg(&src)
            .arg("-f")
            .arg(imatrix_text())
            .arg("-o")
            .arg(&tmp)
            .args(["--output-format", if dat { "dat" } else { "gguf" }])
            .args(["-c", "64", "--chunks", "2", "-t", "2", "--no-ppl"])
            .output()
            .unwrap();
        assert!(o.status.success(), "llama-imatrix: {}", String::from_utf8_lossy(&o.stderr));
        std::fs::rename(&tmp, &out).unwrap();
    }
    Some(out)
}

/// `params(ft, false)` with the importance matrix at `path` after `--exclude-weights`
/// `exclude` and `--include-weights` `include`, as `gguf quantize` loads it.
pub(super) fn imatrix_params(ft: LlamaFileType, path: &Path, include: &[&str], exclude: &[&str]) -> QuantizeParams {
    let mut m = Imatrix::open(path).unwrap();
    let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    m.exclude(&own(exclude));
    m.include_only(&own(include));
    let mut p = params(ft, false);
    p.imatrix = Some(std::sync::Arc::new(m));
    p
}

/// llama-quantize `--imatrix` against ours on `input`, each case `(file type, imatrix, extra
/// llama-quantize options and the --include-weights / --exclude-weights they mean)`.
fn imatrix_cases(lq: &Path, input: &Path, tag: &str, gguf: &Path, dat: &Path) {
    use LlamaFileType as F;
    let im = |p: &Path| p.to_str().unwrap().to_owned();
    let cases: Vec<(F, &Path, Vec<&str>, Vec<&str>)> = vec![
        (F::Q4_K_M, gguf, vec![], vec![]),
        (F::Q4_0, gguf, vec![], vec![]),
        (F::IQ4_XS, gguf, vec![], vec![]),
        (F::Q4_K_M, dat, vec![], vec![]),
    ];
    for (ft, path, include, exclude) in cases {
        let mut args = vec!["--imatrix".to_owned(), im(path)];
        args.extend(include.iter().flat_map(|s| ["--include-weights".to_owned(), s.to_string()]));
        args.extend(exclude.iter().flat_map(|s| ["--exclude-weights".to_owned(), s.to_string()]));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let ext = path.extension().unwrap().to_str().unwrap();
        same_file(
            lq,
            input,
            &format!("{tag}-imatrix-{ext}-{ft}"),
            &args,
            ft.name(),
            &imatrix_params(ft, path, &include, &exclude),
        );
    }
}

/// [`imatrix_cases`], Q2_K_S (which needs a matrix) and `--include-weights` /
/// `--exclude-weights` on `input` (SmolLM2 or a cut of it), with the whole model's matrices from
/// `llama-imatrix`.
fn smollm2_imatrix_cases(input: &Path, tag: &str) {
    let Some(lq) = llama_quantize() else { return };
    let (Some(gguf), Some(dat)) = (llama_imatrix(SMOLLM2, false), llama_imatrix(SMOLLM2, true)) else { return };
    imatrix_cases(&lq, input, tag, &gguf, &dat);
    use LlamaFileType as F;
    let im = gguf.to_str().unwrap();
    // Q2_K_S needs an importance matrix; --include-weights / --exclude-weights pick the entries.
    same_file(
        &lq,
        input,
        &format!("{tag}-imatrix-Q2_K_S"),
        &["--imatrix", im],
        "Q2_K_S",
        &imatrix_params(F::Q2_K_S, &gguf, &[], &[]),
    );
    same_file(
        &lq,
        input,
        &format!("{tag}-imatrix-exclude"),
        &["--imatrix", im, "--exclude-weights", "ffn_down", "--exclude-weights", "attn_v"],
        "Q5_0",
        &imatrix_params(F::Q5_0, &gguf, &[], &["ffn_down", "attn_v"]),
    );
    let dat_s = dat.to_str().unwrap();
    same_file(
        &lq,
        input,
        &format!("{tag}-imatrix-include"),
        &["--imatrix", dat_s, "--include-weights", "blk.1.", "--include-weights", "attn_q"],
        "Q3_K_M",
        &imatrix_params(F::Q3_K_M, &dat, &["blk.1.", "attn_q"], &[]),
    );
}

/// [`smollm2_imatrix_cases`] on SmolLM2's first [`SUITE_LAYERS`] layers (the matrix has entries
/// for all 30: both tools use those of the tensors the file has).
#[test]
fn smollm2_with_an_importance_matrix_is_byte_identical_to_llama_quantize() {
    let Some(input) = f32_layers(SMOLLM2, SUITE_LAYERS) else { return };
    smollm2_imatrix_cases(&input, "smollm2");
}

#[test]
#[ignore = "nightly (scripts/test-nightly.sh): the suite's smollm2_with_an_importance_matrix_is_byte_identical_to_llama_quantize on the whole SmolLM2"]
fn smollm2_whole_model_with_an_importance_matrix_is_byte_identical_to_llama_quantize() {
    let Some(input) = f32_model(SMOLLM2) else { return };
    smollm2_imatrix_cases(&input, "smollm2-whole");
}

/// The IQ1/IQ2/IQ3 file types with llama-imatrix's importance matrix: `types` through both
/// tools, byte-identical files; from SmolLM2's first `layers` layers (all 30 when `None`).
fn iq_cases(types: &[LlamaFileType], layers: Option<u32>) {
    let Some(lq) = llama_quantize() else { return };
    let Some(input) = (match layers {
        Some(n) => f32_layers(SMOLLM2, n),
        None => f32_model(SMOLLM2),
    }) else {
        return;
    };
    let Some(gguf) = llama_imatrix(SMOLLM2, false) else { return };
    let im = gguf.to_str().unwrap();
    for &ft in types {
        let p = imatrix_params(ft, &gguf, &[], &[]);
        same_file(&lq, &input, &format!("smollm2-imatrix-{ft}"), &["--imatrix", im], ft.name(), &p);
    }
}

/// One file type of each family, whose grid quantizers ggml requires weights for or not: IQ2_XXS
/// (IQ2_XXS, IQ2_XS and k-quant tensors), IQ3_XS (IQ3_XXS and IQ3_S) and IQ1_M (IQ1_M, IQ2_XXS,
/// IQ3_S), on SmolLM2's first 4 layers: the whole model takes 50–100 s per file type and tool on
/// 2 busy cores (most of it the IQ4_NL fallback of the 576-wide rows); all ten file types on the
/// whole model run with --ignored.
#[test]
fn smollm2_iq_file_types_with_an_importance_matrix_are_byte_identical_to_llama_quantize() {
    use LlamaFileType as F;
    iq_cases(&[F::IQ2_XXS, F::IQ3_XS, F::IQ1_M], Some(SUITE_LAYERS));
}

#[test]
#[ignore = "ten IQ1/IQ2/IQ3 quantizations of the whole SmolLM2 take about 25 minutes: run with --ignored"]
fn smollm2_every_iq_file_type_with_an_importance_matrix_is_byte_identical_to_llama_quantize() {
    use LlamaFileType as F;
    let all =
        [F::IQ2_XXS, F::IQ2_XS, F::IQ2_S, F::IQ2_M, F::IQ3_XXS, F::IQ3_XS, F::IQ3_S, F::IQ3_M, F::IQ1_S, F::IQ1_M];
    iq_cases(&all, None);
}

/// With an importance matrix the mix rules change (IQ3_XXS `attn_v`/`ffn_down`, IQ4_NL/IQ4_XS
/// and Q4_0/Q5_0 `ffn_down`): our plan is llama-quantize's `--dry-run --imatrix` for every file
/// type.
#[test]
fn smollm2_plans_with_an_importance_matrix_equal_llama_quantize() {
    let Some(lq) = llama_quantize() else { return };
    let Some(input) = f32_model(SMOLLM2) else { return };
    let Some(gguf) = llama_imatrix(SMOLLM2, false) else { return };
    let mut compared = 0;
    for &ft in LlamaFileType::ALL {
        let p = imatrix_params(ft, &gguf, &[], &[]);
        let ours = our_plan(&input, &p);
        match llama_plan_with(&lq, &input, ft.name(), &["--imatrix", gguf.to_str().unwrap()]) {
            Some(theirs) => {
                let ours = ours.unwrap_or_else(|e| panic!("{ft}: we fail ({e}), llama-quantize does not"));
                assert_eq!(ours, theirs, "{ft} with an imatrix: per-tensor types differ");
                compared += 1;
            }
            None => assert!(ours.is_err(), "{ft}: llama-quantize fails, we do not"),
        }
    }
    assert!(compared >= 30, "only {compared} plans compared");
}

#[test]
#[ignore = "four Gemma 3 quantizations with an importance matrix take minutes: run with --ignored"]
fn gemma_with_an_importance_matrix_is_byte_identical_to_llama_quantize() {
    let Some(lq) = llama_quantize() else { return };
    let Some(input) = f32_model(GEMMA) else { return };
    let (Some(gguf), Some(dat)) = (llama_imatrix(GEMMA, false), llama_imatrix(GEMMA, true)) else { return };
    imatrix_cases(&lq, &input, "gemma", &gguf, &dat);
}

/// Each kind of broken importance matrix: llama-quantize refuses it too (or would misread it),
/// and ours gives the typed error before writing anything.
#[test]
fn a_broken_importance_matrix_is_refused_by_both() {
    let Some(lq) = llama_quantize() else { return };
    let Some(input) = f32_model(SMOLLM2) else { return };
    let Some(dat) = llama_imatrix(SMOLLM2, true) else { return };
    let good = std::fs::read(&dat).unwrap();
    let dir = gguf_tests::temp_dir("imatrix_broken");
    // Cut inside the first entry's values; and the first value made NaN.
    let name_len = i32::from_le_bytes(good[4..8].try_into().unwrap()) as usize;
    let first_value = 4 + 4 + name_len + 8;
    let mut nan = good.clone();
    nan[first_value..first_value + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    for (case, bytes) in [("truncated", good[..first_value + 6].to_vec()), ("nan", nan)] {
        let path = dir.join(format!("{case}.dat"));
        std::fs::write(&path, &bytes).unwrap();
        let theirs = dir.join(format!("{case}.llama.gguf"));
        let o = Command::new(&lq).arg("--imatrix").arg(&path).arg(&input).arg(&theirs).arg("Q4_K_M").output().unwrap();
        assert!(!o.status.success(), "llama-quantize accepted the {case} imatrix");
        let e = Imatrix::open(&path).unwrap_err();
        let problem = match e.as_quantize() {
            Some(gguf_serde::QuantizeError::Imatrix { problem, .. }) => problem.clone(),
            _ => panic!("{case}: {e:?}"),
        };
        match case {
            "truncated" => assert!(matches!(problem, ImatrixProblem::Truncated { .. }), "{problem:?}"),
            _ => assert!(matches!(problem, ImatrixProblem::NonFinite { index: 0, .. }), "{problem:?}"),
        }
    }
}
