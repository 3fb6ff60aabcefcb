//! Llama (Llama 2/3, Mistral, SmolLM2): the reference's `LlamaModel` (`conversion/llama.py`),
//! for `LlamaForCausalLM` and `MistralForCausalLM` checkpoints.
//!
//! - Names (gguf-py's `tensor_mapping.py` for `MODEL_ARCH.LLAMA`): `model.embed_tokens` →
//!   `token_embd`, `model.norm` → `output_norm`, `lm_head` → `output`;
//!   `model.layers.N.self_attn.{q,k,v,o}_proj` → `blk.N.attn_{q,k,v,output}`,
//!   `mlp.{gate,up,down}_proj` → `ffn_{gate,up,down}`, `input_layernorm` → `attn_norm`,
//!   `post_attention_layernorm` → `ffn_norm` (`.weight` and `.bias`).
//! - Q and K (weights and biases) are permuted ([`Transform::Permute`]) with the query heads
//!   and the key/value heads (`num_key_value_heads`, the query heads when absent).
//! - Keys: [`text_model_parameters`], then `llama.vocab_size` and `llama.rope.dimension_count`
//!   (`head_dim`, else `hidden_size / num_attention_heads`), u32.
//! - Not converted (refused): mixture-of-experts checkpoints (`block_sparse_moe`), the `llama3`
//!   RoPE type (its `rope_freqs` tensor).

use super::{
    always_skipped, key, standard_required, text_model_parameters, ArchContext, Architecture, BlockMap, Mapped,
    Transform,
};
use crate::convert::{ConvertError, Kvs};
use crate::Value;

/// The Llama architecture (`general.architecture = "llama"`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Llama;

/// The Llama name map (also the base of Qwen 2 and Qwen 3).
pub const LLAMA_MAP: BlockMap<'static> = BlockMap {
    top: &[("model.embed_tokens", "token_embd"), ("model.norm", "output_norm"), ("lm_head", "output")],
    block_prefix: "model.layers.",
    block: &[
        ("self_attn.q_proj", "attn_q"),
        ("self_attn.k_proj", "attn_k"),
        ("self_attn.v_proj", "attn_v"),
        ("self_attn.o_proj", "attn_output"),
        ("mlp.gate_proj", "ffn_gate"),
        ("mlp.up_proj", "ffn_up"),
        ("mlp.down_proj", "ffn_down"),
        ("input_layernorm", "attn_norm"),
        ("post_attention_layernorm", "ffn_norm"),
    ],
};

/// The block tensors every Llama-like decoder needs.
pub const LLAMA_BLOCK: &[&str] =
    &["attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"];

/// Checks the head counts a permutation needs: `hidden`-independent, the rows of Q and K must be
/// whole heads of an even width (checked per tensor when it is written).
fn heads(cx: &ArchContext<'_>) -> Result<(u64, u64), ConvertError> {
    let n_head = cx.config.need_u32(&["n_heads", "num_attention_heads"])?;
    let n_kv = cx.config.find_u32(&["n_kv_heads", "num_key_value_heads"])?.unwrap_or(n_head);
    if n_head == 0 || n_kv == 0 {
        return Err(ConvertError::Config("num_attention_heads and num_key_value_heads must be positive".into()));
    }
    Ok((u64::from(n_head), u64::from(n_kv)))
}

impl Architecture for Llama {
    fn name(&self) -> &'static str {
        "llama"
    }

    fn check(&self, cx: &ArchContext<'_>) -> Result<(), ConvertError> {
        heads(cx)?;
        cx.config.need_u32(&["vocab_size"])?;
        if let Some(t) = cx.config.rope_parameters().get("rope_type").and_then(|t| t.as_str()) {
            if t.eq_ignore_ascii_case("llama3") {
                return Err(ConvertError::Config(
                    "rope_scaling type \"llama3\" (the reference's rope_freqs tensor) is not converted yet".into(),
                ));
            }
        }
        Ok(())
    }

    fn map_tensor(&self, hf: &str, _shape: &[u64], cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        if always_skipped(hf) {
            return Ok(Mapped::Skip);
        }
        let Some(name) = LLAMA_MAP.get(hf, cx.block_count) else { return Ok(Mapped::Unknown) };
        let (n_head, n_kv) = heads(cx)?;
        let mut transforms = Vec::new();
        if hf.ends_with("q_proj.weight") || hf.ends_with("q_proj.bias") {
            transforms.push(Transform::Permute { heads: n_head });
        } else if hf.ends_with("k_proj.weight") || hf.ends_with("k_proj.bias") {
            transforms.push(Transform::Permute { heads: n_kv });
        }
        Ok(Mapped::To { name, transforms })
    }

    fn required_tensors(&self, cx: &ArchContext<'_>) -> Vec<String> {
        standard_required(cx.block_count, LLAMA_BLOCK)
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        text_model_parameters("llama", cx, file_type, kv)?;
        let c = cx.config;
        // The reference reads config.json through transformers' LlamaConfig, which fills in
        // `head_dim = hidden_size / num_attention_heads` when the file has none: the key and
        // value lengths are then written too, before `general.file_type`.
        if c.find_u32(&["head_dim"])?.is_none() {
            let d = c.need_u32(&["hidden_size"])? / c.need_u32(&["num_attention_heads"])?.max(1);
            let at = kv.0.iter().position(|(k, _)| k == "general.file_type").unwrap_or(kv.0.len());
            kv.0.insert(at, (key("llama", "attention.value_length"), Value::U32(d)));
            kv.0.insert(at, (key("llama", "attention.key_length"), Value::U32(d)));
        }
        kv.set(key("llama", "vocab_size"), Value::U32(c.need_u32(&["vocab_size"])?));
        let rope_dim = match c.find_u32(&["head_dim"])? {
            Some(d) => d,
            None => c.need_u32(&["hidden_size"])? / c.need_u32(&["num_attention_heads"])?.max(1),
        };
        kv.set(key("llama", "rope.dimension_count"), Value::U32(rope_dim));
        Ok(())
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        crate::convert::vocab_hook::llama(cx, kv)
    }
}
