//! `#[derive(GgufModel)]` writing and storages: constraints checked
//! against the metadata written, sub-models that see the model's metadata, tensor order, typed
//! storages that keep their shape, `skip`, `crate`, read-only storages, zero-copy typed views,
//! and errors that name the tensor. Files are made with the container writer; expected values
//! are worked out by hand (IEEE bit patterns, the order the file stores).

use std::borrow::Cow;

use gguf_serde::model::{FieldSpec, TensorOrder, WriteModelOptions};
use gguf_serde::{
    Endian, ErrorKind, F32Tensor, GgmlType, Gguf, GgufModel, GgufWriter, MetadataError, Mmap, ModelError, Shape,
    Tensor, TensorStorage, TensorView, WriteError,
};
use serde::{Deserialize, Serialize};

const F32: GgmlType = GgmlType::F32;

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn zeros(name: &str, shape: &[u64]) -> Tensor {
    Tensor::from_f32(name, shape, &vec![0.0; shape.iter().product::<u64>() as usize]).unwrap()
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Top {
    #[serde(rename = "general.architecture")]
    arch: String,
    #[serde(rename = "{arch}.embedding_length")]
    embd: u32,
    #[serde(rename = "{arch}.feed_forward_length")]
    ff: u32,
    #[serde(rename = "{arch}.block_count")]
    blocks: u32,
}

/// What a block's shapes need: the same keys as two of `Top`'s.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Dims {
    #[serde(rename = "{arch}.embedding_length")]
    embd: u32,
    #[serde(rename = "{arch}.feed_forward_length")]
    ff: u32,
}

/// A block with its own copy of the hyper-parameters (a `#[gguf(metadata)]` field).
#[derive(GgufModel, Debug)]
struct CopyBlock<T> {
    #[gguf(metadata)]
    dims: Dims,
    #[gguf(name = "ffn_up.weight", shape = "[ff, embd]")]
    up: T,
}

#[derive(GgufModel, Debug)]
struct CopyModel<T> {
    #[gguf(metadata)]
    meta: Top,
    #[gguf(name = "blk.{}", count = "blocks")]
    blocks: Vec<CopyBlock<T>>,
}

/// A block that sees the model's metadata (`#[gguf(metadata = "Dims")]`): no field to fill.
#[derive(GgufModel, Debug)]
#[gguf(metadata = "Dims")]
struct SeeBlock<T> {
    #[gguf(name = "ffn_up.weight", shape = "[ff, embd]")]
    up: T,
}

#[derive(GgufModel, Debug)]
struct SeeModel<T> {
    #[gguf(metadata)]
    meta: Top,
    #[gguf(name = "blk.{}", count = "blocks")]
    blocks: Vec<SeeBlock<T>>,
}

fn top(ff: u32) -> Top {
    Top { arch: "toy".into(), embd: 4, ff, blocks: 1 }
}

#[test]
fn a_sub_model_copy_that_disagrees_with_the_written_metadata_is_refused() {
    // The case: the top-level feed_forward_length changed to 1000, the block's copy still
    // says 6 and its tensor is [6, 4]. Before, to_vec() wrote a file the struct cannot read.
    let model = CopyModel {
        meta: top(1000),
        blocks: vec![CopyBlock { dims: Dims { embd: 4, ff: 6 }, up: zeros("blk.0.ffn_up.weight", &[6, 4]) }],
    };
    let e = model.to_vec().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Metadata(MetadataError::Message { .. })), "{e:?}");
    assert_eq!((e.key(), e.offset()), (Some("toy.feed_forward_length"), None));
    assert_eq!(
        e.to_string(),
        "sub-model \"blk.0\" has U32(6) in its metadata field `CopyBlock.dims`, but the metadata written has \
         U32(1000) at key \"toy.feed_forward_length\""
    );
    // Agreeing copies write, and the file reads back with the same struct.
    let model = CopyModel {
        meta: top(6),
        blocks: vec![CopyBlock { dims: Dims { embd: 4, ff: 6 }, up: zeros("blk.0.ffn_up.weight", &[6, 4]) }],
    };
    let bytes = model.to_vec().unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    let back = CopyModel::<TensorView>::read(&f).unwrap();
    assert_eq!(back.blocks[0].dims, Dims { embd: 4, ff: 6 });
}

