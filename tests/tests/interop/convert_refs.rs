//! The inputs of the converter references (`tests/data/convert-refs.json`, made with torch by
//! `scripts/make-convert-refs.sh`) are remade here without torch, byte for byte: every file of
//! every case has the sha256 the manifest recorded, so a converter test compares its output on
//! exactly the checkpoint llama.cpp's `convert_hf_to_gguf.py` converted. (The other tests take
//! their checkpoints from `make_convert_case`, copies of ones made once and kept, with the same
//! sha256s, made again whenever the scripts that make them change;
//! `inputs_remade_with_the_references_digests` remakes one case of each kind in every run, and
//! `every_other_case_s_inputs_remade_with_the_references_digests`, nightly, all the others.)

use gguf_tests::convert_refs::{
    convert_ref, convert_ref_cases, converted_cases, differs_from_reference, layout_class, make_convert_case,
    pending_cases, remade_from_nothing, OUTTYPES,
};

/// The cases whose inputs `inputs_remade_with_the_references_digests` remakes in every run: one
/// of each way `tests/py/make_convert_inputs.py` makes a checkpoint (a SentencePiece and a BPE
/// tokenizer rebuilt from llama.cpp's vocabulary files, Llama 3's tokenizer edits and two shards
/// with an index, a transformers layout with the `llama3` and with the `glm4` tokenizer edit, the
/// FP8 E4M3 and E5M2 block quantization, and the MXFP4 derivation of gpt-oss). The other cases
/// (more architectures through the same paths, and Gemma's 262,144-token tokenizer, the slowest)
/// are remade by `every_other_case_s_inputs_remade_with_the_references_digests`
/// (`scripts/test-nightly.sh`); in the suite each is also made and checked by `cached_convert_case`
/// whenever its kept copy is missing (a fresh target folder, as CI has) or the scripts and
/// layouts that make it have changed.
const REMADE_IN_EVERY_RUN: [&str; 8] = [
    "tiny-Llama-2-chat-hf",
    "tiny-Qwen2-Instruct",
    "tiny-Llama-3.2-Instruct",
    "tiny-SmolLM3",
    "tiny-GLM-4",
    "tiny-DeepSeek-V3-FP8",
    "tiny-Qwen3-FP8",
    "tiny-gpt-oss-mxfp4",
];

/// Remakes each of `cases` from nothing and checks its inputs against the manifest, in one Python
/// run for those this test process has not remade already (`remade_from_nothing`: a case whose
/// kept copy was missing was remade, and checked, when a test first used it), and that the
/// manifest has a description of the reference's output at every output type.
fn remake_and_check(cases: &[String]) {
    let names: Vec<&str> = cases.iter().map(String::as_str).collect();
    if remade_from_nothing(&names).is_none() {
        return;
    }
    for case in cases {
        let Some(dir) = gguf_tests::convert_refs::cached_convert_case(case) else { return };
        assert!(dir.join("config.json").is_file(), "{case}: no config.json");
        for outtype in OUTTYPES {
            let r = convert_ref(case, outtype);
            assert_eq!(r["sha256"].as_str().map(str::len), Some(64), "{case} {outtype}: no sha256");
            assert!(r["keys"].as_array().is_some_and(|k| !k.is_empty()), "{case} {outtype}: no keys");
            assert!(r["tensors"].as_array().is_some_and(|t| !t.is_empty()), "{case} {outtype}: no tensors");
        }
    }
}

#[test]
fn inputs_remade_with_the_references_digests() {
    let cases = convert_ref_cases();
    // 7 hand-written cases and 10 made from transformers layouts
    assert!(cases.len() >= 17, "manifest has {} cases", cases.len());
    let every_run: Vec<String> = REMADE_IN_EVERY_RUN.iter().map(|c| c.to_string()).collect();
    for case in &every_run {
        assert!(cases.contains(case), "{case} is not a case of tests/data/convert-refs.json");
    }
    remake_and_check(&every_run);
}

