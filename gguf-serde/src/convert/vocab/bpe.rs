//! GPT-2 style BPE vocabularies from `tokenizer.json`, as the reference's `TextModel.get_vocab_base`
//! and `_set_vocab_gpt2` write them (llama.cpp's `conversion/base.py`, the llama.cpp vendored by
//! llama-cpp-python 0.3.36), with Hugging Face's own `tokenizers` library standing in for
//! `transformers.AutoTokenizer`.
//!
//! - Tokens: the tokenizer's vocabulary with its added tokens (`tokenizer.vocab`), by id, for ids
//!   `0..vocab_size` (`config.json`'s `vocab_size`, else the vocabulary's size); an id without a
//!   token is `[PAD{id}]`, unused.
//! - Types: normal for model tokens; for a token whose text is an added token's: its text is first
//!   replaced by `decode(encode(text))` when the added token is not `normalized` (llama.cpp
//!   expects added tokens pre-normalized: a byte-level tokenizer's added text comes back as it
//!   decodes), then control if the added token is `special` or
//!   [`does_token_look_special`], else user-defined with `▁`
//!   replaced by a space.
//! - `tokenizer.ggml.pre`: [`pre_tokenizer_hash`] looked up in the reference's table
//!   ([`PRE_TOKENIZER_HASHES`]); an unknown hash is [`VocabError::UnknownPreTokenizer`], as the
//!   reference raises `NotImplementedError`.
//!
//! The `tokenizers` crate is built with `fancy-regex` instead of its default Oniguruma (C): on
//! the check text, it gives the same ids, so the same hash, as Python's `tokenizers` (Oniguruma)
//! under `transformers` for llama.cpp's Llama 3, Qwen2, GPT-2, Falcon, DeepSeek (LLM and Coder),
//! MPT, Refact and Command R vocabularies (the interop tests `vocab::*`).
//!
//! What `transformers` does beyond the `tokenizers` library when it loads a folder (adding the
//! `tokenizer_config.json` special tokens missing from `tokenizer.json`, rewriting the
//! pre-tokenizer for an `add_prefix_space` setting) is not reproduced. Only `tokenizer.json`
//! models of type `BPE` are read (the reference's `get_vocab_base` also serves WordPiece, whose
//! decoding `transformers` cleans up further).

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::Path;

use tokenizers::Tokenizer;

use super::{does_token_look_special, invalid, read_file, special_vocab, token_type, Kvs, VocabError};
use crate::container::{Array, Value};

pub use super::pre_hashes::{CHKTXT, PRE_TOKENIZER_HASHES};

/// A BPE vocabulary: tokens, token types and the pre-tokenizer name (`get_vocab_base`).
#[derive(Clone, Debug, PartialEq)]
pub struct BpeVocab {
    /// Token texts (byte-level encoded, as `tokenizer.json` stores them), `vocab_size` of them.
    pub tokens: Vec<String>,
    /// Token types ([`token_type`]).
    pub types: Vec<i32>,
    /// `tokenizer.ggml.pre`: the reference's name for the pre-tokenizer.
    pub pre: String,
}

/// A loaded `tokenizer.json`.
pub struct HfTokenizer {
    path: std::path::PathBuf,
    inner: Tokenizer,
}

impl std::fmt::Debug for HfTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HfTokenizer").field("path", &self.path).finish_non_exhaustive()
    }
}

/// Runs a call into the `tokenizers` library, turning its errors and panics into
/// [`VocabError::Tokenizer`] naming `path` and what was being done.
pub(super) fn guarded<T>(
    path: &Path,
    doing: &str,
    f: impl FnOnce() -> Result<T, Box<dyn std::error::Error + Send + Sync>>,
) -> Result<T, VocabError> {
    let failed =
        |message: String| VocabError::Tokenizer { path: path.to_owned(), message: format!("{doing}: {message}") };
    match std::panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(failed(e.to_string())),
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "the tokenizers library panicked".into());
            Err(failed(what))
        }
    }
}

