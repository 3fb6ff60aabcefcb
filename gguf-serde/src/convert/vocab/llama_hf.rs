//! gguf-py's `LlamaHfVocab` (`gguf/vocab.py`) and the reference's `_set_vocab_llama_hf`: a
//! SentencePiece-style vocabulary stored as a `tokenizer.json` BPE with byte fallback, for a
//! Llama checkpoint without `tokenizer.model`.

use std::collections::HashMap;
use std::path::Path;

use super::auto_tokenizer::AutoTokenizer;
use super::{invalid, read_json, token_type, truthy, Kvs, SpmVocab, VocabError};
use crate::container::Value;

/// What gguf-py's `LlamaHfVocab` checks of `tokenizer.json` before loading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A BPE with `ignore_merges` and without `byte_fallback`: Llama 3 (the reference's
    /// `TypeError`, on which `LlamaModel.set_vocab` takes GPT-2 BPE).
    Llama3,
    /// Not a BPE with byte fallback and a `Sequence` decoder (the reference's
    /// `FileNotFoundError`, also taking GPT-2 BPE).
    Other,
    /// The kind `LlamaHfVocab` reads.
    LlamaHf,
}

/// Classifies `dir/tokenizer.json` as gguf-py's `LlamaHfVocab.__init__` does; `None` without the
/// file. A `null` decoder is [`Kind::Other`] (the reference's `TypeError` on subscripting it,
/// caught by `LlamaModel.set_vocab` as well).
///
/// # Errors
/// [`VocabError::Json`] for invalid JSON; [`VocabError::Invalid`] without a `model` object, a
/// `model.type` or a `decoder` (the reference's `KeyError`) when they are read.
pub(super) fn kind(dir: &Path) -> Result<Option<Kind>, VocabError> {
    let path = dir.join("tokenizer.json");
    let Some(json) = read_json::<serde_json::Value>(&path)? else { return Ok(None) };
    let model =
        json.get("model").filter(|m| m.is_object()).ok_or_else(|| invalid(&path, "model: missing or not an object"))?;
    let ty = model.get("type").ok_or_else(|| invalid(&path, "model.type: missing"))?;
    let is_bpe = ty.as_str() == Some("BPE");
    let flag = |name: &str, default: bool| model.get(name).map_or(default, truthy);
    if is_bpe && flag("ignore_merges", false) && !flag("byte_fallback", true) {
        return Ok(Some(Kind::Llama3));
    }
    if !is_bpe || !flag("byte_fallback", false) {
        return Ok(Some(Kind::Other));
    }
    let decoder = json.get("decoder").ok_or_else(|| invalid(&path, "decoder: missing"))?;
    if decoder.is_null() {
        return Ok(Some(Kind::Other));
    }
    let dtype = decoder.get("type").ok_or_else(|| invalid(&path, "decoder.type: missing"))?;
    Ok(Some(if dtype.as_str() == Some("Sequence") { Kind::LlamaHf } else { Kind::Other }))
}

/// `<0x` two hex digits `>`: a byte token (gguf-py's `re.fullmatch(br"<0x[0-9A-Fa-f]{2}>")`).
fn is_byte_token(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 6 && b.starts_with(b"<0x") && b[5] == b'>' && b[3].is_ascii_hexdigit() && b[4].is_ascii_hexdigit()
}

