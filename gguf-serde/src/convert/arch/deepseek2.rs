//! DeepSeek-V2 and DeepSeek-V3: the reference's `DeepseekV2Model` (`conversion/deepseek.py`,
//! `general.architecture = "deepseek2"`), which converts both `DeepseekV2ForCausalLM` (V2,
//! V2-Lite) and `DeepseekV3ForCausalLM` (V3, R1) with one code path.
//!
//! - Multi-head latent attention: the query either whole, `self_attn.q_proj` → `blk.N.attn_q`
//!   (V2-Lite, `q_lora_rank` null), or low-rank, `self_attn.q_a_proj` → `attn_q_a`,
//!   `q_a_layernorm` → `attn_q_a_norm`, `q_b_proj` → `attn_q_b`; the compressed key/value
//!   `kv_a_proj_with_mqa` → `attn_kv_a_mqa`, `kv_a_layernorm` → `attn_kv_a_norm`; `o_proj` →
//!   `attn_output`. `kv_b_proj.weight` (`[n_head_kv * (qk_nope_head_dim + v_head_dim),
//!   kv_lora_rank]`) is split as the reference splits it for llama.cpp's absorbed MLA: viewed as
//!   `[n_head_kv, qk_nope_head_dim + v_head_dim, kv_lora_rank]` ([`Transform::Reshape`]), its
//!   first `qk_nope_head_dim` rows per head transposed into `blk.N.attn_k_b.weight`
//!   (`[n_head_kv, kv_lora_rank, qk_nope_head_dim]`, [`Transform::Transpose`]) and its last
//!   `v_head_dim` rows per head into `blk.N.attn_v_b.weight` (`[n_head_kv, v_head_dim,
//!   kv_lora_rank]`); `n_head_kv` is `config.json`'s `num_key_value_heads` (the reference reads
//!   it before it rewrites it to 1 for the keys).
//! - Feed-forward: the first `first_k_dense_replace` layers dense (`mlp.{gate,up,down}_proj` →
//!   `ffn_{gate,up,down}`), the others a router `mlp.gate` → `ffn_gate_inp` (F32), its score
//!   correction `mlp.gate.e_score_correction_bias` → `blk.N.exp_probs_b.bias` (V3; the
//!   reference renames it `e_score_correction.bias` first), shared experts
//!   `mlp.shared_experts.{gate,up,down}_proj` → `ffn_{gate,up,down}_shexp`, and routed experts
//!   `mlp.experts.X.{gate,up,down}_proj.weight` stacked into `ffn_{gate,up,down}_exps` (written
//!   after the layer's last expert tensor: down, gate, up, as the reference's merge yields them).
//! - Left out as the reference leaves them: multi-token-prediction layers (`model.layers.N.*`
//!   with `N` ≥ `num_hidden_layers`) and `lm_head.weight` when `tie_word_embeddings`.
//! - Keys: [`text_model_parameters`] with `num_key_value_heads` taken as 1 and `rms_norm_eps`
//!   1e-6 when absent, then `leading_dense_block_count` (`first_k_dense_replace`; absent: every
//!   layer without `n_routed_experts`, none with), `vocab_size`, `attention.q_lora_rank` (when
//!   not null), `attention.kv_lora_rank` (default 512), `attention.key_length` (`kv_lora_rank +
//!   qk_rope_head_dim`) and `attention.value_length` (`kv_lora_rank`) in place of the ones
//!   written before, `attention.key_length_mla` (`qk_nope_head_dim + qk_rope_head_dim`),
//!   `attention.value_length_mla` (`v_head_dim`), `expert_feed_forward_length`
//!   (`moe_intermediate_size`, else `intermediate_size`), `expert_count` (`n_routed_experts`,
//!   in place), `expert_shared_count` (`n_shared_experts`, default 0), `expert_weights_scale`
//!   (`routed_scaling_factor`, f32), `expert_weights_norm` (`norm_topk_prob`, when true),
//!   `rope.dimension_count` (`qk_rope_head_dim`), and with YaRN's `mscale_all_dim`,
//!   `rope.scaling.yarn_log_multiplier` = 0.1 × `mscale_all_dim` (f32). All u32 unless said.
//! - Tokenizer: GPT-2 BPE from `tokenizer.json` (the reference's first try; its fallback is for
//!   Kimi K2's tiktoken vocabulary only).
//! - FP8 checkpoints (DeepSeek-V3 as published): see [`quant`](super::super::quant); a
//!   `weight_block_size` that does not match the scale tensor's shape is accepted by both tools
//!   when the scale grid has at least the blocks the weight needs: each block of
//!   `weight_block_size` takes the scale at its block index and the scale rows and columns past
//!   the last block are ignored (byte-identical, and wrong if the checkpoint's real blocks were
//!   smaller); too few blocks are refused naming the weight (the reference fails in torch).
//! - LoRA adapters of a DeepSeek base are refused where they target `kv_b_proj` (its split
//!   reshapes and transposes: [`lora`](super::super::lora) writes no pair through a Reshape,
//!   Transpose or Stride); other targets convert as the base maps them (untested here).
//!
//! llama.cpp reads these files with two facts of its own (`src/models/deepseek2.cpp`): a model
//! without `attention.q_lora_rank` loads only at the layer counts it takes for a "lite" variant
//! (26 or 27 layers, as DeepSeek-V2-Lite, or 48 with a vocabulary of 128,256 tokens; at any other
//! count it requires the key and fails to load; the converter writes the file all the same, as the
//! reference does), and without `expert_gating_func` it gates with softmax — right for V2, not for
//! a V3 whose `config.json` has no `scoring_func` (transformers saves none): the reference then
//! writes no key, and so does this converter.

