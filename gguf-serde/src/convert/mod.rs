//! Hugging Face checkpoints to GGUF, as llama.cpp's `convert_hf_to_gguf.py` converts them
//! (cargo feature `convert`).
//!
//! The reference is the script and its `conversion/` package (`base.py`: `ModelBase` and
//! `TextModel`; one module per family) with gguf-py (`constants.py`, `tensor_mapping.py`,
//! `gguf_writer.py`). What is followed, and where:
//!
//! - **Input** ([`checkpoint`]): `config.json` and the safetensors files, memory-mapped; tensors
//!   in the reference's order (files in name order, names sorted within a file). Source types
//!   F32, F16, BF16.
//! - **Architecture** ([`arch`]): chosen by `config.json`'s `architectures[0]`; it maps names,
//!   transforms tensors and writes the `{arch}.*` keys. An unknown class is refused.
//! - **Tensors**: the architecture's generated tensors first, then the checkpoint's in order;
//!   each is refused if the architecture does not know it, and the model is refused if a tensor
//!   it needs is missing — before anything is written, naming the tensor.
//! - **Shapes**: a Hugging Face `[out, in]` weight is the canonical GGUF shape `[out, in]`,
//!   stored `ne = [in, out]`; a transform may change the row count (Gemma 3's embedding).
//! - **Types** ([`output_type`], `ModelBase.prepare_tensors`): F32 for 1-D tensors, names ending
//!   in `_norm.weight` and names not ending in `.weight`; the others get the output type; Q8_0
//!   falls back to F16 when the row (last canonical dimension) is not whole blocks of 32.
//!   [`OutType::Auto`] is the type of the first 2-D-or-more BF16 or F16 source tensor (BF16 or
//!   F16), F16 when there is none. Values: a BF16 source is widened to F32 first, an F16 source
//!   stays F16 through the transforms; F16/BF16 round to nearest even; Q8_0 is ggml's reference
//!   quantizer, byte-identical to gguf-py's.
//! - **Keys** ([`plan`]), in the reference's order: `general.architecture`; keys written while
//!   the tensors are prepared ([`arch::Architecture::early_keys`]); `general.type = "model"`;
//!   the `general.*` model keys ([`general_keys`]); the hyper-parameters with
//!   `general.file_type` ([`arch::Architecture::parameters`]);
//!   `general.quantization_version = 2`; the tokenizer ([`arch::Architecture::vocab`]). A key
//!   written twice keeps its first place with the last value, as gguf-py's writer does.
//! - **Output**: alignment 32, tensor data streamed a chunk of rows at a time (memory is one
//!   chunk, [`CHUNK_ELEMS`] `f32` values, whatever the model's size; the mapped source pages of
//!   each chunk are released once it is converted, [`Checkpoint::release`], so they do not pile
//!   up in the resident size either), written to a temporary file renamed into place
//!   ([`GgufWriter::create`]): a failure leaves no partial file.

pub mod arch;
pub mod checkpoint;
pub mod general;
pub mod vocab;

use std::path::{Path, PathBuf};

use crate::ops::split::{split_file, SplitBy, SplitOptions};
use crate::{codec, Endian, GgmlType, GgufWriter, Value};

pub use arch::{Architecture, ExtraTensor, Mapped, Transform};
pub use checkpoint::{Checkpoint, HfConfig, SourceTensor};

/// Elements converted per chunk by default: 1 Mi `f32` (4 MiB); at least one row.
pub const CHUNK_ELEMS: u64 = 1 << 20;

