//! Architectures: what is particular to one model family, one file each.
//!
//! An [`Architecture`] says, for a Hugging Face class (`config.json`'s `architectures[0]`):
//! the GGUF architecture name (`general.architecture`), the GGUF name of each Hugging Face
//! tensor (as gguf-py's `tensor_mapping.py` gives it for that architecture), the transforms of
//! each tensor (the reference's `modify_tensors`), tensors it generates (the reference's
//! `generate_extra_tensors`), the `{arch}.*` hyper-parameter keys (the reference's
//! `set_gguf_parameters`, with the GGUF types and order it writes them in), the tensors the
//! model needs, and its tokenizer (`set_vocab`). The converter ([`super::convert`]) does the
//! rest: reading, the output types, streaming, metadata order, atomic output.
//!
//! Adding an architecture is one file: a type implementing the trait, passed to
//! [`super::convert_with`] (or added to [`builtin`]). [`text_model_parameters`] is
//! `TextModel.set_gguf_parameters`, which most architectures call first; [`BlockMap`] maps the
//! usual `model.layers.N.*` names.

pub mod deepseek2;
pub mod gemma2;
pub mod gemma3;
pub mod glm4;
pub mod gpt_oss;
pub mod granite;
pub mod llama;
pub mod olmo2;
pub mod phi3;
pub mod qwen2;
pub mod qwen3;
pub mod qwen_moe;
pub mod smollm3;

use std::path::Path;

pub use deepseek2::Deepseek2;
pub use gemma2::Gemma2;
pub use gemma3::Gemma3;
pub use glm4::Glm4;
pub use gpt_oss::GptOss;
pub use granite::Granite;
pub use llama::Llama;
pub use olmo2::Olmo2;
pub use phi3::Phi3;
pub use qwen2::Qwen2;
pub use qwen3::Qwen3;
pub use qwen_moe::{Qwen2Moe, Qwen3Moe};
pub use smollm3::SmolLm3;

use super::checkpoint::HfConfig;
use super::{ConvertError, Kvs};
use crate::{Array, GgmlType, Value};

type Result<T, E = ConvertError> = std::result::Result<T, E>;

/// A change a tensor goes through on its way to the file, applied in the order listed. Values
/// are computed in the reference's working type: F32 for a BF16 or F32 source, F16 for an F16
/// source (a value-changing transform of an F16 tensor is rounded back to F16, as torch's F16
/// arithmetic does).
///
/// Shapes are canonical (outermost first). Every transform works on the tensor as a sequence of
/// *rows* of its last (innermost) dimension (`ne[0]` in ggml's order; a 1-D tensor is rows of
/// one value), so that a tensor of any size is converted a chunk of rows at a time. The
/// row-choosing transforms ([`Permute`](Transform::Permute), [`KeepRows`](Transform::KeepRows),
/// [`Slice`](Transform::Slice)) say which source rows make the output, applied in their order;
/// the value transforms ([`Add`](Transform::Add), [`Rows`](Transform::Rows)) then change the
/// chosen rows, in their order. A row is never cut — the last dimension is kept whole — but by
/// [`Transpose`](Transform::Transpose), which streams whole matrices instead of rows.
#[derive(Clone, Debug, PartialEq)]
pub enum Transform {
    /// `LlamaModel.permute`: the first dimension is viewed as
    /// `[heads, 2, rows / heads / 2]`, the two inner axes swapped; Hugging Face keeps the rotary
    /// halves of a head apart, llama.cpp interleaves them.
    Permute {
        /// Heads of the tensor: the query heads for Q, the key/value heads for K.
        heads: u64,
    },
    /// Adds a constant to every value (Gemma's `RMSNorm` weights, stored minus one).
    Add(f32),
    /// Keeps the first `n` entries of the first dimension (Gemma 3 drops the embedding's rows
    /// beyond the vocabulary): `Slice { dim: 0, start: 0, len: n }`, with `n` capped at the
    /// dimension's size.
    KeepRows(u64),
    /// Keeps `len` entries of dimension `dim` (canonical, outermost first) from `start`: the
    /// reference's `data[..., start:start+len, ...]` when it splits a fused tensor (a fused
    /// `gate_up_proj` of shape `[n_expert, 2 * n_ff, n_embd]` gives its gate as
    /// `Slice { dim: 1, start: 0, len: n_ff }`). `dim` must not be the last dimension (a row is
    /// never cut).
    Slice {
        /// The dimension, outermost first.
        dim: usize,
        /// The first entry kept.
        start: u64,
        /// How many entries are kept.
        len: u64,
    },
    /// A value transform of the architecture's own over a chunk of whole rows, in the working
    /// type; see [`RowTransform`].
    Rows(RowFn),
    /// The reference's `data.view(shape)`: the same values, row-major, under another canonical
    /// shape of the same number of values and the same last dimension (a row is never cut):
    /// `[n_head * (a + b), n]` viewed as `[n_head, a + b, n]` so that a [`Slice`](Self::Slice)
    /// of its middle dimension splits each head. Not together with a [`Stride`](Self::Stride).
    Reshape(Vec<u64>),
    /// Swaps the last two dimensions (torch's `transpose(-2, -1)`): each `[a, b]` matrix of the
    /// tensor (of shape `[..., a, b]`, at least 2-D) becomes its `[b, a]` transpose, as
    /// DeepSeek's `k_b` of `kv_b_proj` and gpt-oss's experts (stored input-major, made ggml's
    /// `[out, in]` matrices). It moves values across rows. Without a [`Stride`](Self::Stride) in
    /// the list it must be the last row-choosing transform, and the tensor is converted whole
    /// matrices at a time (a chunk of rows is rounded up to a matrix), from a source of any type
    /// (FP8 with its scales too); with one, the output rows are gathered value by value from an
    /// element view of the source (F32, F16 or BF16), in the list's order. The value transforms
    /// ([`Add`](Self::Add), [`Rows`](Self::Rows)) then see the transposed rows.
    Transpose,
    /// Keeps every `step`-th entry of dimension `dim` (canonical, outermost first) from `start`:
    /// numpy's `x[..., start::step, ...]`, as the reference splits an interleaved fused tensor
    /// (gpt-oss's `gate_up_proj`, gate and up alternating: `Stride { dim: 1, start: 0, step: 2 }`
    /// is the gate). `dim` may be the last dimension. The output rows are gathered value by
    /// value from an element view of the source, which must be F32, F16 or BF16. The kept size
    /// is `ceil((size - start) / step)`.
    Stride {
        /// The dimension, outermost first.
        dim: usize,
        /// The first entry kept (below the dimension's size).
        start: u64,
        /// The distance between kept entries (positive).
        step: u64,
    },
}

