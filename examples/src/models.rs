//! Typed models used by the examples and the tests: Gemma 3 (as in `gemma-3-270m`) and a plain
//! Llama, each generic over the tensor storage (`TensorView`, `Tensor`, `Vec<f32>`, ...).
//!
//! Field order is the order of the tensors in the file, so that a model read and written back is
//! byte-identical; every `#[gguf(metadata)]` struct lists the keys in file order with their
//! stored types.

use gguf_serde::GgufModel;
use serde::{Deserialize, Serialize};

/// The metadata of a Gemma 3 text model, in the order and with the types llama.cpp's converter
/// writes them (the 33 keys of `gemma-3-270m-q4_k_m.gguf`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gemma3Metadata {
    /// `general.architecture` (`"gemma3"`).
    #[serde(rename = "general.architecture")]
    pub architecture: String,
    /// `general.type`.
    #[serde(rename = "general.type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `general.name`.
    #[serde(rename = "general.name", default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `general.basename`.
    #[serde(rename = "general.basename", default, skip_serializing_if = "Option::is_none")]
    pub basename: Option<String>,
    /// `general.size_label`.
    #[serde(rename = "general.size_label", default, skip_serializing_if = "Option::is_none")]
    pub size_label: Option<String>,
    /// `general.license`.
    #[serde(rename = "general.license", default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// `general.tags`.
    #[serde(rename = "general.tags", default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Context length, tokens.
    #[serde(rename = "{arch}.context_length")]
    pub context_length: u32,
    /// Width of the residual stream.
    #[serde(rename = "{arch}.embedding_length")]
    pub embedding_length: u32,
    /// Number of transformer blocks.
    #[serde(rename = "{arch}.block_count")]
    pub block_count: u32,
    /// Hidden width of the feed-forward network.
    #[serde(rename = "{arch}.feed_forward_length")]
    pub feed_forward_length: u32,
    /// Query heads.
    #[serde(rename = "{arch}.attention.head_count")]
    pub head_count: u32,
    /// RMS norm epsilon.
    #[serde(rename = "{arch}.attention.layer_norm_rms_epsilon")]
    pub rms_epsilon: f32,
    /// Width of a key head.
    #[serde(rename = "{arch}.attention.key_length")]
    pub key_length: u32,
    /// Width of a value head.
    #[serde(rename = "{arch}.attention.value_length")]
    pub value_length: u32,
    /// RoPE base frequency.
    #[serde(rename = "{arch}.rope.freq_base")]
    pub rope_freq_base: f32,
    /// Sliding window of the local attention layers, tokens.
    #[serde(rename = "{arch}.attention.sliding_window")]
    pub sliding_window: u32,
    /// Key/value heads.
    #[serde(rename = "{arch}.attention.head_count_kv")]
    pub head_count_kv: u32,
    /// The tokenizer.
    #[serde(rename = "tokenizer.ggml")]
    pub tokenizer: Tokenizer,
    /// `general.quantization_version`.
    #[serde(rename = "general.quantization_version", default, skip_serializing_if = "Option::is_none")]
    pub quantization_version: Option<u32>,
    /// `general.file_type` (llama.cpp's `llama_ftype`).
    #[serde(rename = "general.file_type", default, skip_serializing_if = "Option::is_none")]
    pub file_type: Option<u32>,
}

/// `tokenizer.ggml.*` of a SentencePiece-style vocabulary, in llama.cpp's order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tokenizer {
    /// `model` (`"llama"` for SentencePiece).
    pub model: String,
    /// `pre`.
    pub pre: String,
    /// The tokens, by id.
    pub tokens: Vec<String>,
    /// Their scores.
    pub scores: Vec<f32>,
    /// Their types (llama.cpp's `llama_token_type`).
    pub token_type: Vec<i32>,
    /// Begin-of-sequence token id.
    pub bos_token_id: u32,
    /// End-of-sequence token id.
    pub eos_token_id: u32,
    /// Unknown token id.
    pub unknown_token_id: u32,
    /// Padding token id.
    pub padding_token_id: u32,
    /// Whether to add BOS.
    pub add_bos_token: bool,
    /// Whether to add SEP.
    pub add_sep_token: bool,
    /// Whether to add EOS.
    pub add_eos_token: bool,
    /// Whether to add a space prefix.
    pub add_space_prefix: bool,
}

