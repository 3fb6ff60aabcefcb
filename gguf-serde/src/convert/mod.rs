//! Hugging Face checkpoints to GGUF, as llama.cpp's `convert_hf_to_gguf.py` converts them
//! (cargo feature `convert`).
//!
//! The reference is the script and its `conversion/` package (`base.py`: `ModelBase` and
//! `TextModel`; one module per family) with gguf-py (`constants.py`, `tensor_mapping.py`,
//! `gguf_writer.py`). What is followed, and where:
//!
//! - **Input** ([`checkpoint`]): `config.json` and the safetensors files, memory-mapped; tensors
//!   in the reference's order (files in name order, names sorted within a file). Source types
//!   F32, F16, BF16, and F8_E4M3/F8_E5M2 widened to F32; a pre-quantized checkpoint
//!   (`quantization_config`) is dequantized as the reference's `dequant_model` does ([`quant`]:
//!   FP8 block scales; other methods refused by name), except MXFP4 (U8 blocks and scales),
//!   which an architecture repacks as ggml `MXFP4` without dequantizing it
//!   ([`Architecture::mxfp4_tensors`], gpt-oss). The architectures read `config.json` as transformers' `AutoConfig` loads it
//!   ([`config_defaults`]: the class defaults and the RoPE normalisation), as the reference does.
//! - **Architecture** ([`arch`]): chosen by `config.json`'s `architectures[0]`; it maps names,
//!   transforms tensors and writes the `{arch}.*` keys. An unknown class is refused.
//! - **Tensors**: the architecture's generated tensors first, then the checkpoint's in order;
//!   each is refused if the architecture does not know it, and the model is refused if a tensor
//!   it needs is missing — before anything is written, naming the tensor. The reference's tensor
//!   model ([`Mapped`]): a tensor renamed and transformed, a fused tensor split in several
//!   ([`Mapped::Split`], [`Transform::Slice`]), several joined in one ([`Mapped::Part`]: experts
//!   stacked as `torch.stack`, tensors concatenated as `torch.cat`; the joined tensor comes where
//!   its last part comes, as the reference yields it, and a part missing or given twice is
//!   refused naming the tensor), values changed a chunk of rows at a time ([`Transform::Add`],
//!   [`Transform::Rows`]), a tensor viewed under another shape and its last two dimensions
//!   swapped ([`Transform::Reshape`], [`Transform::Transpose`], a matrix at a time).
//! - **Shapes**: a Hugging Face `[out, in]` weight is the canonical GGUF shape `[out, in]`,
//!   stored `ne = [in, out]`; a stack of `n` experts `[out, in]` is `[n, out, in]`, stored
//!   `ne = [in, out, n]`. Transforms work on rows of the last dimension (`ne[0]`), never cutting
//!   one but by a transposition.
//! - **Types** ([`output_type`], `ModelBase.prepare_tensors`): F32 for 1-D tensors and names
//!   ending in `_norm.weight`; unless the architecture forces a type
//!   ([`Architecture::force_type`], `tensor_force_quant`), F32 for the reference's always-F32
//!   tensors ([`ALWAYS_F32`]: routers, positional embeddings, …) and names not ending in
//!   `.weight`; the others get the output type; a type whose blocks do not divide the row (the
//!   last canonical dimension: Q8_0's 32) falls back to F16.
//!   [`OutType::Auto`] is the type of the first 2-D-or-more BF16 or F16 source tensor (BF16 or
//!   F16), F16 when there is none. Values: a BF16 source is widened to F32 first, an F16 source
//!   stays F16 through the transforms; F16/BF16 round to nearest even; Q8_0 is ggml's reference
//!   quantizer, byte-identical to gguf-py's.
//! - **Sizes** ([`ParamCounts`], [`size_label`]): counted on the tensors as written (after
//!   stacking), as gguf-py's writer counts them: a mixture of experts is `{n_expert}x{size}`.
//! - **Keys** ([`plan`]), in the reference's order: `general.architecture`; keys written while
//!   the tensors are prepared ([`arch::Architecture::early_keys`]); `general.type = "model"`;
//!   the `general.*` model keys ([`general_keys`]); the hyper-parameters with
//!   `general.file_type` ([`arch::Architecture::parameters`]);
//!   `general.quantization_version = 2`; the tokenizer ([`arch::Architecture::vocab`]). A key
//!   written twice keeps its first place with the last value, as gguf-py's writer does.
//! - **Output**: alignment 32, tensor data streamed a chunk of rows at a time (memory is one
//!   chunk, [`CHUNK_ELEMS`] `f32` values, whatever the model's size or expert count: a joined
//!   tensor is written part by part into its place; the mapped source pages of
//!   each chunk are released once it is converted, [`Checkpoint::release`], so they do not pile
//!   up in the resident size either), written to a temporary file renamed into place
//!   ([`AtomicFile`](crate::AtomicFile)): a failure leaves no partial file. Split
//!   ([`ConvertOptions::split_max_size`]), the shards are written straight from the conversion and
//!   renamed into place together once all are complete ([`write_plan`]).
//!   Converting and writing overlap: a second thread hands each converted chunk to the file
//!   while the next is converted (two chunks in flight at most, so memory is three chunks of
//!   output bytes beside the `f32` chunk).
//!
//! The code: `error.rs` ([`ConvertError`]), `naming.rs` (output file names), `planning.rs`
//! ([`plan`]: tensors, types and keys), `rows.rs` (the row view of transforms, splits and
//! joins), `write.rs` ([`write_plan`]: streaming the tensors),
//! [`vocab_hook`] (each architecture's tokenizer), with the input, architectures, general keys and
//! tokenizers in their modules above. [`lora`] converts PEFT LoRA adapters as llama.cpp's
//! `convert_lora_to_gguf.py` does, with the base model's architecture.

