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
//! - Tokenizer: `Glm4Model.set_vocab` ([`crate::convert::vocab_hook::glm4`]), GPT-2 BPE with
//!   GLM's special tokens.

use super::{key, text_model_parameters, ArchContext, Architecture, BlockMap, Mapped};
use crate::convert::{ConvertError, Kvs};
use crate::Value;

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
        crate::convert::vocab_hook::glm4(cx, kv)
    }
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
}
