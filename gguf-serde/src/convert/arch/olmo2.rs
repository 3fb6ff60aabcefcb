//! OLMo 2: the reference's `Olmo2Model` (`conversion/olmo.py`, a `TextModel`), for
//! `Olmo2ForCausalLM`.
//!
//! - Names (`tensor_mapping.py` for `MODEL_ARCH.OLMO2`, which has no pre-norms): the Llama
//!   attention and feed-forward names, `self_attn.{q,k}_norm` → `blk.N.attn_{q,k}_norm` (over
//!   the full width: `[n_head * head_dim]` and `[n_head_kv * head_dim]`, not per head),
//!   `post_attention_layernorm` → `blk.N.post_attention_norm`, `post_feedforward_layernorm` →
//!   `blk.N.post_ffw_norm`. No permutation, no value transform.
//! - Keys: [`text_model_parameters`], then, when `config.json` has `sliding_window` (OLMo 2's
//!   class has none; OLMo 3 checkpoints do), `attention.sliding_window` (u32) and
//!   `attention.sliding_window_pattern` (array of bool): per layer, `layer_types[i] ==
//!   "sliding_attention"`, or without `layer_types` every layer but each fourth
//!   (`(i + 1) % 4 != 0` for `i < num_hidden_layers`).
//! - Tokenizer: GPT-2 BPE from `tokenizer.json` (`TextModel.set_vocab`).

use super::{key, text_model_parameters, ArchContext, Architecture, BlockMap, Mapped};
use crate::convert::{ConvertError, Kvs};
use crate::{Array, Value};

/// The OLMo 2 architecture (`general.architecture = "olmo2"`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Olmo2;

const MAP: BlockMap<'static> = BlockMap {
    top: &[("model.embed_tokens", "token_embd"), ("model.norm", "output_norm"), ("lm_head", "output")],
    block_prefix: "model.layers.",
    block: &[
        ("self_attn.q_proj", "attn_q"),
        ("self_attn.k_proj", "attn_k"),
        ("self_attn.v_proj", "attn_v"),
        ("self_attn.o_proj", "attn_output"),
        ("self_attn.q_norm", "attn_q_norm"),
        ("self_attn.k_norm", "attn_k_norm"),
        ("mlp.gate_proj", "ffn_gate"),
        ("mlp.up_proj", "ffn_up"),
        ("mlp.down_proj", "ffn_down"),
        ("post_attention_layernorm", "post_attention_norm"),
        ("post_feedforward_layernorm", "post_ffw_norm"),
    ],
};

/// `attention.sliding_window_pattern`: whether each layer uses the sliding window (see the
/// [module docs](self)); `None` without `sliding_window` in `config.json`.
fn sliding_window(cx: &ArchContext<'_>) -> Result<Option<(u32, Vec<bool>)>, ConvertError> {
    let c = cx.config;
    if !c.raw.contains_key("sliding_window") {
        return Ok(None);
    }
    let window = c
        .find_u32(&["sliding_window"])?
        .ok_or_else(|| ConvertError::Config("sliding_window is null (the reference writes it as an integer)".into()))?;
    let pattern = match c.raw.get("layer_types") {
        None => (0..c.need_u32(&["num_hidden_layers"])?).map(|i| (i + 1) % 4 != 0).collect(),
        Some(serde_json::Value::Array(types)) => {
            types.iter().map(|t| t.as_str() == Some("sliding_attention")).collect()
        }
        Some(v) => return Err(ConvertError::Config(format!("layer_types: {v} is not a list"))),
    };
    Ok(Some((window, pattern)))
}