pub mod arch;
pub mod checkpoint;
pub mod config_defaults;
mod error;
pub mod general;
pub mod lora;
mod naming;
mod planning;
pub mod quant;
mod rows;
pub mod vocab;
pub mod vocab_hook;
mod write;

use crate::{GgmlType, Value};

pub use arch::{
    Architecture, ExtraTensor, ForceType, Join, Mapped, Mxfp4Tensor, RowFn, RowTransform, Target, Transform,
};
pub use checkpoint::{Checkpoint, HfConfig, SourceTensor};
pub use error::ConvertError;
use error::Result;
pub use naming::{default_file_name, naming_convention, FILE_NAME_MAX};
pub use planning::{general_keys, plan, plan_with, JoinedPart, Plan, PlannedTensor, TensorData};
pub use write::{convert, convert_with, permuted_row, write_plan, ConvertReport};

/// Elements converted per chunk by default: 1 Mi `f32` (4 MiB); at least one row.
pub const CHUNK_ELEMS: u64 = 1 << 20;

/// The output type (`--outtype`), `convert_hf_to_gguf.py`'s choices without the ternary ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutType {
    /// Everything F32 (`ALL_F32`, `general.file_type` 0).
    F32,
    /// Matrices F16 (`MOSTLY_F16`, 1).
    F16,
    /// Matrices BF16 (`MOSTLY_BF16`, 32).
    BF16,
    /// Matrices Q8_0, F16 where a row is not whole blocks of 32 (`MOSTLY_Q8_0`, 7).
    Q8_0,
    /// BF16 or F16 as the first such source matrix is, F16 if none (`GUESSED`).
    Auto,
}

impl OutType {
    /// The ggml type of the matrices (`None` for [`OutType::Auto`], resolved per checkpoint).
    pub fn ggml(self) -> Option<GgmlType> {
        Some(match self {
            OutType::F32 => GgmlType::F32,
            OutType::F16 => GgmlType::F16,
            OutType::BF16 => GgmlType::BF16,
            OutType::Q8_0 => GgmlType::Q8_0,
            OutType::Auto => return None,
        })
    }

    /// llama.cpp's `general.file_type` (`llama_ftype`): 0, 1, 32, 7 (`Auto`: that of F16).
    pub fn file_type(self) -> u32 {
        match self {
            OutType::F32 => 0,
            OutType::F16 | OutType::Auto => 1,
            OutType::BF16 => 32,
            OutType::Q8_0 => 7,
        }
    }

    /// The name in output file names: `F32`, `F16`, `BF16`, `Q8_0` (gguf-py's `LlamaFileType`
    /// name after its first `_`).
    pub fn label(self) -> &'static str {
        match self {
            OutType::F32 => "F32",
            OutType::F16 | OutType::Auto => "F16",
            OutType::BF16 => "BF16",
            OutType::Q8_0 => "Q8_0",
        }
    }
}

impl std::str::FromStr for OutType {
    type Err = String;

    /// `f32`, `f16`, `bf16`, `q8_0`, `auto` (any case).
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "f32" => Ok(OutType::F32),
            "f16" => Ok(OutType::F16),
            "bf16" => Ok(OutType::BF16),
            "q8_0" => Ok(OutType::Q8_0),
            "auto" => Ok(OutType::Auto),
            _ => Err(format!("unknown output type {s:?}: f32, f16, bf16, q8_0 or auto")),
        }
    }
}

