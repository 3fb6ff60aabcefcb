//! Importance matrices of a mixture-of-experts model against llama.cpp: a tiny Mixtral-style
//! model (`tests/py/make_moe.py`: architecture `llama`, 3 layers, 8 experts of which 2 are used,
//! n_embd 256, n_ff 128, seeded F32 weights, a 309-token SentencePiece vocabulary) that
//! `llama-imatrix` runs on, so that its 3-D expert tensors `blk.N.ffn_{gate,up,down}_exps.weight`
//! (ne `[n_embd, n_ff, 8]`, `[n_ff, n_embd, 8]`) get one importance slice and one count per
//! expert. Checked:
//! - the GGUF importance matrix has `in_sum2` `[ne0, 8]` and `counts` `[1, 8]` for each expert
//!   tensor, the counts summing to 2 per token; the legacy `.dat` has the same entries; ours reads
//!   both as `ne0 × 8` weights, all 1 for an expert that got no token;
//! - `llama-quantize --imatrix` and our `requantize` write byte-identical files (Q4_K_M, IQ4_XS,
//!   Q2_K_S, IQ2_XXS, Q6_K and more, from the GGUF and the `.dat` matrix, also from a matrix of
//!   one short chunk in which an expert got no token); `ffn_down_exps` rows are 128 long, so they
//!   take llama-quantize's fallback types (Q5_0, IQ4_NL, ...) with per-expert weights too;
//!   `--exclude-weights` / `--include-weights` of expert entries give the same bytes too; the
//!   4-expert model's matrix is refused by both, with the same words;
//! - 6 experts of n_ff 96, whose rows do not fill llama-quantize's chunks of 64 rows: the same
//!   bytes (its chunks stop at each expert's end);
//! - our plan with the matrix is llama-quantize's `--dry-run --imatrix` for every file type (the
//!   8-expert mix rules);
//! - `--keep-split` with `--imatrix` on the model split by `llama-gguf-split` into 3 shards: the
//!   same shards, byte for byte, as `llama-quantize --keep-split --imatrix`.
//!
//! About 35 s on 2 cores, most of it llama-quantize at IQ2_XXS and IQ4_XS (IQ1_M and IQ3_XXS, 9 to
//! 17 s each in llama-quantize here, are left to `quantize_llama.rs`); the byte-identity cases
//! keep one of each rule (matrix kind, codec family), the others run nightly
//! (`moe_other_file_types_*`, `moe_keep_split_at_other_file_types_*`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use gguf_serde::container::{shard_path, ShardedGguf};
use gguf_serde::ops::file_type::LlamaFileType;
use gguf_serde::ops::imatrix::Imatrix;
use gguf_serde::ops::quantize::QuantizeParams;
use gguf_serde::ops::requant::requantize_sharded;
use gguf_serde::Gguf;
use gguf_tests::{llama_quantize, llama_tool, python, run_py_text, sha256, shards_of};

use super::quantize_llama::{imatrix_params, imatrix_text, llama_plan_with, our_plan, same_file, work};

const N_EXPERT: u64 = 8;
const N_EXPERT_USED: f32 = 2.0;
const N_FF: u64 = 128;

/// The tiny MoE model, made once per run by `tests/py/make_moe.py` (seed 1234).
fn moe_model() -> Option<PathBuf> {
    moe_model_with(N_EXPERT, N_FF)
}

/// The start of the sha256 of `tests/py/make_moe.py`, in the names of the files made from it, so
/// that an edit of the script is not hidden by a model the work folder kept from an earlier run.
fn script_tag() -> String {
    let script = gguf_tests::workspace_root().join("tests/py/make_moe.py");
    sha256(&std::fs::read(script).unwrap())[..12].to_owned()
}

