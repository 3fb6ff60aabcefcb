//! `#[derive(GgufModel)]` on the Gemma 3 270M model: every one of its 236 tensors bound to a
//! field of the typed `Gemma3<TensorView>`, and the model written back from the views
//! byte-identical to the original file (compared by SHA-256 and length of the written stream
//! against the original's bytes); the same through a sharded copy.

use std::io::Write;

use gguf_examples::models::Gemma3;
use gguf_serde::ops::split::{split_file, SplitBy, SplitOptions};
use gguf_serde::{GgmlType, Gguf, GgufModel, GgufWriter, ReadOptions, ShardedGguf, TensorView};
use gguf_tests::{model, sha256, temp_dir};
use sha2::{Digest, Sha256};

const GEMMA: &str = "gemma-3-270m-q4_k_m.gguf";

/// A `Write` that hashes and counts what it is given.
#[derive(Default)]
struct HashWriter {
    hash: Sha256,
    len: u64,
}

impl Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.hash.update(buf);
        self.len += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The SHA-256 (hex) and length of the model written through the streaming writer.
fn written(model: &Gemma3<TensorView<'_>>) -> (String, u64) {
    let mut w = GgufWriter::new(HashWriter::default());
    model.write(&mut w).unwrap();
    let h = w.finish().unwrap();
    (h.hash.finalize().iter().map(|b| format!("{b:02x}")).collect(), h.len)
}

#[test]
fn every_tensor_bound_and_rewritten_byte_identical() {
    let Some(path) = model(GEMMA) else { return };
    let file = Gguf::open(&path).unwrap();
    let (m, report) = Gemma3::<TensorView>::read_with(&file, &ReadOptions::default()).unwrap();
    assert_eq!(report.bound, 236);
    assert!(report.unbound.is_empty());
    assert_eq!(m.blocks.len(), 18);
    assert!(m.output.is_none(), "gemma-3-270m ties its output projection");
    // Facts of the file (GGUF-FACTS, gguf-py): a sample of the bound fields.
    assert_eq!((m.meta.architecture.as_str(), m.meta.embedding_length, m.meta.block_count), ("gemma3", 640, 18));
    assert_eq!(m.meta.tokenizer.tokens.len(), 262_144);
    assert_eq!(
        (m.token_embd.name.to_str().unwrap(), m.token_embd.dtype, &*m.token_embd.shape),
        ("token_embd.weight", GgmlType::Q8_0, &[262_144u64, 640][..])
    );
    assert_eq!(m.token_embd.bytes.len(), 178_257_920);
    let b17 = &m.blocks[17];
    assert_eq!((b17.attn_q.name.to_str().unwrap(), &*b17.attn_q.shape), ("blk.17.attn_q.weight", &[1024u64, 640][..]));
    assert_eq!(
        (b17.ffn_down.name.to_str().unwrap(), &*b17.ffn_down.shape),
        ("blk.17.ffn_down.weight", &[640u64, 2048][..])
    );
    assert_eq!(b17.post_ffw_norm.dtype, GgmlType::F32);

    let (hash, len) = written(&m);
    assert_eq!(len, 253_113_024);
    assert_eq!(hash, sha256(file.bytes()), "the rewrite differs from the original");
}

#[test]
fn sharded_copy_reads_as_the_same_model() {
    let Some(path) = model(GEMMA) else { return };
    let dir = temp_dir("derive_gemma_shards");
    let opts = SplitOptions::new(SplitBy::MaxTensors(100));
    let shards = split_file(&path, dir.join("gemma"), &opts).unwrap();
    assert_eq!(shards.len(), 3);
    let sharded = ShardedGguf::open(&shards[1]).unwrap();
    let m = Gemma3::<TensorView>::read(&sharded).unwrap();
    let (hash, len) = written(&m);
    let original = Gguf::open(&path).unwrap();
    assert_eq!(len, original.file_len());
    assert_eq!(hash, sha256(original.bytes()), "a model read from shards differs from the original");
    std::fs::remove_dir_all(&dir).unwrap();
}
