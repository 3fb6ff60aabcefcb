//! The converter references: `tests/data/convert-refs.json`, written by
//! `scripts/make-convert-refs.sh` from llama.cpp's `convert_hf_to_gguf.py` (which needs torch, so
//! CI does not run it), and the inputs it converted, remade here without torch by
//! `tests/py/make_convert_inputs.py` (numpy, safetensors, transformers).
//!
//! The manifest: `{"reference": {...}, "cases": {CASE: {"inputs": {FILE: sha256}, "outputs":
//! {OUTTYPE: DESCRIPTION}}}}`, OUTTYPE one of [`OUTTYPES`], and for a pre-quantized FP8 case also
//! [`FP8_AS_Q8`] (`--outtype f16 --fp8-as-q8`). A DESCRIPTION is what
//! `tests/py/convert_refs_manifest.py gguf FILE` prints (its header has the format): `sha256`,
//! `size`, `version`, `alignment`, `data_offset`, `keys` (`key`, `type`, `value`, or for arrays
//! `length` and the `sha256` of the stored payload), `tensors` (`name`, `dtype`, canonical
//! `shape`, absolute `data_offset`, `nbytes`). [`describe_gguf`] describes a file we wrote the
//! same way, so that a converter's test compares its output with [`convert_ref`] as JSON.
//!
//! Layout cases: some cases are made from how transformers itself saves a tiny random model of
//! the family (`tests/data/hf-layouts/CASE.json`, recorded with torch by
//! `tests/py/make_hf_layouts.py`: config.json and generation_config.json as transformers wrote
//! them, the safetensors tensor list). Their manifest entry also has `transformers_logits`
//! ([`transformers_logits`]): transformers' own float32 logits on the checkpoint, the logits
//! oracle for those families. A layout case is tested against the reference only when its
//! architecture is in [`CONVERTED_LAYOUT_ARCHITECTURES`] ([`converted_cases`]); the others are
//! [`pending_cases`].

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::{python, run_py, run_py_text, temp_dir, workspace_root, TempDir};

/// The `--outtype`s each case was converted with, in the manifest's order.
pub const OUTTYPES: [&str; 5] = ["f32", "f16", "bf16", "q8_0", "auto"];

/// The manifest's output of a pre-quantized FP8 case converted with `--outtype f16 --fp8-as-q8`.
pub const FP8_AS_Q8: &str = "f16-fp8-as-q8";

