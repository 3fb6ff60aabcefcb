//! Hugging Face tokenizers to the `tokenizer.ggml.*` and `tokenizer.chat_template*` keys, as
//! llama.cpp's `convert_hf_to_gguf.py` writes them (llama.cpp 832db06: `conversion/base.py`,
//! `TextModel._set_vocab_sentencepiece` and `_create_vocab_sentencepiece`; gguf-py's
//! `gguf/vocab.py`, `SpecialVocab`; `gguf/gguf_writer.py` for key names, types and order).
//!
//! Each function returns the keys in the order the reference writes them, each with the GGUF
//! type gguf-py's writer gives it (`array<string>` tokens, `array<f32>` scores, `array<i32>`
//! token types, `u32` token ids, `bool` flags, `string` templates). A key written twice keeps the
//! place of its first write and the value of its last, as gguf-py's writer (a dict) does.
//!
//! Done here: SentencePiece vocabularies (`tokenizer.model`, with `added_tokens.json` and
//! `tokenizer_config.json`'s `added_tokens_decoder`), the special vocabulary ([`special_vocab`]),
//! and the Llama, Gemma 3 and Phi-3 entries for SentencePiece folders. Not yet: BPE (`gpt2`) from
//! `tokenizer.json`, which needs the pre-tokenizer hash of Hugging Face's `tokenizers` encoding.

use std::path::{Path, PathBuf};

use crate::container::{Array, Value};

mod special;
pub mod spm;

pub use special::{special_vocab, ChatTemplate, SpecialVocab};

/// What went wrong reading a tokenizer folder: the file, and what or where in it.
#[derive(Debug, thiserror::Error)]
pub enum VocabError {
    /// A file the vocabulary needs is missing (the reference's `FileNotFoundError`).
    #[error("{path}: not found")]
    NotFound {
        /// The missing file.
        path: PathBuf,
    },
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A JSON file that does not parse.
    #[error("{path}: invalid JSON: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's error (with line and column).
        #[source]
        source: serde_json::Error,
    },
    /// A JSON value of the wrong kind or out of range.
    #[error("{path}: {what}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where (the JSON path).
        what: String,
    },
    /// A `tokenizer.model` that is not a valid sentencepiece model.
    #[error("{path}: {source}")]
    Proto {
        /// The file.
        path: PathBuf,
        /// What is wrong, with its byte offset.
        #[source]
        source: spm::ProtoError,
    },
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
    let n = v.tokens.len();
    kvs.set("tokenizer.ggml.model", Value::String("llama".into()));
    kvs.set("tokenizer.ggml.pre", Value::String("default".into()));
    kvs.set_array("tokenizer.ggml.tokens", Array::String(v.tokens));
    kvs.set_array("tokenizer.ggml.scores", Array::F32(v.scores));
    kvs.set_array("tokenizer.ggml.token_type", Array::I32(v.types));
    special_vocab(dir, false, Some(n))?.write_into(kvs)?;
    Ok(())
}

/// Gemma 3 (`Gemma3Model.set_vocab`) for a folder with `tokenizer.model`: the SentencePiece
/// vocabulary, then `tokenizer.ggml.add_space_prefix` = false. A folder without it needs the BPE
/// vocabulary, not done yet: [`VocabError::NotFound`] naming `tokenizer.model`.
pub fn set_vocab_gemma3(dir: &Path, vocab_size: Option<usize>) -> Result<Vec<(String, Value)>, VocabError> {
    let mut kvs = Kvs::default();
    sentencepiece_into(&mut kvs, dir, vocab_size)?;
    kvs.set("tokenizer.ggml.add_space_prefix", Value::Bool(false));
    Ok(kvs.0)
}

/// Llama (`LlamaModel.set_vocab`) for a folder with `tokenizer.model`: first
/// `tokenizer.ggml.add_space_prefix` from `tokenizer_config.json`'s `add_prefix_space` when it
/// is a bool, then the SentencePiece vocabulary; with `vocab_size` 32016 (CodeLlama) the
/// `prefix`/`suffix`/`middle`/`eot` ids 32007–32010 (only `eot` has a key), and with 49152
/// (Granite small) `add_bos_token` false. The reference's fallbacks (`LlamaHfVocab`, then BPE)
/// are not done yet: a folder without `tokenizer.model` is [`VocabError::NotFound`].
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
    sentencepiece_into(&mut kvs, dir, vocab_size)?;
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
/// `tokenizer_class` `GPT2Tokenizer` (Phi-4) needs the BPE vocabulary, not done yet
/// ([`VocabError::Invalid`] saying so). Otherwise `tokenizer.model`'s pieces as in
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
            Some(serde_json::Value::String(c)) if c == "GPT2Tokenizer" => {
                return Err(invalid(
                    &config_path,
                    "tokenizer_class GPT2Tokenizer: the BPE (gpt2) vocabulary is not supported yet",
                ))
            }
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
    let count = v.tokens.len();
    kvs.set("tokenizer.ggml.model", Value::String("llama".into()));
    kvs.set("tokenizer.ggml.pre", Value::String("default".into()));
    kvs.set_array("tokenizer.ggml.tokens", Array::String(v.tokens));
    kvs.set_array("tokenizer.ggml.scores", Array::F32(v.scores));
    kvs.set_array("tokenizer.ggml.token_type", Array::I32(v.types));
    special_vocab(dir, false, Some(count))?.write_into(&mut kvs)?;
    Ok(kvs.0)
}

#[cfg(test)]
mod tests;
