//! [`ConvertError`], the converter's own error type (it is not one of the crate's
//! [`ErrorKind`](crate::ErrorKind)s: a [`crate::Error`] from writing is wrapped in
//! [`ConvertError::Gguf`]).

use std::path::{Path, PathBuf};

use super::{arch, general, vocab, FILE_NAME_MAX};

/// What can go wrong reading a checkpoint or converting it. Every refusal happens before the
/// output is created, except [`ConvertError::Gguf`] and [`ConvertError::Io`] while writing, which
/// remove the temporary file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// A file could not be read or mapped.
    #[error("cannot read {path}", path = crate::format::shown_path(.path))]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A JSON file is not valid JSON.
    #[error("{path} is not valid JSON", path = crate::format::shown_path(.path))]
    Json {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: serde_json::Error,
    },
    /// A weights file is not a valid safetensors file.
    #[error("{path} is not a valid safetensors file", path = crate::format::shown_path(.path))]
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
        /// ([`Architecture::source_name`](super::Architecture::source_name)).
        hf: Option<String>,
    },
    /// A source tensor of a type or form not converted (integers, F8_E8M0, an FP8 scale that does
    /// not fit its weight).
    #[error("tensor {name}: {reason}")]
    Unsupported {
        /// The Hugging Face name.
        name: String,
        /// What is not supported.
        reason: String,
    },
    /// `config.json`'s `quantization_config.quant_method` (or `hf_quant_config.json`'s producer)
    /// names a pre-quantized checkpoint of a method not converted here (only `fp8` is: see
    /// [`quant`](super::quant)); the reference dequantizes or repacks some of them (`bitnet`,
    /// `gptq`, `compressed-tensors`, `modelopt`, `mxfp4`) and refuses the others.
    #[error("quantization method {method:?} (config.json's quantization_config) is not converted: {reason}")]
    UnsupportedQuantization {
        /// The method as the checkpoint names it (`"gptq"`).
        method: String,
        /// What the reference does with it, and why it is refused here.
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
    /// Converting with [`ConvertOptions::vocab`](super::ConvertOptions::vocab) `false` writes the
    /// file without tokenizer keys (which llama.cpp then cannot load).
    #[error("{path}: {what}", path = crate::format::shown_path(.path))]
    UnsupportedTokenizer {
        /// The file that shows the tokenizer's kind.
        path: PathBuf,
        /// What kind, and why it is refused.
        what: String,
    },
    /// The `general.*` keys could not be made.
    #[error("general metadata")]
    General(#[from] general::GeneralError),
    /// The default output file name ([`default_file_name`](super::default_file_name)) would not be one file name: a
    /// part of it holds a path separator or a NUL. Refused before anything is written.
    #[error("{key} = {value:?} would put a path separator (or NUL) into the default output file name; name the output file, or give {key} another value")]
    FileNameNotPlain {
        /// The key whose value names the file (`general.finetune`, `general.name`, ...).
        key: &'static str,
        /// Its value.
        value: String,
    },
    /// An output file name (the default one, [`default_file_name`](super::default_file_name), or one that [`write_plan`](super::write_plan)
    /// would create) is longer than [`FILE_NAME_MAX`] bytes, which no file system takes.
    /// Refused before anything is written.
    #[error("the output file name is {len} bytes, more than the {max} a file name may have: {name}", max = FILE_NAME_MAX)]
    FileNameTooLong {
        /// The file name (without folder).
        name: String,
        /// Its length in bytes.
        len: usize,
    },
    /// A LoRA adapter that is not converted ([`lora`](super::lora)).
    #[error(transparent)]
    Adapter(#[from] super::lora::AdapterError),
    /// Writing the GGUF file failed.
    #[error(transparent)]
    Gguf(#[from] crate::Error),
}

impl ConvertError {
    /// The file or folder the error's message names, if any: the file of [`ConvertError::Io`],
    /// [`ConvertError::Json`], [`ConvertError::SafeTensors`] and
    /// [`ConvertError::UnsupportedTokenizer`] (the checkpoint folder when it has no tokenizer
    /// file at all), of the tokenizer error in [`ConvertError::Vocab`], and the folder of an
    /// adapter error that names it ([`ConvertError::Adapter`]: not an adapter folder). A caller that adds
    /// the checkpoint folder as context needs to add it only when this is `None`, so that the
    /// folder is not printed twice.
    pub fn path(&self) -> Option<&Path> {
        match self {
            ConvertError::Io { path, .. }
            | ConvertError::Json { path, .. }
            | ConvertError::SafeTensors { path, .. }
            | ConvertError::UnsupportedTokenizer { path, .. } => Some(path),
            ConvertError::Vocab(v) => Some(v.path()),
            ConvertError::Adapter(super::lora::AdapterError::NotAnAdapter { dir, .. }) => Some(dir),
            _ => None,
        }
    }
}

impl From<crate::CodecError> for ConvertError {
    /// A codec's refusal (a value a type cannot hold, a row that is not whole blocks), as
    /// [`ConvertError::Gguf`].
    fn from(e: crate::CodecError) -> ConvertError {
        ConvertError::Gguf(e.into())
    }
}

pub(super) type Result<T, E = ConvertError> = std::result::Result<T, E>;
