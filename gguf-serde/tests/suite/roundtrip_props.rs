//! Property tests: random metadata (all 13 value types, arrays of every type including nested and
//! empty ones) and random tensors (every ggml type, shapes that respect block sizes, alignments)
//! written with the writer read back equal; read → rewrite reproduces the bytes.

use std::io::Cursor;

use gguf_serde::{Array, Endian, GgmlType, Gguf, GgufWriter, Value, ValueType, WriteOptions};
use proptest::prelude::*;

use crate::props::{self, Nan};

fn values() -> BoxedStrategy<Value> {
    // Every bit pattern of the floats: the container keeps bytes, NaN payloads included.
    props::values(Nan::Any, 4)
}

/// Key/value pairs with unique printable-ASCII keys, in random order.
fn kvs() -> impl Strategy<Value = Vec<(String, Value)>> {
    prop::collection::vec(("[ -~]{1,24}", values()), 0..12).prop_map(|v| {
        let mut seen = std::collections::HashSet::new();
        v.into_iter().filter(|(k, _)| k != "general.alignment" && seen.insert(k.clone())).collect()
    })
}

#[derive(Clone, Debug)]
struct TensorSpec {
    name: String,
    dtype: GgmlType,
    /// Canonical shape, outermost first.
    shape: Vec<u64>,
    seed: u64,
}

impl TensorSpec {
    /// Stored dims, fastest first (a scalar is stored as one dim of 1).
    fn ne(&self) -> Vec<u64> {
        let ne: Vec<u64> = self.shape.iter().rev().copied().collect();
        if ne.is_empty() {
            vec![1]
        } else {
            ne
        }
    }

    /// `ne[0] / block × bytes per block × ne[1] × …`, computed here.
    fn nbytes(&self) -> u64 {
        let ne = self.ne();
        ne[0] / self.dtype.block_size() * self.dtype.type_size() * ne[1..].iter().product::<u64>()
    }

    fn data(&self) -> Vec<u8> {
        let mut x = self.seed | 1;
        (0..self.nbytes())
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }
}

fn tensors() -> impl Strategy<Value = Vec<TensorSpec>> {
    let one = (
        "[a-z_.]{0,40}",
        prop::sample::select(GgmlType::ALL.to_vec()),
        0..3u64,
        prop::collection::vec(0..4u64, 0..4),
        any::<u64>(),
        any::<bool>(),
    );
    prop::collection::vec(one, 0..5).prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (suffix, dtype, blocks, outer, seed, scalar))| {
                let shape = if scalar && dtype.block_size() == 1 {
                    Vec::new()
                } else {
                    let mut s = outer;
                    s.push(blocks * dtype.block_size()); // the row (last canonical dim)
                    s
                };
                TensorSpec { name: format!("{i}{suffix}"), dtype, shape, seed }
            })
            .collect()
    })
}

#[derive(Clone, Debug)]
struct FileSpec {
    kvs: Vec<(String, Value)>,
    alignment: Option<(u32, usize)>,
    tensors: Vec<TensorSpec>,
    opts: WriteOptions,
}

