//! Typed metadata structs of the serde tests (`tests/tests/interop/serde_gemma.rs`,
//! `tests/tests/interop/serde_llama.rs`, and the bench `gguf-serde/benches/serde_metadata.rs`): nested structs, the `{arch}` placeholder and dotted renames,
//! generic over the string type of the tokens (`String`, owned, or `&'de str`, borrowed).
//!
//! `examples/src/models.rs` maps the same Gemma 3 keys the other way, with flat dotted renames
//! (`tokenizer.ggml`, `{arch}.attention.head_count`) on one struct: the two cover both ways a
//! user writes such a struct, so they are kept apart on purpose.

pub mod gemma {
    //! The metadata of the Gemma 3 270M model: all 33 keys, in file order (so that serializing
    //! writes the file's own key/value block back).

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
}

pub mod llama {
    //! llama-2-tiny-random-style metadata: the same shape as the Gemma struct, written for llama.
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct LlamaMetadata<S> {
        pub general: General,
        #[serde(rename = "{arch}")]
        pub hparams: Hparams,
        pub tokenizer: Tokenizer<S>,
    }

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct General {
        pub architecture: String,
        pub name: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub file_type: Option<u32>,
    }

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct Hparams {
        pub context_length: u32,
        pub embedding_length: u32,
        pub block_count: u32,
        pub feed_forward_length: u32,
        pub rope: Rope,
        pub attention: Attention,
    }

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct Rope {
        pub dimension_count: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub freq_base: Option<f32>,
    }

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct Attention {
        pub head_count: u32,
        pub head_count_kv: u32,
        pub layer_norm_rms_epsilon: f32,
    }

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct Tokenizer<S> {
        pub ggml: Ggml<S>,
    }

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct Ggml<S> {
        pub model: String,
        pub tokens: Vec<S>,
        pub scores: Vec<f32>,
        pub token_type: Vec<i32>,
        pub bos_token_id: u32,
        pub eos_token_id: u32,
        pub unknown_token_id: u32,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        pub padding_token_id: Option<u32>,
        pub add_bos_token: bool,
        pub add_eos_token: bool,
    }

    /// The values `tests/py/write_llama.py` writes.
    pub fn tiny() -> LlamaMetadata<String> {
        LlamaMetadata {
            general: General { architecture: "llama".into(), name: "tiny-random-llama".into(), file_type: Some(1) },
            hparams: Hparams {
                context_length: 2048,
                embedding_length: 16,
                block_count: 2,
                feed_forward_length: 64,
                rope: Rope { dimension_count: 4, freq_base: Some(10000.0) },
                attention: Attention { head_count: 4, head_count_kv: 2, layer_norm_rms_epsilon: 1e-6 },
            },
            tokenizer: Tokenizer {
                ggml: Ggml {
                    model: "llama".into(),
                    tokens: ["<unk>", "<s>", "</s>", "▁a", "▁b", "é", "<0x0A>", ""].map(String::from).to_vec(),
                    scores: vec![0.0, 0.0, 0.0, -1.5, -2.25, -3.0, -4.0, -5.5],
                    token_type: vec![2, 3, 3, 1, 1, 1, 6, 5],
                    bos_token_id: 1,
                    eos_token_id: 2,
                    unknown_token_id: 0,
                    padding_token_id: None,
                    add_bos_token: true,
                    add_eos_token: false,
                },
            },
        }
    }
}
