//! What `transformers.AutoTokenizer.from_pretrained(dir)` (transformers 5, a `tokenizer.json`
//! folder, the `tokenizers` backend) adds to `tokenizer.json`'s tokenizer, and which tokens it
//! calls special: the part of `transformers` that the reference's `LlamaHfVocab` and the GLM
//! `set_vocab` entries read through (`get_added_vocab`, `all_special_tokens`, `vocab_size`).
//!
//! - The special tokens (`all_special_tokens`): `tokenizer_config.json`'s named tokens in the
//!   order `bos`, `eos`, `unk`, `sep`, `pad`, `cls`, `mask` (`{name}_token`, a string or an
//!   `AddedToken` object's `content`; `null` is none), then its other `*_token` keys with a string
//!   value and the entries of an `extra_special_tokens` object (model-specific named tokens), then
//!   the `extra_special_tokens` (or, without it, `additional_special_tokens`) list; each text
//!   once. Without `added_tokens_decoder` in `tokenizer_config.json`, `special_tokens_map.json`'s
//!   entries are merged in first (transformers' legacy path). A `tokenizer_class` of
//!   `LlamaTokenizer`/`LlamaTokenizerFast`, for a `tokenizer.json` that does not mention
//!   `"ByteLevel"` (AutoTokenizer loads those with the generic class), gives `<unk>`, `<s>` and
//!   `</s>` for an absent `unk_token`, `bos_token`, `eos_token` (that class's defaults).
//! - A named token given as an object must be a serialized `AddedToken` (`"__type": "AddedToken"`):
//!   transformers raises `TypeError` for another object (on which `LlamaModel.set_vocab` falls
//!   back to GPT-2 BPE); here it is a [`VocabError::Invalid`].
//! - The tokens added to the tokenizer: `added_tokens_decoder`'s (by id order), then each special
//!   token not among the added tokens yet, through the `tokenizers` library's `add_tokens`: a
//!   text in the vocabulary keeps its id, a new one takes the next id past the vocabulary (the
//!   id `added_tokens_decoder` gives is not used). The Llama class rebuilds the tokenizer from
//!   the model's vocabulary and merges: `tokenizer.json`'s own added tokens are then dropped,
//!   unless `tokenizer_config.json` has no `added_tokens_decoder`, when they are added first.
//!
//! Not reproduced: tokenizer classes that rebuild the pipeline with other defaults (Gemma's,
//! Qwen's, ...), `trust_remote_code` classes, `added_tokens.json`.

use std::path::Path;

use serde_json::Value as J;
use tokenizers::AddedToken;

use super::bpe::HfTokenizer;
use super::{invalid, read_json, OrderedObject, VocabError};

/// `tokenizer.json` as `transformers` loads it, with the special tokens it names.
pub(super) struct AutoTokenizer {
    /// The tokenizer with the tokens `transformers` adds.
    pub(super) tok: HfTokenizer,
    /// `all_special_tokens`, in order, each once.
    pub(super) special_tokens: Vec<String>,
}

const NAMED: [&str; 7] = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"];

/// A token's text: a string, or an `AddedToken` object's `content`.
fn token_text(v: &J) -> Option<String> {
    match v {
        J::String(s) => Some(s.clone()),
        J::Object(o) => o.get("content").and_then(J::as_str).map(str::to_owned),
        _ => None,
    }
}

/// An `AddedToken` from its serialized fields (Python's defaults for those missing).
fn added_token(path: &Path, at: &str, data: &J) -> Result<AddedToken, VocabError> {
    let content = data
        .get("content")
        .and_then(J::as_str)
        .ok_or_else(|| invalid(path, format!("{at}.content: missing or not a string")))?;
    let flag = |n: &str, d: bool| data.get(n).and_then(J::as_bool).unwrap_or(d);
    let special = flag("special", false);
    Ok(AddedToken::from(content.to_owned(), special)
        .single_word(flag("single_word", false))
        .lstrip(flag("lstrip", false))
        .rstrip(flag("rstrip", false))
        .normalized(flag("normalized", !special)))
}

