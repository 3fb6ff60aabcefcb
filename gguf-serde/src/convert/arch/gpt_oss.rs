//! gpt-oss: the reference's `GptOssModel` (`conversion/gpt_oss.py`), for `GptOssForCausalLM`.
//!
//! - Names: the Llama names for the embeddings, attention (with Q/K/V/O biases) and
//!   `input_layernorm` (→ `blk.N.attn_norm`); `post_attention_layernorm` →
//!   `blk.N.post_attention_norm` (gpt-oss has no `ffn_norm`); the attention sinks
//!   `self_attn.sinks` (`[n_head]`, no suffix) → `blk.N.attn_sinks.weight` (F32, 1-D); the
//!   router `mlp.router.{weight,bias}` → `blk.N.ffn_gate_inp.{weight,bias}` (F32).
//! - Experts from a BF16 (or F16/F32) checkpoint, stored input-major as transformers keeps them:
//!   `mlp.experts.gate_up_proj` (`[n_expert, n_embd, 2 * n_ff]`, gate and up *interleaved* along
//!   the last dimension) is transposed and split as the reference does
//!   (`transpose(-1, -2)[:, ::2, :]` and `[:, 1::2, :]`, [`Transform::Transpose`] and
//!   [`Transform::Stride`]) into `blk.N.ffn_{gate,up}_exps.weight` (`[n_expert, n_ff, n_embd]`);
//!   `mlp.experts.down_proj` (`[n_expert, n_ff, n_embd]`) is transposed into
//!   `blk.N.ffn_down_exps.weight` (`[n_expert, n_embd, n_ff]`). Biases:
//!   `gate_up_proj_bias` (`[n_expert, 2 * n_ff]`) → `ffn_{gate,up}_exps.bias` (`[..., ::2]`,
//!   `[..., 1::2]`), `down_proj_bias` → `ffn_down_exps.bias`, all F32 (not `.weight`).
//! - Experts from an MXFP4 checkpoint (as OpenAI publishes gpt-oss: `*_blocks`
//!   `[n_expert, rows, n_block, 16]` and `*_scales` `[n_expert, rows, n_block]`, U8, rows the
//!   output features): written as ggml `MXFP4` as they are ([`Mxfp4Tensor`]), first in the file,
//!   one tensor per `*_scales` in the checkpoint's order (the reference's
//!   `generate_extra_tensors`): `down_proj` whole, `gate_up_proj`'s even rows the gate and odd rows
//!   the up. With `quantization_config.quant_method = "mxfp4"` a float output's
//!   `general.file_type` is `MOSTLY_MXFP4_MOE` (38), as the reference's `prepare_metadata` sets it.
//! - Keys: [`text_model_parameters`] (yarn RoPE, `expert_count` from `num_local_experts`,
//!   `expert_used_count` from `num_experts_per_tok`, `key_length`/`value_length` from
//!   `head_dim`), then `attention.sliding_window` (`sliding_window`, required) and
//!   `expert_feed_forward_length` (`intermediate_size`, required), u32. The sliding-window layer
//!   pattern is not written: llama.cpp's gpt-oss alternates sliding and full layers itself.
//! - Tokenizer: GPT-2 BPE from `tokenizer.json` (`_set_vocab_gpt2`). The conversion cases use a
//!   GPT-2 `tokenizer.json`; the real tokenizer's base vocabulary, o200k_base (which the
//!   reference's table names `gpt-4o`), is tested on its own against the reference (hash and
//!   keys), a whole gpt-oss with `o200k_harmony`'s chat special tokens is not (tests/README.md).
//! - LoRA adapters of a gpt-oss base are refused where they target the experts (their
//!   transposition and strided gate/up split: [`lora`](super::super::lora) writes no pair through
//!   a Reshape, Transpose or Stride); other targets convert as the base maps them (untested here).

use super::llama::LLAMA_MAP;
use super::{
    always_skipped, key, text_model_parameters, ArchContext, Architecture, BlockMap, Mapped, Mxfp4Tensor, Target,
    Transform,
};
use crate::convert::{ConvertError, Kvs};
use crate::Value;

/// gpt-oss (`general.architecture = "gpt-oss"`), from BF16 or MXFP4 experts.
#[derive(Clone, Copy, Debug, Default)]
pub struct GptOss;