/// The tiny MoE model with `experts` experts (2 used) of feed-forward length `ff`, made once per
/// run.
fn moe_model_with(experts: u64, ff: u64) -> Option<PathBuf> {
    static LOCK: Mutex<()> = Mutex::new(());
    let py = python()?;
    let out = work().join(format!("moe{experts}x{ff}-{}.f32.gguf", script_tag()));
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !out.exists() {
        let tmp = work().join(format!("moe{experts}x{ff}.f32.tmp.gguf"));
        run_py_text(
            &py,
            "make_moe.py",
            &[tmp.to_str().unwrap(), "--experts", &experts.to_string(), "--ff", &ff.to_string()],
        );
        std::fs::rename(&tmp, &out).unwrap();
    }
    Some(out)
}

/// Which calibration run of `llama-imatrix`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Calib {
    /// Two chunks of 64 tokens: every expert of every layer gets tokens.
    Full,
    /// One chunk of 16 tokens: some experts get none (llama-imatrix's "partial data").
    Short,
}

/// `llama-imatrix` on [`imatrix_text`] over [`moe_model`], in its GGUF format or the legacy
/// `.dat` (`dat`), made once per run.
fn moe_imatrix(calib: Calib, dat: bool) -> Option<PathBuf> {
    moe_imatrix_with(N_EXPERT, N_FF, calib, dat)
}

/// [`moe_imatrix`] of [`moe_model_with`] `experts`, `ff`.
fn moe_imatrix_with(experts: u64, ff: u64, calib: Calib, dat: bool) -> Option<PathBuf> {
    static LOCK: Mutex<()> = Mutex::new(());
    let tool = llama_tool("llama-imatrix")?;
    let model = moe_model_with(experts, ff)?;
    let (tag, ctx, chunks) = match calib {
        Calib::Full => ("full", "64", "2"),
        Calib::Short => ("short", "16", "1"),
    };
    let stem = format!("moe{experts}x{ff}-{}.imatrix-{tag}", script_tag());
    let out = work().join(format!("{stem}.{}", if dat { "dat" } else { "gguf" }));
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !out.exists() {
        let tmp = work().join(format!("{stem}.tmp"));
        let o = Command::new(tool)
            .arg("-m")
            .arg(&model)
            .arg("-f")
            .arg(imatrix_text())
            .arg("-o")
            .arg(&tmp)
            .args(["--output-format", if dat { "dat" } else { "gguf" }])
            .args(["-c", ctx, "--chunks", chunks, "-t", "2", "--no-ppl"])
            .output()
            .unwrap();
        assert!(o.status.success(), "llama-imatrix: {}", String::from_utf8_lossy(&o.stderr));
        std::fs::rename(&tmp, &out).unwrap();
    }
    Some(out)
}

fn is_exps(name: &str) -> bool {
    ["ffn_gate_exps.weight", "ffn_up_exps.weight", "ffn_down_exps.weight"].iter().any(|s| name.ends_with(s))
}

/// The f32 values of the tensor `name` of the GGUF importance matrix `g`, and its ne.
fn f32_tensor<S: gguf_serde::container::Source>(g: &Gguf<S>, name: &str) -> (Vec<f32>, Vec<u64>) {
    let t = g.tensors().find(|t| t.name == name).unwrap_or_else(|| panic!("no tensor {name}"));
    let bytes = g.tensor_data(&t).unwrap();
    let v = bytes.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
    (v, t.ne().dims().to_vec())
}

