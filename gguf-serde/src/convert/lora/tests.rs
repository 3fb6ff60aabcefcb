//! Unit tests of the adapter plan and its refusals.

use super::*;
use crate::GgmlType;
use serde_json::json;

#[test]
fn adapter_config_fields() {
    let ok = LoraConfig::from_json(&json!({"peft_type": "LORA", "lora_alpha": 16, "r": 8})).unwrap();
    assert_eq!(ok, LoraConfig { alpha: 16.0, invocation_tokens: None });
    let tokens = LoraConfig::from_json(&json!({"lora_alpha": 8.5, "alora_invocation_tokens": [5, 7]})).unwrap();
    assert_eq!(tokens.invocation_tokens, Some(vec![5, 7]));
    assert_eq!(
        LoraConfig::from_json(&json!({"r": 8})),
        Err(AdapterError::ConfigField { field: "lora_alpha", problem: "is missing".into() })
    );
    for not_object in [json!([]), json!(16), json!(null), json!("lora")] {
        let e = LoraConfig::from_json(&not_object).unwrap_err();
        assert_eq!(e, AdapterError::NotAnObject, "{not_object}");
        assert_eq!(e.to_string(), "adapter_config.json is not a JSON object");
    }
    assert!(matches!(
        LoraConfig::from_json(&json!({"lora_alpha": "8"})),
        Err(AdapterError::ConfigField { field: "lora_alpha", .. })
    ));
    for (cfg, what) in [
        (json!({"lora_alpha": 8, "use_dora": true}), "DoRA"),
        (json!({"lora_alpha": 8, "peft_type": "LOHA"}), "LOHA"),
        (json!({"lora_alpha": 8, "use_rslora": true}), "rslora"),
        (json!({"lora_alpha": 8, "alpha_pattern": {"q_proj": 4}}), "alpha_pattern"),
        (json!({"lora_alpha": 8, "invocation_string": "<x>"}), "invocation_string"),
    ] {
        let e = LoraConfig::from_json(&cfg).unwrap_err();
        assert!(matches!(e, AdapterError::UnsupportedPeft { .. }), "{cfg}: {e}");
        assert!(e.to_string().contains(what), "{e}");
    }
}

/// A temporary folder under `<target>/test-tmp/` (removed when dropped).
fn folder() -> tempfile::TempDir {
    let exe = std::env::current_exe().unwrap();
    let root = exe.ancestors().nth(3).unwrap().join("test-tmp");
    std::fs::create_dir_all(&root).unwrap();
    tempfile::Builder::new().prefix("lora-").tempdir_in(root).unwrap()
}

/// A base (hidden 64, 2 layers, 4 heads, 2 KV heads, feed-forward 96, 32 tokens) of class
/// `class` (a Llama unless it is Gemma 2's or GPT-2's), and an adapter of `tensors` (name,
/// shape; F32 zeros) with `config`.
fn case(class: &str, config: Json, tensors: &[(&str, [usize; 2])]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let model_type = match class {
        "Gemma2ForCausalLM" => "gemma2",
        "MixtralForCausalLM" => "mixtral",
        "GPT2LMHeadModel" => "gpt2",
        _ => "llama",
    };
    let tmp = folder();
    let (base, adapter) = (tmp.path().join("base"), tmp.path().join("my-adapter"));
    std::fs::create_dir_all(&base).unwrap();
    std::fs::create_dir_all(&adapter).unwrap();
    let cfg = json!({"architectures": [class], "model_type": model_type, "hidden_size": 64,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "intermediate_size": 96, "vocab_size": 32, "num_local_experts": 4, "num_experts_per_tok": 2});
    std::fs::write(base.join("config.json"), cfg.to_string()).unwrap();
    std::fs::write(adapter.join(ADAPTER_CONFIG), config.to_string()).unwrap();
    write_zeros(&adapter.join(ADAPTER_WEIGHTS), tensors);
    (tmp, adapter, base)
}