/// The hyper-parameters a Gemma 3 block needs for its shape constraints (read from the same keys
/// as [`Gemma3Metadata`]; not written again).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gemma3Dims {
    /// Width of the residual stream.
    #[serde(rename = "{arch}.embedding_length")]
    pub embd: u32,
    /// Hidden width of the feed-forward network.
    #[serde(rename = "{arch}.feed_forward_length")]
    pub ff: u32,
    /// Query heads.
    #[serde(rename = "{arch}.attention.head_count")]
    pub heads: u32,
    /// Key/value heads.
    #[serde(rename = "{arch}.attention.head_count_kv")]
    pub kv_heads: u32,
    /// Width of a key head.
    #[serde(rename = "{arch}.attention.key_length")]
    pub key_len: u32,
    /// Width of a value head.
    #[serde(rename = "{arch}.attention.value_length")]
    pub value_len: u32,
}

/// A Gemma 3 transformer block (`blk.N.*`), tensors in file order. Shapes are canonical
/// (outermost first): a projection from `embd` to `n` is `[n, embd]`.
#[derive(GgufModel)]
pub struct Gemma3Block<T> {
    /// Hyper-parameters for the shape constraints.
    #[gguf(metadata)]
    pub dims: Gemma3Dims,
    /// Key projection.
    #[gguf(name = "attn_k.weight", shape = "[kv_heads * key_len, embd]")]
    pub attn_k: T,
    /// RMS norm of the keys (per head).
    #[gguf(name = "attn_k_norm.weight", dtype = "F32", shape = "[key_len]")]
    pub attn_k_norm: T,
    /// RMS norm before attention.
    #[gguf(name = "attn_norm.weight", dtype = "F32", shape = "[embd]")]
    pub attn_norm: T,
    /// Attention output projection.
    #[gguf(name = "attn_output.weight", shape = "[embd, heads * value_len]")]
    pub attn_output: T,
    /// Query projection.
    #[gguf(name = "attn_q.weight", shape = "[heads * key_len, embd]")]
    pub attn_q: T,
    /// RMS norm of the queries (per head).
    #[gguf(name = "attn_q_norm.weight", dtype = "F32", shape = "[key_len]")]
    pub attn_q_norm: T,
    /// Value projection.
    #[gguf(name = "attn_v.weight", shape = "[kv_heads * value_len, embd]")]
    pub attn_v: T,
    /// Feed-forward down projection.
    #[gguf(name = "ffn_down.weight", shape = "[embd, ff]")]
    pub ffn_down: T,
    /// Feed-forward gate.
    #[gguf(name = "ffn_gate.weight", shape = "[ff, embd]")]
    pub ffn_gate: T,
    /// RMS norm before the feed-forward network.
    #[gguf(name = "ffn_norm.weight", dtype = "F32", shape = "[embd]")]
    pub ffn_norm: T,
    /// Feed-forward up projection.
    #[gguf(name = "ffn_up.weight", shape = "[ff, embd]")]
    pub ffn_up: T,
    /// RMS norm after attention.
    #[gguf(name = "post_attention_norm.weight", dtype = "F32", shape = "[embd]")]
    pub post_attention_norm: T,
    /// RMS norm after the feed-forward network.
    #[gguf(name = "post_ffw_norm.weight", dtype = "F32", shape = "[embd]")]
    pub post_ffw_norm: T,
}