/// The per-expert counts of llama-imatrix's GGUF matrix at `path` (checked to be `[1, 8]` with
/// `in_sum2` `[ne0, 8]` for every expert tensor of `model`); returns the number of experts that
/// got no token. Ours reads it, and the `.dat` of the same run, as `ne0 × 8` weights.
fn check_per_expert(model: &Path, path: &Path, dat: &Path) -> usize {
    let m = Gguf::open(model).unwrap();
    let g = Gguf::open(path).unwrap();
    let ours = Imatrix::open(path).unwrap();
    let ours_dat = Imatrix::open(dat).unwrap();
    assert_eq!(
        ours.entries.keys().collect::<Vec<_>>(),
        ours_dat.entries.keys().collect::<Vec<_>>(),
        "the GGUF and .dat matrices have different entries"
    );
    // Tokens seen: the count of a dense tensor of layer 0.
    let (tokens, ne) = f32_tensor(&g, "blk.0.attn_q.weight.counts");
    assert_eq!(ne, [1]);
    let tokens = tokens[0];
    let (mut experts, mut zero) = (0, 0);
    for t in m.tensors().filter(|t| is_exps(t.name.to_str().unwrap())) {
        let dims = t.ne().dims().to_vec();
        assert_eq!(dims.len(), 3, "{}", t.name);
        assert_eq!(dims[2], N_EXPERT);
        let (sums, sums_ne) = f32_tensor(&g, &format!("{}.in_sum2", t.name));
        let (counts, counts_ne) = f32_tensor(&g, &format!("{}.counts", t.name));
        assert_eq!(sums_ne, [dims[0], N_EXPERT], "{}.in_sum2", t.name);
        assert_eq!(counts_ne, [1, N_EXPERT], "{}.counts", t.name);
        // Each token goes to 2 experts.
        assert_eq!(counts.iter().sum::<f32>(), N_EXPERT_USED * tokens, "{}: counts {counts:?}", t.name);
        let w = ours
            .weights_for(t.name.to_str().unwrap(), &dims)
            .unwrap()
            .unwrap_or_else(|| panic!("no weights for {}", t.name));
        let w_dat = ours_dat.weights_for(t.name.to_str().unwrap(), &dims).unwrap().unwrap();
        assert_eq!(w.len() as u64, dims[0] * N_EXPERT);
        assert_eq!(w_dat.len(), w.len());
        let ne0 = dims[0] as usize;
        for (e, &c) in counts.iter().enumerate() {
            let (slice, sums) = (&w[e * ne0..(e + 1) * ne0], &sums[e * ne0..(e + 1) * ne0]);
            if c == 0.0 {
                zero += 1;
                assert!(slice.iter().all(|&x| x == 1.0), "{} expert {e}: no tokens, weights not 1", t.name);
                assert!(w_dat[e * ne0..(e + 1) * ne0].iter().all(|&x| x == 1.0), "{} expert {e} (.dat)", t.name);
            } else {
                for (&x, &s) in slice.iter().zip(sums) {
                    assert_eq!(x, s / c, "{} expert {e}", t.name);
                }
            }
        }
        experts += 1;
    }
    assert_eq!(experts, 9, "3 layers of 3 expert tensors");
    zero
}

#[test]
fn moe_importance_matrices_have_per_expert_counts() {
    let Some(model) = moe_model() else { return };
    let (Some(full), Some(full_dat)) = (moe_imatrix(Calib::Full, false), moe_imatrix(Calib::Full, true)) else {
        return;
    };
    let (Some(short), Some(short_dat)) = (moe_imatrix(Calib::Short, false), moe_imatrix(Calib::Short, true)) else {
        return;
    };
    assert_eq!(check_per_expert(&model, &full, &full_dat), 0, "every expert got tokens in 2 chunks of 64");
    let zero = check_per_expert(&model, &short, &short_dat);
    assert!(zero > 0, "in one chunk of 16 tokens some expert should get none");
}

/// The byte-identity cases of [`moe_file_cases`] kept in scripts/test.sh, then
/// `--exclude-weights` / `--include-weights` of expert entries.
#[test]
fn moe_files_with_an_importance_matrix_are_byte_identical_to_llama_quantize() {
    moe_file_cases(true);
}

#[test]
#[ignore = "nightly (scripts/test-nightly.sh): the other file types of moe_files_with_an_importance_matrix_are_byte_identical_to_llama_quantize"]
fn moe_other_file_types_with_an_importance_matrix_are_byte_identical_to_llama_quantize() {
    moe_file_cases(false);
}

