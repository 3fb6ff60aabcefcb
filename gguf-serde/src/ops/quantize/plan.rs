//! The plan of a whole model ([`plan_file_type`]): the rules over its tensors in llama-quantize's
//! order, and the file type `COPY` keeps ([`source_file_type`]).

use super::params::QuantizeParams;
use super::rules::{
    category, is_attn_v, kept_reason, requires_imatrix, trimmed_ne, Category, ModelFacts, Rule, State, TensorPlan,
};
use crate::container::{Gguf, Source, TensorInfo, ValueRef};
use crate::error::Result;
use crate::error::{Error, QuantizeError};
use crate::format::GgmlType;
use crate::format::GgufStr;
use crate::ops::file_type::guessed_number;
use crate::ops::globs::NameGlobs;
use crate::ops::kv_override::{KvOverride, KvOverrideValue};
use crate::ops::tensor_order::{c_name, llama_tensor_order, ordered_tensors};

/// Each tensor's type in llama-quantize's output for `params`, in its output order
/// ([`llama_tensor_order`]; with [`QuantizeParams::keep_split`], file order), with the rule that
/// chose it; see the [module docs](super).
///
/// # Errors
/// [`QuantizeError`] where llama-quantize fails: a row length no fallback fits (e.g. Q1_0 rows
/// that are not whole 128-blocks), or, in a model with experts, an `ffn_*` tensor whose name has
/// no layer number in `[0, block_count)`; [`QuantizeError::Refused`]
/// for an `exclude` pattern that is not a valid glob ([`NameGlobs`]), and (with the tensor's name as
/// the error's [`tensor`](crate::Error::tensor)) for two tensors whose names are equal up to a NUL
/// byte, which llama.cpp's loader refuses as duplicated (names end at a NUL there: see the
/// [module docs](super)), or for a name of 64 bytes or more (NUL bytes included), which ggml
/// refuses to read.
pub fn plan_file_type<S: Source>(src: &Gguf<S>, params: &QuantizeParams) -> Result<Vec<TensorPlan>> {
    plan_shards(&[src], params)
}

/// [`plan_file_type`] for a split model (read from shard 0's metadata, over the tensors of every shard), in
/// its output order: by layer then name, or with [`QuantizeParams::keep_split`] shard by shard in
/// file order.
///
/// # Errors
/// As [`plan_file_type`].
#[cfg(feature = "mmap")]
pub fn plan_file_type_sharded(
    model: &crate::container::ShardedGguf,
    params: &QuantizeParams,
) -> Result<Vec<TensorPlan>> {
    let shards: Vec<_> = (0..model.shard_count()).filter_map(|i| model.shard(i)).collect();
    plan_shards(&shards, params)
}

/// [`plan_file_type`] over the tensors of `shards` (metadata from the first), each named as
/// llama.cpp names it: up to its first NUL byte ([`c_name`]). A tensor whose name is then empty is
/// left out, as llama-quantize leaves it out (its `remap_layer` gives the empty name, which
/// `llama_model_quantize_impl` takes for a pruned layer's tensor).
pub(crate) fn plan_shards<S: Source>(shards: &[&Gguf<S>], params: &QuantizeParams) -> Result<Vec<TensorPlan>> {
    let Some(meta) = shards.first() else { return Ok(Vec::new()) };
    let ordered = ordered_tensors(shards, params.keep_split);
    // ggml reads a name whole before cutting it: one too long for `char name[GGML_MAX_NAME]`
    // (64) makes `gguf_init_from_file` fail, whatever its NUL bytes.
    if let Some((_, t)) = ordered.iter().find(|(_, t)| t.name.as_bytes().len() >= GGML_MAX_NAME) {
        return Err(Error::from(QuantizeError::refused(format!(
            "a tensor name of {} bytes: ggml refuses names of {GGML_MAX_NAME} bytes or more (GGML_MAX_NAME), so \
             llama-quantize cannot read the model",
            t.name.as_bytes().len()
        )))
        .in_tensor(t.name));
    }
    let mut tensors: Vec<TensorInfo<'_>> =
        ordered.into_iter().map(|(_, t)| TensorInfo { name: c_name(t.name), ..t }).collect();
    check_c_names(&tensors)?;
    tensors.retain(|t| !t.name.is_empty());
    plan_ordered(meta, &tensors, params)
}

