//! Qwen 2 MoE and Qwen 3 MoE: the reference's `Qwen2MoeModel` and `Qwen3MoeModel`
//! (`conversion/qwen.py`), for `Qwen2MoeForCausalLM` and `Qwen3MoeForCausalLM`.
//!
//! - Names: the Llama map ([`LLAMA_MAP`]: attention with Q/K/V biases for Qwen 2 MoE, dense
//!   feed-forward layers where a layer is not sparse), Qwen 3's per-head norms
//!   (`self_attn.{q,k}_norm` → `blk.N.attn_{q,k}_norm`), the router `mlp.gate` →
//!   `blk.N.ffn_gate_inp` (F32, the reference's rule) and for Qwen 2 MoE the shared expert:
//!   `mlp.shared_expert.{gate,up,down}_proj` → `blk.N.ffn_{gate,up,down}_shexp`,
//!   `mlp.shared_expert_gate` → `blk.N.ffn_gate_inp_shexp` (`[1, n_embd]`, F32).
//! - Experts, in either layout the reference reads:
//!   - one tensor per expert, `mlp.experts.X.{gate,up,down}_proj.weight` (`[n_ff_exp, n_embd]`,
//!     `[n_ff_exp, n_embd]`, `[n_embd, n_ff_exp]`; as `save_pretrained` writes them and the hub
//!     ships them), stacked into `blk.N.ffn_{gate,up,down}_exps.weight` (`[n_expert, n_ff_exp,
//!     n_embd]`, …) and written expert by expert ([`Mapped::expert`]); the stacks come, as the
//!     reference yields them, after the layer's last expert tensor: down, gate, up;
//!   - transformers' fused form, `mlp.experts.gate_up_proj` (`[n_expert, 2 * n_ff_exp, n_embd]`,
//!     split along its middle dimension into gate and up, [`Transform::Slice`]) and
//!     `mlp.experts.down_proj` (`[n_expert, n_embd, n_ff_exp]`), with or without `.weight`.
//! - Sparse layers: transformers' rule (`Qwen2MoeDecoderLayer`): a layer not in
//!   `mlp_only_layers` whose number plus one is a multiple of `decoder_sparse_step` (1 when
//!   absent), when the expert count (`num_local_experts`, as transformers 5 names it for Qwen 3
//!   MoE, else `num_experts`, the reference's order) is positive.
//! - Keys: [`text_model_parameters`] (`expert_count` from `num_experts`, `expert_used_count`
//!   from `num_experts_per_tok`), then `expert_feed_forward_length` (`moe_intermediate_size`) and
//!   `expert_shared_feed_forward_length` (`shared_expert_intermediate_size`), u32, each when
//!   present.
//! - Tokenizer: GPT-2 BPE from `tokenizer.json` (`TextModel.set_vocab`).

use super::llama::LLAMA_MAP;
use super::{
    always_skipped, expert_part, key, text_model_parameters, ArchContext, Architecture, BlockMap, Mapped, Target,
    Transform,
};
use crate::convert::{ConvertError, Kvs};
use crate::Value;

/// Qwen 2 MoE (`general.architecture = "qwen2moe"`), with a shared expert.
#[derive(Clone, Copy, Debug, Default)]
pub struct Qwen2Moe;

/// Qwen 3 MoE (`general.architecture = "qwen3moe"`), with per-head Q/K norms.
#[derive(Clone, Copy, Debug, Default)]
pub struct Qwen3Moe;

/// The router, the shared expert and Qwen 3's norms, beside [`LLAMA_MAP`].
pub const QWEN_MOE_MAP: BlockMap<'static> = BlockMap {
    top: &[],
    block_prefix: "model.layers.",
    block: &[
        ("mlp.gate", "ffn_gate_inp"),
        ("mlp.shared_expert_gate", "ffn_gate_inp_shexp"),
        ("mlp.shared_expert.gate_proj", "ffn_gate_shexp"),
        ("mlp.shared_expert.up_proj", "ffn_up_shexp"),
        ("mlp.shared_expert.down_proj", "ffn_down_shexp"),
        ("self_attn.q_norm", "attn_q_norm"),
        ("self_attn.k_norm", "attn_k_norm"),
    ],
};

