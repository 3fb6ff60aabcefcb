//! Typed structs for the key groups nearly every model file has: `general.*` ([`General`]) and
//! the tokenizer ([`Tokenizer`]), both under [`StandardMetadata`].
//!
//! Every field is an `Option` (a missing key reads as `None`, and `None` writes no key), with
//! the GGUF type the registry ([`format::keys`](crate::format::keys)) gives the key, so that a
//! file written from these structs has the types llama.cpp reads. Field names are the keys under
//! the group's prefix, as the [serde mapping](crate#the-serde-mapping) joins them
//! (`general.license.name` is the field `license_name` renamed `"license.name"`). Keys these
//! structs do not name are ignored on read: read the architecture's hyper-parameters with a
//! struct of your own, beside these or in the same file.
//!
//! ```
//! use gguf_serde::metadata::standard::{General, StandardMetadata, Tokenizer};
//!
//! let meta = StandardMetadata::<String> {
//!     general: General { architecture: Some("llama".into()), name: Some("tiny".into()), ..General::default() },
//!     tokenizer: Tokenizer { model: Some("gpt2".into()), bos_token_id: Some(1), ..Tokenizer::default() },
//! };
//! let bytes = gguf_serde::to_vec(&meta)?;
//! let file = gguf_serde::Gguf::from_slice(&bytes)?;
//! assert_eq!(file.get("tokenizer.ggml.bos_token_id"), Some(gguf_serde::ValueRef::U32(1)));
//! let back: StandardMetadata<&str> = gguf_serde::from_slice(&bytes)?;
//! assert_eq!(back.general.name.as_deref(), Some("tiny"));
//! # Ok::<(), gguf_serde::Error>(())
//! ```
//!
//! A group whose fields are all `None` writes no keys; inside [`StandardMetadata`] it is left out
//! (and reads back as the default). Empty sequences cannot be written (GGUF needs an element
//! type for an array, see the serde mapping): use `None` for an empty list.

use serde::{Deserialize, Serialize};

/// `general.*` and `tokenizer.*`, the groups nearly every model file has, as one top-level
/// struct for [`from_slice`](crate::from_slice) / [`to_writer`](crate::to_writer).
///
/// `S` is the string type of the token lists: `String` (owned) or `&'de str` (borrowed from the
/// file, no copy).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct StandardMetadata<S = String> {
    /// `general.*`.
    #[serde(default, skip_serializing_if = "General::is_empty")]
    pub general: General,
    /// `tokenizer.*`.
    #[serde(default, skip_serializing_if = "Tokenizer::is_empty")]
    pub tokenizer: Tokenizer<S>,
}