/// Writes a safetensors file of `tensors` (name, shape; F32 zeros) at `path`.
fn write_zeros(path: &Path, tensors: &[(&str, [usize; 2])]) {
    let data: Vec<Vec<u8>> = tensors.iter().map(|(_, s)| vec![0u8; s[0] * s[1] * 4]).collect();
    let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = tensors
        .iter()
        .zip(&data)
        .map(|((n, s), d)| {
            (n.to_string(), safetensors::tensor::TensorView::new(safetensors::Dtype::F32, s.to_vec(), d).unwrap())
        })
        .collect();
    std::fs::write(path, safetensors::serialize(views, None).unwrap()).unwrap();
}

const Q_A: &str = "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight";
const Q_B: &str = "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight";

fn plan_err(adapter: &Path, base: &Path, outtype: OutType) -> ConvertError {
    let a = match Adapter::open(adapter, base) {
        Ok(a) => a,
        Err(e) => return e,
    };
    match plan_adapter(&a, &ConvertOptions::new(outtype)) {
        Ok(p) => panic!("planned {} tensors", p.tensors.len()),
        Err(e) => e,
    }
}

fn adapter_err(e: ConvertError) -> AdapterError {
    match e {
        ConvertError::Adapter(a) => a,
        e => panic!("not an adapter error: {e:?}"),
    }
}

#[test]
fn a_plain_pair_is_planned_with_the_bases_names() {
    let (_t, adapter, base) = case("LlamaForCausalLM", json!({"lora_alpha": 16}), &[(Q_A, [8, 64]), (Q_B, [64, 8])]);
    let a = Adapter::open(&adapter, &base).unwrap();
    let plan = plan_adapter(&a, &ConvertOptions::new(OutType::Q8_0)).unwrap();
    let got: Vec<(&str, GgmlType, &[u64])> =
        plan.tensors.iter().map(|t| (t.name.as_str(), t.dtype, t.shape.as_slice())).collect();
    // lora_b's rows are 8 values, not whole Q8_0 blocks: F16
    assert_eq!(
        got,
        [
            ("blk.0.attn_q.weight.lora_a", GgmlType::Q8_0, &[8u64, 64][..]),
            ("blk.0.attn_q.weight.lora_b", GgmlType::F16, &[64u64, 8][..])
        ]
    );
    // Llama's Q permutation (4 heads) acts on lora_b's rows
    assert_eq!(plan.tensors[1].transforms, [Transform::Permute { heads: 4 }]);
    assert!(plan.tensors[0].transforms.is_empty());
    assert_eq!(plan.params.total, -(64 * 64));
    assert_eq!(plan.kvs.get("general.type"), Some(&Value::String("adapter".into())));
    assert_eq!(plan.kvs.get("adapter.lora.alpha"), Some(&Value::F32(16.0)));
    assert_eq!(default_file_name(&plan).unwrap(), "My-Adapter-Q8_0-LoRA.gguf");
}