/// A value transform an architecture defines itself ([`Transform::Rows`]): it is given a chunk
/// of consecutive rows of the last dimension and changes them in place. The chunk is in the
/// working type (F32 values; for an F16 source they are rounded back to F16 afterwards, as the
/// reference's F16 arithmetic does). The rows of a chunk are `first_row..first_row + n` of the
/// tensor after its row-choosing transforms, numbered over all its rows (the last dimension's
/// rows: a `[n_ff, n_embd]` tensor has `n_ff` rows of `n_embd` values; for a part of a joined
/// tensor, the rows of that part).
pub trait RowTransform: Send + Sync + std::fmt::Debug {
    /// Changes `values`, `values.len() / row_len` whole rows starting at row `first_row`.
    ///
    /// # Errors
    /// [`ConvertError`] (a [`ConvertError::BadShape`] naming the tensor, say); the conversion
    /// stops and no file is left.
    fn apply(&self, first_row: u64, row_len: usize, values: &mut [f32]) -> Result<()>;
}

/// A shared [`RowTransform`]; two are equal when they are the same object.
#[derive(Clone, Debug)]
pub struct RowFn(pub std::sync::Arc<dyn RowTransform>);

impl RowFn {
    /// Wraps `f`.
    pub fn new(f: impl RowTransform + 'static) -> RowFn {
        RowFn(std::sync::Arc::new(f))
    }
}

impl PartialEq for RowFn {
    fn eq(&self, other: &RowFn) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// How the parts of a many-to-one tensor ([`Mapped::Part`]) are joined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Join {
    /// Along a new outermost dimension, part `i` at index `i` (`torch.stack(parts, dim=0)`):
    /// experts `[n_ff, n_embd]` become `[n_expert, n_ff, n_embd]`. Every part has the same shape.
    Stack,
    /// Along an existing dimension (`torch.cat(parts, dim)`, canonical, outermost first; not the
    /// last): every part has the same shape but in that dimension.
    Concat {
        /// The dimension, outermost first.
        dim: usize,
    },
}

/// One output of a checkpoint tensor: its GGUF name and the transforms that make it.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// The GGUF name.
    pub name: String,
    /// The transforms, in order.
    pub transforms: Vec<Transform>,
}

impl Target {
    /// `name` with `transforms`.
    pub fn new(name: impl Into<String>, transforms: Vec<Transform>) -> Target {
        Target { name: name.into(), transforms }
    }
}

