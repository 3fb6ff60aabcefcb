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

use super::{always_skipped, key, text_model_parameters, ArchContext, Architecture, BlockMap, Mapped};
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
        if always_skipped(hf) {
            return Ok(Mapped::Skip);
        }
        Ok(MAP.get(hf, cx.block_count).map_or(Mapped::Unknown, Mapped::plain))
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
