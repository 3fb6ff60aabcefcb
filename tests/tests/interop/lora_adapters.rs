//! LoRA adapters (`gguf_serde::convert::lora`, `gguf convert ADAPTER_DIR --base BASE_DIR`)
//! against llama.cpp's `convert_lora_to_gguf.py` and libllama.
//!
//! The cases (`tests/data/lora-refs.json`, made with torch by `scripts/make-lora-refs.sh`): an
//! adapter as peft saves it (`tests/data/lora-layouts/CASE.json`, recorded by
//! `tests/py/make_lora_layouts.py` with peft) on one of the converter references' tiny
//! checkpoints: Llama 2 (every linear layer, the token embeddings and the output head, rank 8),
//! Qwen2 (q and v, rank 16), Qwen3 (every linear layer, rank 32, saved in bfloat16), Mixtral
//! (attention, rank 8), Phi-3 (its fused `qkv_proj` and `gate_up_proj` and the others, rank 8)
//! and Gemma 2 (every linear layer, rank 4); and Mixtral's experts (`lora-Mixtral-experts`, derived
//! from the Mixtral layout without torch: a pair on every expert's `w1`, `w2`, `w3`, as peft saved
//! them when transformers had an `nn.Linear` per expert), which the reference stacks. `tests/py/make_lora_inputs.py`
//! remakes adapter and base without torch (once per target folder, kept: [`kept_cases`]); the
//! adapter's files must have the manifest's sha256.
//!
//! - [`adapter_output_equals_the_references`]: our conversion at f32, f16, bf16 and q8_0 is the
//!   reference's file, byte for byte (the same description: keys, tensors, sha256).
//! - [`llama_cpp_applies_our_adapters`]: libllama loads the base model (our F32 conversion) with
//!   our F32 adapter (the harness's `--lora`) and its logits at every position of a prompt and a
//!   greedy continuation equal, within [`TOL`], those of the base model with the adapter merged
//!   in numpy (`make_lora_inputs.py merge`: W + alpha / r · B·A in float64, stored F32, then
//!   converted by our converter at f32), and the adapter changes the logits by far more than
//!   that. Measured: at most 2.4e-7 apart (Gemma 2: 6.4e-6, its GELU an F16 table in ggml), while
//!   the adapter moves logits by 0.24 to 0.92.

use std::path::{Path, PathBuf};

use gguf_serde::convert::lora::{plan_adapter, Adapter, AdapterError};
use gguf_serde::convert::{convert, write_plan, ConvertError, ConvertOptions, OutType};
use gguf_tests::convert_refs::{describe_gguf, differs_from_reference};
use gguf_tests::{llama_run_harness, llama_run_logits_lora, python, run_py_text, temp_dir, workspace_root, TempDir};
use serde_json::Value as Json;

/// The output types the reference converted each adapter with (its `auto` fails).
const OUTTYPES: [&str; 4] = ["f32", "f16", "bf16", "q8_0"];

/// Largest difference allowed between a logit of base + adapter and of the merged model.
const TOL: f32 = 1e-5;

/// The prompt (token ids below every case's vocabulary size) and generated tokens.
const IDS: [u32; 8] = [1, 100, 2000, 300, 4000, 50, 600, 7000];
const N_GEN: usize = 4;