/// The `general.*` keys (gguf-py `Keys.General`), apart from the numbered
/// `general.base_model.{id}.*` / `general.dataset.{id}.*` and `general.sampling.*`. Types as
/// the registry gives them; each field says its key and type.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct General {
    /// `general.architecture`, STRING: `llama`, `gemma3`, …; what `{arch}` keys stand for.
    pub architecture: Option<String>,
    /// `general.type`, STRING: `model`, `adapter`, `imatrix`, ….
    #[serde(rename = "type")]
    pub type_: Option<String>,
    /// `general.quantization_version`, UINT32.
    pub quantization_version: Option<u32>,
    /// `general.alignment`, UINT32: data alignment in bytes (a power of two; 32 when absent).
    pub alignment: Option<u32>,
    /// `general.file_type`, UINT32: llama.cpp's `llama_ftype` (15 = Q4_K_M, …).
    pub file_type: Option<u32>,
    /// `general.name`, STRING.
    pub name: Option<String>,
    /// `general.author`, STRING.
    pub author: Option<String>,
    /// `general.version`, STRING.
    pub version: Option<String>,
    /// `general.organization`, STRING.
    pub organization: Option<String>,
    /// `general.finetune`, STRING.
    pub finetune: Option<String>,
    /// `general.basename`, STRING.
    pub basename: Option<String>,
    /// `general.description`, STRING.
    pub description: Option<String>,
    /// `general.quantized_by`, STRING.
    pub quantized_by: Option<String>,
    /// `general.size_label`, STRING: `270M`, `8x7B`, ….
    pub size_label: Option<String>,
    /// `general.license`, STRING.
    pub license: Option<String>,
    /// `general.license.name`, STRING.
    #[serde(rename = "license.name")]
    pub license_name: Option<String>,
    /// `general.license.link`, STRING.
    #[serde(rename = "license.link")]
    pub license_link: Option<String>,
    /// `general.url`, STRING.
    pub url: Option<String>,
    /// `general.doi`, STRING.
    pub doi: Option<String>,
    /// `general.uuid`, STRING.
    pub uuid: Option<String>,
    /// `general.repo_url`, STRING.
    pub repo_url: Option<String>,
    /// `general.source.url`, STRING.
    #[serde(rename = "source.url")]
    pub source_url: Option<String>,
    /// `general.source.doi`, STRING.
    #[serde(rename = "source.doi")]
    pub source_doi: Option<String>,
    /// `general.source.uuid`, STRING.
    #[serde(rename = "source.uuid")]
    pub source_uuid: Option<String>,
    /// `general.source.repo_url`, STRING.
    #[serde(rename = "source.repo_url")]
    pub source_repo_url: Option<String>,
    /// `general.base_model.count`, UINT32.
    #[serde(rename = "base_model.count")]
    pub base_model_count: Option<u32>,
    /// `general.dataset.count`, UINT32.
    #[serde(rename = "dataset.count")]
    pub dataset_count: Option<u32>,
    /// `general.tags`, ARRAY of STRING.
    pub tags: Option<Vec<String>>,
    /// `general.languages`, ARRAY of STRING.
    pub languages: Option<Vec<String>>,
}

impl General {
    /// Whether every field is `None` (the group writes no keys).
    pub fn is_empty(&self) -> bool {
        *self == General::default()
    }
}

/// The tokenizer keys (gguf-py `Keys.Tokenizer`): `tokenizer.ggml.*` and
/// `tokenizer.chat_template`. `S` is the string type of the token and merge lists (`String` or
/// a borrowed `&'de str`). Each field says its key and type, as the registry gives them.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Tokenizer<S = String> {
    /// `tokenizer.ggml.model`, STRING: `llama`, `gpt2`, `bert`, `t5`, `rwkv`, `none`, …
    /// (llama.cpp refuses a model without it).
    #[serde(rename = "ggml.model")]
    pub model: Option<String>,
    /// `tokenizer.ggml.pre`, STRING: the pre-tokenizer (`default`, `llama-bpe`, `qwen2`, …).
    #[serde(rename = "ggml.pre")]
    pub pre: Option<String>,
    /// `tokenizer.ggml.tokens`, ARRAY of STRING: the vocabulary, by token id.
    #[serde(rename = "ggml.tokens")]
    pub tokens: Option<Vec<S>>,
    /// `tokenizer.ggml.token_type`, ARRAY of INT32: each token's `llama_token_type`.
    #[serde(rename = "ggml.token_type")]
    pub token_type: Option<Vec<i32>>,
    /// `tokenizer.ggml.token_type_count`, UINT32.
    #[serde(rename = "ggml.token_type_count")]
    pub token_type_count: Option<u32>,
    /// `tokenizer.ggml.scores`, ARRAY of FLOAT32.
    #[serde(rename = "ggml.scores")]
    pub scores: Option<Vec<f32>>,
    /// `tokenizer.ggml.merges`, ARRAY of STRING: BPE merges, `"a b"` each.
    #[serde(rename = "ggml.merges")]
    pub merges: Option<Vec<S>>,
    /// `tokenizer.ggml.bos_token_id`, UINT32.
    #[serde(rename = "ggml.bos_token_id")]
    pub bos_token_id: Option<u32>,
    /// `tokenizer.ggml.eos_token_id`, UINT32.
    #[serde(rename = "ggml.eos_token_id")]
    pub eos_token_id: Option<u32>,
    /// `tokenizer.ggml.eot_token_id`, UINT32.
    #[serde(rename = "ggml.eot_token_id")]
    pub eot_token_id: Option<u32>,
    /// `tokenizer.ggml.eom_token_id`, UINT32.
    #[serde(rename = "ggml.eom_token_id")]
    pub eom_token_id: Option<u32>,
    /// `tokenizer.ggml.unknown_token_id`, UINT32.
    #[serde(rename = "ggml.unknown_token_id")]
    pub unknown_token_id: Option<u32>,
    /// `tokenizer.ggml.seperator_token_id` (spelled so in the reference), UINT32.
    #[serde(rename = "ggml.seperator_token_id")]
    pub separator_token_id: Option<u32>,
    /// `tokenizer.ggml.padding_token_id`, UINT32.
    #[serde(rename = "ggml.padding_token_id")]
    pub padding_token_id: Option<u32>,
    /// `tokenizer.ggml.mask_token_id`, UINT32.
    #[serde(rename = "ggml.mask_token_id")]
    pub mask_token_id: Option<u32>,
    /// `tokenizer.ggml.add_bos_token`, BOOL.
    #[serde(rename = "ggml.add_bos_token")]
    pub add_bos_token: Option<bool>,
    /// `tokenizer.ggml.add_eos_token`, BOOL.
    #[serde(rename = "ggml.add_eos_token")]
    pub add_eos_token: Option<bool>,
    /// `tokenizer.ggml.add_sep_token`, BOOL.
    #[serde(rename = "ggml.add_sep_token")]
    pub add_sep_token: Option<bool>,
    /// `tokenizer.ggml.add_space_prefix`, BOOL.
    #[serde(rename = "ggml.add_space_prefix")]
    pub add_space_prefix: Option<bool>,
    /// `tokenizer.ggml.remove_extra_whitespaces`, BOOL.
    #[serde(rename = "ggml.remove_extra_whitespaces")]
    pub remove_extra_whitespaces: Option<bool>,
    /// `tokenizer.chat_template`, STRING: the default chat template. Named templates
    /// (`tokenizer.chat_template.{name}`) are other keys, not read by this field.
    pub chat_template: Option<String>,
}

