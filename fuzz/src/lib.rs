//! Checks shared by the fuzz targets in `fuzz_targets/` (one thin file per target calls one of
//! these). A new target (serde `Value`, a typed struct, a derived model, dequantizing a tensor)
//! adds a function here and a file there; see `README.md`.
//!
//! Every check panics (libFuzzer reports a crash) on a broken invariant; an input the reader
//! refuses is fine as long as it is refused with an error, the same way by every entry point.

use std::io::Cursor;

/// The `differential` target against ggml's reader; built with `--features ggml` (see README.md).
#[cfg(feature = "ggml")]
pub mod differential;

use gguf_serde::format::MAX_TENSOR_NAME;
use gguf_serde::Source;
use gguf_serde::{
    ArrayRef, Endian, Error, ErrorKind, Gguf, GgufWriter, TensorInfo, ValueRef, ValueType, WriteError, WriteOptions,
};

/// Opens `data` through `from_slice`, `from_vec` and `from_reader` (at the start of a cursor and
/// after a 3-byte prefix) and asserts that they agree: every one succeeds with the same file, or
/// every one fails with the same message. Returns the slice-backed file.
pub fn open_all_ways(data: &[u8]) -> Option<Gguf<&[u8]>> {
    let slice = Gguf::from_slice(data);
    let owned = Gguf::from_vec(data.to_vec());
    let reader = Gguf::from_reader(Cursor::new(data));
    let mut prefixed = Cursor::new([b"xyz", data].concat());
    prefixed.set_position(3);
    let offset_reader = Gguf::from_reader(prefixed);

    // The parser stopped and resumed at every item (read-ahead 0), and at whatever a few bytes
    // of read-ahead make it stop at.
    let pieces = Gguf::from_reader_in_pieces(Cursor::new(data), 0);
    let ragged = Gguf::from_reader_in_pieces(Cursor::new(data), 1 + data.len() % 13);

    let msg = |r: &Result<(), &Error>| r.err().map(ToString::to_string);
    let results = [
        ("from_slice", msg(&slice.as_ref().map(|_| ()))),
        ("from_vec", msg(&owned.as_ref().map(|_| ()))),
        ("from_reader", msg(&reader.as_ref().map(|_| ()))),
        ("from_reader after a prefix", msg(&offset_reader.as_ref().map(|_| ()))),
        ("from_reader in pieces", msg(&pieces.as_ref().map(|_| ()))),
        ("from_reader in ragged pieces", msg(&ragged.as_ref().map(|_| ()))),
    ];
    for (name, r) in &results[1..] {
        assert_eq!(r, &results[0].1, "{name} disagrees with from_slice");
    }
    check_plain_read(data, slice.as_ref().err());
    let slice = slice.ok()?;
    let same = Compare { offsets: true, data: true, values_bytewise: true, version: true };
    if let Ok(owned) = &owned {
        assert_same(&slice, owned, same);
        assert_eq!(owned.bytes(), data);
    }
    let meta = Compare { data: false, ..same };
    for r in [reader, offset_reader, pieces, ragged] {
        let r = r.ok()?;
        assert_same(&slice, &r, meta);
        // The metadata buffer is exactly the file up to the end of the tensor infos.
        let end = usize::try_from(slice.tensor_infos_end()).ok()?;
        assert_eq!(r.bytes(), data.get(..end)?, "from_reader holds more or other bytes than the metadata");
        // Tensor data is not held: an error, except for a tensor of 0 bytes (the empty slice).
        for t in r.tensors() {
            match r.tensor_data(&t) {
                Ok(d) => assert!(d.is_empty() && t.nbytes == 0),
                Err(e) if matches!(e.kind(), ErrorKind::DataNotLoaded { .. }) => assert!(t.nbytes > 0),
                Err(e) => panic!("tensor_data of a metadata-only file: {e}"),
            }
        }
    }
    Some(slice)
}

