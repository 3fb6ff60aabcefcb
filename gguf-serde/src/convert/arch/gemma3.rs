//! Gemma 3 (text): the reference's `Gemma3Model` (`conversion/gemma.py`), for
//! `Gemma3ForCausalLM`.
//!
//! - Names (`tensor_mapping.py` for `MODEL_ARCH.GEMMA3`): the Llama names, except
//!   `post_attention_layernorm` → `blk.N.post_attention_norm`, `pre_feedforward_layernorm` →
//!   `blk.N.ffn_norm`, `post_feedforward_layernorm` → `blk.N.post_ffw_norm`, and the per-head
//!   norms `self_attn.{q,k}_norm` → `blk.N.attn_{q,k}_norm`. No permutation.
//! - Every Hugging Face tensor whose name ends in `norm.weight` gets 1 added
//!   ([`Transform::Add`]): `Gemma3RMSNorm` multiplies by `1 + weight`, llama.cpp by `weight`.
//! - The embedding keeps its first `n_vocab` rows ([`Transform::KeepRows`]): `vocab_size`
//!   when there is a `tokenizer.model` (the length of the reference's SentencePiece vocabulary,
//!   padded to it), else the entries of `tokenizer.json`'s `model.vocab` plus its
//!   `added_tokens`.
//! - Keys: [`text_model_parameters`], then, replacing a key already written in place (gguf-py's
//!   writer keeps a key's first position): `context_length` (default 131072),
//!   `attention.head_count` (8), `attention.layer_norm_rms_epsilon` (1e-6),
//!   `attention.key_length`/`value_length` (`head_dim`, 256), `rope.freq_base` (1e6),
//!   `final_logit_softcapping` (f32, when non-zero), `attention.sliding_window` (u32, unless
//!   `sliding_window_pattern` is 1), `attention.head_count_kv` (4).

use super::{always_skipped, key, text_model_parameters, ArchContext, Architecture, BlockMap, Mapped, Transform};
use crate::convert::checkpoint::read_json;
use crate::convert::{ConvertError, Kvs};
use crate::Value;

/// The Gemma 3 architecture (`general.architecture = "gemma3"`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Gemma3;

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
        ("input_layernorm", "attn_norm"),
        ("post_attention_layernorm", "post_attention_norm"),
        ("pre_feedforward_layernorm", "ffn_norm"),
        ("post_feedforward_layernorm", "post_ffw_norm"),
    ],
};

/// The vocabulary size the reference cuts the embedding to (see the [module docs](self)).
fn real_vocab(cx: &ArchContext<'_>) -> Result<u64, ConvertError> {
    if cx.dir.join("tokenizer.model").is_file() {
        return match cx.config.find_u32(&["vocab_size_per_layer_input", "vocab_size"])? {
            Some(n) if n > 0 => Ok(u64::from(n)),
            _ => Err(ConvertError::Config(
                "no vocab_size: the SentencePiece vocabulary's own size is not read here yet".into(),
            )),
        };
    }
    let path = cx.dir.join("tokenizer.json");
    let j = read_json(&path)?;
    let vocab = j.get("model").and_then(|m| m.get("vocab")).and_then(|v| v.as_object()).map(|v| v.len());
    let added = j.get("added_tokens").and_then(|v| v.as_array()).map(|v| v.len());
    match (vocab, added) {
        (Some(v), Some(a)) => Ok((v + a) as u64),
        _ => Err(ConvertError::Config(format!(
            "{}: no model.vocab object or added_tokens list",
            crate::format::shown_path(&path)
        ))),
    }
}

impl Architecture for Gemma3 {
    fn name(&self) -> &'static str {
        "gemma3"
    }

    fn check(&self, cx: &ArchContext<'_>) -> Result<(), ConvertError> {
        if cx.config.get("attn_logit_softcapping").is_some() {
            return Err(ConvertError::Config("attn_logit_softcapping is set (not a Gemma 3)".into()));
        }
        let pattern = cx.config.get("sliding_window_pattern").and_then(|v| v.as_i64());
        if pattern != Some(1) {
            cx.config.need_u32(&["sliding_window"])?;
        }
        real_vocab(cx)?;
        Ok(())
    }

    fn map_tensor(&self, hf: &str, _shape: &[u64], cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        if always_skipped(hf) {
            return Ok(Mapped::Skip);
        }
        let Some(name) = MAP.get(hf, cx.block_count) else { return Ok(Mapped::Unknown) };
        let mut transforms = Vec::new();
        if hf.contains("embed_tokens.weight") {
            transforms.push(Transform::KeepRows(real_vocab(cx)?));
        }
        if hf.ends_with("norm.weight") {
            transforms.push(Transform::Add(1.0));
        }
        Ok(Mapped::To { name, transforms })
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
                "attn_q_norm",
                "attn_k_norm",
                "post_attention_norm",
                "ffn_norm",
                "ffn_gate",
                "ffn_up",
                "ffn_down",
                "post_ffw_norm",
            ],
        )
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        let a = "gemma3";
        text_model_parameters(a, cx, file_type, kv)?;
        let c = cx.config;
        let f32v = |v: f64| Value::F32(v as f32);
        kv.set(key(a, "context_length"), Value::U32(c.find_u32(&["max_position_embeddings"])?.unwrap_or(131072)));
        kv.set(key(a, "attention.head_count"), Value::U32(c.find_u32(&["num_attention_heads"])?.unwrap_or(8)));
        kv.set(key(a, "attention.layer_norm_rms_epsilon"), f32v(c.find_f64(&["rms_norm_eps"])?.unwrap_or(1e-6)));
        let head_dim = c.find_u32(&["head_dim"])?.unwrap_or(256);
        kv.set(key(a, "attention.key_length"), Value::U32(head_dim));
        kv.set(key(a, "attention.value_length"), Value::U32(head_dim));
        let all = c.rope_parameters();
        let rope = match all.get("full_attention") {
            Some(serde_json::Value::Object(m)) => m.clone(),
            _ => all,
        };
        let theta = rope.get("rope_theta").and_then(|v| v.as_f64()).unwrap_or(1_000_000.0);
        kv.set(key(a, "rope.freq_base"), f32v(theta));
        if let Some(cap) = c.find_f64(&["final_logit_softcapping"])?.filter(|&v| v != 0.0) {
            kv.set(key(a, "final_logit_softcapping"), f32v(cap));
        }
        if c.get("sliding_window_pattern").and_then(|v| v.as_i64()) != Some(1) {
            kv.set(key(a, "attention.sliding_window"), Value::U32(c.need_u32(&["sliding_window"])?));
        }
        kv.set(key(a, "attention.head_count_kv"), Value::U32(c.find_u32(&["num_key_value_heads"])?.unwrap_or(4)));
        Ok(())
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        crate::convert::vocab_hook::gemma3(cx, kv)
    }
}
