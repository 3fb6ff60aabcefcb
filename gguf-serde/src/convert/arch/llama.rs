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
//! - The `llama3` RoPE type (Llama 3.1 and later) writes no scaling keys but a generated tensor,
//!   `rope_freqs.weight` ([`llama3_rope_factors`], the reference's `generate_extra_tensors`).
//! - Tokenizer: SentencePiece (`tokenizer.model`) or GPT-2 BPE (`tokenizer.json`, Llama 3), see
//!   [`crate::convert::vocab::set_vocab_llama`].
//! - Mixtral (`MixtralForCausalLM`, `num_local_experts`): each block's experts
//!   `block_sparse_moe.experts.X.{w1,w2,w3}.weight` (`[n_ff, n_embd]`, `[n_embd, n_ff]`,
//!   `[n_ff, n_embd]`) are stacked ([`Mapped::expert`]) into `blk.N.ffn_{gate,down,up}_exps.weight`
//!   (`[n_expert, n_ff, n_embd]`, `[n_expert, n_embd, n_ff]`, `[n_expert, n_ff, n_embd]`), the
//!   router `block_sparse_moe.gate` is `blk.N.ffn_gate_inp` (F32, the reference's rule);
//!   `llama.expert_count` and `llama.expert_used_count` come from [`text_model_parameters`].
//!   transformers saves Mixtral's experts this way (it undoes its fused in-memory layout on
//!   `save_pretrained`), as the hub's checkpoints have them.