#[test]
fn refusals_name_what_and_where() {
    let pair = [(Q_A, [8, 64]), (Q_B, [64, 8])];
    let alpha = json!({"lora_alpha": 8});
    // an architecture the converter does not convert
    let (_t, adapter, base) = case("GPT2LMHeadModel", alpha.clone(), &pair);
    let e = adapter_err(plan_err(&adapter, &base, OutType::F32));
    assert!(matches!(&e, AdapterError::BaseArchitecture { class, .. } if class == "GPT2LMHeadModel"), "{e}");
    // a target the base does not have
    let odd = [
        ("base_model.model.model.layers.0.self_attn.qkv_proj.lora_A.weight", [8, 64]),
        ("base_model.model.model.layers.0.self_attn.qkv_proj.lora_B.weight", [64, 8]),
    ];
    let (_t, adapter, base) = case("LlamaForCausalLM", alpha.clone(), &odd);
    let e = adapter_err(plan_err(&adapter, &base, OutType::F32));
    assert!(
        matches!(&e, AdapterError::TargetNotInBase { base_name, .. } if base_name == "model.layers.0.self_attn.qkv_proj.weight"),
        "{e}"
    );
    // a layer beyond the base's block count
    let deep = [
        ("base_model.model.model.layers.7.self_attn.q_proj.lora_A.weight", [8, 64]),
        ("base_model.model.model.layers.7.self_attn.q_proj.lora_B.weight", [64, 8]),
    ];
    let (_t, adapter, base) = case("LlamaForCausalLM", alpha.clone(), &deep);
    assert!(matches!(adapter_err(plan_err(&adapter, &base, OutType::F32)), AdapterError::TargetNotInBase { .. }));
    // lm_head on a base with tied embeddings (the reference's ValueError)
    let head =
        [("base_model.model.lm_head.lora_A.weight", [8, 64]), ("base_model.model.lm_head.lora_B.weight", [32, 8])];
    let (_t, adapter, base) = case("Gemma2ForCausalLM", alpha.clone(), &head);
    let e = adapter_err(plan_err(&adapter, &base, OutType::F32));
    assert!(matches!(e, AdapterError::TiedOutput { .. }), "{e}");
    // one expert weight of a Mixtral layer: the layer's stack never completes
    let one_expert = [
        ("base_model.model.model.layers.0.block_sparse_moe.experts.0.w1.lora_A.weight", [8, 64]),
        ("base_model.model.model.layers.0.block_sparse_moe.experts.0.w1.lora_B.weight", [96, 8]),
    ];
    let (_t, adapter, base) = case("MixtralForCausalLM", alpha.clone(), &one_expert);
    let e = adapter_err(plan_err(&adapter, &base, OutType::F32));
    assert!(
        matches!(&e, AdapterError::UnsupportedTarget { base_name, .. } if base_name.contains("experts.0.w1")),
        "{e}"
    );
    // half a pair
    let (_t, adapter, base) = case("LlamaForCausalLM", alpha.clone(), &pair[..1]);
    let e = adapter_err(plan_err(&adapter, &base, OutType::F32));
    assert!(matches!(&e, AdapterError::HalfPair { missing: "lora_B", .. }), "{e}");
    // factors that do not multiply
    let (_t, adapter, base) = case("LlamaForCausalLM", alpha.clone(), &[(Q_A, [8, 64]), (Q_B, [64, 4])]);
    assert!(matches!(plan_err(&adapter, &base, OutType::F32), ConvertError::BadShape { .. }));
    // a whole weight saved beside the pairs (peft's modules_to_save)
    let saved = [(Q_A, [8, 64]), (Q_B, [64, 8]), ("base_model.model.lm_head.modules_to_save.default.weight", [32, 64])];
    let (_t, adapter, base) = case("LlamaForCausalLM", alpha.clone(), &saved);
    let e = adapter_err(plan_err(&adapter, &base, OutType::F32));
    assert!(matches!(&e, AdapterError::UnexpectedTensor { name, .. } if name.contains("modules_to_save")), "{e}");
    // peft's trainable tokens (trainable_token_indices), as peft 0.18 saves them
    const DELTA: &str = "base_model.model.model.embed_tokens.token_adapter.trainable_tokens_delta";
    let (_t, adapter, base) =
        case("LlamaForCausalLM", alpha.clone(), &[(Q_A, [8, 64]), (Q_B, [64, 8]), (DELTA, [2, 64])]);
    let e = adapter_err(plan_err(&adapter, &base, OutType::F32));
    assert!(matches!(&e, AdapterError::UnexpectedTensor { name, .. } if name == DELTA), "{e}");
    assert!(e.to_string().contains("trainable tokens") && e.to_string().contains("merge the adapter instead"), "{e}");
    // DoRA's magnitude vector, if its config does not say so
    let dora = [
        (Q_A, [8, 64]),
        (Q_B, [64, 8]),
        ("base_model.model.model.layers.0.self_attn.q_proj.lora_magnitude_vector", [1, 64]),
    ];
    let (_t, adapter, base) = case("LlamaForCausalLM", alpha.clone(), &dora);
    let e = adapter_err(plan_err(&adapter, &base, OutType::F32));
    assert!(e.to_string().contains("DoRA"), "{e}");
    // the config: DoRA, a missing alpha
    let (_t, adapter, base) = case("LlamaForCausalLM", json!({"lora_alpha": 8, "use_dora": true}), &pair);
    assert!(matches!(adapter_err(plan_err(&adapter, &base, OutType::F32)), AdapterError::UnsupportedPeft { .. }));
    let (_t, adapter, base) = case("LlamaForCausalLM", json!({"r": 8}), &pair);
    let e = adapter_err(plan_err(&adapter, &base, OutType::F32));
    assert!(matches!(e, AdapterError::ConfigField { field: "lora_alpha", .. }));
    // auto, on which the reference fails
    let (_t, adapter, base) = case("LlamaForCausalLM", alpha.clone(), &pair);
    assert_eq!(adapter_err(plan_err(&adapter, &base, OutType::Auto)), AdapterError::AutoOutType);
    // not an adapter folder; pickled weights
    let e = adapter_err(plan_err(&base, &base, OutType::F32));
    assert!(matches!(e, AdapterError::NotAnAdapter { file: ADAPTER_CONFIG, .. }));
    std::fs::rename(adapter.join(ADAPTER_WEIGHTS), adapter.join("adapter_model.bin")).unwrap();
    assert!(matches!(adapter_err(plan_err(&adapter, &base, OutType::F32)), AdapterError::PickledWeights { .. }));
}