/// ggml's `GGML_MAX_NAME`: a tensor name holds fewer bytes.
const GGML_MAX_NAME: usize = 64;

/// Refuses two tensors whose names are equal up to their first NUL byte ([`c_name`]), as
/// llama.cpp's loader (`llama_model_loader`, `src/llama-model-loader.cpp`) refuses them:
/// `invalid model: tensor '…' is duplicated`.
fn check_c_names(tensors: &[TensorInfo<'_>]) -> Result<()> {
    let mut names: Vec<GgufStr<'_>> = tensors.iter().map(|t| t.name).collect();
    names.sort_unstable();
    match names.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(Error::from(QuantizeError::refused(format!(
            "two tensors are named \"{}\" up to a NUL byte, which ends a name in llama.cpp: llama-quantize \
             refuses the model (invalid model: tensor is duplicated)",
            w[0]
        )))
        .in_tensor(w[0])),
        None => Ok(()),
    }
}

/// The plan of `tensors`, taken in the order given, with the model facts of `meta`'s metadata.
fn plan_ordered<S: Source>(
    meta: &Gguf<S>,
    tensors: &[TensorInfo<'_>],
    params: &QuantizeParams,
) -> Result<Vec<TensorPlan>> {
    let exclude = NameGlobs::new(&params.exclude)?;
    let facts = ModelFacts::read(meta, &params.kv_overrides);
    // The categories match text: a name that is not UTF-8 in its lossy form (see `kept_reason`).
    let cats: Vec<Category> = tensors.iter().map(|t| category(&t.name.to_string_lossy())).collect();
    let mut st = State {
        params,
        n_attention_wv: cats.iter().filter(|&&c| is_attn_v(c)).count() as i64,
        n_layer: i64::from(facts.n_layer_all),
        i_attention_wv: 0,
        i_ffn_down: 0,
        i_ffn_gate: 0,
        i_ffn_up: 0,
        has_tied_embeddings: !cats.contains(&Category::Output),
        facts,
    };
    let mut out = Vec::with_capacity(tensors.len());
    for (t, &cat) in tensors.iter().zip(&cats) {
        let ne = trimmed_ne(&t.ne());
        let (target, rule) = match kept_reason(params, &exclude, &st.facts.arch, t.name, ne.dims()) {
            Some(k) => (t.dtype, Rule::Kept(k)),
            None => st.choose(t.name, ne.dims(), cat)?,
        };
        let requires_imatrix =
            !matches!(rule, Rule::Kept(_)) && requires_imatrix(&t.name.to_string_lossy(), target, params.ftype);
        let name = t.name.as_bytes().to_vec();
        out.push(TensorPlan { name, ne, source: t.dtype, target, rule, requires_imatrix });
    }
    Ok(out)
}

/// The `llama_ftype` llama.cpp's loader gives `src` (what `COPY` writes as `general.file_type`):
/// its `general.file_type` if that is a UINT32, else the file type of its most common tensor type
/// (ties to the first in llama-quantize's order) with bit 1024 (`LLAMA_FTYPE_GUESSED`) set.
pub fn source_file_type<S: Source>(src: &Gguf<S>, overrides: &[KvOverride]) -> u32 {
    source_file_type_of(src, &llama_tensor_order(src), overrides)
}

/// [`source_file_type`] with the metadata of `meta` and the tensors `tensors` (in llama-quantize's
/// order, [`llama_tensor_order`]; for a split model, those of every shard).
pub(crate) fn source_file_type_of<S: Source>(
    meta: &Gguf<S>,
    tensors: &[TensorInfo<'_>],
    overrides: &[KvOverride],
) -> u32 {
    let src = meta;
    if let Some(KvOverride { value: KvOverrideValue::Int(n), .. }) =
        overrides.iter().find(|o| o.key == b"general.file_type")
    {
        return *n as u32;
    }
    if let Some(ValueRef::U32(n)) = src.get("general.file_type") {
        return n;
    }
    let mut counts: Vec<(GgmlType, u32)> = Vec::new();
    let (mut best, mut best_n) = (GgmlType::F32, 0u32);
    for t in tensors {
        let n = match counts.iter_mut().find(|(ty, _)| *ty == t.dtype) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                counts.push((t.dtype, 1));
                1
            }
        };
        if best_n < n {
            (best, best_n) = (t.dtype, n);
        }
    }
    guessed_number(best)
}
