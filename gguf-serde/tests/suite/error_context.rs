//! What errors about things not read from a file say: constructors name the tensor they were
//! given (and say `(unnamed)` rather than `""` for none), and errors about values not yet
//! written cite the output offset where the value would have been written.

use gguf_serde::{to_vec, Error, F32Tensor, GgmlType, GgufWriter, Tensor, WriteError};
use serde::Serialize;

#[test]
fn constructors_name_their_tensor() {
    let e = Tensor::from_f32("blk.0.attn_q.weight", &[2, 3], &[1.0; 5]).unwrap_err();
    assert_eq!(e.tensor(), Some("blk.0.attn_q.weight"));
    assert_eq!(
        e.to_string(),
        "tensor \"blk.0.attn_q.weight\": got 20 bytes of data, expected 24 (from its dtype and shape)"
    );
    // Q4_0 blocks are 32 elements: a row of 33 is not whole blocks.
    let e = Tensor::new("w", GgmlType::Q4_0, &[33], Vec::new()).unwrap_err();
    assert!(e.to_string().starts_with("invalid tensor \"w\": shape [33] is not whole Q4_0 blocks"), "{e}");
    let e = F32Tensor::new("norm", &[4], vec![0.0; 3]).unwrap_err();
    assert_eq!(e.to_string(), "invalid tensor \"norm\": shape [4] does not hold the 3 elements given");
    // Counts of one in the singular.
    let e = Tensor::new("b", GgmlType::I8, &[2], vec![0]).unwrap_err();
    assert_eq!(e.to_string(), "tensor \"b\": got 1 byte of data, expected 2 (from its dtype and shape)");
    let e = F32Tensor::new("norm", &[4], vec![0.0]).unwrap_err();
    assert_eq!(e.to_string(), "invalid tensor \"norm\": shape [4] does not hold the 1 element given");
}

#[test]
fn a_tensor_given_no_name_is_not_called_by_one() {
    let e = Tensor::from_f32("", &[2], &[1.0]).unwrap_err();
    assert_eq!(e.tensor(), None);
    assert_eq!(e.to_string(), "tensor (unnamed): got 4 bytes of data, expected 8 (from its dtype and shape)");
    let e = F32Tensor::new("", &[1, 1, 1, 1, 1], vec![0.0]).unwrap_err();
    assert_eq!(e.to_string(), "invalid tensor (unnamed): 5 dimensions, at most 4");
    assert!(matches!(e.as_write(), Some(WriteError::InvalidTensor { name, .. }) if name.is_empty()));
}

