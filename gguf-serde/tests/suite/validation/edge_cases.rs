//! Valid edge cases: no tensors, zero dims, alignments, both byte orders, version 2.

use super::*;

#[test]
fn zero_tensors() {
    let mut b = B::le();
    b.header(3, 0, 1).kv("a", ty::U32).u32(5);
    let g = parse_ok(&b.buf);
    assert_eq!((g.kv_count(), g.tensor_count(), g.get("a")), (1, 0, Some(ValueRef::U32(5))));
    assert_eq!(g.tensor_infos_end(), 41);
    // With ggml's padding after the (empty) tensor infos too.
    b.pad(32);
    assert_eq!(parse_ok(&b.buf).tensor_count(), 0);
}

#[test]
fn a_tensor_info_cut_short_names_its_tensor() {
    // Name "t" at 24 (8-byte length + 1 byte), n_dims = 1 at 33, ne[0] at 37, the type id at 45:
    // 3 of its 4 bytes are there (24 bytes after the header, enough for the tensor count).
    let mut b = B::le();
    b.header(3, 1, 0).str("t").u32(1).u64(4).raw(&[0; 3]);
    let e = parse_err(&b.buf);
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Format(FormatError::Truncated { item: Item::Dims, owner: Some(t), offset: 45, needed: 4, available: 3, .. })
                if t == "t"
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        r#"file truncated: tensor info field (tensor "t") at offset 45 needs 4 bytes, only 3 remain"#
    );
    // The owner of a tensor info field is a tensor, not a key.
    assert_eq!((e.offset(), e.key(), e.tensor()), (Some(45), None, Some("t")));
}

#[test]
fn header_only_file() {
    for version in [2, 3] {
        let mut b = B::le();
        b.header(version, 0, 0);
        let g = parse_ok(&b.buf);
        assert_eq!((g.version(), g.endian(), g.kv_count(), g.tensor_count()), (version, Endian::Little, 0, 0));
        assert_eq!((g.alignment(), g.tensor_infos_end(), g.file_len()), (32, 24, 24));
    }
}

#[test]
fn dimension_of_zero() {
    // An empty tensor takes no bytes, so it may share an offset with a real one.
    let mut b = B::le();
    b.header(3, 2, 0).tensor("z", &[0, 4], gt::F32, 0).tensor("w", &[2], gt::F32, 0).pad(32).data(8, 5);
    let g = parse_ok(&b.buf);
    let z = g.tensor("z").unwrap();
    // Infos end at 24 + 41 + 33 = 98; data at 128.
    assert_eq!((&*z.shape, z.nbytes, z.n_elements, z.data_offset), (&[4, 0][..], 0, 0, 128));
    assert_eq!(g.tensor_data(&z).unwrap(), b"");
    assert_eq!(g.tensor_data_by_name("w").unwrap(), &b.buf[128..136]);
}

#[test]
fn alignment_one() {
    let mut b = B::le();
    b.header(3, 2, 1).kv("general.alignment", ty::U32).u32(1);
    b.tensor("a", &[3], GgmlType::I8.id(), 0).tensor("b", &[1], gt::F32, 3);
    let infos_end = b.pos();
    b.raw(&[1, 2, 3]).f32(1.5);
    let g = parse_ok(&b.buf);
    assert_eq!((g.alignment(), g.data_offset()), (1, infos_end));
    assert_eq!(g.tensor_data_by_name("a").unwrap(), [1, 2, 3]);
    assert_eq!(g.tensor_data_by_name("b").unwrap(), 1.5f32.to_le_bytes());
    assert_eq!(g.tensor("b").unwrap().data_offset, infos_end + 3);
}

#[test]
fn alignment_sixty_four() {
    let mut b = B::le();
    b.header(3, 2, 1).kv("general.alignment", ty::U32).u32(64);
    b.tensor("a", &[4], gt::F32, 0).tensor("b", &[2], gt::F16, 64);
    let infos_end = b.pos();
    b.pad(64);
    let data = b.pos();
    b.data(16, 1).pad(64).data(4, 2);
    let g = parse_ok(&b.buf);
    assert_eq!((g.alignment(), g.tensor_infos_end(), g.data_offset()), (64, infos_end, data));
    assert_eq!(data % 64, 0);
    assert_eq!(g.tensor("b").unwrap().data_offset, data + 64);
    assert_eq!(g.tensor_data_by_name("b").unwrap(), &b.buf[data as usize + 64..]);
}