/// Key/value pairs in writing order, with gguf-py's rule for a key given twice: it keeps its
/// first place and takes the last value (`GGUFWriter.add_key_value`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Kvs(pub Vec<(String, Value)>);

impl Kvs {
    /// Sets `key` (replacing its value in place if it is there, else appending).
    pub fn set(&mut self, key: impl Into<String>, value: Value) {
        let key = key.into();
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }

    /// Sets every pair of `pairs`, in order.
    pub fn extend(&mut self, pairs: impl IntoIterator<Item = (String, Value)>) {
        for (k, v) in pairs {
            self.set(k, v);
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// GGUF tensor names the reference always writes as F32 unless the architecture forces a type
/// (`ModelBase.prepare_tensors`' list, kept as llama.cpp's quantizer keeps them): `{bid}` is a
/// block number. The router (`ffn_gate_inp`, `ffn_gate_inp_shexp`), positional and token-type
/// embeddings, SSM and short convolutions, RWKV's time-mix weights, WavTokenizer's `posnet`
/// norms, vision and audio positional embeddings, Gemma 3n's AltUp coefficients, Kimi's
/// convolutions and DeepSeek's sparse-attention indexer projection; each with `.weight`.
pub const ALWAYS_F32: &[&str] = &[
    "blk.{bid}.ffn_gate_inp",
    "blk.{bid}.ffn_gate_inp_shexp",
    "position_embd",
    "token_types",
    "blk.{bid}.ssm_conv1d",
    "blk.{bid}.shortconv.conv",
    "blk.{bid}.time_mix_first",
    "blk.{bid}.time_mix_w1",
    "blk.{bid}.time_mix_w2",
    "blk.{bid}.time_mix_decay_w1",
    "blk.{bid}.time_mix_decay_w2",
    "blk.{bid}.time_mix_lerp_fused",
    "posnet.{bid}.norm1",
    "posnet.{bid}.norm2",
    "v.position_embd",
    "a.position_embd",
    "blk.{bid}.altup_correct_coef",
    "blk.{bid}.altup_predict_coef",
    "blk.{bid}.ssm_conv1d_q",
    "blk.{bid}.ssm_conv1d_k",
    "blk.{bid}.ssm_conv1d_v",
    "blk.{bid}.indexer.proj",
];

/// Whether `name` is `pattern` + `.weight` with `{bid}` standing for a decimal block number.
fn matches_pattern(name: &str, pattern: &str) -> bool {
    let Some(base) = name.strip_suffix(".weight") else { return false };
    match pattern.split_once("{bid}") {
        None => base == pattern,
        Some((pre, post)) => base
            .strip_prefix(pre)
            .and_then(|rest| rest.strip_suffix(post))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
    }
}

/// The ggml type a tensor named `gguf_name` of canonical `shape` is written as for the
/// resolved `outtype` (not [`OutType::Auto`]), with the type the architecture forces, if any
/// ([`Architecture::force_type`], the reference's `tensor_force_quant`). The reference's rules,
/// in its order (`ModelBase.prepare_tensors`):
/// 1. 1-D tensors and names ending in `_norm.weight` are F32, whatever is forced;
/// 2. unless a type is forced, names in [`ALWAYS_F32`] and names not ending in `.weight`
///    (`.lora_a`, `.lora_b`) are F32;
/// 3. the forced type, or the output type;
/// 4. a type whose blocks do not divide the row (the last canonical dimension: Q8_0's 32)
///    falls back to F16, as the reference does on gguf-py's `QuantError`.
pub fn output_type(gguf_name: &str, shape: &[u64], outtype: OutType, force: Option<ForceType>) -> GgmlType {
    if shape.len() <= 1 || gguf_name.ends_with("_norm.weight") {
        return GgmlType::F32;
    }
    let t = match force {
        Some(ForceType::Type(t)) => t,
        Some(ForceType::OutType) => outtype.ggml().unwrap_or(GgmlType::F16),
        None => {
            let weight_like = [".weight", ".lora_a", ".lora_b"].iter().any(|s| gguf_name.ends_with(s));
            if !weight_like || ALWAYS_F32.iter().any(|p| matches_pattern(gguf_name, p)) {
                return GgmlType::F32;
            }
            outtype.ggml().unwrap_or(GgmlType::F16)
        }
    };
    let row = shape.last().copied().unwrap_or(0);
    if row.checked_rem(t.block_size()) == Some(0) {
        t
    } else {
        GgmlType::F16
    }
}

pub use general::{size_label, GeneralKeys, NameParts, ParamCounts};

/// Options of [`plan`] and [`convert`].
#[derive(Clone, Copy)]
pub struct ConvertOptions<'p> {
    /// The output type.
    pub outtype: OutType,
    /// `general.name`; the folder's name when `None` (temporary: see [`general_keys`]).
    pub name: Option<&'p str>,
    /// Called with the number of source bytes converted after each chunk.
    pub progress: Option<&'p (dyn Fn(u64) + Sync)>,
    /// Elements converted per chunk ([`CHUNK_ELEMS`] by default; at least one row).
    pub chunk_elems: u64,
    /// Shards of at most this many bytes of tensor data (`--split-max-size`, counted as
    /// `llama-gguf-split` counts them), `None` for one file.
    pub split_max_size: Option<u64>,
    /// The front matter of the model card (`README.md`), parsed from YAML by the caller
    /// ([`general::front_matter`] gives its text); this crate parses no YAML, so without it the
    /// card's `name`, `license`, `tags`, … are not written.
    pub model_card: Option<&'p serde_json::Value>,
    /// The reference's metadata override (`convert_hf_to_gguf.py --metadata FILE`), parsed from
    /// JSON by the caller: an object of GGUF keys that replace what the checkpoint's files give
    /// ([`general::OVERRIDE_KEYS`]; `null` removes a key; other keys are ignored, as there:
    /// [`general::ignored_override_keys`]). It also changes the default file name when it sets
    /// the name, basename, finetune, version or size label.
    pub metadata_override: Option<&'p serde_json::Value>,
    /// Whether the tokenizer is converted (`true` by default, as the reference always does, and
    /// a checkpoint without a tokenizer the architecture can read is refused). `false` writes no
    /// `tokenizer.*` keys: for a converter that writes them itself (llama.cpp refuses a model
    /// file without `tokenizer.ggml.model`).
    pub vocab: bool,
    /// The reference's `--fp8-as-q8` (`false` by default): the tensors made from a weight
    /// dequantized from FP8 with its scale ([`quant`]) are written as Q8_0 (F16 where a row is not
    /// whole Q8_0 blocks; 1-D tensors and norms stay F32) instead of the output type, unless the
    /// architecture forces a type itself ([`Architecture::force_type`]).
    pub fp8_as_q8: bool,
    /// What becomes of a file at the output path (or with [`split_max_size`](Self::split_max_size)
    /// a shard's): replaced (the default) or kept, the write failing
    /// ([`IfExists`](crate::container::IfExists)).
    pub if_exists: crate::container::IfExists,
}

impl ConvertOptions<'_> {
    /// Options for `outtype`: no name, no progress, chunks of [`CHUNK_ELEMS`], one file.
    pub fn new(outtype: OutType) -> Self {
        ConvertOptions {
            outtype,
            name: None,
            progress: None,
            chunk_elems: CHUNK_ELEMS,
            split_max_size: None,
            model_card: None,
            metadata_override: None,
            vocab: true,
            fp8_as_q8: false,
            if_exists: crate::container::IfExists::Replace,
        }
    }
}

impl Default for OutType {
    /// [`OutType::Auto`], the reference's default.
    fn default() -> Self {
        OutType::Auto
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_by_hand() {
        let got: Vec<u64> = (0..8).map(|r| permuted_row(r, 8, 1)).collect();
        assert_eq!(got, [0, 4, 1, 5, 2, 6, 3, 7]);
        let got: Vec<u64> = (0..8).map(|r| permuted_row(r, 8, 2)).collect();
        assert_eq!(got, [0, 2, 1, 3, 4, 6, 5, 7]);
    }

    #[test]
    fn types_as_the_reference_chooses() {
        assert_eq!(output_type("blk.0.attn_norm.weight", &[64], OutType::Q8_0, None), GgmlType::F32);
        assert_eq!(output_type("blk.0.attn_q.weight", &[64, 64], OutType::Q8_0, None), GgmlType::Q8_0);
        assert_eq!(output_type("blk.0.ffn_down.weight", &[64, 80], OutType::Q8_0, None), GgmlType::F16);
        assert_eq!(output_type("blk.0.attn_q.bias", &[64], OutType::BF16, None), GgmlType::F32);
        assert_eq!(output_type("token_embd.weight", &[32, 64], OutType::BF16, None), GgmlType::BF16);
        assert_eq!(output_type("blk.0.attn_q_norm.weight", &[16], OutType::F16, None), GgmlType::F32);
        // the reference's always-F32 list, and a forced type above it
        assert_eq!(output_type("blk.3.ffn_gate_inp.weight", &[8, 64], OutType::BF16, None), GgmlType::F32);
        assert_eq!(output_type("blk.3.ffn_gate_inp_shexp.weight", &[1, 64], OutType::Q8_0, None), GgmlType::F32);
        assert_eq!(output_type("position_embd.weight", &[64, 64], OutType::F16, None), GgmlType::F32);
        assert_eq!(output_type("blk.x.ffn_gate_inp.weight", &[8, 64], OutType::BF16, None), GgmlType::BF16);
        assert_eq!(output_type("blk.3.ffn_gate_exps.weight", &[8, 16, 64], OutType::Q8_0, None), GgmlType::Q8_0);
        let q8 = Some(ForceType::Type(GgmlType::Q8_0));
        assert_eq!(output_type("blk.3.ffn_gate_inp.weight", &[8, 64], OutType::F16, q8), GgmlType::Q8_0);
        assert_eq!(output_type("blk.3.ffn_gate_inp.weight", &[8, 48], OutType::F16, q8), GgmlType::F16);
        assert_eq!(output_type("blk.3.attn_norm.weight", &[8, 64], OutType::F16, q8), GgmlType::F32);
        assert_eq!(output_type("blk.3.thing.bias", &[8, 64], OutType::F16, Some(ForceType::OutType)), GgmlType::F16);
    }

    #[test]
    fn size_labels_as_gguf_py_writes_them() {
        // Values worked out from gguf-py's model_weight_count_rounded_notation.
        assert_eq!(general::weight_count_rounded(134_515_008, 2), "135M");
        assert_eq!(general::weight_count_rounded(1_235_814_400, 2), "1.2B");
        assert_eq!(general::weight_count_rounded(86_016, 2), "86K");
        assert_eq!(general::weight_count_rounded(7_600, 2), "7.6K");
        assert_eq!(general::weight_count_rounded(999, 2), "1.0K");
    }

    #[test]
    fn a_key_given_twice_keeps_its_place() {
        let mut kv = Kvs::default();
        kv.set("a", Value::U32(1));
        kv.set("b", Value::U32(2));
        kv.set("a", Value::U32(3));
        assert_eq!(kv.0, vec![("a".to_owned(), Value::U32(3)), ("b".to_owned(), Value::U32(2))]);
    }

    #[test]
    fn names_follow_the_llama_map() {
        let m = arch::llama::LLAMA_MAP;
        assert_eq!(m.get("model.layers.12.self_attn.o_proj.weight", 13).as_deref(), Some("blk.12.attn_output.weight"));
        assert_eq!(m.get("model.layers.12.self_attn.o_proj.weight", 12), None);
        assert_eq!(m.get("model.layers.0.self_attn.q_proj.bias", 1).as_deref(), Some("blk.0.attn_q.bias"));
        assert_eq!(m.get("model.layers.01.mlp.up_proj.weight", 2), None);
        assert_eq!(m.get("lm_head.weight", 2).as_deref(), Some("output.weight"));
        assert_eq!(m.get("model.norm.scale", 2), None);
    }

    #[test]
    fn source_names_invert_the_map() {
        let m = arch::llama::LLAMA_MAP;
        assert_eq!(
            m.source_name("blk.12.attn_output.weight").as_deref(),
            Some("model.layers.12.self_attn.o_proj.weight")
        );
        assert_eq!(m.source_name("blk.0.attn_q.bias").as_deref(), Some("model.layers.0.self_attn.q_proj.bias"));
        assert_eq!(m.source_name("output.weight").as_deref(), Some("lm_head.weight"));
        assert_eq!(m.source_name("output_norm.weight").as_deref(), Some("model.norm.weight"));
        assert_eq!(m.source_name("blk.x.attn_q.weight"), None);
        assert_eq!(m.source_name("blk.1.attn_qkv.weight"), None);
        assert_eq!(m.source_name("rope_freqs.weight"), None);
        assert_eq!(m.source_name("output_norm.scale"), None);
        for hf in [
            "model.layers.3.mlp.down_proj.weight",
            "model.embed_tokens.weight",
            "model.layers.0.input_layernorm.weight",
        ] {
            let g = m.get(hf, 4).unwrap();
            assert_eq!(m.source_name(&g).as_deref(), Some(hf));
        }
    }
}