#[test]
fn base_names_as_the_reference_strips_them() {
    assert_eq!(
        base_tensor_name("base_model.model.model.layers.3.self_attn.q_proj.lora_A.weight"),
        "model.layers.3.self_attn.q_proj.weight"
    );
    assert_eq!(base_tensor_name("base_model.model.model.embed_tokens.lora_embedding_B"), "model.embed_tokens.weight");
    assert_eq!(base_tensor_name("base_model.model.lm_head.lora_B.weight"), "lm_head.weight");
    assert_eq!(filter_name("model.language_model.layers.0.x.weight").as_deref(), Some("model.layers.0.x.weight"));
    assert_eq!(filter_name("model.vision_tower.x.weight"), None);
}

/// Writes `model.safetensors` into `base` with `tensors` (name, shape; F32 zeros).
fn base_weights(base: &Path, tensors: &[(&str, [usize; 2])]) {
    write_zeros(&base.join("model.safetensors"), tensors);
}

#[test]
fn lm_head_over_a_tied_output_is_refused() {
    const HEAD: [(&str, [usize; 2]); 2] =
        [("base_model.model.lm_head.lora_A.weight", [8, 64]), ("base_model.model.lm_head.lora_B.weight", [32, 8])];
    let alpha = json!({"lora_alpha": 8});
    // without base weights, tie_word_embeddings of the base's config.json decides
    let (_t, adapter, base) = case("LlamaForCausalLM", alpha.clone(), &HEAD);
    assert!(!Adapter::open(&adapter, &base).unwrap().base_output_tied());
    let mut cfg: Json = serde_json::from_str(&std::fs::read_to_string(base.join("config.json")).unwrap()).unwrap();
    cfg["tie_word_embeddings"] = json!(true);
    std::fs::write(base.join("config.json"), cfg.to_string()).unwrap();
    let e = adapter_err(plan_err(&adapter, &base, OutType::F32));
    assert_eq!(e, AdapterError::TiedOutput { name: HEAD[0].0.into() });
    // with base weights, whether they have lm_head.weight decides, whatever the config says
    base_weights(&base, &[("model.embed_tokens.weight", [32, 64]), ("lm_head.weight", [32, 64])]);
    let a = Adapter::open(&adapter, &base).unwrap();
    assert!(!a.base_output_tied());
    let plan = plan_adapter(&a, &ConvertOptions::new(OutType::F32)).unwrap();
    assert_eq!(plan.tensors[0].name, "output.weight.lora_a");
    base_weights(&base, &[("model.embed_tokens.weight", [32, 64])]);
    cfg["tie_word_embeddings"] = json!(false);
    std::fs::write(base.join("config.json"), cfg.to_string()).unwrap();
    let e = adapter_err(plan_err(&adapter, &base, OutType::F32));
    assert!(matches!(&e, AdapterError::TiedOutput { .. }), "{e}");
    assert!(e.to_string().contains("llama.cpp would not load the adapter"), "{e}");
}