impl<S> Default for StandardMetadata<S> {
    fn default() -> Self {
        StandardMetadata { general: General::default(), tokenizer: Tokenizer::default() }
    }
}

impl<S> Default for Tokenizer<S> {
    /// Every field `None`.
    fn default() -> Self {
        Tokenizer {
            model: None,
            pre: None,
            tokens: None,
            token_type: None,
            token_type_count: None,
            scores: None,
            merges: None,
            bos_token_id: None,
            eos_token_id: None,
            eot_token_id: None,
            eom_token_id: None,
            unknown_token_id: None,
            separator_token_id: None,
            padding_token_id: None,
            mask_token_id: None,
            add_bos_token: None,
            add_eos_token: None,
            add_sep_token: None,
            add_space_prefix: None,
            remove_extra_whitespaces: None,
            chat_template: None,
        }
    }
}

impl<S> Tokenizer<S> {
    /// Whether every field is `None` (the group writes no keys).
    pub fn is_empty(&self) -> bool {
        let Tokenizer {
            model,
            pre,
            tokens,
            token_type,
            token_type_count,
            scores,
            merges,
            bos_token_id,
            eos_token_id,
            eot_token_id,
            eom_token_id,
            unknown_token_id,
            separator_token_id,
            padding_token_id,
            mask_token_id,
            add_bos_token,
            add_eos_token,
            add_sep_token,
            add_space_prefix,
            remove_extra_whitespaces,
            chat_template,
        } = self;
        model.is_none()
            && pre.is_none()
            && tokens.is_none()
            && token_type.is_none()
            && token_type_count.is_none()
            && scores.is_none()
            && merges.is_none()
            && bos_token_id.is_none()
            && eos_token_id.is_none()
            && eot_token_id.is_none()
            && eom_token_id.is_none()
            && unknown_token_id.is_none()
            && separator_token_id.is_none()
            && padding_token_id.is_none()
            && mask_token_id.is_none()
            && add_bos_token.is_none()
            && add_eos_token.is_none()
            && add_sep_token.is_none()
            && add_space_prefix.is_none()
            && remove_extra_whitespaces.is_none()
            && chat_template.is_none()
    }
}