impl HfTokenizer {
    /// Loads `dir/tokenizer.json` with Hugging Face's `tokenizers`.
    ///
    /// # Errors
    /// [`VocabError::NotFound`] without the file; [`VocabError::Json`] for invalid JSON (line
    /// and column); [`VocabError::Invalid`] for bytes that are not UTF-8 (with their offset);
    /// [`VocabError::Unsupported`] for a model type other than `BPE`;
    /// [`VocabError::Tokenizer`] for what the library refuses (a merge of unknown tokens, a
    /// malformed pre-tokenizer, ...).
    pub fn open(dir: &Path) -> Result<Self, VocabError> {
        let path = dir.join("tokenizer.json");
        let bytes = read_file(&path)?;
        // only `model.type` of the file: the tokenizers library parses all of it below
        let json = super::json_parts::parse(&path, &bytes, &[], &["type"])?.value;
        match json.get("model").and_then(|m| m.get("type")).and_then(|t| t.as_str()) {
            Some("BPE") => {}
            Some(other) => {
                return Err(VocabError::Unsupported {
                    path,
                    what: format!("model.type {other:?}: only BPE tokenizers are converted"),
                })
            }
            None => return Err(invalid(&path, "model.type: missing or not a string")),
        }
        drop(json);
        let inner = guarded(&path, "loading", || Tokenizer::from_bytes(&bytes))?;
        Ok(HfTokenizer { path, inner })
    }

    /// The file this tokenizer was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn inner(&self) -> &Tokenizer {
        &self.inner
    }

    pub(super) fn inner_mut(&mut self) -> &mut Tokenizer {
        &mut self.inner
    }

    /// `tokenizer.encode(text)` of `transformers` (with the post-processor's special tokens when
    /// `add_special_tokens`).
    ///
    /// # Errors
    /// [`VocabError::Tokenizer`].
    pub fn encode(&self, text: &str, add_special_tokens: bool) -> Result<Vec<u32>, VocabError> {
        guarded(&self.path, "encoding", || self.inner.encode(text, add_special_tokens).map(|e| e.get_ids().to_vec()))
    }

    /// `tokenizer.decode(ids)` (special tokens kept; `transformers` skips its clean-up for BPE).
    ///
    /// # Errors
    /// [`VocabError::Tokenizer`].
    pub fn decode(&self, ids: &[u32]) -> Result<String, VocabError> {
        guarded(&self.path, "decoding", || self.inner.decode(ids, false))
    }
}