/// Whether block `bid` has experts, by transformers' rule (see the [module docs](self)).
///
/// # Errors
/// [`ConvertError::Config`] for a mistyped `decoder_sparse_step`, `mlp_only_layers` or
/// expert count.
pub fn is_sparse_layer(cx: &ArchContext<'_>, bid: u32) -> Result<bool, ConvertError> {
    let c = cx.config;
    let experts = c.find_u32(&["num_local_experts", "num_experts"])?.unwrap_or(0);
    let step = c.find_u32(&["decoder_sparse_step"])?.unwrap_or(1);
    let dense_only = match c.get("mlp_only_layers") {
        None | Some(serde_json::Value::Null) => false,
        Some(serde_json::Value::Array(a)) => a.iter().any(|v| v.as_u64() == Some(u64::from(bid))),
        Some(v) => return Err(ConvertError::Config(format!("mlp_only_layers: {v} is not a list of layers"))),
    };
    Ok(!dense_only && experts > 0 && step > 0 && (bid + 1) % step == 0)
}

/// The GGUF stack of a per-expert projection name (`gate_proj.weight` → `ffn_gate_exps`).
fn stack_of(proj: &str) -> Option<&'static str> {
    Some(match proj {
        "gate_proj.weight" => "ffn_gate_exps",
        "up_proj.weight" => "ffn_up_exps",
        "down_proj.weight" => "ffn_down_exps",
        _ => return None,
    })
}

/// Block `bid` of `model.layers.{bid}.{rest}` (below the block count).
fn block_of<'h>(hf: &'h str, cx: &ArchContext<'_>) -> Option<(u32, &'h str)> {
    let (n, rest) = hf.strip_prefix("model.layers.")?.split_once('.')?;
    let ok = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (n.len() == 1 || !n.starts_with('0'));
    let bid: u32 = n.parse().ok().filter(|&b| ok && b < cx.block_count)?;
    Some((bid, rest))
}

fn map_qwen_moe(hf: &str, shape: &[u64], cx: &ArchContext<'_>, norms: bool) -> Result<Mapped, ConvertError> {
    if always_skipped(hf) {
        return Ok(Mapped::Skip);
    }
    if let Some((bid, xid, proj)) = expert_part(hf, "model.layers.", "mlp.experts.", cx.block_count) {
        let Some(stack) = stack_of(proj) else { return Ok(Mapped::Unknown) };
        let n = cx.config.need_u32(&["num_local_experts", "num_experts"])?;
        return Ok(Mapped::expert(format!("blk.{bid}.{stack}.weight"), xid, n.into()));
    }
    if let Some((bid, rest)) = block_of(hf, cx) {
        match rest.strip_suffix(".weight").unwrap_or(rest) {
            "mlp.experts.down_proj" => return Ok(Mapped::plain(format!("blk.{bid}.ffn_down_exps.weight"))),
            "mlp.experts.gate_up_proj" => {
                let ff2 = match shape {
                    [_, ff2, _] if ff2 % 2 == 0 => *ff2,
                    _ => {
                        return Err(ConvertError::BadShape {
                            name: hf.to_owned(),
                            reason: format!(
                                "a fused gate/up projection of shape {shape:?}, expected [n_expert, 2 * n_ff, n_embd]"
                            ),
                        })
                    }
                };
                let half = ff2 / 2;
                return Ok(Mapped::Split(vec![
                    Target::new(
                        format!("blk.{bid}.ffn_gate_exps.weight"),
                        vec![Transform::Slice { dim: 1, start: 0, len: half }],
                    ),
                    Target::new(
                        format!("blk.{bid}.ffn_up_exps.weight"),
                        vec![Transform::Slice { dim: 1, start: half, len: half }],
                    ),
                ]));
            }
            _ => {}
        }
    }
    if let Some(name) = QWEN_MOE_MAP.get(hf, cx.block_count) {
        let is_norm = name.contains(".attn_q_norm.") || name.contains(".attn_k_norm.");
        return Ok(if is_norm && !norms { Mapped::Unknown } else { Mapped::plain(name) });
    }
    Ok(LLAMA_MAP.get(hf, cx.block_count).map_or(Mapped::Unknown, Mapped::plain))
}