#[test]
fn no_padding_after_the_last_tensor_and_trailing_bytes() {
    let s = sample(false);
    let g = parse_ok(&s.bytes[..s.data_end as usize]);
    assert_eq!(g.file_len(), s.data_end);
    assert_eq!(g.tensor_data_by_name("c").unwrap().len(), 6);

    let mut long = s.bytes.clone();
    long.extend_from_slice(&[0xab; 1000]);
    let g = parse_ok(&long);
    assert_eq!(g.file_len(), s.bytes.len() as u64 + 1000);
    assert_eq!(g.tensor_data_by_name("c").unwrap(), &s.bytes[s.data_end as usize - 6..s.data_end as usize]);
}

fn check_all_types(g: &Gguf<&[u8]>) {
    use ValueRef as V;
    let scalars = [
        ("u8", V::U8(200)),
        ("i8", V::I8(-100)),
        ("u16", V::U16(0xbeef)),
        ("i16", V::I16(-12345)),
        ("u32", V::U32(0xdead_beef)),
        ("i32", V::I32(-123_456_789)),
        ("f32", V::F32(-1.25)),
        ("bool", V::Bool(true)),
        ("string", V::String("héllo".into())),
        ("u64", V::U64(0x0123_4567_89ab_cdef)),
        ("i64", V::I64(-0x0123_4567_89ab_cdef)),
        ("f64", V::F64(std::f64::consts::PI)),
    ];
    for (k, v) in scalars {
        assert_eq!(g.get(k), Some(v), "{k}");
    }
    // The accessors: an integer type as u64 / i64 where the value fits, a float type as f64,
    // a string as text; None for every other type.
    type Accessors<'s> = (Option<u64>, Option<i64>, Option<f64>, Option<&'s str>);
    let accessors: [(&str, Accessors<'_>); 12] = [
        ("u8", (Some(200), Some(200), None, None)),
        ("i8", (None, Some(-100), None, None)),
        ("u16", (Some(0xbeef), Some(0xbeef), None, None)),
        ("i16", (None, Some(-12345), None, None)),
        ("u32", (Some(0xdead_beef), Some(0xdead_beef), None, None)),
        ("i32", (None, Some(-123_456_789), None, None)),
        ("f32", (None, None, Some(-1.25), None)),
        ("bool", (None, None, None, None)),
        ("string", (None, None, None, Some("héllo"))),
        ("u64", (Some(0x0123_4567_89ab_cdef), Some(0x0123_4567_89ab_cdef), None, None)),
        ("i64", (None, Some(-0x0123_4567_89ab_cdef), None, None)),
        ("f64", (None, None, Some(std::f64::consts::PI), None)),
    ];
    for (k, (u, i, f, s)) in accessors {
        let v = g.get(k).unwrap();
        assert_eq!((v.as_u64(), v.as_i64(), v.as_f64(), v.as_str()), (u, i, f, s), "{k}");
    }
    let arr = |k: &str| g.get(k).unwrap().as_array().unwrap().iter().collect::<Vec<_>>();
    assert_eq!(arr("a.u8"), [V::U8(1), V::U8(255)]);
    assert_eq!(arr("a.i8"), [V::I8(-1), V::I8(1)]);
    assert_eq!(arr("a.u16"), [V::U16(1), V::U16(0xff00)]);
    assert_eq!(arr("a.i16"), [V::I16(-2)]);
    assert_eq!(arr("a.u32"), [V::U32(7), V::U32(0x0102_0304)]);
    assert_eq!(arr("a.i32"), [V::I32(-7)]);
    assert_eq!(arr("a.f32"), [V::F32(0.5), V::F32(f32::INFINITY)]);
    assert_eq!(arr("a.bool"), [V::Bool(true), V::Bool(false), V::Bool(true)]);
    assert_eq!(arr("a.string"), [V::String("a".into()), V::String("".into()), V::String("ü".into())]);
    assert_eq!(arr("a.u64"), [V::U64(u64::MAX - 1)]);
    assert_eq!(arr("a.i64"), [V::I64(i64::MIN)]);
    let f = arr("a.f64");
    assert!(matches!(f[..], [V::F64(z)] if z == 0.0 && z.is_sign_negative()));
    let nested = arr("a.array");
    let inner: Vec<Vec<_>> = nested.iter().map(|v| v.as_array().unwrap().iter().collect()).collect();
    assert_eq!(inner, [vec![V::U16(0x1234)], vec![V::String("in".into())]]);
    assert_eq!(g.get("a.array").unwrap().type_name(), "array<array<u16>>");
    let empty = g.get("a.empty").unwrap().as_array().unwrap();
    assert_eq!((empty.elem_type(), empty.len()), (ValueType::F32, 0));
    // Empty is 0 elements (as written: a.empty has 0, the others 1 to 3), borrowed and owned.
    for (k, n) in [("a.empty", 0), ("a.i16", 1), ("a.u8", 2), ("a.string", 3), ("a.array", 2)] {
        let a = g.get(k).unwrap().as_array().unwrap();
        assert_eq!((a.len(), a.is_empty()), (n, n == 0), "{k}");
        let gguf_serde::Value::Array(owned) = g.get(k).unwrap().to_owned_value() else { panic!("{k} is not an array") };
        assert_eq!((owned.len() as u64, owned.is_empty()), (n, n == 0), "{k}");
    }
    // Key order is file order.
    let keys: Vec<_> = g.metadata().map(|kv| kv.key.to_str().unwrap()).collect();
    assert_eq!(keys.len(), 26);
    assert_eq!(keys[..3], ["u8", "i8", "u16"]);
    assert_eq!(keys[25], "a.empty");
    let t = g.tensor("t").unwrap();
    assert_eq!((&*t.shape, t.dtype, t.nbytes), (&[2][..], GgmlType::F32, 8));
}