/// A Gemma 3 text model: every tensor of `gemma-3-270m` bound, in file order.
#[derive(GgufModel)]
pub struct Gemma3<T> {
    /// All 33 keys.
    #[gguf(metadata)]
    pub meta: Gemma3Metadata,
    /// Final RMS norm.
    #[gguf(name = "output_norm.weight", dtype = "F32", shape = "[embedding_length]")]
    pub output_norm: T,
    /// Token embeddings, one row per token (also the output projection: tied).
    #[gguf(name = "token_embd.weight", shape = "[tokenizer.tokens, embedding_length]")]
    pub token_embd: T,
    /// The blocks, `blk.0` to `blk.{block_count - 1}`.
    #[gguf(name = "blk.{}", count = "block_count")]
    pub blocks: Vec<Gemma3Block<T>>,
    /// A separate output projection, when the embeddings are not tied.
    #[gguf(name = "output.weight", shape = "[tokenizer.tokens, embedding_length]")]
    pub output: Option<T>,
}

/// The metadata of a Llama model (the keys llama.cpp needs, without a tokenizer).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LlamaMetadata {
    /// `general.architecture` (`"llama"`).
    #[serde(rename = "general.architecture")]
    pub architecture: String,
    /// `general.name`.
    #[serde(rename = "general.name")]
    pub name: String,
    /// Context length, tokens.
    #[serde(rename = "{arch}.context_length")]
    pub context_length: u32,
    /// Width of the residual stream.
    #[serde(rename = "{arch}.embedding_length")]
    pub embedding_length: u32,
    /// Number of blocks.
    #[serde(rename = "{arch}.block_count")]
    pub block_count: u32,
    /// Hidden width of the feed-forward network.
    #[serde(rename = "{arch}.feed_forward_length")]
    pub feed_forward_length: u32,
    /// RoPE dimensions (the head width).
    #[serde(rename = "{arch}.rope.dimension_count")]
    pub rope_dimension_count: u32,
    /// Query heads.
    #[serde(rename = "{arch}.attention.head_count")]
    pub head_count: u32,
    /// Key/value heads.
    #[serde(rename = "{arch}.attention.head_count_kv")]
    pub head_count_kv: u32,
    /// RMS norm epsilon.
    #[serde(rename = "{arch}.attention.layer_norm_rms_epsilon")]
    pub rms_epsilon: f32,
    /// Vocabulary size.
    #[serde(rename = "{arch}.vocab_size")]
    pub vocab_size: u32,
}

/// What a Llama block needs for its shapes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LlamaDims {
    /// Width of the residual stream.
    #[serde(rename = "{arch}.embedding_length")]
    pub embd: u32,
    /// Hidden width of the feed-forward network.
    #[serde(rename = "{arch}.feed_forward_length")]
    pub ff: u32,
    /// Query heads.
    #[serde(rename = "{arch}.attention.head_count")]
    pub heads: u32,
    /// Key/value heads.
    #[serde(rename = "{arch}.attention.head_count_kv")]
    pub kv_heads: u32,
}

/// A Llama block (`blk.N.*`). Its shape constraints use [`LlamaDims`], deserialized from the
/// model's metadata (the file's on read, the metadata written on write): a block built in memory
/// holds only its tensors.
#[derive(GgufModel)]
#[gguf(metadata = "LlamaDims")]
pub struct LlamaBlock<T> {
    /// RMS norm before attention.
    #[gguf(name = "attn_norm.weight", dtype = "F32", shape = "[embd]")]
    pub attn_norm: T,
    /// Query projection.
    #[gguf(name = "attn_q.weight", shape = "[embd, embd]")]
    pub attn_q: T,
    /// Key projection.
    #[gguf(name = "attn_k.weight", shape = "[embd / heads * kv_heads, embd]")]
    pub attn_k: T,
    /// Value projection.
    #[gguf(name = "attn_v.weight", shape = "[embd / heads * kv_heads, embd]")]
    pub attn_v: T,
    /// Attention output projection.
    #[gguf(name = "attn_output.weight", shape = "[embd, embd]")]
    pub attn_output: T,
    /// RMS norm before the feed-forward network.
    #[gguf(name = "ffn_norm.weight", dtype = "F32", shape = "[embd]")]
    pub ffn_norm: T,
    /// Feed-forward gate.
    #[gguf(name = "ffn_gate.weight", shape = "[ff, embd]")]
    pub ffn_gate: T,
    /// Feed-forward down projection.
    #[gguf(name = "ffn_down.weight", shape = "[embd, ff]")]
    pub ffn_down: T,
    /// Feed-forward up projection.
    #[gguf(name = "ffn_up.weight", shape = "[ff, embd]")]
    pub ffn_up: T,
}

