//! Files cut anywhere and corrupted anywhere.

use super::*;

fn check_prefix(bytes: &[u8], len: usize, infos_end: u64, data_end: u64) {
    let prefix = &bytes[..len];
    common::check_every_source(prefix, &common::READ_AHEADS);
    let l = len as u64;
    let slice = Gguf::from_slice(prefix);
    let reader = Gguf::from_reader(Cursor::new(prefix));
    match (&slice, &reader) {
        (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "cut at {len}"),
        (Ok(a), Ok(b)) => assert_eq!(a.tensors().collect::<Vec<_>>(), b.tensors().collect::<Vec<_>>()),
        _ => panic!("cut at {len}: from_slice {slice:?} but from_reader {reader:?}"),
    }
    match slice.map_err(Error::into_kind) {
        Err(ErrorKind::Format(FormatError::BadMagic { found, .. })) => {
            assert!(len < 4 && found == prefix, "cut at {len}")
        }
        Err(ErrorKind::Format(FormatError::Truncated { offset, needed, available, .. })) => {
            assert!(l < infos_end && offset + needed > l && available == l - offset, "cut at {len}")
        }
        Err(ErrorKind::Format(FormatError::TooLong { .. })) => assert!(l < infos_end, "cut at {len}"),
        Err(ErrorKind::Format(FormatError::TensorOutOfBounds { end, file_len, .. })) => {
            assert!(l >= infos_end && l < data_end && end > l && file_len == l, "cut at {len}")
        }
        Err(e) => panic!("cut at {len}: unexpected {e:?}"),
        Ok(g) => {
            assert!(l >= data_end, "cut at {len} accepted");
            assert_eq!((g.kv_count(), g.tensor_count()), (7, 3));
        }
    }
}

#[test]
fn a_file_cut_anywhere_is_refused_cleanly() {
    for big in [false, true] {
        let s = sample(big);
        parse_ok(&s.bytes);
        for len in 0..=s.bytes.len() {
            check_prefix(&s.bytes, len, s.infos_end, s.data_end);
        }
    }
}

#[test]
fn every_seed_cut_anywhere_reads_the_same_from_every_source() {
    // The parser stops wherever its bytes end: each seed (every value type, both byte orders,
    // each kind of error), cut at every length and read in pieces of every size, gives the
    // answer of the whole cut file in memory.
    for s in common::seeds() {
        for len in 0..=s.bytes.len() {
            common::check_every_source(&s.bytes[..len], &common::READ_AHEADS);
        }
    }
}

/// Walks every value, array element and tensor of an accepted file (no accessor may panic).
fn touch_everything<S: gguf_serde::container::Source>(g: &Gguf<S>) {
    fn walk(v: ValueRef<'_>) -> usize {
        match v {
            ValueRef::Array(a) => {
                let _ = a.type_name();
                let _ = a.to_owned_array();
                a.iter().map(walk).sum::<usize>() + 1
            }
            v => {
                let _ = v.to_owned_value();
                1
            }
        }
    }
    for kv in g.metadata() {
        walk(kv.value);
    }
    for t in g.tensors() {
        let _ = g.tensor_data(&t);
        let _ = g.tensor(t.name);
    }
}

#[test]
fn every_byte_corrupted_never_panics() {
    for big in [false, true] {
        let s = sample(big);
        let mut accepted = 0;
        for i in 0..s.bytes.len() {
            for op in 0..6u8 {
                let mut b = s.bytes.clone();
                b[i] = match op {
                    0 => b[i] ^ 0xff,
                    1 => b[i] ^ 0x01,
                    2 => b[i] ^ 0x80,
                    3 => 0,
                    4 => 0xff,
                    _ => b[i].wrapping_add(2),
                };
                let slice = Gguf::from_slice(&b);
                let reader = Gguf::from_reader(Cursor::new(&b));
                common::check_every_source(&b, &[0, usize::MAX]);
                match (&slice, &reader) {
                    (Ok(g), Ok(r)) => {
                        accepted += 1;
                        touch_everything(g);
                        touch_everything(r);
                        assert_eq!(g.tensors().collect::<Vec<_>>(), r.tensors().collect::<Vec<_>>());
                    }
                    (Err(a), Err(r)) => assert_eq!(format!("{a:?}"), format!("{r:?}"), "byte {i} op {op}"),
                    _ => panic!("byte {i} op {op}: from_slice and from_reader disagree"),
                }
            }
        }
        // Corrupting tensor data or padding keeps the file valid: many are accepted.
        assert!(accepted > 6 * 100, "{accepted}");
    }
}

/// A file whose metadata is larger than `from_reader`'s first 64 KiB read: a string array of 9000
/// entries, then two tensors.
fn large_metadata() -> (Vec<u8>, u64, u64) {
    let mut b = B::le();
    b.header(3, 2, 2).kv("general.architecture", ty::STRING).str("llama");
    b.kv("tokenizer.ggml.tokens", ty::ARRAY).arr(ty::STRING, 9000);
    for i in 0..9000 {
        b.str(format!("tok{i:05}"));
    }
    b.tensor("a", &[8], gt::F32, 0).tensor("b", &[64], gt::BF16, 32);
    let infos_end = b.pos();
    assert!(infos_end > 65536 + 4096);
    b.pad(32).data(32, 1).pad(32).data(128, 2);
    let data_end = b.pos();
    (b.buf, infos_end, data_end)
}

#[test]
fn large_metadata_cut_anywhere_through_from_reader() {
    let (bytes, infos_end, data_end) = large_metadata();
    let g = parse_ok(&bytes);
    assert_eq!(g.get("tokenizer.ggml.tokens").unwrap().as_array().unwrap().len(), 9000);
    let r = Gguf::from_reader(Cursor::new(&bytes)).unwrap();
    assert_eq!(r.tensor_infos_end(), infos_end);
    assert_eq!(r.bytes().len() as u64, infos_end, "from_reader holds exactly the metadata");
    assert!(
        matches!(r.tensor_data_by_name("a").map_err(Error::into_kind), Err(ErrorKind::DataNotLoaded { name, .. }) if name == "a")
    );
    let near = |x: u64| (x.saturating_sub(40)..x + 40).map(|v| v as usize);
    let lens: Vec<usize> = (0..bytes.len())
        .step_by(997)
        .chain(near(65536))
        .chain(near(131072))
        .chain(near(infos_end))
        .chain(near(data_end))
        .filter(|&l| l <= bytes.len())
        .collect();
    for len in lens {
        let prefix = &bytes[..len];
        let l = len as u64;
        let slice = Gguf::from_slice(prefix);
        let reader = Gguf::from_reader(Cursor::new(prefix));
        common::check_every_source(prefix, &[0, 4096]);
        match (&slice, &reader) {
            (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "cut at {len}"),
            (Ok(_), Ok(_)) => assert!(l >= data_end),
            _ => panic!("cut at {len}: from_slice {slice:?} but from_reader {reader:?}"),
        }
        if l < data_end {
            assert!(slice.is_err(), "cut at {len} accepted");
        }
    }
}
