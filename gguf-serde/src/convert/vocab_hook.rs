//! The tokenizer, per architecture (`set_vocab`), through [`vocab`]: one public hook per
//! `set_vocab` of llama.cpp's `convert_hf_to_gguf.py` (`conversion/*.py` of the vendored
//! llama.cpp), each with the signature of [`Architecture::vocab`](super::arch::Architecture::vocab),
//! so that an architecture's `vocab` is one call:
//!
//! | reference | hook | used by (reference classes) |
//! | --- | --- | --- |
//! | `TextModel.set_vocab` = `_set_vocab_gpt2` | [`gpt2`] | Olmo2, Qwen2-MoE, Qwen3-MoE, any `TextModel` that keeps the default |
//! | `_set_vocab_sentencepiece` | [`sentencepiece`] | |
//! | `_set_vocab_llama_hf` (gguf-py's `LlamaHfVocab`) | [`llama_hf`] | |
//! | `LlamaModel.set_vocab` | [`llama`] | Llama, Mixtral, SmolLM3, Granite (`GraniteModel` keeps it) |
//! | `Qwen2Model.set_vocab` | [`qwen`] | Qwen2, Qwen3 |
//! | `Gemma2Model.set_vocab` | [`gemma2`] | Gemma 2 |
//! | `Gemma3Model.set_vocab` | [`gemma3`] | Gemma 3 |
//! | `Phi3MiniModel.set_vocab` | [`phi3`] | Phi-3, Phi-4 |
//! | `Glm4Model.set_vocab` | [`glm4`] | GLM-4 (`Glm4ForCausalLM`) |
//! | `_set_vocab_glm` | [`glm`] | GLM-4.5 (`Glm4MoeModel`) and its successors |
//!
//! Not converted (no hook): `_set_vocab_qwen` (Qwen 1's tiktoken), `_set_vocab_mistral`
//! (`tekken.json`, mistral-common), `_set_vocab_interns1`, `_set_vocab_rwkv_world`,
//! `_set_vocab_builtin`, `_set_vocab_plamo`, `_set_vocab_glmedge` and the other special cases.

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
/// else `LlamaHfVocab` from a byte-fallback BPE `tokenizer.json`, else GPT-2 BPE from
/// `tokenizer.json` (Llama 3).
///
/// # Errors
/// [`ConvertError::UnsupportedTokenizer`] without any tokenizer file; [`ConvertError::Vocab`] for
/// what [`vocab::set_vocab_llama`] refuses.
pub fn llama(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<()> {
    add(cx, kv, vocab::set_vocab_llama)
}

/// `Qwen2Model.set_vocab` (also Qwen 3's, [`vocab::set_vocab_qwen2`]): SentencePiece when the
/// folder has `tokenizer.model`, GPT-2 BPE from `tokenizer.json` otherwise.
///
/// # Errors
/// As [`gpt2`] and [`sentencepiece`].
pub fn qwen(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<()> {
    add(cx, kv, vocab::set_vocab_qwen2)
}

/// `Gemma3Model.set_vocab` ([`vocab::set_vocab_gemma3`]): SentencePiece with
/// `add_space_prefix = false`, or GPT-2 BPE without `tokenizer.model`.
///
/// # Errors
/// As [`gpt2`] and [`sentencepiece`].
pub fn gemma3(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<()> {
    add(cx, kv, vocab::set_vocab_gemma3)
}

/// `Phi3MiniModel.set_vocab` ([`vocab::set_vocab_phi3`]).
///
/// # Errors
/// As [`gpt2`] and [`sentencepiece`].
pub fn phi3(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<()> {
    add(cx, kv, vocab::set_vocab_phi3)
}

/// `TextModel._set_vocab_gpt2`, also `TextModel.set_vocab` (the default of every architecture
/// that does not override it): GPT-2 BPE from `tokenizer.json` ([`vocab::bpe::set_vocab_gpt2`]).
///
/// # Errors
/// [`ConvertError::UnsupportedTokenizer`] without `tokenizer.json` (and `tokenizer.model`) or for
/// a model type other than BPE; [`ConvertError::Vocab`] for the rest (an unknown pre-tokenizer,
/// malformed files).
pub fn gpt2(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<()> {
    add(cx, kv, vocab::bpe::set_vocab_gpt2)
}

/// `TextModel._set_vocab_sentencepiece`: SentencePiece from `tokenizer.model`
/// ([`vocab::set_vocab_sentencepiece`]).
///
/// # Errors
/// As [`gpt2`], for `tokenizer.model`.
pub fn sentencepiece(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<()> {
    add(cx, kv, vocab::set_vocab_sentencepiece)
}

/// `TextModel._set_vocab_llama_hf`: gguf-py's `LlamaHfVocab` of a byte-fallback BPE
/// `tokenizer.json` ([`vocab::llama_hf::set_vocab_llama_hf`]).
///
/// # Errors
/// [`ConvertError::UnsupportedTokenizer`] for a `tokenizer.json` of another kind; as [`gpt2`].
pub fn llama_hf(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<()> {
    add(cx, kv, |dir, _| vocab::llama_hf::set_vocab_llama_hf(dir))
}

/// `Gemma2Model.set_vocab` ([`vocab::set_vocab_gemma2`]): SentencePiece with
/// `add_space_prefix = false`, no BPE fallback.
///
/// # Errors
/// As [`sentencepiece`].
pub fn gemma2(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<()> {
    add(cx, kv, vocab::set_vocab_gemma2)
}

/// `Glm4Model.set_vocab` ([`vocab::bpe::set_vocab_glm4`]): GPT-2 BPE with `eos`/`unk`/`bos`
/// `<|endoftext|>` and `eot` `<|user|>` from the added tokens.
///
/// # Errors
/// As [`gpt2`]; [`ConvertError::Vocab`] when one of those tokens is not an added token.
pub fn glm4(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<()> {
    add(cx, kv, vocab::bpe::set_vocab_glm4)
}

/// `TextModel._set_vocab_glm` ([`vocab::bpe::set_vocab_glm`]): GPT-2 BPE with `bos` `[gMASK]`,
/// `eot` `<|user|>`, `unk` `<|endoftext|>`, `eom` `<|observation|>`.
///
/// # Errors
/// As [`glm4`].
pub fn glm(cx: &ArchContext<'_>, kv: &mut Kvs) -> Result<()> {
    add(cx, kv, vocab::bpe::set_vocab_glm)
}
