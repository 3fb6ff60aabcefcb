//! `#[derive(GgufModel)]`: reading and writing typed models, every error path with its message,
//! on small files written with the container writer (not with the model layer under test).

use gguf_serde::model::Unbound;
use gguf_serde::{
    Endian, Error, ErrorKind, GgmlType, Gguf, GgufModel, GgufWriter, ModelError, ReadOptions, ShardedGguf, Tensor,
    TensorView, WriteOptions,
};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Meta {
    #[serde(rename = "general.architecture")]
    arch: String,
    #[serde(rename = "{arch}.embd")]
    embd: u32,
    #[serde(rename = "{arch}.vocab")]
    vocab: i32,
    #[serde(rename = "{arch}.blocks", default, skip_serializing_if = "Option::is_none")]
    blocks: Option<u32>,
}

#[derive(GgufModel, Debug)]
struct Block<T> {
    #[gguf(name = "norm", dtype = "F32 | F16")]
    norm: T,
    #[gguf(name = "proj")]
    proj: Option<T>,
}

#[derive(GgufModel, Debug)]
struct Model<T> {
    #[gguf(metadata)]
    meta: Meta,
    #[gguf(name = "embd.weight", shape = "[vocab, embd]")]
    embd: T,
    #[gguf(name = "blk.{}", count = "blocks")]
    blocks: Vec<Block<T>>,
    #[gguf(name = "out.weight", dtype = "F32", shape = "[vocab, embd * 1 + 0]")]
    out: Option<T>,
}

/// A model with no metadata and every tensor optional, which ignores unbound tensors.
#[derive(GgufModel, Debug)]
#[gguf(unbound = "ignore")]
struct Loose<T> {
    #[gguf(name = "a")]
    a: Option<T>,
    #[gguf(name = "layer.{}.w")]
    layers: Vec<T>,
    #[gguf(name = "sub")]
    sub: Option<Block<T>>,
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Writes a file with the given keys (u32 embd/vocab) and F32 tensors (name, shape), tensor data
/// 0, 1, 2, ... per tensor.
fn file(embd: u32, vocab: i32, blocks: Option<u32>, tensors: &[(&str, GgmlType, &[u64])]) -> Vec<u8> {
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "toy").unwrap();
    w.add_kv("toy.embd", embd).unwrap();
    w.add_kv("toy.vocab", vocab).unwrap();
    if let Some(b) = blocks {
        w.add_kv("toy.blocks", b).unwrap();
    }
    for (name, dtype, shape) in tensors {
        w.add_tensor(name, *dtype, shape).unwrap();
    }
    for (_, dtype, shape) in tensors {
        let n: u64 = shape.iter().product();
        let bytes = match dtype {
            GgmlType::F32 => f32_bytes(&(0..n).map(|i| i as f32).collect::<Vec<_>>()),
            GgmlType::F16 => (0..n).flat_map(|i| half::f16::from_f32(i as f32).to_le_bytes()).collect(),
            _ => vec![0u8; dtype.nbytes(&shape.iter().rev().copied().collect::<Vec<_>>()).unwrap() as usize],
        };
        w.write_tensor_data(&bytes).unwrap();
    }
    w.finish().unwrap()
}

const F32: GgmlType = GgmlType::F32;

fn good() -> Vec<u8> {
    file(
        4,
        3,
        Some(2),
        &[
            ("embd.weight", F32, &[3, 4]),
            ("blk.0.norm", F32, &[4]),
            ("blk.0.proj", GgmlType::Q8_0, &[2, 32]),
            ("blk.1.norm", GgmlType::F16, &[4]),
        ],
    )
}