/// A reader that yields at most `step` bytes per `read` (a pipe).
struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.bytes.len());
        let (head, rest) = self.bytes.split_at(n);
        buf.get_mut(..n).unwrap_or_default().copy_from_slice(head);
        self.bytes = rest;
        Ok(n)
    }
}

/// The key/value block read from a plain `Read` (no length; what serde's `from_reader` reads):
/// the same answer whether it arrives at once or a few bytes at a time with the parser resuming
/// at every item; serde's `from_reader` into a map of `Value`s succeeds with those pairs or fails
/// with that error; and it agrees with the whole file from a slice (`slice_err`): a file that
/// opens has its pairs read, and a refused pair is refused by the slice too (which also refuses a
/// tensor count the pairs-only read does not use).
fn check_plain_read(data: &[u8], slice_err: Option<&Error>) {
    use std::collections::BTreeMap;
    let whole = Gguf::kv_block_from_reader(data, usize::MAX);
    let step = 1 + data.first().map_or(0, |&b| usize::from(b % 5));
    let trickle = Gguf::kv_block_from_reader(Trickle { bytes: data, step }, 0);
    match (&whole, &trickle) {
        (Ok(a), Ok(b)) => {
            assert_same(a, b, Compare { offsets: true, data: false, values_bytewise: true, version: true });
            assert_eq!(a.bytes(), b.bytes(), "plain reads hold other bytes");
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "plain reads in pieces disagree"),
        _ => panic!("plain read whole {:?}, in pieces {:?}", whole.as_ref().err(), trickle.as_ref().err()),
    }
    let map = gguf_serde::from_reader::<BTreeMap<String, gguf_serde::Value>, _>(Trickle { bytes: data, step });
    // Keys or strings that are not UTF-8 (ggml accepts them): serde's view has text keys only
    // and an owned `Value` holds `String`s, so a string that is not UTF-8 is an InvalidUtf8
    // error (never a panic) and a key that is not UTF-8 is left out.
    let text = |k: &Gguf<_>| k.metadata().all(|kv| kv.key.is_utf8() && value_is_utf8(kv.value));
    match (&whole, &map) {
        (Ok(k), m) if !text(k) => {
            if let Err(e) = m {
                let utf8 =
                    matches!(e.kind(), gguf_serde::ErrorKind::Format(gguf_serde::FormatError::InvalidUtf8 { .. }));
                assert!(utf8, "serde from_reader of a file that is not all UTF-8: {e}");
            }
        }
        (Ok(k), Ok(m)) => {
            assert_eq!(m.len(), k.kv_count(), "serde from_reader: one entry per pair");
            for kv in k.metadata() {
                let got = format!("{:?}", kv.key.to_str().ok().and_then(|key| m.get(key)));
                let want = format!("{:?}", Some(kv.value.to_owned_value()));
                assert_eq!(got, want, "serde from_reader: value of {}", kv.key);
            }
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "serde from_reader disagrees with the parser"),
        _ => panic!("pairs {:?}, serde from_reader {:?}", whole.as_ref().err(), map.as_ref().err()),
    }
    match (slice_err, &whole) {
        (None, Err(e)) => panic!("from_slice opens the file, its pairs from a plain read fail: {e}"),
        (Some(s), Err(e)) => {
            let tensor_count = matches!(
                s.as_format(),
                Some(gguf_serde::FormatError::TooLong { item: gguf_serde::Item::TensorCount, .. })
            );
            assert!(tensor_count || s.to_string() == e.to_string(), "from_slice: {s}; pairs from a plain read: {e}");
        }
        _ => {}
    }
}

/// What [`assert_same`] compares beyond the content (keys, types, values, tensor infos).
#[derive(Clone, Copy, Debug)]
pub struct Compare {
    /// Byte offsets: of each pair, value, tensor info and tensor data, the data section, the end
    /// of the infos, and the file length.
    pub offsets: bool,
    /// Tensor data bytes (both files must hold them).
    pub data: bool,
    /// Array values by their stored bytes (same byte order) rather than element by element.
    pub values_bytewise: bool,
    /// The version (a version 2 big-endian file is rewritten as version 3).
    pub version: bool,
}