impl Architecture for Olmo2 {
    fn name(&self) -> &'static str {
        "olmo2"
    }

    fn check(&self, cx: &ArchContext<'_>) -> Result<(), ConvertError> {
        sliding_window(cx)?;
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
                "attn_q",
                "attn_k",
                "attn_v",
                "attn_output",
                "attn_q_norm",
                "attn_k_norm",
                "post_attention_norm",
                "ffn_gate",
                "ffn_up",
                "ffn_down",
                "post_ffw_norm",
            ],
        )
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        text_model_parameters("olmo2", cx, file_type, kv)?;
        if let Some((window, pattern)) = sliding_window(cx)? {
            kv.set(key("olmo2", "attention.sliding_window"), Value::U32(window));
            kv.set(key("olmo2", "attention.sliding_window_pattern"), Value::Array(Array::Bool(pattern)));
        }
        Ok(())
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        crate::convert::vocab_hook::gpt2(cx, kv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::arch::testing::{config, keys, mapped, owned, plain_name};

    /// A transformers 5.24 `Olmo2Config` as `save_pretrained` writes it (2 layers, 64 wide).
    const CONFIG: &str = r#"{"architectures": ["Olmo2ForCausalLM"], "attention_bias": false,
        "hidden_size": 64, "intermediate_size": 176, "max_position_embeddings": 2048, "model_type": "olmo2",
        "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-05,
        "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}, "vocab_size": 50304}"#;

    #[test]
    fn keys_as_the_reference_writes_them() {
        // Read off convert_hf_to_gguf.py's output for this configuration (--outtype bf16).
        let want = owned(vec![
            ("olmo2.block_count", Value::U32(2)),
            ("olmo2.context_length", Value::U32(2048)),
            ("olmo2.embedding_length", Value::U32(64)),
            ("olmo2.feed_forward_length", Value::U32(176)),
            ("olmo2.attention.head_count", Value::U32(4)),
            ("olmo2.attention.head_count_kv", Value::U32(2)),
            ("olmo2.rope.freq_base", Value::F32(10000.0)),
            ("olmo2.attention.layer_norm_rms_epsilon", Value::F32(1e-5)),
            ("general.file_type", Value::U32(32)),
        ]);
        assert_eq!(keys(&Olmo2, &config(CONFIG), 32), want);
    }

    #[test]
    fn sliding_window_keys_follow_the_reference_rule() {
        // Olmo2Model.set_gguf_parameters: without layer_types, every fourth layer is global.
        let c = config(r#"{"num_hidden_layers": 5, "rms_norm_eps": 1e-05, "sliding_window": 32}"#);
        let kv = keys(&Olmo2, &c, 1);
        let tail = &kv[kv.len() - 2..];
        assert_eq!(tail[0], ("olmo2.attention.sliding_window".to_owned(), Value::U32(32)));
        let pattern = Value::Array(Array::Bool(vec![true, true, true, false, true]));
        assert_eq!(tail[1], ("olmo2.attention.sliding_window_pattern".to_owned(), pattern));
        let c = config(
            r#"{"num_hidden_layers": 3, "sliding_window": 8,
            "layer_types": ["full_attention", "sliding_attention", "sliding_attention"]}"#,
        );
        let kv = keys(&Olmo2, &c, 1);
        assert_eq!(kv.last().unwrap().1, Value::Array(Array::Bool(vec![false, true, true])));
        let c = config(r#"{"num_hidden_layers": 3, "sliding_window": null}"#);
        assert!(crate::convert::arch::testing::with_cx(&c, |cx| Olmo2.check(cx)).is_err());
    }

    #[test]
    fn names_as_gguf_py_maps_them() {
        // gguf-py's TensorNameMap(MODEL_ARCH.OLMO2, 2): no pre-norms, post-norms instead.
        let c = config(CONFIG);
        for (hf, gguf) in [
            ("model.embed_tokens.weight", "token_embd.weight"),
            ("lm_head.weight", "output.weight"),
            ("model.layers.1.self_attn.q_norm.weight", "blk.1.attn_q_norm.weight"),
            ("model.layers.1.self_attn.k_norm.weight", "blk.1.attn_k_norm.weight"),
            ("model.layers.1.self_attn.q_proj.weight", "blk.1.attn_q.weight"),
            ("model.layers.0.mlp.gate_proj.weight", "blk.0.ffn_gate.weight"),
            ("model.layers.0.post_attention_layernorm.weight", "blk.0.post_attention_norm.weight"),
            ("model.layers.0.post_feedforward_layernorm.weight", "blk.0.post_ffw_norm.weight"),
        ] {
            assert_eq!(plain_name(mapped(&Olmo2, &c, hf)), gguf, "{hf}");
        }
        assert_eq!(mapped(&Olmo2, &c, "model.layers.0.input_layernorm.weight"), Mapped::Unknown);
    }
}
