//! Choosing each tensor's type as `llama-quantize` does: [`plan_file_type`] turns a llama.cpp file type
//! ([`LlamaFileType`], e.g. `Q4_K_M`) and the options of [`QuantizeParams`] into one
//! [`TensorPlan`] per tensor, with the [`Rule`] that chose its type;
//! [`requantize`](super::requant::requantize) writes the file.
//!
//! The rules are those of llama.cpp commit `0c1e57098` ([`LLAMA_CPP_COMMIT`]),
//! `src/llama-quant.cpp` (`llama_tensor_get_type`, `tensor_allows_quantization`,
//! `tensor_type_fallback`, `tensor_requires_imatrix`) and `tools/quantize/quantize.cpp` (the file
//! types and their names). In that order, for each tensor:
//!
//! 1. **Kept** ([`Rule::Kept`]): with `COPY`; a tensor of fewer than two dimensions (trailing
//!    `ne` of 1 do not count, as `ggml_n_dims`); a name not ending in `weight`; a name llama.cpp
//!    never quantizes (`_norm.weight`, `ffn_gate_inp.weight`, `altup`, `laurel`,
//!    `position_embd.weight`, `ssm_conv1d`, … — [`Kept::NeverQuantized`] names the match);
//!    `output.weight` with `--leave-output-tensor`; a name matching one of our own `exclude`
//!    globs (not a llama-quantize option).
//! 2. **User types**: `--token-embedding-type` for `token_embd.weight` and
//!    `per_layer_token_embd.weight` (the latter only if no `--tensor-type` pattern names it),
//!    `--output-tensor-type` for `output.weight` — whatever the file type.
//! 3. Otherwise the file type's **default** type ([`LlamaFileType::default_type`]). If that is a
//!    quantized type: the first `--tensor-type` pattern found in the name (an ECMAScript-like
//!    regular expression searched anywhere in the name, as `std::regex_search`; the pattern is
//!    lower-cased as llama-quantize does) chooses the type; else, unless `--pure`, the
//!    **mix rules** ([`MixRule`]) may promote it by tensor category (`output`, `token_embd`,
//!    `attn_v`, `attn_k`, `attn_q`, `attn_qkv`, `attn_output`, `ffn_down`, `ffn_gate`, `ffn_up`),
//!    layer position (`use_more_bits`: the first and last eighth of the layers and every third
//!    between), the model's grouped-query factor (`head_count / head_count_kv` of layer 0),
//!    expert count, tied embeddings (no `output.weight`: `token_embd.weight` follows the
//!    output rule), the architecture (`falcon`, `glm5-next`, `bailingmoe3`) and the 70B Llama
//!    shape (`llama` of 80 layers with grouped-query attention; `deci`, `olmo`, `qwen2` of 80,
//!    `jais2` of 68). The counters of `attn_v`/`ffn_*` tensors advance in llama-quantize's
//!    tensor order (by layer number, then name) and only for tensors that reach the mix rules.
//! 4. **Fallback** ([`Rule::Fallback`]): a row length (`ne[0]`) that is not a multiple of the
//!    chosen type's block size falls back: IQ1_S…IQ3_S and IQ4_XS → IQ4_NL; Q2_0, Q2_K, Q3_K,
//!    TQ1_0, TQ2_0 → Q4_0; Q4_K → Q5_0; Q5_K → Q5_1; Q6_K → Q8_0; and to F16 if the fallback
//!    (or a 32-block type) still does not fit.
//!
//! [`TensorPlan::requires_imatrix`] marks the tensors llama-quantize refuses to write without an
//! importance matrix (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, and Q2_K in a `Q2_K_S` file;
//! never `token_embd`/`output`). With an importance matrix ([`QuantizeParams::imatrix`], see
//! [`super::imatrix`]) a few mix rules change as llama-quantize's `has_imatrix` makes them: IQ3_XXS
//! keeps `attn_v` at IQ3_XXS (not IQ3_S) and `ffn_down` at its default (not Q4_K/Q3_K);
//! IQ4_NL/IQ4_XS no longer raise the first eighth of `ffn_down` to Q5_K; Q4_0 and Q5_0 raise it
//! to Q4_1 and Q5_1.
//!
//! **Names end at a NUL byte**, as in llama.cpp: ggml's `gguf_init_from_file` names each tensor
//! with `ggml_set_name`, a C string copied into `char name[GGML_MAX_NAME]`, so every rule above,
//! the tensor order, the `--tensor-type` patterns, the importance matrix's entries and the output
//! see a name up to its first NUL (`blk.0.attn_v\xff\0.weight` is `blk.0.attn_v\xff`, which does
//! not end in `weight`: kept). Two tensors whose names are equal once cut are refused, as
//! llama.cpp's loader refuses them (`invalid model: tensor '…' is duplicated`); a tensor whose
//! name is empty once cut (it starts with a NUL) is left out of the plan and the output, as
//! llama-quantize drops it (it takes the empty name for a pruned layer's). This is a
//! reference behaviour we match (the outputs are byte-identical), not a rule of the GGUF format,
//! which allows any bytes in a name; [`TensorPlan::name`] is the cut name.
//!
//! The model facts come from the metadata, as llama.cpp's loader reads them (with `--override-kv`
//! values in force): `general.architecture`, `{arch}.block_count`, `{arch}.nextn_predict_layers`,
//! `{arch}.expert_count`, `{arch}.attention.head_count` and `head_count_kv` (a number or a
//! per-layer array). Unlike llama-quantize, any architecture is planned (llama.cpp refuses one it
//! does not know), and any integer type is accepted for these keys.

mod ecmascript;
mod params;
mod plan;
#[cfg(test)]
mod reference_tests;
mod rules;

pub use params::{QuantizeParams, TensorTypeOverride};
#[cfg(feature = "mmap")]
pub use plan::plan_file_type_sharded;
pub use plan::{plan_file_type, source_file_type};
pub(crate) use plan::{plan_shards, source_file_type_of};
pub use rules::{Kept, MixRule, Override, Rule, TensorPlan};

// Named in the docs.
#[cfg(doc)]
use super::file_type::LlamaFileType;

/// The llama.cpp commit whose `llama-quantize` rules [`plan_file_type`] follows.
pub const LLAMA_CPP_COMMIT: &str = "0c1e57098";

/// `GGML_QNT_VERSION`: the value llama-quantize writes as `general.quantization_version`.
pub const GGML_QNT_VERSION: u32 = 2;