/// Asserts that `a` and `b` hold the same metadata (keys in order, exact types, values with
/// floats compared bit for bit) and the same tensor infos, plus what `cmp` asks for.
pub fn assert_same<A: Source, B: Source>(a: &Gguf<A>, b: &Gguf<B>, cmp: Compare) {
    if cmp.version {
        assert_eq!(a.version(), b.version(), "version");
    }
    assert_eq!(a.alignment(), b.alignment(), "alignment");
    assert_eq!(a.kv_count(), b.kv_count(), "kv count");
    assert_eq!(a.tensor_count(), b.tensor_count(), "tensor count");
    if cmp.offsets {
        assert_eq!(a.endian(), b.endian(), "endian");
        assert_eq!(a.data_offset(), b.data_offset(), "data offset");
        assert_eq!(a.tensor_infos_end(), b.tensor_infos_end(), "end of the tensor infos");
        assert_eq!(a.file_len(), b.file_len(), "file length");
    }
    for (x, y) in a.metadata().zip(b.metadata()) {
        assert_eq!(x.key, y.key, "key order");
        assert!(
            same_value(x.value, y.value, cmp.values_bytewise),
            "value of {:?}: {:?} vs {:?}",
            x.key,
            x.value,
            y.value
        );
        if cmp.offsets {
            assert_eq!((x.offset, x.value_offset), (y.offset, y.value_offset), "offsets of {:?}", x.key);
        }
    }
    for (x, y) in a.tensors().zip(b.tensors()) {
        assert_eq!(x.name, y.name, "tensor order");
        assert_eq!((x.dtype, x.shape, x.ne()), (y.dtype, y.shape, y.ne()), "type and shape of {:?}", x.name);
        assert_eq!((x.nbytes, x.n_elements), (y.nbytes, y.n_elements), "size of {:?}", x.name);
        if cmp.offsets {
            assert_eq!(
                (x.data_offset, x.relative_offset, x.info_offset),
                (y.data_offset, y.relative_offset, y.info_offset),
                "offsets of {:?}",
                x.name
            );
        }
        if cmp.data {
            assert!(a.tensor_data(&x).ok() == b.tensor_data(&y).ok(), "data of {:?}", x.name);
        }
    }
}

/// Whether two values have the same type and value; floats compare bit for bit (NaN payloads
/// and the sign of zero included); arrays by element type, length, and their elements (by the
/// stored bytes when `bytewise` and both have the same byte order, except bools, at any depth,
/// which compare as read).
pub fn same_value(a: ValueRef<'_>, b: ValueRef<'_>, bytewise: bool) -> bool {
    match (a, b) {
        (ValueRef::F32(x), ValueRef::F32(y)) => x.to_bits() == y.to_bits(),
        (ValueRef::F64(x), ValueRef::F64(y)) => x.to_bits() == y.to_bits(),
        (ValueRef::Array(x), ValueRef::Array(y)) => same_array(x, y, bytewise),
        (x, y) => x == y,
    }
}

fn same_array(x: ArrayRef<'_>, y: ArrayRef<'_>, bytewise: bool) -> bool {
    if x.elem_type() != y.elem_type() || x.len() != y.len() {
        return false;
    }
    // Bools (at any depth) compare as read: a stored byte other than 0 and 1 is true, written
    // back as 1 (as ggml's writer writes it).
    let bools_inside = matches!(x.elem_type(), ValueType::Bool | ValueType::Array);
    if bytewise && x.endian() == y.endian() && !bools_inside {
        return x.raw_bytes() == y.raw_bytes();
    }
    x.iter().zip(y.iter()).all(|(a, b)| same_value(a, b, bytewise))
}