/// The manifest, `tests/data/convert-refs.json`, parsed. Fails the test if it is missing or not JSON.
pub fn convert_refs_manifest() -> Json {
    let p = workspace_root().join("tests/data/convert-refs.json");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The case names of the manifest (checkpoint folder names, e.g. `tiny-Qwen3`), sorted.
pub fn convert_ref_cases() -> Vec<String> {
    convert_refs_manifest()["cases"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default()
}

/// The Hugging Face architectures (`config.json`'s `architectures[0]`, the layout's `class`) of the
/// layout cases that `gguf_serde::convert` converts. Explicit on purpose: a layout case whose
/// architecture is not here is pending ([`pending_cases`]): not compared with the reference's
/// output nor run by llama.cpp, and the test `pending_layout_cases_do_not_convert` checks that
/// converting it fails, so that no case passes unseen. Add an architecture when its converter
/// lands (then all its outputs must equal the reference's). The hand-written cases (no layout:
/// Llama 2, Llama 3, Mistral, Qwen2, Qwen3, Gemma 3, Phi-3) are all converted.
///
/// Pending now: only `OlmoeForCausalLM`, which the library does not convert on purpose: it is the example of an
/// architecture written outside the library (`examples/src/olmoe.rs`, tested against the same
/// reference by `the_examples_olmoe_equals_the_reference`).
pub const CONVERTED_LAYOUT_ARCHITECTURES: &[&str] = &[
    "MixtralForCausalLM",
    "Qwen2MoeForCausalLM",
    "Qwen3MoeForCausalLM",
    "Olmo2ForCausalLM",
    "Gemma2ForCausalLM",
    "SmolLM3ForCausalLM",
    "GraniteForCausalLM",
    "Glm4ForCausalLM",
    "GptOssForCausalLM",
    "DeepseekV3ForCausalLM",
    "DeepseekV2ForCausalLM",
    // the pre-quantized FP8 layout case tiny-Qwen3-FP8 (Qwen 3 itself is a hand-written case)
    "Qwen3ForCausalLM",
];

/// The Hugging Face architecture of a layout case (its `tests/data/hf-layouts/CASE.json`'s
/// `class`, e.g. `MixtralForCausalLM`), or `None` for a hand-written case (no layout file). Fails
/// the test if the layout file is not JSON or has no `class`.
pub fn layout_class(case: &str) -> Option<String> {
    let p = workspace_root().join("tests/data/hf-layouts").join(format!("{case}.json"));
    let text = std::fs::read_to_string(&p).ok()?;
    let layout: Json = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let class = layout["class"].as_str().unwrap_or_else(|| panic!("{}: no \"class\"", p.display()));
    Some(class.to_string())
}

/// The manifest's cases our converter is tested on, sorted: every hand-written case and the
/// layout cases whose architecture is in [`CONVERTED_LAYOUT_ARCHITECTURES`].
pub fn converted_cases() -> Vec<String> {
    convert_ref_cases()
        .into_iter()
        .filter(|c| layout_class(c).is_none_or(|a| CONVERTED_LAYOUT_ARCHITECTURES.contains(&a.as_str())))
        .collect()
}

/// The manifest's layout cases whose architecture is not (yet) in
/// [`CONVERTED_LAYOUT_ARCHITECTURES`], as `(case, architecture)`, sorted by case.
pub fn pending_cases() -> Vec<(String, String)> {
    convert_ref_cases()
        .into_iter()
        .filter_map(|c| layout_class(&c).map(|a| (c, a)))
        .filter(|(_, a)| !CONVERTED_LAYOUT_ARCHITECTURES.contains(&a.as_str()))
        .collect()
}

/// transformers' own logits on a layout case's checkpoint, as `tests/py/transformers_logits.py`
/// printed them (float32 on the CPU, eager attention): `prompt` and `generated` (greedy) token
/// ids, `n_vocab`, and one entry of `rows` per position of prompt + generated (row `r`: the logits
/// after the token at position `r`) with `top_ids`/`top_values` (the 32 largest, largest first),
/// `probe_ids`/`probe_values` (32 ids evenly spaced over the vocabulary), `sum` and `l2` (of the
/// whole row, float64) and `gap` (largest minus second largest). Fails the test if the manifest
/// has none for `case`.
pub fn transformers_logits(case: &str) -> Json {
    let m = convert_refs_manifest();
    let d = &m["cases"][case]["transformers_logits"];
    assert!(d.is_object(), "tests/data/convert-refs.json has no transformers_logits for case {case:?}");
    d.clone()
}

/// The reference's description of its output for `case` and `outtype` (one of [`OUTTYPES`]):
/// `sha256`, `size`, `keys`, `tensors`, ... (see the module docs). Fails the test if the manifest
/// has no such entry.
pub fn convert_ref(case: &str, outtype: &str) -> Json {
    let m = convert_refs_manifest();
    let d = &m["cases"][case]["outputs"][outtype];
    assert!(d.is_object(), "tests/data/convert-refs.json has no output for case {case:?}, outtype {outtype:?}");
    d.clone()
}

/// The sha256 of each input file of `case` as the reference converted it: `{FILE: sha256}`.
pub fn convert_ref_inputs(case: &str) -> Json {
    let m = convert_refs_manifest();
    let d = &m["cases"][case]["inputs"];
    assert!(d.is_object(), "tests/data/convert-refs.json has no case {case:?}");
    d.clone()
}

/// A case's checkpoint, remade by `make_convert_inputs.py` in a fresh temporary folder.
/// Derefs to the checkpoint folder, whose last component is the case name (the reference names
/// the model from it, so a converter must be given this folder, not a copy named otherwise).
#[derive(Debug)]
pub struct ConvertCase {
    /// The temporary folder holding the checkpoint (removed when dropped).
    pub tmp: TempDir,
    /// `<tmp>/<case>`: the checkpoint folder.
    pub dir: PathBuf,
}

impl std::ops::Deref for ConvertCase {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.dir
    }
}

/// A case's checkpoint in a fresh temporary folder: a copy of the one [`cached_convert_case`]
/// keeps, whose files have the manifest's sha256 (`convert-refs.json`'s `inputs`), so the
/// checkpoint is byte for byte the one the references were converted from. The test may change
/// or add files (its copy is its own). `None` (after a skip) when Python or the models are
/// skipped. [`remake_convert_case`] remakes it instead (the test that the script still makes it).
pub fn make_convert_case(case: &str) -> Option<ConvertCase> {
    let cached = cached_convert_case(case)?;
    let tmp = temp_dir(&format!("convert-case-{case}"));
    let dir = tmp.join(case);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in std::fs::read_dir(&cached).unwrap_or_else(|e| panic!("{}: {e}", cached.display())) {
        let from = entry.unwrap_or_else(|e| panic!("{}: {e}", cached.display())).path();
        let to = dir.join(from.file_name().unwrap_or_default());
        std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("copying {} to {}: {e}", from.display(), to.display()));
    }
    Some(ConvertCase { tmp, dir })
}