/// `(matrix, file types)` of the byte-identity cases: `suite` picks those of scripts/test.sh, one
/// case of each rule: the full GGUF matrix at Q4_K_M (the k-quant mix), IQ4_XS (with the IQ4_NL
/// fallback of the 128-long `ffn_down_exps` rows), Q2_K_S (a type that needs a matrix), IQ2_XXS
/// (the grid codecs, which need weights) and Q4_0 (a legacy codec); the `.dat` matrix at Q5_K_S;
/// the short calibration (experts with no token) at Q4_K_M and IQ2_XXS, its `.dat` at Q2_K_S.
/// The others (Q6_K and Q3_K_M from the GGUF matrix, Q4_K_M and IQ2_XXS from the `.dat`, IQ4_XS
/// from the short one, Q4_K_M from its `.dat`) run nightly.
fn moe_file_cases(suite: bool) {
    let Some(lq) = llama_quantize() else { return };
    let Some(input) = moe_model() else { return };
    let (Some(gguf), Some(dat)) = (moe_imatrix(Calib::Full, false), moe_imatrix(Calib::Full, true)) else { return };
    let (Some(short), Some(short_dat)) = (moe_imatrix(Calib::Short, false), moe_imatrix(Calib::Short, true)) else {
        return;
    };
    use LlamaFileType as F;
    let cases: &[(&Path, &[F])] = if suite {
        &[
            (&gguf, &[F::Q4_K_M, F::IQ4_XS, F::Q2_K_S, F::IQ2_XXS, F::Q4_0]),
            (&dat, &[F::Q5_K_S]),
            (&short, &[F::Q4_K_M, F::IQ2_XXS]),
            (&short_dat, &[F::Q2_K_S]),
        ]
    } else {
        &[
            (&gguf, &[F::Q6_K, F::Q3_K_M]),
            (&dat, &[F::Q4_K_M, F::IQ2_XXS]),
            (&short, &[F::IQ4_XS]),
            (&short_dat, &[F::Q4_K_M]),
        ]
    };
    for (path, types) in cases {
        // "imatrix-full-gguf", ...
        let name = path.file_name().unwrap().to_str().unwrap().split_once(".imatrix").unwrap().1.replace('.', "-");
        let name = format!("moe{name}");
        for &ft in *types {
            let p = imatrix_params(ft, path, &[], &[]);
            same_file(&lq, &input, &format!("{name}-{ft}"), &["--imatrix", path.to_str().unwrap()], ft.name(), &p);
        }
    }
    if !suite {
        return;
    }
    // --exclude-weights / --include-weights pick expert entries as any other.
    let im = gguf.to_str().unwrap();
    same_file(
        &lq,
        &input,
        "moe-imatrix-exclude",
        &["--imatrix", im, "--exclude-weights", "ffn_up_exps", "--exclude-weights", "blk.1.ffn_down_exps"],
        "Q4_K_M",
        &imatrix_params(F::Q4_K_M, &gguf, &[], &["ffn_up_exps", "blk.1.ffn_down_exps"]),
    );
    same_file(
        &lq,
        &input,
        "moe-imatrix-include",
        &["--imatrix", im, "--include-weights", "ffn_gate_exps"],
        "IQ4_XS",
        &imatrix_params(F::IQ4_XS, &gguf, &["ffn_gate_exps"], &[]),
    );
}

/// Experts whose rows do not fill llama-quantize's chunks: 6 experts of n_ff 96, so that a chunk
/// of 64 rows of `ffn_{gate,up}_exps` (rows of 256) would cross from one expert into the next;
/// llama-quantize cuts its chunks at the expert boundary, each row takes its own expert's slice.
/// `ffn_down_exps` rows are 96 long (Q5_0, IQ4_NL, ... fallbacks).
#[test]
fn moe_experts_across_chunks_are_byte_identical_to_llama_quantize() {
    let Some(lq) = llama_quantize() else { return };
    let Some(input) = moe_model_with(6, 96) else { return };
    let Some(gguf) = moe_imatrix_with(6, 96, Calib::Full, false) else { return };
    let m = Gguf::open(&input).unwrap();
    let t = m.tensors().find(|t| t.name == "blk.0.ffn_gate_exps.weight").unwrap();
    assert_eq!(t.ne().dims(), [256, 96, 6]);
    use LlamaFileType as F;
    for ft in [F::Q4_K_M, F::IQ2_XXS, F::Q5_1] {
        let p = imatrix_params(ft, &gguf, &[], &[]);
        same_file(&lq, &input, &format!("moe6x96-{ft}"), &["--imatrix", gguf.to_str().unwrap()], ft.name(), &p);
    }
}