/// What an architecture does with a Hugging Face tensor.
///
/// One-to-one is [`Mapped::To`]; one-to-many (a fused tensor the reference splits) is
/// [`Mapped::Split`]; many-to-one (experts stacked into one tensor per layer, as the reference's
/// `torch.stack`, or tensors concatenated) is [`Mapped::Part`] on each source. A joined tensor
/// is planned once all its parts are seen, at the place of its last part in the checkpoint's
/// order (where the reference yields it), and written part by part into its place: nothing is
/// held in memory but a chunk of rows.
#[derive(Clone, Debug, PartialEq)]
pub enum Mapped {
    /// Written under this GGUF name after these transforms.
    To {
        /// The GGUF name.
        name: String,
        /// The transforms, in order.
        transforms: Vec<Transform>,
    },
    /// Written as several tensors, in this order (each with its own transforms, usually a
    /// [`Transform::Slice`]).
    Split(Vec<Target>),
    /// Part `index` of the `count` parts of the tensor `name`, joined as `join` says. The
    /// transforms apply to this part before joining. The plan is refused when a part is given
    /// twice, when the parts' shapes do not join, or when parts are missing at the end
    /// ([`ConvertError::Layout`], naming the tensor and the missing part indices).
    Part {
        /// The GGUF name of the joined tensor.
        name: String,
        /// This part's place, `0..count`.
        index: u64,
        /// How many parts the tensor has.
        count: u64,
        /// How the parts are joined.
        join: Join,
        /// The transforms of this part, in order.
        transforms: Vec<Transform>,
        /// The joined tensors planned together with this one ([`Batch`]), `None` for this one
        /// alone, as soon as its parts are all there.
        batch: Option<Batch>,
    },
    /// Left out, as the reference leaves it out.
    Skip,
    /// Not a tensor of this architecture: the conversion is refused naming it.
    Unknown,
}

impl Mapped {
    /// `Tensor` with no transform.
    pub fn plain(name: impl Into<String>) -> Mapped {
        Mapped::To { name: name.into(), transforms: Vec::new() }
    }

    /// Expert `index` of `count`, stacked into `name` ([`Join::Stack`]), with no transform,
    /// planned alone (see [`Mapped::in_batch`]).
    pub fn expert(name: impl Into<String>, index: u64, count: u64) -> Mapped {
        Mapped::Part { name: name.into(), index, count, join: Join::Stack, transforms: Vec::new(), batch: None }
    }

    /// This [`Mapped::Part`] with its joined tensor in the batch `key`, at place `rank` of `size`
    /// (see [`Batch`]); any other value unchanged.
    pub fn in_batch(self, key: impl Into<String>, rank: u32, size: u32) -> Mapped {
        match self {
            Mapped::Part { name, index, count, join, transforms, .. } => Mapped::Part {
                name,
                index,
                count,
                join,
                transforms,
                batch: Some(Batch { key: key.into(), rank, size }),
            },
            other => other,
        }
    }
}

/// Joined tensors planned together: the reference stacks a layer's experts only once *every*
/// expert tensor of the layer has come (`len(self._experts[bid]) >= n_experts * 3`), then yields
/// the stacks in a fixed order (Mixtral's `w1, w2, w3`; Qwen MoE's `down_proj, gate_proj,
/// up_proj`). Where a layer's experts straddle two safetensors files, one projection's experts
/// can all come before the others', and planning it alone would put it elsewhere in the file. A
/// batch holds each complete joined tensor until all `size` tensors of the batch `key` are
/// complete, then plans them in `rank` order at that place. The plan is refused
/// ([`ConvertError::Layout`]) when a batch is left incomplete, or two of its tensors have one
/// rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    /// The batch: any key the architecture chooses, one per layer (`blk.3.experts`).
    pub key: String,
    /// The place of this joined tensor in the batch, `0..size`.
    pub rank: u32,
    /// How many joined tensors the batch has.
    pub size: u32,
}

/// A type the architecture forces on a tensor, as the reference's `tensor_force_quant` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForceType {
    /// This type (it still falls back to F16 where a row is not whole blocks, as the reference's
    /// `QuantError` fallback does; 1-D tensors and norms stay F32 whatever is forced).
    Type(GgmlType),
    /// The output type, even where the reference's rules would keep F32 (its `True`).
    OutType,
}

/// A tensor an architecture makes from the configuration (Phi-3's RoPE factors).
#[derive(Clone, Debug, PartialEq)]
pub struct ExtraTensor {
    /// The GGUF name.
    pub name: String,
    /// The canonical shape, outermost first.
    pub shape: Vec<u64>,
    /// The values, row-major (their type is chosen as for any tensor: F32 when 1-D).
    pub values: Vec<f32>,
}

