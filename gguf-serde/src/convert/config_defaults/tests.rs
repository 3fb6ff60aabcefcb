//! The normalisation's edge cases, each value as transformers 5.24's code gives it (the
//! comments name the line of `modeling_rope_utils.py` or the class); the interop test
//! `hf_config` checks the same files and more against transformers itself.
use super::*;
use serde_json::json;

fn load(extra: Json) -> Res<Map<String, Json>> {
    let mut c = json!({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
        "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 128, "vocab_size": 100});
    let (Some(m), Json::Object(e)) = (c.as_object_mut(), extra) else { unreachable!() };
    m.extend(e);
    auto_config_dict(c.as_object().expect("object"), "ckpt")
}

fn rope(d: &Map<String, Json>) -> &Json {
    &d["rope_parameters"]
}

#[test]
fn defaults_and_derived_fields() {
    let d = load(json!({})).expect("loads");
    // LlamaConfig.__post_init__: head_dim = hidden_size // num_attention_heads, kv heads = heads
    assert_eq!((d["head_dim"].clone(), d["num_key_value_heads"].clone()), (json!(16), json!(4)));
    assert_eq!(d["max_position_embeddings"], json!(2048));
    assert_eq!(d["rms_norm_eps"], json!(1e-6));
    assert_eq!(d["model_type"], json!("llama"));
    assert_eq!(d["transformers_version"], json!(TRANSFORMERS_VERSION));
    assert_eq!(d["_name_or_path"], json!("ckpt"));
    assert_eq!(d["id2label"], json!({"0": "LABEL_0", "1": "LABEL_1"}));
    assert!(!d.contains_key("rope_theta") && !d.contains_key("rope_scaling"));
}

#[test]
fn rope_scaling_null_gives_default_rope() {
    // convert_rope_params_to_dict: `rope_scaling or self.rope_parameters` → {}, theta moved in
    let d = load(json!({"rope_scaling": null, "rope_theta": 500000.0})).expect("loads");
    assert_eq!(rope(&d), &json!({"rope_theta": 500000.0, "rope_type": "default"}));
}

#[test]
fn legacy_type_and_yarn_original_length() {
    // standardize_rope_params: rope_type from `type`; yarn gets max_position_embeddings
    let d = load(json!({"rope_scaling": {"type": "yarn", "factor": 4.0}})).expect("loads");
    assert_eq!(
        rope(&d),
        &json!({"type": "yarn", "factor": 4.0, "rope_type": "yarn", "rope_theta": 10000.0,
            "original_max_position_embeddings": 2048})
    );
}

#[test]
fn llama3_needs_its_keys() {
    // _validate_llama3_rope_parameters: KeyError for the missing factors → the raw file
    let e = load(json!({"rope_scaling": {"rope_type": "llama3", "factor": 8.0}})).unwrap_err();
    assert!(matches!(e, NotLoaded::Raises(m) if m.contains("low_freq_factor")));
    let d = load(json!({"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
        "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}))
    .expect("loads");
    assert_eq!(rope(&d)["original_max_position_embeddings"], json!(8192));
    assert_eq!(rope(&d)["rope_theta"], json!(10000.0));
}

#[test]
fn partial_rotary_factor_moves_into_the_rope_parameters() {
    let d = load(json!({"partial_rotary_factor": 0.5})).expect("loads");
    assert_eq!(rope(&d)["partial_rotary_factor"], json!(0.5));
    assert!(!d.contains_key("partial_rotary_factor"));
}

#[test]
fn phi3_longrope_without_original_length() {
    // Phi3Config: original_max_position_embeddings = 4096 (a field), copied into longrope's
    let f: Vec<f64> = vec![1.0; 8];
    let c = json!({"architectures": ["Phi3ForCausalLM"], "model_type": "phi3", "hidden_size": 64,
        "num_attention_heads": 4, "num_hidden_layers": 2, "max_position_embeddings": 131072,
        "rope_scaling": {"type": "longrope", "long_factor": f, "short_factor": f}});
    let d = auto_config_dict(c.as_object().expect("object"), "p").expect("loads");
    assert_eq!(d["original_max_position_embeddings"], json!(4096));
    assert_eq!(rope(&d)["original_max_position_embeddings"], json!(4096));
    assert_eq!(rope(&d)["partial_rotary_factor"], json!(1.0));
    assert_eq!(rope(&d)["rope_type"], json!("longrope"));
    // `su` is renamed longrope after standardisation, so it has no original length: raises
    let mut su = c.clone();
    su["rope_scaling"]["type"] = json!("su");
    assert!(matches!(auto_config_dict(su.as_object().expect("object"), "p"), Err(NotLoaded::Raises(_))));
}

#[test]
fn gemma3_text_per_layer_type_rope() {
    let c = json!({"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "num_hidden_layers": 6,
        "rope_theta": 500000.0});
    let d = auto_config_dict(c.as_object().expect("object"), "g").expect("loads");
    assert_eq!(
        rope(&d),
        &json!({"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
            "full_attention": {"rope_type": "default", "rope_theta": 500000.0}})
    );
    // every sixth layer full (`_sliding_window_pattern` 6)
    assert_eq!(d["layer_types"][5], json!("full_attention"));
    assert_eq!(d["layer_types"][4], json!("sliding_attention"));
}

#[test]
fn strict_types_refuse() {
    assert!(matches!(load(json!({"rms_norm_eps": 1})), Err(NotLoaded::Raises(_))));
    assert!(matches!(load(json!({"hidden_size": 64.0})), Err(NotLoaded::Raises(_))));
    assert!(matches!(load(json!({"use_cache": 1})), Err(NotLoaded::Raises(_))));
}

#[test]
fn outside_the_table() {
    let c = json!({"model_type": "gemma3"});
    assert!(matches!(auto_config_dict(c.as_object().expect("object"), ""), Err(NotLoaded::NotModelled(_))));
}