/// Remakes the inputs of `case` with `tests/py/make_convert_inputs.py` (needs `.venv` and
/// `models/`, as `scripts/setup.sh` makes them) in a fresh temporary folder and checks every
/// file's sha256 against the manifest, failing the test on any difference. `None` (after a skip)
/// when Python or the models are skipped.
pub fn remake_convert_case(case: &str) -> Option<ConvertCase> {
    let tmp = remake_convert_cases(&[case])?;
    let dir = tmp.join(case);
    Some(ConvertCase { tmp, dir })
}

/// [`remake_convert_case`] for several cases in one run of `make_convert_inputs.py` (one Python
/// start, whose imports cost about as much as making a small case): the fresh temporary folder
/// holds `<tmp>/<case>` for each case, every file's sha256 checked against the manifest.
pub fn remake_convert_cases(cases: &[&str]) -> Option<TempDir> {
    let py = python()?;
    let models = crate::model("vocab")?.parent().map(Path::to_path_buf)?;
    crate::model("gemma-3-270m-q4_k_m.gguf")?;
    let tmp = temp_dir("convert-cases");
    let (m, t) = (models.to_string_lossy().into_owned(), tmp.to_string_lossy().into_owned());
    let mut args = vec![m.as_str(), t.as_str()];
    args.extend(cases);
    run_py_text(&py, "make_convert_inputs.py", &args);
    for case in cases {
        let got = input_digests(&tmp.join(case));
        assert_eq!(
            got.as_ref(),
            Some(&convert_ref_inputs(case)),
            "case {case}: the remade inputs' sha256s differ from tests/data/convert-refs.json (pinned packages of scripts/setup.sh installed?)"
        );
    }
    Some(tmp)
}

/// Where [`cached_convert_case`] keeps `case`: `<target>/test-tmp/convert-cases/<case>-<tag>/`.
fn kept_case_dir(case: &str) -> PathBuf {
    let tag = crate::sha256(format!("{}{}", convert_ref_inputs(case), generator_digest()).as_bytes());
    crate::test_tmp_root().join("convert-cases").join(format!("{case}-{}", &tag[..12]))
}

/// Serializes the remaking of kept cases within a test process, and records the cases remade from
/// nothing (and checked against the manifest) by this process.
fn remade_here() -> std::sync::MutexGuard<'static, std::collections::BTreeSet<String>> {
    use std::sync::{Mutex, OnceLock};
    static REMADE: OnceLock<Mutex<std::collections::BTreeSet<String>>> = OnceLock::new();
    REMADE.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner())
}