/// A tensor the checkpoint stores as MXFP4 (`quantization_config.quant_method = "mxfp4"`, as
/// gpt-oss is published), written as ggml `MXFP4` as it is, without being dequantized: the
/// reference's `repack_mxfp4` (`conversion/gpt_oss.py`).
///
/// The source is two `U8` tensors: `blocks`, `[n_expert, rows, n_block, 16]` (each byte two
/// E2M1 codes, the low nibble the even element, as transformers' `convert_moe_packed_tensors`
/// reads them), and `scales`, `[n_expert, rows, n_block]` (E8M0 exponents, bias 127). The output
/// is `[n_expert, rows kept, n_block * 32]` (`ne = [n_block * 32, rows kept, n_expert]`): each
/// block of 32 is ggml's `block_mxfp4` (the scale byte as it is, then the 16 bytes with the
/// codes of elements `j` and `j + 16` in byte `j`'s low and high nibble), a row at a time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mxfp4Tensor {
    /// The GGUF name.
    pub name: String,
    /// The Hugging Face name of the blocks (`….gate_up_proj_blocks`).
    pub blocks: String,
    /// The Hugging Face name of the scales (`….gate_up_proj_scales`).
    pub scales: String,
    /// The rows kept, `(start, step)` along the rows dimension: `(0, 1)` for all of them,
    /// `(0, 2)` and `(1, 2)` for the gate and up halves of an interleaved fused tensor.
    pub rows: (u64, u64),
}

/// What an architecture sees of the checkpoint.
#[derive(Clone, Copy, Debug)]
pub struct ArchContext<'a> {
    /// The checkpoint folder (tokenizer files are there).
    pub dir: &'a Path,
    /// `config.json`.
    pub config: &'a HfConfig,
    /// Blocks: the first of `n_layers`, `num_hidden_layers`, `n_layer`, `num_layers`.
    pub block_count: u32,
}

/// A model family, as one of the reference's `TextModel` subclasses converts it. See the
/// [module docs](self).
pub trait Architecture: Sync {
    /// The GGUF architecture: `general.architecture` and the `{arch}` of the keys (`"llama"`).
    fn name(&self) -> &'static str;

    /// Checks `config.json` before anything is read (default: nothing to check).
    ///
    /// # Errors
    /// [`ConvertError::Config`] naming the field.
    fn check(&self, _cx: &ArchContext<'_>) -> Result<()> {
        Ok(())
    }

