//! GLM-4 (the 0414 models): the reference's `Glm4Model` (`conversion/glm.py`, a `TextModel`),
//! for `Glm4ForCausalLM`.
//!
//! - Names (`tensor_mapping.py` for `MODEL_ARCH.GLM4`): the Llama attention names (Q/K/V with
//!   biases), `mlp.gate_up_proj` → `blk.N.ffn_up`, kept fused (`[2 * n_ff, n_embd]`, gate
//!   rows first: `MODEL_ARCH.GLM4` has no `ffn_gate`, and llama.cpp's `glm4` graph splits the
//!   fused tensor itself), `mlp.down_proj` → `ffn_down`, `input_layernorm` → `attn_norm`,
//!   `post_attention_layernorm` → `ffn_norm`, `post_self_attn_layernorm` →
//!   `post_attention_norm`, `post_mlp_layernorm` → `post_ffw_norm`. No permutation (the
//!   reference permutes Q/K only for multi-section RoPE, GLM-4V, refused by
//!   [`text_model_parameters`]).
//! - Keys: [`text_model_parameters`], then `rope.dimension_count` (u32): `head_dim` (else
//!   `hidden_size / num_attention_heads`) times the RoPE parameters' `partial_rotary_factor`
//!   (0.5 when absent), truncated.
//! - Tokenizer: [`set_vocab_glm4`], GPT-2 BPE with GLM's special tokens.

use super::{key, text_model_parameters, ArchContext, Architecture, BlockMap, Mapped};
use crate::convert::checkpoint::read_json;
use crate::convert::vocab::{bpe, special_vocab};
use crate::convert::{ConvertError, Kvs};
use crate::{Array, Value};

/// The GLM-4 architecture (`general.architecture = "glm4"`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Glm4;

const MAP: BlockMap<'static> = BlockMap {
    top: &[("model.embed_tokens", "token_embd"), ("model.norm", "output_norm"), ("lm_head", "output")],
    block_prefix: "model.layers.",
    block: &[
        ("self_attn.q_proj", "attn_q"),
        ("self_attn.k_proj", "attn_k"),
        ("self_attn.v_proj", "attn_v"),
        ("self_attn.o_proj", "attn_output"),
        ("mlp.gate_up_proj", "ffn_up"),
        ("mlp.down_proj", "ffn_down"),
        ("input_layernorm", "attn_norm"),
        ("post_attention_layernorm", "ffn_norm"),
        ("post_self_attn_layernorm", "post_attention_norm"),
        ("post_mlp_layernorm", "post_ffw_norm"),
    ],
};

/// `rope.dimension_count` (see the [module docs](self)).
fn rope_dims(cx: &ArchContext<'_>) -> Result<u32, ConvertError> {
    let c = cx.config;
    let head_dim = match c.find_u32(&["head_dim"])? {
        Some(d) => d,
        None => c.need_u32(&["hidden_size"])? / c.need_u32(&["num_attention_heads"])?.max(1),
    };
    let factor = match c.rope_parameters().get("partial_rotary_factor") {
        None | Some(serde_json::Value::Null) => 0.5,
        Some(v) => {
            v.as_f64().ok_or_else(|| ConvertError::Config(format!("partial_rotary_factor: {v} is not a number")))?
        }
    };
    let dims = (f64::from(head_dim) * factor).trunc();
    if !(0.0..=f64::from(u32::MAX)).contains(&dims) {
        return Err(ConvertError::Config(format!("partial_rotary_factor {factor} gives {dims} rotary dimensions")));
    }
    Ok(dims as u32)
}

