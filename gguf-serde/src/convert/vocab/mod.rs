//! Hugging Face tokenizers to the `tokenizer.ggml.*` and `tokenizer.chat_template*` keys, as
//! llama.cpp's `convert_hf_to_gguf.py` writes them (the llama.cpp vendored by llama-cpp-python
//! 0.3.36, sdist sha256 832db06…: `conversion/base.py`, `TextModel._set_vocab_sentencepiece`,
//! `_create_vocab_sentencepiece`, `get_vocab_base`, `get_vocab_base_pre` and `_set_vocab_gpt2`;
//! the architectures' `set_vocab`; gguf-py's `gguf/vocab.py`, `SpecialVocab` and `LlamaHfVocab`'s
//! checks; `gguf/gguf_writer.py` for key names, types and order).
//!
//! Each function returns the keys in the order the reference writes them, each with the GGUF
//! type gguf-py's writer gives it (`array<string>` tokens, `array<f32>` scores, `array<i32>`
//! token types, `u32` token ids, `bool` flags, `string` templates). A key written twice keeps the
//! place of its first write and the value of its last, as gguf-py's writer (a dict) does.
//!
//! Supported:
//! - SentencePiece vocabularies (`tokenizer.model`, with `added_tokens.json` and
//!   `tokenizer_config.json`'s `added_tokens_decoder`): [`set_vocab_sentencepiece`];
//! - GPT-2 style BPE vocabularies (`tokenizer.json` with a `BPE` model: Llama 3, Qwen 2/3, Phi-4,
//!   ...): [`bpe::set_vocab_gpt2`], `tokenizer.ggml.model` = `gpt2`, with the pre-tokenizer
//!   named as the reference names it, by the sha256 of the token ids Hugging Face's own
//!   `tokenizers` library gives for the reference's check text, looked up in the reference's
//!   table ([`bpe::PRE_TOKENIZER_HASHES`], generated from `get_vocab_base_pre` by
//!   `scripts/gen-bpe-pre-hashes.py`);
//! - the special vocabulary ([`special_vocab`]: merges, special ids, `add_*_token`, chat
//!   templates, normalizer flags);
//! - gguf-py's `LlamaHfVocab` (a `tokenizer.json` BPE with byte fallback and no
//!   `tokenizer.model`): [`llama_hf::set_vocab_llama_hf`], with the tokens and special tokens
//!   `transformers.AutoTokenizer` adds or names (the `auto_tokenizer` module);
//! - the architectures' `set_vocab` entries, each choosing as the reference does:
//!   [`set_vocab_llama`] (Llama, Mixtral, SmolLM3, Granite), [`set_vocab_qwen2`] (Qwen 2 and 3),
//!   [`set_vocab_gemma2`], [`set_vocab_gemma3`], [`set_vocab_phi3`], [`bpe::set_vocab_glm4`]
//!   (GLM-4) and [`bpe::set_vocab_glm`] (GLM-4.5's `_set_vocab_glm`); the GPT-2 default
//!   (`TextModel.set_vocab`: Olmo2, Qwen2-MoE, Qwen3-MoE) is [`bpe::set_vocab_gpt2`].
//!   [`crate::convert::vocab_hook`] has one hook per entry for the architectures.
//!
//! Not supported (refused with [`VocabError::Unsupported`]): `tokenizer.json` models other than
//! BPE (WordPiece, Unigram), tiktoken (`_set_vocab_qwen`), mistral-common (`_set_vocab_mistral`)
//! and the other tokenizer kinds of the reference.

use std::path::{Path, PathBuf};

use crate::container::{Array, Value};

mod auto_tokenizer;
pub mod bpe;
mod json_parts;
pub mod llama_hf;
mod pre_hashes;
mod special;
pub mod spm;

pub use special::{special_vocab, ChatTemplate, SpecialVocab};

