//! llama.cpp loads and runs the files we write: its own loader and CPU inference (libllama of
//! `scripts/build-llama.sh`, through the `tests/harness/llama_run.c` harness, `gguf_tests::llama_run`)
//! on Gemma 3 270M and on every kind of copy gguf-serde makes of it. The oracle is llama.cpp
//! running the original file: a copy whose tensor data is the original's (rewritten, edited,
//! re-aligned, split, merged) gives bit-identical logits at every step (their FNV-1a hashes and
//! the top logits' bit patterns) and the same greedy tokens. Quantized copies load and generate;
//! where our file is byte-identical to `llama-quantize`'s, the tokens are those of its file.
//! A file missing a tensor the architecture needs does not load.
//!
//! Every run evaluates [`PROMPT`] (8 token ids) and generates 8 tokens on 2 threads, n_ctx 64;
//! runs are serialised (`gguf_tests::llama_run`), a few seconds each.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use gguf_serde::container::IfExists;
use gguf_serde::ops::edit::{rewrite_file, Edit};
use gguf_serde::ops::file_type::LlamaFileType;
use gguf_serde::ops::quantize::QuantizeParams;
use gguf_serde::ops::requant::requantize;
use gguf_serde::ops::split::{merge_file, split_file, SplitBy, SplitOptions};
use gguf_serde::{Gguf, GgufWriter, Value, WriteOptions};
use gguf_tests::{llama_quantize, llama_run, llama_run_harness, model, rewrite, temp_dir, LlamaRun};

const GEMMA: &str = "gemma-3-270m-q4_k_m.gguf";

/// Gemma 3's `<bos>` (id 2), then seven ordinary text tokens.
const PROMPT: [u32; 8] = [2, 818, 5279, 529, 7001, 563, 496, 2173];

/// Tokens generated per run.
const N_GEN: usize = 8;

/// The harness and the original model, or `None` after a skip.
fn setup() -> Option<(PathBuf, PathBuf)> {
    let harness = llama_run_harness()?;
    let original = model(GEMMA)?;
    Some((harness, original))
}

/// llama.cpp's run of the original file, made once: the oracle of every test here.
fn oracle(harness: &Path, original: &Path) -> &'static LlamaRun {
    static ORACLE: OnceLock<LlamaRun> = OnceLock::new();
    ORACLE.get_or_init(|| {
        let run = llama_run(harness, original, &PROMPT, N_GEN).unwrap_or_else(|e| panic!("the original: {e}"));
        // The facts the comparison rests on: the vocabulary is Gemma 3's, and each generated
        // token is the argmax of the logits before it.
        let f = Gguf::open(original).unwrap();
        let tokens = f.get("tokenizer.ggml.tokens").and_then(|v| v.as_array().map(|a| a.len() as usize));
        assert_eq!(Some(run.n_vocab), tokens, "libllama's n_vocab is not the tokenizer's length");
        assert_eq!(run.n_vocab, 262_144);
        let argmaxes: Vec<u32> = run.logits[..N_GEN].iter().map(|&(_, a)| a).collect();
        assert_eq!(run.generated, argmaxes);
        assert_eq!(run.top.len(), 5);
        assert_eq!(run.top[0].0, run.generated[0]);
        run
    })
}

/// Runs `file` and asserts llama.cpp computes exactly what it computes from the original.
fn assert_runs_as_original(harness: &Path, original: &Path, file: &Path, what: &str) {
    let expected = oracle(harness, original);
    let got = llama_run(harness, file, &PROMPT, N_GEN).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(got.generated, expected.generated, "{what}: greedy tokens differ from the original's");
    assert_eq!(got.top, expected.top, "{what}: top logits differ from the original's");
    assert_eq!(got.logits, expected.logits, "{what}: logits are not bit-identical to the original's");
}

#[test]
fn llama_cpp_runs_the_original_deterministically() {
    let Some((harness, original)) = setup() else { return };
    let first = oracle(&harness, &original);
    // A second run of the same file gives the same bits: the comparisons below mean something.
    let again = llama_run(&harness, &original, &PROMPT, N_GEN).unwrap();
    assert_eq!(&again, first);
}