impl Architecture for Glm4 {
    fn name(&self) -> &'static str {
        "glm4"
    }

    fn check(&self, cx: &ArchContext<'_>) -> Result<(), ConvertError> {
        rope_dims(cx)?;
        Ok(())
    }

    fn map_tensor(&self, hf: &str, _shape: &[u64], cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        Ok(MAP.mapped(hf, cx.block_count))
    }

    fn source_name(&self, gguf: &str) -> Option<String> {
        MAP.source_name(gguf)
    }

    fn required_tensors(&self, cx: &ArchContext<'_>) -> Vec<String> {
        super::standard_required(
            cx.block_count,
            &[
                "attn_norm",
                "attn_q",
                "attn_k",
                "attn_v",
                "attn_output",
                "post_attention_norm",
                "ffn_norm",
                "ffn_up",
                "ffn_down",
                "post_ffw_norm",
            ],
        )
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        text_model_parameters("glm4", cx, file_type, kv)?;
        kv.set(key("glm4", "rope.dimension_count"), Value::U32(rope_dims(cx)?));
        Ok(())
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        set_vocab_glm4(cx, kv)
    }
}

/// The id of the added token `content` (`tokenizer.get_added_vocab()[content]`): among
/// `tokenizer.json`'s `added_tokens`, the one of the highest id when a content is given twice.
fn added_token_id(added: &[serde_json::Value], content: &str) -> Option<u64> {
    added
        .iter()
        .filter(|t| t.get("content").and_then(|c| c.as_str()) == Some(content))
        .filter_map(|t| t.get("id").and_then(|i| i.as_u64()))
        .max()
}

