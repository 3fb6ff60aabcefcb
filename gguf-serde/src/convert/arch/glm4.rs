//! GLM-4 (the 0414 models): the reference's `Glm4Model` (`conversion/glm.py`, a `TextModel`),
//! for `Glm4ForCausalLM`.
//!
//! - Names (`tensor_mapping.py` for `MODEL_ARCH.GLM4`): the Llama attention names (Q/K/V with
//!   biases), `mlp.gate_up_proj` → `blk.N.ffn_up`, kept fused (`[2 * n_ff, n_embd]`, gate
//!   rows first: `MODEL_ARCH.GLM4` has no `ffn_gate`, and llama.cpp's `glm4` graph splits the
//!   fused tensor itself), `mlp.down_proj` → `ffn_down`, `input_layernorm` → `attn_norm`,
//!   `post_attention_layernorm` → `ffn_norm`, `post_self_attn_layernorm` →
//!   `post_attention_norm`, `post_mlp_layernorm` → `post_ffw_norm`. No permutation (the
//!   reference permutes Q/K only for multi-section RoPE, GLM-4V, refused by
//!   [`text_model_parameters`]).
//! - Keys: [`text_model_parameters`], then `rope.dimension_count` (u32): `head_dim` (else
//!   `hidden_size / num_attention_heads`) times the RoPE parameters' `partial_rotary_factor`
//!   (0.5 when absent), truncated.
//! - Tokenizer: [`set_vocab_glm4`], GPT-2 BPE with GLM's special tokens.

use super::{always_skipped, key, text_model_parameters, ArchContext, Architecture, BlockMap, Mapped};
use crate::convert::checkpoint::read_json;
use crate::convert::vocab::{bpe, special_vocab};
use crate::convert::{ConvertError, Kvs};
use crate::{Array, Value};

/// The GLM-4 architecture (`general.architecture = "glm4"`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Glm4;

const MAP: BlockMap<'static> = BlockMap {
    top: &[("model.embed_tokens", "token_embd"), ("model.norm", "output_norm"), ("lm_head", "output")],
    block_prefix: "model.layers.",
    block: &[
        ("self_attn.q_proj", "attn_q"),
        ("self_attn.k_proj", "attn_k"),
        ("self_attn.v_proj", "attn_v"),
        ("self_attn.o_proj", "attn_output"),
        ("mlp.gate_up_proj", "ffn_up"),
        ("mlp.down_proj", "ffn_down"),
        ("input_layernorm", "attn_norm"),
        ("post_attention_layernorm", "ffn_norm"),
        ("post_self_attn_layernorm", "post_attention_norm"),
        ("post_mlp_layernorm", "post_ffw_norm"),
    ],
};

/// `rope.dimension_count` (see the [module docs](self)).
fn rope_dims(cx: &ArchContext<'_>) -> Result<u32, ConvertError> {
    let c = cx.config;
    let head_dim = match c.find_u32(&["head_dim"])? {
        Some(d) => d,
        None => c.need_u32(&["hidden_size"])? / c.need_u32(&["num_attention_heads"])?.max(1),
    };
    let factor = match c.rope_parameters().get("partial_rotary_factor") {
        None | Some(serde_json::Value::Null) => 0.5,
        Some(v) => {
            v.as_f64().ok_or_else(|| ConvertError::Config(format!("partial_rotary_factor: {v} is not a number")))?
        }
    };
    let dims = (f64::from(head_dim) * factor).trunc();
    if !(0.0..=f64::from(u32::MAX)).contains(&dims) {
        return Err(ConvertError::Config(format!("partial_rotary_factor {factor} gives {dims} rotary dimensions")));
    }
    Ok(dims as u32)
}

impl Architecture for Glm4 {
    fn name(&self) -> &'static str {
        "glm4"
    }

    fn check(&self, cx: &ArchContext<'_>) -> Result<(), ConvertError> {
        rope_dims(cx)?;
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
            &[
                "attn_norm",
                "attn_q",
                "attn_k",
                "attn_v",
                "attn_output",
                "post_attention_norm",
                "ffn_norm",
                "ffn_up",
                "ffn_down",
                "post_ffw_norm",
            ],
        )
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        text_model_parameters("glm4", cx, file_type, kv)?;
        kv.set(key("glm4", "rope.dimension_count"), Value::U32(rope_dims(cx)?));
        Ok(())
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        set_vocab_glm4(cx, kv)
    }
}

/// The id of the added token `content` (`tokenizer.get_added_vocab()[content]`): among
/// `tokenizer.json`'s `added_tokens`, the one of the highest id when a content is given twice.
fn added_token_id(added: &[serde_json::Value], content: &str) -> Option<u64> {
    added
        .iter()
        .filter(|t| t.get("content").and_then(|c| c.as_str()) == Some(content))
        .filter_map(|t| t.get("id").and_then(|i| i.as_u64()))
        .max()
}

/// `Glm4Model.set_vocab`: `tokenizer.ggml.model` = `gpt2`, the pre-tokenizer, tokens and token
/// types of `tokenizer.json` ([`bpe::get_vocab_base`], with `config.json`'s `vocab_size`), then
/// the special vocabulary with merges ([`special_vocab`]) where `eos`, `eot`, `unk` and `bos`
/// are set, unless the folder already sets them (the first id set for a type stays), to the
/// added tokens `<|endoftext|>`, `<|user|>`, `<|endoftext|>`, `<|endoftext|>`. A tokenizer
/// without those two added tokens is refused, as the reference fails on it.
fn set_vocab_glm4(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
    let n = cx.config.find_u32(&["vocab_size"])?.map(|n| n as usize);
    let base = bpe::get_vocab_base(cx.dir, n)?;
    let path = cx.dir.join("tokenizer.json");
    let json = read_json(&path)?;
    let added = json.get("added_tokens").and_then(|a| a.as_array()).map(Vec::as_slice).unwrap_or_default();
    let id = |content: &str| {
        added_token_id(added, content).ok_or_else(|| ConvertError::UnsupportedTokenizer {
            path: path.clone(),
            what: format!("no added token {content:?} (GLM-4's tokenizer has it)"),
        })
    };
    let (endoftext, user) = (id("<|endoftext|>")?, id("<|user|>")?);
    let mut sv = special_vocab(cx.dir, true, None)?;
    for (typ, id) in [("eos", endoftext), ("eot", user), ("unk", endoftext), ("bos", endoftext)] {
        let id =
            u32::try_from(id).map_err(|_| ConvertError::Config(format!("token id {id} does not fit in 32 bits")))?;
        if !sv.special_token_ids.iter().any(|(t, _)| t == typ) {
            sv.special_token_ids.push((typ.to_owned(), id));
        }
    }
    kv.set("tokenizer.ggml.model", Value::String("gpt2".into()));
    kv.set("tokenizer.ggml.pre", Value::String(base.pre));
    kv.set("tokenizer.ggml.tokens", Value::Array(Array::String(base.tokens)));
    kv.set("tokenizer.ggml.token_type", Value::Array(Array::I32(base.types)));
    kv.extend(sv.keys()?);
    Ok(())
}
