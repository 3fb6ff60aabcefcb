//! Bad and unusual input through the serde layer: truncated or lying streams, mutated files (no
//! panic, a typed error), big-endian files, and `from_reader` reading only the metadata.

use std::collections::BTreeMap;
use std::io::Read;

use gguf_serde::{from_reader, from_slice, Array, Endian, GgmlType, Gguf, GgufWriter, Value, WriteOptions};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Meta {
    general: General,
    #[serde(rename = "{arch}")]
    hp: Hp,
    tokens: Vec<String>,
    scores: Vec<f32>,
    nested: Vec<Vec<i16>>,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct General {
    architecture: String,
    flag: bool,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Hp {
    context_length: u64,
    eps: f64,
}

fn meta() -> Meta {
    Meta {
        general: General { architecture: "llama".into(), flag: true },
        hp: Hp { context_length: 1 << 33, eps: 1e-5 },
        tokens: vec!["a".into(), "é".into(), String::new(), "z".repeat(300)],
        scores: vec![0.5, -1.0, 2.0, 3.5],
        nested: vec![vec![1, -2], vec![3]],
    }
}

/// A reader that counts the bytes it hands out.
struct Counting<R> {
    inner: R,
    read: usize,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n;
        Ok(n)
    }
}

#[test]
fn from_reader_reads_only_the_metadata() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_serialize(&meta()).unwrap();
    w.add_tensor("big", GgmlType::F32, &[1 << 20]).unwrap();
    w.write_tensor_data(&vec![0u8; 4 << 20]).unwrap();
    let bytes = w.finish().unwrap();
    let mut r = Counting { inner: bytes.as_slice(), read: 0 };
    let back: Meta = from_reader(&mut r).unwrap();
    assert_eq!(back, meta());
    // The metadata is a few hundred bytes; the BufReader reads at most 8 KiB ahead.
    assert!(r.read <= 8 * 1024 + 1024, "read {} of {} bytes", r.read, bytes.len());
}

#[test]
fn truncated_and_lying_streams() {
    let bytes = gguf_serde::to_vec(&meta()).unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    let kv_end = f.tensor_infos_end() as usize;
    // Cut inside every part of the block: always an error, never a panic.
    for cut in 0..kv_end {
        assert!(from_reader::<Meta, _>(&bytes[..cut]).is_err(), "cut at {cut}");
        assert!(from_slice::<Meta>(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    // A cut inside the tokens array names the key.
    let tokens_at = f.metadata().find(|kv| kv.key == "tokens").unwrap().value_offset as usize;
    let e = from_reader::<Meta, _>(&bytes[..tokens_at + 20]).unwrap_err().to_string();
    assert!(e.contains("key \"tokens\""), "{e}");
    // A string claiming 2^60 bytes: an error, no allocation of that size.
    let mut lie = b"GGUF".to_vec();
    lie.extend(3u32.to_le_bytes());
    lie.extend(0u64.to_le_bytes());
    lie.extend(1u64.to_le_bytes());
    lie.extend(1u64.to_le_bytes());
    lie.push(b'k');
    lie.extend(8u32.to_le_bytes());
    lie.extend((1u64 << 60).to_le_bytes());
    lie.extend(b"short");
    let msg = "string (key \"k\") at offset 37 claims 1152921504606846976 bytes, more than the 5 bytes left can hold";
    assert_eq!(from_reader::<BTreeMap<String, Value>, _>(lie.as_slice()).unwrap_err().to_string(), msg);
    assert_eq!(from_slice::<BTreeMap<String, Value>>(&lie).unwrap_err().to_string(), msg);
    // An array of 2^62 u64 elements.
    let mut lie = lie[..33].to_vec();
    lie.extend(9u32.to_le_bytes());
    lie.extend(10u32.to_le_bytes());
    lie.extend((1u64 << 62).to_le_bytes());
    lie.extend([0u8; 16]);
    assert!(from_reader::<BTreeMap<String, Value>, _>(lie.as_slice()).is_err());
    assert!(from_slice::<BTreeMap<String, Value>>(&lie).is_err());
    // Not GGUF at all.
    assert_eq!(
        from_reader::<Meta, _>(&b"PK\x03\x04zip"[..]).unwrap_err().to_string(),
        "not a GGUF file: magic at offset 0 is [50, 4b, 03, 04], expected \"GGUF\" (47 47 55 46)"
    );
}

#[test]
fn big_endian_files() {
    let opts = WriteOptions { endian: Endian::Big, ..WriteOptions::default() };
    let mut w = GgufWriter::with_options(Vec::new(), opts).unwrap();
    w.add_serialize(&meta()).unwrap();
    let bytes = w.finish().unwrap();
    assert_eq!(Gguf::from_slice(&bytes).unwrap().endian(), Endian::Big);
    assert_eq!(from_slice::<Meta>(&bytes).unwrap(), meta());
    assert_eq!(from_reader::<Meta, _>(bytes.as_slice()).unwrap(), meta());
    let all: BTreeMap<String, Value> = from_slice(&bytes).unwrap();
    assert_eq!(all["scores"], Value::from(vec![0.5f32, -1.0, 2.0, 3.5]));
}

#[test]
fn integer_map_keys() {
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct S {
        base_model: BTreeMap<u32, String>,
    }
    let s = S { base_model: [(0, "a".to_owned()), (7, "b".to_owned())].into_iter().collect() };
    let bytes = gguf_serde::to_vec(&s).unwrap();
    let keys: Vec<String> = Gguf::from_slice(&bytes).unwrap().metadata().map(|kv| kv.key.to_owned()).collect();
    assert_eq!(keys, ["base_model.0", "base_model.7"]);
    assert_eq!(from_slice::<S>(&bytes).unwrap(), s);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
    /// Any byte of a valid file changed to anything: a value or a typed error, never a panic.
    #[test]
    fn mutated_files_never_panic(pos in 0usize..4096, byte in any::<u8>(), cut in 0usize..4096) {
        let mut bytes = gguf_serde::to_vec(&meta()).unwrap();
        let pos = pos % bytes.len();
        bytes[pos] = byte;
        let _ = from_slice::<Meta>(&bytes);
        let _ = from_slice::<BTreeMap<String, Value>>(&bytes);
        let _ = from_slice::<serde_json::Value>(&bytes);
        let _ = from_reader::<Meta, _>(bytes.as_slice());
        bytes.truncate(cut % (bytes.len() + 1));
        let _ = from_reader::<BTreeMap<String, Value>, _>(bytes.as_slice());
    }
}

#[test]
fn array_nesting_limit() {
    fn nest(levels: usize) -> Array {
        let mut a = Array::U8(vec![1]);
        for _ in 1..levels {
            a = Array::Array(vec![a]);
        }
        a
    }
    let mut m = BTreeMap::new();
    m.insert("deep".to_owned(), Value::Array(nest(gguf_serde::format::MAX_DEPTH)));
    let bytes = gguf_serde::to_vec(&m).unwrap();
    assert_eq!(from_slice::<BTreeMap<String, Value>>(&bytes).unwrap(), m);
    m.insert("deep".to_owned(), Value::Array(nest(gguf_serde::format::MAX_DEPTH + 1)));
    // The error names the innermost element reached: `deep[0]…[0]`, 32 indices.
    assert_eq!(
        gguf_serde::to_vec(&m).unwrap_err().to_string(),
        format!("arrays nested deeper than 32 levels at key \"deep{}\"", "[0]".repeat(32))
    );
}