/// The rest of `inputs_remade_with_the_references_digests`: every other case of the manifest.
#[test]
#[ignore = "nightly (scripts/test-nightly.sh): the cases beyond one of each kind, seconds of Python each"]
fn every_other_case_s_inputs_remade_with_the_references_digests() {
    let others: Vec<String> =
        convert_ref_cases().into_iter().filter(|c| !REMADE_IN_EVERY_RUN.contains(&c.as_str())).collect();
    remake_and_check(&others);
}

/// `gguf_serde::convert::general::general_kv` on each case's remade checkpoint gives the
/// `general.*` keys llama.cpp's converter wrote (between `general.architecture` and the
/// architecture's keys), with the same types and values; the model card's front matter is read by
/// gguf-py's own `Metadata.load_model_card` (YAML), the parameter counts are `ParamCounts::from_tensors` of the reference's tensors.
/// The converted cases (`converted_cases`: the layout cases once their architecture converts).
#[test]
fn general_keys_equal_the_references() {
    use gguf_serde::convert::general::{general_kv, ParamCounts};
    use gguf_serde::{Array, Value};
    use serde_json::Value as Json;
    use sha2::{Digest, Sha256};

    if gguf_tests::python().is_none() {
        return;
    }
    for case in converted_cases() {
        let Some(dir) = make_convert_case(&case) else { return };
        let reference = convert_ref(&case, "f32");
        let shapes: Vec<(String, Vec<u64>)> = reference["tensors"]
            .as_array()
            .expect("tensors")
            .iter()
            .map(|t| {
                let shape = t["shape"].as_array().expect("shape").iter().map(|d| d.as_u64().expect("dim")).collect();
                (t["name"].as_str().expect("name").to_string(), shape)
            })
            .collect();
        let params = ParamCounts::from_tensors(shapes.iter().map(|(n, s)| (n.as_str(), s.as_slice())));
        let read = |name: &str| -> Option<Json> {
            let p = dir.join(name);
            p.is_file().then(|| serde_json::from_slice(&std::fs::read(&p).expect("read")).expect("JSON"))
        };
        let config = read("config.json").expect("config.json");
        let card = gguf_tests::convert_refs::model_card(&dir);
        let ours = general_kv(&dir, &config, &params, card.as_ref(), read("generation_config.json").as_ref(), None)
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        let theirs: Vec<&Json> = reference["keys"]
            .as_array()
            .expect("keys")
            .iter()
            .filter(|k| {
                let key = k["key"].as_str().unwrap_or("");
                key.starts_with("general.")
                    && !matches!(key, "general.architecture" | "general.file_type" | "general.quantization_version")
            })
            .collect();
        let ours_json: Vec<Json> = ours
            .keys()
            .map(|(k, v)| match v {
                Value::String(s) => serde_json::json!({"key": k, "type": "string", "value": s}),
                Value::U32(n) => serde_json::json!({"key": k, "type": "u32", "value": n}),
                Value::I32(n) => serde_json::json!({"key": k, "type": "i32", "value": n}),
                Value::F32(f) => serde_json::json!({"key": k, "type": "f32", "value": f64::from(*f)}),
                Value::Array(Array::String(items)) => {
                    let mut h = Sha256::new();
                    for s in items {
                        h.update((s.len() as u64).to_le_bytes());
                        h.update(s.as_bytes());
                    }
                    let digest: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
                    serde_json::json!({"key": k, "type": "array<string>", "length": items.len(), "sha256": digest})
                }
                other => panic!("{case}: {k}: unexpected value {other:?}"),
            })
            .collect();
        let theirs: Vec<Json> = theirs.into_iter().cloned().collect();
        assert_eq!(ours_json, theirs, "{case}: general.* keys differ from the reference's");
    }
}