use super::{
    always_skipped, expert_part, key, standard_required, text_model_parameters, ArchContext, Architecture, BlockMap,
    ExtraTensor, Mapped, Transform,
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

/// Mixtral's router, beside [`LLAMA_MAP`].
pub const MIXTRAL_MAP: BlockMap<'static> =
    BlockMap { top: &[], block_prefix: "model.layers.", block: &[("block_sparse_moe.gate", "ffn_gate_inp")] };

/// The block tensors of a Mixtral decoder.
pub const MIXTRAL_BLOCK: &[&str] = &[
    "attn_norm",
    "attn_q",
    "attn_k",
    "attn_v",
    "attn_output",
    "ffn_norm",
    "ffn_gate_inp",
    "ffn_gate_exps",
    "ffn_down_exps",
    "ffn_up_exps",
];

/// The block tensors every Llama-like decoder needs.
pub const LLAMA_BLOCK: &[&str] =
    &["attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"];

/// Checks the head counts a permutation needs: `hidden`-independent, the rows of Q and K must be
/// whole heads of an even width (checked per tensor when it is written).
pub(crate) fn heads(cx: &ArchContext<'_>) -> Result<(u64, u64), ConvertError> {
    let n_head = cx.config.need_u32(&["n_heads", "num_attention_heads"])?;
    let n_kv = cx.config.find_u32(&["n_kv_heads", "num_key_value_heads"])?.unwrap_or(n_head);
    if n_head == 0 || n_kv == 0 {
        return Err(ConvertError::Config("num_attention_heads and num_key_value_heads must be positive".into()));
    }
    Ok((u64::from(n_head), u64::from(n_kv)))
}

/// A number of the RoPE parameters, `default` when absent.
fn rope_num(p: &serde_json::Map<String, serde_json::Value>, name: &str, default: f64) -> Result<f64, ConvertError> {
    match p.get(name) {
        None => Ok(default),
        Some(v) => v.as_f64().ok_or_else(|| ConvertError::Config(format!("rope_scaling.{name}: {v} is not a number"))),
    }
}

/// `LlamaModel.generate_extra_tensors`: for the `llama3` RoPE type (`rope_type`, any case, of the
/// reference's `rope_parameters`, or of their `full_attention`), the tensor `rope_freqs.weight`
/// of the per-frequency factors; `None` for other RoPE types.
///
/// The values are computed as the reference computes them with torch in float32: the
/// frequencies `1 / base^(i / dim)` for even `i < dim` (`powf`, then a reciprocal); per
/// frequency the wavelength `(1 / freq) * f32(2π)`; factor 1 when it is below
/// `original_max_position_embeddings / high_freq_factor`, `factor` when above
/// `original_max_position_embeddings / low_freq_factor`, else `1 / ((1 - s) / factor + s)` with
/// `s = ((1 / wavelength) * original_max_position_embeddings - low_freq_factor) /
/// (high_freq_factor - low_freq_factor)`, every operation rounded to f32 as torch rounds it
/// (a Python number meeting a tensor is first rounded to f32). Defaults as the reference's:
/// `rope_theta` 10000, `factor` 8, `low_freq_factor` 1, `high_freq_factor` 4,
/// `original_max_position_embeddings` 8192; `dim` is `head_dim`, else `hidden_size /
/// num_attention_heads`.
///
/// # Errors
/// [`ConvertError::Config`] for a parameter that is not a number, or a missing dimension.
pub fn llama3_rope_factors(cx: &ArchContext<'_>) -> Result<Option<ExtraTensor>, ConvertError> {
    let all = cx.config.rope_parameters();
    let p = match all.get("full_attention") {
        Some(serde_json::Value::Object(m)) => m.clone(),
        _ => all,
    };
    let llama3 = p.get("rope_type").and_then(|t| t.as_str()).is_some_and(|t| t.to_lowercase() == "llama3");
    if !llama3 {
        return Ok(None);
    }
    let base = rope_num(&p, "rope_theta", 10000.0)?;
    let dim = match cx.config.find_u32(&["head_dim"])? {
        Some(d) => d,
        None => cx.config.need_u32(&["hidden_size"])? / cx.config.need_u32(&["num_attention_heads"])?.max(1),
    };
    let factor = rope_num(&p, "factor", 8.0)?;
    let low = rope_num(&p, "low_freq_factor", 1.0)?;
    let high = rope_num(&p, "high_freq_factor", 4.0)?;
    let old_ctx = rope_num(&p, "original_max_position_embeddings", 8192.0)?;
    let (low_wavelen, high_wavelen) = (old_ctx / low, old_ctx / high);
    let two_pi = (2.0 * std::f64::consts::PI) as f32;
    let values: Vec<f32> = (0..dim)
        .step_by(2)
        .map(|i| {
            let freq = 1.0f32 / (base as f32).powf(i as f32 / dim as f32);
            let wavelen = (1.0f32 / freq) * two_pi;
            if wavelen < high_wavelen as f32 {
                1.0
            } else if wavelen > low_wavelen as f32 {
                factor as f32
            } else {
                let smooth = ((1.0f32 / wavelen) * old_ctx as f32 - low as f32) / (high - low) as f32;
                1.0f32 / ((1.0f32 - smooth) / factor as f32 + smooth)
            }
        })
        .collect();
    Ok(Some(ExtraTensor { name: "rope_freqs.weight".into(), shape: vec![values.len() as u64], values }))
}

/// [`Mapped::Skip`] for what the reference drops unread ([`always_skipped`]), else the Llama
/// name of `hf` ([`LLAMA_MAP`]) with `LlamaModel.modify_tensors`' permutation of Q and
/// K (weights and biases; [`Transform::Permute`] with the query heads, and with the key/value
/// heads for K): the dense Llama tensors of Llama, SmolLM3 and Granite. `Mapped::Unknown` for a
/// name outside the map.
///
/// # Errors
/// [`ConvertError::Config`] when `num_attention_heads` is missing or a head count is zero.
pub fn map_permuted(hf: &str, cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
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

/// What `LlamaModel` needs of `config.json` before reading tensors: the head counts of the
/// permutation and `vocab_size`.
///
/// # Errors
/// [`ConvertError::Config`] naming the missing or zero field.
pub fn check_llama(cx: &ArchContext<'_>) -> Result<(), ConvertError> {
    heads(cx)?;
    cx.config.need_u32(&["vocab_size"])?;
    Ok(())
}

/// `LlamaModel.set_gguf_parameters` for the architecture `arch`: [`text_model_parameters`], then
/// `{arch}.vocab_size` and `{arch}.rope.dimension_count` (`head_dim`, else `hidden_size /
/// num_attention_heads`), u32. A `head_dim` that transformers' configuration class fills in
/// (`LlamaConfig`, `MistralConfig`; not `MixtralConfig`) is in the configuration as the
/// reference sees it ([`HfConfig`](crate::convert::HfConfig)'s defaults), so
/// [`text_model_parameters`] writes the key and value lengths from it.
///
/// # Errors
/// [`ConvertError::Config`] for a missing `vocab_size`, `hidden_size` or
/// `num_attention_heads`, or as [`text_model_parameters`].
pub fn llama_parameters(arch: &str, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
    text_model_parameters(arch, cx, file_type, kv)?;
    let c = cx.config;
    let derived = || -> Result<u32, ConvertError> {
        Ok(c.need_u32(&["hidden_size"])? / c.need_u32(&["num_attention_heads"])?.max(1))
    };
    kv.set(key(arch, "vocab_size"), Value::U32(c.need_u32(&["vocab_size"])?));
    let rope_dim = match c.find_u32(&["head_dim"])? {
        Some(d) => d,
        None => derived()?,
    };
    kv.set(key(arch, "rope.dimension_count"), Value::U32(rope_dim));
    Ok(())
}

impl Architecture for Llama {
    fn name(&self) -> &'static str {
        "llama"
    }

    fn check(&self, cx: &ArchContext<'_>) -> Result<(), ConvertError> {
        check_llama(cx)
    }

    fn extra_tensors(&self, cx: &ArchContext<'_>) -> Result<Vec<ExtraTensor>, ConvertError> {
        Ok(llama3_rope_factors(cx)?.into_iter().collect())
    }

    fn map_tensor(&self, hf: &str, _shape: &[u64], cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        if always_skipped(hf) {
            return Ok(Mapped::Skip);
        }
        if let Some((bid, xid, w)) = expert_part(hf, "model.layers.", "block_sparse_moe.experts.", cx.block_count) {
            let out = match w {
                "w1.weight" => "ffn_gate_exps",
                "w2.weight" => "ffn_down_exps",
                "w3.weight" => "ffn_up_exps",
                _ => return Ok(Mapped::Unknown),
            };
            let n = cx.config.need_u32(&["num_local_experts"])?;
            return Ok(Mapped::expert(format!("blk.{bid}.{out}.weight"), xid, n.into()));
        }
        if let Some(name) = MIXTRAL_MAP.get(hf, cx.block_count) {
            return Ok(Mapped::plain(name));
        }
        map_permuted(hf, cx)
    }

    fn source_name(&self, gguf: &str) -> Option<String> {
        LLAMA_MAP.source_name(gguf).or_else(|| MIXTRAL_MAP.source_name(gguf))
    }

    fn required_tensors(&self, cx: &ArchContext<'_>) -> Vec<String> {
        let moe = cx.config.get("num_local_experts").is_some_and(|v| !v.is_null());
        standard_required(cx.block_count, if moe { MIXTRAL_BLOCK } else { LLAMA_BLOCK })
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        llama_parameters("llama", cx, file_type, kv)
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        crate::convert::vocab_hook::llama(cx, kv)
    }
}
