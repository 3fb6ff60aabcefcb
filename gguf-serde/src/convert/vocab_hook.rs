//! The tokenizer, per architecture (`set_vocab`), through [`vocab`].

use super::arch::ArchContext;
use super::{vocab, ConvertError, Kvs, Result, Value};

fn vocab_size(cx: &ArchContext<'_>) -> Option<usize> {
    cx.config.get("vocab_size").and_then(|v| v.as_u64()).and_then(|n| usize::try_from(n).ok())
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
        Err(vocab::VocabError::Unsupported { path, what }) => Err(ConvertError::UnsupportedTokenizer { path, what }),
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

/// `TextModel._set_vocab_gpt2` ([`vocab::bpe::set_vocab_gpt2`]): GPT-2 BPE from
/// `tokenizer.json`, the reference's default `set_vocab` (Qwen 2/3 MoE, OLMo 2, …).
pub fn gpt2(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<()> {
    add(cx, kv, vocab::bpe::set_vocab_gpt2)
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
