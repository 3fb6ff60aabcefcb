//! Gemma 2: the reference's `Gemma2Model` (`conversion/gemma.py`), for `Gemma2ForCausalLM`.
//!
//! - Names (`tensor_mapping.py` for `MODEL_ARCH.GEMMA2`): the Llama attention and feed-forward
//!   names, `input_layernorm` → `blk.N.attn_norm`, `post_attention_layernorm` →
//!   `blk.N.post_attention_norm`, `pre_feedforward_layernorm` → `blk.N.ffn_norm`,
//!   `post_feedforward_layernorm` → `blk.N.post_ffw_norm`. No permutation. `lm_head.weight` is
//!   left out (the reference's `filter_tensors`: llama.cpp's `gemma2` reads the tied
//!   embedding).
//! - Every Hugging Face tensor whose name ends in `norm.weight` gets 1 added
//!   ([`Transform::Add`]): `Gemma2RMSNorm` multiplies by `1 + weight`.
//! - Keys, the reference's own (it does not call `TextModel`'s): `context_length`
//!   (`max_position_embeddings`), `embedding_length`, `block_count`, `feed_forward_length`,
//!   `attention.head_count`, `attention.head_count_kv` (`num_key_value_heads`, else the query
//!   heads), u32; `attention.layer_norm_rms_epsilon` (f32); `attention.key_length`,
//!   `attention.value_length` (`head_dim`, u32); `general.file_type`;
//!   `attn_logit_softcapping`, `final_logit_softcapping` (f32); `attention.sliding_window`
//!   (u32). Each field is required, as the reference indexes it.
//! - Tokenizer: SentencePiece (`tokenizer.model`, `TextModel._set_vocab_sentencepiece`), then
//!   `tokenizer.ggml.add_space_prefix` = false.

use super::{always_skipped, key, ArchContext, Architecture, BlockMap, Mapped, Transform};
use crate::convert::{vocab, ConvertError, Kvs};
use crate::Value;

/// The Gemma 2 architecture (`general.architecture = "gemma2"`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Gemma2;

const MAP: BlockMap<'static> = BlockMap {
    top: &[("model.embed_tokens", "token_embd"), ("model.norm", "output_norm")],
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
        ("post_attention_layernorm", "post_attention_norm"),
        ("pre_feedforward_layernorm", "ffn_norm"),
        ("post_feedforward_layernorm", "post_ffw_norm"),
    ],
};

/// A field the reference indexes (`hparams[name]`) and writes as f32.
fn need_f64(cx: &ArchContext<'_>, name: &str) -> Result<f64, ConvertError> {
    cx.config.find_f64(&[name])?.ok_or_else(|| ConvertError::Config(format!("{name} is missing")))
}

impl Architecture for Gemma2 {
    fn name(&self) -> &'static str {
        "gemma2"
    }

    fn check(&self, cx: &ArchContext<'_>) -> Result<(), ConvertError> {
        let c = cx.config;
        for name in [
            "max_position_embeddings",
            "hidden_size",
            "intermediate_size",
            "num_attention_heads",
            "head_dim",
            "sliding_window",
        ] {
            c.need_u32(&[name])?;
        }
        c.find_u32(&["num_key_value_heads"])?;
        for name in ["rms_norm_eps", "attn_logit_softcapping", "final_logit_softcapping"] {
            need_f64(cx, name)?;
        }
        Ok(())
    }

    fn map_tensor(&self, hf: &str, _shape: &[u64], cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        if always_skipped(hf) || hf == "lm_head.weight" {
            return Ok(Mapped::Skip);
        }
        let Some(name) = MAP.get(hf, cx.block_count) else { return Ok(Mapped::Unknown) };
        let transforms = if hf.ends_with("norm.weight") { vec![Transform::Add(1.0)] } else { Vec::new() };
        Ok(Mapped::To { name, transforms })
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
                "ffn_gate",
                "ffn_up",
                "ffn_down",
                "post_ffw_norm",
            ],
        )
    }

    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        let c = cx.config;
        let k = |s: &str| key("gemma2", s);
        let u = |name: &str| c.need_u32(&[name]).map(Value::U32);
        let f = |name: &str| need_f64(cx, name).map(|v| Value::F32(v as f32));
        kv.set(k("context_length"), u("max_position_embeddings")?);
        kv.set(k("embedding_length"), u("hidden_size")?);
        kv.set(k("block_count"), Value::U32(cx.block_count));
        kv.set(k("feed_forward_length"), u("intermediate_size")?);
        let n_head = c.need_u32(&["num_attention_heads"])?;
        kv.set(k("attention.head_count"), Value::U32(n_head));
        kv.set(k("attention.head_count_kv"), Value::U32(c.find_u32(&["num_key_value_heads"])?.unwrap_or(n_head)));
        kv.set(k("attention.layer_norm_rms_epsilon"), f("rms_norm_eps")?);
        kv.set(k("attention.key_length"), u("head_dim")?);
        kv.set(k("attention.value_length"), u("head_dim")?);
        kv.set("general.file_type", Value::U32(file_type));
        kv.set(k("attn_logit_softcapping"), f("attn_logit_softcapping")?);
        kv.set(k("final_logit_softcapping"), f("final_logit_softcapping")?);
        kv.set(k("attention.sliding_window"), u("sliding_window")?);
        Ok(())
    }

    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
        set_vocab_gemma2(cx, kv)
    }
}

