//! Granite (3.x dense): the reference's `GraniteModel` (`conversion/granite.py`), a
//! `LlamaModel`, for `GraniteForCausalLM`.
//!
//! - Names: the Llama map ([`LLAMA_MAP`], as `tensor_mapping.py` gives it for
//!   `MODEL_ARCH.GRANITE`), Q and K permuted as Llama's ([`map_permuted`]).
//! - Keys: the reference first drops `head_dim` from the configuration, then writes
//!   [`llama_parameters`] for `granite` (so no `attention.key_length`/`value_length`, and
//!   `rope.dimension_count` is `hidden_size / num_attention_heads`), then, each when present
//!   and not zero (the reference's truth test), f32: `attention.scale`
//!   (`attention_multiplier`), `embedding_scale` (`embedding_multiplier`), `residual_scale`
//!   (`residual_multiplier`), `logit_scale` (`logits_scaling`).
//! - The `llama3` RoPE type writes `rope_freqs.weight` ([`llama3_rope_factors`]), as for Llama.
//! - Tokenizer: `LlamaModel.set_vocab` ([`crate::convert::vocab_hook::llama`]; with
//!   `vocab_size` 49152, Granite's small models, `tokenizer.ggml.add_bos_token` = false).

use super::llama::{heads, llama3_rope_factors, llama_parameters, map_permuted, LLAMA_BLOCK, LLAMA_MAP};
use super::{always_skipped, key, ArchContext, Architecture, ExtraTensor, Mapped};
use crate::convert::{ConvertError, Kvs};
use crate::Value;

/// The Granite architecture (`general.architecture = "granite"`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Granite;

/// The multipliers, in the reference's order: configuration field → key suffix.
const SCALES: [(&str, &str); 4] = [
    ("attention_multiplier", "attention.scale"),
    ("embedding_multiplier", "embedding_scale"),
    ("residual_multiplier", "residual_scale"),
    ("logits_scaling", "logit_scale"),
];

impl Architecture for Granite {
    fn name(&self) -> &'static str {
        "granite"
    }

    fn check(&self, cx: &ArchContext<'_>) -> Result<(), ConvertError> {
        heads(cx)?;
        cx.config.need_u32(&["vocab_size"])?;
        for (field, _) in SCALES {
            cx.config.find_f64(&[field])?;
        }
        Ok(())
    }

    fn extra_tensors(&self, cx: &ArchContext<'_>) -> Result<Vec<ExtraTensor>, ConvertError> {
        Ok(llama3_rope_factors(cx)?.into_iter().collect())
    }

    fn map_tensor(&self, hf: &str, _shape: &[u64], cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        if always_skipped(hf) {
            return Ok(Mapped::Skip);
        }
        map_permuted(hf, cx)
    }

    fn source_name(&self, gguf: &str) -> Option<String> {
        LLAMA_MAP.source_name(gguf)
    }

    fn required_tensors(&self, cx: &ArchContext<'_>) -> Vec<String> {
        super::standard_required(cx.block_count, LLAMA_BLOCK)
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        let mut config = cx.config.clone();
        config.raw.remove("head_dim");
        let without_head_dim = ArchContext { config: &config, ..*cx };
        llama_parameters("granite", &without_head_dim, file_type, kv, false)?;
        for (field, suffix) in SCALES {
            if let Some(v) = cx.config.find_f64(&[field])?.filter(|&v| v != 0.0) {
                kv.set(key("granite", suffix), Value::F32(v as f32));
            }
        }
        Ok(())
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        crate::convert::vocab_hook::llama(cx, kv)
    }
}
