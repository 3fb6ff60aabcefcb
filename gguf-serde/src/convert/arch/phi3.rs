//! Phi-3: the reference's `Phi3MiniModel` (`conversion/phi.py`), for `Phi3ForCausalLM`.
//!
//! - Names (`tensor_mapping.py` for `MODEL_ARCH.PHI3`): `self_attn.qkv_proj` →
//!   `blk.N.attn_qkv` and `mlp.gate_up_proj` → `blk.N.ffn_up`, both kept fused as llama.cpp's
//!   `phi3` graph reads them (`[q + k + v rows, hidden]`, `[2 * ff, hidden]`); `o_proj` →
//!   `attn_output`, `down_proj` → `ffn_down`, `input_layernorm` → `attn_norm`,
//!   `post_attention_layernorm` → `ffn_norm`. No permutation.
//! - Long-context checkpoints (`rope_scaling.long_factor`): `rope_factors_long.weight` and
//!   `rope_factors_short.weight` (`[rope_dims / 2]`, F32) are written before the checkpoint's
//!   tensors, and `phi3.rope.scaling.attn_factor` (f32) before `general.type`, as the reference
//!   writes it while it prepares the tensors: `sqrt(1 + ln(s) / ln(orig))` for `longrope`/`su`,
//!   `0.1 ln(s) + 1` for `yarn` (`s = max_position_embeddings / original_max_position_embeddings`,
//!   1 when `s <= 1`).
//! - Keys, in the reference's own order (it does not call `TextModel`'s):
//!   `context_length`, `rope.scaling.original_context_length`, `embedding_length`,
//!   `feed_forward_length`, `block_count`, `attention.head_count`, `attention.head_count_kv`
//!   (u32), `attention.layer_norm_rms_epsilon` (f32), `rope.dimension_count`
//!   (`int(partial_rotary_factor * hidden) / heads`, u32), `rope.freq_base` (f32),
//!   `general.file_type`, `attention.sliding_window` (u32, 0 when absent).

use super::{always_skipped, key, ArchContext, Architecture, BlockMap, ExtraTensor, Mapped};
use crate::convert::{ConvertError, Kvs};
use crate::Value;

/// The Phi-3 architecture (`general.architecture = "phi3"`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Phi3;

const MAP: BlockMap<'static> = BlockMap {
    top: &[("model.embed_tokens", "token_embd"), ("model.norm", "output_norm"), ("lm_head", "output")],
    block_prefix: "model.layers.",
    block: &[
        ("self_attn.qkv_proj", "attn_qkv"),
        ("self_attn.o_proj", "attn_output"),
        ("mlp.gate_up_proj", "ffn_up"),
        ("mlp.down_proj", "ffn_down"),
        ("input_layernorm", "attn_norm"),
        ("post_attention_layernorm", "ffn_norm"),
    ],
};

struct Rope {
    max_pos: u32,
    orig: u32,
    dims: u32,
    theta: f64,
    params: serde_json::Map<String, serde_json::Value>,
}

fn rope(cx: &ArchContext<'_>) -> Result<Rope, ConvertError> {
    let c = cx.config;
    let n_embd = c.need_u32(&["hidden_size", "n_embd"])?;
    let n_head = c.need_u32(&["num_attention_heads", "n_head"])?.max(1);
    let max_pos = c.need_u32(&["n_positions", "max_position_embeddings"])?;
    let params = c.rope_parameters();
    let orig = params
        .get("original_max_position_embeddings")
        .and_then(|v| v.as_u64())
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| ConvertError::Config("original_max_position_embeddings is missing".into()))?;
    let pct = params.get("partial_rotary_factor").and_then(|v| v.as_f64()).unwrap_or(1.0);
    let dims = ((pct * f64::from(n_embd)).trunc() as u32) / n_head;
    let full = match params.get("full_attention") {
        Some(serde_json::Value::Object(m)) => m.clone(),
        _ => params.clone(),
    };
    let theta = full
        .get("rope_theta")
        .and_then(|v| v.as_f64())
        .ok_or_else(|| ConvertError::Config("rope_theta is missing".into()))?;
    Ok(Rope { max_pos, orig, dims, theta, params })
}

fn factors(p: &serde_json::Map<String, serde_json::Value>, name: &str) -> Result<Option<Vec<f32>>, ConvertError> {
    match p.get(name) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Array(a)) if a.is_empty() => Ok(None),
        Some(serde_json::Value::Array(a)) => a
            .iter()
            .map(|v| v.as_f64().map(|x| x as f32))
            .collect::<Option<Vec<_>>>()
            .map(Some)
            .ok_or_else(|| ConvertError::Config(format!("rope_scaling.{name} is not a list of numbers"))),
        Some(v) => Err(ConvertError::Config(format!("rope_scaling.{name}: {v} is not a list"))),
    }
}

