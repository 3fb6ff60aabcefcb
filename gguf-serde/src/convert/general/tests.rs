//! Known-right values: gguf-py's own tests (`gguf-py/tests/test_metadata.py`, ported as tables)
//! and the `general.*` keys llama.cpp's convert_hf_to_gguf.py wrote for the cases of
//! `tests/data/convert-refs.json` (copied here so that these tests stay hermetic).

use super::*;
use serde_json::json;

type Parts = (
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
);

fn parts(p: &Parts) -> ModelIdParts {
    let s = |o: Option<&str>| o.map(str::to_string);
    ModelIdParts {
        name: Some(p.0.to_string()),
        organization: s(p.1),
        basename: s(p.2),
        finetune: s(p.3),
        version: s(p.4),
        size_label: s(p.5),
    }
}

#[test]
fn id_to_title_as_gguf_py() {
    assert_eq!(id_to_title("Mixtral-8x7B-Instruct-v0.1"), "Mixtral 8x7B Instruct v0.1");
    assert_eq!(id_to_title("Meta-Llama-3-8B"), "Meta Llama 3 8B");
    assert_eq!(id_to_title("hermes-2-pro-llama-3-8b-DPO"), "Hermes 2 Pro Llama 3 8b DPO");
}

#[test]
fn model_id_components_as_gguf_py() {
    #[rustfmt::skip]
    let cases: &[(&str, i64, Parts)] = &[
        ("Mistral/Mixtral-8x7B-Instruct-v0.1", 0, ("Mixtral-8x7B-Instruct-v0.1", Some("Mistral"), Some("Mixtral"), Some("Instruct"), Some("v0.1"), Some("8x7B"))),
        ("Mixtral-8x7B-Instruct-v0.1", 0, ("Mixtral-8x7B-Instruct-v0.1", None, Some("Mixtral"), Some("Instruct"), Some("v0.1"), Some("8x7B"))),
        ("Mixtral-8x7B-Instruct", 0, ("Mixtral-8x7B-Instruct", None, Some("Mixtral"), Some("Instruct"), None, Some("8x7B"))),
        ("Mixtral-8x7B-v0.1", 0, ("Mixtral-8x7B-v0.1", None, Some("Mixtral"), None, Some("v0.1"), Some("8x7B"))),
        ("Mixtral-8x7B", 0, ("Mixtral-8x7B", None, Some("Mixtral"), None, None, Some("8x7B"))),
        ("Mixtral-v0.1", 0, ("Mixtral-v0.1", None, Some("Mixtral"), None, Some("v0.1"), None)),
        ("Mixtral", 0, ("Mixtral", None, None, None, None, None)),
        ("NousResearch/Meta-Llama-3-8B", 0, ("Meta-Llama-3-8B", Some("NousResearch"), Some("Meta-Llama-3"), None, None, Some("8B"))),
        ("Qwen1.5-MoE-A2.7B-Chat", 0, ("Qwen1.5-MoE-A2.7B-Chat", None, Some("Qwen1.5-MoE"), Some("Chat"), None, Some("A2.7B"))),
        ("Qwen2-57B-A14B-Instruct", 0, ("Qwen2-57B-A14B-Instruct", None, Some("Qwen2"), Some("Instruct"), None, Some("57B-A14B"))),
        ("microsoft/Phi-3-mini-4k-instruct", 4_000_000_000, ("Phi-3-mini-4k-instruct", Some("microsoft"), Some("Phi-3"), Some("4k-instruct"), None, Some("mini"))),
        ("delphi-suite/stories-llama2-50k", 50_000, ("stories-llama2-50k", Some("delphi-suite"), Some("stories-llama2"), None, None, Some("50K"))),
        ("DeepSeek-Coder-V2-Lite-Instruct", 0, ("DeepSeek-Coder-V2-Lite-Instruct", None, Some("DeepSeek-Coder-V2-Lite"), Some("Instruct"), None, None)),
        ("crestf411/daybreak-kunoichi-2dpo-7b", 0, ("daybreak-kunoichi-2dpo-7b", Some("crestf411"), Some("daybreak-kunoichi"), Some("2dpo"), None, Some("7B"))),
        ("Qwen2-0.5B-Instruct", 0, ("Qwen2-0.5B-Instruct", None, Some("Qwen2"), Some("Instruct"), None, Some("0.5B"))),
        ("smallcloudai/Refact-1_6B-fim", 0, ("Refact-1_6B-fim", Some("smallcloudai"), Some("Refact"), Some("fim"), None, Some("1.6B"))),
        ("UCLA-AGI/Gemma-2-9B-It-SPPO-Iter3", 0, ("Gemma-2-9B-It-SPPO-Iter3", Some("UCLA-AGI"), Some("Gemma-2"), Some("It-SPPO"), Some("Iter3"), Some("9B"))),
        ("NousResearch/Hermes-2-Theta-Llama-3-8B", 0, ("Hermes-2-Theta-Llama-3-8B", Some("NousResearch"), Some("Hermes-2-Theta-Llama-3"), None, None, Some("8B"))),
        ("SeaLLMs/SeaLLMs-v3-7B-Chat", 0, ("SeaLLMs-v3-7B-Chat", Some("SeaLLMs"), Some("SeaLLMs-v3"), Some("Chat"), None, Some("7B"))),
        ("internlm/internlm2_5-7b-chat-1m", 7_000_000_000, ("internlm2_5-7b-chat-1m", Some("internlm"), Some("internlm2_5"), Some("chat-1m"), None, Some("7B"))),
        ("pszemraj/jamba-900M-v0.13-KIx2", 0, ("jamba-900M-v0.13-KIx2", Some("pszemraj"), Some("jamba"), Some("KIx2"), Some("v0.13"), Some("900M"))),
        ("state-spaces/mamba-2.8b-hf", 0, ("mamba-2.8b-hf", Some("state-spaces"), Some("mamba"), Some("hf"), None, Some("2.8B"))),
        ("abacaj/llama-161M-100B", 161_000_000, ("llama-161M-100B", Some("abacaj"), Some("llama"), Some("100b"), None, Some("161M"))),
        ("SparseLLM/relu-100B", 1_340_000_000, ("relu-100B", Some("SparseLLM"), Some("relu"), Some("100b"), None, None)),
        ("bigscience/bloom-7b1-petals", 0, ("bloom-7b1-petals", Some("bigscience"), Some("bloom"), Some("petals"), None, Some("7.1B"))),
        ("MaziyarPanahi/GreenNode-mini-7B-multilingual-v1olet-Mistral-7B-Instruct-v0.1", 0, ("GreenNode-mini-7B-multilingual-v1olet-Mistral-7B-Instruct-v0.1", Some("MaziyarPanahi"), Some("GreenNode-mini"), Some("multilingual-v1olet-Mistral-Instruct"), Some("v0.1"), Some("7B"))),
        ("mistralai/Mistral-Nemo-Instruct-2407", 0, ("Mistral-Nemo-Instruct-2407", Some("mistralai"), Some("Mistral-Nemo"), Some("Instruct"), Some("2407"), None)),
        ("deepseek-ai/DeepSeek-V2-Chat-0628", 0, ("DeepSeek-V2-Chat-0628", Some("deepseek-ai"), Some("DeepSeek-V2"), Some("Chat"), Some("0628"), None)),
        ("OpenGVLab/Mini-InternVL-Chat-2B-V1-5", 0, ("Mini-InternVL-Chat-2B-V1-5", Some("OpenGVLab"), Some("Mini-InternVL"), Some("Chat"), Some("V1-5"), Some("2B"))),
        ("jondurbin/bagel-dpo-2.8b-v0.2", 0, ("bagel-dpo-2.8b-v0.2", Some("jondurbin"), Some("bagel-dpo"), None, Some("v0.2"), Some("2.8B"))),
        ("voxmenthe/SFR-Iterative-DPO-LLaMA-3-8B-R-unquantized", 0, ("SFR-Iterative-DPO-LLaMA-3-8B-R-unquantized", Some("voxmenthe"), Some("SFR-Iterative-DPO-LLaMA-3"), Some("R-unquantized"), None, Some("8B"))),
        ("microsoft/Florence-2-base", 0, ("Florence-2-base", Some("microsoft"), None, None, None, None)),
        ("mistralai/-Mistral--Nemo-Base-2407-", 0, ("-Mistral--Nemo-Base-2407-", Some("mistralai"), Some("Mistral-Nemo-Base"), None, Some("2407"), None)),
        ("Llama-3-Instruct-abliteration-LoRA-8B", 0, ("Llama-3-Instruct-abliteration-LoRA-8B", None, Some("Llama-3"), Some("Instruct-abliteration-LoRA"), None, Some("8B"))),
        ("Llama-3-Instruct-abliteration-LoRA-8B", -1234, ("Llama-3-Instruct-abliteration-LoRA-8B", None, Some("Llama-3"), Some("Instruct-abliteration"), None, Some("8B"))),
    ];
    for (id, total, want) in cases {
        assert_eq!(model_id_components(id, *total), parts(want), "{id} (total {total})");
    }
}

