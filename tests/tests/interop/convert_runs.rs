//! llama.cpp runs what `gguf convert` writes, and computes what the checkpoint means.
//!
//! For each of the seven tiny seeded checkpoints of the converter references (Llama 2, Mistral,
//! Gemma 3, Phi-3 with SentencePiece; Llama 3, Qwen2, Qwen3 with BPE; remade without torch by
//! `gguf_tests::convert_refs::make_convert_case`): `gguf_serde::convert` at `--outtype f32` (the
//! output is `convert_hf_to_gguf.py`'s, byte for byte: its sha256 is the reference's), ggml's own
//! reader reads it as ours does (`gguf_tests::ggml_read`), libllama loads it and evaluates
//! [`IDS`] then greedy-generates [`N_GEN`] tokens (`tests/harness/llama_run.c --logits-out`: F32 K
//! and V caches, flash attention off, the float logits of every position), and
//! `tests/py/hf_forward.py`, an independent float64 numpy forward pass of the checkpoint's
//! safetensors as transformers defines each architecture, gives the logits of the same ids
//! (prompt + generated): every logit of every position within [`TOL`], and each generated token
//! the argmax of the numpy logits before it.
//!
//! Gemma 3, two facts of llama.cpp (its source: `src/models/gemma3.cpp`, `ggml/src/ggml-cpu/vec.h`):
//! - which layers slide: transformers follows `config.json`'s `layer_types` (here `sliding`,
//!   `full`); llama.cpp reads `gemma3.attention.sliding_window_pattern` and, without it (the
//!   converter does not write it), takes 6: layer `i` slides unless `i % 6 == 5`, as in every
//!   released Gemma 3, but not in this 2-layer checkpoint, whose layer 1 would get the sliding
//!   layers' RoPE base (10,000 instead of 1,000,000; logits off by up to 0.09). So llama.cpp runs
//!   a copy with the key set to the pattern that `layer_types` follows (2), rewritten by
//!   `gguf_serde::ops::edit`: the key is the only change.
//! - GELU: ggml's CPU GELU (and GEGLU) is a table (`GGML_GELU_FP16`, defined unconditionally):
//!   the input rounded to F16, its tanh GELU stored as F16. No setting turns that off, so the
//!   numpy pass is compared twice: with `--ggml-gelu` (the same F16 rounding, else transformers'
//!   math) within [`TOL`], and with transformers' exact GELU within [`GEMMA_EXACT_GELU_TOL`]
//!   (measured: 2.6e-4).
//!
//! The layout cases (made from how transformers saves the family: `tests/data/hf-layouts/`), for
//! the architectures converted so far (`gguf_tests::convert_refs::CONVERTED_LAYOUT_ARCHITECTURES`):
//! no numpy forward pass; the oracle is transformers itself, run on the same checkpoint (float32,
//! eager attention) when the references were made, recorded in the manifest
//! (`gguf_tests::convert_refs::transformers_logits`): its greedy continuation of the prompt and,
//! for every position of prompt + continuation, the 32 largest logits, 32 logits at ids evenly
//! spread over the vocabulary, and the whole row's sum and Euclidean norm. llama.cpp evaluates
//! the same ids on our F32 output (the reference's file, byte for byte); every recorded logit
//! must be within [`TOL`] ([`GEMMA_EXACT_GELU_TOL`] for Gemma 2, whose GELU ggml takes from its F16
//! table; [`MXFP4_TOL`] for the MXFP4 gpt-oss, whose experts ggml multiplies with activations
//! quantized to Q8_0), the sum and norm within the tolerance times the square root of the vocabulary size
//! (the norm of a difference of at most the tolerance per logit bounds the norm's change), and
//! each token transformers generated llama.cpp's argmax too unless the two are within twice the
//! largest difference seen. Measured on the reference's own F32 outputs when recording: at most
//! 3.6e-7 per logit (Gemma 2: 1.2e-4, gpt-oss 7.2e-6, gpt-oss with MXFP4 experts 1.6e-3), every
//! generated token the same; except DeepSeek-V3, whose file as converted lacks the router's
//! gating key (see [`ORACLE_DIVERGES`]): with that one key set in a copy, 2.4e-7.
//!
//! A metadata override (`gguf convert --metadata FILE`, `ConvertOptions::metadata_override`):
//! ggml's reader reads every key it sets, those only an override gives among them
//! (`general.url`, `general.doi`, `general.uuid`, `general.repo_url`, `general.quantized_by`),
//! with the type and value the reference writes, compared with lines written from the expected
//! values alone (`gguf_tests::ggml_read::ggml_kv_line`), and the whole file as ours reads it.
//!
//! A split conversion (`gguf convert --split-max-size`, `ConvertOptions::split_max_size`): the
//! shards are byte for byte what `llama-gguf-split --split-max-size` makes of the unsplit file,
//! ggml's reader reads each as ours does, and llama.cpp loads the model from its first shard with
//! the same logits, bit for bit, as from the unsplit file.

