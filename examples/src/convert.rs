//! A custom converter: how a user adds an architecture of their own to
//! `gguf_serde::convert`, in one file.
//!
//! The library does the reading (memory-mapped safetensors, the index), the output types
//! (F32 for vectors and norms, Q8_0 falling back to F16), the streaming (one chunk of rows in
//! memory), the key order and the atomic output. An architecture says what is particular to its
//! model family: names, transforms, required tensors and hyper-parameter keys. [`MyLlama`] is a
//! Llama written that way from the library's parts — the same facts as `convert_hf_to_gguf.py`'s
//! `LlamaModel`: the Llama name map, Q and K rows permuted by the query and the key/value heads,
//! `TextModel`'s keys plus `vocab_size` and `rope.dimension_count`. A family of your own changes
//! the map, the transforms or the keys; the `convert_safetensors` binary runs it. A
//! mixture of experts is one step further: `crate::olmoe`.
//!
//! Shapes: a Hugging Face `[out, in]` weight is the canonical GGUF shape `[out, in]`, stored
//! `ne = [in, out]`.

use gguf_serde::convert::arch::{key, standard_required, text_model_parameters, ArchContext, BlockMap};
use gguf_serde::convert::{vocab_hook, Architecture, ConvertError, Kvs, Mapped, Transform};
use gguf_serde::Value;

/// Hugging Face name (without `.weight`/`.bias`) → GGUF name, as gguf-py's `tensor_mapping.py`
/// gives them for `MODEL_ARCH.LLAMA`.
const MAP: BlockMap<'static> = BlockMap {
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

/// A Llama, as a user would write it against the library's [`Architecture`] trait.
#[derive(Clone, Copy, Debug, Default)]
pub struct MyLlama;

impl Architecture for MyLlama {
    fn name(&self) -> &'static str {
        "llama"
    }

    fn map_tensor(&self, hf: &str, _shape: &[u64], cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        if hf.ends_with(".rotary_emb.inv_freq") {
            return Ok(Mapped::Skip); // precomputed, llama.cpp makes its own
        }
        let Some(name) = MAP.get(hf, cx.block_count) else { return Ok(Mapped::Unknown) };
        let heads = cx.config.need_u32(&["num_attention_heads"])?;
        let kv_heads = cx.config.find_u32(&["num_key_value_heads"])?.unwrap_or(heads);
        // llama.cpp's rotary pairs the halves of each head differently from Hugging Face.
        let transforms = if hf.contains("q_proj.") {
            vec![Transform::Permute { heads: heads.into() }]
        } else if hf.contains("k_proj.") {
            vec![Transform::Permute { heads: kv_heads.into() }]
        } else {
            vec![]
        };
        Ok(Mapped::To { name, transforms })
    }

    fn required_tensors(&self, cx: &ArchContext<'_>) -> Vec<String> {
        let block =
            ["attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"];
        standard_required(cx.block_count, &block)
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        text_model_parameters("llama", cx, file_type, kv)?; // block_count … general.file_type
        let c = cx.config;
        kv.set(key("llama", "vocab_size"), Value::U32(c.need_u32(&["vocab_size"])?));
        let rope_dim = match c.find_u32(&["head_dim"])? {
            Some(d) => d,
            None => c.need_u32(&["hidden_size"])? / c.need_u32(&["num_attention_heads"])?.max(1),
        };
        kv.set(key("llama", "rope.dimension_count"), Value::U32(rope_dim));
        Ok(())
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        // `LlamaModel.set_vocab`: SentencePiece (tokenizer.model), else BPE (tokenizer.json);
        // llama.cpp loads no model without `tokenizer.ggml.*`
        vocab_hook::llama(cx, kv)
    }
}