/// Remakes `cases` from nothing in one run ([`remake_convert_cases`], which checks them against
/// the manifest) and keeps each where [`cached_convert_case`] looks for it, replacing what was
/// there unless it has the same files. `None` (after a skip) when Python or the models are skipped.
fn remake_and_keep(remade: &mut std::collections::BTreeSet<String>, cases: &[&str]) -> Option<()> {
    if cases.is_empty() {
        return Some(());
    }
    let made = remake_convert_cases(cases)?;
    for case in cases {
        let entry = kept_case_dir(case);
        let root = entry.parent().expect("convert-cases");
        std::fs::create_dir_all(root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
        remade.insert(case.to_string());
        if input_digests(&entry).as_ref() == Some(&convert_ref_inputs(case)) {
            // Kept already, the same files (which another test may be reading): left alone.
            continue;
        }
        // Renamed into place whole, so another test process never sees a half-written folder.
        let _ = std::fs::remove_dir_all(&entry);
        if std::fs::rename(made.join(case), &entry).is_err() {
            // Another process put the case there meanwhile; it is checked below.
            assert!(entry.is_dir(), "{}: could not keep the remade case", entry.display());
        }
        assert_eq!(
            input_digests(&entry).as_ref(),
            Some(&convert_ref_inputs(case)),
            "{}: the kept case differs from the manifest",
            entry.display()
        );
    }
    Some(())
}

/// Makes sure each of `cases` has been remade from nothing by this test process and checked
/// against the manifest: those that [`cached_convert_case`] has not remade already (it does when
/// a kept copy is missing, as in a fresh target folder) are remade now, in one Python run, and
/// kept for the other tests. `None` (after a skip) when Python or the models are skipped.
pub fn remade_from_nothing(cases: &[&str]) -> Option<()> {
    let mut remade = remade_here();
    let todo: Vec<&str> = cases.iter().copied().filter(|c| !remade.contains(*c)).collect();
    remake_and_keep(&mut remade, &todo)
}

/// The checkpoint of `case`, made once per target directory and kept across runs in
/// `<target>/test-tmp/convert-cases/<case>-<tag>/` (`tag`: the start of the sha256 of the
/// manifest's `inputs` of the case and of the scripts and layouts that make it, so a remade
/// reference or a changed generator gets a new folder, made and checked again) by
/// [`remake_convert_cases`]; before its first use in a test process every file's sha256 is checked
/// against the manifest (a folder that differs is made again). When one case is missing, every
/// case of the manifest that has no kept folder is made in the same Python run (a fresh target
/// folder, as CI has, needs them all). Each of these checkpoints is used by several tests and
/// binaries, and remaking one takes seconds of Python. Do not change its files:
/// [`make_convert_case`] gives a copy. `None` (after a skip) when Python or the models are skipped.
pub fn cached_convert_case(case: &str) -> Option<PathBuf> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Slot = Arc<Mutex<Option<PathBuf>>>;
    static CHECKED: OnceLock<Mutex<HashMap<String, Slot>>> = OnceLock::new();
    python()?;
    crate::model("vocab")?;
    crate::model("gemma-3-270m-q4_k_m.gguf")?;
    let slot: Slot = {
        let mut map = CHECKED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
        map.entry(case.to_string()).or_default().clone()
    };
    // One test of this process makes or checks the case; the others wait for it.
    let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = slot.as_ref() {
        return Some(p.clone());
    }
    let want = convert_ref_inputs(case);
    let entry = kept_case_dir(case);
    if input_digests(&entry).as_ref() != Some(&want) {
        let mut remade = remade_here();
        // Another test may have made it while this one waited.
        if input_digests(&entry).as_ref() != Some(&want) {
            let all = convert_ref_cases();
            let mut todo: Vec<&str> =
                all.iter().map(String::as_str).filter(|c| *c != case && !kept_case_dir(c).is_dir()).collect();
            todo.push(case);
            remake_and_keep(&mut remade, &todo)?;
        }
    }
    *slot = Some(entry.clone());
    Some(entry)
}

/// The sha256 of what makes the convert cases' inputs besides the pinned packages: the scripts
/// `tests/py/make_convert_inputs.py` and `tests/py/hf_tokenizer_from_gguf.py` and the layout
/// files of `tests/data/hf-layouts/` (a derived case's base layout included), so that a kept case
/// is made again (and checked against the manifest) as soon as one of them changes, as if every
/// test process remade it.
pub fn generator_digest() -> String {
    files_digest(&["py/make_convert_inputs.py", "py/hf_tokenizer_from_gguf.py"], "data/hf-layouts")
}

/// The sha256 of the sha256s (hex) of the files `scripts` and then of every file of the folder
/// `layouts`, sorted by path (all relative to `tests/`): what makes a kept test input besides the
/// pinned packages ([`generator_digest`]). Fails the test if one cannot be read.
pub fn files_digest(scripts: &[&str], layouts: &str) -> String {
    let root = workspace_root().join("tests");
    let layouts = root.join(layouts);
    let mut files: Vec<PathBuf> = scripts.iter().map(|s| root.join(s)).collect();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&layouts)
        .unwrap_or_else(|e| panic!("{}: {e}", layouts.display()))
        .map(|e| e.unwrap_or_else(|e| panic!("{}: {e}", layouts.display())).path())
        .collect();
    cases.sort();
    files.extend(cases);
    let mut all = Vec::new();
    for file in files {
        all.extend(
            crate::sha256(&std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))).into_bytes(),
        );
    }
    crate::sha256(&all)
}