#[test]
fn rewritten_edited_and_realigned_copies_run_as_the_original() {
    let Some((harness, original)) = setup() else { return };
    let dir = temp_dir("llama-run-copies");
    let f = Gguf::open(&original).unwrap();
    // Byte-rewritten through the writer (every key through an owned `Value`).
    let bytes = rewrite(&f, true);
    assert!(bytes.len() as u64 == f.file_len(), "rewrite changed the size");
    let p = dir.join("rewritten.gguf");
    std::fs::write(&p, bytes).unwrap();
    assert_runs_as_original(&harness, &original, &p, "rewritten");
    std::fs::remove_file(&p).unwrap();
    // Edited as `gguf set`, `gguf rename`, `gguf rm` do: keys llama.cpp does not need.
    let edited = dir.join("edited.gguf");
    let edits = [
        Edit::Set { key: "general.name".into(), value: Value::from("Gemma 3 270M, edited") },
        Edit::Set { key: "gguf_serde.test.note".into(), value: Value::from("added by a test") },
        Edit::Rename { from: "general.license".into(), to: "general.license.name".into() },
        Edit::Remove { key: "general.size_label".into() },
    ];
    rewrite_file(&original, &edited, &edits).unwrap();
    let e = Gguf::open(&edited).unwrap();
    assert!(e.get("general.size_label").is_none() && e.get("general.license.name").is_some());
    assert_runs_as_original(&harness, &original, &edited, "edited");
    std::fs::remove_file(&edited).unwrap();
    // Re-aligned: general.alignment set to 1024 (the original has none: 32), the data laid out
    // again. Every tensor of this model is a multiple of 512 bytes long, so 64 to 512 would only
    // move the data section; 1024 also moves tensors within it.
    let p = dir.join("aligned-1024.gguf");
    rewrite_file(&original, &p, &[Edit::Set { key: "general.alignment".into(), value: Value::U32(1024) }]).unwrap();
    let a = Gguf::open(&p).unwrap();
    assert_eq!(a.alignment(), 1024);
    assert!(a.tensors().all(|t| t.data_offset % 1024 == 0));
    let relative = |g: &Gguf<_>, name: &str| g.tensor(name).map(|t| t.data_offset - g.data_offset());
    assert!(
        a.tensors().any(|t| relative(&a, t.name.to_str().unwrap()) != relative(&f, t.name.to_str().unwrap())),
        "no tensor moved"
    );
    assert_runs_as_original(&harness, &original, &p, "aligned to 1024");
    std::fs::remove_file(&p).unwrap();
}

/// Splits by bytes (and its merge) and with an empty first shard (`--no-tensor-first-split`): the
/// two ways the shards libllama loads differ. The split by tensors, whose shards are laid out as
/// those by bytes (`split_llama.rs` checks both byte for byte against `llama-gguf-split`), runs
/// nightly (`split_by_tensors_runs_as_the_original`).
#[test]
fn split_shards_and_their_merge_run_as_the_original() {
    split_shards_run_as_the_original(&[
        ("bytes", SplitOptions::new(SplitBy::MaxBytes(100_000_000)).with_no_tensor_first_split(false)),
        ("empty-first", SplitOptions::new(SplitBy::MaxTensors(128)).with_no_tensor_first_split(true)),
    ]);
}

#[test]
#[ignore = "nightly (scripts/test-nightly.sh): a third split of split_shards_and_their_merge_run_as_the_original, by tensors"]
fn split_by_tensors_runs_as_the_original() {
    split_shards_run_as_the_original(&[(
        "tensors",
        SplitOptions::new(SplitBy::MaxTensors(100)).with_no_tensor_first_split(false),
    )]);
}

/// Each split of `modes` (`(tag, options)`) of the original runs as the original, loaded from its
/// first shard; the split by bytes is also merged and run.
fn split_shards_run_as_the_original(modes: &[(&str, SplitOptions)]) {
    let Some((harness, original)) = setup() else { return };
    let dir = temp_dir("llama-run-split");
    for (tag, opts) in modes {
        let tag = *tag;
        let shards = split_file(&original, dir.join(tag), opts).unwrap();
        assert!(shards.len() >= 2, "{tag}: {} shard(s)", shards.len());
        // libllama finds the other shards from the first one's name and split.count.
        assert_runs_as_original(&harness, &original, &shards[0], &format!("split by {tag}, {} shards", shards.len()));
        // One merge (split_llama.rs checks that every split merges back to the original's bytes).
        if tag == "bytes" {
            let merged = dir.join(format!("{tag}-merged.gguf"));
            merge_file(&shards[0], &merged, IfExists::Replace).unwrap();
            assert_runs_as_original(&harness, &original, &merged, &format!("merged from the {tag} split"));
            std::fs::remove_file(&merged).unwrap();
        }
        for p in &shards {
            std::fs::remove_file(p).unwrap();
        }
    }
}