/// What went wrong reading a tokenizer folder: the file, and what or where in it.
#[derive(Debug, thiserror::Error)]
pub enum VocabError {
    /// A file the vocabulary needs is missing (the reference's `FileNotFoundError`).
    #[error("{path}: not found", path = crate::format::shown_path(.path))]
    NotFound {
        /// The missing file.
        path: PathBuf,
    },
    /// A file could not be read (the message names the file; the I/O error is the `source`).
    #[error("cannot read {path}", path = crate::format::shown_path(.path))]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A JSON file that does not parse.
    #[error("{path} is not valid JSON", path = crate::format::shown_path(.path))]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's error (with line and column).
        #[source]
        source: serde_json::Error,
    },
    /// A JSON value of the wrong kind or out of range.
    #[error("{path}: {what}", path = crate::format::shown_path(.path))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where (the JSON path).
        what: String,
    },
    /// A `tokenizer.model` that is not a valid sentencepiece model (what is wrong, with its
    /// byte offset, is the `source`).
    #[error("{path} is not a valid sentencepiece model", path = crate::format::shown_path(.path))]
    Proto {
        /// The file.
        path: PathBuf,
        /// What is wrong, with its byte offset.
        #[source]
        source: spm::ProtoError,
    },
    /// A `tokenizer.json` that Hugging Face's `tokenizers` library refuses to load, or fails to
    /// encode or decode with.
    #[error("{path}: {message}", path = crate::format::shown_path(.path))]
    Tokenizer {
        /// The file.
        path: PathBuf,
        /// What was being done, and the library's message.
        message: String,
    },
    /// The BPE pre-tokenizer is not one the reference knows: the sha256 of the check text's
    /// token ids is not in its table (the reference raises `NotImplementedError`, "BPE
    /// pre-tokenizer was not recognized - update get_vocab_base_pre()").
    /// When `imposed` names a class, the hash is of that class's pipeline (transformers builds
    /// it whatever `tokenizer.json` declares), and the message says so.
    #[error("{path}: the BPE pre-tokenizer was not recognized (chkhsh {hash}): it is not in the table of llama.cpp's get_vocab_base_pre that this converter follows{}", imposed_note(.imposed.as_deref()), path = crate::format::shown_path(.path))]
    UnknownPreTokenizer {
        /// `tokenizer.json`.
        path: PathBuf,
        /// The hash (`chkhsh`), lowercase hex.
        hash: String,
        /// The tokenizer class whose pre-tokenizer was imposed (`Qwen2Tokenizer`), as
        /// `transformers.AutoTokenizer` imposes it; `None`: `tokenizer.json`'s own.
        imposed: Option<String>,
    },
    /// A tokenizer of a kind this crate does not convert.
    #[error("{path}: {what}", path = crate::format::shown_path(.path))]
    Unsupported {
        /// The file that shows the kind.
        path: PathBuf,
        /// What kind, and why it is refused.
        what: String,
    },
}

impl VocabError {
    /// The file the error names (every variant names one, first in its message).
    pub fn path(&self) -> &Path {
        match self {
            VocabError::NotFound { path }
            | VocabError::Io { path, .. }
            | VocabError::Json { path, .. }
            | VocabError::Invalid { path, .. }
            | VocabError::Proto { path, .. }
            | VocabError::Tokenizer { path, .. }
            | VocabError::UnknownPreTokenizer { path, .. }
            | VocabError::Unsupported { path, .. } => path,
        }
    }
}

fn imposed_note(class: Option<&str>) -> String {
    class.map_or_else(String::new, |c| {
        format!(
            " (hashed through {c}'s pre-tokenizer, which transformers.AutoTokenizer builds for this folder's model_type and tokenizer_class and applies whatever tokenizer.json declares)"
        )
    })
}

/// Keys in write order; setting a key again replaces its value in place (gguf-py's dict).
#[derive(Default)]
pub(crate) struct Kvs(pub(crate) Vec<(String, Value)>);

impl Kvs {
    pub(crate) fn set(&mut self, key: &str, value: Value) {
        if let Some(slot) = self.0.iter_mut().find(|(k, _)| k == key) {
            slot.1 = value;
        } else {
            self.0.push((key.to_owned(), value));
        }
    }

    /// gguf-py's `add_array`: an empty list writes nothing.
    pub(crate) fn set_array(&mut self, key: &str, array: Array) {
        if !array.is_empty() {
            self.set(key, Value::Array(array));
        }
    }
}

pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, VocabError> {
    std::fs::read(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            VocabError::NotFound { path: path.to_owned() }
        } else {
            VocabError::Io { path: path.to_owned(), source }
        }
    })
}

/// Reads a JSON file if it is a file (`Path.is_file()` in the reference), else `None`.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, VocabError> {
    if !path.is_file() {
        return Ok(None);
    }
    let bytes = read_file(path)?;
    serde_json::from_slice(&bytes).map(Some).map_err(|source| VocabError::Json { path: path.to_owned(), source })
}

pub(crate) fn invalid(path: &Path, what: impl Into<String>) -> VocabError {
    VocabError::Invalid { path: path.to_owned(), what: what.into() }
}

/// A JSON object with its keys in file order (Python's `json.load` keeps it; serde_json's map
/// without its `preserve_order` feature sorts).
pub(crate) struct OrderedObject(pub(crate) Vec<(String, serde_json::Value)>);

impl<'de> serde::Deserialize<'de> for OrderedObject {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = OrderedObject;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<OrderedObject, A::Error> {
                let mut out: Vec<(String, serde_json::Value)> = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, serde_json::Value>()? {
                    // A repeated key: Python keeps the first place and the last value.
                    if let Some(slot) = out.iter_mut().find(|(key, _)| *key == k) {
                        slot.1 = v;
                    } else {
                        out.push((k, v));
                    }
                }
                Ok(OrderedObject(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// `SentencePieceTokenTypes` / gguf-py's `TokenType`, as stored in `tokenizer.ggml.token_type`.
pub mod token_type {
    /// An ordinary token.
    pub const NORMAL: i32 = 1;
    /// The unknown token.
    pub const UNKNOWN: i32 = 2;
    /// A control token.
    pub const CONTROL: i32 = 3;
    /// A user-defined token.
    pub const USER_DEFINED: i32 = 4;
    /// An unused token (also padding `[PAD{i}]`).
    pub const UNUSED: i32 = 5;
    /// A byte token.
    pub const BYTE: i32 = 6;
}

/// The reference's `does_token_look_special`: added tokens some models leave unmarked that are
/// control tokens all the same.
pub fn does_token_look_special(token: &str) -> bool {
    matches!(token, "<pad>" | "<mask>" | "<2mass>" | "[@BOS@]")
        || (token.starts_with("<|") && token.ends_with("|>"))
        || (token.starts_with("<｜") && token.ends_with("｜>"))
        || (token.starts_with("<unused") && token.ends_with('>'))
}

/// A SentencePiece vocabulary: tokens, scores and token types (`_create_vocab_sentencepiece`).
#[derive(Clone, Debug, PartialEq)]
pub struct SpmVocab {
    /// Token texts, `vocab_size` of them.
    pub tokens: Vec<String>,
    /// Scores.
    pub scores: Vec<f32>,
    /// Token types ([`token_type`]).
    pub types: Vec<i32>,
}

/// The model's pieces as ids `0..n` (sentencepiece's IsUnknown / IsControl / IsUnused / IsByte,
/// else normal, user-defined pieces included), the ids past the pieces padded as the reference
/// pads them: `[PADi]`, score -10000, unused. Pieces past `n` are left out.
fn pieces_padded(model: &spm::SpmModel, n: usize) -> SpmVocab {
    let mut v = SpmVocab {
        tokens: (0..n).map(|i| format!("[PAD{i}]")).collect(),
        scores: vec![-10000.0; n],
        types: vec![token_type::UNUSED; n],
    };
    for (id, p) in model.pieces.iter().enumerate().take(n) {
        use spm::PieceType as T;
        v.types[id] = match p.kind {
            T::Unknown => token_type::UNKNOWN,
            T::Control => token_type::CONTROL,
            T::Unused => token_type::UNUSED,
            T::Byte => token_type::BYTE,
            T::Normal | T::UserDefined => token_type::NORMAL,
        };
        v.tokens[id] = p.piece.clone();
        v.scores[id] = p.score;
    }
    v
}

/// `added_tokens.json` (`{text: id}`), if the folder has one: each id below `n` becomes that
/// text, score -1000, user-defined; ids from `n` on are ignored, as the reference ignores them.
///
/// # Errors
/// [`VocabError`] for a file that is not that JSON or an id that is not a non-negative integer.
fn added_tokens_json(dir: &Path, v: &mut SpmVocab, n: usize) -> Result<(), VocabError> {
    let added_path = dir.join("added_tokens.json");
    if let Some(OrderedObject(added)) = read_json::<OrderedObject>(&added_path)? {
        for (text, id) in added {
            let id = json_id(&added_path, &id, &format!("[{text:?}]"))?;
            if id < n {
                v.tokens[id] = text;
                v.scores[id] = -1000.0;
                v.types[id] = token_type::USER_DEFINED;
            }
        }
    }
    Ok(())
}

/// Builds the SentencePiece vocabulary of `dir` as `_create_vocab_sentencepiece` does.
///
/// `vocab_size` is the checkpoint's `config.json` `vocab_size` (`vocab_size_per_layer_input`
/// first, for Gemma 3n); `None` or 0 takes the model's piece count. Ids from `vocab_size` up are
/// dropped; ids below it without a piece are `[PAD{id}]`, score -10000, unused. Then
/// `added_tokens.json` (each `text: id` a user-defined token of score -1000) and
/// `tokenizer_config.json`'s `added_tokens_decoder` (control if `special` or
/// [`does_token_look_special`], else user-defined with `▁` replaced by a space; score -1000)
/// overwrite their ids.
///
/// Errors: [`VocabError::NotFound`] without `tokenizer.model` (the reference's
/// `FileNotFoundError`, on which Llama and Qwen2 fall back to other vocabularies), a malformed
/// model ([`VocabError::Proto`]), malformed JSON or ids that are not non-negative integers.
pub fn create_vocab_sentencepiece(dir: &Path, vocab_size: Option<usize>) -> Result<SpmVocab, VocabError> {
    let model_path = dir.join("tokenizer.model");
    if !model_path.is_file() {
        return Err(VocabError::NotFound { path: model_path });
    }
    let bytes = read_file(&model_path)?;
    let model = spm::parse_model(&bytes).map_err(|source| VocabError::Proto { path: model_path.clone(), source })?;
    let n = match vocab_size {
        Some(n) if n > 0 => n,
        _ => model.pieces.len(),
    };
    let mut v = pieces_padded(&model, n);
    added_tokens_json(dir, &mut v, n)?;

    let config_path = dir.join("tokenizer_config.json");
    if let Some(config) = read_json::<serde_json::Value>(&config_path)? {
        if let Some(decoder) = config.get("added_tokens_decoder") {
            let serde_json::Value::Object(_) = decoder else {
                return Err(invalid(&config_path, "added_tokens_decoder: not an object"));
            };
            let bytes = read_file(&config_path)?;
            let ordered = ordered_member(&bytes, "added_tokens_decoder")
                .map_err(|source| VocabError::Json { path: config_path.clone(), source })?;
            for (key, data) in ordered {
                let id: usize = key
                    .trim()
                    .parse()
                    .map_err(|_| invalid(&config_path, format!("added_tokens_decoder[{key:?}]: not a token id")))?;
                let content = data.get("content").and_then(|c| c.as_str()).ok_or_else(|| {
                    invalid(&config_path, format!("added_tokens_decoder[{key:?}].content: missing or not a string"))
                })?;
                if id >= n {
                    continue;
                }
                let special = data.get("special").is_some_and(truthy);
                let token = if special || does_token_look_special(content) {
                    v.types[id] = token_type::CONTROL;
                    content.to_owned()
                } else {
                    v.types[id] = token_type::USER_DEFINED;
                    content.replace('\u{2581}', " ")
                };
                v.scores[id] = -1000.0;
                v.tokens[id] = token;
            }
        }
    }
    Ok(v)
}

/// The members of the top-level object's member `name`, in file order.
fn ordered_member(bytes: &[u8], name: &str) -> Result<Vec<(String, serde_json::Value)>, serde_json::Error> {
    let OrderedObject(top) = serde_json::from_slice(bytes)?;
    let Some((_, v)) = top.into_iter().find(|(k, _)| k == name) else {
        return Ok(Vec::new());
    };
    let OrderedObject(members) = serde::Deserialize::deserialize(v)?;
    Ok(members)
}

/// Python's truthiness of a JSON value.
pub(crate) fn truthy(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Null => false,
        serde_json::Value::Bool(b) => *b,
        serde_json::Value::Number(n) => n.as_f64() != Some(0.0),
        serde_json::Value::String(s) => !s.is_empty(),
        serde_json::Value::Array(a) => !a.is_empty(),
        serde_json::Value::Object(o) => !o.is_empty(),
    }
}

fn json_id(path: &Path, v: &serde_json::Value, at: &str) -> Result<usize, VocabError> {
    v.as_u64()
        .and_then(|id| usize::try_from(id).ok())
        .ok_or_else(|| invalid(path, format!("{at}: {v} is not a token id (a non-negative integer)")))
}

/// `TextModel._set_vocab_sentencepiece`: `tokenizer.ggml.model` = `llama`, `tokenizer.ggml.pre` =
/// `default`, tokens, scores, token types ([`create_vocab_sentencepiece`]), then the special
/// vocabulary of `dir` without merges and with `n_vocab` = the token count
/// ([`SpecialVocab::keys`]).
pub fn set_vocab_sentencepiece(dir: &Path, vocab_size: Option<usize>) -> Result<Vec<(String, Value)>, VocabError> {
    let mut kvs = Kvs::default();
    sentencepiece_into(&mut kvs, dir, vocab_size)?;
    Ok(kvs.0)
}

fn sentencepiece_into(kvs: &mut Kvs, dir: &Path, vocab_size: Option<usize>) -> Result<(), VocabError> {
    let v = create_vocab_sentencepiece(dir, vocab_size)?;
    write_spm(kvs, dir, v)
}

/// The keys every SentencePiece-style `set_vocab` writes: `tokenizer.ggml.model` = `llama`,
/// `tokenizer.ggml.pre` = `default`, tokens, scores, token types, then the special vocabulary of
/// `dir` without merges and with `n_vocab` = the token count.
pub(super) fn write_spm(kvs: &mut Kvs, dir: &Path, v: SpmVocab) -> Result<(), VocabError> {
    let n = v.tokens.len();
    kvs.set("tokenizer.ggml.model", Value::String("llama".into()));
    kvs.set("tokenizer.ggml.pre", Value::String("default".into()));
    kvs.set_array("tokenizer.ggml.tokens", Array::String(v.tokens));
    kvs.set_array("tokenizer.ggml.scores", Array::F32(v.scores));
    kvs.set_array("tokenizer.ggml.token_type", Array::I32(v.types));
    special_vocab(dir, false, Some(n))?.write_into(kvs)
}

/// Qwen 2 and Qwen 3 (`Qwen2Model.set_vocab`): the SentencePiece vocabulary
/// ([`set_vocab_sentencepiece`]) when the folder has `tokenizer.model`, else the GPT-2 BPE one
/// ([`bpe::set_vocab_gpt2`]), as the reference falls back on `FileNotFoundError`.
///
/// # Errors
/// As those two functions.
pub fn set_vocab_qwen2(dir: &Path, vocab_size: Option<usize>) -> Result<Vec<(String, Value)>, VocabError> {
    let mut kvs = Kvs::default();
    if dir.join("tokenizer.model").is_file() {
        sentencepiece_into(&mut kvs, dir, vocab_size)?;
    } else {
        bpe::gpt2_into(&mut kvs, dir, vocab_size)?;
    }
    Ok(kvs.0)
}

/// Gemma 3 (`Gemma3Model.set_vocab`): for a folder with `tokenizer.model`, the SentencePiece
/// vocabulary then `tokenizer.ggml.add_space_prefix` = false; without it, the GPT-2 BPE
/// vocabulary of `tokenizer.json` ([`bpe::set_vocab_gpt2`]).
///
/// # Errors
/// As [`set_vocab_sentencepiece`] and [`bpe::set_vocab_gpt2`].
pub fn set_vocab_gemma3(dir: &Path, vocab_size: Option<usize>) -> Result<Vec<(String, Value)>, VocabError> {
    let mut kvs = Kvs::default();
    if dir.join("tokenizer.model").is_file() {
        sentencepiece_into(&mut kvs, dir, vocab_size)?;
        kvs.set("tokenizer.ggml.add_space_prefix", Value::Bool(false));
    } else {
        bpe::gpt2_into(&mut kvs, dir, vocab_size)?;
    }
    Ok(kvs.0)
}

/// Gemma 2 (`Gemma2Model.set_vocab`): the SentencePiece vocabulary ([`set_vocab_sentencepiece`];
/// unlike Gemma 3, no GPT-2 BPE fallback without `tokenizer.model`), then
/// `tokenizer.ggml.add_space_prefix` = false.
///
/// # Errors
/// As [`set_vocab_sentencepiece`] ([`VocabError::NotFound`] without `tokenizer.model`).
pub fn set_vocab_gemma2(dir: &Path, vocab_size: Option<usize>) -> Result<Vec<(String, Value)>, VocabError> {
    let mut kvs = Kvs::default();
    sentencepiece_into(&mut kvs, dir, vocab_size)?;
    kvs.set("tokenizer.ggml.add_space_prefix", Value::Bool(false));
    Ok(kvs.0)
}

/// Llama (`LlamaModel.set_vocab`): first `tokenizer.ggml.add_space_prefix` from
/// `tokenizer_config.json`'s `add_prefix_space` when it is a bool, then the SentencePiece
/// vocabulary of `tokenizer.model` ([`set_vocab_sentencepiece`]); for a folder without it, when
/// `tokenizer.json` is the kind gguf-py's `LlamaHfVocab` reads (a BPE with byte fallback and a
/// `Sequence` decoder), that vocabulary ([`llama_hf::set_vocab_llama_hf`]), else the GPT-2 BPE
/// vocabulary of `tokenizer.json` ([`bpe::set_vocab_gpt2`]; Llama 3), the reference's order of
/// fallbacks. Then, with `vocab_size` 32016 (CodeLlama) the
/// `prefix`/`suffix`/`middle`/`eot` ids 32007–32010 (only `eot` has a key), and with 49152
/// (Granite small) `add_bos_token` false.
///
/// # Errors
/// As [`set_vocab_sentencepiece`], [`llama_hf::set_vocab_llama_hf`] and [`bpe::set_vocab_gpt2`];
/// [`VocabError::Invalid`] for an `add_prefix_space` that is not a bool or a `tokenizer.json`
/// without a `model` object.
pub fn set_vocab_llama(dir: &Path, vocab_size: Option<usize>) -> Result<Vec<(String, Value)>, VocabError> {
    let mut kvs = Kvs::default();
    let config_path = dir.join("tokenizer_config.json");
    if let Some(config) = read_json::<serde_json::Value>(&config_path)? {
        match config.get("add_prefix_space") {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::Bool(b)) => kvs.set("tokenizer.ggml.add_space_prefix", Value::Bool(*b)),
            Some(other) => return Err(invalid(&config_path, format!("add_prefix_space: {other} is not a bool"))),
        }
    }
    if dir.join("tokenizer.model").is_file() {
        sentencepiece_into(&mut kvs, dir, vocab_size)?;
    } else if llama_hf::kind(dir)? == Some(llama_hf::Kind::LlamaHf) {
        llama_hf::llama_hf_into(&mut kvs, dir)?;
    } else {
        bpe::gpt2_into(&mut kvs, dir, vocab_size)?;
    }
    let n = vocab_size.unwrap_or(32000);
    if n == 32016 {
        // SpecialVocab(load_merges=False, types prefix/suffix/middle/eot): of what the folder
        // sets, only eot has a writer method; the fixed ids come after (first set wins).
        let mut sv = special::load(dir, false, None, &["prefix", "suffix", "middle", "eot"])?;
        for (typ, id) in [("prefix", 32007), ("suffix", 32008), ("middle", 32009), ("eot", 32010)] {
            sv.set_special_token(typ, id);
        }
        sv.write_into(&mut kvs)?;
    }
    if n == 49152 {
        kvs.set("tokenizer.ggml.add_bos_token", Value::Bool(false));
    }
    Ok(kvs.0)
}

/// Phi-3 (`Phi3MiniModel.set_vocab`): its own SentencePiece reading. `tokenizer_config.json`'s
/// `tokenizer_class` `GPT2Tokenizer` (Phi-4) takes the GPT-2 BPE vocabulary instead
/// ([`bpe::set_vocab_gpt2`]); a `tokenizer_config.json` without `tokenizer_class` is an error,
/// as in the reference. Otherwise `tokenizer.model`'s pieces as in
/// [`create_vocab_sentencepiece`] (but `vocab_size` 0 is taken as given, and a piece at or above
/// `vocab_size` is an error, where the reference fails with an `IndexError`), then
/// `added_tokens.json` (ids at or above `vocab_size` skipped), `added_tokens_decoder` and then
/// `tokenizer.json`'s `added_tokens`: each a user-defined token of score -1000, control if
/// `special` (no look-special rule, no `▁` replacement), ids out of range an error; then
/// the special vocabulary without merges.
pub fn set_vocab_phi3(dir: &Path, vocab_size: Option<usize>) -> Result<Vec<(String, Value)>, VocabError> {
    let config_path = dir.join("tokenizer_config.json");
    let config = read_json::<serde_json::Value>(&config_path)?;
    if let Some(config) = &config {
        match config.get("tokenizer_class") {
            Some(serde_json::Value::String(c)) if c == "GPT2Tokenizer" => return bpe::set_vocab_gpt2(dir, vocab_size),
            Some(_) => {}
            None => return Err(invalid(&config_path, "tokenizer_class: missing (the reference requires it)")),
        }
    }
    let model_path = dir.join("tokenizer.model");
    if !model_path.is_file() {
        return Err(VocabError::NotFound { path: model_path });
    }
    let bytes = read_file(&model_path)?;
    let model = spm::parse_model(&bytes).map_err(|source| VocabError::Proto { path: model_path.clone(), source })?;
    let n = vocab_size.unwrap_or(model.pieces.len());
    if model.pieces.len() > n {
        return Err(invalid(&model_path, format!("{} pieces, more than vocab_size {n}", model.pieces.len())));
    }
    let mut v = pieces_padded(&model, n);
    added_tokens_json(dir, &mut v, n)?;
    let mut set = |path: &Path, at: String, id: usize, data: &serde_json::Value| -> Result<(), VocabError> {
        let content = data
            .get("content")
            .and_then(|c| c.as_str())
            .ok_or_else(|| invalid(path, format!("{at}.content: missing or not a string")))?;
        if id >= n {
            return Err(invalid(path, format!("{at}: id {id} is not under vocab_size {n}")));
        }
        v.tokens[id] = content.to_owned();
        v.scores[id] = -1000.0;
        v.types[id] =
            if data.get("special").is_some_and(truthy) { token_type::CONTROL } else { token_type::USER_DEFINED };
        Ok(())
    };
    if config.as_ref().and_then(|c| c.get("added_tokens_decoder")).is_some() {
        let bytes = read_file(&config_path)?;
        let ordered = ordered_member(&bytes, "added_tokens_decoder")
            .map_err(|source| VocabError::Json { path: config_path.clone(), source })?;
        for (key, data) in ordered {
            let id: usize = key
                .trim()
                .parse()
                .map_err(|_| invalid(&config_path, format!("added_tokens_decoder[{key:?}]: not a token id")))?;
            set(&config_path, format!("added_tokens_decoder[{key:?}]"), id, &data)?;
        }
    }
    let tok_path = dir.join("tokenizer.json");
    if let Some(tok) = read_json::<serde_json::Value>(&tok_path)? {
        if let Some(list) = tok.get("added_tokens") {
            let list = list.as_array().ok_or_else(|| invalid(&tok_path, "added_tokens: not a list"))?;
            for (i, data) in list.iter().enumerate() {
                let id = json_id(
                    &tok_path,
                    data.get("id").unwrap_or(&serde_json::Value::Null),
                    &format!("added_tokens[{i}].id"),
                )?;
                set(&tok_path, format!("added_tokens[{i}]"), id, data)?;
            }
        }
    }
    let mut kvs = Kvs::default();
    write_spm(&mut kvs, dir, v)?;
    Ok(kvs.0)
}

#[cfg(test)]
mod tests;