use std::io::Write as _;
use std::path::Path;

use gguf_serde::convert::{convert, plan, write_plan, Checkpoint, ConvertOptions, OutType};
use gguf_serde::ops::edit::{rewrite_file, Edit};
use gguf_serde::{Array, Value};
use gguf_tests::convert_refs::{
    convert_ref, convert_ref_cases, converted_cases, layout_class, make_convert_case, pending_cases,
    transformers_logits,
};
use gguf_tests::ggml_read::{assert_ggml_reads_as_we_do, ggml_kv_line, ggml_read_dump};
use gguf_tests::{llama_run_harness, llama_run_logits, llama_tool, python, run_py_text, sha256};
use serde_json::Value as Json;

/// The prompt: eight ids within every case's vocabulary (Llama 2's 32,000 is the smallest).
const IDS: [u32; 8] = [1, 100, 2000, 300, 4000, 50, 600, 7000];

/// Tokens generated greedily after the prompt.
const N_GEN: usize = 4;

/// The largest difference allowed between llama.cpp's float32 logits and the numpy pass's.
const TOL: f64 = 1e-4;

/// Gemma 3 against transformers' exact tanh GELU, which ggml computes through an F16 table (see
/// the module docs): ten times [`TOL`], about four times the difference measured.
const GEMMA_EXACT_GELU_TOL: f64 = 1e-3;

/// An MXFP4 checkpoint (`tiny-gpt-oss-mxfp4`): the experts stay MXFP4 in the F32 output, and
/// ggml's CPU multiplies an MXFP4 matrix by first quantizing the activations to Q8_0
/// (`ggml-cpu.c`: MXFP4's `vec_dot_type` is Q8_0; 32 values per block, a scale of amax / 127
/// rounded to F16, values rounded to 8 bits: up to 0.4 % of a block's largest value each), where
/// transformers multiplies the dequantized weights (the same numbers: MXFP4 values are exact in
/// both) by float32 activations. Measured: 1.6e-3 at most over the recorded logits (largest
/// |logit| 0.75), every generated token the same. The tolerance is about four times that, and
/// four times below what a change of the weights by their quantization error does: transformers'
/// logits on the BF16 weights `tiny-gpt-oss` was quantized from differ from these by up to 0.023.
const MXFP4_TOL: f64 = 6e-3;

/// `tests/py/hf_forward.py` on `dir` for `ids`: the logits of every position, float64.
fn hf_forward(py: &Path, dir: &Path, ids: &[u32], ggml_gelu: bool, out: &Path) -> Vec<Vec<f64>> {
    let cfg: Json = serde_json::from_slice(&std::fs::read(dir.join("config.json")).unwrap()).unwrap();
    let vocab = cfg["vocab_size"].as_u64().expect("vocab_size") as usize;
    let (d, o) = (dir.to_string_lossy().into_owned(), out.to_string_lossy().into_owned());
    let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
    let mut args: Vec<&str> = vec!["--out", &o];
    if ggml_gelu {
        args.push("--ggml-gelu");
    }
    args.push(&d);
    args.extend(ids.iter().map(String::as_str));
    run_py_text(py, "hf_forward.py", &args);
    let bytes = std::fs::read(out).unwrap();
    std::fs::remove_file(out).unwrap();
    assert_eq!(bytes.len(), ids.len() * vocab * 8, "hf_forward.py wrote {} bytes", bytes.len());
    let v: Vec<f64> = bytes.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect();
    v.chunks_exact(vocab).map(<[f64]>::to_vec).collect()
}