/// The mix rules by expert count (`attn_v`, `attn_k`, `ffn_down` for 8 experts, `attn_output`
/// from 4 on, the expert-aware layer counters of `ffn_down`) with an importance matrix: our plan
/// is llama-quantize's `--dry-run --imatrix` for every file type, with and without `--pure`, for
/// 8, 4 and 2 experts.
#[test]
fn moe_plans_with_an_importance_matrix_equal_llama_quantize() {
    let Some(lq) = llama_quantize() else { return };
    for experts in [8, 4, 2] {
        let Some(input) = moe_model_with(experts, N_FF) else { return };
        let Some(gguf) = moe_imatrix_with(experts, N_FF, Calib::Full, false) else { return };
        let mut compared = 0;
        for &ft in LlamaFileType::ALL {
            for pure in [false, true] {
                let mut p = imatrix_params(ft, &gguf, &[], &[]);
                p.pure = pure;
                let ours = our_plan(&input, &p);
                let mut args = vec!["--imatrix", gguf.to_str().unwrap()];
                if pure {
                    args.push("--pure");
                }
                let what = format!("{experts} experts, {ft} pure={pure}");
                match llama_plan_with(&lq, &input, ft.name(), &args) {
                    Some(theirs) => {
                        let ours = ours.unwrap_or_else(|e| panic!("{what}: we fail ({e}), llama-quantize does not"));
                        assert_eq!(ours, theirs, "{what} with an imatrix: per-tensor types differ");
                        compared += 1;
                    }
                    None => assert!(ours.is_err(), "{what}: llama-quantize fails, we do not"),
                }
            }
        }
        assert!(compared >= 60, "{experts} experts: only {compared} plans compared");
    }
}

/// `--keep-split` at Q4_K_M from the GGUF matrix and IQ4_XS from the `.dat` one; IQ2_XXS and
/// Q6_K from the GGUF matrix run nightly (`moe_keep_split_at_other_file_types_gives_llama_quantizes_shards`).
#[test]
fn moe_keep_split_with_an_importance_matrix_gives_llama_quantizes_shards() {
    moe_keep_split_cases(&[(false, LlamaFileType::Q4_K_M), (true, LlamaFileType::IQ4_XS)]);
}

#[test]
#[ignore = "nightly (scripts/test-nightly.sh): two more file types of moe_keep_split_with_an_importance_matrix_gives_llama_quantizes_shards"]
fn moe_keep_split_at_other_file_types_gives_llama_quantizes_shards() {
    moe_keep_split_cases(&[(false, LlamaFileType::IQ2_XXS), (false, LlamaFileType::Q6_K)]);
}