#[test]
fn reads_views_owned_and_f32() {
    let bytes = good();
    let f = Gguf::from_slice(&bytes).unwrap();
    let m = Model::<TensorView>::read(&f).unwrap();
    assert_eq!(m.meta, Meta { arch: "toy".into(), embd: 4, vocab: 3, blocks: Some(2) });
    assert_eq!(m.embd.name, "embd.weight");
    assert_eq!(&*m.embd.shape, &[3, 4]);
    assert_eq!(m.embd.bytes, f32_bytes(&(0..12).map(|i| i as f32).collect::<Vec<_>>()).as_slice());
    assert_eq!(m.blocks.len(), 2);
    assert_eq!(m.blocks[0].proj.unwrap().dtype, GgmlType::Q8_0);
    assert!(m.blocks[1].proj.is_none());
    assert_eq!(m.blocks[1].norm.dtype, GgmlType::F16);
    assert!(m.out.is_none());

    let t = Model::<Tensor>::read(&f).unwrap();
    assert_eq!(t.embd.bytes, m.embd.bytes);
    // F16 0, 1, 2, 3 converted on read; the Q8_0 block of zeros is 0.0.
    let v = Model::<Vec<f32>>::read(&f).unwrap();
    assert_eq!(v.blocks[1].norm, vec![0.0, 1.0, 2.0, 3.0]);
    assert_eq!(v.blocks[0].proj.as_deref(), Some(&[0.0f32; 64][..]));
}

#[test]
fn round_trip_is_byte_identical_and_sharded_source_reads() {
    let bytes = good();
    let f = Gguf::from_slice(&bytes).unwrap();
    let m = Model::<TensorView>::read(&f).unwrap();
    assert_eq!(m.to_vec().unwrap(), bytes);
    let owned = Model::<Tensor>::read(&f).unwrap();
    assert_eq!(owned.to_vec().unwrap(), bytes);

    let dir = crate::common::temp_dir();
    let path = dir.path().join("m.gguf");
    std::fs::write(&path, &bytes).unwrap();
    let sharded = ShardedGguf::open(&path).unwrap();
    let s = Model::<TensorView>::read(&sharded).unwrap();
    assert_eq!(s.to_vec().unwrap(), bytes);
}

#[test]
fn missing_tensor() {
    let bytes = file(4, 3, Some(2), &[("embd.weight", F32, &[3, 4]), ("blk.0.norm", F32, &[4])]);
    let f = Gguf::from_slice(&bytes).unwrap();
    let e = Model::<TensorView>::read(&f).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Model(ModelError::MissingTensor { name, field, .. }) if name == "blk.1.norm" && field == "Block.norm"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "tensor \"blk.1.norm\" is missing (required by the model field `Block.norm`)");
    assert_eq!((e.tensor(), e.key(), e.offset()), (Some("blk.1.norm"), None, None));
}

#[test]
fn dtype_mismatch() {
    let bytes = file(4, 3, Some(1), &[("embd.weight", F32, &[3, 4]), ("blk.0.norm", GgmlType::BF16, &[4])]);
    let e = Model::<TensorView>::read(&Gguf::from_slice(&bytes).unwrap()).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Model(ModelError::WrongDtype { name, expected, found: GgmlType::BF16, .. })
            if name == "blk.0.norm" && expected == &[F32, GgmlType::F16]),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "tensor \"blk.0.norm\" has type BF16, expected one of F32, F16");
}

#[test]
fn shape_mismatch() {
    let bytes = file(4, 3, Some(0), &[("embd.weight", F32, &[4, 3])]);
    let e = Model::<TensorView>::read(&Gguf::from_slice(&bytes).unwrap()).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Model(ModelError::WrongShape { name, .. }) if name == "embd.weight"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "tensor \"embd.weight\" has shape [4, 3], expected [3, 4]");
    // A different number of dimensions.
    let bytes = file(4, 3, Some(0), &[("embd.weight", F32, &[12])]);
    let e = Model::<TensorView>::read(&Gguf::from_slice(&bytes).unwrap()).unwrap_err();
    assert_eq!(e.to_string(), "tensor \"embd.weight\" has shape [12], expected [3, 4]");
}

