//! BOOL bytes other than 0 and 1 (`common::odd_bools()`: `test.flag` stored as 0x02,
//! `test.flags` as `[0x01, 0x00, 0xff, 0x80]`): the spec forbids them, ggml's `gguf.cpp` reads any
//! byte other than 0 as true (`gguf_reader::read(bool &)`: `dst = tmp != 0`), and so does every
//! reader of this crate; its writer writes them back as 1, as ggml's writer does
//! (`gguf_writer::write(const bool &)`: `val ? 1 : 0`). The oracle here is that rule applied to
//! the bytes the file was built from; ggml's own reading of the file and of what the commands
//! write is compared in `gguf-cli/tests/cli/odd_bools.rs`, `llama-gguf-split`'s copy of it in
//! `tests/tests/interop/split_llama.rs`.

use std::collections::BTreeMap;

use gguf_serde::ops::edit::{apply, Edit};
use gguf_serde::{Array, Endian, Gguf, GgufModel, GgufWriter, TensorView, Value, ValueRef, WriteOptions};
use serde::{Deserialize, Serialize};

use crate::common::{check_every_source, odd_bools, ODD_BOOL_ARRAY_AT, ODD_BOOL_SCALAR_AT, READ_AHEADS};

/// [`odd_bools`] with each stored byte other than 0 and 1 replaced by 1 (ggml's writer's bytes).
fn as_ggml_writes_it() -> Vec<u8> {
    let mut b = odd_bools();
    for at in [ODD_BOOL_SCALAR_AT, ODD_BOOL_ARRAY_AT, ODD_BOOL_ARRAY_AT + 1] {
        assert!(b[at as usize] > 1, "byte {at} of the file");
        b[at as usize] = 1;
    }
    b
}

const FLAGS: [bool; 4] = [true, false, true, true];

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Test {
    flag: bool,
    flags: Vec<bool>,
    off: bool,
    on: bool,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Meta {
    test: Test,
}

fn want() -> Meta {
    Meta { test: Test { flag: true, flags: FLAGS.to_vec(), off: false, on: true } }
}

#[test]
fn every_reader_takes_them_as_ggml_does() {
    let bytes = odd_bools();
    check_every_source(&bytes, &READ_AHEADS);
    let f = Gguf::from_slice(&bytes).unwrap();
    let r = Gguf::from_reader(std::io::Cursor::new(&bytes)).unwrap();
    assert_eq!(f.metadata().collect::<Vec<_>>(), r.metadata().collect::<Vec<_>>());
    assert_eq!(f.get("test.flag"), Some(ValueRef::Bool(true)));
    let flags = f.get("test.flags").and_then(|v| v.as_array()).unwrap();
    assert_eq!(flags.iter().collect::<Vec<_>>(), FLAGS.map(ValueRef::Bool));
    assert_eq!(flags.raw_bytes(), [0x01, 0x00, 0xff, 0x80], "the stored bytes");
    assert_eq!(flags.to_owned_array(), Array::Bool(FLAGS.to_vec()));
    assert_eq!((f.get("test.off"), f.get("test.on")), (Some(ValueRef::Bool(false)), Some(ValueRef::Bool(true))));
    // Where they are: the first of each key, counted.
    let odd: Vec<_> = f
        .metadata()
        .filter_map(|kv| kv.odd_bool_bytes().map(|o| (kv.key.to_string(), o.count, o.first, o.offset)))
        .collect();
    assert_eq!(
        odd,
        [("test.flag".to_owned(), 1, 0x02, ODD_BOOL_SCALAR_AT), ("test.flags".to_owned(), 2, 0xff, ODD_BOOL_ARRAY_AT)]
    );

    // serde, borrowed and from a plain `Read`, and into `Value`s.
    assert_eq!(gguf_serde::from_slice::<Meta>(&bytes).unwrap(), want());
    assert_eq!(gguf_serde::from_reader::<Meta, _>(&bytes[..]).unwrap(), want());
    let map: BTreeMap<String, Value> = gguf_serde::from_slice(&bytes).unwrap();
    assert_eq!(map["test.flag"], Value::Bool(true));
    assert_eq!(map["test.flags"], Value::Array(Array::Bool(FLAGS.to_vec())));

    // The derive reads its metadata through serde.
    #[derive(GgufModel)]
    struct Model<'a> {
        #[gguf(metadata)]
        meta: Meta,
        #[gguf(name = "a")]
        a: TensorView<'a>,
        #[gguf(name = "b")]
        b: TensorView<'a>,
    }
    let m = Model::read(&f).unwrap();
    assert_eq!(m.meta, want());
    assert_eq!((m.a.bytes.len(), m.b.bytes.len()), (16, 16));
}

#[test]
fn the_writer_writes_them_as_ggml_s_writer_does() {
    let bytes = odd_bools();
    let f = Gguf::from_slice(&bytes).unwrap();
    // Copied pair by pair (borrowed values): ggml's bytes, everything else as it was.
    assert!(crate::roundtrip_props::rewrite(&bytes, Endian::Little) == as_ggml_writes_it());
    // An edit (here none) rewrites the file the same way.
    let out =
        apply(&f, &[] as &[Edit], GgufWriter::with_options(Vec::new(), WriteOptions::like(&f)).unwrap(), |mut w, _| {
            for t in f.tensors() {
                w.write_tensor_data(f.tensor_data(&t).unwrap())?;
            }
            w.finish()
        })
        .unwrap();
    assert!(out == as_ggml_writes_it());
    let g = Gguf::from_slice(&out).unwrap();
    assert!(g.metadata().all(|kv| kv.odd_bool_bytes().is_none()));
}