/// A Llama model.
#[derive(GgufModel)]
pub struct Llama<T> {
    /// The metadata.
    #[gguf(metadata)]
    pub config: LlamaMetadata,
    /// Token embeddings, one row per token.
    #[gguf(name = "token_embd.weight", shape = "[vocab_size, embedding_length]")]
    pub token_embd: T,
    /// The blocks.
    #[gguf(name = "blk.{}", count = "block_count")]
    pub blocks: Vec<LlamaBlock<T>>,
    /// Final RMS norm.
    #[gguf(name = "output_norm.weight", dtype = "F32", shape = "[embedding_length]")]
    pub output_norm: T,
    /// Output projection; absent when tied to the embeddings.
    #[gguf(name = "output.weight", shape = "[vocab_size, embedding_length]")]
    pub output: Option<T>,
}

/// Sizes of [`tiny_llama`].
pub const TINY_LLAMA: LlamaMetadata = LlamaMetadata {
    architecture: String::new(),
    name: String::new(),
    context_length: 128,
    embedding_length: 64,
    block_count: 2,
    feed_forward_length: 96,
    rope_dimension_count: 16,
    head_count: 4,
    head_count_kv: 2,
    rms_epsilon: 1e-5,
    vocab_size: 32,
};

/// A tiny Llama with random weights from `seed` (a splitmix64 stream, uniform in [-1, 1), drawn
/// tensor by tensor in file order, each in row-major order):
/// the sizes of [`TINY_LLAMA`], norms and embeddings F32, the projections Q8_0 (quantized with
/// the codecs from the random F32 values), a separate output projection in Q8_0.
///
/// # Errors
/// Only if quantizing fails (it does not for these shapes).
pub fn tiny_llama(seed: u64) -> gguf_serde::Result<Llama<gguf_serde::Tensor>> {
    use gguf_serde::{GgmlType, Tensor};
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    };
    let mut f32_tensor = |name: &str, shape: &[u64]| {
        let n: u64 = shape.iter().product();
        Tensor::from_f32(name, shape, &(0..n).map(|_| next()).collect::<Vec<_>>())
    };
    let c = LlamaMetadata { architecture: "llama".into(), name: "tiny random llama".into(), ..TINY_LLAMA };
    let (embd, ff, vocab) = (u64::from(c.embedding_length), u64::from(c.feed_forward_length), u64::from(c.vocab_size));
    let kv = embd / u64::from(c.head_count) * u64::from(c.head_count_kv);
    let q8 = GgmlType::Q8_0;
    // Drawn in file order: token_embd, the blocks, output_norm, output.
    let token_embd = f32_tensor("token_embd.weight", &[vocab, embd])?;
    let mut blocks = Vec::new();
    for i in 0..c.block_count {
        let mut t = |name: &str, shape: &[u64]| f32_tensor(&format!("blk.{i}.{name}.weight"), shape);
        blocks.push(LlamaBlock {
            attn_norm: t("attn_norm", &[embd])?,
            attn_q: t("attn_q", &[embd, embd])?.quantize(q8)?,
            attn_k: t("attn_k", &[kv, embd])?.quantize(q8)?,
            attn_v: t("attn_v", &[kv, embd])?.quantize(q8)?,
            attn_output: t("attn_output", &[embd, embd])?.quantize(q8)?,
            ffn_norm: t("ffn_norm", &[embd])?,
            ffn_gate: t("ffn_gate", &[ff, embd])?.quantize(q8)?,
            ffn_down: t("ffn_down", &[embd, ff])?.quantize(q8)?,
            ffn_up: t("ffn_up", &[ff, embd])?.quantize(q8)?,
        });
    }
    Ok(Llama {
        token_embd,
        blocks,
        output_norm: f32_tensor("output_norm.weight", &[embd])?,
        output: Some(f32_tensor("output.weight", &[vocab, embd])?.quantize(q8)?),
        config: c,
    })
}