#[test]
fn negative_metadata_dimension() {
    let bytes = file(4, -3, Some(0), &[("embd.weight", F32, &[3, 4])]);
    let e = Model::<TensorView>::read(&Gguf::from_slice(&bytes).unwrap()).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Model(ModelError::Constraint { name, .. }) if name == "embd.weight"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "constraint of \"embd.weight\": metadata value -3 is not a dimension");
}

#[test]
fn count_from_tensors_and_holes() {
    // No toy.blocks key: the count is the numbering found in the file.
    let bytes =
        file(4, 3, None, &[("embd.weight", F32, &[3, 4]), ("blk.0.norm", F32, &[4]), ("blk.1.norm", F32, &[4])]);
    let f = Gguf::from_slice(&bytes).unwrap();
    let m = Model::<TensorView>::read(&f).unwrap();
    assert_eq!(m.blocks.len(), 2);

    let bytes =
        file(4, 3, None, &[("embd.weight", F32, &[3, 4]), ("blk.0.norm", F32, &[4]), ("blk.2.norm", F32, &[4])]);
    let e = Model::<TensorView>::read(&Gguf::from_slice(&bytes).unwrap()).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Model(ModelError::NumberingHole { template, missing: 1, max: 2, .. }) if template == "blk.{}"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "\"blk.{}\": number 1 is missing, but numbers up to 2 are present");

    // Numbers with leading zeros or other text after the number are not elements.
    let bytes =
        file(4, 3, None, &[("embd.weight", F32, &[3, 4]), ("blk.0.norm", F32, &[4]), ("blk.01.norm", F32, &[4])]);
    let e = Model::<TensorView>::read(&Gguf::from_slice(&bytes).unwrap()).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Model(ModelError::UnboundTensors { names, .. }) if names == &["blk.01.norm"]),
        "{e:?}"
    );
}

#[test]
fn unbound_tensors_error_or_ignore() {
    let bytes = file(
        4,
        3,
        Some(0),
        &[("embd.weight", F32, &[3, 4]), ("extra.a", F32, &[1]), ("blk.5.norm", F32, &[4]), ("extra.b", F32, &[1])],
    );
    let f = Gguf::from_slice(&bytes).unwrap();
    let e = Model::<TensorView>::read(&f).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Model(ModelError::UnboundTensors { names, .. }) if names == &["extra.a", "blk.5.norm", "extra.b"]),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "3 tensors are bound by no field of the model: \"extra.a\", \"blk.5.norm\", \"extra.b\"");
    let opts = ReadOptions::new().with_unbound(Unbound::Ignore);
    let (_, report) = Model::<TensorView>::read_with(&f, &opts).unwrap();
    assert_eq!(report.bound, 1);
    assert_eq!(report.unbound, ["extra.a", "blk.5.norm", "extra.b"]);

    // A struct that ignores them by default still reports them.
    let bytes =
        file(1, 1, None, &[("a", F32, &[1]), ("layer.0.w", F32, &[2]), ("layer.1.w", F32, &[2]), ("z", F32, &[1])]);
    let f = Gguf::from_slice(&bytes).unwrap();
    let (m, report) = Loose::<Vec<f32>>::read_with(&f, &ReadOptions::default()).unwrap();
    assert_eq!((m.a, m.layers.len(), m.sub.is_none()), (Some(vec![0.0]), 2, true));
    assert_eq!(report.unbound, ["z"]);
    let strict = ReadOptions::new().with_unbound(Unbound::Error);
    assert!(matches!(
        Loose::<TensorView>::read_with(&f, &strict).map_err(Error::into_kind),
        Err(ErrorKind::Model(ModelError::UnboundTensors { .. }))
    ));
}

#[test]
fn optional_sub_model_with_prefix() {
    let bytes = file(1, 1, None, &[("sub.norm", F32, &[2]), ("sub.proj", F32, &[2])]);
    let f = Gguf::from_slice(&bytes).unwrap();
    let m = Loose::<TensorView>::read(&f).unwrap();
    let sub = m.sub.as_ref().unwrap();
    assert_eq!((sub.norm.name, sub.proj.unwrap().name), ("sub.norm".into(), "sub.proj".into()));
    assert_eq!(m.to_vec().unwrap(), file_without_meta(&[("sub.norm", &[2]), ("sub.proj", &[2])]));
}