/// The reference's `chkhsh`: the sha256 (hex) of the check text's token ids ([`CHKTXT`] encoded
/// with the post-processor's special tokens) printed as Python prints a list, `[1, 2, 3]`.
///
/// # Errors
/// [`VocabError::Tokenizer`].
pub fn pre_tokenizer_hash(tok: &HfTokenizer) -> Result<String, VocabError> {
    let ids = tok.encode(CHKTXT, true)?;
    Ok(ids_hash(&ids))
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn ids_hash(ids: &[u32]) -> String {
    let list: Vec<String> = ids.iter().map(u32::to_string).collect();
    sha256_hex(format!("[{}]", list.join(", ")).as_bytes())
}

pub(super) type PreNames = fn(&str) -> Option<&'static str>;

/// Qwen2's pre-tokenizer split rule, as transformers 5's `Qwen2Tokenizer` sets it
/// (`PRETOKENIZE_REGEX` of `tokenization_qwen2.py`).
const QWEN2_SPLIT: &str =
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// `TOKENIZER_MAPPING_NAMES` of transformers 5.24's `models/auto/tokenization_auto.py`: the
/// tokenizer class registered for a config `model_type`, for the model types this converter
/// reads (and `gpt2`). A type not listed (`llama`, `smollm3`, `gpt_oss`, `deepseek_v2`,
/// `deepseek_v3`) has none. `mistral`/`mixtral` are `TokenizersBackend` without the
/// `mistral_common` package.
const REGISTERED_TOKENIZER_CLASSES: &[(&str, &str)] = &[
    ("gemma2", "GemmaTokenizer"),
    ("gemma3", "GemmaTokenizer"),
    ("gemma3_text", "GemmaTokenizer"),
    ("glm4", "TokenizersBackend"),
    ("gpt2", "GPT2Tokenizer"),
    ("granite", "TokenizersBackend"),
    ("mistral", "TokenizersBackend"),
    ("mixtral", "TokenizersBackend"),
    ("olmo2", "TokenizersBackend"),
    ("phi3", "TokenizersBackend"),
    ("qwen2", "Qwen2Tokenizer"),
    ("qwen2_moe", "Qwen2Tokenizer"),
    ("qwen3", "Qwen2Tokenizer"),
    ("qwen3_moe", "Qwen2Tokenizer"),
];

/// `MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS` of transformers 5.24's
/// `models/auto/tokenization_auto.py`, the entries among the model types this converter reads:
/// for these, the registered class is used whatever `tokenizer_class` the folder declares.
const INCORRECT_HUB_TOKENIZER_CLASS: &[&str] = &["phi3", "qwen2"];

/// The generic classes of transformers 5.24's `AutoTokenizer` (no pipeline of their own:
/// `tokenizer.json` as it is), `Fast` dropped (`PreTrainedTokenizerFast` is one).
const GENERIC_TOKENIZER_CLASSES: &[&str] =
    &["TokenizersBackend", "PythonBackend", "PreTrainedTokenizer", "MistralCommonBackend"];

/// The tokenizer class `transformers.AutoTokenizer.from_pretrained` (5.24,
/// `models/auto/tokenization_auto.py`, no `auto_map`) builds for a folder whose `config.json`
/// has `model_type` and `tokenizer_class` `config_class`, and whose `tokenizer_config.json` has
/// `tokenizer_class` `declared`; a `Fast` suffix is dropped. The declared class is
/// `tokenizer_config.json`'s, else `config.json`'s. When the type's registered class
/// ([`REGISTERED_TOKENIZER_CLASSES`]) differs from the declared one: a generic registered class
/// gives `TokenizersBackend`; otherwise the registered class for a type in
/// [`INCORRECT_HUB_TOKENIZER_CLASS`] (`qwen2`: `Qwen2Tokenizer` whatever is declared), else the
/// declared class. Otherwise the declared class, else the registered one, else
/// `TokenizersBackend`. Not modelled: the `LlamaTokenizer` over a ByteLevel `tokenizer.json`
/// case (see the private module `vocab::auto_tokenizer`), remote code, Mistral's format.
pub(super) fn auto_tokenizer_class(
    model_type: Option<&str>,
    config_class: Option<&str>,
    declared: Option<&str>,
) -> String {
    let strip = |c: &str| c.strip_suffix("Fast").unwrap_or(c).to_owned();
    let registered =
        model_type.and_then(|t| REGISTERED_TOKENIZER_CLASSES.iter().find(|(k, _)| *k == t)).map(|(_, c)| strip(c));
    let generic = |c: &str| GENERIC_TOKENIZER_CLASSES.contains(&c);
    let hub = declared.or(config_class).map(strip);
    match (hub, registered) {
        (Some(hub), Some(reg)) if hub != reg => {
            if generic(&reg) {
                "TokenizersBackend".to_owned()
            } else if model_type.is_some_and(|t| INCORRECT_HUB_TOKENIZER_CLASS.contains(&t)) {
                reg
            } else if generic(&hub) {
                "TokenizersBackend".to_owned()
            } else {
                hub
            }
        }
        (Some(c), _) | (None, Some(c)) if generic(&c) => "TokenizersBackend".to_owned(),
        (Some(hub), _) => hub,
        (None, Some(reg)) => reg,
        (None, None) => "TokenizersBackend".to_owned(),
    }
}

/// The pipeline `transformers.AutoTokenizer` imposes by the tokenizer class it builds
/// ([`auto_tokenizer_class`] of `config.json`'s `model_type` and the declared
/// `tokenizer_class`; the reference hashes and reads the vocabulary through it): for
/// `Qwen2Tokenizer`, transformers 5 rebuilds the tokenizer from
/// `tokenizer.json`'s vocabulary and merges with an `NFC` normalizer and the pre-tokenizer
/// `Split(Qwen2's rule, isolated)` then `ByteLevel(add_prefix_space, use_regex = false)`
/// (`add_prefix_space` from `tokenizer_config.json`, false when absent), whatever
/// `tokenizer.json` declares. A Qwen2 `tokenizer.json` declares that pipeline already (its hash
/// is `qwen2` either way); another one under Qwen2's class (GPT-2's, say, even declared
/// `GPT2Tokenizer` for `model_type` `qwen2`) is tokenized by transformers with Qwen2's rule, so
/// its hash is that of Qwen2's rule on its vocabulary: unknown to the reference's table, which
/// refuses it, as we then do. Other classes: `tokenizer.json` as it is (`GPT2Tokenizer`'s own
/// `ByteLevel` pipeline is not imposed). Returns the class whose pipeline was imposed.
fn class_pipeline(dir: &Path, tok: &mut HfTokenizer) -> Result<Option<&'static str>, VocabError> {
    use tokenizers::pre_tokenizers::{byte_level::ByteLevel, sequence::Sequence, split::Split};
    let config_path = dir.join("tokenizer_config.json");
    let config = super::read_json::<serde_json::Value>(&config_path)?.unwrap_or(serde_json::Value::Null);
    let model = super::read_json::<serde_json::Value>(&dir.join("config.json"))?.unwrap_or(serde_json::Value::Null);
    let str_of = |v: &serde_json::Value, k: &str| v.get(k).and_then(serde_json::Value::as_str).map(str::to_owned);
    let class = auto_tokenizer_class(
        str_of(&model, "model_type").as_deref(),
        str_of(&model, "tokenizer_class").as_deref(),
        str_of(&config, "tokenizer_class").as_deref(),
    );
    if class != "Qwen2Tokenizer" {
        return Ok(None);
    }
    let add_prefix_space = config.get("add_prefix_space").and_then(serde_json::Value::as_bool).unwrap_or(false);
    let path = tok.path.clone();
    let inner = &mut tok.inner;
    guarded(&path, "setting Qwen2Tokenizer's pipeline", || {
        let split = Split::new(
            tokenizers::pre_tokenizers::split::SplitPattern::Regex(QWEN2_SPLIT.into()),
            tokenizers::SplitDelimiterBehavior::Isolated,
            false,
        )?;
        let pre = Sequence::new(vec![split.into(), ByteLevel::new(add_prefix_space, true, false).into()]);
        inner.with_pre_tokenizer(Some(pre));
        inner.with_normalizer(Some(tokenizers::normalizers::NFC))?;
        Ok(())
    })?;
    Ok(Some("Qwen2Tokenizer"))
}