#[test]
fn peft_copies_of_adapted_weights_are_left_out_unless_resized() {
    const COPY: &str = "base_model.model.model.embed_tokens.base_layer.weight";
    let embed = |vocab: usize| {
        [
            (COPY, [vocab, 64]),
            ("base_model.model.model.embed_tokens.lora_embedding_A", [8, vocab]),
            ("base_model.model.model.embed_tokens.lora_embedding_B", [64, 8]),
        ]
    };
    let alpha = json!({"lora_alpha": 8});
    let (_t, adapter, base) = case("LlamaForCausalLM", alpha.clone(), &embed(32));
    base_weights(&base, &[("model.embed_tokens.weight", [32, 64]), ("lm_head.weight", [32, 64])]);
    let a = Adapter::open(&adapter, &base).unwrap();
    assert_eq!(a.base_layer_copies().unwrap(), [COPY]);
    let plan = plan_adapter(&a, &ConvertOptions::new(OutType::F32)).unwrap();
    let names: Vec<&str> = plan.tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["token_embd.weight.lora_a", "token_embd.weight.lora_b"]);
    // a vocabulary the fine-tune grew: the copy is not the base's weight
    let (_t, adapter, base) = case("LlamaForCausalLM", alpha, &embed(40));
    base_weights(&base, &[("model.embed_tokens.weight", [32, 64]), ("lm_head.weight", [32, 64])]);
    let e = adapter_err(plan_err(&adapter, &base, OutType::F32));
    assert_eq!(
        e,
        AdapterError::ResizedBaseWeight {
            name: COPY.into(),
            base_name: "model.embed_tokens.weight".into(),
            shape: vec![40, 64],
            base_shape: vec![32, 64],
        }
    );
}

/// llama.cpp's loader (`llama_adapter_lora_init`) takes a pair over a weight of `ne`
/// `[in, out]` (shape `[out, in]`) only when `lora_a`'s `ne[0]` is `in`, `lora_b`'s `ne[1]` is
/// `out` and `lora_a`'s `ne[1]` is `lora_b`'s `ne[0]`: with the base's weights known, the pairs it
/// would refuse ("has incorrect shape") are refused before writing, the one it takes is planned.
#[test]
fn pairs_that_do_not_fit_the_base_weight_are_refused() {
    const K_A: &str = "base_model.model.model.layers.0.self_attn.k_proj.lora_A.weight";
    const K_B: &str = "base_model.model.model.layers.0.self_attn.k_proj.lora_B.weight";
    let base_k = [32, 64]; // 2 KV heads of 16, hidden 64
    let alpha = json!({"lora_alpha": 8});
    let (_t, adapter, base) = case("LlamaForCausalLM", alpha.clone(), &[(K_A, [8, 64]), (K_B, [32, 8])]);
    base_weights(&base, &[("model.layers.0.self_attn.k_proj.weight", base_k)]);
    let a = Adapter::open(&adapter, &base).unwrap();
    let plan = plan_adapter(&a, &ConvertOptions::new(OutType::F32)).unwrap();
    assert_eq!(plan.tensors[0].name, "blk.0.attn_k.weight.lora_a");
    for (a_shape, b_shape) in [([32, 8], [8, 64]), ([8, 48], [32, 8]), ([8, 64], [48, 8]), ([8, 64], [32, 4])] {
        let (_t, adapter, base) = case("LlamaForCausalLM", alpha.clone(), &[(K_A, a_shape), (K_B, b_shape)]);
        base_weights(&base, &[("model.layers.0.self_attn.k_proj.weight", base_k)]);
        let e = adapter_err(plan_err(&adapter, &base, OutType::F32));
        let want = AdapterError::PairShape {
            base_name: "model.layers.0.self_attn.k_proj.weight".into(),
            a_shape: a_shape.iter().map(|&n| n as u64).collect(),
            b_shape: b_shape.iter().map(|&n| n as u64).collect(),
            base_shape: vec![32, 64],
        };
        assert_eq!(e, want, "{a_shape:?} {b_shape:?}");
        assert!(e.to_string().contains("lora_A [rank, 64] and lora_B [32, rank]"), "{e}");
    }
}