fn manifest() -> Json {
    let p = workspace_root().join("tests/data/lora-refs.json");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A case remade: the adapter folder (named as the case, as the reference names the adapter
/// from it) and its base checkpoint folder, both kept (see [`kept_cases`]: read them, do not
/// change them), and a fresh temporary folder for the test's outputs.
struct LoraCase {
    tmp: TempDir,
    adapter: PathBuf,
    base: PathBuf,
    card: Option<Json>,
}

/// The folder holding every case of the manifest remade by `make_lora_inputs.py` (`CASE/`, the
/// adapter, and `bases/BASE/`, its base checkpoint), each adapter's files checked against the
/// manifest's sha256. Made once per target folder, in one Python run for all the cases, and kept
/// in `<target>/test-tmp/lora-cases/<tag>/` (`tag`: the start of the sha256 of the manifest's
/// inputs and of what makes them: `make_lora_inputs.py`, the LoRA layouts and what makes the
/// bases, `gguf_tests::convert_refs::generator_digest`), so that a changed script or layout gets
/// a new folder, made and checked again; before its first use in a test process every adapter's
/// files are checked against the manifest again (a folder that differs is made again). Both
/// tests that convert the adapters use it (remaking a case takes seconds of Python). `None`
/// (after a skip) without Python or the models.
fn kept_cases(py: &Path, m: &Json) -> Option<PathBuf> {
    use std::sync::{Mutex, OnceLock};
    static KEPT: OnceLock<Mutex<Option<PathBuf>>> = OnceLock::new();
    let models = gguf_tests::model("vocab")?.parent().map(Path::to_path_buf)?;
    gguf_tests::model("gemma-3-270m-q4_k_m.gguf")?;
    // One test of this process makes or checks the folder; the other waits for it.
    let mut kept = KEPT.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = kept.as_ref() {
        return Some(p.clone());
    }
    let cases = m["cases"].as_object().expect("cases");
    let mut digests = gguf_tests::convert_refs::generator_digest().into_bytes();
    digests.extend(gguf_tests::convert_refs::files_digest(&["py/make_lora_inputs.py"], "data/lora-layouts").bytes());
    for (case, entry) in cases {
        digests.extend(format!("{case} {}", entry["inputs"]).into_bytes());
    }
    let tag = gguf_tests::sha256(&digests);
    let root = gguf_tests::test_tmp_root().join("lora-cases");
    let dir = root.join(&tag[..12]);
    let differs = |dir: &Path| -> Vec<String> {
        cases
            .iter()
            .filter(|(case, entry)| {
                gguf_tests::convert_refs::input_digests(&dir.join(case.as_str())).as_ref() != Some(&entry["inputs"])
            })
            .map(|(case, _)| case.clone())
            .collect()
    };
    if !differs(&dir).is_empty() {
        let tmp = temp_dir("lora-cases");
        let (mo, t) = (models.to_string_lossy().into_owned(), tmp.to_string_lossy().into_owned());
        let mut args: Vec<&str> = vec![&mo, &t];
        args.extend(cases.keys().map(String::as_str));
        run_py_text(py, "make_lora_inputs.py", &args);
        let wrong = differs(&tmp);
        assert!(
            wrong.is_empty(),
            "cases {wrong:?}: the remade adapters' sha256s differ from tests/data/lora-refs.json"
        );
        std::fs::create_dir_all(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
        // Renamed into place whole, so another test process never sees a half-written folder.
        let _ = std::fs::remove_dir_all(&dir);
        if std::fs::rename(&*tmp, &dir).is_err() {
            // Another process put the cases there meanwhile; they are checked below.
            assert!(dir.is_dir(), "{}: could not keep the remade cases", dir.display());
        }
        let wrong = differs(&dir);
        assert!(wrong.is_empty(), "{}: the kept cases {wrong:?} differ from the manifest", dir.display());
    }
    *kept = Some(dir.clone());
    Some(dir)
}

/// `case` remade ([`kept_cases`]), its adapter's files checked against the manifest's sha256,
/// with a fresh temporary folder. `None` (after a skip) without Python or the models.
fn make_case(py: &Path, m: &Json, case: &str, entry: &Json) -> Option<LoraCase> {
    let kept = kept_cases(py, m)?;
    let adapter = kept.join(case);
    let base = kept.join("bases").join(entry["base"].as_str().expect("base"));
    let card = gguf_tests::convert_refs::model_card(&adapter);
    Some(LoraCase { tmp: temp_dir(&format!("lora-{case}")), adapter, base, card })
}

fn convert_adapter(c: &LoraCase, outtype: OutType, out: &Path) {
    let adapter = Adapter::open(&c.adapter, &c.base).unwrap_or_else(|e| panic!("{}: {e}", c.adapter.display()));
    let opts = ConvertOptions { model_card: c.card.as_ref(), ..ConvertOptions::new(outtype) };
    let plan = plan_adapter(&adapter, &opts).unwrap_or_else(|e| panic!("{}: {e}", c.adapter.display()));
    write_plan(&plan, out, &opts).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}

#[test]
fn adapter_output_equals_the_references() {
    let Some(py) = python() else { return };
    let m = manifest();
    let cases = m["cases"].as_object().expect("cases");
    assert!(cases.len() >= 7, "{} cases", cases.len());
    let mut differ = Vec::new();
    let mut matched = 0;
    for (case, entry) in cases {
        let Some(c) = make_case(&py, &m, case, entry) else { return };
        for outtype in OUTTYPES {
            let out = c.tmp.join(format!("ours.{outtype}.gguf"));
            convert_adapter(&c, outtype.parse().expect("outtype"), &out);
            let theirs = &entry["outputs"][outtype];
            assert_eq!(theirs["sha256"].as_str().map(str::len), Some(64), "{case} {outtype}: no reference");
            if let Some(ours) = differs_from_reference(&out, theirs) {
                let (a, b) = (ours["keys"].as_array().cloned(), theirs["keys"].as_array().cloned());
                differ.push(format!(
                    "{case} {outtype}: keys {}, tensors {}",
                    if a == b { "equal" } else { "differ" },
                    if ours["tensors"] == theirs["tensors"] { "equal" } else { "differ" }
                ));
            } else {
                matched += 1;
            }
        }
    }
    assert!(differ.is_empty(), "{matched} equal; these differ from the reference:\n{}", differ.join("\n"));
    assert_eq!(matched, cases.len() * OUTTYPES.len());
}

#[test]
fn llama_cpp_applies_our_adapters() {
    let Some(py) = python() else { return };
    let Some(harness) = llama_run_harness() else { return };
    let m = manifest();
    let mut cases = Vec::new();
    for (case, entry) in m["cases"].as_object().expect("cases") {
        let Some(c) = make_case(&py, &m, case, entry) else { return };
        cases.push((case, entry, c));
    }
    // Every case's base merged with its adapter, in one Python run (numpy's import is most of one).
    let triples: Vec<String> = cases
        .iter()
        .flat_map(|(_, _, c)| [&c.base, &c.adapter, &c.tmp.join("merged")].map(|p| p.to_string_lossy().into_owned()))
        .collect();
    let mut args = vec!["merge"];
    args.extend(triples.iter().map(String::as_str));
    run_py_text(&py, "make_lora_inputs.py", &args);
    for (case, entry, c) in &cases {
        let lora = c.tmp.join("adapter.gguf");
        convert_adapter(c, OutType::F32, &lora);
        let sha = gguf_tests::sha256(&std::fs::read(&lora).expect("read"));
        assert_eq!(
            Some(sha.as_str()),
            entry["outputs"]["f32"]["sha256"].as_str(),
            "{case}: not the reference's F32 adapter"
        );
        let merged = c.tmp.join("merged");
        let (base_gguf, merged_gguf) = (c.tmp.join("base.gguf"), c.tmp.join("merged.gguf"));
        for (dir, out) in [(&c.base, &base_gguf), (&merged, &merged_gguf)] {
            convert(dir, out, &ConvertOptions::new(OutType::F32)).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        }
        let run = |model: &Path, lora: Option<&Path>| {
            llama_run_logits_lora(&harness, model, lora, &IDS, N_GEN).unwrap_or_else(|e| panic!("{case}: {e}"))
        };
        let (run_merged, want) = run(&merged_gguf, None);
        // the merged model's greedy tokens, fed to both: the same ids at every position
        let ids: Vec<u32> = IDS.iter().copied().chain(run_merged.generated.iter().copied()).collect();
        let (_, want_all) =
            llama_run_logits_lora(&harness, &merged_gguf, None, &ids, 0).unwrap_or_else(|e| panic!("{e}"));
        let (_, got) =
            llama_run_logits_lora(&harness, &base_gguf, Some(&lora), &ids, 0).unwrap_or_else(|e| panic!("{e}"));
        let (_, plain) = llama_run_logits_lora(&harness, &base_gguf, None, &ids, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(want.len(), IDS.len() + N_GEN);
        let max_diff = |a: &[Vec<f32>], b: &[Vec<f32>]| {
            a.iter().zip(b).flat_map(|(x, y)| x.iter().zip(y).map(|(p, q)| (p - q).abs())).fold(0f32, f32::max)
        };
        let (d, moved) = (max_diff(&got, &want_all), max_diff(&plain, &want_all));
        eprintln!("{case}: base + adapter vs merged: {d:e}; base alone vs merged: {moved:e}");
        assert!(d <= TOL, "{case}: llama.cpp with our adapter is {d} from the merged model (tolerance {TOL})");
        assert!(moved > 100.0 * TOL, "{case}: the adapter changes the logits by only {moved}");
    }
}

/// The adapters `gguf convert` refuses (`make_lora_inputs.py --list-refused`: case and the
/// [`AdapterError`] variant), remade from their peft-saved layouts. `lora-Qwen2-tied-lm_head`: a
/// pair on `lm_head` over tiny Qwen2, whose checkpoint has no `lm_head.weight`
/// (`tie_word_embeddings`), so its GGUF has no `output.weight`: convert_lora_to_gguf.py writes
/// `output.weight.lora_a`/`lora_b`, which llama.cpp refuses to load ("LoRA tensor
/// 'output.weight' does not exist in base model", checked by hand with the reference's output,
/// see README.md); we refuse it, naming the tensor. The adapter also has peft's
/// `lm_head.base_layer.weight`, left out as the reference leaves it out.
#[test]
fn lora_refusals() {
    let Some(py) = python() else { return };
    let Some(models) = gguf_tests::model("vocab").and_then(|p| p.parent().map(Path::to_path_buf)) else { return };
    let list = run_py_text(&py, "make_lora_inputs.py", &["--list-refused"]);
    let mut n = 0;
    for line in list.lines() {
        let (case, variant) = line.split_once(' ').expect("CASE VARIANT");
        let tmp = temp_dir(&format!("lora-refused-{case}"));
        let (m, t) = (models.to_string_lossy().into_owned(), tmp.to_string_lossy().into_owned());
        run_py_text(&py, "make_lora_inputs.py", &[&m, &t, case]);
        let layout = workspace_root().join(format!("tests/data/lora-layouts/{case}.json"));
        let layout: Json = serde_json::from_str(&std::fs::read_to_string(&layout).expect("layout")).expect("json");
        let base = tmp.join("bases").join(layout["base"].as_str().expect("base"));
        let adapter = Adapter::open(tmp.join(case), &base).unwrap_or_else(|e| panic!("{case}: {e}"));
        let copies = adapter.base_layer_copies().expect("tensors");
        let e = match plan_adapter(&adapter, &ConvertOptions::new(OutType::F32)) {
            Ok(_) => panic!("{case}: converted, but {variant} was expected"),
            Err(e) => e,
        };
        eprintln!("{case}: {e}");
        match (variant, &e) {
            ("TiedOutput", ConvertError::Adapter(AdapterError::TiedOutput { name })) => {
                assert_eq!(name, "base_model.model.lm_head.lora_A.weight", "{case}");
                assert!(adapter.base_output_tied(), "{case}");
                // the precondition: the base's GGUF has no output tensor
                let gguf = tmp.join("base.gguf");
                convert(&base, &gguf, &ConvertOptions::new(OutType::F32)).unwrap_or_else(|e| panic!("{case}: {e}"));
                let desc = describe_gguf(&gguf).expect("python");
                let names: Vec<&str> =
                    desc["tensors"].as_array().expect("tensors").iter().filter_map(|t| t["name"].as_str()).collect();
                assert!(names.contains(&"token_embd.weight") && !names.contains(&"output.weight"), "{case}: {names:?}");
                assert_eq!(copies, ["base_model.model.lm_head.base_layer.weight"], "{case}");
            }
            _ => panic!("{case}: {e:?}, not {variant}"),
        }
        n += 1;
    }
    assert!(n >= 1, "no refused case listed");
}
