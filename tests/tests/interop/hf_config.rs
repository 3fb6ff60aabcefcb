//! `HfConfig::load` (our reading of `config.json`, `gguf_serde::convert::config_defaults`)
//! against transformers itself: `tests/py/hf_config.py` replicates the reference's
//! `ModelBase.load_hparams` (`AutoConfig.from_pretrained(dir).to_dict()`, the raw file when that
//! raises) and `TextModel`'s `text_config` merge, with the installed transformers, and every field
//! either side has must be equal.

use gguf_serde::convert::checkpoint::python_path_str;
use gguf_serde::convert::config_defaults::{NotLoaded, CONFIG_CLASSES};
use gguf_serde::convert::HfConfig;
use serde_json::{json, Map, Value as Json};

/// The Hugging Face class of each `model_type` of the table.
const CLASSES: &[(&str, &str)] = &[
    ("llama", "LlamaForCausalLM"),
    ("mistral", "MistralForCausalLM"),
    ("qwen2", "Qwen2ForCausalLM"),
    ("qwen3", "Qwen3ForCausalLM"),
    ("gemma3_text", "Gemma3ForCausalLM"),
    ("phi3", "Phi3ForCausalLM"),
    ("mixtral", "MixtralForCausalLM"),
    ("qwen2_moe", "Qwen2MoeForCausalLM"),
    ("qwen3_moe", "Qwen3MoeForCausalLM"),
    ("olmo2", "Olmo2ForCausalLM"),
    ("gemma2", "Gemma2ForCausalLM"),
    ("smollm3", "SmolLM3ForCausalLM"),
    ("granite", "GraniteForCausalLM"),
    ("glm4", "Glm4ForCausalLM"),
    ("deepseek_v2", "DeepseekV2ForCausalLM"),
    ("deepseek_v3", "DeepseekV3ForCausalLM"),
    ("gpt_oss", "GptOssForCausalLM"),
];

/// A minimal `config.json`: the class, its `model_type` and small sizes (every field of these
/// classes has a default); `extra` is merged over it.
fn minimal(model_type: &str, extra: Json) -> Json {
    let class = CLASSES.iter().find(|(m, _)| *m == model_type).map(|(_, c)| *c).expect("a class of the table");
    let mut c = json!({
        "architectures": [class], "model_type": model_type, "hidden_size": 64, "num_attention_heads": 4,
        "num_hidden_layers": 3, "intermediate_size": 128, "vocab_size": 100,
    });
    if let (Some(c), Json::Object(e)) = (c.as_object_mut(), extra) {
        c.extend(e);
    }
    c
}