/// gpt-oss's own one-to-one names (gguf-py's `tensor_mapping.py` for `MODEL_ARCH.GPT_OSS`),
/// looked up before [`LLAMA_MAP`] (embeddings, attention, `input_layernorm`), whose dense
/// feed-forward names gpt-oss does not have.
pub const GPT_OSS_MAP: BlockMap<'static> = BlockMap {
    top: &[],
    block_prefix: "model.layers.",
    block: &[
        ("self_attn.sinks", "attn_sinks"),
        ("post_attention_layernorm", "post_attention_norm"),
        ("mlp.router", "ffn_gate_inp"),
    ],
};

/// The GGUF name of `hf`: [`GPT_OSS_MAP`], else [`LLAMA_MAP`] but for its dense feed-forward.
fn one_to_one(hf: &str, block_count: u32) -> Option<String> {
    GPT_OSS_MAP
        .get(hf, block_count)
        .or_else(|| LLAMA_MAP.get(hf, block_count).filter(|g| !DENSE_FFN.iter().any(|d| g.contains(&format!(".{d}.")))))
}

/// The Llama names gpt-oss has no tensor for.
const DENSE_FFN: &[&str] = &["ffn_gate", "ffn_up", "ffn_down", "ffn_norm"];

/// The block tensors gpt-oss needs.
const GPT_OSS_BLOCK: &[&str] = &[
    "attn_norm",
    "attn_q",
    "attn_k",
    "attn_v",
    "attn_output",
    "attn_sinks",
    "post_attention_norm",
    "ffn_gate_inp",
    "ffn_gate_exps",
    "ffn_up_exps",
    "ffn_down_exps",
];

/// `model.layers.{bid}.mlp.experts.{rest}`, a block below the block count.
fn experts_of<'h>(hf: &'h str, cx: &ArchContext<'_>) -> Option<(u32, &'h str)> {
    let (n, rest) = hf.strip_prefix("model.layers.")?.split_once('.')?;
    let ok = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (n.len() == 1 || !n.starts_with('0'));
    let bid: u32 = n.parse().ok().filter(|&b| ok && b < cx.block_count)?;
    Some((bid, rest.strip_prefix("mlp.experts.")?))
}

/// The gate (even) and up (odd) entries of the interleaved dimension `dim`, after `first`.
fn interleaved(bid: u32, suffix: &str, dim: usize, first: &[Transform]) -> Mapped {
    let half = |name: &str, start: u64| {
        let mut t = first.to_vec();
        t.push(Transform::Stride { dim, start, step: 2 });
        Target::new(format!("blk.{bid}.{name}.{suffix}"), t)
    };
    Mapped::Split(vec![half("ffn_gate_exps", 0), half("ffn_up_exps", 1)])
}

fn check_experts(hf: &str, shape: &[u64], rank: usize, even_last: bool) -> Result<(), ConvertError> {
    let ok = shape.len() == rank && (!even_last || shape.last().is_some_and(|n| n % 2 == 0));
    if ok {
        return Ok(());
    }
    Err(ConvertError::BadShape {
        name: hf.to_owned(),
        reason: format!(
            "shape {shape:?}, expected {}{}",
            crate::format::count(rank, "dimension"),
            if even_last { " with gate and up interleaved in an even last one" } else { "" }
        ),
    })
}