#[test]
fn size_labels_as_the_reference_wrote_them() {
    // (total parameters of the reference's output, its general.size_label)
    for (total, want) in [
        (4_196_672, "4.2M"),
        (8_300_872, "8.3M"),
        (4_184_384, "4.2M"),
        (9_816_640, "10M"),
        (9_841_088, "10M"),
        (16_886_464, "17M"),
    ] {
        assert_eq!(size_label(&ParamCounts { total, ..Default::default() }), want, "{total}");
    }
    assert_eq!(
        size_label(&ParamCounts { total: 0, shared: 1_000_000_000, expert: 6_000_000_000, expert_count: 8 }),
        "8x7.0B"
    );
}

fn strings(kv: &GeneralKeys) -> Vec<(String, String)> {
    kv.keys()
        .map(|(k, v)| {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::U32(n) => format!("u32 {n}"),
                Value::I32(n) => format!("i32 {n}"),
                Value::F32(f) => format!("f32 {}", f64::from(*f)),
                Value::Array(Array::String(a)) => format!("{a:?}"),
                other => format!("{other:?}"),
            };
            (k.clone(), s)
        })
        .collect()
}

fn expect(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn general_keys_of_the_reference_cases() {
    // tiny-Llama-2-chat-hf: a model card with license, tags, language and a base model
    let card = json!({"language": ["en"], "license": "llama2", "pipeline_tag": "text-generation",
        "tags": ["facebook", "meta", "pytorch", "llama", "llama-2"], "base_model": "meta-llama/Llama-2-7b-hf"});
    let kv = general_kv(
        Path::new("cases/tiny-Llama-2-chat-hf"),
        &json!({}),
        &ParamCounts { total: 4_196_672, ..Default::default() },
        Some(&card),
        Some(&json!({"_from_model_config": true, "bos_token_id": 1, "eos_token_id": 2})),
        None,
    )
    .expect("general keys");
    assert_eq!(
        strings(&kv),
        expect(&[
            ("general.type", "model"),
            ("general.name", "Tiny Llama 2 Chat Hf"),
            ("general.finetune", "chat-hf"),
            ("general.basename", "tiny-Llama-2"),
            ("general.size_label", "4.2M"),
            ("general.license", "llama2"),
            ("general.base_model.count", "u32 1"),
            ("general.base_model.0.name", "Llama 2 7b Hf"),
            ("general.base_model.0.organization", "Meta Llama"),
            ("general.base_model.0.repo_url", "https://huggingface.co/meta-llama/Llama-2-7b-hf"),
            ("general.tags", r#"["facebook", "meta", "pytorch", "llama", "llama-2", "text-generation"]"#),
            ("general.languages", r#"["en"]"#),
        ])
    );

    // tiny-Qwen2-Instruct: sampling keys, license link, base model and dataset lists
    let card = json!({"license": "apache-2.0", "license_link": "https://huggingface.co/Qwen/Qwen2-0.5B-Instruct/blob/main/LICENSE",
        "language": ["en"], "pipeline_tag": "text-generation", "tags": ["chat"], "base_model": ["Qwen/Qwen2-0.5B"],
        "datasets": ["HuggingFaceH4/ultrachat_200k"]});
    let gen =
        json!({"bos_token_id": 151643, "eos_token_id": 151645, "do_sample": true, "temperature": 0.6, "top_p": 0.9});
    let kv = general_kv(
        Path::new("tiny-Qwen2-Instruct"),
        &json!({}),
        &ParamCounts { total: 9_816_640, ..Default::default() },
        Some(&card),
        Some(&gen),
        None,
    )
    .expect("general keys");
    assert_eq!(
        strings(&kv),
        expect(&[
            ("general.type", "model"),
            ("general.sampling.top_p", &format!("f32 {}", 0.8999999761581421f64)),
            ("general.sampling.temp", &format!("f32 {}", 0.6000000238418579f64)),
            ("general.name", "Tiny Qwen2 Instruct"),
            ("general.finetune", "Instruct"),
            ("general.basename", "tiny-Qwen2"),
            ("general.size_label", "10M"),
            ("general.license", "apache-2.0"),
            ("general.license.link", "https://huggingface.co/Qwen/Qwen2-0.5B-Instruct/blob/main/LICENSE"),
            ("general.base_model.count", "u32 1"),
            ("general.base_model.0.name", "Qwen2 0.5B"),
            ("general.base_model.0.organization", "Qwen"),
            ("general.base_model.0.repo_url", "https://huggingface.co/Qwen/Qwen2-0.5B"),
            ("general.dataset.count", "u32 1"),
            ("general.dataset.0.name", "Ultrachat_200K"),
            ("general.dataset.0.organization", "HuggingFaceH4"),
            ("general.dataset.0.repo_url", "https://huggingface.co/HuggingFaceH4/ultrachat_200k"),
            ("general.tags", r#"["chat", "text-generation"]"#),
            ("general.languages", r#"["en"]"#),
        ])
    );

    // no model card: names from the folder only
    let none = |dir: &str, total| {
        strings(
            &general_kv(Path::new(dir), &json!({}), &ParamCounts { total, ..Default::default() }, None, None, None)
                .expect("general keys"),
        )
    };
    assert_eq!(
        none("tiny-Mistral-Instruct-v0.1", 4_184_384),
        expect(&[
            ("general.type", "model"),
            ("general.name", "Tiny Mistral Instruct v0.1"),
            ("general.version", "v0.1"),
            ("general.finetune", "Instruct"),
            ("general.basename", "tiny-Mistral"),
            ("general.size_label", "4.2M"),
        ])
    );
    assert_eq!(
        none("tiny-Phi-3-mini-128k-instruct", 4_204_880),
        expect(&[
            ("general.type", "model"),
            ("general.name", "Tiny Phi 3 Mini 128k Instruct"),
            ("general.finetune", "128k-instruct"),
            ("general.basename", "tiny-Phi-3"),
            ("general.size_label", "mini"),
        ])
    );
    assert_eq!(
        none("tiny-Qwen3", 9_841_088),
        expect(&[("general.type", "model"), ("general.name", "Tiny Qwen3"), ("general.size_label", "10M")])
    );
}

#[test]
fn wrong_types_are_typed_errors() {
    let err =
        general_kv(Path::new("m"), &json!({}), &ParamCounts::default(), None, Some(&json!({"top_k": "forty"})), None)
            .unwrap_err();
    assert!(matches!(err, GeneralError::WrongType { ref key, .. } if key == "general.sampling.top_k"), "{err}");
    let err = general_kv(Path::new("m"), &json!({}), &ParamCounts::default(), Some(&json!({"license": 3})), None, None)
        .unwrap_err();
    assert!(err.to_string().contains("README.md: `license` is 3"), "{err}");
}

#[test]
fn front_matter_as_the_reference_reads_it() {
    assert_eq!(
        front_matter("---\nlanguage:\n- no\n\tx: 1\n---\n# card\n").as_deref(),
        Some("language:\n- \"no\"\n  x: 1\n")
    );
    assert_eq!(front_matter("# no front matter\n"), None);
    assert_eq!(front_matter(""), None);
}

#[test]
fn param_counts_as_gguf_py_counts_them() {
    // a dense model: everything is shared
    let dense: [(&str, &[u64]); 2] = [("token_embd.weight", &[32000, 64]), ("blk.0.attn_norm.weight", &[64])];
    assert_eq!(
        ParamCounts::from_tensors(dense),
        ParamCounts { total: 2_048_064, shared: 2_048_064, expert: 0, expert_count: 0 }
    );
    // experts: 8 of them in ffn_*_exps (canonical [experts, rows, cols]); one expert's share counts
    let moe: [(&str, &[u64]); 3] = [
        ("blk.0.ffn_gate_exps.weight", &[8, 128, 64]),
        ("blk.0.ffn_down_exps.weight", &[8, 64, 128]),
        ("blk.0.attn_q.weight", &[64, 64]),
    ];
    let p = ParamCounts::from_tensors(moe);
    assert_eq!(p, ParamCounts { total: 2 * 8 * 128 * 64 + 4096, shared: 4096, expert: 2 * 128 * 64, expert_count: 8 });
    assert_eq!(size_label(&p), "8x20K");
}

#[test]
fn every_constant_pattern_compiles() {
    // The heuristics' patterns are compiled lazily: force each once, so a bad pattern fails
    // here, never in a user's conversion.
    for re in [
        &super::model_id::TITLE_KEEP_RE,
        &super::model_id::VERSION_RE,
        &super::model_id::TYPE_RE,
        &super::model_id::SIZE_RE,
        &super::model_id::FINETUNE_RE,
        &super::model_id::HF_URL_RE,
    ] {
        assert!(!re.is_match("\u{0}"), "{}", re.as_str());
    }
    assert!(
        super::model_id::SIZE_RE.is_match("8x7B")
            && super::model_id::VERSION_RE.is_match("v0.1")
            && super::model_id::TYPE_RE.is_match("q4_k")
    );
}

#[test]
fn a_metadata_override_replaces_and_removes_keys() {
    let counts = ParamCounts { total: 4_196_672, ..Default::default() };
    let gen = json!({"temperature": 0.7, "top_k": 20});
    let o = json!({"general.sampling.temp": null, "general.sampling.top_k": true, "general.size_label": "7B",
        "general.name": null, "general.license": "x", "general.tags": ["a"]});
    let kv = general_kv(Path::new("tiny-Mistral-Instruct-v0.1"), &json!({}), &counts, None, Some(&gen), Some(&o))
        .expect("general keys");
    // temp removed, top_k a boolean packed as i32 1 (as Python's struct.pack), the size label
    // kept, the name (null) found again from the folder, general.license not taken
    assert_eq!(
        strings(&kv),
        expect(&[
            ("general.type", "model"),
            ("general.sampling.top_k", "i32 1"),
            ("general.name", "tiny-Mistral-Instruct-v0.1"),
            ("general.version", "v0.1"),
            ("general.finetune", "Instruct"),
            ("general.basename", "tiny-Mistral"),
            ("general.size_label", "7B"),
            ("general.tags", r#"["a"]"#),
        ])
    );
    assert_eq!(ignored_override_keys(&o), vec!["general.license".to_string()]);
    let err = general_kv(Path::new("m"), &json!({}), &counts, None, None, Some(&json!([1]))).unwrap_err();
    assert_eq!(err, GeneralError::OverrideNotObject { found: "an array" });
    // a finite number that rounds to an infinite f32 is refused, as struct.pack("<f") refuses it
    let err =
        general_kv(Path::new("m"), &json!({}), &counts, None, None, Some(&json!({"general.sampling.top_p": 1e300})))
            .unwrap_err();
    assert!(err.to_string().contains("expected a number"), "{err}");
}

#[test]
fn empty_values_name_the_file_but_are_not_written() {
    // gguf-py's add_string("") and add_array([]) write nothing, but Metadata keeps the empty
    // values: the finetune "" stops the fallback from the folder's name and names the file.
    let counts = ParamCounts { total: 4_184_384, ..Default::default() };
    let o = json!({"general.finetune": "", "general.tags": [], "general.author": "someone"});
    let mut keys = general_kv(Path::new("tiny-Mistral-Instruct-v0.1"), &json!({}), &counts, None, None, Some(&o))
        .expect("general keys");
    let written = strings(&keys);
    assert!(written.iter().all(|(k, _)| k != "general.finetune" && k != "general.tags"), "{written:?}");
    assert!(written.contains(&("general.author".to_owned(), "someone".to_owned())), "{written:?}");
    assert_eq!(keys.keys().count(), keys.clone().into_keys().len());
    let parts = keys.name_parts();
    assert_eq!(parts.finetune.as_deref(), Some(""));
    assert_eq!(parts.basename.as_deref(), Some("tiny-Mistral"));
    // --model-name replaces the name in its place; an empty one is not written but names the file
    keys.set_name("Other");
    assert_eq!(strings(&keys)[1], ("general.name".to_owned(), "Other".to_owned()));
    keys.set_name("");
    assert!(keys.keys().all(|(k, _)| k != "general.name"));
    assert_eq!(keys.name_parts().name.as_deref(), Some(""));
}