/// The largest |llama - numpy| over every logit of every row.
fn max_abs_diff(llama: &[Vec<f32>], numpy: &[Vec<f64>]) -> f64 {
    assert_eq!(llama.len(), numpy.len(), "rows");
    let mut m = 0f64;
    for (a, b) in llama.iter().zip(numpy) {
        assert_eq!(a.len(), b.len(), "libllama's n_vocab is not config.json's vocab_size");
        for (&x, &y) in a.iter().zip(b) {
            let d = (f64::from(x) - y).abs();
            assert!(d.is_finite(), "a non-finite logit ({x} vs {y})");
            m = m.max(d);
        }
    }
    m
}

/// Each generated token is the argmax of the numpy logits of the position before it, or within
/// `2 * diff` of it (a near-tie that a difference of `diff` per logit can reorder).
fn check_greedy(case: &str, numpy: &[Vec<f64>], generated: &[u32], diff: f64) -> Result<(), String> {
    for (k, &g) in generated.iter().enumerate() {
        let row = &numpy[IDS.len() - 1 + k];
        let best = (0..row.len()).fold(0, |b, i| if row[i] > row[b] { i } else { b });
        let gap = row[best] - row[g as usize];
        if best != g as usize && gap > 2.0 * diff {
            return Err(format!(
                "{case}: generated token {k} is {g}, the numpy argmax is {best} (logit higher by {gap:e})"
            ));
        }
    }
    Ok(())
}

/// For Gemma 3, the `gemma3.attention.sliding_window_pattern` that makes llama.cpp slide the
/// layers `config.json`'s `layer_types` slides (llama.cpp: layer `i` slides iff `i % n < n - 1`),
/// or `None` if its default (6) already does.
fn gemma3_swa_pattern(cfg: &Json) -> Option<u32> {
    let types: Vec<bool> = cfg["layer_types"]
        .as_array()
        .expect("layer_types")
        .iter()
        .map(|t| t.as_str() == Some("sliding_attention"))
        .collect();
    let slides = |n: usize| (0..types.len()).map(|i| i % n < n - 1).collect::<Vec<bool>>();
    if slides(6) == types {
        return None;
    }
    let n = types.iter().position(|&s| !s).expect("a full-attention layer") + 1;
    assert_eq!(slides(n), types, "layer_types follows no pattern llama.cpp can express with one number");
    Some(n as u32)
}

#[test]
fn llama_cpp_runs_converted_checkpoints_as_transformers_defines_them() {
    let Some(harness) = llama_run_harness() else { return };
    let Some(py) = python() else { return };
    // The hand-written cases: hf_forward.py knows their architectures; the layout cases have
    // transformers' own logits instead (the next test).
    let cases: Vec<String> = convert_ref_cases().into_iter().filter(|c| layout_class(c).is_none()).collect();
    assert_eq!(cases.len(), 7, "cases: {cases:?}");
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for case in &cases {
        let Some(dir) = make_convert_case(case) else { return };
        let cfg: Json = serde_json::from_slice(&std::fs::read(dir.join("config.json")).unwrap()).unwrap();
        // The reference's file: the model card's front matter, read as the CLI reads it, names it.
        let card = gguf_tests::convert_refs::model_card(&dir);
        let out = dir.tmp.join("f32.gguf");
        let opts = ConvertOptions { model_card: card.as_ref(), ..ConvertOptions::new(OutType::F32) };
        convert(&*dir, &out, &opts).unwrap_or_else(|e| panic!("{case}: {e:?}"));
        let digest = sha256(&std::fs::read(&out).unwrap());
        assert_eq!(
            Some(digest.as_str()),
            convert_ref(case, "f32")["sha256"].as_str(),
            "{case}: not the reference's file"
        );
        assert_ggml_reads_as_we_do(&harness, &out);

        let mut run_file = out.clone();
        if cfg["model_type"] == "gemma3_text" {
            if let Some(n) = gemma3_swa_pattern(&cfg) {
                run_file = dir.tmp.join("f32-swa-pattern.gguf");
                let key = "gemma3.attention.sliding_window_pattern".to_string();
                rewrite_file(&out, &run_file, &[Edit::Set { key: key.into(), value: Value::U32(n) }]).unwrap();
            }
        }
        let (run, llama) = llama_run_logits(&harness, &run_file, &IDS, N_GEN).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(llama.len(), IDS.len() + N_GEN);
        let ids: Vec<u32> = IDS.iter().chain(&run.generated).copied().collect();
        let gemma = cfg["model_type"] == "gemma3_text";
        let numpy = hf_forward(&py, &dir, &ids, gemma, &dir.tmp.join("hf.f64"));
        let diff = max_abs_diff(&llama, &numpy);
        let mut line = format!("{case}: max |llama.cpp - numpy| {diff:.3e}");
        if diff > TOL {
            failures.push(format!("{case}: max abs diff {diff:e} > {TOL:e}"));
        }
        if let Err(e) = check_greedy(case, &numpy, &run.generated, diff) {
            failures.push(e);
        }
        if gemma {
            let exact = hf_forward(&py, &dir, &ids, false, &dir.tmp.join("hf.f64"));
            let d = max_abs_diff(&llama, &exact);
            line.push_str(&format!(" (ggml's F16 GELU table emulated); {d:.3e} with transformers' exact GELU"));
            if d > GEMMA_EXACT_GELU_TOL {
                failures.push(format!("{case}: exact GELU: max abs diff {d:e} > {GEMMA_EXACT_GELU_TOL:e}"));
            }
            if let Err(e) = check_greedy(case, &exact, &run.generated, d) {
                failures.push(format!("exact GELU: {e}"));
            }
        }
        line.push_str(&format!("; generated {:?}", run.generated));
        // Straight to the standard error, past libtest's capture: the differences are the result.
        let _ = writeln!(std::io::stderr(), "convert_runs: {line}");
        report.push(line);
    }
    assert!(failures.is_empty(), "{}\nall cases:\n{}", failures.join("\n"), report.join("\n"));
}