/// What can go wrong reading a checkpoint or converting it. Every refusal happens before the
/// output is created, except [`ConvertError::Gguf`] and [`ConvertError::Io`] while writing, which
/// remove the temporary file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// A file could not be read or mapped.
    #[error("cannot read {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A JSON file is not valid JSON.
    #[error("{path} is not valid JSON")]
    Json {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: serde_json::Error,
    },
    /// A weights file is not a valid safetensors file.
    #[error("{path} is not a valid safetensors file")]
    SafeTensors {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: safetensors::SafeTensorError,
    },
    /// `config.json` names a class no architecture converts.
    #[error("config.json: architecture {0:?} is not converted (known: {known})", known = arch::BUILTIN_CLASSES.join(", "))]
    UnknownArchitecture(String),
    /// `config.json` lacks what the conversion needs, or describes what is not converted.
    #[error("config.json: {0}")]
    Config(String),
    /// The files and the index disagree, or no weights were found.
    #[error("checkpoint: {0}")]
    Layout(String),
    /// A checkpoint tensor the architecture does not know.
    #[error("tensor {name}: not a tensor of the {arch} architecture (no GGUF name for it)")]
    UnknownTensor {
        /// The Hugging Face name.
        name: String,
        /// The GGUF architecture.
        arch: String,
    },
    /// A tensor the model needs is not in the checkpoint.
    #[error("{}", match hf {
        Some(hf) => format!("tensor {hf} is missing from the checkpoint (the model needs it as {name})"),
        None => format!("tensor {name} is missing from the checkpoint"),
    })]
    MissingTensor {
        /// The GGUF name (`blk.1.ffn_up.weight`).
        name: String,
        /// The Hugging Face name the checkpoint would have it under
        /// (`model.layers.1.mlp.up_proj.weight`), when the architecture knows one
        /// ([`Architecture::source_name`]).
        hf: Option<String>,
    },
    /// A source tensor of a type or form not converted (F8_E4M3, integers).
    #[error("tensor {name}: {reason}")]
    Unsupported {
        /// The Hugging Face name.
        name: String,
        /// What is not supported.
        reason: String,
    },
    /// A tensor whose shape does not fit its transform.
    #[error("tensor {name}: {reason}")]
    BadShape {
        /// The Hugging Face name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// The tokenizer could not be converted.
    #[error("tokenizer")]
    Vocab(#[from] vocab::VocabError),
    /// The checkpoint's tokenizer is of a kind not converted (see [`vocab`]: e.g. a
    /// `tokenizer.json` BPE with byte fallback and no `tokenizer.model`, or a WordPiece one).
    /// Converting with [`ConvertOptions::vocab`] `false` (`--no-vocab`) writes the file without
    /// tokenizer keys.
    #[error("{path}: {what} (--no-vocab converts without the tokenizer, which llama.cpp then cannot load)")]
    UnsupportedTokenizer {
        /// The file that shows the tokenizer's kind.
        path: PathBuf,
        /// What kind, and why it is refused.
        what: String,
    },
    /// The `general.*` keys could not be made.
    #[error("general metadata")]
    General(#[from] general::GeneralError),
    /// The default output file name ([`default_file_name`]) would not be one file name: a
    /// part of it holds a path separator or a NUL. Refused before anything is written.
    #[error("{key} = {value:?} would put a path separator (or NUL) into the default output file name; name the output file, or give {key} another value")]
    FileNameNotPlain {
        /// The key whose value names the file (`general.finetune`, `general.name`, ...).
        key: &'static str,
        /// Its value.
        value: String,
    },
    /// An output file name (the default one, [`default_file_name`], or one that [`write_plan`]
    /// would create) is longer than [`FILE_NAME_MAX`] bytes, which no file system takes.
    /// Refused before anything is written.
    #[error("the output file name is {len} bytes, more than the {max} a file name may have: {name}", max = FILE_NAME_MAX)]
    FileNameTooLong {
        /// The file name (without folder).
        name: String,
        /// Its length in bytes.
        len: usize,
    },
    /// Writing the GGUF file failed.
    #[error(transparent)]
    Gguf(#[from] crate::Error),
}

impl ConvertError {
    /// The file or folder the error's message names, if any: the file of [`ConvertError::Io`],
    /// [`ConvertError::Json`], [`ConvertError::SafeTensors`] and
    /// [`ConvertError::UnsupportedTokenizer`] (the checkpoint folder when it has no tokenizer
    /// file at all), and of the tokenizer error in [`ConvertError::Vocab`]. A caller that adds
    /// the checkpoint folder as context needs to add it only when this is `None`, so that the
    /// folder is not printed twice.
    pub fn path(&self) -> Option<&Path> {
        match self {
            ConvertError::Io { path, .. }
            | ConvertError::Json { path, .. }
            | ConvertError::SafeTensors { path, .. }
            | ConvertError::UnsupportedTokenizer { path, .. } => Some(path),
            ConvertError::Vocab(v) => Some(v.path()),
            _ => None,
        }
    }
}

type Result<T, E = ConvertError> = std::result::Result<T, E>;

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

/// The ggml type a tensor named `gguf_name` of canonical `shape` is written as for the
/// resolved `outtype` (not [`OutType::Auto`]; see the [module docs](self)).
pub fn output_type(gguf_name: &str, shape: &[u64], outtype: OutType) -> GgmlType {
    let forced_f32 = shape.len() <= 1
        || gguf_name.ends_with("_norm.weight")
        || !(gguf_name.ends_with(".weight") || gguf_name.ends_with(".lora_a") || gguf_name.ends_with(".lora_b"));
    if forced_f32 {
        return GgmlType::F32;
    }
    let t = outtype.ggml().unwrap_or(GgmlType::F16);
    let row = shape.last().copied().unwrap_or(0);
    if row.checked_rem(t.block_size()) == Some(0) {
        t
    } else {
        GgmlType::F16
    }
}

pub use general::{size_label, GeneralKeys, NameParts, ParamCounts};

/// gguf-py's `naming_convention` for a model: `{base or name}-{size}-{finetune}-{version}-{TYPE}`
/// with absent parts left out, spaces (and `/` in the name) as `-` in the name, finetune and
/// version (the size label as it is), `ggml-model` without a name. The reference's default output
/// file is this plus `.gguf`, in the model folder (`convert_hf_to_gguf.py` writes into
/// `dir_model` when no `--outfile` is given); [`default_file_name`] checks that it is one file
/// name.
pub fn naming_convention(p: &NameParts, outtype: OutType) -> String {
    naming_parts(p).iter().map(|(_, _, part)| part.as_str()).chain([outtype.label()]).collect::<Vec<_>>().join("-")
}

/// The parts [`naming_convention`] joins, but the type: (key, value, as written in the name).
fn naming_parts(p: &NameParts) -> Vec<(&'static str, &str, String)> {
    let dashes = |s: &str| s.trim().replace(' ', "-");
    let mut out = Vec::with_capacity(4);
    match (&p.basename, &p.name) {
        (Some(b), _) => out.push(("general.basename", b.as_str(), dashes(b).replace('/', "-"))),
        (None, Some(n)) => out.push(("general.name", n.as_str(), dashes(n).replace('/', "-"))),
        (None, None) => out.push(("", "", "ggml-model".to_owned())),
    }
    if let Some(s) = &p.size_label {
        out.push(("general.size_label", s.as_str(), s.clone()));
    }
    for (key, v) in [("general.finetune", &p.finetune), ("general.version", &p.version)] {
        if let Some(v) = v {
            out.push((key, v.as_str(), dashes(v)));
        }
    }
    out
}

/// The longest file name, in bytes, that [`default_file_name`] and [`write_plan`] accept:
/// `NAME_MAX` of Linux, macOS and Windows file systems.
pub const FILE_NAME_MAX: usize = 255;

/// The reference's default output file name, [`naming_convention`] plus `.gguf`, checked to be
/// one plain file name, so that a conversion that would write elsewhere or fail at the end is
/// refused before it starts. (The reference would try to write it and fail, or write into a
/// folder named by a part, after converting.)
///
/// # Errors
/// [`ConvertError::FileNameNotPlain`] naming the key and value when a part holds a path separator
/// (`/`; also `\` on Windows) or a NUL, as `general.finetune = "a/b"` from a metadata override
/// would (the name's `/` becomes `-`, as in the reference); [`ConvertError::FileNameTooLong`]
/// when the name is longer than [`FILE_NAME_MAX`] bytes.
pub fn default_file_name(p: &NameParts, outtype: OutType) -> Result<String> {
    for (key, value, part) in naming_parts(p) {
        if part.chars().any(|c| std::path::is_separator(c) || c == '\0') {
            return Err(ConvertError::FileNameNotPlain { key, value: value.to_owned() });
        }
    }
    let name = format!("{}.gguf", naming_convention(p, outtype));
    check_name_length(&name)?;
    Ok(name)
}

/// [`ConvertError::FileNameTooLong`] for a file name over [`FILE_NAME_MAX`] bytes.
fn check_name_length(name: &str) -> Result<()> {
    if name.len() > FILE_NAME_MAX {
        return Err(ConvertError::FileNameTooLong { name: name.to_owned(), len: name.len() });
    }
    Ok(())
}

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
        }
    }
}