/// The reference's pre-tokenizer name for `chkhsh` ([`PRE_TOKENIZER_HASHES`]), `None` if unknown.
pub fn pre_tokenizer_name(chkhsh: &str) -> Option<&'static str> {
    PRE_TOKENIZER_HASHES.iter().find(|(h, _)| *h == chkhsh).map(|(_, n)| *n)
}

/// `get_vocab_base`: tokens, token types and the pre-tokenizer name of `dir/tokenizer.json` (see
/// the [module docs](self)). `vocab_size` is `config.json`'s `vocab_size`; `None` takes the
/// vocabulary's size (added tokens included).
///
/// # Errors
/// As [`HfTokenizer::open`]; [`VocabError::Invalid`] when a token id is not below `vocab_size`
/// (the reference's assertion) or an added token has no entry at its id;
/// [`VocabError::UnknownPreTokenizer`] naming the hash.
pub fn get_vocab_base(dir: &Path, vocab_size: Option<usize>) -> Result<BpeVocab, VocabError> {
    vocab_base_with(dir, vocab_size, pre_tokenizer_name)
}

/// [`get_vocab_base`] with `names` for the table (the unit tests' tiny tokenizers have hashes of
/// their own).
fn vocab_base_with(dir: &Path, vocab_size: Option<usize>, names: PreNames) -> Result<BpeVocab, VocabError> {
    let mut tok = HfTokenizer::open(dir)?;
    let imposed = class_pipeline(dir, &mut tok)?;
    let path = tok.path.clone();
    let vocab = tok.inner.get_vocab(true);
    let n = vocab_size.unwrap_or(vocab.len());
    if let Some((t, &id)) = vocab.iter().max_by_key(|(t, &id)| (id, std::cmp::Reverse(*t))) {
        if id as usize >= n {
            return Err(invalid(&path, format!("token {t:?} has id {id}, not below vocab_size {n}")));
        }
    }
    let hash = pre_tokenizer_hash(&tok)?;
    let pre = names(&hash).ok_or_else(|| VocabError::UnknownPreTokenizer {
        path: path.clone(),
        hash,
        imposed: imposed.map(str::to_owned),
    })?;

    // id -> text; two texts of one id (not in a valid tokenizer) keep the smaller, for a
    // deterministic result (the reference's dict keeps whichever the library listed last).
    let mut reverse: HashMap<u32, &str> = HashMap::with_capacity(vocab.len());
    for (t, &id) in &vocab {
        let slot = reverse.entry(id).or_insert(t.as_str());
        if t.as_str() < *slot {
            *slot = t.as_str();
        }
    }
    let decoder = tok.inner.get_added_tokens_decoder();
    // get_added_vocab: {content: id} in id order, so a content given twice keeps its last id.
    let mut added_ids: Vec<&u32> = decoder.keys().collect();
    added_ids.sort();
    let added: HashMap<&str, u32> = added_ids.into_iter().map(|id| (decoder[id].content.as_str(), *id)).collect();

    let mut tokens = Vec::with_capacity(n);
    let mut types = Vec::with_capacity(n);
    for i in 0..n {
        let Some(&text) = u32::try_from(i).ok().and_then(|i| reverse.get(&i)) else {
            tokens.push(format!("[PAD{i}]"));
            types.push(token_type::UNUSED);
            continue;
        };
        if !added.contains_key(text) {
            tokens.push(text.to_owned());
            types.push(token_type::NORMAL);
            continue;
        }
        let entry = decoder.get(&(i as u32)).ok_or_else(|| {
            invalid(&path, format!("token {text:?} (id {i}) is an added token's text but id {i} is not an added token"))
        })?;
        let mut token = text.to_owned();
        if !entry.normalized {
            token = tok.decode(&tok.encode(&token, false)?)?;
        }
        if entry.special || does_token_look_special(&token) {
            types.push(token_type::CONTROL);
        } else {
            token = token.replace('\u{2581}', " ");
            types.push(token_type::USER_DEFINED);
        }
        tokens.push(token);
    }
    Ok(BpeVocab { tokens, types, pre: pre.to_owned() })
}

