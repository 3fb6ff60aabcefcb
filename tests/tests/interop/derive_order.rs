//! `#[derive(GgufModel)]` writes a model read from a file back in that file's tensor order, so
//! that the round trip is byte-identical whatever the struct's field order:
//!
//! - SmolLM2-135M (Q4_1) stores its blocks `blk.0, blk.1, blk.10, blk.11, …` (lexicographic);
//!   a `Vec` of blocks numbers them `0, 1, 2, …`. Before, the rewrite differed from the file.
//! - Gemma 3 270M read into a struct whose fields are not in file order.
//!
//! Both compare the SHA-256 and length of the written stream with the original file's bytes,
//! and check that field order on request gives the numeric order.

use std::io::Write;

use gguf_examples::models::{Gemma3Block, Gemma3Metadata};
use gguf_serde::model::{TensorOrder, WriteModelOptions};
use gguf_serde::{Gguf, GgufModel, GgufWriter, TensorView};
use gguf_tests::{model, sha256};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

const SMOLLM2: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
const GEMMA: &str = "gemma-3-270m-q4_k_m.gguf";

/// A `Write` that hashes and counts what it is given, and keeps the first `keep` bytes.
struct HashWriter {
    hash: Sha256,
    len: u64,
    head: Vec<u8>,
    keep: usize,
}

impl HashWriter {
    fn new(keep: usize) -> Self {
        HashWriter { hash: Sha256::new(), len: 0, head: Vec::new(), keep }
    }
}

impl Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.hash.update(buf);
        self.len += buf.len() as u64;
        let room = self.keep.saturating_sub(self.head.len()).min(buf.len());
        self.head.extend_from_slice(&buf[..room]);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The SHA-256 (hex), length and first `keep` bytes of a model written with `order`.
fn written<'a, M: GgufModel<'a>>(m: &M, order: TensorOrder, keep: usize) -> (String, u64, Vec<u8>) {
    let mut w = GgufWriter::new(HashWriter::new(keep));
    m.write_with(&mut w, &WriteModelOptions::new().with_order(order)).unwrap();
    let h = w.finish().unwrap();
    (h.hash.finalize().iter().map(|b| format!("{b:02x}")).collect(), h.len, h.head)
}

/// The bytes of a file up to its tensor data, alignment padding included (a rewrite with the
/// same names has the same header length).
fn header_len<S: gguf_serde::Source>(f: &Gguf<S>) -> usize {
    let end = f.tensor_infos_end();
    end.next_multiple_of(u64::from(f.alignment())) as usize
}

/// The tensor names of a file of `len` bytes from its header (the data left zero: a zeroed
/// allocation, not written to).
fn tensor_names(head: &[u8], len: u64) -> Vec<String> {
    let mut file = vec![0u8; len as usize];
    file[..head.len()].copy_from_slice(head);
    let g = Gguf::from_slice(&file).unwrap();
    g.tensors().map(|t| t.name.to_string()).collect()
}