/// Where a planned tensor's values come from.
#[derive(Clone, Debug)]
pub enum TensorData<'a> {
    /// A checkpoint tensor.
    Source(SourceTensor<'a>),
    /// Values made by the architecture (F32).
    Generated(Vec<f32>),
}

/// A tensor of the output, planned: nothing is converted until [`write_plan`].
#[derive(Clone, Debug)]
pub struct PlannedTensor<'a> {
    /// The GGUF name.
    pub name: String,
    /// The canonical output shape (after the transforms).
    pub shape: Vec<u64>,
    /// The output type.
    pub dtype: GgmlType,
    /// The source.
    pub data: TensorData<'a>,
    /// The transforms, in order.
    pub transforms: Vec<Transform>,
}

impl PlannedTensor<'_> {
    /// Bytes of source data read for this tensor.
    pub fn source_bytes(&self) -> u64 {
        match &self.data {
            TensorData::Source(s) => s.data.len() as u64,
            TensorData::Generated(v) => v.len() as u64 * 4,
        }
    }
}

/// A conversion, planned and checked: every key in order and every tensor with its type.
#[derive(Clone, Debug)]
pub struct Plan<'a> {
    /// `general.architecture`.
    pub arch: &'static str,
    /// The output type, resolved (never [`OutType::Auto`]).
    pub outtype: OutType,
    /// Every key, in file order.
    pub kvs: Kvs,
    /// Every tensor, in file order.
    pub tensors: Vec<PlannedTensor<'a>>,
    /// The parameter counts of the tensors.
    pub params: ParamCounts,
    /// The parts of the reference's default output file name ([`Plan::default_file_name`]).
    pub name_parts: NameParts,
    /// The checkpoint the source tensors are borrowed from, whose mapped pages [`write_plan`]
    /// releases ([`Checkpoint::release`]) as each chunk is converted.
    checkpoint: &'a Checkpoint,
}