    /// The GGUF name and transforms of the Hugging Face tensor `hf` of canonical `shape`.
    ///
    /// # Errors
    /// [`ConvertError::Config`] when the configuration a transform needs is missing;
    /// [`ConvertError::BadShape`] naming `hf` for a shape the architecture checks itself (a fused
    /// tensor that does not split as the configuration says), as the reference's asserts do.
    fn map_tensor(&self, hf: &str, shape: &[u64], cx: &ArchContext<'_>) -> Result<Mapped>;

    /// The GGUF names the model must have (checked before writing; default: none).
    fn required_tensors(&self, _cx: &ArchContext<'_>) -> Vec<String> {
        Vec::new()
    }

    /// The Hugging Face name that [`map_tensor`](Self::map_tensor) maps to the GGUF name `gguf`
    /// (`blk.3.attn_q.weight` → `model.layers.3.self_attn.q_proj.weight`), so that a missing
    /// tensor is named as the checkpoint would name it; `None` when there is no single such
    /// name (default: `None`).
    fn source_name(&self, _gguf: &str) -> Option<String> {
        None
    }

    /// The type the architecture forces on the tensor `gguf` (made from the Hugging Face tensor
    /// `hf`, with `n_dims` dimensions): the reference's `tensor_force_quant`. `None` (the
    /// default) leaves the choice to the reference's rules ([`super::output_type`]).
    fn force_type(&self, _hf: &str, _gguf: &str, _n_dims: usize) -> Option<ForceType> {
        None
    }

    /// Keys written while the tensors are prepared, before `general.type` (the reference's
    /// `generate_extra_tensors` may add some: Phi-3's `rope.scaling.attn_factor`).
    ///
    /// # Errors
    /// [`ConvertError::Config`].
    fn early_keys(&self, _cx: &ArchContext<'_>, _kv: &mut Kvs) -> Result<()> {
        Ok(())
    }

    /// Tensors the checkpoint stores as MXFP4 and the output keeps as MXFP4 ([`Mxfp4Tensor`]),
    /// in the order they are written: first in the file, before the [`extra
    /// tensors`](Self::extra_tensors), as the reference's gpt-oss writes them while it generates
    /// its extra tensors. `names` are the checkpoint's tensors in order; the blocks and scales
    /// named are then not given to [`map_tensor`](Self::map_tensor). Default: none.
    ///
    /// # Errors
    /// [`ConvertError::Layout`] for blocks without their scales (or the other way round).
    fn mxfp4_tensors(&self, _cx: &ArchContext<'_>, _names: &[&str]) -> Result<Vec<Mxfp4Tensor>> {
        Ok(Vec::new())
    }

    /// Tensors made from the configuration (`generate_extra_tensors`), written before the
    /// checkpoint's.
    ///
    /// # Errors
    /// [`ConvertError::Config`].
    fn extra_tensors(&self, _cx: &ArchContext<'_>) -> Result<Vec<ExtraTensor>> {
        Ok(Vec::new())
    }

    /// The hyper-parameter keys (`set_gguf_parameters`), `general.file_type` among them where
    /// the reference writes it (`file_type` is llama.cpp's `llama_ftype`).
    ///
    /// # Errors
    /// [`ConvertError::Config`] naming a missing or mistyped field.
    fn parameters(&self, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<()>;

    /// The tokenizer keys (`set_vocab`).
    ///
    /// # Errors
    /// [`ConvertError::Vocab`].
    fn vocab(&self, cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<()>;
}

/// The architectures of this crate, by Hugging Face class: `LlamaForCausalLM`,
/// `MistralForCausalLM`, `MixtralForCausalLM` ([`Llama`]), `Qwen2ForCausalLM` ([`Qwen2`]), `Qwen3ForCausalLM`
/// ([`Qwen3`]), `Qwen2MoeForCausalLM` ([`Qwen2Moe`]), `Qwen3MoeForCausalLM` ([`Qwen3Moe`]), `Gemma2ForCausalLM`
/// ([`Gemma2`]), `Gemma3ForCausalLM` ([`Gemma3`]), `Phi3ForCausalLM` ([`Phi3`]), `Olmo2ForCausalLM` ([`Olmo2`]),
/// `SmolLM3ForCausalLM` ([`SmolLm3`]), `GraniteForCausalLM` ([`Granite`]), `Glm4ForCausalLM` ([`Glm4`]),
/// `GptOssForCausalLM` ([`GptOss`]).
pub fn builtin(hf_class: &str) -> Option<&'static dyn Architecture> {
    Some(match hf_class {
        "LlamaForCausalLM" | "MistralForCausalLM" | "MixtralForCausalLM" => &Llama,
        "Qwen2ForCausalLM" => &Qwen2,
        "Qwen3ForCausalLM" => &Qwen3,
        "Qwen2MoeForCausalLM" => &Qwen2Moe,
        "Qwen3MoeForCausalLM" => &Qwen3Moe,
        "Gemma2ForCausalLM" => &Gemma2,
        "Gemma3ForCausalLM" => &Gemma3,
        "Phi3ForCausalLM" => &Phi3,
        "Olmo2ForCausalLM" => &Olmo2,
        "SmolLM3ForCausalLM" => &SmolLm3,
        "GraniteForCausalLM" => &Granite,
        "Glm4ForCausalLM" => &Glm4,
        "GptOssForCausalLM" => &GptOss,
        "DeepseekV2ForCausalLM" | "DeepseekV3ForCausalLM" => &Deepseek2,
        _ => return None,
    })
}

/// The Hugging Face classes [`builtin`] knows.
pub const BUILTIN_CLASSES: &[&str] = &[
    "LlamaForCausalLM",
    "MistralForCausalLM",
    "MixtralForCausalLM",
    "Qwen2ForCausalLM",
    "Qwen3ForCausalLM",
    "Qwen2MoeForCausalLM",
    "Qwen3MoeForCausalLM",
    "Gemma2ForCausalLM",
    "Gemma3ForCausalLM",
    "Phi3ForCausalLM",
    "Olmo2ForCausalLM",
    "SmolLM3ForCausalLM",
    "GraniteForCausalLM",
    "Glm4ForCausalLM",
    "GptOssForCausalLM",
    "DeepseekV2ForCausalLM",
    "DeepseekV3ForCausalLM",
];

/// A name map in the shape of gguf-py's `TensorNameMap`: top-level names, and per-block names
/// `{prefix}N.{hf}` → `blk.N.{gguf}` for blocks below the block count; a `.weight` or `.bias`
/// suffix is carried over (`try_suffixes`).
#[derive(Clone, Copy, Debug)]
pub struct BlockMap<'m> {
    /// Hugging Face name without suffix → GGUF name without suffix (`model.norm` → `output_norm`).
    pub top: &'m [(&'m str, &'m str)],
    /// The block prefix, `model.layers.`.
    pub block_prefix: &'m str,
    /// Within a block: `self_attn.q_proj` → `attn_q`.
    pub block: &'m [(&'m str, &'m str)],
}

impl BlockMap<'_> {
    /// The GGUF name of `hf` (`None` if unknown): `model.layers.3.self_attn.q_proj.weight` →
    /// `blk.3.attn_q.weight`. Block numbers are decimal without leading zeros (as Python's
    /// `format(bid=...)` writes them) and below `block_count`.
    pub fn get(&self, hf: &str, block_count: u32) -> Option<String> {
        let (base, suffix) = match hf.rsplit_once('.') {
            Some((b, s @ ("weight" | "bias"))) => (b, s),
            _ => return None,
        };
        if let Some((_, g)) = self.top.iter().find(|(h, _)| *h == base) {
            return Some(format!("{g}.{suffix}"));
        }
        let rest = base.strip_prefix(self.block_prefix)?;
        let (n, inner) = rest.split_once('.')?;
        let ok = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (n.len() == 1 || !n.starts_with('0'));
        let bid: u32 = n.parse().ok().filter(|&b| ok && b < block_count)?;
        let (_, g) = self.block.iter().find(|(h, _)| *h == inner)?;
        Some(format!("blk.{bid}.{g}.{suffix}"))
    }