impl Architecture for Phi3 {
    fn name(&self) -> &'static str {
        "phi3"
    }

    fn check(&self, cx: &ArchContext<'_>) -> Result<(), ConvertError> {
        rope(cx)?;
        self.extra_tensors(cx)?;
        cx.config.need_u32(&["intermediate_size"])?;
        cx.config.need_u32(&["num_key_value_heads", "n_head_kv"])?;
        cx.config.find_f64(&["rms_norm_eps"])?.ok_or_else(|| ConvertError::Config("rms_norm_eps is missing".into()))?;
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
            &["attn_norm", "attn_qkv", "attn_output", "ffn_norm", "ffn_up", "ffn_down"],
        )
    }

    fn early_keys(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        let r = rope(cx)?;
        if factors(&r.params, "long_factor")?.is_none() {
            return Ok(());
        }
        let scale = f64::from(r.max_pos) / f64::from(r.orig);
        let t = r.params.get("rope_type").and_then(|v| v.as_str()).unwrap_or("").to_lowercase();
        let attn = match t.as_str() {
            "su" | "longrope" if scale > 1.0 => (1.0 + scale.ln() / f64::from(r.orig).ln()).sqrt(),
            "yarn" if scale > 1.0 => 0.1 * scale.ln() + 1.0,
            "su" | "longrope" | "yarn" => 1.0,
            "" => return Err(ConvertError::Config("rope_scaling has long_factor but no type".into())),
            other => {
                return Err(ConvertError::Config(format!("rope_scaling type {other:?} is not supported for Phi-3")))
            }
        };
        kv.set(key("phi3", "rope.scaling.attn_factor"), Value::F32(attn as f32));
        Ok(())
    }

    fn extra_tensors(&self, cx: &ArchContext<'_>) -> Result<Vec<ExtraTensor>, ConvertError> {
        let r = rope(cx)?;
        let Some(long) = factors(&r.params, "long_factor")? else { return Ok(Vec::new()) };
        let short = factors(&r.params, "short_factor")?
            .ok_or_else(|| ConvertError::Config("rope_scaling has long_factor but no short_factor".into()))?;
        let want = u64::from(r.dims) / 2;
        if long.len() != short.len() || long.len() as u64 * 2 != u64::from(r.dims) {
            return Err(ConvertError::Config(format!(
                "rope_scaling: long_factor ({}) and short_factor ({}) must have rope_dims / 2 = {want} entries",
                long.len(),
                short.len()
            )));
        }
        Ok(vec![
            ExtraTensor { name: "rope_factors_long.weight".into(), shape: vec![want], values: long },
            ExtraTensor { name: "rope_factors_short.weight".into(), shape: vec![want], values: short },
        ])
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        let c = cx.config;
        let r = rope(cx)?;
        let k = |s: &str| key("phi3", s);
        kv.set(k("context_length"), Value::U32(r.max_pos));
        kv.set(k("rope.scaling.original_context_length"), Value::U32(r.orig));
        kv.set(k("embedding_length"), Value::U32(c.need_u32(&["hidden_size", "n_embd"])?));
        kv.set(k("feed_forward_length"), Value::U32(c.need_u32(&["intermediate_size"])?));
        kv.set(k("block_count"), Value::U32(cx.block_count));
        kv.set(k("attention.head_count"), Value::U32(c.need_u32(&["num_attention_heads", "n_head"])?));
        kv.set(k("attention.head_count_kv"), Value::U32(c.need_u32(&["num_key_value_heads", "n_head_kv"])?));
        let eps =
            c.find_f64(&["rms_norm_eps"])?.ok_or_else(|| ConvertError::Config("rms_norm_eps is missing".into()))?;
        kv.set(k("attention.layer_norm_rms_epsilon"), Value::F32(eps as f32));
        kv.set(k("rope.dimension_count"), Value::U32(r.dims));
        kv.set(k("rope.freq_base"), Value::F32(r.theta as f32));
        kv.set("general.file_type", Value::U32(file_type));
        kv.set(k("attention.sliding_window"), Value::U32(c.find_u32(&["sliding_window"])?.unwrap_or(0)));
        Ok(())
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        crate::convert::vocab_hook::phi3(cx, kv)
    }
}