/// Layout cases whose reference file (which ours must equal byte for byte) llama.cpp does not run
/// as transformers computes: the case, the reason, and the one key that, set in a copy of the file
/// (`gguf_serde::ops::edit`), makes llama.cpp compute what transformers computes. The test asserts
/// that the file as converted still differs, so that a fix in llama.cpp's converter shows here,
/// and that the copy with the key agrees within [`TOL`], so that the key is all that differs.
const ORACLE_DIVERGES: &[(&str, &str, &str, u32)] = &[
    ("tiny-DeepSeek-V3", DEEPSEEK_V3_GATING, "deepseek2.expert_gating_func", 2),
    ("tiny-DeepSeek-V3-FP8", DEEPSEEK_V3_GATING, "deepseek2.expert_gating_func", 2),
];

/// Why llama.cpp does not run a transformers-saved DeepSeek-V3 as transformers does; the key that
/// fixes it is gguf-py's `ExpertGatingFuncType.SIGMOID` (2).
const DEEPSEEK_V3_GATING: &str = "transformers' DeepseekV3Config has no `scoring_func` (its router is \
     always sigmoid), so config.json as transformers saves it has none and convert_hf_to_gguf.py \
     writes no deepseek2.expert_gating_func; llama.cpp then gates with softmax (measured: up to 0.1 \
     per logit)";