/// gguf-py's `LlamaHfVocab(dir).all_tokens()`: the vocabulary of a `tokenizer.json` BPE with
/// byte fallback and a `Sequence` decoder, as `transformers.AutoTokenizer` loads it (see
/// the private module `vocab::auto_tokenizer` for the special tokens and the tokens it adds).
///
/// - Ids `0..base`, `base` the BPE model's own vocabulary size (`tokenizer.vocab_size`): the
///   token text as `tokenizer.json` stores it (`▁` for a space), score -1000; type byte for
///   `<0xHH>`, else control when the id is a special token's (`all_special_ids`), else normal.
/// - Then the added tokens whose id is at least `base`, by id (ids between are not padded: the
///   token list just continues, as the reference's does): control if special, else
///   user-defined; score -1000.
///
/// `config.json`'s `vocab_size` is not read (the reference does not read it either).
///
/// # Errors
/// [`VocabError::NotFound`] without `tokenizer.json`; [`VocabError::Unsupported`] for a
/// `tokenizer.json` that is not of this kind (Llama 3's BPE, or not a byte-fallback BPE with a
/// `Sequence` decoder: [`bpe::set_vocab_gpt2`](super::bpe::set_vocab_gpt2) reads those); as
/// [`HfTokenizer::open`](super::bpe::HfTokenizer::open); [`VocabError::Invalid`] when an id below
/// `base` has no token (the reference's `KeyError`).
pub fn llama_hf_vocab(dir: &Path) -> Result<SpmVocab, VocabError> {
    let path = dir.join("tokenizer.json");
    match kind(dir)? {
        None => return Err(VocabError::NotFound { path }),
        Some(Kind::Llama3) => {
            return Err(VocabError::Unsupported {
                path,
                what: "a Llama 3 BPE (ignore_merges, no byte_fallback) is not a LlamaHfVocab: it converts as GPT-2 BPE"
                    .into(),
            })
        }
        Some(Kind::Other) => {
            return Err(VocabError::Unsupported {
                path,
                what: "not a LlamaHfVocab: that is a BPE model with byte_fallback and a Sequence decoder".into(),
            })
        }
        Some(Kind::LlamaHf) => {}
    }
    let auto = AutoTokenizer::open(dir)?;
    let inner = auto.tok.inner();
    let base = inner.get_vocab_size(false);
    let vocab = inner.get_vocab(true);
    // id -> text; two texts of one id keep the smaller (deterministic; the reference's dict keeps
    // whichever the library listed last).
    let mut reverse: HashMap<u32, &str> = HashMap::with_capacity(vocab.len());
    for (t, &id) in &vocab {
        let slot = reverse.entry(id).or_insert(t.as_str());
        if t.as_str() < *slot {
            *slot = t.as_str();
        }
    }
    let special_ids: Vec<u32> = auto.special_tokens.iter().filter_map(|t| vocab.get(t).copied()).collect();
    let mut v = SpmVocab { tokens: Vec::new(), scores: Vec::new(), types: Vec::new() };
    for id in 0..base {
        let text = u32::try_from(id)
            .ok()
            .and_then(|i| reverse.get(&i))
            .ok_or_else(|| invalid(&path, format!("no token has id {id}, below the model's vocabulary size {base}")))?;
        v.types.push(if is_byte_token(text) {
            token_type::BYTE
        } else if special_ids.contains(&(id as u32)) {
            token_type::CONTROL
        } else {
            token_type::NORMAL
        });
        v.tokens.push((*text).to_owned());
        v.scores.push(-1000.0);
    }
    for (text, id) in auto.added_vocab() {
        if (id as usize) < base {
            continue;
        }
        v.types.push(if auto.special_tokens.contains(&text) { token_type::CONTROL } else { token_type::USER_DEFINED });
        v.tokens.push(text);
        v.scores.push(-1000.0);
    }
    Ok(v)
}

/// `TextModel._set_vocab_llama_hf`: `tokenizer.ggml.model` = `llama`, `tokenizer.ggml.pre` =
/// `default`, tokens, scores and token types of [`llama_hf_vocab`], then the special vocabulary
/// without merges and with `n_vocab` = the token count ([`special_vocab`](super::special_vocab)).
///
/// # Errors
/// As [`llama_hf_vocab`] and [`special_vocab`](super::special_vocab).
pub fn set_vocab_llama_hf(dir: &Path) -> Result<Vec<(String, Value)>, VocabError> {
    let mut kvs = Kvs::default();
    llama_hf_into(&mut kvs, dir)?;
    Ok(kvs.0)
}

pub(super) fn llama_hf_into(kvs: &mut Kvs, dir: &Path) -> Result<(), VocabError> {
    super::write_spm(kvs, dir, llama_hf_vocab(dir)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_tokens_are_exactly_0x_and_two_hex_digits() {
        for t in ["<0x00>", "<0xFF>", "<0xaB>"] {
            assert!(is_byte_token(t), "{t}");
        }
        for t in ["<0x0>", "<0x000>", "<0xGG>", "0x00>", "<0X00>", "<0x00", "▁<0x00>"] {
            assert!(!is_byte_token(t), "{t}");
        }
    }
}