#[test]
fn a_sub_model_sees_the_metadata_written() {
    // Built in memory without copying hyper-parameters: the shape [ff, embd] is checked against
    // the metadata the top level writes.
    let model = SeeModel { meta: top(1000), blocks: vec![SeeBlock { up: zeros("up", &[6, 4]) }] };
    let e = model.to_vec().unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Model(ModelError::WrongShape { name, expected, found, .. })
            if name == "blk.0.ffn_up.weight" && expected == &[Some(1000), Some(4)] && found == &[6, 4]),
        "{e:?}"
    );
    let model = SeeModel { meta: top(6), blocks: vec![SeeBlock { up: zeros("up", &[6, 4]) }] };
    let bytes = model.to_vec().unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    assert_eq!(f.get("toy.feed_forward_length").and_then(|v| v.as_u64()), Some(6));
    let back = SeeModel::<TensorView>::read(&f).unwrap();
    assert_eq!(&*back.blocks[0].up.shape, &[6, 4]);
}

#[test]
fn a_sub_model_metadata_the_model_does_not_write_cites_the_key_and_no_offset() {
    #[derive(Deserialize)]
    struct NeedsHeads {
        #[serde(rename = "{arch}.attention.head_count")]
        heads: u32,
    }
    #[derive(GgufModel)]
    #[gguf(metadata = "NeedsHeads")]
    struct Blk<T> {
        #[gguf(name = "q", shape = "[heads]")]
        q: T,
    }
    #[derive(GgufModel)]
    struct M<T> {
        #[gguf(metadata)]
        meta: Top,
        #[gguf(name = "blk.{}", count = "blocks")]
        blocks: Vec<Blk<T>>,
    }
    let e = M { meta: top(6), blocks: vec![Blk { q: zeros("q", &[2]) }] }.to_vec().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Metadata(_)), "{e:?}");
    assert_eq!(e.key(), Some("toy.attention.head_count"));
    // Not yet written: no file offset to cite.
    assert_eq!(e.offset(), None);
}

/// A file whose blocks are stored `blk.0, blk.1, blk.10, blk.2, …` (lexicographic, as some
/// llama.cpp conversions store them), written with the container writer.
fn lexicographic(n: u32) -> (Vec<u8>, Vec<String>) {
    let mut names: Vec<String> = (0..n).map(|i| format!("blk.{i}.w")).collect();
    names.sort();
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "toy").unwrap();
    w.add_kv("toy.block_count", n).unwrap();
    for name in &names {
        w.add_tensor(name, F32, &[2]).unwrap();
    }
    for (i, _) in names.iter().enumerate() {
        w.write_tensor_data(&f32_bytes(&[i as f32, 0.5])).unwrap();
    }
    (w.finish().unwrap(), names)
}

#[derive(Serialize, Deserialize)]
struct Count {
    #[serde(rename = "general.architecture")]
    arch: String,
    #[serde(rename = "{arch}.block_count")]
    blocks: u32,
}

#[derive(GgufModel)]
struct Numbered<T> {
    #[gguf(metadata)]
    meta: Count,
    #[gguf(name = "blk.{}.w", count = "blocks")]
    blocks: Vec<T>,
}