/// A named special token's text (`None` for `null`); an object must be a serialized `AddedToken`.
fn named_text(path: &Path, name: &str, v: &J) -> Result<Option<String>, VocabError> {
    match v {
        J::Null => Ok(None),
        J::String(s) => Ok(Some(s.clone())),
        J::Object(o) if o.get("__type").and_then(J::as_str) == Some("AddedToken") => o
            .get("content")
            .and_then(J::as_str)
            .map(|s| Some(s.to_owned()))
            .ok_or_else(|| invalid(path, format!("{name}.content: missing or not a string"))),
        other => Err(invalid(
            path,
            format!("{name}: {other} is not a string or a serialized AddedToken (transformers raises TypeError)"),
        )),
    }
}

impl AutoTokenizer {
    /// Loads `dir` as described in the [module docs](self).
    ///
    /// # Errors
    /// As [`HfTokenizer::open`]; [`VocabError::Json`]/[`VocabError::Invalid`] for a
    /// `tokenizer_config.json` or `special_tokens_map.json` that is not a JSON object, or an
    /// `added_tokens_decoder` entry without a string `content`; [`VocabError::Tokenizer`] when the
    /// library refuses to add a token.
    pub(super) fn open(dir: &Path) -> Result<Self, VocabError> {
        let mut tok = HfTokenizer::open(dir)?;
        let config_path = dir.join("tokenizer_config.json");
        let config = read_json::<OrderedObject>(&config_path)?;
        let mut init: Vec<(String, J)> = config.map(|c| c.0).unwrap_or_default();
        let has_decoder = init.iter().any(|(k, _)| k == "added_tokens_decoder");
        if !has_decoder {
            let map_path = dir.join("special_tokens_map.json");
            if let Some(OrderedObject(map)) = read_json::<OrderedObject>(&map_path)? {
                for (k, v) in map {
                    if let Some(slot) = init.iter_mut().find(|(key, _)| *key == k) {
                        slot.1 = v;
                    } else {
                        init.push((k, v));
                    }
                }
            }
        }
        let get = |k: &str| init.iter().find(|(key, _)| key == k).map(|(_, v)| v);
        let mut legacy_added: Vec<J> = Vec::new();
        let class = get("tokenizer_class").and_then(J::as_str).unwrap_or("");
        // AutoTokenizer loads a ByteLevel tokenizer.json declared Llama as TokenizersBackend.
        let llama_defaults = matches!(class, "LlamaTokenizer" | "LlamaTokenizerFast") && {
            let bytes = super::read_file(tok.path())?;
            !bytes.windows(11).any(|w| w == b"\"ByteLevel\"")
        };

        let mut special: Vec<String> = Vec::new();
        let push = |t: String, list: &mut Vec<String>| {
            if !list.contains(&t) {
                list.push(t);
            }
        };
        for name in NAMED {
            let text = match get(name) {
                Some(v) => named_text(&config_path, name, v)?,
                None if llama_defaults => match name {
                    "bos_token" => Some("<s>".to_owned()),
                    "eos_token" => Some("</s>".to_owned()),
                    "unk_token" => Some("<unk>".to_owned()),
                    _ => None,
                },
                None => None,
            };
            if let Some(t) = text {
                push(t, &mut special);
            }
        }
        for (k, v) in &init {
            if k.ends_with("_token") && !NAMED.contains(&k.as_str()) {
                if let J::String(s) = v {
                    push(s.clone(), &mut special);
                }
            }
        }
        let extra = match get("extra_special_tokens") {
            Some(J::Object(o)) => {
                for v in o.values() {
                    if let Some(t) = token_text(v) {
                        push(t, &mut special);
                    }
                }
                None
            }
            Some(J::Null) | None => get("additional_special_tokens"),
            Some(other) => Some(other),
        };
        let mut extras: Vec<String> = Vec::new();
        if let Some(J::Array(list)) = extra {
            extras.extend(list.iter().filter_map(token_text));
        }
        for t in &extras {
            push(t.clone(), &mut special);
        }

        // transformers' Llama class rebuilds the tokenizer from the model's vocabulary and merges:
        // of tokenizer.json's added tokens, only those added_tokens_decoder lists (or all of them
        // without it, the legacy path) are added back.
        if llama_defaults {
            let path = tok.path().to_owned();
            let bytes = super::read_file(&path)?;
            let mut json: J =
                serde_json::from_slice(&bytes).map_err(|source| VocabError::Json { path: path.clone(), source })?;
            let added = json.get_mut("added_tokens").map(J::take);
            if let Some(obj) = json.as_object_mut() {
                obj.insert("added_tokens".into(), J::Array(Vec::new()));
            }
            let bytes = serde_json::to_vec(&json).map_err(|source| VocabError::Json { path: path.clone(), source })?;
            *tok.inner_mut() = super::bpe::guarded(&path, "loading", || tokenizers::Tokenizer::from_bytes(&bytes))?;
            if !has_decoder {
                if let Some(J::Array(list)) = added {
                    legacy_added = list;
                }
            }
        }

        // The tokens transformers adds: added_tokens_decoder's, then the special tokens missing.
        let mut to_add: Vec<AddedToken> = Vec::new();
        for (i, data) in legacy_added.iter().enumerate() {
            to_add.push(added_token(tok.path(), &format!("added_tokens[{i}]"), data)?);
        }
        if let Some(J::Object(_)) = get("added_tokens_decoder") {
            let bytes = super::read_file(&config_path)?;
            let members = super::ordered_member(&bytes, "added_tokens_decoder")
                .map_err(|source| VocabError::Json { path: config_path.clone(), source })?;
            let mut entries = Vec::with_capacity(members.len());
            for (key, data) in members {
                let id: u64 = key
                    .trim()
                    .parse()
                    .map_err(|_| invalid(&config_path, format!("added_tokens_decoder[{key:?}]: not a token id")))?;
                entries.push((id, added_token(&config_path, &format!("added_tokens_decoder[{key:?}]"), &data)?));
            }
            entries.sort_by_key(|(id, _)| *id);
            to_add.extend(entries.into_iter().map(|(_, t)| t));
        }
        let mut known: Vec<String> =
            tok.inner().get_added_tokens_decoder().values().map(|t| t.content.clone()).collect();
        known.extend(to_add.iter().map(|t| t.content.clone()));
        for t in &special {
            if !known.contains(t) {
                known.push(t.clone());
                to_add.push(AddedToken::from(t.clone(), true));
            }
        }
        if !to_add.is_empty() {
            let path = tok.path().to_owned();
            super::bpe::guarded(&path, "adding the special tokens", || {
                tok.inner_mut().add_tokens(to_add).map(drop).map_err(|e| e.to_string().into())
            })?;
        }
        Ok(AutoTokenizer { tok, special_tokens: special })
    }

    /// `get_added_vocab()`: each added token's text and id, by id; a text added twice keeps its
    /// last id (a Python dict built in id order).
    pub(super) fn added_vocab(&self) -> Vec<(String, u32)> {
        let decoder = self.tok.inner().get_added_tokens_decoder();
        let mut ids: Vec<u32> = decoder.keys().copied().collect();
        ids.sort_unstable();
        let mut out: Vec<(String, u32)> = Vec::with_capacity(ids.len());
        for id in ids {
            let content = &decoder[&id].content;
            if let Some(slot) = out.iter_mut().find(|(c, _)| c == content) {
                slot.1 = id;
            } else {
                out.push((content.clone(), id));
            }
        }
        out
    }

    /// `get_added_vocab()[text]`.
    ///
    /// # Errors
    /// [`VocabError::Invalid`] naming `tokenizer.json` when `text` is not an added token (the
    /// reference's `KeyError`).
    pub(super) fn added_id(&self, text: &str) -> Result<u32, VocabError> {
        self.added_vocab()
            .into_iter()
            .find(|(c, _)| c == text)
            .map(|(_, id)| id)
            .ok_or_else(|| invalid(self.tok.path(), format!("{text:?} is not an added token")))
    }
}