/// One layout case's F32 conversion run by llama.cpp against transformers' recorded logits (see
/// the module docs), with the key `edit` set in a copy first when given; `Err` lists what differs.
/// Returns the report line.
fn layout_case_against_transformers(
    harness: &Path,
    case: &str,
    edit: Option<(&str, u32)>,
) -> Option<Result<String, String>> {
    let dir = make_convert_case(case)?;
    let cfg: Json = serde_json::from_slice(&std::fs::read(dir.join("config.json")).unwrap()).unwrap();
    let mut out = dir.tmp.join("f32.gguf");
    convert(&*dir, &out, &ConvertOptions::new(OutType::F32)).unwrap_or_else(|e| panic!("{case}: {e:?}"));
    let digest = sha256(&std::fs::read(&out).unwrap());
    assert_eq!(Some(digest.as_str()), convert_ref(case, "f32")["sha256"].as_str(), "{case}: not the reference's file");
    assert_ggml_reads_as_we_do(harness, &out);
    if let Some((key, value)) = edit {
        let edited = dir.tmp.join("f32-edited.gguf");
        rewrite_file(&out, &edited, &[Edit::Set { key: key.into(), value: Value::U32(value) }]).unwrap();
        out = edited;
    }

    let tf = transformers_logits(case);
    let ids_of = |key: &str| -> Vec<u32> {
        tf[key].as_array().expect("ids").iter().map(|v| v.as_u64().expect("id") as u32).collect()
    };
    let (prompt, generated) = (ids_of("prompt"), ids_of("generated"));
    let rows = tf["rows"].as_array().expect("rows");
    let n_vocab = tf["n_vocab"].as_u64().expect("n_vocab") as usize;
    // The whole sequence transformers evaluated is the prompt, so that llama.cpp's rows are those
    // of the same ids whatever it would generate; one more token is generated (and ignored).
    let ids: Vec<u32> = prompt.iter().chain(&generated).copied().collect();
    assert_eq!(rows.len(), ids.len(), "{case}: rows");
    let (_, llama) = llama_run_logits(harness, &out, &ids, 1).unwrap_or_else(|e| panic!("{case}: {e}"));
    let mxfp4 = cfg["quantization_config"]["quant_method"] == "mxfp4";
    let tol = if cfg["model_type"] == "gemma2" {
        GEMMA_EXACT_GELU_TOL
    } else if mxfp4 {
        MXFP4_TOL
    } else {
        TOL
    };
    let mut errors = Vec::new();
    let mut diff = 0f64;
    for (r, (row, want)) in llama.iter().zip(rows).enumerate() {
        assert_eq!(row.len(), n_vocab, "{case}: libllama's n_vocab");
        for (ids_key, values_key) in [("top_ids", "top_values"), ("probe_ids", "probe_values")] {
            let ids = want[ids_key].as_array().expect("ids");
            let values = want[values_key].as_array().expect("values");
            for (id, v) in ids.iter().zip(values) {
                let (id, v) = (id.as_u64().expect("id") as usize, v.as_f64().expect("value"));
                let d = (f64::from(row[id]) - v).abs();
                assert!(d.is_finite(), "{case}: row {r}: a non-finite logit at {id}");
                diff = diff.max(d);
            }
        }
        let bound = tol * (n_vocab as f64).sqrt();
        let sum: f64 = row.iter().map(|&x| f64::from(x)).sum();
        let l2 = row.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>().sqrt();
        for (what, ours, theirs) in [("sum", sum, &want["sum"]), ("norm", l2, &want["l2"])] {
            let theirs = theirs.as_f64().expect("number");
            if (ours - theirs).abs() > bound {
                errors.push(format!("{case}: row {r}: {what} {ours} vs transformers' {theirs} (bound {bound:e})"));
            }
        }
    }
    if diff > tol {
        errors.push(format!("{case}: max |llama.cpp - transformers| {diff:e} > {tol:e}"));
    }
    for (k, &g) in generated.iter().enumerate() {
        let row = &llama[prompt.len() - 1 + k];
        let best = (0..row.len()).fold(0, |b, i| if row[i] > row[b] { i } else { b });
        let gap = f64::from(row[best]) - f64::from(row[g as usize]);
        if best != g as usize && gap > 2.0 * diff.max(f64::EPSILON) {
            errors.push(format!(
                "{case}: transformers generated {g} at step {k}, llama.cpp's argmax is {best} (higher by {gap:e})"
            ));
        }
    }
    let line =
        format!("{case}: max |llama.cpp - transformers| {diff:.3e} over the recorded logits; generated {generated:?}");
    Some(if errors.is_empty() { Ok(line) } else { Err(format!("{}\n{line}", errors.join("\n"))) })
}