/// `Gemma2Model.set_vocab`: the SentencePiece vocabulary of `tokenizer.model`
/// ([`vocab::set_vocab_sentencepiece`], with `config.json`'s `vocab_size`), then
/// `tokenizer.ggml.add_space_prefix` = false. A folder without `tokenizer.model` is refused, as
/// the reference (which has no BPE fallback here) refuses it.
fn set_vocab_gemma2(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<(), ConvertError> {
    let model = cx.dir.join("tokenizer.model");
    if !model.is_file() {
        return Err(ConvertError::UnsupportedTokenizer {
            path: cx.dir.to_path_buf(),
            what: "no tokenizer.model: Gemma 2 is converted from its SentencePiece tokenizer only".into(),
        });
    }
    let n = cx.config.find_u32(&["vocab_size"])?.map(|n| n as usize);
    kv.extend(vocab::set_vocab_sentencepiece(cx.dir, n)?);
    kv.set("tokenizer.ggml.add_space_prefix", Value::Bool(false));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::arch::testing::{config, keys, mapped, owned};

    /// A transformers 5.24 `Gemma2Config` as `save_pretrained` writes it (2 layers, 64 wide).
    const CONFIG: &str = r#"{"architectures": ["Gemma2ForCausalLM"], "attn_logit_softcapping": 50.0,
        "final_logit_softcapping": 30.0, "head_dim": 16, "hidden_size": 64, "intermediate_size": 176,
        "layer_types": ["sliding_attention", "full_attention"], "max_position_embeddings": 8192,
        "model_type": "gemma2", "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
        "query_pre_attn_scalar": 16, "rms_norm_eps": 1e-06,
        "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}, "sliding_window": 6,
        "tie_word_embeddings": true, "vocab_size": 262144}"#;

    #[test]
    fn keys_as_the_reference_writes_them() {
        // Read off convert_hf_to_gguf.py's output for this configuration (--outtype f32): its
        // own order, no TextModel keys (no rope.freq_base).
        let want = owned(vec![
            ("gemma2.context_length", Value::U32(8192)),
            ("gemma2.embedding_length", Value::U32(64)),
            ("gemma2.block_count", Value::U32(2)),
            ("gemma2.feed_forward_length", Value::U32(176)),
            ("gemma2.attention.head_count", Value::U32(4)),
            ("gemma2.attention.head_count_kv", Value::U32(2)),
            ("gemma2.attention.layer_norm_rms_epsilon", Value::F32(1e-6)),
            ("gemma2.attention.key_length", Value::U32(16)),
            ("gemma2.attention.value_length", Value::U32(16)),
            ("general.file_type", Value::U32(0)),
            ("gemma2.attn_logit_softcapping", Value::F32(50.0)),
            ("gemma2.final_logit_softcapping", Value::F32(30.0)),
            ("gemma2.attention.sliding_window", Value::U32(6)),
        ]);
        assert_eq!(keys(&Gemma2, &config(CONFIG), 0), want);
        let c = config(&CONFIG.replace("\"final_logit_softcapping\": 30.0", "\"final_logit_softcapping\": null"));
        assert!(crate::convert::arch::testing::with_cx(&c, |cx| Gemma2.check(cx)).is_err());
    }

    #[test]
    fn norms_get_one_added_and_lm_head_is_left_out() {
        // gguf-py's TensorNameMap(MODEL_ARCH.GEMMA2, 2); Gemma2Model.modify_tensors/filter_tensors.
        let c = config(CONFIG);
        let plus_one = |name: &str| Mapped::To { name: name.into(), transforms: vec![Transform::Add(1.0)] };
        for (hf, gguf) in [
            ("model.norm.weight", "output_norm.weight"),
            ("model.layers.0.input_layernorm.weight", "blk.0.attn_norm.weight"),
            ("model.layers.0.post_attention_layernorm.weight", "blk.0.post_attention_norm.weight"),
            ("model.layers.1.pre_feedforward_layernorm.weight", "blk.1.ffn_norm.weight"),
            ("model.layers.1.post_feedforward_layernorm.weight", "blk.1.post_ffw_norm.weight"),
        ] {
            assert_eq!(mapped(&Gemma2, &c, hf), plus_one(gguf), "{hf}");
        }
        assert_eq!(mapped(&Gemma2, &c, "model.layers.1.mlp.gate_proj.weight"), Mapped::plain("blk.1.ffn_gate.weight"));
        assert_eq!(mapped(&Gemma2, &c, "model.embed_tokens.weight"), Mapped::plain("token_embd.weight"));
        assert_eq!(mapped(&Gemma2, &c, "lm_head.weight"), Mapped::Skip);
        assert_eq!(mapped(&Gemma2, &c, "model.layers.0.self_attn.q_norm.weight"), Mapped::Unknown);
    }
}
