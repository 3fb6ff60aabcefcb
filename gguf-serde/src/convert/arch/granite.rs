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

use super::llama::{check_llama, llama3_rope_factors, llama_parameters, map_permuted, LLAMA_BLOCK, LLAMA_MAP};
use super::{key, ArchContext, Architecture, ExtraTensor, Mapped};
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

/// `GraniteModel.set_gguf_parameters` for the architecture `arch` (`granite`, or a family built
/// on it, as the reference's `GraniteMoeModel` writes `granitemoe`): [`llama_parameters`] with
/// `head_dim` dropped from the configuration (the reference pops it), then the multipliers
/// `embedding_scale`, `residual_scale`, `attention.scale` and `logit_scale` (f32), each when
/// present and not zero.
///
/// # Errors
/// [`ConvertError::Config`] for a missing or mistyped value.
pub fn granite_parameters(arch: &str, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
    let mut config = cx.config.clone();
    config.hparams.remove("head_dim");
    let without_head_dim = ArchContext { config: &config, ..*cx };
    llama_parameters(arch, &without_head_dim, file_type, kv)?;
    for (field, suffix) in SCALES {
        if let Some(v) = cx.config.find_f64(&[field])?.filter(|&v| v != 0.0) {
            kv.set(key(arch, suffix), Value::F32(v as f32));
        }
    }
    Ok(())
}

impl Architecture for Granite {
    fn name(&self) -> &'static str {
        "granite"
    }

    fn check(&self, cx: &ArchContext<'_>) -> Result<(), ConvertError> {
        check_llama(cx)?;
        for (field, _) in SCALES {
            cx.config.find_f64(&[field])?;
        }
        Ok(())
    }

    fn extra_tensors(&self, cx: &ArchContext<'_>) -> Result<Vec<ExtraTensor>, ConvertError> {
        Ok(llama3_rope_factors(cx)?.into_iter().collect())
    }

    fn map_tensor(&self, hf: &str, _shape: &[u64], cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        map_permuted(hf, cx)
    }

    fn source_name(&self, gguf: &str) -> Option<String> {
        LLAMA_MAP.source_name(gguf)
    }

    fn required_tensors(&self, cx: &ArchContext<'_>) -> Vec<String> {
        super::standard_required(cx.block_count, LLAMA_BLOCK)
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        granite_parameters("granite", cx, file_type, kv)
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        crate::convert::vocab_hook::llama(cx, kv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::arch::testing::{config, keys, mapped, owned};
    use crate::convert::arch::Transform;

    /// A transformers 5.24 `GraniteConfig` as `save_pretrained` writes it (2 layers, 64 wide).
    const CONFIG: &str = r#"{"architectures": ["GraniteForCausalLM"], "attention_multiplier": 0.015625,
        "embedding_multiplier": 12.0, "hidden_size": 64, "intermediate_size": 176, "logits_scaling": 8.0,
        "max_position_embeddings": 2048, "mlp_bias": false, "model_type": "granite", "num_attention_heads": 4,
        "num_hidden_layers": 2, "num_key_value_heads": 2, "residual_multiplier": 0.22, "rms_norm_eps": 1e-06,
        "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}, "tie_word_embeddings": true,
        "vocab_size": 49216}"#;

    #[test]
    fn keys_as_the_reference_writes_them() {
        // Read off convert_hf_to_gguf.py's output for this configuration (--outtype bf16).
        let want = owned(vec![
            ("granite.block_count", Value::U32(2)),
            ("granite.context_length", Value::U32(2048)),
            ("granite.embedding_length", Value::U32(64)),
            ("granite.feed_forward_length", Value::U32(176)),
            ("granite.attention.head_count", Value::U32(4)),
            ("granite.attention.head_count_kv", Value::U32(2)),
            ("granite.rope.freq_base", Value::F32(10000.0)),
            ("granite.attention.layer_norm_rms_epsilon", Value::F32(1e-6)),
            ("general.file_type", Value::U32(32)),
            ("granite.vocab_size", Value::U32(49216)),
            ("granite.rope.dimension_count", Value::U32(16)),
            ("granite.attention.scale", Value::F32(0.015625)),
            ("granite.embedding_scale", Value::F32(12.0)),
            ("granite.residual_scale", Value::F32(0.22)),
            ("granite.logit_scale", Value::F32(8.0)),
        ]);
        assert_eq!(keys(&Granite, &config(CONFIG), 32), want);
        // GraniteModel pops head_dim before LlamaModel's keys: a head_dim changes nothing.
        let c = config(&CONFIG.replace("\"hidden_size\": 64", "\"head_dim\": 32, \"hidden_size\": 64"));
        assert_eq!(keys(&Granite, &c, 32), want);
        // A zero multiplier is not written (the reference's truth test).
        let c = config(&CONFIG.replace("\"logits_scaling\": 8.0", "\"logits_scaling\": 0"));
        assert!(keys(&Granite, &c, 32).iter().all(|(k, _)| k != "granite.logit_scale"));
    }

    #[test]
    fn q_and_k_are_permuted() {
        let c = config(CONFIG);
        let m = mapped(&Granite, &c, "model.layers.1.self_attn.k_proj.weight");
        assert_eq!(
            m,
            Mapped::To { name: "blk.1.attn_k.weight".into(), transforms: vec![Transform::Permute { heads: 2 }] }
        );
        assert_eq!(mapped(&Granite, &c, "lm_head.weight"), Mapped::plain("output.weight"));
    }
}