/// llama.cpp on our conversion of each converted layout case computes transformers' logits (see
/// the module docs). The pending layout cases (no converter yet) are not run: the test
/// `pending_layout_cases_do_not_convert` checks that they do not convert.
#[test]
fn llama_cpp_runs_converted_layout_cases_as_transformers_computes() {
    let Some(harness) = llama_run_harness() else { return };
    let cases: Vec<String> = converted_cases().into_iter().filter(|c| layout_class(c).is_some()).collect();
    let pending: Vec<String> = pending_cases().into_iter().map(|(c, a)| format!("{c} ({a})")).collect();
    let _ = writeln!(std::io::stderr(), "convert_runs: layout cases pending a converter: {}", pending.join(", "));
    let mut failures = Vec::new();
    for case in &cases {
        let diverges = ORACLE_DIVERGES.iter().find(|(c, ..)| c == case);
        match (layout_case_against_transformers(&harness, case, None), diverges) {
            (None, _) => return,
            (Some(Ok(line)), None) => {
                let _ = writeln!(std::io::stderr(), "convert_runs: {line}");
            }
            (Some(Err(e)), None) => failures.push(e),
            (Some(Ok(line)), Some(_)) => {
                failures.push(format!("{line}\n{case} now agrees with transformers: remove it from ORACLE_DIVERGES"))
            }
            (Some(Err(e)), Some(&(_, why, key, value))) => {
                let _ = writeln!(std::io::stderr(), "convert_runs: {case}: differs as expected ({why}):\n{e}");
                match layout_case_against_transformers(&harness, case, Some((key, value))) {
                    None => return,
                    Some(Ok(line)) => {
                        let _ = writeln!(std::io::stderr(), "convert_runs: with {key} = {value}: {line}");
                    }
                    Some(Err(e)) => failures.push(format!("{case} with {key} = {value}: {e}")),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// ggml reads each key a metadata override sets with the type and value the reference writes
/// (gguf-py's `Metadata.set_gguf_meta_model`: strings, the sampling keys as i32 or f32, the lists
/// as counts and per-entry strings, tags and languages as arrays of strings); the file is the
/// Llama 2 case converted as `gguf convert --metadata FILE` converts it (model card included),
/// under its default name.
#[test]
fn ggml_reads_every_key_of_a_metadata_override() {
    let Some(harness) = llama_run_harness() else { return };
    if python().is_none() {
        return;
    }
    let case = "tiny-Llama-2-chat-hf";
    let Some(dir) = make_convert_case(case) else { return };
    let card = gguf_tests::convert_refs::model_card(&dir);
    // The string keys (override-only ones included) with a value each, one with bytes ggml_read
    // escapes (space, quote, backslash, UTF-8).
    let strings = [
        ("general.name", "Override Name"),
        ("general.author", "An Author"),
        ("general.version", "v3"),
        ("general.organization", "Some Org"),
        ("general.finetune", "chat"),
        ("general.basename", "Zed"),
        ("general.description", "From the \"override\": \\ é ✓"),
        ("general.quantized_by", "someone"),
        ("general.size_label", "7B"),
        ("general.license.name", "tiny licence"),
        ("general.license.link", "https://example.org/licence"),
        ("general.url", "https://example.org/zed"),
        ("general.doi", "10.1234/zed"),
        ("general.uuid", "2a6b9f0e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"),
        ("general.repo_url", "https://example.org/zed.git"),
        ("general.source.url", "https://example.org/source"),
        ("general.source.doi", "10.1234/source"),
        ("general.source.uuid", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"),
        ("general.source.repo_url", "https://example.org/source.git"),
        ("general.sampling.sequence", "kt"),
    ];
    let mut json = serde_json::Map::new();
    for (k, v) in strings {
        json.insert(k.to_owned(), Json::String(v.to_owned()));
    }
    let extra = serde_json::json!({
        "general.sampling.top_k": 40, "general.sampling.temp": 0.7, "general.sampling.mirostat": 2,
        "general.sampling.mirostat_eta": 0.1,
        "general.base_models": [{"name": "Base", "organization": "Org", "repo_url": "https://example.org/base"}],
        "general.datasets": [{"name": "Data", "url": "https://example.org/data"}],
        "general.tags": ["override-tag", "two"], "general.languages": ["en", "fr"]
    });
    json.extend(extra.as_object().expect("an object").clone());
    let meta = Json::Object(json);
    let mut expected: Vec<(&str, Value)> = strings.iter().map(|(k, v)| (*k, Value::String((*v).to_owned()))).collect();
    let s = |v: &str| Value::String(v.to_owned());
    let tags = |v: &[&str]| Value::Array(Array::String(v.iter().map(|x| (*x).to_owned()).collect()));
    expected.extend([
        ("general.sampling.top_k", Value::I32(40)),
        ("general.sampling.temp", Value::F32(0.7)),
        ("general.sampling.mirostat", Value::I32(2)),
        ("general.sampling.mirostat_eta", Value::F32(0.1)),
        ("general.base_model.count", Value::U32(1)),
        ("general.base_model.0.name", s("Base")),
        ("general.base_model.0.organization", s("Org")),
        ("general.base_model.0.repo_url", s("https://example.org/base")),
        ("general.dataset.count", Value::U32(1)),
        ("general.dataset.0.name", s("Data")),
        ("general.dataset.0.url", s("https://example.org/data")),
        ("general.tags", tags(&["override-tag", "two"])),
        ("general.languages", tags(&["en", "fr"])),
    ]);

    let ckpt = Checkpoint::open(&*dir).unwrap();
    let opts = ConvertOptions {
        model_card: card.as_ref(),
        metadata_override: Some(&meta),
        ..ConvertOptions::new(OutType::F32)
    };
    let p = plan(&ckpt, &opts).unwrap_or_else(|e| panic!("{case}: {e:?}"));
    let name = p.default_file_name().unwrap();
    assert_eq!(name, "Zed-7B-chat-v3-F32.gguf");
    let out = dir.tmp.join(&name);
    write_plan(&p, &out, &opts).unwrap_or_else(|e| panic!("{case}: {e:?}"));

    let dump = ggml_read_dump(&harness, &out);
    let mut missing = Vec::new();
    for (key, value) in &expected {
        let want = ggml_kv_line(key, value);
        let prefix = format!("kv {key} ");
        let got: Vec<&String> = dump.iter().filter(|l| l.starts_with(&prefix)).collect();
        match got.as_slice() {
            [line] if **line == want => {}
            _ => missing.push(format!("{key}: ggml read {got:?}, expected {want:?}")),
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    // ggml's reading of the whole file (header, every key, every tensor's data) is ours.
    assert_ggml_reads_as_we_do(&harness, &out);
}

/// `gguf convert --split-max-size` of the Llama 2 case at F32, the limit a whole number of MB above
/// its largest tensor: the shards are `llama-gguf-split --split --split-max-size`'s of the
/// unsplit file at the same limit, byte for byte; ggml reads
/// each shard as ours does; llama.cpp, given the first shard, loads every shard and computes the
/// unsplit file's logits bit for bit and generates its tokens.
#[test]
fn a_split_conversion_is_llama_gguf_split_and_runs() {
    let Some(harness) = llama_run_harness() else { return };
    let Some(tool) = llama_tool("llama-gguf-split") else { return };
    let Some(dir) = make_convert_case("tiny-Llama-2-chat-hf") else { return };
    let whole = dir.tmp.join("whole.gguf");
    let report = convert(&*dir, &whole, &ConvertOptions::new(OutType::F32)).unwrap();
    assert_eq!(report.files, std::slice::from_ref(&whole));
    // A limit in whole MB (llama-gguf-split's unit) above the largest tensor: llama-gguf-split
    // refuses a first tensor over the limit (its first shard would be empty).
    let largest = gguf_serde::Gguf::open(&whole).unwrap().tensors().map(|t| t.nbytes).max().unwrap();
    let mb = largest.div_ceil(1_000_000) + 1;
    let split_opts = ConvertOptions { split_max_size: Some(mb * 1_000_000), ..ConvertOptions::new(OutType::F32) };
    let split = convert(&*dir, dir.tmp.join("ours.gguf"), &split_opts).unwrap();
    let n = split.files.len();
    assert!(n >= 2, "{n} shards of {} bytes at {mb} MB", std::fs::metadata(&whole).unwrap().len());

    let prefix = dir.tmp.join("llama");
    let o = std::process::Command::new(&tool)
        .args(["--split", "--split-max-size", &format!("{mb}M")])
        .arg(&whole)
        .arg(&prefix)
        .output()
        .unwrap();
    assert!(o.status.success(), "llama-gguf-split: {}", String::from_utf8_lossy(&o.stderr));
    let theirs = gguf_tests::shards_of(&dir.tmp, "llama");
    assert_eq!(theirs.len(), n, "llama-gguf-split made {theirs:?}");
    for (i, (ours, theirs)) in split.files.iter().zip(&theirs).enumerate() {
        let (a, b) = (std::fs::read(ours).unwrap(), std::fs::read(dir.tmp.join(theirs)).unwrap());
        assert!(a == b, "shard {} of {n}: {} differs from llama-gguf-split's {theirs}", i + 1, ours.display());
        assert_ggml_reads_as_we_do(&harness, ours);
    }

    let (run_whole, logits_whole) = llama_run_logits(&harness, &whole, &IDS, N_GEN).unwrap();
    let (run_split, logits_split) = llama_run_logits(&harness, &split.files[0], &IDS, N_GEN).unwrap();
    assert_eq!(run_split.generated, run_whole.generated);
    let bits = |l: &[Vec<f32>]| l.iter().flatten().map(|x| x.to_bits()).collect::<Vec<u32>>();
    assert!(bits(&logits_split) == bits(&logits_whole), "the split model's logits differ from the unsplit file's");
}