/// `TextModel._set_vocab_gpt2`: `tokenizer.ggml.model` = `gpt2`, `tokenizer.ggml.pre`,
/// `tokenizer.ggml.tokens`, `tokenizer.ggml.token_type` ([`get_vocab_base`]), then the special
/// vocabulary with merges (`tokenizer.json`'s `model.merges` in either form, `"a b"` or
/// `["a", "b"]`, else `merges.txt`) and no range check of the special ids
/// ([`special_vocab`]`(dir, true, None)`).
///
/// # Errors
/// As [`get_vocab_base`] and [`special_vocab`].
pub fn set_vocab_gpt2(dir: &Path, vocab_size: Option<usize>) -> Result<Vec<(String, Value)>, VocabError> {
    let mut kvs = Kvs::default();
    gpt2_into(&mut kvs, dir, vocab_size)?;
    Ok(kvs.0)
}

pub(super) fn gpt2_into(kvs: &mut Kvs, dir: &Path, vocab_size: Option<usize>) -> Result<(), VocabError> {
    gpt2_into_with(kvs, dir, vocab_size, pre_tokenizer_name)
}

pub(super) fn gpt2_into_with(
    kvs: &mut Kvs,
    dir: &Path,
    vocab_size: Option<usize>,
    names: PreNames,
) -> Result<(), VocabError> {
    let v = vocab_base_with(dir, vocab_size, names)?;
    write_gpt2(kvs, v, &special_vocab(dir, true, None)?)
}