impl Architecture for GptOss {
    fn name(&self) -> &'static str {
        "gpt-oss"
    }

    fn map_tensor(&self, hf: &str, shape: &[u64], cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        if always_skipped(hf) {
            return Ok(Mapped::Skip);
        }
        if let Some((bid, rest)) = experts_of(hf, cx) {
            return Ok(match rest {
                "gate_up_proj" => {
                    check_experts(hf, shape, 3, true)?;
                    interleaved(bid, "weight", 1, &[Transform::Transpose])
                }
                "gate_up_proj_bias" => {
                    check_experts(hf, shape, 2, true)?;
                    interleaved(bid, "bias", 1, &[])
                }
                "down_proj" => {
                    check_experts(hf, shape, 3, false)?;
                    Mapped::To {
                        name: format!("blk.{bid}.ffn_down_exps.weight"),
                        transforms: vec![Transform::Transpose],
                    }
                }
                "down_proj_bias" => Mapped::plain(format!("blk.{bid}.ffn_down_exps.bias")),
                _ => Mapped::Unknown,
            });
        }
        // the reference's `filter_tensors`: `self_attn.sinks` gets a `.weight`
        let hf = if hf.ends_with(".self_attn.sinks") { format!("{hf}.weight") } else { hf.to_owned() };
        Ok(one_to_one(&hf, cx.block_count).map_or(Mapped::Unknown, Mapped::plain))
    }

    fn mxfp4_tensors(&self, cx: &ArchContext<'_>, names: &[&str]) -> Result<Vec<Mxfp4Tensor>, ConvertError> {
        let mut out = Vec::new();
        for &name in names {
            let Some((bid, rest)) = experts_of(name, cx) else { continue };
            let (proj, kind) = match rest.rsplit_once('_') {
                Some((p @ ("down_proj" | "gate_up_proj"), k @ ("blocks" | "scales"))) => (p, k),
                _ => continue,
            };
            let other = if kind == "blocks" { "scales" } else { "blocks" };
            let base = name.strip_suffix(kind).unwrap_or(name);
            let partner = format!("{base}{other}");
            if !names.contains(&partner.as_str()) {
                return Err(ConvertError::Layout(format!("{name} has no {partner} beside it (MXFP4 experts)")));
            }
            if kind == "blocks" {
                continue;
            }
            let (blocks, scales) = (partner, name.to_owned());
            let tensor = |gguf: &str, rows| Mxfp4Tensor {
                name: format!("blk.{bid}.{gguf}.weight"),
                blocks: blocks.clone(),
                scales: scales.clone(),
                rows,
            };
            if proj == "down_proj" {
                out.push(tensor("ffn_down_exps", (0, 1)));
            } else {
                out.push(tensor("ffn_gate_exps", (0, 2)));
                out.push(tensor("ffn_up_exps", (1, 2)));
            }
        }
        Ok(out)
    }

    fn source_name(&self, gguf: &str) -> Option<String> {
        GPT_OSS_MAP.source_name(gguf).or_else(|| LLAMA_MAP.source_name(gguf))
    }

    fn required_tensors(&self, cx: &ArchContext<'_>) -> Vec<String> {
        super::standard_required(cx.block_count, GPT_OSS_BLOCK)
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        text_model_parameters("gpt-oss", cx, file_type, kv)?;
        let window = cx.config.need_u32(&["sliding_window"])?;
        kv.set(key("gpt-oss", "attention.sliding_window"), Value::U32(window));
        let ff = cx.config.need_u32(&["intermediate_size"])?;
        kv.set(key("gpt-oss", "expert_feed_forward_length"), Value::U32(ff));
        Ok(())
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        crate::convert::vocab_hook::gpt2(cx, kv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::arch::testing::{config, with_cx};

    const CONFIG: &str = r#"{"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss",
        "num_hidden_layers": 2, "hidden_size": 64, "intermediate_size": 96, "num_local_experts": 4,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "sliding_window": 6}"#;

    #[test]
    fn names_as_the_reference_maps_them() {
        let c = config(CONFIG);
        with_cx(&c, |cx| {
            let m = |hf: &str| GptOss.map_tensor(hf, &[], cx).unwrap();
            assert_eq!(m("model.layers.1.self_attn.sinks"), Mapped::plain("blk.1.attn_sinks.weight"));
            assert_eq!(m("model.layers.0.mlp.router.bias"), Mapped::plain("blk.0.ffn_gate_inp.bias"));
            assert_eq!(
                m("model.layers.0.post_attention_layernorm.weight"),
                Mapped::plain("blk.0.post_attention_norm.weight")
            );
            assert_eq!(m("model.layers.0.self_attn.q_proj.bias"), Mapped::plain("blk.0.attn_q.bias"));
            assert_eq!(m("model.layers.2.self_attn.sinks"), Mapped::Unknown);
            assert_eq!(m("model.layers.0.mlp.gate_proj.weight"), Mapped::Unknown);
        });
    }

    #[test]
    fn mxfp4_experts_pair_blocks_with_scales() {
        let c = config(CONFIG);
        with_cx(&c, |cx| {
            let names = [
                "model.layers.0.mlp.experts.down_proj_blocks",
                "model.layers.0.mlp.experts.down_proj_scales",
                "model.layers.0.mlp.experts.gate_up_proj_blocks",
                "model.layers.0.mlp.experts.gate_up_proj_scales",
            ];
            let got = GptOss.mxfp4_tensors(cx, &names).unwrap();
            let rows: Vec<(&str, (u64, u64))> = got.iter().map(|t| (t.name.as_str(), t.rows)).collect();
            assert_eq!(
                rows,
                [
                    ("blk.0.ffn_down_exps.weight", (0, 1)),
                    ("blk.0.ffn_gate_exps.weight", (0, 2)),
                    ("blk.0.ffn_up_exps.weight", (1, 2))
                ]
            );
            assert!(GptOss.mxfp4_tensors(cx, &names[..3]).is_err());
        });
    }
}