/// `llama-quantize --allow-requantize IN OUT TYPE 2` and our `requantize` of the same; returns
/// (theirs, ours).
fn quantize_both(lq: &Path, input: &Path, dir: &Path, ft: LlamaFileType) -> (PathBuf, PathBuf) {
    let theirs = dir.join(format!("{ft}.llama.gguf"));
    let ours = dir.join(format!("{ft}.ours.gguf"));
    let o =
        Command::new(lq).arg("--allow-requantize").arg(input).arg(&theirs).arg(ft.name()).arg("2").output().unwrap();
    assert!(o.status.success(), "llama-quantize {ft}: {}", String::from_utf8_lossy(&o.stderr));
    let mut p = QuantizeParams::new(ft);
    p.threads = Some(2);
    requantize(&Gguf::open(input).unwrap(), &ours, &p, None).unwrap_or_else(|e| panic!("{ft}: {e}"));
    (theirs, ours)
}

/// Q8_0 of the original (every matrix changes type) loads and generates. Our file is
/// byte-identical to llama-quantize's, so llama.cpp computes from it what it computes from
/// llama-quantize's: the same bytes through a deterministic run
/// (`llama_cpp_runs_the_original_deterministically`), so llama-quantize's file is not run again.
/// Q4_K_M (a mix of types, as the original itself is) runs nightly, with llama-quantize's file run
/// too (`quantized_q4_k_m_copy_loads_and_generates_as_llama_quantizes`).
#[test]
fn quantized_copies_load_and_generate_as_llama_quantizes() {
    quantized_copy_runs(LlamaFileType::Q8_0, false);
}

#[test]
#[ignore = "nightly (scripts/test-nightly.sh): Q4_K_M beside the suite's Q8_0 of quantized_copies_load_and_generate_as_llama_quantizes, and llama-quantize's file run too"]
fn quantized_q4_k_m_copy_loads_and_generates_as_llama_quantizes() {
    quantized_copy_runs(LlamaFileType::Q4_K_M, true);
}

/// Quantizes the original to `ft` with both tools; our file loads, generates N_GEN tokens and is
/// byte-identical to llama-quantize's; with `run_theirs` llama-quantize's file is run too and
/// gives the same run.
fn quantized_copy_runs(ft: LlamaFileType, run_theirs: bool) {
    let Some((harness, original)) = setup() else { return };
    let Some(lq) = llama_quantize() else { return };
    let dir = temp_dir("llama-run-quantized");
    let expected = oracle(&harness, &original);
    let (theirs, ours) = quantize_both(&lq, &original, &dir, ft);
    let run = llama_run(&harness, &ours, &PROMPT, N_GEN).unwrap_or_else(|e| panic!("our {ft}: {e}"));
    assert_eq!(run.n_vocab, expected.n_vocab);
    assert_eq!(run.generated.len(), N_GEN);
    let same = std::fs::read(&theirs).unwrap() == std::fs::read(&ours).unwrap();
    assert!(same, "{ft}: our file is not llama-quantize's");
    if run_theirs {
        let reference = llama_run(&harness, &theirs, &PROMPT, N_GEN).unwrap_or_else(|e| panic!("llama's {ft}: {e}"));
        assert_eq!(run, reference, "{ft}: llama.cpp computes differently from our file and llama-quantize's");
    }
    if ft == LlamaFileType::Q8_0 {
        // Every matrix changed type, so the logits changed: the hashes do see the data.
        assert_ne!(run.logits, expected.logits, "Q8_0 gives the original's logits");
    }
    std::fs::remove_file(&theirs).unwrap();
    std::fs::remove_file(&ours).unwrap();
}

#[test]
fn a_model_missing_a_tensor_does_not_load() {
    let Some((harness, original)) = setup() else { return };
    let dir = temp_dir("llama-run-corrupt");
    let f = Gguf::open(&original).unwrap();
    // The original with `output_norm.weight` renamed: a well-formed GGUF file that ggml reads,
    // but without a tensor Gemma 3 needs.
    let mut w = GgufWriter::with_options(Vec::new(), WriteOptions::like(&f)).unwrap();
    for kv in f.metadata() {
        w.add_kv_ref(kv.key, kv.value).unwrap();
    }
    for t in f.tensors() {
        let name = if t.name == "output_norm.weight" { "output_norm.renamed".into() } else { t.name };
        w.add_tensor_ne(name, t.dtype, t.ne().dims()).unwrap();
    }
    for t in f.tensors() {
        w.write_tensor_data(f.tensor_data(&t).unwrap()).unwrap();
    }
    let p = dir.join("renamed-tensor.gguf");
    std::fs::write(&p, w.finish().unwrap()).unwrap();
    assert!(Gguf::open(&p).is_ok(), "the corrupted copy is still a valid GGUF file");
    let e = llama_run(&harness, &p, &PROMPT, N_GEN).unwrap_err();
    assert!(e.contains("llama_run: load failed"), "{e}");
    // libllama's loader names the tensor it did not find.
    assert!(e.contains("tensor 'output_norm.weight' not found"), "{e}");
}