/// Calls every accessor of the file and checks what each must give: element counts, lookups by
/// name and key, sizes from the ggml type table, tensor data inside the file, owned copies.
pub fn check_accessors<S: Source>(f: &Gguf<S>) {
    assert!(matches!(f.version(), 2 | 3));
    assert!(f.alignment().is_power_of_two());
    assert!(f.alignment() <= gguf_serde::format::MAX_ALIGNMENT);
    assert!(f.tensor_infos_end() <= f.data_offset());
    if f.tensor_count() == 0 {
        // ggml's data offset of a file without tensors: the end of the tensor infos.
        assert_eq!(f.data_offset(), f.tensor_infos_end());
    } else {
        assert_eq!(f.data_offset() % u64::from(f.alignment()), 0);
        assert!(f.data_offset() - f.tensor_infos_end() < u64::from(f.alignment()));
    }
    assert_eq!(f.metadata().len(), f.kv_count());
    assert_eq!(f.tensors().len(), f.tensor_count());
    for kv in f.metadata() {
        assert!(!kv.key.is_empty());
        assert!(kv.offset < kv.value_offset && kv.value_offset <= f.tensor_infos_end());
        // Keys are unique, so `get` finds this very value.
        assert!(f.get(kv.key).is_some_and(|v| same_value(v, kv.value, true)), "get({:?})", kv.key);
        check_value(kv.value, 1);
        let owned = kv.value.to_owned_value();
        assert_eq!(owned.value_type(), kv.value.value_type());
        if let (ValueRef::Array(a), gguf_serde::Value::Array(o)) = (kv.value, &owned) {
            assert_eq!(o.len() as u64, a.len());
            assert_eq!(o.elem_type(), a.elem_type());
        }
    }
    for t in f.tensors() {
        check_tensor(f, &t);
    }
}

/// `depth`: the nesting level of `v` (1 for a pair's value); arrays may nest `MAX_DEPTH` levels.
fn check_value(v: ValueRef<'_>, depth: usize) {
    if v.as_array().is_some() {
        assert!(depth <= gguf_serde::format::MAX_DEPTH, "array nested deeper than MAX_DEPTH");
    }
    let _ = (v.type_name(), v.as_u64(), v.as_i64(), v.as_f64(), v.as_str(), v.as_bool());
    if let ValueRef::Bool(_) | ValueRef::String(_) = v {
        assert!(v.as_u64().is_none() && v.as_i64().is_none());
    }
    let Some(a) = v.as_array() else { return };
    let mut n = 0u64;
    for (i, x) in a.iter().enumerate() {
        n += 1;
        assert_eq!(x.value_type(), a.elem_type());
        if let Some(size) = a.elem_type().fixed_size() {
            let got = a.get(i as u64);
            assert!(got.is_some_and(|g| same_value(g, x, true)), "get({i}) disagrees with iter");
            assert_eq!(a.raw_bytes().len() as u64, a.len() * size as u64);
        }
        check_value(x, depth + 1);
    }
    assert_eq!(n, a.len(), "iterated a different number of elements than the length");
    assert_eq!(a.iter().len() as u64, a.len());
    assert!(a.get(a.len()).is_none());
    match a.strings() {
        Some(s) => assert_eq!(s.count() as u64, a.len()),
        None => assert_ne!(a.elem_type(), gguf_serde::ValueType::String),
    }
    // Nested arrays: the elements' bytes tile the array's bytes exactly.
    if a.elem_type() == gguf_serde::ValueType::Array {
        let inner: usize = a.iter().filter_map(|x| x.as_array()).map(|x| 12 + x.raw_bytes().len()).sum();
        assert_eq!(inner, a.raw_bytes().len());
    }
}

/// Whether every string of `v` (at any depth) is UTF-8.
fn value_is_utf8(v: ValueRef<'_>) -> bool {
    match v {
        ValueRef::String(s) => s.is_utf8(),
        ValueRef::Array(a) => a.is_utf8(),
        _ => true,
    }
}