/// `Glm4Model.set_vocab`: `tokenizer.ggml.model` = `gpt2`, the pre-tokenizer, tokens and token
/// types of `tokenizer.json` ([`bpe::get_vocab_base`], with `config.json`'s `vocab_size`), then
/// the special vocabulary with merges ([`special_vocab`]) where `eos`, `eot`, `unk` and `bos`
/// are set, unless the folder already sets them (the first id set for a type stays), to the
/// added tokens `<|endoftext|>`, `<|user|>`, `<|endoftext|>`, `<|endoftext|>`. A tokenizer
/// without those two added tokens is refused, as the reference fails on it.
fn set_vocab_glm4(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
    let n = cx.config.find_u32(&["vocab_size"])?.map(|n| n as usize);
    let base = bpe::get_vocab_base(cx.dir, n)?;
    let path = cx.dir.join("tokenizer.json");
    let json = read_json(&path)?;
    let added = json.get("added_tokens").and_then(|a| a.as_array()).map(Vec::as_slice).unwrap_or_default();
    let id = |content: &str| {
        added_token_id(added, content).ok_or_else(|| ConvertError::UnsupportedTokenizer {
            path: path.clone(),
            what: format!("no added token {content:?} (GLM-4's tokenizer has it)"),
        })
    };
    let (endoftext, user) = (id("<|endoftext|>")?, id("<|user|>")?);
    let mut sv = special_vocab(cx.dir, true, None)?;
    for (typ, id) in [("eos", endoftext), ("eot", user), ("unk", endoftext), ("bos", endoftext)] {
        let id =
            u32::try_from(id).map_err(|_| ConvertError::Config(format!("token id {id} does not fit in 32 bits")))?;
        if !sv.special_token_ids.iter().any(|(t, _)| t == typ) {
            sv.special_token_ids.push((typ.to_owned(), id));
        }
    }
    kv.set("tokenizer.ggml.model", Value::String("gpt2".into()));
    kv.set("tokenizer.ggml.pre", Value::String(base.pre));
    kv.set("tokenizer.ggml.tokens", Value::Array(Array::String(base.tokens)));
    kv.set("tokenizer.ggml.token_type", Value::Array(Array::I32(base.types)));
    kv.extend(sv.keys()?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::arch::testing::{config, keys, mapped, owned, plain_name};

    /// A transformers 5.24 `Glm4Config` as `save_pretrained` writes it (2 layers, 64 wide).
    const CONFIG: &str = r#"{"architectures": ["Glm4ForCausalLM"], "attention_bias": true, "head_dim": 16,
        "hidden_size": 64, "intermediate_size": 176, "max_position_embeddings": 131072, "model_type": "glm4",
        "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1.5625e-07,
        "rope_parameters": {"partial_rotary_factor": 0.5, "rope_theta": 10000.0, "rope_type": "default"},
        "tie_word_embeddings": false, "vocab_size": 151936}"#;

    #[test]
    fn keys_as_the_reference_writes_them() {
        // Read off convert_hf_to_gguf.py's output for this configuration (--outtype f32).
        let want = owned(vec![
            ("glm4.block_count", Value::U32(2)),
            ("glm4.context_length", Value::U32(131072)),
            ("glm4.embedding_length", Value::U32(64)),
            ("glm4.feed_forward_length", Value::U32(176)),
            ("glm4.attention.head_count", Value::U32(4)),
            ("glm4.attention.head_count_kv", Value::U32(2)),
            ("glm4.rope.freq_base", Value::F32(10000.0)),
            ("glm4.attention.layer_norm_rms_epsilon", Value::F32(1.5625e-07)),
            ("glm4.attention.key_length", Value::U32(16)),
            ("glm4.attention.value_length", Value::U32(16)),
            ("general.file_type", Value::U32(0)),
            ("glm4.rope.dimension_count", Value::U32(8)),
        ]);
        assert_eq!(keys(&Glm4, &config(CONFIG), 0), want);
    }

    #[test]
    fn names_as_gguf_py_maps_them() {
        // gguf-py's TensorNameMap(MODEL_ARCH.GLM4, 2).
        let c = config(CONFIG);
        for (hf, gguf) in [
            ("model.embed_tokens.weight", "token_embd.weight"),
            ("lm_head.weight", "output.weight"),
            ("model.norm.weight", "output_norm.weight"),
            ("model.layers.1.self_attn.q_proj.bias", "blk.1.attn_q.bias"),
            ("model.layers.1.self_attn.k_proj.weight", "blk.1.attn_k.weight"),
            ("model.layers.0.mlp.gate_up_proj.weight", "blk.0.ffn_up.weight"),
            ("model.layers.0.mlp.down_proj.weight", "blk.0.ffn_down.weight"),
            ("model.layers.0.input_layernorm.weight", "blk.0.attn_norm.weight"),
            ("model.layers.0.post_attention_layernorm.weight", "blk.0.ffn_norm.weight"),
            ("model.layers.0.post_self_attn_layernorm.weight", "blk.0.post_attention_norm.weight"),
            ("model.layers.0.post_mlp_layernorm.weight", "blk.0.post_ffw_norm.weight"),
        ] {
            assert_eq!(plain_name(mapped(&Glm4, &c, hf)), gguf, "{hf}");
        }
        // MODEL_ARCH.GLM4 has no ffn_gate; a third block is beyond the block count.
        assert_eq!(mapped(&Glm4, &c, "model.layers.0.mlp.gate_proj.weight"), Mapped::Unknown);
        assert_eq!(mapped(&Glm4, &c, "model.layers.2.mlp.down_proj.weight"), Mapped::Unknown);
    }

    #[test]
    fn rotary_dimensions_follow_the_partial_factor() {
        // int(rope_dim * partial_rotary_factor), 0.5 when absent (Glm4Model.__init__).
        let c = config(r#"{"hidden_size": 96, "num_attention_heads": 4, "num_hidden_layers": 1}"#);
        assert_eq!(crate::convert::arch::testing::with_cx(&c, rope_dims).unwrap(), 12);
        let c = config(r#"{"head_dim": 10, "partial_rotary_factor": 0.75, "num_hidden_layers": 1}"#);
        assert_eq!(crate::convert::arch::testing::with_cx(&c, rope_dims).unwrap(), 7);
        let c = config(r#"{"head_dim": 10, "rope_parameters": {"partial_rotary_factor": "half"}}"#);
        assert!(matches!(crate::convert::arch::testing::with_cx(&c, rope_dims), Err(ConvertError::Config(_))));
    }

    #[test]
    fn special_token_ids_of_the_added_tokens() {
        let added: Vec<serde_json::Value> = serde_json::from_str(
            r#"[{"id": 5, "content": "<|endoftext|>"}, {"id": 9, "content": "<|user|>"},
                {"id": 7, "content": "<|endoftext|>"}]"#,
        )
        .unwrap();
        assert_eq!(added_token_id(&added, "<|endoftext|>"), Some(7));
        assert_eq!(added_token_id(&added, "<|user|>"), Some(9));
        assert_eq!(added_token_id(&added, "<|assistant|>"), None);
    }
}
