//! Bad and unusual input through the serde layer: truncated or lying streams, mutated files (no
//! panic, a typed error), big-endian files, and `from_reader` reading only the metadata.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};

use gguf_serde::{
    from_reader, from_slice, Array, Endian, Error, ErrorKind, FormatError, GgmlType, Gguf, GgufWriter, Item, Value,
    WriteOptions,
};
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

/// A reader that counts the bytes it hands out and the calls made to it.
struct Counting<R> {
    inner: R,
    read: usize,
    calls: usize,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n;
        self.calls += 1;
        Ok(n)
    }
}

impl<R: Seek> Seek for Counting<R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// `Gguf::from_reader` reads the metadata in pieces of what the parser asks for and 8 KiB more
/// while the file has them (its docs): a few reads of the source, not one per item, and at most
/// 8 KiB past the end of the tensor infos. A file of 1, 300 and 3,000 keys before 256 KiB of
/// tensor data: its first piece already takes 8 KiB past the header, and each piece of a reader
/// that has the bytes (as this one) is read in at most two calls (`read_to_end` asks for at
/// most 8 KiB at first).
#[test]
fn from_reader_reads_the_metadata_8_kib_ahead() {
    for keys in [1u32, 300, 3000] {
        let mut w = GgufWriter::new(Vec::new());
        for i in 0..keys {
            w.add_kv(&format!("k.{i}"), i).unwrap();
        }
        w.add_tensor("big", GgmlType::F32, &[1 << 16]).unwrap();
        w.write_tensor_data(&vec![0u8; 1 << 18]).unwrap();
        let bytes = w.finish().unwrap();
        let infos_end = Gguf::from_slice(&bytes).unwrap().tensor_infos_end() as usize;
        let mut r = Counting { inner: std::io::Cursor::new(&bytes), read: 0, calls: 0 };
        let g = Gguf::from_reader(&mut r).unwrap();
        assert_eq!(g.metadata().count(), keys as usize);
        assert!(r.read >= 8 * 1024 && r.read >= infos_end, "{keys} keys: read {} bytes of {infos_end}", r.read);
        assert!(r.read <= infos_end + 8 * 1024, "{keys} keys: read {} bytes of {infos_end}", r.read);
        let pieces = infos_end.div_ceil(8 * 1024);
        assert!(r.calls <= 2 * pieces + 2, "{keys} keys: {} reads for {infos_end} bytes of metadata", r.calls);
    }
}

#[test]
fn from_reader_reads_only_the_metadata() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_serialize(&meta()).unwrap();
    w.add_tensor("big", GgmlType::F32, &[1 << 20]).unwrap();
    w.write_tensor_data(&vec![0u8; 4 << 20]).unwrap();
    let bytes = w.finish().unwrap();
    let mut r = Counting { inner: bytes.as_slice(), read: 0, calls: 0 };
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
    // Cut inside every part of the block: always the error of a short file, the same from a
    // plain reader as from a slice, never a panic.
    for cut in 0..kv_end {
        let e = from_slice::<Meta>(&bytes[..cut]).unwrap_err();
        assert_cut_error(&e, &bytes[..cut]);
        let r = from_reader::<Meta, _>(&bytes[..cut]).unwrap_err();
        assert_eq!(r.to_string(), e.to_string(), "cut at {cut}");
    }
    // A cut inside the tokens array names the key.
    let tokens_at = f.metadata().find(|kv| kv.key == "tokens").unwrap().value_offset as usize;
    let e = from_reader::<Meta, _>(&bytes[..tokens_at + 20]).unwrap_err();
    assert!(e.to_string().contains("key \"tokens\""), "{e}");
    assert_eq!(e.key(), Some("tokens"));
    assert_cut_error(&e, &bytes[..tokens_at + 20]);
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
    for e in [
        from_reader::<BTreeMap<String, Value>, _>(lie.as_slice()).unwrap_err(),
        from_slice::<BTreeMap<String, Value>>(&lie).unwrap_err(),
    ] {
        assert_eq!(e.to_string(), msg);
        assert!(
            matches!(e.kind(), ErrorKind::Format(FormatError::TooLong { item: Item::String, owner: Some(k), offset: 37, count, remaining: 5, .. }) if k == "k" && *count == 1 << 60),
            "{e:?}"
        );
    }
    // An array of 2^62 u64 elements.
    let mut lie = lie[..33].to_vec();
    lie.extend(9u32.to_le_bytes());
    lie.extend(10u32.to_le_bytes());
    lie.extend((1u64 << 62).to_le_bytes());
    lie.extend([0u8; 16]);
    // Its count is stored at 41 (after the value type at 33 and the element type at 37); 16
    // bytes follow.
    for e in [
        from_reader::<BTreeMap<String, Value>, _>(lie.as_slice()).unwrap_err(),
        from_slice::<BTreeMap<String, Value>>(&lie).unwrap_err(),
    ] {
        assert!(
            matches!(e.kind(), ErrorKind::Format(FormatError::TooLong { item: Item::Array, owner: Some(k), offset: 41, count, remaining: 16, .. }) if k == "k" && *count == 1 << 62),
            "{e:?}"
        );
        assert_eq!(e.key(), Some("k"));
    }
    // Not GGUF at all.
    let e = from_reader::<Meta, _>(&b"PK\x03\x04zip"[..]).unwrap_err();
    assert_eq!(e.to_string(), "not a GGUF file: magic at offset 0 is 50 4b 03 04, expected \"GGUF\" (47 47 55 46)");
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::BadMagic { found, .. }) if found == b"PK\x03\x04"),
        "{e:?}"
    );
}

