//! Converting every tensor of a model to one ggml type in place, keeping the metadata and the
//! layout ([`dequantize`], `gguf dequantize`): usually to a float type, any type with a quantizer
//! here. The conversion streams as [`requantize`](super::requant::requantize) does (the same
//! writer, [`super::requant`]).

use std::path::Path;

use super::file_type::LlamaFileType;
use super::globs::NameGlobs;
use super::requant::{release, write_converted, OutKv, OutTensor, Progress, RequantizeReport, TensorBytes};
use crate::codec;
// Named in the docs.
#[cfg(doc)]
use crate::codec::CodecError;
use crate::container::{Gguf, IfExists, Source, TensorInfo, Value, WriteOptions};
use crate::error::Result;
use crate::format::GgmlType;

/// Options of [`dequantize`].
#[non_exhaustive]
pub struct DequantizeOptions<'a> {
    /// The target type of converted tensors.
    pub target: GgmlType,
    /// Name globs of tensors to leave as they are ([`NameGlobs`] gives the syntax), each the
    /// bytes of a pattern (UTF-8 text, or bytes that are not UTF-8).
    pub exclude: Vec<Vec<u8>>,
    /// Called after each chunk with (bytes of source tensor data done, total).
    pub progress: Option<Progress<'a>>,
    /// What becomes of a file at the output path: replaced (the default) or kept, the write
    /// failing ([`IfExists`]).
    pub if_exists: IfExists,
}

impl<'a> DequantizeOptions<'a> {
    /// Options converting to `target`, excluding nothing, without progress reports.
    pub fn new(target: GgmlType) -> Self {
        DequantizeOptions { target, exclude: Vec::new(), progress: None, if_exists: IfExists::Replace }
    }

    /// These options leaving the tensors whose names match one of the globs `exclude` (each a
    /// `String`, `&str` or bytes) as they are.
    pub fn with_exclude<P: Into<Vec<u8>>>(mut self, exclude: impl IntoIterator<Item = P>) -> Self {
        self.exclude = exclude.into_iter().map(Into::into).collect();
        self
    }

    /// These options reporting progress to `progress`.
    pub fn with_progress(mut self, progress: Progress<'a>) -> Self {
        self.progress = Some(progress);
        self
    }

    /// These options with [`if_exists`](Self::if_exists) set to `if_exists`.
    pub fn with_if_exists(mut self, if_exists: IfExists) -> Self {
        self.if_exists = if_exists;
        self
    }

    /// Whether [`dequantize`] converts `info`: a tensor not already of the target type, with at
    /// least two dimensions (any dimensions if the target and not the source is a float type:
    /// `F32`, `F16`, `BF16`), whose row length (`ne[0]`) is a multiple of the target's block
    /// size and whose name matches no `exclude` pattern (an invalid pattern matches nothing here;
    /// [`dequantize`] refuses it).
    pub fn converts(&self, info: &TensorInfo<'_>) -> bool {
        self.converts_with(info, &NameGlobs::new(&self.exclude).unwrap_or_default())
    }

    /// [`converts`](Self::converts) with `exclude` compiled.
    fn converts_with(&self, info: &TensorInfo<'_>, exclude: &NameGlobs) -> bool {
        let float_target = matches!(self.target, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16);
        let float_source = matches!(info.dtype, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16);
        info.dtype != self.target
            && (if float_target { !float_source || info.shape.len() >= 2 } else { info.shape.len() >= 2 })
            && info.ne().row_len().is_multiple_of(self.target.block_size())
            && !exclude.is_match(info.name.as_bytes())
    }
}

/// Writes `src` to `out` with its tensors converted to `opts.target` as
/// [`DequantizeOptions::converts`] says, keeping every key (with `general.file_type` set to
/// the file type of a file mostly of the target, [`LlamaFileType::of_tensor_type`], where it has
/// one), the tensor order, the version, byte order
/// and alignment.
///
/// # Errors
/// [`CodecError::UnsupportedQuantize`] if the
/// target cannot be quantized to, [`CodecError::ImportanceRequired`] if ggml quantizes it only
/// with importance weights (IQ2_XXS, IQ2_XS, IQ1_S); the codecs' errors; [`ErrorKind::Io`](crate::ErrorKind::Io) from writing (the file at
/// `out` is then untouched).
pub fn dequantize<S: Source>(
    src: &Gguf<S>,
    out: impl AsRef<Path>,
    opts: &DequantizeOptions<'_>,
) -> Result<RequantizeReport> {
    if !codec::can_quantize(opts.target) {
        return Err(codec::no_quantizer(opts.target).into());
    }
    let file_type = LlamaFileType::of_tensor_type(opts.target).map(LlamaFileType::number);
    let mut kvs: Vec<(Vec<u8>, OutKv<'_>)> = Vec::with_capacity(src.kv_count() + 1);
    for kv in src.metadata() {
        let v = match (kv.key.as_bytes(), file_type) {
            (b"general.file_type", Some(ft)) => OutKv::New(Value::U32(ft)),
            _ => OutKv::Src(kv.value),
        };
        kvs.push((kv.key.as_bytes().to_vec(), v));
    }
    if let (false, Some(ft)) = (kvs.iter().any(|(k, _)| k == b"general.file_type"), file_type) {
        kvs.push((b"general.file_type".to_vec(), OutKv::New(Value::U32(ft))));
    }
    let exclude = NameGlobs::new(&opts.exclude)?;
    let tensors = src
        .tensors()
        .map(|info| {
            let target = if opts.converts_with(&info, &exclude) { opts.target } else { info.dtype };
            OutTensor { shard: 0, name: info.name, ne: info.ne(), info, target, weights: None }
        })
        .collect();
    let data = |t: &OutTensor<'_>| src.tensor_data(&t.info);
    let give_back = |_: &OutTensor<'_>, part: &[u8]| release(src, part);
    let bytes = TensorBytes { data: &data, give_back: &give_back };
    write_converted(out.as_ref(), opts.if_exists, WriteOptions::like(src), kvs, tensors, bytes, opts.progress)
}