/// The 33 keys of SmolLM2-135M-Instruct.Q4_1.gguf, in file order with their stored types
/// (gguf-py's `GGUFReader` lists them so).
#[derive(Serialize, Deserialize)]
struct SmolMeta {
    #[serde(rename = "general.architecture")]
    architecture: String,
    #[serde(rename = "general.type")]
    kind: String,
    #[serde(rename = "general.name")]
    name: String,
    #[serde(rename = "general.organization")]
    organization: String,
    #[serde(rename = "general.finetune")]
    finetune: String,
    #[serde(rename = "general.basename")]
    basename: String,
    #[serde(rename = "general.size_label")]
    size_label: String,
    #[serde(rename = "general.license")]
    license: String,
    #[serde(rename = "general.languages")]
    languages: Vec<String>,
    #[serde(rename = "{arch}.block_count")]
    block_count: u32,
    #[serde(rename = "{arch}.context_length")]
    context_length: u32,
    #[serde(rename = "{arch}.embedding_length")]
    embedding_length: u32,
    #[serde(rename = "{arch}.feed_forward_length")]
    feed_forward_length: u32,
    #[serde(rename = "{arch}.attention.head_count")]
    head_count: u32,
    #[serde(rename = "{arch}.attention.head_count_kv")]
    head_count_kv: u32,
    #[serde(rename = "{arch}.rope.freq_base")]
    rope_freq_base: f32,
    #[serde(rename = "{arch}.attention.layer_norm_rms_epsilon")]
    rms_epsilon: f32,
    #[serde(rename = "general.file_type")]
    file_type: u32,
    #[serde(rename = "{arch}.vocab_size")]
    vocab_size: u32,
    #[serde(rename = "{arch}.rope.dimension_count")]
    rope_dimension_count: u32,
    #[serde(rename = "tokenizer.ggml.add_space_prefix")]
    add_space_prefix: bool,
    #[serde(rename = "tokenizer.ggml.add_bos_token")]
    add_bos_token: bool,
    #[serde(rename = "tokenizer.ggml.model")]
    tokenizer_model: String,
    #[serde(rename = "tokenizer.ggml.pre")]
    tokenizer_pre: String,
    #[serde(rename = "tokenizer.ggml.tokens")]
    tokens: Vec<String>,
    #[serde(rename = "tokenizer.ggml.token_type")]
    token_type: Vec<i32>,
    #[serde(rename = "tokenizer.ggml.merges")]
    merges: Vec<String>,
    #[serde(rename = "tokenizer.ggml.bos_token_id")]
    bos: u32,
    #[serde(rename = "tokenizer.ggml.eos_token_id")]
    eos: u32,
    #[serde(rename = "tokenizer.ggml.unknown_token_id")]
    unknown: u32,
    #[serde(rename = "tokenizer.ggml.padding_token_id")]
    padding: u32,
    #[serde(rename = "tokenizer.chat_template")]
    chat_template: String,
    #[serde(rename = "general.quantization_version")]
    quantization_version: u32,
}

/// What a block's shapes need.
#[derive(Deserialize)]
struct SmolDims {
    #[serde(rename = "{arch}.embedding_length")]
    embd: u32,
    #[serde(rename = "{arch}.feed_forward_length")]
    ff: u32,
    #[serde(rename = "{arch}.attention.head_count")]
    heads: u32,
    #[serde(rename = "{arch}.attention.head_count_kv")]
    kv_heads: u32,
}

/// A Llama block, fields in the usual reading order (the file stores `attn_norm, ffn_down,
/// ffn_gate, ffn_up, ffn_norm, attn_k, attn_output, attn_q, attn_v`).
#[derive(GgufModel)]
#[gguf(metadata = "SmolDims")]
struct SmolBlock<T> {
    #[gguf(name = "attn_norm.weight", dtype = "f32", shape = "[embd]")]
    attn_norm: T,
    #[gguf(name = "attn_q.weight", shape = "[embd, embd]")]
    attn_q: T,
    #[gguf(name = "attn_k.weight", shape = "[embd / heads * kv_heads, embd]")]
    attn_k: T,
    #[gguf(name = "attn_v.weight", shape = "[embd / heads * kv_heads, embd]")]
    attn_v: T,
    #[gguf(name = "attn_output.weight", shape = "[embd, embd]")]
    attn_output: T,
    #[gguf(name = "ffn_norm.weight", dtype = "f32", shape = "[embd]")]
    ffn_norm: T,
    #[gguf(name = "ffn_gate.weight", shape = "[ff, embd]")]
    ffn_gate: T,
    #[gguf(name = "ffn_up.weight", shape = "[ff, embd]")]
    ffn_up: T,
    #[gguf(name = "ffn_down.weight", shape = "[embd, ff]")]
    ffn_down: T,
}