/// The keys of `_set_vocab_gpt2`'s kind: `tokenizer.ggml.model` = `gpt2`, the pre-tokenizer,
/// tokens and token types of `v`, then the special vocabulary `sv`.
fn write_gpt2(kvs: &mut Kvs, v: BpeVocab, sv: &super::SpecialVocab) -> Result<(), VocabError> {
    kvs.set("tokenizer.ggml.model", Value::String("gpt2".into()));
    kvs.set("tokenizer.ggml.pre", Value::String(v.pre));
    kvs.set_array("tokenizer.ggml.tokens", Array::String(v.tokens));
    kvs.set_array("tokenizer.ggml.token_type", Array::I32(v.types));
    sv.write_into(kvs)
}

/// GLM-4 (`Glm4Model.set_vocab`, `Glm4ForCausalLM`): the GPT-2 BPE vocabulary
/// ([`set_vocab_gpt2`]'s keys), with the special vocabulary given, for the types the folder does
/// not set, `eos`, `eot`, `unk` and `bos` from the ids `transformers.AutoTokenizer` gives
/// `<|endoftext|>`, `<|user|>`, `<|endoftext|>` and `<|endoftext|>` among its added tokens
/// (`get_added_vocab()`, see the private module `vocab::auto_tokenizer`).
///
/// # Errors
/// As [`set_vocab_gpt2`]; [`VocabError::Invalid`] when one of those texts is not an added token
/// (the reference's `KeyError`).
pub fn set_vocab_glm4(dir: &Path, vocab_size: Option<usize>) -> Result<Vec<(String, Value)>, VocabError> {
    glm_with(
        dir,
        vocab_size,
        &[("eos", "<|endoftext|>"), ("eot", "<|user|>"), ("unk", "<|endoftext|>"), ("bos", "<|endoftext|>")],
        pre_tokenizer_name,
    )
}

/// The GLM-4.5 family (`TextModel._set_vocab_glm`: `Glm4MoeModel`, `Glm4MoeLiteModel`,
/// `GlmMoeDsaModel`, `Glm5NextModel`): as [`set_vocab_glm4`] with `bos` = `[gMASK]`, `eot` =
/// `<|user|>`, `unk` = `<|endoftext|>` and `eom` = `<|observation|>` (llama.cpp's note: `eot` =
/// `<|endoftext|>` would never stop generating).
///
/// # Errors
/// As [`set_vocab_glm4`].
pub fn set_vocab_glm(dir: &Path, vocab_size: Option<usize>) -> Result<Vec<(String, Value)>, VocabError> {
    glm_with(
        dir,
        vocab_size,
        &[("bos", "[gMASK]"), ("eot", "<|user|>"), ("unk", "<|endoftext|>"), ("eom", "<|observation|>")],
        pre_tokenizer_name,
    )
}