fn check_tensor<S: Source>(f: &Gguf<S>, t: &TensorInfo<'_>) {
    assert!(t.name.len() as u64 <= MAX_TENSOR_NAME);
    let found = f.tensor(t.name);
    assert!(found.as_ref() == Some(t), "tensor({:?}) finds another info", t.name);
    let ne = t.ne();
    let ne = ne.dims();
    assert_eq!(ne.iter().rev().copied().collect::<Vec<_>>(), &*t.shape);
    // A zero dim empties the tensor even when the other dims' product overflows u64.
    let n = if t.shape.contains(&0) { Some(0) } else { t.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d)) };
    assert_eq!(Some(t.n_elements), n);
    assert_eq!(t.dtype.nbytes(ne), Some(t.nbytes), "nbytes of {:?}", t.name);
    assert_eq!(ne.first().copied().unwrap_or(1) % t.dtype.block_size(), 0);
    assert_eq!(t.data_offset, f.data_offset() + t.relative_offset);
    assert_eq!(t.relative_offset % u64::from(f.alignment()), 0);
    assert!(t.data_offset + t.nbytes <= f.file_len(), "tensor {:?} ends past the file", t.name);
    assert!(t.info_offset < f.tensor_infos_end());
    match f.tensor_data(t) {
        Ok(d) => {
            assert_eq!(d.len() as u64, t.nbytes);
            assert!(f.tensor_data_by_name(t.name).ok() == Some(d));
        }
        Err(e) if matches!(e.kind(), ErrorKind::DataNotLoaded { .. }) => {
            assert!((f.bytes().len() as u64) < f.file_len())
        }
        Err(e) => panic!("tensor_data({:?}): {e}", t.name),
    }
}

/// How [`rewrite`] gives each value to the writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// `add_kv_ref` with the borrowed value.
    Borrowed,
    /// `add_value` with an owned copy (`to_owned_value`).
    Owned,
}

/// Writes `f` back through [`GgufWriter`]: same keys and values in order, same tensors (stored
/// dims, so a tensor with no dims keeps none) in order with their data, the file's version and
/// byte order (version 2 big-endian, which the writer does not produce, becomes version 3), and
/// padding after empty tensor infos only if the file has it.
///
/// # Errors
/// Whatever the writer refuses.
pub fn rewrite(f: &Gguf<&[u8]>, endian: Endian, via: Via) -> gguf_serde::Result<Vec<u8>> {
    let version = if f.version() == 2 && endian == Endian::Big { 3 } else { f.version() };
    let opts = WriteOptions::like(f).with_version(version).with_endian(endian);
    let mut w = GgufWriter::with_options(Vec::new(), opts)?;
    for kv in f.metadata() {
        // The owned `Value` holds text: a pair with bytes that are not UTF-8 is copied borrowed.
        // So is a key that is UTF-8 but not ASCII: `add_value` takes a new key and refuses one that
        // is not ASCII (the spec's rule for keys; `add_kv_ref` takes what a file holds).
        match (via, kv.key.to_str()) {
            (Via::Owned, Ok(key)) if key.is_ascii() && value_is_utf8(kv.value) => {
                w.add_value(key, &kv.value.to_owned_value())?
            }
            _ => w.add_kv_ref(kv.key, kv.value)?,
        }
    }
    for t in f.tensors() {
        w.add_tensor_ne(t.name, t.dtype, t.ne().dims())?;
    }
    for t in f.tensors() {
        w.write_tensor_data(f.tensor_data(&t)?)?;
    }
    w.finish()
}

/// Whether the writer's refusal `e` of a file the reader took is one of the documented
/// differences between them: the reader takes any UTF-8 key of any length and tensor names up
/// to the spec's 64 bytes, empty ones included; the writer takes ASCII keys of at most 65,535
/// bytes (the spec) and non-empty names of at most 63 bytes (what ggml keeps).
pub fn documented_refusal(e: &Error) -> bool {
    match e.as_write() {
        Some(WriteError::InvalidKey { key, .. }) => !key.is_ascii() || key.len() > 65_535,
        Some(WriteError::InvalidTensor { name, .. }) => name.is_empty() || name.len() as u64 >= MAX_TENSOR_NAME,
        _ => false,
    }
}