use super::{
    always_skipped, expert_part, key, text_model_parameters, ArchContext, Architecture, BlockMap, Mapped, Target,
    Transform,
};
use crate::convert::{ConvertError, Kvs};
use crate::Value;

/// DeepSeek-V2 and -V3 (`general.architecture = "deepseek2"`). See the [module docs](self).
#[derive(Clone, Copy, Debug, Default)]
pub struct Deepseek2;

/// The names of the DeepSeek-V2/V3 decoder (gguf-py's `TensorNameMap` entries they use).
pub const DEEPSEEK2_MAP: BlockMap<'static> = BlockMap {
    top: &[("model.embed_tokens", "token_embd"), ("model.norm", "output_norm"), ("lm_head", "output")],
    block_prefix: "model.layers.",
    block: &[
        ("input_layernorm", "attn_norm"),
        ("post_attention_layernorm", "ffn_norm"),
        ("self_attn.q_proj", "attn_q"),
        ("self_attn.q_a_proj", "attn_q_a"),
        ("self_attn.q_a_layernorm", "attn_q_a_norm"),
        ("self_attn.q_b_proj", "attn_q_b"),
        ("self_attn.kv_a_proj_with_mqa", "attn_kv_a_mqa"),
        ("self_attn.kv_a_layernorm", "attn_kv_a_norm"),
        ("self_attn.o_proj", "attn_output"),
        ("mlp.gate_proj", "ffn_gate"),
        ("mlp.up_proj", "ffn_up"),
        ("mlp.down_proj", "ffn_down"),
        ("mlp.gate", "ffn_gate_inp"),
        ("mlp.gate.e_score_correction", "exp_probs_b"),
        ("mlp.shared_experts.gate_proj", "ffn_gate_shexp"),
        ("mlp.shared_experts.up_proj", "ffn_up_shexp"),
        ("mlp.shared_experts.down_proj", "ffn_down_shexp"),
    ],
};

/// The block of `model.layers.{N}…` as the reference's `re.match(r"model.layers.(\d+)")` reads
/// it (digits after the prefix), to leave out the multi-token-prediction layers.
fn layer_number(hf: &str) -> Option<u64> {
    let rest = hf.strip_prefix("model.layers.")?;
    let digits: &str = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
    digits.parse().ok()
}

/// `first_k_dense_replace`, or its default (see the [module docs](self)).
fn leading_dense(cx: &ArchContext<'_>) -> Result<u32, ConvertError> {
    let c = cx.config;
    Ok(match c.find_u32(&["first_k_dense_replace"])? {
        Some(n) => n,
        None if c.get("n_routed_experts").is_none() => cx.block_count,
        None => 0,
    })
}