#[derive(GgufModel)]
struct SmolLm2<T> {
    #[gguf(metadata)]
    meta: SmolMeta,
    #[gguf(name = "token_embd.weight", shape = "[vocab_size, embedding_length]")]
    token_embd: T,
    #[gguf(name = "blk.{}", count = "block_count")]
    blocks: Vec<SmolBlock<T>>,
    #[gguf(name = "output_norm.weight", dtype = "F32", shape = "[embedding_length]")]
    output_norm: T,
}

#[test]
fn smollm2_stored_lexicographically_is_rewritten_byte_identical() {
    let Some(path) = model(SMOLLM2) else { return };
    let file = Gguf::open(&path).unwrap();
    let stored: Vec<&str> = file.tensors().map(|t| t.name.to_str().unwrap()).collect();
    assert_eq!(stored.len(), 272);
    // The file's order (gguf-py lists the same): blk.1 is followed by blk.10.
    assert_eq!(stored[0], "token_embd.weight");
    assert_eq!((stored[10], stored[19]), ("blk.1.attn_norm.weight", "blk.10.attn_norm.weight"));

    let m = SmolLm2::<TensorView>::read(&file).unwrap();
    assert_eq!((m.blocks.len(), m.meta.embedding_length, m.meta.tokens.len()), (30, 576, 49_152));
    assert_eq!(&*m.token_embd.shape, &[49_152u64, 576][..]);
    assert_eq!(&*m.blocks[10].attn_k.shape, &[192u64, 576][..]);

    let (hash, len, _) = written(&m, TensorOrder::Auto, 0);
    assert_eq!(len, file.file_len());
    assert_eq!(hash, sha256(file.bytes()), "the rewrite differs from the original");

    // Field order, on request: the blocks by number, so not the file.
    let (hash, len, head) = written(&m, TensorOrder::Field, header_len(&file));
    assert_eq!(len, file.file_len());
    assert_ne!(hash, sha256(file.bytes()));
    let names = tensor_names(&head, len);
    assert_eq!((names[10].as_str(), names[19].as_str()), ("blk.1.attn_norm.weight", "blk.2.attn_norm.weight"));
    let block0: Vec<String> =
        ["attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"]
            .iter()
            .map(|n| format!("blk.0.{n}.weight"))
            .collect();
    assert_eq!(names[1..10], block0, "block 0 in the order of the struct's fields");
}

/// Gemma 3 with its fields out of file order (the file stores `output_norm`, `token_embd`, then
/// the blocks).
#[derive(GgufModel)]
struct Gemma3Shuffled<T> {
    #[gguf(name = "blk.{}", count = "block_count")]
    blocks: Vec<Gemma3Block<T>>,
    #[gguf(metadata)]
    meta: Gemma3Metadata,
    #[gguf(name = "token_embd.weight", shape = "[tokenizer.tokens, embedding_length]")]
    token_embd: T,
    #[gguf(name = "output_norm.weight", dtype = "F32", shape = "[embedding_length]")]
    output_norm: T,
}

#[test]
fn gemma3_in_another_field_order_is_rewritten_byte_identical() {
    let Some(path) = model(GEMMA) else { return };
    let file = Gguf::open(&path).unwrap();
    let stored: Vec<&str> = file.tensors().map(|t| t.name.to_str().unwrap()).collect();
    assert_eq!((stored[0], stored[1], stored.len()), ("output_norm.weight", "token_embd.weight", 236));
    let m = Gemma3Shuffled::<TensorView>::read(&file).unwrap();
    let (hash, len, _) = written(&m, TensorOrder::Auto, 0);
    assert_eq!(len, 253_113_024);
    assert_eq!(hash, sha256(file.bytes()), "the rewrite differs from the original");

    let (_, len, head) = written(&m, TensorOrder::Field, header_len(&file));
    let names = tensor_names(&head, len);
    assert_eq!(names[0], "blk.0.attn_k.weight");
    assert_eq!(names[names.len() - 2..], ["token_embd.weight", "output_norm.weight"]);
}