/// The cases: every class at its defaults, then the normalisations and refusals of note.
fn cases() -> Vec<(String, Json)> {
    let mut v: Vec<(String, Json)> = CLASSES.iter().map(|(m, _)| (format!("min-{m}"), minimal(m, json!({})))).collect();
    let half = 64 / 4 / 2;
    let factors: Vec<f64> = (0..half).map(|i| 1.0 + f64::from(i) * 0.5).collect();
    let more = [
        // legacy `type`, top-level rope_theta moved in, original_max_position_embeddings from max positions
        (
            "llama-yarn-legacy-type",
            minimal("llama", json!({"rope_theta": 500000.0, "rope_scaling": {"type": "yarn", "factor": 4.0}})),
        ),
        ("llama-rope-scaling-null", minimal("llama", json!({"rope_theta": 10000, "rope_scaling": null}))),
        (
            "llama-llama3",
            minimal(
                "llama",
                json!({"max_position_embeddings": 131072, "rope_theta": 500000.0, "rope_scaling": {"factor": 32.0,
                "high_freq_factor": 4.0, "low_freq_factor": 1.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}}),
            ),
        ),
        // transformers raises (a required key missing): the raw file
        ("llama-llama3-missing", minimal("llama", json!({"rope_scaling": {"rope_type": "llama3", "factor": 8.0}}))),
        ("llama-linear", minimal("llama", json!({"rope_scaling": {"type": "linear", "factor": 2.0}}))),
        ("llama-partial", minimal("llama", json!({"partial_rotary_factor": 0.5, "rope_theta": 1e4}))),
        ("llama-float-size", minimal("llama", json!({"hidden_size": 64.0}))),
        ("llama-int-eps", minimal("llama", json!({"rms_norm_eps": 1}))),
        ("llama-indivisible", minimal("llama", json!({"hidden_size": 66}))),
        (
            "llama-extras",
            minimal(
                "llama",
                json!({"torch_dtype": "bfloat16", "transformers_version": "4.57.1", "max_length": 20,
                "temperature": 0.7, "_name_or_path": "org/model", "custom_key": [1, 2], "num_key_value_heads": null,
                "id2label": {"0": "a", "1": "b", "2": "c"}, "layer_types": ["attention", "full_attention", "full_attention"]}),
            ),
        ),
        ("llama-num-labels", minimal("llama", json!({"num_labels": 3}))),
        ("mistral-head-dim", minimal("mistral", json!({"head_dim": 32, "sliding_window": null}))),
        (
            "qwen2-sliding",
            minimal("qwen2", json!({"use_sliding_window": true, "sliding_window": 512, "max_window_layers": 1})),
        ),
        ("qwen2-moe-sliding", minimal("qwen2_moe", json!({"use_sliding_window": true, "max_window_layers": 2}))),
        ("qwen3-head-dim-null", minimal("qwen3", json!({"head_dim": null}))),
        ("qwen3-moe-experts", minimal("qwen3_moe", json!({"num_experts": 4, "num_experts_per_tok": 2}))),
        ("mixtral-num-experts", minimal("mixtral", json!({"num_experts": 4}))),
        (
            "deepseek-v3-head-dim",
            minimal("deepseek_v3", json!({"head_dim": 8, "num_local_experts": 16, "qk_rope_head_dim": 16})),
        ),
        (
            "gemma3-text-reference",
            minimal(
                "gemma3_text",
                json!({"num_hidden_layers": 2, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0, "rope_scaling": null,
                "head_dim": 16, "_sliding_window_pattern": 6, "layer_types": ["sliding_attention", "full_attention"]}),
            ),
        ),
        ("gemma3-text-pattern", minimal("gemma3_text", json!({"sliding_window_pattern": 2, "num_hidden_layers": 4}))),
        (
            "gemma3-text-bidirectional",
            minimal("gemma3_text", json!({"use_bidirectional_attention": true, "sliding_window": 513})),
        ),
        (
            "gemma3-text-linear",
            minimal(
                "gemma3_text",
                json!({"num_hidden_layers": 6, "rope_scaling": {"rope_type": "linear", "factor": 8.0}}),
            ),
        ),
        ("gemma2-layers", minimal("gemma2", json!({"num_hidden_layers": 4, "rope_theta": 10000.0}))),
        (
            "smollm3-sliding",
            minimal("smollm3", json!({"use_sliding_window": true, "sliding_window": 64, "num_hidden_layers": 8})),
        ),
        ("glm4-partial", minimal("glm4", json!({"partial_rotary_factor": 0.25, "eos_token_id": 7}))),
        (
            "gpt-oss-scaling",
            minimal(
                "gpt_oss",
                json!({"rope_scaling": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 2048}}),
            ),
        ),
        // Phi-3: longrope with and without the top-level original_max_position_embeddings, `su`
        // (renamed longrope after standardisation, so no original length: raises), yarn
        (
            "phi3-longrope",
            minimal(
                "phi3",
                json!({"max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
                "rope_scaling": {"type": "longrope", "long_factor": factors, "short_factor": factors}}),
            ),
        ),
        (
            "phi3-longrope-no-orig",
            minimal(
                "phi3",
                json!({"max_position_embeddings": 131072,
                "rope_scaling": {"type": "longrope", "long_factor": factors, "short_factor": factors}}),
            ),
        ),
        (
            "phi3-su",
            minimal("phi3", json!({"rope_scaling": {"type": "su", "long_factor": factors, "short_factor": factors}})),
        ),
        (
            "phi3-yarn",
            minimal(
                "phi3",
                json!({"rope_scaling": {"type": "yarn", "factor": 2.0, "long_factor": factors, "short_factor": factors}}),
            ),
        ),
        ("phi3-partial", minimal("phi3", json!({"partial_rotary_factor": 0.5}))),
        ("phi3-linear-refused", minimal("phi3", json!({"rope_scaling": {"type": "linear", "factor": 2.0}}))),
    ];
    v.extend(more.into_iter().map(|(n, c)| (n.to_owned(), c)));
    v
}

/// The fields where `ours` and `theirs` differ, as `key: ours vs theirs`.
fn differences(ours: &Map<String, Json>, theirs: &Map<String, Json>) -> Vec<String> {
    let mut keys: Vec<&String> = ours.keys().chain(theirs.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| ours.get(*k) != theirs.get(*k))
        .map(|k| {
            let show = |v: Option<&Json>| v.map_or("(absent)".to_owned(), Json::to_string);
            format!("{k}: ours {} vs transformers {}", show(ours.get(k)), show(theirs.get(k)))
        })
        .collect()
}