/// The split of `kv_b_proj.weight` of canonical `shape` of block `bid` into `attn_k_b` and
/// `attn_v_b` (see the [module docs](self)).
fn split_kv_b(hf: &str, shape: &[u64], bid: u32, cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
    let c = cx.config;
    let n_head_kv = u64::from(c.need_u32(&["num_key_value_heads"])?);
    let v = u64::from(c.need_u32(&["v_head_dim"])?);
    let nope = u64::from(c.need_u32(&["qk_nope_head_dim"])?);
    let (rows, rank) = match shape {
        [rows, rank] => (*rows, *rank),
        _ => (0, 0),
    };
    if rows != n_head_kv * (v + nope) {
        return Err(ConvertError::BadShape {
            name: hf.to_owned(),
            reason: format!(
                "shape {shape:?}, expected [num_key_value_heads * (qk_nope_head_dim + v_head_dim), kv_lora_rank] = [{} * ({nope} + {v}), _]",
                n_head_kv
            ),
        });
    }
    let view = Transform::Reshape(vec![n_head_kv, nope + v, rank]);
    Ok(Mapped::Split(vec![
        Target::new(
            format!("blk.{bid}.attn_k_b.weight"),
            vec![view.clone(), Transform::Slice { dim: 1, start: 0, len: nope }, Transform::Transpose],
        ),
        Target::new(format!("blk.{bid}.attn_v_b.weight"), vec![view, Transform::Slice { dim: 1, start: nope, len: v }]),
    ]))
}

/// The stack of a per-expert projection (`down_proj.weight` → `ffn_down_exps`) and its rank in
/// the layer's batch (down, gate, up).
fn stack_of(proj: &str) -> Option<(&'static str, u32)> {
    Some(match proj {
        "down_proj.weight" => ("ffn_down_exps", 0),
        "gate_proj.weight" => ("ffn_gate_exps", 1),
        "up_proj.weight" => ("ffn_up_exps", 2),
        _ => return None,
    })
}