/// `_set_vocab_gpt2` with `specials` (`(type, added token text)`) set, in order, into the special
/// vocabulary between reading it and writing it (`SpecialVocab._set_special_token`: a type the
/// folder already set keeps its id).
pub(super) fn glm_with(
    dir: &Path,
    vocab_size: Option<usize>,
    specials: &[(&str, &str)],
    names: PreNames,
) -> Result<Vec<(String, Value)>, VocabError> {
    let auto = super::auto_tokenizer::AutoTokenizer::open(dir)?;
    let ids = specials.iter().map(|(_, text)| auto.added_id(text)).collect::<Result<Vec<u32>, _>>()?;
    let mut sv = special_vocab(dir, true, None)?;
    let v = vocab_base_with(dir, vocab_size, names)?;
    for ((typ, _), id) in specials.iter().zip(ids) {
        sv.set_special_token(typ, u64::from(id));
    }
    let mut kvs = Kvs::default();
    write_gpt2(&mut kvs, v, &sv)?;
    Ok(kvs.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The class `transformers.AutoTokenizer.from_pretrained` (5.24) built, printed by
    /// `type(tok).__name__`, for a folder with GPT-2's `tokenizer.json`, `config.json`'s
    /// `model_type` (none: no `config.json`) and `tokenizer_class`, and `tokenizer_config.json`'s
    /// `tokenizer_class`. Under `Qwen2Tokenizer` it tokenized `"3333"` as `['3', '3', '3', '3']`,
    /// under the others as `['3333']`.
    #[test]
    fn tokenizer_class_is_the_one_transformers_builds() {
        // (model_type, config.json's class, tokenizer_config.json's class, transformers' class)
        type Case = (Option<&'static str>, Option<&'static str>, Option<&'static str>, &'static str);
        let cases: [Case; 20] = [
            (Some("qwen2"), None, Some("TokenizersBackend"), "Qwen2Tokenizer"),
            (Some("qwen3"), None, Some("TokenizersBackend"), "TokenizersBackend"),
            (Some("qwen2"), None, Some("PreTrainedTokenizerFast"), "Qwen2Tokenizer"),
            (Some("qwen3"), None, Some("PreTrainedTokenizerFast"), "TokenizersBackend"),
            (Some("qwen2"), None, Some("GPT2Tokenizer"), "Qwen2Tokenizer"),
            (Some("qwen3"), None, Some("GPT2Tokenizer"), "GPT2Tokenizer"),
            (Some("llama"), None, Some("Qwen2Tokenizer"), "Qwen2Tokenizer"),
            (Some("mistral"), None, Some("Qwen2Tokenizer"), "TokenizersBackend"),
            (Some("phi3"), None, Some("GPT2Tokenizer"), "TokenizersBackend"),
            (Some("qwen2"), Some("GPT2Tokenizer"), None, "Qwen2Tokenizer"),
            (Some("qwen3"), None, None, "Qwen2Tokenizer"),
            (None, None, Some("GPT2Tokenizer"), "GPT2Tokenizer"),
            (Some("qwen2_moe"), None, Some("GPT2TokenizerFast"), "GPT2Tokenizer"),
            (Some("olmo2"), None, Some("Qwen2Tokenizer"), "TokenizersBackend"),
            (Some("phi3"), None, Some("Qwen2Tokenizer"), "TokenizersBackend"),
            (Some("qwen3_moe"), None, Some("Qwen2TokenizerFast"), "Qwen2Tokenizer"),
            (Some("gemma3_text"), None, Some("Qwen2Tokenizer"), "Qwen2Tokenizer"),
            (None, None, Some("Qwen2TokenizerFast"), "Qwen2Tokenizer"),
            (Some("deepseek_v3"), None, Some("Qwen2Tokenizer"), "Qwen2Tokenizer"),
            (Some("gpt2"), None, Some("Qwen2Tokenizer"), "Qwen2Tokenizer"),
        ];
        for (model_type, config_class, declared, theirs) in cases {
            assert_eq!(
                auto_tokenizer_class(model_type, config_class, declared),
                theirs,
                "{model_type:?} {config_class:?} {declared:?}"
            );
        }
    }

    #[test]
    fn ids_are_hashed_as_python_prints_the_list() {
        // hashlib.sha256(str([128000, 198, 4815]).encode()).hexdigest() and of str([]).
        assert_eq!(ids_hash(&[128000, 198, 4815]), sha256_hex(b"[128000, 198, 4815]"),);
        assert_eq!(ids_hash(&[]), sha256_hex(b"[]"));
    }

    #[test]
    fn check_text_is_the_references() {
        assert_eq!(sha256_hex(CHKTXT.as_bytes()), super::super::pre_hashes::CHKTXT_SHA256);
        assert_eq!(
            pre_tokenizer_name("0ef9807a4087ebef797fc749390439009c3b9eda9ad1a097abbe738f486c01e5"),
            Some("llama-bpe")
        );
        assert_eq!(
            pre_tokenizer_name("e636dc30a262dcc0d8c323492e32ae2b70728f4df7dfe9737d9f920a282b8aea"),
            Some("qwen2")
        );
        // Listed twice in the reference's chain of `if`s: the later name wins.
        assert_eq!(
            pre_tokenizer_name("b6dc8df998e1cfbdc4eac8243701a65afe638679230920b50d6f17d81c098166"),
            Some("olmo")
        );
        assert_eq!(
            pre_tokenizer_name("0876d13b50744004aa9aeae05e7b0647eac9d801b5ba4668afc01e709c15e19f"),
            Some("jina-v2-en")
        );
        assert_eq!(pre_tokenizer_name(&"0".repeat(64)), None);
    }
}