/// Every layout case's architecture is either converted (in `CONVERTED_LAYOUT_ARCHITECTURES`) or
/// pending, and a pending one really does not convert yet: `gguf_serde::convert` refuses its
/// checkpoint. When a family's converter lands this test fails, naming the architecture to add to
/// `CONVERTED_LAYOUT_ARCHITECTURES` (after which its outputs must equal the reference's).
#[test]
fn pending_layout_cases_do_not_convert() {
    use gguf_serde::convert::{convert, ConvertOptions, OutType};
    let pending = pending_cases();
    let layout_cases = convert_ref_cases().into_iter().filter(|c| layout_class(c).is_some()).count();
    assert_eq!(converted_cases().len() + pending.len(), convert_ref_cases().len());
    assert!(layout_cases >= 10, "{layout_cases} layout cases");
    let mut converted = Vec::new();
    for (case, arch) in &pending {
        let Some(dir) = make_convert_case(case) else { return };
        let out = dir.tmp.join("pending.gguf");
        if convert(&*dir, &out, &ConvertOptions::new(OutType::F32)).is_ok() {
            converted.push(format!("{case} ({arch})"));
        }
    }
    assert!(
        converted.is_empty(),
        "these pending cases now convert; add their architectures to CONVERTED_LAYOUT_ARCHITECTURES \
         (tests/src/convert_refs.rs) so they are compared with the reference: {}",
        converted.join(", ")
    );
}

/// The output types [`converter_output_equals_the_references`] checks case `i` of
/// `converted_cases()` at: `q8_0` for every case (the type with the most per-tensor rules: which
/// tensors stay F32, which are quantized, the F16 fallback of rows that are not whole Q8_0
/// blocks, the architecture's forced types, FP8 and MXFP4 sources), and one of `f16`, `bf16`,
/// `auto` in turn, so that each of those is checked on a third of the cases (among them
/// SentencePiece and BPE vocabularies, dense and MoE, FP8 and MXFP4 checkpoints). `f32` of every
/// case is checked by `convert_runs` (its F32 output, which llama.cpp runs, has the reference's
/// sha256). [`every_other_outtype_equals_the_references`] (`scripts/test-nightly.sh`) checks the
/// rest of the matrix.
fn outtypes_in_every_run(i: usize) -> [&'static str; 2] {
    ["q8_0", ["f16", "bf16", "auto"][i % 3]]
}

/// Our converter on each reference's checkpoint, for each `--outtype` of `pick(case index)`,
/// against what llama.cpp's `convert_hf_to_gguf.py` wrote (the manifest): the same keys (types
/// and values), the same tensors (names, types, shapes, offsets, sizes) and the same sha256 of the
/// whole file. The model card's front matter is read by gguf-py's own YAML reading
/// (`gguf_tests::convert_refs::model_card`) and passed in, as a caller of the library does.
/// Returns how many outputs were checked; `None` after a skip.
fn outputs_equal_the_references(pick: impl Fn(usize) -> Vec<&'static str>) -> Option<usize> {
    use gguf_serde::convert::{convert, ConvertOptions, OutType};
    gguf_tests::python()?;
    let mut mismatches = Vec::new();
    let (mut matched, mut checked) = (0, 0);
    let cases = converted_cases();
    assert!(cases.len() >= 7, "cases: {cases:?}");
    for (i, case) in cases.iter().enumerate() {
        let case = case.as_str();
        let dir = make_convert_case(case)?;
        let card = gguf_tests::convert_refs::model_card(&dir);
        for outtype in pick(i) {
            checked += 1;
            let out = dir.tmp.join(format!("ours-{outtype}.gguf"));
            let ot: OutType = outtype.parse().unwrap_or_else(|e| panic!("{outtype}: {e:?}"));
            let opts = ConvertOptions { model_card: card.as_ref(), ..ConvertOptions::new(ot) };
            convert(&*dir, &out, &opts).unwrap_or_else(|e| panic!("{case} {outtype}: {e:?}"));
            let theirs = convert_ref(case, outtype);
            let Some(ours) = differs_from_reference(&out, &theirs) else {
                matched += 1;
                continue;
            };
            let keys = |j: &serde_json::Value| j["keys"].as_array().cloned().unwrap_or_default();
            let (a, b) = (keys(&ours), keys(&theirs));
            let mut diff: Vec<String> = Vec::new();
            for k in b.iter().filter(|k| !a.contains(k)).take(4) {
                diff.push(format!("reference has {k}"));
            }
            for k in a.iter().filter(|k| !b.contains(k)).take(4) {
                diff.push(format!("we have {k}"));
            }
            if ours["tensors"] != theirs["tensors"] {
                diff.push("tensors differ".into());
            }
            mismatches.push(format!("{case} {outtype}: sha256 differs; {}", diff.join("; ")));
        }
    }
    assert!(mismatches.is_empty(), "{matched} outputs equal the references; these differ:\n{}", mismatches.join("\n"));
    assert_eq!(matched, checked, "outputs equal to the references");
    Some(checked)
}