/// Appends `v` to `b` as the integer type `id` (a GGUF value type id).
fn put_int(b: &mut B, id: u32, v: i128) {
    match id {
        ty::U8 => b.u8(v.try_into().unwrap()),
        ty::I8 => b.i8(v.try_into().unwrap()),
        ty::U16 => b.u16(v.try_into().unwrap()),
        ty::I16 => b.i16(v.try_into().unwrap()),
        ty::U32 => b.u32(v.try_into().unwrap()),
        ty::I32 => b.i32(v.try_into().unwrap()),
        ty::U64 => b.u64(v.try_into().unwrap()),
        ty::I64 => b.i64(v.try_into().unwrap()),
        _ => panic!("not an integer type: {id}"),
    };
}

/// The integer accessors against the values the byte builder wrote, at every width and in both
/// byte orders: a signed integer that is not negative is a `u64` too, an unsigned one up to
/// `i64::MAX` an `i64` (`ValueRef::as_u64`, `as_i64`: "any width, signed or not"), the others
/// `None` (a negative one as `u64`, one above `i64::MAX` as `i64`); scalars and array elements.
#[test]
fn integer_accessors_take_every_width_that_fits() {
    type AsU64AsI64 = (Option<u64>, Option<i64>);
    let cases: [(&str, u32, i128, AsU64AsI64); 12] = [
        ("i8", ty::I8, 100, (Some(100), Some(100))),
        ("i8.neg", ty::I8, -1, (None, Some(-1))),
        ("i16", ty::I16, 30_000, (Some(30_000), Some(30_000))),
        ("i16.neg", ty::I16, -32_768, (None, Some(-32_768))),
        ("i32", ty::I32, 2_000_000_000, (Some(2_000_000_000), Some(2_000_000_000))),
        ("i32.neg", ty::I32, -7, (None, Some(-7))),
        ("i64", ty::I64, i64::MAX.into(), (Some(i64::MAX as u64), Some(i64::MAX))),
        ("i64.neg", ty::I64, i64::MIN.into(), (None, Some(i64::MIN))),
        ("u8", ty::U8, 255, (Some(255), Some(255))),
        ("u16", ty::U16, 65_535, (Some(65_535), Some(65_535))),
        ("u32", ty::U32, u32::MAX.into(), (Some(u32::MAX.into()), Some(u32::MAX.into()))),
        ("u64", ty::U64, 1 << 63, (Some(1 << 63), None)),
    ];
    for big in [false, true] {
        let mut b = if big { B::be() } else { B::le() };
        b.header(3, 0, 2 * cases.len() as u64);
        for &(key, id, v, _) in &cases {
            put_int(b.kv(key, id), id, v);
            put_int(b.kv(format!("a.{key}"), ty::ARRAY).arr(id, 1), id, v);
        }
        let g = parse_ok(&b.buf);
        for (key, _, _, expected) in cases {
            let v = g.get(key).unwrap();
            assert_eq!((v.as_u64(), v.as_i64()), expected, "{key}, big-endian {big}");
            let a = g.get(format!("a.{key}")).unwrap().as_array().unwrap();
            let elements: Vec<_> = a.iter().map(|e| (e.as_u64(), e.as_i64())).collect();
            assert_eq!(elements, [expected], "a.{key}, big-endian {big}");
        }
    }
}