/// `llama-quantize --keep-split --imatrix` and our `requantize_sharded` of the model split by
/// `llama-gguf-split` into 3 shards give the same shards, for each `(.dat matrix?, file type)`.
fn moe_keep_split_cases(cases: &[(bool, LlamaFileType)]) {
    let Some(lq) = llama_quantize() else { return };
    let Some(split) = llama_tool("llama-gguf-split") else { return };
    let Some(input) = moe_model() else { return };
    let (Some(gguf), Some(dat)) = (moe_imatrix(Calib::Full, false), moe_imatrix(Calib::Full, true)) else { return };
    let dir = gguf_tests::temp_dir("moe_keep_split");
    // 33 tensors, at most 12 per shard: 3 shards, the expert tensors spread over all of them.
    let prefix = dir.join("in");
    let o =
        Command::new(&split).args(["--split", "--split-max-tensors", "12"]).arg(&input).arg(&prefix).output().unwrap();
    assert!(o.status.success(), "llama-gguf-split: {}", String::from_utf8_lossy(&o.stderr));
    let first = shard_path(&prefix, 0, 3);
    let model = ShardedGguf::open(&first).unwrap();
    assert_eq!(model.shard_count(), 3);
    for &(is_dat, ft) in cases {
        let path = if is_dat { &dat } else { &gguf };
        let ext = path.extension().unwrap().to_str().unwrap();
        let tag = format!("{ft}-{ext}");
        let (theirs, ours) = (dir.join(format!("{tag}-llama.gguf")), dir.join(format!("{tag}-ours")));
        let o = Command::new(&lq)
            .args(["--keep-split", "--imatrix", path.to_str().unwrap()])
            .arg(&first)
            .arg(&theirs)
            .args([ft.name(), "2"])
            .output()
            .unwrap();
        assert!(o.status.success(), "llama-quantize {tag}: {}", String::from_utf8_lossy(&o.stderr));
        let mut p: QuantizeParams = imatrix_params(ft, path, &[], &[]);
        p.keep_split = true;
        p.threads = Some(2);
        assert!(p.imatrix.as_ref().is_some_and(|m: &Arc<Imatrix>| !m.entries.is_empty()));
        let report = requantize_sharded(&model, &ours, &p, None).unwrap_or_else(|e| panic!("{tag}: {e}"));
        assert_eq!(report.paths.len(), 3, "{tag}: {:?}", report.paths);
        let (a, b) = (shards_of(&dir, &format!("{tag}-llama")), shards_of(&dir, &format!("{tag}-ours")));
        assert_eq!(a.len(), 3, "{tag}: llama-quantize wrote {a:?}");
        assert_eq!(b.len(), 3, "{tag}: we wrote {b:?}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.replacen("-llama", "", 1), y.replacen("-ours", "", 1));
            let (hx, hy) = (sha256(&std::fs::read(dir.join(x)).unwrap()), sha256(&std::fs::read(dir.join(y)).unwrap()));
            assert_eq!(hx, hy, "{tag}: {y} differs from llama-quantize's {x}");
        }
    }
}

/// The importance matrix of the 4-expert model given to the 8-expert one: its expert entries are
/// half the size. llama-quantize stops at the first expert tensor ("imatrix size 512 is
/// different from tensor size 1024 for blk.0.ffn_down_exps.weight", after writing part of its
/// file); ours refuses with the same words before writing anything.
#[test]
fn moe_an_importance_matrix_of_other_experts_is_refused_by_both() {
    let Some(lq) = llama_quantize() else { return };
    let Some(input) = moe_model() else { return };
    let Some(other) = moe_imatrix_with(4, N_FF, Calib::Full, false) else { return };
    let dir = gguf_tests::temp_dir("moe_imatrix_mismatch");
    let theirs = dir.join("llama.gguf");
    let o = Command::new(&lq).arg("--imatrix").arg(&other).arg(&input).arg(&theirs).arg("Q4_K_M").output().unwrap();
    assert!(!o.status.success(), "llama-quantize took the 4-expert imatrix");
    let log = String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
    let want = "imatrix size 512 is different from tensor size 1024 for blk.0.ffn_down_exps.weight";
    assert!(log.contains(want), "{log}");
    let ours = dir.join("ours.gguf");
    let f = Gguf::open(&input).unwrap();
    let e =
        gguf_serde::ops::requant::requantize(&f, &ours, &imatrix_params(LlamaFileType::Q4_K_M, &other, &[], &[]), None)
            .unwrap_err();
    assert!(e.to_string().contains(want), "{e}");
    match e.as_quantize() {
        Some(gguf_serde::QuantizeError::Imatrix {
            problem: gguf_serde::ImatrixProblem::SizeMismatch { tensor, found, expected, .. },
            ..
        }) => assert_eq!((tensor.as_str(), *found, *expected), ("blk.0.ffn_down_exps.weight", 512, 1024)),
        _ => panic!("{e:?}"),
    }
    assert!(!ours.exists());
}