/// The round trip: whatever opens writes back and re-opens to the same content, in its own byte
/// order and in the other one, through borrowed and owned values alike (byte-identical), and
/// rewriting the rewrite changes nothing.
pub fn check_roundtrip(data: &[u8]) {
    let Ok(f) = Gguf::from_slice(data) else { return };
    let out = match rewrite(&f, f.endian(), Via::Borrowed) {
        Ok(out) => out,
        Err(e) if documented_refusal(&e) => return,
        Err(e) => panic!("the writer refuses a file the reader took: {e}"),
    };
    // What the input did not pay for is at most the padding after the last tensor (or after
    // the tensor infos of a file without tensors): less than one alignment.
    assert!(
        (out.len() as u64) < data.len() as u64 + u64::from(f.alignment()),
        "a {}-byte file rewritten as {} bytes (alignment {})",
        data.len(),
        out.len(),
        f.alignment()
    );
    let g = Gguf::from_slice(&out).unwrap_or_else(|e| panic!("the rewrite does not re-open: {e}"));
    // Every bool is written as 0 or 1, as ggml's writer writes it.
    assert!(g.metadata().all(|kv| kv.odd_bool_bytes().is_none()), "a bool byte other than 0 and 1 written");
    // Version 2 is written little-endian only: a big-endian rewrite of it is version 3.
    let v2_big = |e: Endian| f.version() == 2 && e == Endian::Big;
    let content = Compare { offsets: false, data: true, values_bytewise: true, version: !v2_big(f.endian()) };
    assert_same(&f, &g, content);
    assert_eq!(g.endian(), f.endian());

    let owned = rewrite(&f, f.endian(), Via::Owned).unwrap_or_else(|e| panic!("owned values refused: {e}"));
    assert!(owned == out, "writing owned values gives other bytes than writing borrowed ones");

    let again = rewrite(&g, g.endian(), Via::Borrowed).unwrap_or_else(|e| panic!("rewriting the rewrite: {e}"));
    assert!(again == out, "rewriting the rewrite changes it");

    let other = match f.endian() {
        Endian::Little => Endian::Big,
        Endian::Big => Endian::Little,
    };
    let swapped = rewrite(&f, other, Via::Borrowed).unwrap_or_else(|e| panic!("writing {}-endian: {e}", other.name()));
    let h = Gguf::from_slice(&swapped)
        .unwrap_or_else(|e| panic!("the {}-endian rewrite does not re-open: {e}", other.name()));
    assert_eq!(h.endian(), other);
    assert_same(&f, &h, Compare { values_bytewise: false, version: !v2_big(other), ..content });
}