#[test]
fn a_model_read_from_a_file_writes_back_in_the_file_order() {
    let (bytes, names) = lexicographic(12);
    assert_eq!(&names[..4], ["blk.0.w", "blk.1.w", "blk.10.w", "blk.11.w"]);
    let f = Gguf::from_slice(&bytes).unwrap();
    let views = Numbered::<TensorView>::read(&f).unwrap();
    assert_eq!(views.blocks[2].position, Some(4), "blk.2 is the fifth tensor stored");
    assert_eq!(views.to_vec().unwrap(), bytes);
    let mut owned = Numbered::<Tensor>::read(&f).unwrap();
    assert_eq!(owned.to_vec().unwrap(), bytes);
    // A requantized tensor keeps its place.
    owned.blocks[3] = owned.blocks[3].quantize(GgmlType::F16).unwrap();
    let requantized = owned.to_vec().unwrap();
    let g = Gguf::from_slice(&requantized).unwrap();
    assert_eq!(g.tensors().map(|t| t.name.to_str().unwrap()).collect::<Vec<_>>(), names);
    assert_eq!(g.tensor("blk.3.w").unwrap().dtype, GgmlType::F16);
    let typed = Numbered::<F32Tensor>::read(&f).unwrap();
    assert_eq!(typed.to_vec().unwrap(), bytes);

    // Field order on request: numeric.
    let mut w = GgufWriter::new(Vec::new());
    views.write_with(&mut w, &WriteModelOptions::new().with_order(TensorOrder::Field)).unwrap();
    let field = w.finish().unwrap();
    let g = Gguf::from_slice(&field).unwrap();
    let order: Vec<&str> = g.tensors().map(|t| t.name.to_str().unwrap()).collect();
    let numeric: Vec<String> = (0..12).map(|i| format!("blk.{i}.w")).collect();
    assert_eq!(order, numeric);
    assert_eq!(g.tensor_data_by_name("blk.10.w").unwrap(), f32_bytes(&[2.0, 0.5]).as_slice());

    // A model built in memory has no file order: field order.
    let built = Numbered {
        meta: Count { arch: "toy".into(), blocks: 3 },
        blocks: (0..3).map(|i| zeros(&format!("b{i}"), &[2])).collect::<Vec<_>>(),
    };
    let b = built.to_vec().unwrap();
    let order: Vec<String> = Gguf::from_slice(&b).unwrap().tensors().map(|t| t.name.to_string()).collect();
    assert_eq!(order, ["blk.0.w", "blk.1.w", "blk.2.w"]);
}

#[derive(GgufModel)]
#[gguf(unbound = "ignore")]
struct One<T> {
    #[gguf(name = "w")]
    w: T,
}

fn one_tensor(shape: &[u64]) -> Vec<u8> {
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("w", F32, shape).unwrap();
    let n: u64 = shape.iter().product();
    w.write_tensor_data(&f32_bytes(&(0..n).map(|i| i as f32).collect::<Vec<_>>())).unwrap();
    w.finish().unwrap()
}

#[test]
fn a_vec_without_a_shape_is_not_flattened_and_a_typed_tensor_keeps_its_shape() {
    let bytes = one_tensor(&[3, 4]);
    let f = Gguf::from_slice(&bytes).unwrap();
    // Before, this wrote w as [12].
    let v = One::<Vec<f32>>::read(&f).unwrap();
    let e = v.to_vec().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::InvalidTensor { name, .. }) if name == "w"), "{e:?}");
    assert!(e.to_string().contains("holds no shape"), "{e}");

    let t = One::<F32Tensor>::read(&f).unwrap();
    assert_eq!((&*t.w.shape, t.w.data.len(), t.w.data[5]), (&[3u64, 4][..], 12, 5.0));
    assert_eq!(t.to_vec().unwrap(), bytes);
    let built = One { w: F32Tensor::new("w", &[3, 4], (0..12).map(|i| i as f32).collect()).unwrap() };
    assert_eq!(built.to_vec().unwrap(), bytes);

    // A field shape with one unknown dimension gives a Vec its shape.
    #[derive(GgufModel)]
    struct Rows<T> {
        #[gguf(name = "w", shape = "[_, 4]")]
        w: T,
    }
    assert_eq!(Rows { w: (0..12).map(|i| i as f32).collect::<Vec<f32>>() }.to_vec().unwrap(), bytes);
    let e = Rows { w: vec![0.0f32; 10] }.to_vec().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::InvalidTensor { name, .. }) if name == "w"), "{e:?}");
}

#[test]
fn dtype_names_are_case_insensitive() {
    #[derive(GgufModel)]
    #[gguf(unbound = "ignore")]
    struct Lower<T> {
        #[gguf(name = "w", dtype = "q8_0 | bf16")]
        w: T,
        #[gguf(name = "x", dtype = "Any")]
        x: Option<T>,
    }
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("w", GgmlType::BF16, &[2]).unwrap();
    w.write_tensor_data(&[0x80, 0x3f, 0x00, 0x40]).unwrap(); // bf16 1.0, 2.0
    let bytes = w.finish().unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    let m = Lower::<TensorView>::read(&f).unwrap();
    assert_eq!(m.w.dtype, GgmlType::BF16);
    let e = Lower::<TensorView>::read(&Gguf::from_slice(&one_tensor(&[2])).unwrap()).map(|_| ()).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Model(ModelError::WrongDtype { expected, found: GgmlType::F32, .. })
            if expected == &[GgmlType::Q8_0, GgmlType::BF16]),
        "{e:?}"
    );
}