fn required(cx: &ArchContext<'_>, norms: bool, shared: bool) -> Vec<String> {
    let mut v = vec!["token_embd.weight".to_owned(), "output_norm.weight".to_owned()];
    for bid in 0..cx.block_count {
        let mut names = vec!["attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm"];
        if norms {
            names.extend(["attn_q_norm", "attn_k_norm"]);
        }
        // A mistyped layer list is refused by `parameters`; here it counts as sparse.
        if is_sparse_layer(cx, bid).unwrap_or(true) {
            names.extend(["ffn_gate_inp", "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"]);
            if shared
                && cx.config.get("shared_expert_intermediate_size").is_some_and(|v| v.as_u64().is_some_and(|n| n > 0))
            {
                names.extend(["ffn_gate_inp_shexp", "ffn_gate_shexp", "ffn_up_shexp", "ffn_down_shexp"]);
            }
        } else {
            names.extend(["ffn_gate", "ffn_up", "ffn_down"]);
        }
        v.extend(names.iter().map(|n| format!("blk.{bid}.{n}.weight")));
    }
    v
}

fn moe_parameters(arch: &str, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
    text_model_parameters(arch, cx, file_type, kv)?;
    for bid in 0..cx.block_count {
        is_sparse_layer(cx, bid)?;
    }
    if let Some(n) = cx.config.find_u32(&["moe_intermediate_size"])? {
        kv.set(key(arch, "expert_feed_forward_length"), Value::U32(n));
    }
    if let Some(n) = cx.config.find_u32(&["shared_expert_intermediate_size"])? {
        kv.set(key(arch, "expert_shared_feed_forward_length"), Value::U32(n));
    }
    Ok(())
}

fn source_name(gguf: &str) -> Option<String> {
    LLAMA_MAP.source_name(gguf).or_else(|| QWEN_MOE_MAP.source_name(gguf))
}

impl Architecture for Qwen2Moe {
    fn name(&self) -> &'static str {
        "qwen2moe"
    }

    fn check(&self, cx: &ArchContext<'_>) -> Result<(), ConvertError> {
        super::qwen2::check_qwen(cx)
    }

    fn map_tensor(&self, hf: &str, shape: &[u64], cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        map_qwen_moe(hf, shape, cx, false)
    }

    fn source_name(&self, gguf: &str) -> Option<String> {
        source_name(gguf)
    }

    fn required_tensors(&self, cx: &ArchContext<'_>) -> Vec<String> {
        required(cx, false, true)
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        moe_parameters("qwen2moe", cx, file_type, kv)
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        crate::convert::vocab_hook::gpt2(cx, kv)
    }
}

impl Architecture for Qwen3Moe {
    fn name(&self) -> &'static str {
        "qwen3moe"
    }

    fn check(&self, cx: &ArchContext<'_>) -> Result<(), ConvertError> {
        super::qwen2::check_qwen(cx)
    }

    fn map_tensor(&self, hf: &str, shape: &[u64], cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        map_qwen_moe(hf, shape, cx, true)
    }

    fn source_name(&self, gguf: &str) -> Option<String> {
        source_name(gguf)
    }

    fn required_tensors(&self, cx: &ArchContext<'_>) -> Vec<String> {
        required(cx, true, false)
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        moe_parameters("qwen3moe", cx, file_type, kv)
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        crate::convert::vocab_hook::gpt2(cx, kv)
    }
}