fn file_without_meta(tensors: &[(&str, &[u64])]) -> Vec<u8> {
    let mut w = GgufWriter::new(Vec::new());
    for (name, shape) in tensors {
        w.add_tensor(name, F32, shape).unwrap();
    }
    for (_, shape) in tensors {
        let n: u64 = shape.iter().product();
        w.write_tensor_data(&f32_bytes(&(0..n).map(|i| i as f32).collect::<Vec<_>>())).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn write_checks_constraints_and_counts() {
    let meta = Meta { arch: "toy".into(), embd: 4, vocab: 3, blocks: Some(1) };
    let t = |shape: &[u64]| Tensor::from_f32("t", shape, &vec![0.0; shape.iter().product::<u64>() as usize]).unwrap();
    let model = Model { meta: meta.clone(), embd: t(&[3, 4]), blocks: vec![], out: None };
    let e = model.to_vec().unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Model(ModelError::CountMismatch { template, expected: 1, found: 0, .. }) if template == "blk.{}"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "\"blk.{}\": 0 entries, but the count from the metadata is 1");

    let model = Model { meta: meta.clone(), embd: t(&[4, 3]), blocks: vec![], out: None };
    assert!(matches!(model.to_vec().map_err(Error::into_kind), Err(ErrorKind::Model(ModelError::WrongShape { .. }))));

    let q = t(&[3, 32]).quantize(GgmlType::Q8_0).unwrap();
    let model = Model {
        meta: Meta { blocks: Some(1), embd: 32, ..meta.clone() },
        embd: t(&[3, 32]),
        blocks: vec![Block { norm: q, proj: None }],
        out: None,
    };
    let e = model.to_vec().unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Model(ModelError::WrongDtype { name, found: GgmlType::Q8_0, .. }) if name == "blk.0.norm"),
        "{e:?}"
    );
}

#[test]
fn typed_storage_written_as_field_dtype_and_shape() {
    #[derive(GgufModel)]
    struct Half<T> {
        #[gguf(name = "w", dtype = "F16", shape = "[2, 3]")]
        w: T,
        #[gguf(name = "v", shape = "[_]")]
        v: T,
    }
    let m = Half { w: vec![0.5f32, 1.0, 1.5, 2.0, -2.0, 65504.0], v: vec![1.0f32, 2.0] };
    let bytes = m.to_vec().unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    let w = f.tensor("w").unwrap();
    assert_eq!((w.dtype, &*w.shape), (GgmlType::F16, &[2u64, 3][..]));
    // IEEE binary16 bit patterns of 0.5, 1, 1.5, 2, -2, 65504.
    let expect: Vec<u8> =
        [0x3800u16, 0x3c00, 0x3e00, 0x4000, 0xc000, 0x7bff].iter().flat_map(|b| b.to_le_bytes()).collect();
    assert_eq!(f.tensor_data(&w).unwrap(), expect.as_slice());
    let v = f.tensor("v").unwrap();
    assert_eq!((v.dtype, &*v.shape), (GgmlType::F32, &[2u64][..]));
    assert_eq!(Half::<Vec<f32>>::read(&f).unwrap().w, m.w);
}

#[test]
fn big_endian_views_written_little_endian() {
    let mut w = GgufWriter::with_options(Vec::new(), WriteOptions::new().with_endian(Endian::Big)).unwrap();
    w.add_tensor("a", F32, &[2]).unwrap();
    w.write_tensor_data(&[0x3f, 0x80, 0, 0, 0x40, 0, 0, 0]).unwrap(); // 1.0, 2.0 big-endian
    let be = w.finish().unwrap();
    let f = Gguf::from_slice(&be).unwrap();
    let m = Loose::<TensorView>::read(&f).unwrap();
    assert_eq!(m.a.unwrap().to_f32().unwrap(), [1.0, 2.0]);
    let le = m.to_vec().unwrap();
    let g = Gguf::from_slice(&le).unwrap();
    assert_eq!(g.endian(), Endian::Little);
    assert_eq!(g.tensor_data_by_name("a").unwrap(), &f32_bytes(&[1.0, 2.0])[..]);
}

