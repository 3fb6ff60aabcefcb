//! A mixture-of-experts architecture written only with the public API: OLMoE
//! (`OlmoeForCausalLM`, `allenai/OLMoE-1B-7B-0924`), which `gguf convert` does not know, as
//! `convert_hf_to_gguf.py`'s `OlmoeModel` converts it.
//!
//! From a one-to-one family (`crate::convert::MyLlama`: one Hugging Face tensor, one GGUF
//! tensor) to a mixture of experts there is one step: each expert's projection is a *part* of a
//! stacked tensor ([`Mapped::expert`]). The library gathers the parts, plans the stacked tensor
//! `blk.N.ffn_{gate,up,down}_exps.weight` of canonical shape `[n_expert, n_ff_exp, n_embd]`
//! (`[n_expert, n_embd, n_ff_exp]` for down; stored `ne` reversed) where the reference yields it
//! (after the layer's last expert tensor), checks that no expert is missing or given twice, and
//! writes it expert by expert into its place: memory stays a chunk of rows, however many experts.
//! The router `blk.N.ffn_gate_inp.weight` stays F32 by the reference's type rules, and the size
//! label comes out as the reference's `{n_expert}x{size}`.
//!
//! The facts of `OlmoeModel` (the vendored `conversion/olmo.py`, gguf-py's `tensor_mapping.py`):
//! the Llama names plus full-width Q/K norms `self_attn.{q,k}_norm` → `attn_{q,k}_norm`, the router
//! `mlp.gate` → `ffn_gate_inp`, experts `mlp.experts.X.{gate,up,down}_proj.weight`; no Q/K
//! permutation (NEOX RoPE); keys: `TextModel`'s, then `olmoe.attention.layer_norm_rms_epsilon`
//! written again as 1e-5 (it keeps its place); tokenizer: GPT-2 BPE (`TextModel.set_vocab`).

use gguf_serde::convert::arch::{expert_part, standard_required, text_model_parameters, ArchContext, BlockMap};
use gguf_serde::convert::{vocab_hook, Architecture, ConvertError, Kvs, Mapped};
use gguf_serde::Value;

/// Hugging Face name (without `.weight`/`.bias`) → GGUF name, for `MODEL_ARCH.OLMOE`.
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
        ("input_layernorm", "attn_norm"),
        ("post_attention_layernorm", "ffn_norm"),
        ("mlp.gate", "ffn_gate_inp"),
    ],
};

/// OLMoE (`general.architecture = "olmoe"`), an architecture of the user's own.
#[derive(Clone, Copy, Debug, Default)]
pub struct Olmoe;

impl Architecture for Olmoe {
    fn name(&self) -> &'static str {
        "olmoe"
    }

    fn map_tensor(&self, hf: &str, _shape: &[u64], cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        if hf.ends_with(".rotary_emb.inv_freq") {
            return Ok(Mapped::Skip);
        }
        // model.layers.N.mlp.experts.X.gate_proj.weight → part X of blk.N.ffn_gate_exps.weight
        if let Some((bid, xid, proj)) = expert_part(hf, "model.layers.", "mlp.experts.", cx.block_count) {
            let stack = match proj {
                "gate_proj.weight" => "ffn_gate_exps",
                "up_proj.weight" => "ffn_up_exps",
                "down_proj.weight" => "ffn_down_exps",
                _ => return Ok(Mapped::Unknown),
            };
            let n_expert = cx.config.need_u32(&["num_local_experts", "num_experts"])?;
            return Ok(Mapped::expert(format!("blk.{bid}.{stack}.weight"), xid, n_expert.into()));
        }
        Ok(MAP.get(hf, cx.block_count).map_or(Mapped::Unknown, Mapped::plain))
    }

    fn source_name(&self, gguf: &str) -> Option<String> {
        MAP.source_name(gguf)
    }

    fn required_tensors(&self, cx: &ArchContext<'_>) -> Vec<String> {
        let block = [
            "attn_norm",
            "attn_q",
            "attn_k",
            "attn_v",
            "attn_output",
            "attn_q_norm",
            "attn_k_norm",
            "ffn_norm",
            "ffn_gate_inp",
            "ffn_gate_exps",
            "ffn_up_exps",
            "ffn_down_exps",
        ];
        standard_required(cx.block_count, &block)
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        // block_count … expert_count, expert_used_count … general.file_type
        text_model_parameters("olmoe", cx, file_type, kv)?;
        kv.set("olmoe.attention.layer_norm_rms_epsilon", Value::F32(1e-5));
        Ok(())
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        vocab_hook::gpt2(cx, kv) // tokenizer.json: GPT-2 BPE, the pre-tokenizer named by hash
    }
}
