//! Qwen 2: the reference's `Qwen2Model` (`conversion/qwen.py`), for `Qwen2ForCausalLM`.
//!
//! - Names: the Llama map ([`super::llama::LLAMA_MAP`]); Q, K and V have biases
//!   (`blk.N.attn_{q,k,v}.bias`, 1-D, so F32). No permutation (Qwen 2 uses llama.cpp's NEOX
//!   RoPE, which reads the halves as Hugging Face stores them).
//! - Keys: [`text_model_parameters`] only (no `vocab_size`, no `rope.dimension_count`). The
//!   reference's pooling type from a sentence-transformers `modules.json` is refused (an
//!   embedding model, not a causal LM).

use super::llama::{LLAMA_BLOCK, LLAMA_MAP};
use super::{always_skipped, standard_required, text_model_parameters, ArchContext, Architecture, Mapped};
use crate::convert::{ConvertError, Kvs};

/// The Qwen 2 architecture (`general.architecture = "qwen2"`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Qwen2;

/// Refuses what the Qwen models convert differently when present (`modules.json`).
pub(super) fn check_qwen(cx: &ArchContext<'_>) -> Result<(), ConvertError> {
    if cx.dir.join("modules.json").is_file() {
        return Err(ConvertError::Config(
            "modules.json (a sentence-transformers model: the reference writes a pooling type) is not converted here"
                .into(),
        ));
    }
    Ok(())
}

impl Architecture for Qwen2 {
    fn name(&self) -> &'static str {
        "qwen2"
    }

    fn check(&self, cx: &ArchContext<'_>) -> Result<(), ConvertError> {
        check_qwen(cx)
    }

    fn map_tensor(&self, hf: &str, _shape: &[u64], cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        if always_skipped(hf) {
            return Ok(Mapped::Skip);
        }
        Ok(LLAMA_MAP.get(hf, cx.block_count).map_or(Mapped::Unknown, Mapped::plain))
    }

    fn source_name(&self, gguf: &str) -> Option<String> {
        LLAMA_MAP.source_name(gguf)
    }

    fn required_tensors(&self, cx: &ArchContext<'_>) -> Vec<String> {
        standard_required(cx.block_count, LLAMA_BLOCK)
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        text_model_parameters("qwen2", cx, file_type, kv)
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        crate::convert::vocab_hook::qwen(cx, kv)
    }
}