/// The serde layer on arbitrary bytes: whenever the container opens the file, deserializing its
/// whole KV block into a map of [`gguf_serde::Value`]s succeeds and gives every key's owned
/// value; a small typed struct either deserializes or fails with an `Error` (never a panic); and
/// the map, serialized back (when its keys are ones the writer accepts), reads back equal.
pub fn check_serde(data: &[u8]) {
    use std::collections::BTreeMap;

    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct General<'a> {
        architecture: Option<&'a str>,
        alignment: Option<u32>,
        name: Option<String>,
        tags: Option<Vec<&'a str>>,
    }
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Meta<'a> {
        #[serde(borrow)]
        general: Option<General<'a>>,
        #[serde(rename = "{arch}")]
        arch: Option<BTreeMap<String, gguf_serde::Value>>,
    }

    let Ok(file) = Gguf::from_slice(data) else { return };
    // Every string array copied whole into a `StringArray` (one pass over the parsed array, no
    // second UTF-8 check) holds exactly the strings the container's walk gives, or is refused
    // when one of them is not UTF-8; and so through serde, for the vocabulary's key.
    for kv in file.metadata() {
        let gguf_serde::ValueRef::Array(a) = kv.value else { continue };
        let Some(strings) = a.strings() else { continue };
        let want: Option<Vec<&str>> = strings.map(|s| s.to_str().ok()).collect();
        let got = gguf_serde::StringArray::from_array(&a);
        assert_eq!(got.as_ref().map(|g| g.iter().collect::<Vec<_>>()), want, "StringArray of {}", kv.key);
        if kv.key.as_bytes() == b"tokenizer.ggml.tokens" {
            #[derive(serde::Deserialize)]
            struct Vocab {
                #[serde(rename = "tokenizer.ggml.tokens")]
                tokens: gguf_serde::StringArray,
            }
            match file.deserialize_metadata::<Vocab>() {
                Ok(v) => assert_eq!(Some(v.tokens), got, "serde StringArray of {}", kv.key),
                Err(e) => assert!(got.is_none(), "serde refused a UTF-8 string array: {e}"),
            }
        }
    }
    if !file.metadata().all(|kv| kv.key.is_utf8() && value_is_utf8(kv.value)) {
        // Bytes that are not UTF-8: a text target is an InvalidUtf8 error, never a panic.
        if let Err(e) = gguf_serde::from_slice::<BTreeMap<String, gguf_serde::Value>>(data) {
            let utf8 = matches!(e.kind(), gguf_serde::ErrorKind::Format(gguf_serde::FormatError::InvalidUtf8 { .. }));
            assert!(utf8, "serde of a file that is not all UTF-8: {e}");
        }
        return;
    }
    let map: BTreeMap<String, gguf_serde::Value> = match gguf_serde::from_slice(data) {
        Ok(m) => m,
        Err(e) => panic!("container opens the file but serde cannot read its KV block: {e}"),
    };
    assert_eq!(map.len(), file.kv_count(), "every key becomes one map entry");
    for kv in file.metadata() {
        // Debug strings: NaN equals NaN here (payloads are the roundtrip target's business).
        let got = format!("{:?}", kv.key.to_str().ok().and_then(|k| map.get(k)));
        let want = format!("{:?}", Some(&kv.value.to_owned_value()));
        assert_eq!(got, want, "value of {}", kv.key);
    }
    let _ = gguf_serde::from_slice::<Meta<'_>>(data);
    // A key with a `{arch}` segment is the serde layer's architecture placeholder on write
    // (documented), so such a map does not read back under the same key.
    if map.keys().any(|k| k.contains("{arch}")) {
        return;
    }
    // Up to 64 KiB, `to_vec` with its padding; above, the pairs without padding (ggml takes
    // alignments up to 2^31: `to_vec` of 57 bytes declaring it holds 2 GiB, the padding asked
    // for; the regression test `alignment_of_two_gib_is_read_as_ggml_reads_it` counts it).
    let serialized = if file.alignment() <= gguf_serde::format::MAX_USEFUL_ALIGNMENT {
        gguf_serde::to_vec(&map)
    } else {
        let opts = WriteOptions::new().with_pad_empty_data(false);
        GgufWriter::with_options(Vec::new(), opts).and_then(|mut w| {
            w.add_serialize(&map)?;
            w.finish()
        })
    };
    if let Ok(bytes) = serialized {
        // The same pairs, re-encoded at their stored size, then at most one alignment of
        // padding (57 bytes once became a 2 GiB allocation here).
        assert!(
            (bytes.len() as u64) < file.tensor_infos_end() + u64::from(file.alignment()),
            "{} bytes of metadata serialized as {} bytes",
            file.tensor_infos_end(),
            bytes.len()
        );
        let again: BTreeMap<String, gguf_serde::Value> =
            gguf_serde::from_slice(&bytes).unwrap_or_else(|e| panic!("re-reading what to_vec wrote: {e}"));
        assert_eq!(format!("{again:?}"), format!("{map:?}"));
    }
}