    /// What a one-to-one architecture does with `hf`: [`Mapped::Skip`] for what the reference
    /// drops unread ([`always_skipped`]), the GGUF name of [`get`](Self::get) with no transform,
    /// or [`Mapped::Unknown`].
    pub fn mapped(&self, hf: &str, block_count: u32) -> Mapped {
        if always_skipped(hf) {
            return Mapped::Skip;
        }
        self.get(hf, block_count).map_or(Mapped::Unknown, Mapped::plain)
    }

    /// The Hugging Face name of the GGUF name `gguf`, the inverse of [`get`](Self::get):
    /// `blk.3.attn_q.weight` → `model.layers.3.self_attn.q_proj.weight` (`None` if this map has
    /// no entry for it). The block number is not checked against a block count.
    pub fn source_name(&self, gguf: &str) -> Option<String> {
        let (base, suffix) = match gguf.rsplit_once('.') {
            Some((b, s @ ("weight" | "bias"))) => (b, s),
            _ => return None,
        };
        if let Some((h, _)) = self.top.iter().find(|(_, g)| *g == base) {
            return Some(format!("{h}.{suffix}"));
        }
        let (n, inner) = base.strip_prefix("blk.")?.split_once('.')?;
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let (h, _) = self.block.iter().find(|(_, g)| *g == inner)?;
        Some(format!("{}{n}.{h}.{suffix}", self.block_prefix))
    }
}

/// The parts of an expert tensor's Hugging Face name `{block_prefix}{bid}.{experts}{xid}.{rest}`
/// (`model.layers.3.block_sparse_moe.experts.7.w1.weight` with `model.layers.` and
/// `block_sparse_moe.experts.` gives `(3, 7, "w1.weight")`): the block, the expert and the rest,
/// or `None` when `hf` is not of that form, its block is not below `block_count`, or a number
/// has leading zeros or is not decimal (as the reference's `format(bid=..., xid=...)` names
/// never are). For [`Mapped::Part`]: see [`Mapped::expert`].
pub fn expert_part<'h>(
    hf: &'h str,
    block_prefix: &str,
    experts: &str,
    block_count: u32,
) -> Option<(u32, u64, &'h str)> {
    fn number(s: &str) -> Option<u64> {
        let ok = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s.len() == 1 || !s.starts_with('0'));
        ok.then(|| s.parse().ok()).flatten()
    }
    let rest = hf.strip_prefix(block_prefix)?;
    let (bid, rest) = rest.split_once('.')?;
    let bid = u32::try_from(number(bid)?).ok().filter(|&b| b < block_count)?;
    let (xid, rest) = rest.strip_prefix(experts)?.split_once('.')?;
    Some((bid, number(xid)?, rest))
}

/// Whether the reference drops `hf` unread (`prepare_tensors`: attention masks and the rotary
/// embedding's precomputed frequencies).
pub fn always_skipped(hf: &str) -> bool {
    hf.ends_with(".attention.masked_bias") || hf.ends_with(".attention.bias") || hf.ends_with(".rotary_emb.inv_freq")
}

/// `{arch}.{suffix}`.
pub fn key(arch: &str, suffix: &str) -> String {
    format!("{arch}.{suffix}")
}

fn as_f32(v: f64) -> Value {
    Value::F32(v as f32)
}