#[derive(Default, Debug, PartialEq)]
struct Cache {
    hits: u32,
}

#[test]
fn skipped_fields_are_default_on_read_and_not_written() {
    #[derive(GgufModel)]
    struct WithCache<T> {
        #[gguf(name = "w")]
        w: T,
        #[gguf(skip)]
        cache: Cache,
        #[gguf(skip)]
        scratch: Vec<f32>,
    }
    let bytes = one_tensor(&[2]);
    let f = Gguf::from_slice(&bytes).unwrap();
    let m = WithCache::<TensorView>::read(&f).unwrap();
    assert_eq!((m.cache.hits, m.scratch.len()), (0, 0));
    let m = WithCache { w: m.w, cache: Cache { hits: 7 }, scratch: vec![1.0] };
    assert_eq!(m.to_vec().unwrap(), bytes);
}

mod reexported {
    pub use gguf_serde as gs;
}

#[test]
fn the_crate_path_can_be_given() {
    #[derive(GgufModel)]
    #[gguf(crate = "reexported::gs", unbound = "ignore")]
    struct ViaReexport<T> {
        #[gguf(name = "w", dtype = "f32")]
        w: T,
    }
    let bytes = one_tensor(&[2]);
    let f = Gguf::from_slice(&bytes).unwrap();
    let m = ViaReexport::<TensorView>::read(&f).unwrap();
    assert_eq!(m.to_vec().unwrap(), bytes);
}

/// A read-only storage: only `from_view`.
struct Summary {
    n: u64,
}

impl<'a> TensorStorage<'a> for Summary {
    fn from_view(view: TensorView<'a>) -> gguf_serde::Result<Self> {
        Ok(Summary { n: view.n_elements() })
    }
}

#[test]
fn a_read_only_storage_reads_and_refuses_to_write() {
    let bytes = one_tensor(&[3, 4]);
    let m = One::<Summary>::read(&Gguf::from_slice(&bytes).unwrap()).unwrap();
    assert_eq!(m.w.n, 12);
    let e = m.to_vec().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::InvalidTensor { name, .. }) if name == "w"), "{e:?}");
    assert!(e.to_string().contains("read-only"), "{e}");
}

/// A storage that gives a layout but relies on the default `stored_bytes`: the error names the
/// tensor.
struct LayoutOnly;

impl<'a> TensorStorage<'a> for LayoutOnly {
    fn from_view(_: TensorView<'a>) -> gguf_serde::Result<Self> {
        Ok(LayoutOnly)
    }
    fn layout(&self, _: &FieldSpec<'_>) -> gguf_serde::Result<(GgmlType, Shape)> {
        Ok((F32, Shape::from_canonical(&[1]).unwrap()))
    }
}

#[test]
fn the_default_stored_bytes_error_names_the_tensor() {
    let e = One { w: LayoutOnly }.to_vec().unwrap_err();
    assert_eq!(e.tensor(), Some("w"));
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::InvalidTensor { name, .. }) if name == "w"), "{e:?}");
}