/// `{FILE: sha256}` of the files of `dir`, as `tests/py/convert_refs_manifest.py inputs` prints
/// it, or `None` if `dir` cannot be read.
pub fn input_digests(dir: &Path) -> Option<Json> {
    let mut files = serde_json::Map::new();
    for entry in std::fs::read_dir(dir).ok()? {
        let path = entry.ok()?.path();
        let name = path.file_name()?.to_string_lossy().into_owned();
        files.insert(name, Json::String(crate::sha256(&std::fs::read(&path).ok()?)));
    }
    Some(Json::Object(files))
}

/// The front matter of the model card (`README.md`) of the checkpoint or adapter folder `dir`, as
/// gguf-py's `Metadata.load_model_card` reads it (YAML; `tests/py/model_card.py`), or `None`
/// when it reads none (no `README.md`, or no front matter): what a caller of the library passes as
/// `ConvertOptions::model_card`, as the CLI does. `load_model_card` reads `README.md` alone, so
/// its answer is kept in `<target>/test-tmp/model-cards/`, keyed by the sha256 of `README.md` (or
/// of its absence) and of `tests/py/model_card.py`, and Python runs once per distinct card in a
/// target folder rather than once per test and case (a start that imports gguf-py: 0.5 to 2 s of
/// CPU). `None` also when Python is skipped. Fails the test if the script fails.
pub fn model_card(dir: &Path) -> Option<Json> {
    let py = python()?;
    let script = workspace_root().join("tests/py/model_card.py");
    let script_bytes = std::fs::read(&script).unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    let readme = std::fs::read(dir.join("README.md")).ok();
    let mut keyed = crate::sha256(&script_bytes).into_bytes();
    match &readme {
        Some(text) => keyed.extend(format!("README.md {}", crate::sha256(text)).into_bytes()),
        None => keyed.extend(b"no README.md"),
    }
    let key = crate::sha256(&keyed);
    let root = crate::test_tmp_root().join("model-cards");
    let kept = root.join(format!("{}.json", &key[..16]));
    let card: Json = match std::fs::read(&kept).ok().and_then(|b| serde_json::from_slice(&b).ok()) {
        Some(card) => card,
        None => {
            let card = run_py(&py, "model_card.py", &[&dir.to_string_lossy()]);
            std::fs::create_dir_all(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
            // Written aside and renamed, so that a concurrent test never reads half a file.
            let part = root.join(format!("{}.{}.part", &key[..16], std::process::id()));
            std::fs::write(&part, card.to_string()).unwrap_or_else(|e| panic!("{}: {e}", part.display()));
            std::fs::rename(&part, &kept).unwrap_or_else(|e| panic!("{}: {e}", kept.display()));
            card
        }
    };
    card.as_object().is_some_and(|m| !m.is_empty()).then_some(card)
}

/// Whether the file at `path` is the reference's output `reference` (a manifest entry, as
/// [`convert_ref`] gives it): `None` when its size and sha256 are the entry's, so that it is the
/// reference's file byte for byte and its description is the entry's (a description is a
/// function of the bytes alone); otherwise `Some` of its description ([`describe_gguf`];
/// `Json::Null` when Python is skipped), to report what differs. A matching file costs no Python
/// run (0.05 to 0.35 s of CPU each, for outputs counted by the hundred).
pub fn differs_from_reference(path: &Path, reference: &Json) -> Option<Json> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let same = reference["size"].as_u64() == Some(bytes.len() as u64)
        && reference["sha256"].as_str() == Some(crate::sha256(&bytes).as_str());
    (!same).then(|| describe_gguf(path).unwrap_or(Json::Null))
}

/// Describes a GGUF file as the manifest describes the reference's outputs (through
/// `tests/py/convert_refs_manifest.py gguf`), for comparing with [`convert_ref`]. `None` when
/// Python is skipped.
pub fn describe_gguf(path: &Path) -> Option<Json> {
    let py = python()?;
    Some(run_py(&py, "convert_refs_manifest.py", &["gguf", &path.to_string_lossy()]))
}
