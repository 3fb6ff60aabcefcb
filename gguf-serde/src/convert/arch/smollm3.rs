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

use super::llama::{heads, llama3_rope_factors, llama_parameters, map_permuted, LLAMA_BLOCK, LLAMA_MAP};
use super::{always_skipped, ArchContext, Architecture, ExtraTensor, Mapped};
use crate::convert::{ConvertError, Kvs};

/// The SmolLM3 architecture (`general.architecture = "smollm3"`).
#[derive(Clone, Copy, Debug, Default)]
pub struct SmolLm3;

impl Architecture for SmolLm3 {
    fn name(&self) -> &'static str {
        "smollm3"
    }

    fn check(&self, cx: &ArchContext<'_>) -> Result<(), ConvertError> {
        heads(cx)?;
        cx.config.need_u32(&["vocab_size"])?;
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
        llama_parameters("smollm3", cx, file_type, kv, false)
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        crate::convert::vocab_hook::llama(cx, kv)
    }
}