/// Every class of the table at its defaults, and the edge cases of the RoPE normalisation
/// (legacy `type`, `rope_scaling: null`, YaRN, LongRoPE, Llama 3, linear, `partial_rotary_factor`,
/// Gemma 3's per-layer-type dictionaries), the derived fields (`head_dim`, `num_key_value_heads`,
/// `layer_types`, `attribute_map` names) and the files transformers refuses (the reference's
/// fallback to the raw file): our `hparams` equal the reference's field by field.
#[test]
fn hparams_equal_transformers() {
    let Some(py) = gguf_tests::python() else { return };
    let tmp = gguf_tests::temp_dir("hf-config");
    let cases = cases();
    let mut dirs = Vec::new();
    for (name, config) in &cases {
        let d = tmp.join(name);
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::write(d.join("config.json"), serde_json::to_vec_pretty(config).expect("JSON")).expect("write");
        dirs.push(d.to_string_lossy().into_owned());
    }
    let args: Vec<&str> = dirs.iter().map(String::as_str).collect();
    let theirs = gguf_tests::run_py(&py, "hf_config.py", &args);
    let theirs = theirs.as_array().expect("a list");
    assert_eq!(theirs.len(), cases.len());
    let covered: Vec<&str> = CONFIG_CLASSES.iter().map(|c| c.model_type).collect();
    for (m, _) in CLASSES {
        assert!(covered.contains(m), "{m} is not in the table");
    }
    let mut failures = Vec::new();
    let (mut loaded, mut refused) = (0, 0);
    for (((name, config), dir), t) in cases.iter().zip(&dirs).zip(theirs) {
        let ours = HfConfig::load(config.clone(), &python_path_str(std::path::Path::new(dir))).expect("a JSON object");
        let auto = t["auto_config"].as_bool().expect("auto_config");
        match (&ours.auto_config, auto) {
            (Ok(()), true) => loaded += 1,
            (Err(NotLoaded::Raises(_)), false) => refused += 1,
            (o, _) => {
                failures.push(format!("{name}: ours {o:?}, transformers {}", t["error"]));
                continue;
            }
        }
        let diff = differences(&ours.hparams, t["hparams"].as_object().expect("hparams"));
        if !diff.is_empty() {
            failures.push(format!("{name}:\n  {}", diff.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "differences from transformers:\n{}", failures.join("\n"));
    assert!(loaded >= CLASSES.len() && refused >= 5, "{loaded} loaded, {refused} refused");
}

/// A Phi-3 `config.json` without `original_max_position_embeddings` (the converter-reference
/// case `tiny-Phi-3-mini-128k-instruct` with that field removed) converts, as the reference
/// converts it: `phi3.rope.scaling.original_context_length` is the value transformers'
/// `Phi3Config` gives `rope_parameters.original_max_position_embeddings` for that file (read
/// through `tests/py/hf_config.py`), and since that is the value the case had, the whole output
/// equals the reference's output of the unmodified case.
#[test]
fn phi3_without_original_max_position_embeddings() {
    use gguf_serde::convert::{convert, plan, Checkpoint, ConvertOptions, OutType};
    use gguf_serde::Value;
    use gguf_tests::convert_refs::{convert_ref, differs_from_reference, make_convert_case};

    let case = "tiny-Phi-3-mini-128k-instruct";
    let Some(py) = gguf_tests::python() else { return };
    let Some(dir) = make_convert_case(case) else { return };
    let path = dir.join("config.json");
    let mut config: Json = serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("JSON");
    let removed = config.as_object_mut().expect("object").remove("original_max_position_embeddings");
    assert!(removed.is_some(), "the case has original_max_position_embeddings");
    std::fs::write(&path, serde_json::to_vec_pretty(&config).expect("JSON")).expect("write");

    let theirs = gguf_tests::run_py(&py, "hf_config.py", &[&dir.to_string_lossy()]);
    assert_eq!(theirs[0]["auto_config"], true, "transformers loads it: {}", theirs[0]["error"]);
    let want = theirs[0]["hparams"]["rope_parameters"]["original_max_position_embeddings"]
        .as_u64()
        .expect("transformers fills in rope_parameters.original_max_position_embeddings");

    let ckpt = Checkpoint::open(&*dir).expect("open");
    let card = gguf_tests::run_py(&py, "model_card.py", &[&dir.to_string_lossy()]);
    let card = card.as_object().is_some_and(|m| !m.is_empty()).then_some(card);
    let opts = ConvertOptions { model_card: card.as_ref(), ..ConvertOptions::new(OutType::F32) };
    let p = plan(&ckpt, &opts).expect("the conversion is planned");
    assert_eq!(
        p.kvs.get("phi3.rope.scaling.original_context_length"),
        Some(&Value::U32(u32::try_from(want).expect("u32"))),
        "the reference writes transformers' default"
    );

    let out = dir.tmp.join("phi3-no-orig.gguf");
    convert(&*dir, &out, &opts).expect("converts");
    assert_eq!(differs_from_reference(&out, &convert_ref(case, "f32")), None, "the reference's output of the case");
}