/// `TextModel.set_gguf_parameters`: the keys every text model writes, in its order and with its
/// types — `block_count`, `context_length`, `embedding_length`, `feed_forward_length`,
/// `attention.head_count`, `attention.head_count_kv` (u32, each when `config.json` has one of
/// the names the reference tries), `attention.causal` (bool, when `is_causal` is false), the
/// RoPE scaling keys (`linear` and `yarn` with a factor, `longrope`/`su`), `rope.freq_base`,
/// `rope.freq_base_swa`, `attention.layer_norm_rms_epsilon`, `attention.layer_norm_epsilon`
/// (f32), `expert_count`, `expert_used_count`, `expert_group_count` (`n_group`),
/// `expert_group_used_count` (`topk_group`), `expert_gating_func` (gguf-py's
/// `ExpertGatingFuncType`: softmax 1, sigmoid 2, sqrtsoftplus 4) (u32), `attention.key_length` and
/// `attention.value_length` (u32, from `head_dim`), then `general.file_type` (u32).
///
/// # Errors
/// [`ConvertError::Config`] for a mistyped value, an unknown expert gating function (as the
/// reference refuses it), or a RoPE scaling type whose keys the
/// reference computes in ways not reproduced here (`dynamic`, unknown types). `llama3` writes no
/// keys here (Llama's generated tensor, [`llama::llama3_rope_factors`]).
pub fn text_model_parameters(arch: &str, cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<()> {
    let c = cx.config;
    let k = |s: &str| key(arch, s);
    kv.set(k("block_count"), Value::U32(cx.block_count));
    let u32_keys: [(&str, &[&str]); 5] = [
        (
            "context_length",
            &[
                "max_position_embeddings",
                "n_ctx",
                "n_positions",
                "max_length",
                "max_sequence_length",
                "model_max_length",
            ],
        ),
        ("embedding_length", &["hidden_size", "n_embd", "dim"]),
        (
            "feed_forward_length",
            &[
                "prefix_dense_intermediate_size",
                "dense_intermediate_size",
                "intermediate_size",
                "n_inner",
                "hidden_dim",
            ],
        ),
        ("attention.head_count", &["num_attention_heads", "n_head", "n_heads"]),
        ("attention.head_count_kv", &["num_key_value_heads", "n_kv_heads"]),
    ];
    for (suffix, names) in u32_keys {
        if let Some(v) = c.find_u32(names)? {
            kv.set(k(suffix), Value::U32(v));
        }
    }
    if c.get("is_causal").and_then(|v| v.as_bool()) == Some(false) {
        kv.set(k("attention.causal"), Value::Bool(false));
    }
    let all = c.rope_parameters();
    let rope = match all.get("full_attention") {
        Some(serde_json::Value::Object(m)) => m.clone(),
        _ => all.clone(),
    };
    let num = |m: &serde_json::Map<String, serde_json::Value>, name: &str| m.get(name).and_then(|v| v.as_f64());
    if let Some(t) = rope.get("rope_type").filter(|t| !t.is_null()) {
        let t = t.as_str().ok_or_else(|| ConvertError::Config(format!("rope_type {t} is not a string")))?;
        let factor = num(&rope, "factor");
        match (t, factor) {
            ("linear", Some(f)) => {
                kv.set(k("rope.scaling.type"), Value::String("linear".into()));
                kv.set(k("rope.scaling.factor"), as_f32(f));
            }
            ("yarn", Some(f)) => {
                kv.set(k("rope.scaling.type"), Value::String("yarn".into()));
                kv.set(k("rope.scaling.factor"), as_f32(f));
                let orig = rope.get("original_max_position_embeddings").and_then(|v| v.as_u64()).ok_or_else(|| {
                    ConvertError::Config("rope_scaling: yarn without original_max_position_embeddings".into())
                })?;
                kv.set(k("rope.scaling.original_context_length"), Value::U32(orig as u32));
                for (name, gguf) in [
                    ("extrapolation_factor", "rope.scaling.yarn_ext_factor"),
                    ("attention_factor", "rope.scaling.yarn_attn_factor"),
                    ("beta_fast", "rope.scaling.yarn_beta_fast"),
                    ("beta_slow", "rope.scaling.yarn_beta_slow"),
                ] {
                    let v = num(&rope, name).or_else(|| (name == "attention_factor").then(|| num(&rope, "attn_factor")).flatten());
                    if let Some(v) = v {
                        kv.set(k(gguf), as_f32(v));
                    }
                }
            }
            ("su" | "longrope", _) => kv.set(k("rope.scaling.type"), Value::String("longrope".into())),
            // No keys: Llama writes the `rope_freqs` tensor (`llama::llama3_rope_factors`).
            (t, _) if t.to_lowercase() == "llama3" => {}
            ("linear" | "yarn", None) | ("default", _) => {}
            (other, _) => {
                return Err(ConvertError::Config(format!(
                    "rope_scaling type {other:?} is not converted here (the reference computes its keys or tensors in ways not reproduced yet)"
                )))
            }
        }
    }
    if let Some(m) = all.get("mrope_section") {
        return Err(ConvertError::Config(format!("mrope_section {m} (multi-section RoPE) is not converted here")));
    }
    if let Some(t) = num(&rope, "rope_theta") {
        kv.set(k("rope.freq_base"), as_f32(t));
    }
    if let Some(t) = all.get("sliding_attention").and_then(|s| s.get("rope_theta")).and_then(|v| v.as_f64()) {
        kv.set(k("rope.freq_base_swa"), as_f32(t));
    }
    if let Some(e) = c.find_f64(&["rms_norm_eps", "norm_eps"])? {
        kv.set(k("attention.layer_norm_rms_epsilon"), as_f32(e));
    }
    if let Some(e) = c.find_f64(&["layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"])? {
        kv.set(k("attention.layer_norm_epsilon"), as_f32(e));
    }
    if let Some(n) = c.find_u32(&["num_local_experts", "num_experts", "n_routed_experts"])? {
        kv.set(k("expert_count"), Value::U32(n));
    }
    if let Some(n) = c.find_u32(&["num_experts_per_tok", "num_experts_per_token", "top_k_experts"])? {
        kv.set(k("expert_used_count"), Value::U32(n));
    }
    if let Some(n) = c.find_u32(&["n_group"])? {
        kv.set(k("expert_group_count"), Value::U32(n));
    }
    if let Some(n) = c.find_u32(&["topk_group"])? {
        kv.set(k("expert_group_used_count"), Value::U32(n));
    }
    let gating = c.find(&[
        "score_function",
        "scoring_func",
        "score_func",
        "moe_router_activation",
        "moe_router_activation_func",
        "expert_selection_fn",
    ]);
    if let Some((name, f)) = gating {
        // gguf-py's ExpertGatingFuncType
        let v = match f.as_str() {
            Some("softmax") => 1,
            Some("sigmoid") => 2,
            Some("sqrtsoftplus") => 4,
            _ => return Err(ConvertError::Config(format!("{name}: unsupported expert gating function {f}"))),
        };
        kv.set(k("expert_gating_func"), Value::U32(v));
    }
    if let Some(d) = c.find_u32(&["head_dim"])? {
        kv.set(k("attention.key_length"), Value::U32(d));
        kv.set(k("attention.value_length"), Value::U32(d));
    }
    kv.set("general.file_type", Value::U32(file_type));
    Ok(())
}

/// The standard decoder tensors of `n` blocks, `blk.N.{name}.weight` for each of `names`, with
/// `token_embd.weight` and `output_norm.weight`.
pub fn standard_required(n: u32, names: &[&str]) -> Vec<String> {
    let mut v = vec!["token_embd.weight".to_owned(), "output_norm.weight".to_owned()];
    for i in 0..n {
        v.extend(names.iter().map(|s| format!("blk.{i}.{s}.weight")));
    }
    v
}

/// An `array<f32>` value.
pub fn f32_array(v: Vec<f32>) -> Value {
    Value::Array(Array::F32(v))
}

/// What the architectures' unit tests share: an [`ArchContext`] of a `config.json` given as
/// JSON text, and the keys and tensor names an architecture gives for it.
#[cfg(test)]
pub(crate) mod testing {
    use super::{ArchContext, Architecture, Mapped};
    use crate::convert::checkpoint::HfConfig;
    use crate::convert::Kvs;
    use crate::Value;

    /// `config.json` parsed, as the converter parses it.
    pub(crate) fn config(json: &str) -> HfConfig {
        HfConfig::from_json(serde_json::from_str(json).expect("test config is JSON")).expect("a JSON object")
    }

    /// Runs `f` with a context of `config` (no folder: the tokenizer is not read) and
    /// `num_hidden_layers` blocks.
    pub(crate) fn with_cx<T>(config: &HfConfig, f: impl FnOnce(&ArchContext<'_>) -> T) -> T {
        let block_count = config.find_u32(&["num_hidden_layers"]).ok().flatten().unwrap_or(0);
        f(&ArchContext { dir: std::path::Path::new("no-such-folder"), config, block_count })
    }

    /// The keys `arch.parameters` writes for `config` with `file_type`, in order.
    pub(crate) fn keys(arch: &dyn Architecture, config: &HfConfig, file_type: u32) -> Vec<(String, Value)> {
        with_cx(config, |cx| {
            let mut kv = Kvs::default();
            arch.parameters(cx, file_type, &mut kv).expect("parameters");
            kv.0
        })
    }

    /// What `arch` makes of the Hugging Face tensor `hf`.
    pub(crate) fn mapped(arch: &dyn Architecture, config: &HfConfig, hf: &str) -> Mapped {
        with_cx(config, |cx| arch.map_tensor(hf, &[], cx).expect("map_tensor"))
    }

    /// The GGUF name of a one-to-one mapping with no transform (panics otherwise).
    pub(crate) fn plain_name(m: Mapped) -> String {
        match m {
            Mapped::To { name, transforms } if transforms.is_empty() => name,
            other => panic!("not a plain mapping: {other:?}"),
        }
    }

    /// `(key, value)` pairs from `(&str, Value)`.
    pub(crate) fn owned(pairs: Vec<(&str, Value)>) -> Vec<(String, Value)> {
        pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
    }
}