impl Plan<'_> {
    /// The reference's default output file name (without folder), e.g.
    /// `tiny-llama-hf-86K-F16.gguf`: [`default_file_name`] of [`Plan::name_parts`] and the
    /// resolved output type.
    ///
    /// # Errors
    /// As [`default_file_name`]: [`ConvertError::FileNameNotPlain`],
    /// [`ConvertError::FileNameTooLong`].
    pub fn default_file_name(&self) -> Result<String> {
        default_file_name(&self.name_parts, self.outtype)
    }

    /// Bytes of source data the conversion reads (the progress total).
    pub fn source_bytes(&self) -> u64 {
        self.tensors.iter().map(PlannedTensor::source_bytes).sum()
    }
}

fn out_shape(name: &str, shape: &[u64], transforms: &[Transform]) -> Result<Vec<u64>> {
    let mut s = shape.to_vec();
    let err = |reason: String| ConvertError::BadShape { name: name.to_owned(), reason };
    for t in transforms {
        match *t {
            Transform::Permute { heads } => {
                let rows = s.first().copied().unwrap_or(0);
                if heads == 0 || rows % (heads * 2) != 0 {
                    return Err(err(format!("{rows} rows are not {heads} heads of an even width")));
                }
            }
            Transform::Add(_) => {}
            Transform::KeepRows(n) => {
                if let Some(r) = s.first_mut() {
                    *r = (*r).min(n);
                } else {
                    return Err(err("a scalar has no rows to keep".into()));
                }
            }
        }
    }
    Ok(s)
}

/// The general keys (`Metadata.set_gguf_meta_model`), from `general.type`
/// ([`general::general_kv`], with `generation_config.json` when the folder has one): the keys to
/// write and the parts of the default file name they give ([`GeneralKeys`]). `name`
/// (`--model-name`) replaces `general.name` ([`GeneralKeys::set_name`]). `model_card` is the
/// card's front matter parsed from YAML ([`ConvertOptions::model_card`]); `metadata_override` the
/// `--metadata` file's JSON ([`ConvertOptions::metadata_override`]).
///
/// # Errors
/// [`ConvertError::Json`] for a `generation_config.json` that is not JSON;
/// [`ConvertError::General`].
pub fn general_keys(
    dir: &Path,
    config: &HfConfig,
    counts: &ParamCounts,
    name: Option<&str>,
    model_card: Option<&serde_json::Value>,
    metadata_override: Option<&serde_json::Value>,
) -> Result<GeneralKeys> {
    let gen_path = dir.join("generation_config.json");
    let generation = match std::fs::read(&gen_path) {
        Ok(bytes) => Some(
            serde_json::from_slice::<serde_json::Value>(&bytes)
                .map_err(|source| ConvertError::Json { path: gen_path.clone(), source })?,
        ),
        Err(_) => None,
    };
    let config_json = serde_json::Value::Object(config.raw.clone());
    let mut keys = general::general_kv(dir, &config_json, counts, model_card, generation.as_ref(), metadata_override)?;
    if let Some(n) = name {
        keys.set_name(n);
    }
    Ok(keys)
}