fn files() -> impl Strategy<Value = FileSpec> {
    (
        kvs(),
        prop::option::of((0..8u32, any::<prop::sample::Index>())),
        tensors(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(kvs, align, tensors, big, v2, pad)| {
            let endian = if big { Endian::Big } else { Endian::Little };
            let version = if v2 && !big { 2 } else { 3 };
            let opts = WriteOptions::new().with_version(version).with_endian(endian).with_pad_empty_data(pad);
            let alignment = align.map(|(p, at)| (1u32 << p, at.index(kvs.len() + 1)));
            FileSpec { kvs, alignment, tensors, opts }
        })
}

/// The key/value pairs in file order, with `general.alignment` at its position.
fn all_kvs(f: &FileSpec) -> Vec<(String, Value)> {
    let mut kvs = f.kvs.clone();
    if let Some((a, at)) = f.alignment {
        kvs.insert(at, ("general.alignment".into(), Value::U32(a)));
    }
    kvs
}

fn write(f: &FileSpec) -> Vec<u8> {
    let mut w = GgufWriter::with_options(Vec::new(), f.opts).unwrap();
    for (k, v) in all_kvs(f) {
        w.add_value(&k, &v).unwrap();
    }
    for t in &f.tensors {
        w.add_tensor(&t.name, t.dtype, &t.shape).unwrap();
    }
    for t in &f.tensors {
        w.write_tensor_data(&t.data()).unwrap();
    }
    w.finish().unwrap()
}

/// Equality with floats compared by bits (NaN payloads and the sign of zero must survive).
fn same_array(a: &Array, b: &Array) -> bool {
    match (a, b) {
        (Array::F32(x), Array::F32(y)) => x.iter().map(|v| v.to_bits()).eq(y.iter().map(|v| v.to_bits())),
        (Array::F64(x), Array::F64(y)) => x.iter().map(|v| v.to_bits()).eq(y.iter().map(|v| v.to_bits())),
        (Array::Array(x), Array::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_array(p, q)),
        (Array::F32(_) | Array::F64(_) | Array::Array(_), _) => false,
        (x, y) => x == y,
    }
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::F32(x), Value::F32(y)) => x.to_bits() == y.to_bits(),
        (Value::F64(x), Value::F64(y)) => x.to_bits() == y.to_bits(),
        (Value::Array(x), Value::Array(y)) => same_array(x, y),
        (x, y) => x == y,
    }
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// `bytes` written back through [`GgufWriter`] pair by pair and tensor by tensor (borrowed values),
/// in byte order `endian`, with the file's version and its padding of empty tensor infos.
pub(crate) fn rewrite(bytes: &[u8], endian: Endian) -> Vec<u8> {
    let g = Gguf::from_slice(bytes).unwrap();
    let opts = WriteOptions::new()
        .with_version(g.version())
        .with_endian(endian)
        .with_pad_empty_data(bytes.len() as u64 > g.tensor_infos_end());
    let mut w = GgufWriter::with_options(Vec::new(), opts).unwrap();
    for kv in g.metadata() {
        w.add_kv_ref(kv.key, kv.value).unwrap();
    }
    for t in g.tensors() {
        w.add_tensor_ne(t.name, t.dtype, t.ne().dims()).unwrap();
    }
    for t in g.tensors() {
        w.write_tensor_data(g.tensor_data(&t).unwrap()).unwrap();
    }
    w.finish().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn written_files_read_back_equal(f in files()) {
        let bytes = write(&f);
        let g = Gguf::from_slice(&bytes).unwrap();
        let alignment = f.alignment.map_or(32, |(a, _)| a);
        prop_assert_eq!((g.version(), g.endian(), g.alignment()), (f.opts.version, f.opts.endian, alignment));

        let kvs = all_kvs(&f);
        prop_assert_eq!(g.kv_count(), kvs.len());
        for (kv, (key, value)) in g.metadata().zip(&kvs) {
            prop_assert_eq!(kv.key, key.as_str());
            prop_assert_eq!(kv.value.value_type(), value.value_type());
            let back = kv.value.to_owned_value();
            prop_assert!(same_value(&back, value), "key {:?}: wrote {:?}, read {:?}", key, value, back);
            if let Value::Array(a) = value {
                let r = kv.value.as_array().unwrap();
                prop_assert_eq!((r.elem_type(), r.len()), (a.elem_type(), a.len() as u64));
            }
        }

        // Tensors: names, types, shapes, sizes, ggml's running-sum layout, data.
        prop_assert_eq!(g.tensor_count(), f.tensors.len());
        // ggml's data offset: padded when there are tensors, the end of the infos when not.
        let padded_end = align_up(g.tensor_infos_end(), alignment.into());
        let data_offset = if f.tensors.is_empty() { g.tensor_infos_end() } else { padded_end };
        prop_assert_eq!(g.data_offset(), data_offset);
        let mut offset = 0u64;
        for (t, spec) in g.tensors().zip(&f.tensors) {
            let shape = if spec.shape.is_empty() { vec![1] } else { spec.shape.clone() };
            prop_assert_eq!((t.name, t.dtype, t.shape.to_vec()), (spec.name.as_str().into(), spec.dtype, shape));
            prop_assert_eq!(t.ne().dims().to_vec(), spec.ne());
            prop_assert_eq!(t.nbytes, spec.nbytes());
            prop_assert_eq!(t.relative_offset, offset);
            prop_assert_eq!(t.data_offset, g.data_offset() + offset);
            prop_assert_eq!(g.tensor_data(&t).unwrap(), &spec.data()[..]);
            offset = align_up(offset + spec.nbytes(), alignment.into());
        }
        let expected_len = if f.tensors.is_empty() {
            if f.opts.pad_empty_data { padded_end } else { g.tensor_infos_end() }
        } else {
            g.data_offset() + offset
        };
        prop_assert_eq!(bytes.len() as u64, expected_len);

        // The metadata-only reader sees the same.
        let r = Gguf::from_reader(Cursor::new(&bytes)).unwrap();
        prop_assert_eq!(r.tensors().collect::<Vec<_>>(), g.tensors().collect::<Vec<_>>());
        prop_assert!(r.metadata().map(|kv| kv.value.to_owned_value()).zip(&kvs).all(|(a, (_, b))| same_value(&a, b)));
    }

    #[test]
    fn read_then_rewrite_is_byte_identical(f in files()) {
        let bytes = write(&f);
        prop_assert_eq!(rewrite(&bytes, f.opts.endian), bytes.clone());
        // Through the other byte order and back (v2 is little-endian only).
        if f.opts.version == 3 {
            let other = match f.opts.endian { Endian::Little => Endian::Big, Endian::Big => Endian::Little };
            let swapped = rewrite(&bytes, other);
            let g = Gguf::from_slice(&swapped).unwrap();
            prop_assert_eq!(g.endian(), other);
            prop_assert_eq!(swapped.len(), bytes.len());
            let kvs = all_kvs(&f);
            prop_assert_eq!(g.kv_count(), kvs.len());
            for (kv, (key, value)) in g.metadata().zip(&kvs) {
                let back = kv.value.to_owned_value();
                prop_assert!(same_value(&back, value), "key {:?}: wrote {:?}, read {:?}", key, value, back);
            }
            prop_assert_eq!(rewrite(&swapped, f.opts.endian), bytes);
        }
    }
}