/// [`outputs_equal_the_references`] at the output types of [`outtypes_in_every_run`]: every
/// case, SentencePiece (Llama 2, Mistral, Gemma 3, Phi-3) and BPE (`tokenizer.json` without
/// `tokenizer.model`: Llama 3 with its `llama3` RoPE factors tensor, Qwen2, Qwen3), and the
/// layout cases whose architecture is converted (`CONVERTED_LAYOUT_ARCHITECTURES`; the others
/// are checked by `pending_layout_cases_do_not_convert`), at `q8_0` and one of `f16`, `bf16`,
/// `auto`; every output type is checked on several cases.
#[test]
fn converter_output_equals_the_references() {
    let n = converted_cases().len();
    let every_run = (0..n).flat_map(outtypes_in_every_run).collect::<Vec<_>>();
    for outtype in OUTTYPES.iter().filter(|&&t| t != "f32") {
        assert!(every_run.contains(outtype), "{outtype} is checked on no case");
    }
    let Some(checked) = outputs_equal_the_references(|i| outtypes_in_every_run(i).to_vec()) else { return };
    assert_eq!(checked, 2 * n);
}

/// The rest of the matrix of [`converter_output_equals_the_references`]: each case at every
/// output type it does not check there, `f32` included (also checked by `convert_runs`).
#[test]
#[ignore = "nightly (scripts/test-nightly.sh): the output types beyond q8_0 and one other per case, a conversion each"]
fn every_other_outtype_equals_the_references() {
    let others = |i: usize| OUTTYPES.iter().copied().filter(|t| !outtypes_in_every_run(i).contains(t)).collect();
    let Some(checked) = outputs_equal_the_references(others) else { return };
    assert_eq!(checked, (OUTTYPES.len() - 2) * converted_cases().len());
}

/// The pre-quantized FP8 cases (`tiny-DeepSeek-V3-FP8`: F8_E4M3, `tiny-Qwen3-FP8`: F8_E5M2, block
/// scales with partial edge blocks) converted with `--fp8-as-q8` (`ConvertOptions::fp8_as_q8`) at
/// `--outtype f16`, against what `convert_hf_to_gguf.py --outtype f16 --fp8-as-q8` wrote: the same
/// keys, tensors and sha256 (the matrices dequantized from FP8 in Q8_0, F16 where a row is not
/// whole blocks, the others F16). Their five plain output types are compared by
/// `converter_output_equals_the_references`. Also converted a row at a time
/// (`ConvertOptions::chunk_elems` 1: each chunk a row, or one transposed matrix of DeepSeek's
/// `attn_k_b`, scaled by its own block row), with the same file.
#[test]
fn fp8_as_q8_equals_the_reference() {
    use gguf_serde::convert::{convert, ConvertOptions, OutType};
    use gguf_tests::convert_refs::FP8_AS_Q8;
    let manifest = gguf_tests::convert_refs::convert_refs_manifest();
    let cases: Vec<String> =
        convert_ref_cases().into_iter().filter(|c| manifest["cases"][c]["outputs"][FP8_AS_Q8].is_object()).collect();
    assert_eq!(cases, ["tiny-DeepSeek-V3-FP8", "tiny-Qwen3-FP8"]);
    let mut differ = Vec::new();
    for case in &cases {
        let Some(dir) = make_convert_case(case) else { return };
        let out = dir.tmp.join("fp8-as-q8.gguf");
        let opts = ConvertOptions { fp8_as_q8: true, ..ConvertOptions::new(OutType::F16) };
        convert(&*dir, &out, &opts).unwrap_or_else(|e| panic!("{case}: {e:?}"));
        if differs_from_reference(&out, &convert_ref(case, FP8_AS_Q8)).is_some() {
            differ.push(format!("{case} --fp8-as-q8"));
        }
        let out = dir.tmp.join("row-by-row.gguf");
        convert(&*dir, &out, &ConvertOptions { chunk_elems: 1, ..ConvertOptions::new(OutType::F32) })
            .unwrap_or_else(|e| panic!("{case}: {e:?}"));
        let digest = gguf_tests::sha256(&std::fs::read(&out).unwrap());
        if Some(digest.as_str()) != convert_ref(case, "f32")["sha256"].as_str() {
            differ.push(format!("{case} f32 a row at a time"));
        }
    }
    assert!(differ.is_empty(), "differ from the reference: {differ:?}");
}