/// The tokenizer, per architecture (`set_vocab`), through [`vocab`].
pub mod vocab_hook {
    use super::arch::ArchContext;
    use super::{vocab, ConvertError, Kvs, Result, Value};

    fn vocab_size(cx: &ArchContext<'_>) -> Option<usize> {
        cx.config.raw.get("vocab_size").and_then(|v| v.as_u64()).and_then(|n| usize::try_from(n).ok())
    }

    /// One of [`vocab`]'s `set_vocab_*` entries: the folder and `config.json`'s `vocab_size`.
    type SetVocab = fn(&std::path::Path, Option<usize>) -> std::result::Result<Vec<(String, Value)>, vocab::VocabError>;

    /// Adds the keys of `set_vocab`, a tokenizer of a kind not converted becoming
    /// [`ConvertError::UnsupportedTokenizer`].
    fn add(cx: &ArchContext<'_>, kv: &mut Kvs, set_vocab: SetVocab) -> Result<()> {
        match set_vocab(cx.dir, vocab_size(cx)) {
            Ok(kvs) => {
                kv.extend(kvs);
                Ok(())
            }
            Err(vocab::VocabError::Unsupported { path, what }) => {
                Err(ConvertError::UnsupportedTokenizer { path, what })
            }
            // No tokenizer file at all: say which files were looked for, and the way out.
            Err(vocab::VocabError::NotFound { .. })
                if !cx.dir.join("tokenizer.model").exists() && !cx.dir.join("tokenizer.json").exists() =>
            {
                Err(ConvertError::UnsupportedTokenizer {
                    path: cx.dir.to_path_buf(),
                    what: "no tokenizer: neither tokenizer.model (SentencePiece) nor tokenizer.json (BPE)".into(),
                })
            }
            Err(e) => Err(e.into()),
        }
    }