/// The error of a file cut short (`bytes` is all of it): fewer than 4 bytes are a wrong magic
/// (what there is of it); past that, an item that needs more bytes than remain (`Truncated`:
/// from its offset to the end), or a count or length larger than the rest can hold (`TooLong`:
/// the rest is what follows its 8-byte count).
fn assert_cut_error(e: &Error, bytes: &[u8]) {
    let len = bytes.len() as u64;
    match e.kind() {
        ErrorKind::Format(FormatError::BadMagic { found, .. }) => assert!(len < 4 && found == bytes, "{len}: {e:?}"),
        ErrorKind::Format(FormatError::Truncated { offset, needed, available, .. }) => {
            assert_eq!((offset + available, needed > available), (len, true), "{e:?}")
        }
        ErrorKind::Format(FormatError::TooLong { offset, remaining, .. }) => {
            assert_eq!(offset + 8 + remaining, len, "{e:?}")
        }
        _ => panic!("a file cut at {len}: {e:?}"),
    }
}

#[test]
fn big_endian_files() {
    let opts = WriteOptions::new().with_endian(Endian::Big);
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
    let keys: Vec<String> = Gguf::from_slice(&bytes).unwrap().metadata().map(|kv| kv.key.to_string()).collect();
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
        // Whatever the byte did, the slice and the plain reader agree, value for value or error
        // for error, except on what only the slice reads (the tensor infos after the pairs: a
        // changed tensor count); an error is the reader's (format) or the mapping's (metadata),
        // at an offset inside the file.
        let a = from_slice::<Meta>(&bytes);
        let b = from_reader::<Meta, _>(bytes.as_slice());
        match (&a, &b) {
            (Ok(x), Ok(y)) => prop_assert_eq!(x, y),
            (Err(x), Err(y)) => prop_assert_eq!(x.to_string(), y.to_string()),
            (Err(x), Ok(_)) => prop_assert!(!crate::common::in_kv_block(x), "from_slice {:?}, from_reader {:?}", a, b),
            (Ok(_), Err(_)) => prop_assert!(false, "from_slice {:?}, from_reader {:?}", a, b),
        }
        let all = from_slice::<BTreeMap<String, Value>>(&bytes);
        let json = from_slice::<serde_json::Value>(&bytes);
        for e in [a.err(), all.err(), json.err()].into_iter().flatten() {
            prop_assert!(matches!(e.kind(), ErrorKind::Format(_) | ErrorKind::Metadata(_)), "{:?}", e);
            prop_assert!(e.offset().is_none_or(|o| o <= bytes.len() as u64), "{:?}", e);
        }
        bytes.truncate(cut % (bytes.len() + 1));
        if let Err(e) = from_reader::<BTreeMap<String, Value>, _>(bytes.as_slice()) {
            prop_assert!(matches!(e.kind(), ErrorKind::Format(_) | ErrorKind::Metadata(_)), "{:?}", e);
        }
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
    let e = gguf_serde::to_vec(&m).unwrap_err();
    // The output offset of the innermost array named: deep's value at 40 (header 24, key 8 + 4,
    // type 4), then 32 arrays' element type and count, 12 bytes each: 40 + 32 * 12 = 424.
    assert_eq!(
        e.to_string(),
        format!("arrays nested deeper than 32 levels at key \"deep{}\" (offset 424)", "[0]".repeat(32))
    );
    assert!(e.key().is_some_and(|k| k.starts_with("deep")), "{:?}", e.key());
}