#[test]
fn little_endian_values_read_exactly() {
    let bytes = all_types(false, 3);
    let g = parse_ok(&bytes);
    assert_eq!(g.endian(), Endian::Little);
    check_all_types(&g);
    let mut data = 1.0f32.to_le_bytes().to_vec();
    data.extend_from_slice(&(-2.0f32).to_le_bytes());
    assert_eq!(g.tensor_data_by_name("t").unwrap(), data);
}

#[test]
fn big_endian_files_read_with_correct_values() {
    let bytes = all_types(true, 3);
    assert_eq!(bytes[4..8], [0, 0, 0, 3]);
    let g = parse_ok(&bytes);
    assert_eq!((g.version(), g.endian()), (3, Endian::Big));
    check_all_types(&g);
    // Tensor data is handed out as stored (big-endian).
    let mut data = 1.0f32.to_be_bytes().to_vec();
    data.extend_from_slice(&(-2.0f32).to_be_bytes());
    assert_eq!(g.tensor_data_by_name("t").unwrap(), data);

    // The sample file in big-endian order.
    let s = sample(true);
    let g = parse_ok(&s.bytes);
    assert_eq!(g.get("test.i16"), Some(ValueRef::I16(-3)));
    assert_eq!(g.get("test.f64"), Some(ValueRef::F64(0.25)));
    assert_eq!(g.data_offset(), s.data_offset);
    let b = g.tensor("b").unwrap();
    assert_eq!((&*b.shape, b.dtype, b.data_offset, b.nbytes), (&[32][..], GgmlType::Q8_0, s.data_offset + 32, 34));
}

#[test]
fn version_two_reads() {
    let bytes = all_types(false, 2);
    let g = parse_ok(&bytes);
    assert_eq!(g.version(), 2);
    check_all_types(&g);
}

#[test]
fn sample_reads_with_expected_layout() {
    let s = sample(false);
    let g = parse_ok(&s.bytes);
    assert_eq!((g.tensor_infos_end(), g.data_offset()), (s.infos_end, s.data_offset));
    let got: Vec<_> =
        g.tensors().map(|t| (t.name.to_str().unwrap(), t.dtype, t.shape.to_vec(), t.data_offset, t.nbytes)).collect();
    let d = s.data_offset;
    assert_eq!(
        got,
        [
            ("a", GgmlType::F32, vec![2, 4], d, 32),
            ("b", GgmlType::Q8_0, vec![32], d + 32, 34),
            ("c", GgmlType::F16, vec![3], d + 96, 6),
        ]
    );
    let nested = g.get("test.nested").unwrap().as_array().unwrap();
    assert_eq!(nested.len(), 3);
    assert_eq!(nested.type_name(), "array<array<u8>>");
}

/// An `ArrayRef` prints as its type and length (`ArrayRef<array<u32>>[3]`), not its elements: an
/// array of a vocabulary's 262,144 tokens in a `{:?}` stays one short line.
#[test]
fn an_array_ref_debugs_as_its_type_and_length() {
    let mut w = gguf_serde::GgufWriter::new(Vec::new());
    w.add_kv("u", vec![1u32, 2, 3]).unwrap();
    w.add_kv("s", vec!["a".to_owned(), "b".to_owned()]).unwrap();
    use gguf_serde::{Array, Value};
    w.add_kv("n", Value::Array(Array::Array(vec![Array::I8(vec![1]), Array::I8(vec![2, 3])]))).unwrap();
    w.add_kv("e", Vec::<f32>::new()).unwrap();
    let bytes = w.finish().unwrap();
    let g = Gguf::from_slice(&bytes).unwrap();
    let shown = |k: &str| match g.get(k).unwrap() {
        ValueRef::Array(a) => format!("{a:?}"),
        v => panic!("{k}: {v:?}"),
    };
    assert_eq!(shown("u"), "ArrayRef<array<u32>>[3]");
    assert_eq!(shown("s"), "ArrayRef<array<string>>[2]");
    assert_eq!(shown("n"), "ArrayRef<array<array<i8>>>[2]");
    assert_eq!(shown("e"), "ArrayRef<array<f32>>[0]");
    // Its iterator: the array and the elements left.
    let Some(ValueRef::Array(u)) = g.get("u") else { panic!() };
    let mut it = u.iter();
    it.next();
    assert_eq!(format!("{it:?}"), "ArrayIter { array: ArrayRef<array<u32>>[3], remaining: 2 }");
}