#[test]
fn a_value_the_serializer_cannot_store_cites_its_output_offset() {
    #[derive(Serialize)]
    struct S {
        a: u32,
        b: String,
        bad: (),
    }
    // Header 24; `a`: key 8 + 1, type 4, u32 4 = 41; `b`: key 8 + 1, type 4, string 8 + 3 = 65;
    // `bad`: key 8 + 3, type 4: its value would be at 80.
    let e = to_vec(&S { a: 1, b: "xyz".into(), bad: () }).unwrap_err();
    assert_eq!(e.key(), Some("bad"), "{e}");
    assert_eq!(e.offset(), Some(80), "{e}");
    assert!(e.to_string().ends_with("at key \"bad\" (offset 80)"), "{e}");
    // A unit struct has no value either (serde's data model: a named `()`).
    #[derive(Serialize)]
    struct Marker;
    #[derive(Serialize)]
    struct U {
        a: u32,
        b: String,
        bad: Marker,
    }
    let e = to_vec(&U { a: 1, b: "xyz".into(), bad: Marker }).unwrap_err();
    assert_eq!((e.key(), e.offset()), (Some("bad"), Some(80)), "{e}");
    assert!(e.to_string().starts_with("unit struct Marker has no GGUF value"), "{e}");

    // An element of the wrong type: the offset of its array's value (key `m` 8 + 1, type 4).
    #[derive(Serialize)]
    #[serde(untagged)]
    enum E {
        N(u32),
        S(String),
    }
    #[derive(Serialize)]
    struct M {
        m: Vec<E>,
    }
    let e = to_vec(&M { m: vec![E::N(1), E::S("x".into())] }).unwrap_err();
    assert_eq!(e.key(), Some("m"), "{e}");
    assert_eq!(e.offset(), Some(24 + 13), "{e}");

    // A key with `{arch}` is measured as it is written, with the value of general.architecture
    // (not of another string before it). Header 24; general.name: key 8 + 12, type 4, string
    // 8 + 2 = 58; general.architecture: key 8 + 20, type 4, string 8 + 5 = 103;
    // llama.context_length: key 8 + 20, type 4, u32 4 = 139; `bad`: key 8 + 3, type 4: 154.
    #[derive(Serialize)]
    struct A {
        #[serde(rename = "general.name")]
        name: String,
        #[serde(rename = "general.architecture")]
        arch: String,
        #[serde(rename = "{arch}.context_length")]
        ctx: u32,
        bad: (),
    }
    let e = to_vec(&A { name: "ab".into(), arch: "llama".into(), ctx: 4096, bad: () }).unwrap_err();
    assert_eq!(e.key(), Some("bad"), "{e}");
    assert_eq!(e.offset(), Some(154), "{e}");

    // Through a writer that already holds a pair (`x`: 8 + 1 + 4 + 1 = 14 bytes from 24).
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("x", 7u8).unwrap();
    let e = w.add_serialize(&S { a: 1, b: "xyz".into(), bad: () }).unwrap_err();
    assert_eq!(e.offset(), Some(80 + 14), "{e}");
}

#[test]
fn an_error_of_a_serialize_impl_names_the_field_it_was_in() {
    // A `Serialize` impl of the user's fails with `S::Error::custom` (serde's data model: the
    // impl does not know its key): the error names the field holding it, at the offset where its
    // value would have been written.
    struct Failing;
    impl Serialize for Failing {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("refused by its impl"))
        }
    }
    #[derive(Serialize)]
    struct G {
        bad: Failing,
    }
    #[derive(Serialize)]
    struct S {
        a: u32,
        bad: Failing,
    }
    #[derive(Serialize)]
    struct N {
        a: u32,
        g: G,
    }
    // Header 24; `a`: key 8 + 1, type 4, u32 4 = 41; `bad`: key 8 + 3, type 4: 56.
    let e = to_vec(&S { a: 1, bad: Failing }).unwrap_err();
    assert_eq!((e.key(), e.offset()), (Some("bad"), Some(56)), "{e}");
    assert_eq!(e.to_string(), "refused by its impl at key \"bad\" (offset 56)");
    // In a nested struct: the key `g.bad` (8 + 5, type 4): 58.
    let e = to_vec(&N { a: 1, g: G { bad: Failing } }).unwrap_err();
    assert_eq!((e.key(), e.offset()), (Some("g.bad"), Some(58)), "{e}");
}

#[test]
fn a_key_the_writer_refuses_cites_its_pair_offset() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.name", "n").unwrap(); // 8 + 12 + 4 + 8 + 1 = 33 bytes from 24
    let e: Error = w.add_kv("general.name", "again").unwrap_err();
    assert!(matches!(e.as_write(), Some(WriteError::InvalidKey { .. })), "{e:?}");
    assert_eq!(e.offset(), Some(57), "{e}");
    // A key with an empty segment, from the serializer: the pair that would hold it, after `a`.
    #[derive(Serialize)]
    struct K {
        a: u8,
        #[serde(rename = "x..y")]
        b: u8,
    }
    let e = to_vec(&K { a: 1, b: 2 }).unwrap_err();
    assert_eq!(e.key(), Some("x..y"), "{e}");
    // `a`: 8 + 1 + 4 + 1 = 14 bytes from 24; the refused pair would start there.
    assert_eq!(e.offset(), Some(24 + 14), "{e}");
}