    /// `LlamaModel.set_vocab` ([`vocab::set_vocab_llama`]): SentencePiece from `tokenizer.model`,
    /// else GPT-2 BPE from `tokenizer.json` (Llama 3).
    pub fn llama(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<()> {
        add(cx, kv, vocab::set_vocab_llama)
    }

    /// `Qwen2Model.set_vocab` (also Qwen 3's, [`vocab::set_vocab_qwen2`]): SentencePiece when the
    /// folder has `tokenizer.model`, GPT-2 BPE from `tokenizer.json` otherwise.
    pub fn qwen(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<()> {
        add(cx, kv, vocab::set_vocab_qwen2)
    }

    /// `Gemma3Model.set_vocab` ([`vocab::set_vocab_gemma3`]): SentencePiece with
    /// `add_space_prefix = false`, or GPT-2 BPE without `tokenizer.model`.
    pub fn gemma3(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<()> {
        add(cx, kv, vocab::set_vocab_gemma3)
    }

    /// `Phi3MiniModel.set_vocab` ([`vocab::set_vocab_phi3`]).
    pub fn phi3(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<()> {
        add(cx, kv, vocab::set_vocab_phi3)
    }
}

/// Plans the conversion of `ckpt` with the architecture `config.json` names ([`arch::builtin`]).
///
/// # Errors
/// [`ConvertError::UnknownArchitecture`], and as [`plan_with`].
pub fn plan<'a>(ckpt: &'a Checkpoint, opts: &ConvertOptions<'_>) -> Result<Plan<'a>> {
    let class = ckpt.config.hf_architecture().unwrap_or("").to_owned();
    let arch = arch::builtin(&class).ok_or(ConvertError::UnknownArchitecture(class))?;
    plan_with(ckpt, arch, opts)
}

/// Plans the conversion of `ckpt` with `arch`: maps and checks every tensor, chooses the types,
/// and makes every key (see the [module docs](self)). Nothing is written.
///
/// # Errors
/// [`ConvertError::Config`] from the architecture; [`ConvertError::UnknownTensor`],
/// [`ConvertError::MissingTensor`], [`ConvertError::BadShape`] (a shape that does not fit a
/// transform), [`ConvertError::Layout`] (two tensors of one GGUF name); as
/// [`Checkpoint::tensors`]; [`ConvertError::Vocab`].
pub fn plan_with<'a>(ckpt: &'a Checkpoint, arch: &dyn Architecture, opts: &ConvertOptions<'_>) -> Result<Plan<'a>> {
    let config = &ckpt.config;
    let block_count = config.need_u32(&["n_layers", "num_hidden_layers", "n_layer", "num_layers"])?;
    let cx = arch::ArchContext { dir: &ckpt.dir, config, block_count };
    arch.check(&cx)?;
    let sources = ckpt.tensors()?;

    let outtype = match opts.outtype {
        OutType::Auto => sources
            .iter()
            .filter(|t| t.shape.len() >= 2)
            .find_map(|t| match t.dtype {
                GgmlType::BF16 => Some(OutType::BF16),
                GgmlType::F16 => Some(OutType::F16),
                _ => None,
            })
            .unwrap_or(OutType::F16),
        t => t,
    };

    let mut tensors: Vec<PlannedTensor<'a>> = Vec::new();
    for arch::ExtraTensor { name, shape, values } in arch.extra_tensors(&cx)? {
        if shape.iter().product::<u64>() != values.len() as u64 {
            return Err(ConvertError::BadShape {
                name,
                reason: format!("{} values for shape {shape:?}", values.len()),
            });
        }
        let dtype = output_type(&name, &shape, outtype);
        tensors.push(PlannedTensor { name, shape, dtype, data: TensorData::Generated(values), transforms: Vec::new() });
    }
    for src in sources {
        match arch.map_tensor(&src.name, &src.shape, &cx)? {
            Mapped::Skip => {}
            Mapped::Unknown => {
                return Err(ConvertError::UnknownTensor { name: src.name, arch: arch.name().to_owned() })
            }
            Mapped::To { name, transforms } => {
                let shape = out_shape(&src.name, &src.shape, &transforms)?;
                let dtype = output_type(&name, &shape, outtype);
                tensors.push(PlannedTensor { name, shape, dtype, data: TensorData::Source(src), transforms });
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    for t in &tensors {
        if !seen.insert(t.name.as_str()) {
            return Err(ConvertError::Layout(format!("two tensors map to {}", t.name)));
        }
    }
    if let Some(missing) = arch.required_tensors(&cx).into_iter().find(|n| !seen.contains(n.as_str())) {
        let hf = arch.source_name(&missing);
        return Err(ConvertError::MissingTensor { name: missing, hf });
    }

    let params = ParamCounts::from_tensors(tensors.iter().map(|t| (t.name.as_str(), t.shape.as_slice())));
    let mut kvs = Kvs::default();
    kvs.set("general.architecture", Value::String(arch.name().into()));
    arch.early_keys(&cx, &mut kvs)?;
    kvs.set("general.type", Value::String("model".into()));
    let general = general_keys(&ckpt.dir, config, &params, opts.name, opts.model_card, opts.metadata_override)?;
    let name_parts = general.name_parts();
    kvs.extend(general.into_keys());
    arch.parameters(&cx, outtype.file_type(), &mut kvs)?;
    kvs.set("general.quantization_version", Value::U32(2));
    if opts.vocab {
        arch.vocab(&cx, &mut kvs)?;
    }
    Ok(Plan { arch: arch.name(), outtype, kvs, tensors, params, name_parts, checkpoint: ckpt })
}

/// What [`convert`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConvertReport {
    /// GGUF name, type and canonical shape of each tensor, in file order.
    pub tensors: Vec<(String, GgmlType, Vec<u64>)>,
    /// Bytes of source tensor data read.
    pub source_bytes: u64,
    /// The files written (one, or the shards).
    pub files: Vec<PathBuf>,
    /// The output type, resolved.
    pub outtype: OutType,
}

impl Default for OutType {
    /// [`OutType::Auto`], the reference's default.
    fn default() -> Self {
        OutType::Auto
    }
}

/// Converts the checkpoint in `dir` to a GGUF file at `out` (written atomically; with
/// [`ConvertOptions::split_max_size`], shards `out` without `.gguf` + `-0000i-of-0000n.gguf`).
///
/// # Errors
/// As [`Checkpoint::open`] and [`plan`] (nothing is written then); [`ConvertError::Gguf`] from
/// writing. On error no file is left at `out`.
pub fn convert(dir: impl AsRef<Path>, out: impl AsRef<Path>, opts: &ConvertOptions<'_>) -> Result<ConvertReport> {
    let ckpt = Checkpoint::open(dir)?;
    let plan = plan(&ckpt, opts)?;
    write_plan(&plan, out.as_ref(), opts)
}

/// Converts with a user's architecture (see [`arch`]).
///
/// # Errors
/// As [`convert`].
pub fn convert_with(
    dir: impl AsRef<Path>,
    out: impl AsRef<Path>,
    arch: &dyn Architecture,
    opts: &ConvertOptions<'_>,
) -> Result<ConvertReport> {
    let ckpt = Checkpoint::open(dir)?;
    let plan = plan_with(&ckpt, arch, opts)?;
    write_plan(&plan, out.as_ref(), opts)
}

/// Writes a planned conversion to `out` (see [`convert`]).
///
/// # Errors
/// [`ConvertError::FileNameTooLong`] before anything is written when a file name to create (`out`,
/// or with [`ConvertOptions::split_max_size`] the shards) is longer than
/// [`FILE_NAME_MAX`] bytes; [`ConvertError::Gguf`] (I/O, and data that does not match its
/// declared size). On error no file is left at `out`.
pub fn write_plan(plan: &Plan<'_>, out: &Path, opts: &ConvertOptions<'_>) -> Result<ConvertReport> {
    let file_name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    check_name_length(&file_name)?;
    if opts.split_max_size.is_some() {
        // the shards (`-00001-of-00002.gguf`)
        let stem = out.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        check_name_length(&format!("{stem}-00001-of-00001.gguf"))?;
    }
    let files = match opts.split_max_size {
        None => {
            write_one(plan, out, opts)?;
            vec![out.to_path_buf()]
        }
        Some(max) => {
            let prefix = out.with_extension("");
            // The unsplit file, under a fresh `.gguf-tmp-*` name beside the shards: removed when
            // this scope ends (also on error) and by `remove_temporaries` on an interrupt.
            let dir = match out.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let unsplit = crate::container::atomic::ScratchFile::new_in(dir)?;
            write_one(plan, unsplit.path(), opts)?;
            split_file(unsplit.path(), &prefix, &SplitOptions::new(SplitBy::MaxBytes(max)))?
        }
    };
    Ok(ConvertReport {
        tensors: plan.tensors.iter().map(|t| (t.name.clone(), t.dtype, t.shape.clone())).collect(),
        source_bytes: plan.source_bytes(),
        files,
        outtype: plan.outtype,
    })
}

fn write_one(plan: &Plan<'_>, out: &Path, opts: &ConvertOptions<'_>) -> Result<()> {
    let mut w = GgufWriter::create(out)?;
    for (k, v) in &plan.kvs.0 {
        w.add_value(k, v)?;
    }
    for t in &plan.tensors {
        w.add_tensor(&t.name, t.dtype, &t.shape)?;
    }
    for t in &plan.tensors {
        let mut dw = w.tensor_data_writer()?;
        let release = |done: &[u8]| plan.checkpoint.release(done);
        stream_tensor(t, opts, &mut |piece| dw.write(piece), &release)?;
        dw.finish()?;
    }
    w.commit()?;
    Ok(())
}

/// The source row of output row `row` under [`Transform::Permute`] with `rows` rows and `heads`
/// heads: within a head of `w = rows / heads` rows, output row `2j + s` is source row
/// `s * w / 2 + j`.
pub fn permuted_row(row: u64, rows: u64, heads: u64) -> u64 {
    let w = (rows / heads.max(1)).max(1);
    let (h, i) = (row / w, row % w);
    h * w + (i % 2) * (w / 2) + i / 2
}

fn invalid(name: &str, reason: String) -> crate::Error {
    crate::Error::invalid_tensor(name.to_owned(), reason)
}

/// Streams the stored bytes of `t` (little-endian) to `out`, a chunk of rows at a time, giving
/// `release` the source bytes of each chunk once they are converted (all of them at the end
/// when rows are read out of order).
fn stream_tensor(
    t: &PlannedTensor<'_>,
    opts: &ConvertOptions<'_>,
    out: &mut dyn FnMut(&[u8]) -> crate::Result<()>,
    release: &dyn Fn(&[u8]),
) -> crate::Result<()> {
    let release = |b: &[u8]| {
        if matches!(t.data, TensorData::Source(_)) {
            release(b);
        }
    };
    let report = |n: u64| {
        if let Some(p) = opts.progress {
            p(n);
        }
    };
    let (src_dtype, bytes): (GgmlType, &[u8]) = match &t.data {
        TensorData::Source(s) => (s.dtype, s.data),
        TensorData::Generated(v) => (GgmlType::F32, bytemuck::cast_slice(v.as_slice())),
    };
    let src_shape: &[u64] = match &t.data {
        TensorData::Source(s) => &s.shape,
        TensorData::Generated(_) => &t.shape,
    };
    // The reference keeps F32 and F16 data as they are when the output type is theirs.
    if t.transforms.is_empty() && src_dtype == t.dtype && matches!(src_dtype, GgmlType::F32 | GgmlType::F16) {
        let piece = usize::try_from(opts.chunk_elems.saturating_mul(4)).unwrap_or(usize::MAX).max(1);
        for p in bytes.chunks(piece) {
            out(p)?;
            release(p);
            report(p.len() as u64);
        }
        return Ok(());
    }
    // Rows: the first dimension; a row is everything after it (1-D: rows of one value).
    let src_rows = src_shape.first().copied().unwrap_or(1);
    let total: u64 = src_shape.iter().product();
    let row = if src_shape.len() <= 1 { 1 } else { total.checked_div(src_rows).unwrap_or(0) };
    let in_row = src_dtype.row_bytes(row).ok_or_else(|| invalid(&t.name, "row size overflows".into()))?;
    if src_rows.checked_mul(in_row) != Some(bytes.len() as u64) {
        return Err(invalid(&t.name, format!("{} bytes of data for {src_rows} rows of {row}", bytes.len())));
    }
    let out_rows = t.shape.first().copied().unwrap_or(1);
    // The row length in ggml's sense (the last dimension) for the output type.
    let last = if t.shape.len() <= 1 { 1 } else { t.shape.last().copied().unwrap_or(1) };
    let out_elems_per_row = row;
    if out_elems_per_row % last.max(1) != 0 {
        return Err(invalid(&t.name, "rows do not split into whole last dimensions".into()));
    }
    let out_row_bytes = t
        .dtype
        .row_bytes(last)
        .map(|b| b * (out_elems_per_row / last.max(1)))
        .ok_or_else(|| invalid(&t.name, format!("a row of {last} is not whole {} blocks", t.dtype)))?;
    let permute = t.transforms.iter().find_map(|x| match x {
        Transform::Permute { heads } => Some(*heads),
        _ => None,
    });
    let changes_values = t.transforms.iter().any(|x| matches!(x, Transform::Add(_)));
    let row_u = row as usize;
    let in_row_u = in_row as usize;
    let rows_per_chunk = (opts.chunk_elems / row.max(1)).max(1);
    let mut scratch: Vec<f32> = Vec::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut r = 0u64;
    while r < out_rows {
        let n = rows_per_chunk.min(out_rows - r);
        scratch.resize(n as usize * row_u, 0.0);
        match permute {
            None => {
                let start = r as usize * in_row_u;
                let b = bytes.get(start..start + n as usize * in_row_u).unwrap_or_default();
                codec::dequantize_par(src_dtype, Endian::Little, b, &mut scratch)?;
                release(b);
            }
            Some(heads) => {
                for (i, dst) in scratch.chunks_mut(row_u.max(1)).enumerate() {
                    let from = permuted_row(r + i as u64, src_rows, heads) as usize * in_row_u;
                    let b = bytes.get(from..from + in_row_u).unwrap_or_default();
                    codec::dequantize_endian(src_dtype, Endian::Little, b, dst)?;
                }
            }
        }
        for x in &t.transforms {
            if let Transform::Add(c) = *x {
                scratch.iter_mut().for_each(|v| *v += c);
            }
        }
        if changes_values && src_dtype == GgmlType::F16 {
            // torch's F16 arithmetic: the sum rounded back to F16.
            scratch.iter_mut().for_each(|v| *v = half::f16::from_f32(*v).to_f32());
        }
        buf.resize(n as usize * out_row_bytes as usize, 0);
        codec::quantize_par(t.dtype, Endian::Little, &scratch, &mut buf)?;
        out(&buf)?;
        report(n * in_row);
        r += n;
    }
    if permute.is_some() {
        release(bytes);
    }
    Ok(())
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
        assert_eq!(output_type("blk.0.attn_norm.weight", &[64], OutType::Q8_0), GgmlType::F32);
        assert_eq!(output_type("blk.0.attn_q.weight", &[64, 64], OutType::Q8_0), GgmlType::Q8_0);
        assert_eq!(output_type("blk.0.ffn_down.weight", &[64, 80], OutType::Q8_0), GgmlType::F16);
        assert_eq!(output_type("blk.0.attn_q.bias", &[64], OutType::BF16), GgmlType::F32);
        assert_eq!(output_type("token_embd.weight", &[32, 64], OutType::BF16), GgmlType::BF16);
        assert_eq!(output_type("blk.0.attn_q_norm.weight", &[16], OutType::F16), GgmlType::F32);
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