impl Architecture for Deepseek2 {
    fn name(&self) -> &'static str {
        "deepseek2"
    }

    fn map_tensor(&self, hf: &str, shape: &[u64], cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        let c = cx.config;
        let tied = c.get("tie_word_embeddings").and_then(serde_json::Value::as_bool).unwrap_or(false);
        if always_skipped(hf) || (tied && (hf == "lm_head.weight" || hf == "model.lm_head.weight")) {
            return Ok(Mapped::Skip);
        }
        if layer_number(hf).is_some_and(|n| n >= u64::from(cx.block_count)) {
            return Ok(Mapped::Skip);
        }
        if hf.contains("mlp.experts") {
            let Some((bid, xid, proj)) = expert_part(hf, "model.layers.", "mlp.experts.", cx.block_count) else {
                return Ok(Mapped::Unknown);
            };
            let Some((stack, rank)) = stack_of(proj) else { return Ok(Mapped::Unknown) };
            let n = c.need_u32(&["n_routed_experts"])?;
            let part = Mapped::expert(format!("blk.{bid}.{stack}.weight"), xid, n.into());
            return Ok(part.in_batch(format!("blk.{bid}.experts"), rank, 3));
        }
        if let Some(base) = hf.strip_suffix(".self_attn.kv_b_proj.weight") {
            let bid = layer_number(hf).and_then(|n| u32::try_from(n).ok()).filter(|_| base.matches('.').count() == 2);
            if let Some(bid) = bid {
                return split_kv_b(hf, shape, bid, cx);
            }
        }
        let renamed = hf.replace("e_score_correction_bias", "e_score_correction.bias");
        Ok(DEEPSEEK2_MAP.get(&renamed, cx.block_count).map_or(Mapped::Unknown, Mapped::plain))
    }

    fn source_name(&self, gguf: &str) -> Option<String> {
        let hf = DEEPSEEK2_MAP.source_name(gguf)?;
        Some(hf.replace("e_score_correction.bias", "e_score_correction_bias"))
    }

    fn required_tensors(&self, cx: &ArchContext<'_>) -> Vec<String> {
        let c = cx.config;
        let dense = leading_dense(cx).unwrap_or(0);
        let q_lora = c.get("q_lora_rank").is_some();
        let mut v = vec!["token_embd.weight".to_owned(), "output_norm.weight".to_owned()];
        for bid in 0..cx.block_count {
            let mut names = vec!["attn_norm", "attn_kv_a_mqa", "attn_kv_a_norm", "attn_k_b", "attn_v_b", "attn_output"];
            names.extend(if q_lora { &["attn_q_a", "attn_q_a_norm", "attn_q_b"][..] } else { &["attn_q"][..] });
            names.push("ffn_norm");
            if bid < dense {
                names.extend(["ffn_gate", "ffn_up", "ffn_down"]);
            } else {
                names.extend(["ffn_gate_inp", "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"]);
            }
            v.extend(names.iter().map(|n| format!("blk.{bid}.{n}.weight")));
        }
        v
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        let arch = "deepseek2";
        let k = |s: &str| key(arch, s);
        // the reference rewrites its hparams first: MLA as MQA, and a default epsilon
        let mut config = cx.config.clone();
        config.hparams.insert("num_key_value_heads".into(), 1.into());
        if config.get("rms_norm_eps").is_none() {
            config.hparams.insert("rms_norm_eps".into(), serde_json::json!(1e-6));
        }
        let cx2 = ArchContext { config: &config, ..*cx };
        text_model_parameters(arch, &cx2, file_type, kv)?;
        let c = &config;
        kv.set(k("leading_dense_block_count"), Value::U32(leading_dense(cx)?));
        let kv_lora = c.find_u32(&["kv_lora_rank"])?.unwrap_or(512);
        kv.set(k("vocab_size"), Value::U32(c.need_u32(&["vocab_size"])?));
        if let Some(q) = c.find_u32(&["q_lora_rank"])? {
            kv.set(k("attention.q_lora_rank"), Value::U32(q));
        }
        let rope = c.need_u32(&["qk_rope_head_dim"])?;
        let nope = c.need_u32(&["qk_nope_head_dim"])?;
        kv.set(k("attention.kv_lora_rank"), Value::U32(kv_lora));
        kv.set(k("attention.key_length"), Value::U32(kv_lora + rope));
        kv.set(k("attention.value_length"), Value::U32(kv_lora));
        kv.set(k("attention.key_length_mla"), Value::U32(nope + rope));
        kv.set(k("attention.value_length_mla"), Value::U32(c.need_u32(&["v_head_dim"])?));
        let ff = c
            .find_u32(&["moe_intermediate_size", "intermediate_size"])?
            .ok_or_else(|| ConvertError::Config("none of moe_intermediate_size, intermediate_size is given".into()))?;
        kv.set(k("expert_feed_forward_length"), Value::U32(ff));
        if let Some(n) = c.find_u32(&["n_routed_experts"])? {
            kv.set(k("expert_count"), Value::U32(n));
        }
        kv.set(k("expert_shared_count"), Value::U32(c.find_u32(&["n_shared_experts"])?.unwrap_or(0)));
        if let Some(s) = c.find_f64(&["routed_scaling_factor"])? {
            kv.set(k("expert_weights_scale"), Value::F32(s as f32));
        }
        if c.get("norm_topk_prob").and_then(serde_json::Value::as_bool) == Some(true) {
            kv.set(k("expert_weights_norm"), Value::Bool(true));
        }
        kv.set(k("rope.dimension_count"), Value::U32(rope));
        if let Some(m) = c.rope_parameters().get("mscale_all_dim").filter(|v| !v.is_null()) {
            let m = m.as_f64().ok_or_else(|| ConvertError::Config(format!("mscale_all_dim: {m} is not a number")))?;
            kv.set(k("rope.scaling.yarn_log_multiplier"), Value::F32((0.1 * m) as f32));
        }
        Ok(())
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        crate::convert::vocab_hook::gpt2(cx, kv)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{config, keys, mapped, plain_name, with_cx};
    use super::*;

    const V2_LITE: &str = r#"{"architectures": ["DeepseekV2ForCausalLM"], "num_hidden_layers": 3,
        "num_key_value_heads": 4, "num_attention_heads": 4, "q_lora_rank": null, "kv_lora_rank": 32,
        "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16, "n_routed_experts": 4,
        "first_k_dense_replace": 1, "vocab_size": 100, "moe_intermediate_size": 64,
        "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096,
                         "mscale": 0.707, "mscale_all_dim": 0.707, "beta_fast": 32, "beta_slow": 1}}"#;

    #[test]
    fn names_follow_gguf_py_s_map() {
        let c = config(V2_LITE);
        let d = Deepseek2;
        assert_eq!(plain_name(mapped(&d, &c, "model.layers.0.self_attn.q_proj.weight")), "blk.0.attn_q.weight");
        assert_eq!(
            plain_name(mapped(&d, &c, "model.layers.2.mlp.gate.e_score_correction_bias")),
            "blk.2.exp_probs_b.bias"
        );
        assert_eq!(
            plain_name(mapped(&d, &c, "model.layers.1.mlp.shared_experts.up_proj.weight")),
            "blk.1.ffn_up_shexp.weight"
        );
        // a multi-token-prediction layer
        assert_eq!(mapped(&d, &c, "model.layers.3.self_attn.q_proj.weight"), Mapped::Skip);
        assert_eq!(mapped(&d, &c, "model.layers.3.mlp.experts.0.up_proj.weight"), Mapped::Skip);
        assert_eq!(
            mapped(&d, &c, "model.layers.1.mlp.experts.3.gate_proj.weight"),
            Mapped::expert("blk.1.ffn_gate_exps.weight", 3, 4).in_batch("blk.1.experts", 1, 3)
        );
        assert_eq!(
            d.source_name("blk.2.exp_probs_b.bias").as_deref(),
            Some("model.layers.2.mlp.gate.e_score_correction_bias")
        );
    }

    #[test]
    fn kv_b_is_split_per_head_and_k_b_transposed() {
        let c = config(V2_LITE);
        let m = with_cx(&c, |cx| Deepseek2.map_tensor("model.layers.0.self_attn.kv_b_proj.weight", &[128, 32], cx));
        let Ok(Mapped::Split(t)) = m else { panic!("{m:?}") };
        let view = Transform::Reshape(vec![4, 32, 32]);
        assert_eq!(t[0].name, "blk.0.attn_k_b.weight");
        assert_eq!(
            t[0].transforms,
            [view.clone(), Transform::Slice { dim: 1, start: 0, len: 16 }, Transform::Transpose]
        );
        assert_eq!(t[1].name, "blk.0.attn_v_b.weight");
        assert_eq!(t[1].transforms, [view, Transform::Slice { dim: 1, start: 16, len: 16 }]);
        let bad = with_cx(&c, |cx| Deepseek2.map_tensor("model.layers.0.self_attn.kv_b_proj.weight", &[96, 32], cx));
        assert!(matches!(bad, Err(ConvertError::BadShape { .. })));
    }

    #[test]
    fn keys_of_a_v2_lite_without_q_lora() {
        let c = config(V2_LITE);
        let kv = keys(&Deepseek2, &c, 1);
        let get = |n: &str| kv.iter().find(|(k, _)| k == &format!("deepseek2.{n}")).map(|(_, v)| v.clone());
        assert_eq!(get("attention.head_count_kv"), Some(Value::U32(1)));
        assert_eq!(get("attention.q_lora_rank"), None);
        assert_eq!(get("attention.key_length"), Some(Value::U32(40)));
        assert_eq!(get("attention.key_length_mla"), Some(Value::U32(24)));
        assert_eq!(get("leading_dense_block_count"), Some(Value::U32(1)));
        assert_eq!(get("expert_shared_count"), Some(Value::U32(0)));
        assert_eq!(get("rope.scaling.type"), Some(Value::String("yarn".into())));
        assert_eq!(get("rope.scaling.yarn_log_multiplier"), Some(Value::F32((0.1f64 * 0.707) as f32)));
        assert_eq!(get("attention.layer_norm_rms_epsilon"), Some(Value::F32(1e-6)));
    }
}
