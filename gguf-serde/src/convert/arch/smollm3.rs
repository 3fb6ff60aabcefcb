//! SmolLM3: the reference's `SmolLM3Model` (`conversion/llama.py`), a `LlamaModel` with its own
//! GGUF architecture, for `SmolLM3ForCausalLM`.
//!
//! - Names: the Llama map ([`LLAMA_MAP`]; `tensor_mapping.py` for `MODEL_ARCH.SMOLLM3` gives the
//!   same names). Q and K are permuted as Llama's ([`map_permuted`]): the class keeps
//!   `LlamaModel.undo_permute`.
//! - Keys: [`llama_parameters`] with the architecture `smollm3`. The reference writes no key for
//!   `no_rope_layers` (nor `no_rope_layer_interval`): llama.cpp's `smollm3` graph takes every
//!   fourth layer as a no-RoPE layer by itself. transformers' `SmolLM3Config` does not fill in
//!   `head_dim`, so `attention.key_length`/`value_length` are written only when `config.json`
//!   has it.
//! - The `llama3` RoPE type writes `rope_freqs.weight` ([`llama3_rope_factors`]), as for Llama.
//! - Tokenizer: `LlamaModel.set_vocab` ([`crate::convert::vocab_hook::llama`]; SmolLM3 ships a
//!   GPT-2 BPE `tokenizer.json`).

use super::llama::{check_llama, llama3_rope_factors, llama_parameters, map_permuted, LLAMA_BLOCK, LLAMA_MAP};
use super::{ArchContext, Architecture, ExtraTensor, Mapped};
use crate::convert::{ConvertError, Kvs};

/// The SmolLM3 architecture (`general.architecture = "smollm3"`).
#[derive(Clone, Copy, Debug, Default)]
pub struct SmolLm3;

impl Architecture for SmolLm3 {
    fn name(&self) -> &'static str {
        "smollm3"
    }

    fn check(&self, cx: &ArchContext<'_>) -> Result<(), ConvertError> {
        check_llama(cx)
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
        llama_parameters("smollm3", cx, file_type, kv)
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
    use crate::Value;

    /// A transformers 5.24 `SmolLM3Config` as `save_pretrained` writes it (4 layers, 64 wide).
    const CONFIG: &str = r#"{"architectures": ["SmolLM3ForCausalLM"], "hidden_size": 64,
        "intermediate_size": 176, "layer_types": ["full_attention", "full_attention", "full_attention",
        "full_attention"], "max_position_embeddings": 32768, "mlp_bias": false, "model_type": "smollm3",
        "no_rope_layer_interval": 4, "no_rope_layers": [1, 1, 1, 0], "num_attention_heads": 4,
        "num_hidden_layers": 4, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
        "rope_parameters": {"rope_theta": 2000000.0, "rope_type": "default"}, "sliding_window": null,
        "tie_word_embeddings": true, "use_sliding_window": false, "vocab_size": 128256}"#;

    #[test]
    fn keys_as_the_reference_writes_them() {
        // Read off convert_hf_to_gguf.py's output for this configuration (--outtype q8_0): no key
        // for no_rope_layers, no head_dim filled in.
        let want = owned(vec![
            ("smollm3.block_count", Value::U32(4)),
            ("smollm3.context_length", Value::U32(32768)),
            ("smollm3.embedding_length", Value::U32(64)),
            ("smollm3.feed_forward_length", Value::U32(176)),
            ("smollm3.attention.head_count", Value::U32(4)),
            ("smollm3.attention.head_count_kv", Value::U32(2)),
            ("smollm3.rope.freq_base", Value::F32(2_000_000.0)),
            ("smollm3.attention.layer_norm_rms_epsilon", Value::F32(1e-6)),
            ("general.file_type", Value::U32(7)),
            ("smollm3.vocab_size", Value::U32(128256)),
            ("smollm3.rope.dimension_count", Value::U32(16)),
        ]);
        assert_eq!(keys(&SmolLm3, &config(CONFIG), 7), want);
    }

    #[test]
    fn q_and_k_are_permuted() {
        let c = config(CONFIG);
        let m = mapped(&SmolLm3, &c, "model.layers.3.self_attn.q_proj.weight");
        assert_eq!(
            m,
            Mapped::To { name: "blk.3.attn_q.weight".into(), transforms: vec![Transform::Permute { heads: 4 }] }
        );
        let m = mapped(&SmolLm3, &c, "model.layers.3.self_attn.k_proj.weight");
        assert_eq!(
            m,
            Mapped::To { name: "blk.3.attn_k.weight".into(), transforms: vec![Transform::Permute { heads: 2 }] }
        );
        assert_eq!(
            mapped(&SmolLm3, &c, "model.layers.0.post_attention_layernorm.weight"),
            Mapped::plain("blk.0.ffn_norm.weight")
        );
        assert_eq!(mapped(&SmolLm3, &c, "model.layers.4.mlp.up_proj.weight"), Mapped::Unknown);
    }
}
