//! Qwen 3: the reference's `Qwen3Model` (`conversion/qwen.py`, a `Qwen2Model`), for
//! `Qwen3ForCausalLM`.
//!
//! - Names: the Llama map plus the per-head norms `self_attn.q_norm` → `blk.N.attn_q_norm`,
//!   `self_attn.k_norm` → `blk.N.attn_k_norm` (`[head_dim]`, F32). No permutation.
//! - Keys: [`text_model_parameters`] (with `attention.key_length`/`value_length` from
//!   `head_dim`). The reference's reranker variant (a README or name saying
//!   `qwen3-reranker`, a `*SequenceClassification` class) is refused.

use super::llama::{LLAMA_BLOCK, LLAMA_MAP};
use super::{always_skipped, text_model_parameters, ArchContext, Architecture, BlockMap, Mapped};
use crate::convert::{ConvertError, Kvs};

/// The Qwen 3 architecture (`general.architecture = "qwen3"`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Qwen3;

const NORMS: BlockMap<'static> = BlockMap {
    top: &[],
    block_prefix: "model.layers.",
    block: &[("self_attn.q_norm", "attn_q_norm"), ("self_attn.k_norm", "attn_k_norm")],
};

impl Architecture for Qwen3 {
    fn name(&self) -> &'static str {
        "qwen3"
    }

    fn check(&self, cx: &ArchContext<'_>) -> Result<(), ConvertError> {
        super::qwen2::check_qwen(cx)?;
        let readme = std::fs::read_to_string(cx.dir.join("README.md")).unwrap_or_default().to_lowercase();
        let dir = cx.dir.file_name().and_then(|n| n.to_str()).unwrap_or("").to_lowercase();
        let hint = cx.config.get("_name_or_path").and_then(|v| v.as_str()).unwrap_or("").to_lowercase();
        if readme.contains("# qwen3-reranker") || dir.contains("qwen3-reranker") || hint.contains("qwen3-reranker") {
            return Err(ConvertError::Config(
                "a Qwen3 reranker (the reference writes a classifier head) is not converted here".into(),
            ));
        }
        Ok(())
    }

    fn map_tensor(&self, hf: &str, _shape: &[u64], cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        if always_skipped(hf) {
            return Ok(Mapped::Skip);
        }
        let name = LLAMA_MAP.get(hf, cx.block_count).or_else(|| NORMS.get(hf, cx.block_count));
        Ok(name.map_or(Mapped::Unknown, Mapped::plain))
    }

    fn source_name(&self, gguf: &str) -> Option<String> {
        LLAMA_MAP.source_name(gguf).or_else(|| NORMS.source_name(gguf))
    }

    fn required_tensors(&self, cx: &ArchContext<'_>) -> Vec<String> {
        let mut names = LLAMA_BLOCK.to_vec();
        names.extend(["attn_q_norm", "attn_k_norm"]);
        super::standard_required(cx.block_count, &names)
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        text_model_parameters("qwen3", cx, file_type, kv)
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        crate::convert::vocab_hook::qwen(cx, kv)
    }
}