#[test]
fn metadata_errors_are_serde_errors() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "toy").unwrap();
    w.add_kv("toy.embd", "four").unwrap();
    let bytes = w.finish().unwrap();
    let e = Model::<TensorView>::read(&Gguf::from_slice(&bytes).unwrap()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Metadata(_)) && e.key() == Some("toy.embd"), "{e:?}");
}

#[test]
fn metadata_only_source_is_an_error_not_a_panic() {
    let bytes = good();
    let f = Gguf::from_reader(std::io::Cursor::new(&bytes)).unwrap();
    assert!(matches!(Model::<TensorView>::read(&f).map_err(Error::into_kind), Err(ErrorKind::DataNotLoaded { .. })));
}

#[test]
fn borrowed_metadata_uses_the_struct_lifetime() {
    #[derive(Deserialize, Serialize)]
    struct Names<'a> {
        #[serde(borrow, rename = "general.architecture")]
        arch: &'a str,
    }
    #[derive(GgufModel)]
    #[gguf(unbound = "ignore")]
    struct Borrowing<'a> {
        #[gguf(metadata)]
        names: Names<'a>,
        #[gguf(name = "a")]
        a: TensorView<'a>,
    }
    let bytes = file(1, 1, None, &[("a", F32, &[1])]);
    let f = Gguf::from_slice(&bytes).unwrap();
    let m = Borrowing::read(&f).unwrap();
    assert_eq!((m.names.arch, m.a.name), ("toy", "a".into()));
}

#[test]
fn conversion_errors_name_the_tensor() {
    #[derive(GgufModel)]
    struct Iq<T> {
        #[gguf(name = "w", dtype = "IQ2_XXS", shape = "[256]")]
        w: T,
    }
    // ggml quantizes IQ2_XXS only with importance weights, which a derived model has none of.
    assert!(!gguf_serde::codec::can_quantize(GgmlType::IQ2_XXS));
    let e = Iq { w: vec![0.0f32; 256] }.to_vec().unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Codec(gguf_serde::codec::CodecError::ImportanceRequired(GgmlType::IQ2_XXS)))
            && e.tensor() == Some("w"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "tensor \"w\": quantizing to IQ2_XXS needs importance weights (an importance matrix), as in ggml"
    );
}

#[test]
fn hostile_count_is_refused_before_reading() {
    let bytes = file(4, 3, Some(u32::MAX), &[("embd.weight", F32, &[3, 4]), ("blk.0.norm", F32, &[4])]);
    let e = Model::<TensorView>::read(&Gguf::from_slice(&bytes).unwrap()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Model(ModelError::Constraint { name, .. }) if name == "blk.{}"), "{e:?}");
    assert_eq!(e.to_string(), "constraint of \"blk.{}\": count 4294967295 is more than the 2 tensors of the model");
}

#[test]
fn flattened_sub_model_has_no_prefix() {
    #[derive(GgufModel)]
    struct Head<T> {
        #[gguf(name = "out.weight")]
        out: T,
    }
    #[derive(GgufModel)]
    struct Flat<T> {
        #[gguf(name = "a")]
        a: T,
        #[gguf(flatten)]
        head: Head<T>,
    }
    let bytes = file_without_meta(&[("a", &[2]), ("out.weight", &[3])]);
    let f = Gguf::from_slice(&bytes).unwrap();
    let m = Flat::<TensorView>::read(&f).unwrap();
    assert_eq!((m.a.name, m.head.out.name), ("a".into(), "out.weight".into()));
    assert_eq!(m.to_vec().unwrap(), bytes);
}