/// The codecs on arbitrary bytes: the first byte picks a ggml type; the rest, cut to whole
/// blocks, dequantizes without a panic (NaN and infinities allowed) on the single-thread,
/// parallel and big-endian paths, which agree bit for bit; and for types with a quantizer, the
/// bytes read as `f32`s quantize (whole blocks) without a panic and dequantize back.
pub fn check_codec(data: &[u8]) {
    use gguf_serde::{codec, GgmlType};
    let Some((&pick, rest)) = data.split_first() else { return };
    let Some(&dtype) = GgmlType::ALL.get(pick as usize % GgmlType::ALL.len()) else { return };
    let ts = dtype.type_size() as usize;
    let bs = dtype.block_size() as usize;
    let blocks = rest.len() / ts;
    let src = &rest[..blocks * ts];
    let mut a = vec![0f32; blocks * bs];
    let mut b = vec![0f32; blocks * bs];
    codec::dequantize(dtype, src, &mut a).expect("whole blocks dequantize");
    codec::dequantize_par(dtype, Endian::Little, src, &mut b).expect("whole blocks dequantize");
    assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "parallel path differs");
    let mut swapped = src.to_vec();
    codec::swap_blocks(dtype, &mut swapped);
    codec::dequantize_endian(dtype, Endian::Big, &swapped, &mut b).expect("whole blocks dequantize");
    assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "big-endian path differs");
    // A cut block is an error, not a panic.
    if ts > 1 && !rest.is_empty() && rest.len() % ts != 0 {
        assert!(codec::dequantize_to_vec(dtype, rest).is_err());
    }
    if codec::can_quantize(dtype) {
        let floats: Vec<f32> = rest.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let n = floats.len() / bs * bs;
        let q = match codec::quantize_to_vec(dtype, &floats[..n]) {
            Ok(q) => q,
            // ggml's grid quantizers (IQ1/IQ2/IQ3) abort on some NaN/infinite blocks; ours say so.
            Err(codec::CodecError::QuantizeAbort { dtype: t, .. }) if t == dtype => return,
            Err(e) => panic!("whole blocks quantize: {e}"),
        };
        assert_eq!(q.len(), n / bs * ts);
        let back = codec::dequantize_to_vec(dtype, &q).expect("own output dequantizes");
        assert_eq!(back.len(), n);
    }
}

/// A small typed model for the `model` target: token embeddings, numbered blocks with one
/// constrained tensor each, an optional output tensor; other tensors are ignored.
#[derive(gguf_serde::GgufModel)]
#[gguf(unbound = "ignore")]
pub struct FuzzModel<T> {
    /// `token_embd.weight`.
    #[gguf(name = "token_embd.weight")]
    pub embd: T,
    /// `blk.N.attn_q.weight`, counted from the tensors present.
    #[gguf(name = "blk.{}")]
    pub blocks: Vec<FuzzBlock<T>>,
    /// `output.weight`, optional.
    #[gguf(name = "output.weight")]
    pub output: Option<T>,
}

/// One block of [`FuzzModel`].
#[derive(gguf_serde::GgufModel)]
pub struct FuzzBlock<T> {
    /// `attn_q.weight`, of a few types.
    #[gguf(name = "attn_q.weight", dtype = "F32 | F16 | BF16 | Q8_0 | Q4_K")]
    pub q: T,
}

/// The derive on arbitrary bytes: binding [`FuzzModel`] as borrowed views either fails with an
/// `Error` or succeeds; a bound model writes back and binds again to the same tensors; binding
/// as `Vec<f32>` (dequantizing every bound tensor) never panics.
pub fn check_model(data: &[u8]) {
    use gguf_serde::{GgufModel, TensorView};
    let Ok(file) = Gguf::from_slice(data) else { return };
    let Ok(model) = FuzzModel::<TensorView<'_>>::read(&file) else { return };
    let _ = FuzzModel::<Vec<f32>>::read(&file);
    let bytes = model.to_vec().unwrap_or_else(|e| panic!("a bound model must write back: {e}"));
    let again = Gguf::from_slice(&bytes).unwrap_or_else(|e| panic!("re-opening what the model wrote: {e}"));
    let back = FuzzModel::<TensorView<'_>>::read(&again).unwrap_or_else(|e| panic!("re-binding: {e}"));
    assert_eq!(back.blocks.len(), model.blocks.len());
    assert_eq!(back.embd.bytes, model.embd.bytes);
    assert_eq!(back.output.is_some(), model.output.is_some());
    for (a, b) in back.blocks.iter().zip(&model.blocks) {
        assert_eq!(a.q.bytes, b.q.bytes);
    }
}