/// Reads every value, array element and tensor of an accepted file.
fn touch_everything<S: gguf_serde::container::Source>(g: &Gguf<S>) {
    fn walk(v: gguf_serde::ValueRef<'_>) {
        let _ = v.type_name();
        let _ = v.to_owned_value();
        if let Some(a) = v.as_array() {
            a.iter().for_each(walk);
            let _ = a.strings().map(|s| s.count());
            let _ = a.get(a.len().saturating_sub(1));
        }
    }
    g.metadata().for_each(|kv| walk(kv.value));
    for t in g.tensors() {
        let _ = g.tensor_data(&t);
        let _ = g.tensor(t.name);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Random files with random bytes changed and possibly cut: an error or a file whose every
    /// accessor works, never a panic; the slice and reader paths agree.
    #[test]
    fn corrupted_files_never_panic(
        f in files(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let mut bytes = write(&f);
        for (at, byte) in edits {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        if let Some(c) = cut {
            bytes.truncate(c.index(bytes.len()));
        }
        let slice = Gguf::from_slice(&bytes);
        let reader = Gguf::from_reader(Cursor::new(&bytes));
        match (&slice, &reader) {
            (Ok(g), Ok(r)) => {
                touch_everything(g);
                touch_everything(r);
                prop_assert_eq!(g.tensors().collect::<Vec<_>>(), r.tensors().collect::<Vec<_>>());
            }
            (Err(a), Err(b)) => prop_assert_eq!(format!("{a:?}"), format!("{b:?}")),
            _ => prop_assert!(false, "from_slice {:?} but from_reader {:?}", slice.is_ok(), reader.is_ok()),
        }
    }
}

#[test]
fn value_types_cover_all_thirteen() {
    // The strategies above draw from every variant; make sure the enum has not grown.
    let ids: Vec<u32> = (0..13).filter_map(ValueType::from_id).map(ValueType::id).collect();
    assert_eq!(ids, (0..13).collect::<Vec<_>>());
    assert!(ValueType::from_id(13).is_none());
}