/// A pre-quantized checkpoint of a method the converter does not reproduce is refused before
/// anything is written, naming the method: `config.json`'s `quantization_config.quant_method`
/// set to each of the methods the reference dequantizes otherwise (`bitnet`, `gptq`,
/// `compressed-tensors`, `modelopt`, `mxfp4` outside gpt-oss) or refuses (`awq`), on the FP8
/// DeepSeek-V3 case; and a scale that does not cover its weight (`weight_block_size` too small
/// for the scale grid) names the weight.
#[test]
fn other_quantization_methods_are_refused_by_name() {
    use gguf_serde::convert::{convert, ConvertError, ConvertOptions, OutType};
    let case = "tiny-DeepSeek-V3-FP8";
    let Some(dir) = make_convert_case(case) else { return };
    let cfg_path = dir.join("config.json");
    let original: serde_json::Value = serde_json::from_slice(&std::fs::read(&cfg_path).unwrap()).unwrap();
    for method in ["bitnet", "gptq", "compressed-tensors", "modelopt", "mxfp4", "awq"] {
        let mut cfg = original.clone();
        cfg["quantization_config"]["quant_method"] = method.into();
        std::fs::write(&cfg_path, serde_json::to_vec_pretty(&cfg).unwrap()).unwrap();
        let out = dir.tmp.join(format!("{method}.gguf"));
        match convert(&*dir, &out, &ConvertOptions::new(OutType::F32)) {
            Err(ConvertError::UnsupportedQuantization { method: m, .. }) => assert_eq!(m, method),
            other => panic!("{method}: {other:?}"),
        }
        assert!(!out.exists(), "{method}: a file was left");
    }
    let mut cfg = original.clone();
    cfg["quantization_config"]["weight_block_size"] = serde_json::json!([8, 8]);
    std::fs::write(&cfg_path, serde_json::to_vec_pretty(&cfg).unwrap()).unwrap();
    match convert(&*dir, dir.tmp.join("small-blocks.gguf"), &ConvertOptions::new(OutType::F32)) {
        Err(ConvertError::Unsupported { name, reason }) => {
            assert!(name.ends_with(".weight") && reason.contains("_scale_inv"), "{name}: {reason}")
        }
        other => panic!("blocks of 8: {other:?}"),
    }
}

/// `examples/src/olmoe.rs`, a mixture-of-experts architecture written outside the library with its
/// public API only (the library has no OLMoE), on the transformers-saved `tiny-OLMoE` checkpoint,
/// against what `convert_hf_to_gguf.py` wrote for it, at every output type: the same keys, tensors
/// and sha256.
#[test]
fn the_examples_olmoe_equals_the_reference() {
    use gguf_serde::convert::{convert_with, ConvertOptions, OutType};
    let case = "tiny-OLMoE";
    assert_eq!(gguf_tests::convert_refs::layout_class(case).as_deref(), Some("OlmoeForCausalLM"));
    let Some(dir) = make_convert_case(case) else { return };
    let mut differ = Vec::new();
    for outtype in OUTTYPES {
        let out = dir.tmp.join(format!("olmoe-{outtype}.gguf"));
        let ot: OutType = outtype.parse().unwrap_or_else(|e| panic!("{outtype}: {e:?}"));
        convert_with(&*dir, &out, &gguf_examples::olmoe::Olmoe, &ConvertOptions::new(ot))
            .unwrap_or_else(|e| panic!("{case} {outtype}: {e:?}"));
        if differs_from_reference(&out, &convert_ref(case, outtype)).is_some() {
            differ.push(outtype);
        }
    }
    assert!(differ.is_empty(), "the OLMoE example differs from the reference at {differ:?}");
}
