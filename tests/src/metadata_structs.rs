//! The metadata of the Gemma 3 270M model as typed structs: all 33 keys, in file order (so that
//! serializing writes the file's own key/value block back).
//!
//! `S` is the string type of the tokens: `String` (owned) or `&'de str` (borrowed from the file).

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Gemma3Metadata<S> {
    pub general: General,
    /// `gemma3.*`, through the architecture placeholder.
    #[serde(rename = "{arch}")]
    pub hparams: Gemma3Hparams,
    pub tokenizer: Tokenizer<S>,
    /// Two `general.*` keys that the file stores last: a dotted rename keeps the file's order.
    #[serde(rename = "general.quantization_version")]
    pub quantization_version: u32,
    #[serde(rename = "general.file_type")]
    pub file_type: u32,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct General {
    pub architecture: String,
    #[serde(rename = "type")]
    pub type_: String,
    pub name: String,
    pub basename: String,
    pub size_label: String,
    pub license: String,
    pub tags: Vec<String>,
}

/// The file interleaves `attention.*` and `rope.*` keys, so these are dotted renames rather than
/// nested structs.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Gemma3Hparams {
    pub context_length: u32,
    pub embedding_length: u32,
    pub block_count: u32,
    pub feed_forward_length: u32,
    #[serde(rename = "attention.head_count")]
    pub head_count: u32,
    #[serde(rename = "attention.layer_norm_rms_epsilon")]
    pub layer_norm_rms_epsilon: f32,
    #[serde(rename = "attention.key_length")]
    pub key_length: u32,
    #[serde(rename = "attention.value_length")]
    pub value_length: u32,
    #[serde(rename = "rope.freq_base")]
    pub rope_freq_base: f32,
    #[serde(rename = "attention.sliding_window")]
    pub sliding_window: u32,
    #[serde(rename = "attention.head_count_kv")]
    pub head_count_kv: u32,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Tokenizer<S> {
    pub ggml: Ggml<S>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Ggml<S> {
    pub model: String,
    pub pre: String,
    pub tokens: Vec<S>,
    pub scores: Vec<f32>,
    pub token_type: Vec<i32>,
    pub bos_token_id: u32,
    pub eos_token_id: u32,
    pub unknown_token_id: u32,
    pub padding_token_id: u32,
    pub add_bos_token: bool,
    pub add_sep_token: bool,
    pub add_eos_token: bool,
    pub add_space_prefix: bool,
}