#[test]
fn typed_views_borrow_aligned_little_endian_data() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("f", F32, &[2]).unwrap();
    w.add_tensor("h", GgmlType::F16, &[3]).unwrap();
    w.add_tensor("b", GgmlType::BF16, &[2]).unwrap();
    w.write_tensor_data(&f32_bytes(&[1.5, -2.0])).unwrap();
    // IEEE binary16: 1.0 = 0x3c00, -2.0 = 0xc000, 65504 = 0x7bff.
    w.write_tensor_data(&[0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b]).unwrap();
    // bfloat16: the top half of binary32, 1.0 = 0x3f80, 0.5 = 0x3f00.
    w.write_tensor_data(&[0x80, 0x3f, 0x00, 0x3f]).unwrap();
    let bytes = w.finish().unwrap();

    // A file on disk through its memory mapping, named through the re-exported `Mmap`.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.gguf");
    std::fs::write(&path, &bytes).unwrap();
    let f: Gguf<Mmap> = Gguf::open(&path).unwrap();
    #[derive(GgufModel)]
    struct Three<T> {
        #[gguf(name = "f")]
        f: T,
        #[gguf(name = "h")]
        h: T,
        #[gguf(name = "b")]
        b: T,
    }
    let m = Three::<TensorView>::read(&f).unwrap();
    let fs: &[f32] = m.f.as_f32().unwrap();
    assert_eq!(fs, [1.5, -2.0]);
    assert_eq!(fs.as_ptr().cast::<u8>(), m.f.bytes.as_ptr(), "borrowed, not copied");
    let hs: Vec<u16> = m.h.as_f16().unwrap().iter().map(|x| x.to_bits()).collect();
    assert_eq!(hs, [0x3c00, 0xc000, 0x7bff]);
    let bs: Vec<u16> = m.b.as_bf16().unwrap().iter().map(|x| x.to_bits()).collect();
    assert_eq!(bs, [0x3f80, 0x3f00]);

    // The wrong type, another byte order, misaligned data: typed errors naming the tensor.
    let e = m.h.as_f32().unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Model(ModelError::WrongDtype { name, found: GgmlType::F16, .. }) if name == "h"),
        "{e:?}"
    );
    let be = TensorView { endian: Endian::Big, ..m.f };
    assert!(
        matches!(be.as_f32().unwrap_err().kind(), ErrorKind::Model(ModelError::Constraint { name, .. }) if name == "f")
    );
    let mut shifted = vec![0u8; bytes.len() + 1];
    shifted[1..].copy_from_slice(&bytes);
    let g = Gguf::from_slice(&shifted[1..]).unwrap();
    let odd = Three::<TensorView>::read(&g).unwrap();
    // The buffer is allocated aligned (to 8 at least) and the data is at a multiple of 32 in
    // the file: one byte further it is misaligned.
    assert_eq!(odd.f.bytes.as_ptr() as usize & 3, 1);
    let e = odd.f.as_f32().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Model(ModelError::Constraint { name, .. }) if name == "f"), "{e:?}");
    assert!(e.to_string().contains("not aligned"), "{e}");
}

#[test]
fn constructor_errors_name_the_tensor() {
    let e = Tensor::from_f32("blk.0.attn_norm.weight", &[2], &[1.0; 3]).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Write(WriteError::SizeMismatch { name, expected: 8, found: 12, .. })
            if name == "blk.0.attn_norm.weight"),
        "{e:?}"
    );
    assert_eq!(e.tensor(), Some("blk.0.attn_norm.weight"));
    assert_eq!(
        e.to_string(),
        "tensor \"blk.0.attn_norm.weight\": got 12 bytes of data, expected 8 (from its dtype and shape)"
    );
    let e = Tensor::new("w", GgmlType::Q8_0, &[2, 31], vec![]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::InvalidTensor { name, .. }) if name == "w"), "{e:?}");
    let e = F32Tensor::new("e", &[2, 2], vec![0.0; 3]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::InvalidTensor { name, .. }) if name == "e"), "{e:?}");
    // Conversions name the tensor too: 31 is not whole Q8_0 blocks of 32.
    let e = zeros("odd", &[2, 31]).quantize(GgmlType::Q8_0).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::InvalidTensor { name, .. }) if name == "odd"), "{e:?}");
}

#[test]
fn a_storage_without_a_position_is_written_in_field_order() {
    // A storage of its own that borrows its bytes and knows no position: field order.
    struct Borrowed<'b>(&'b [u8]);
    impl<'a> TensorStorage<'a> for Borrowed<'a> {
        fn from_view(v: TensorView<'a>) -> gguf_serde::Result<Self> {
            Ok(Borrowed(v.bytes))
        }
        fn layout(&self, _: &FieldSpec<'_>) -> gguf_serde::Result<(GgmlType, Shape)> {
            Ok((F32, Shape::from_canonical(&[2]).unwrap()))
        }
        fn stored_bytes(&self, _: GgmlType, _: Endian) -> gguf_serde::Result<Cow<'_, [u8]>> {
            Ok(Cow::Borrowed(self.0))
        }
    }
    let bytes = one_tensor(&[2]);
    let f = Gguf::from_slice(&bytes).unwrap();
    assert_eq!(One::<Borrowed>::read(&f).unwrap().to_vec().unwrap(), bytes);
}
