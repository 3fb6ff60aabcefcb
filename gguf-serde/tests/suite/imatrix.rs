//! `ops::imatrix`: importance matrices in llama-imatrix's GGUF and legacy `.dat` formats, built
//! byte by byte. The expected weights follow llama.cpp's `load_imatrix` (tools/quantize/
//! quantize.cpp at 0c1e57098): GGUF `in_sum2 / lround(count)` per expert, 1 where a count is 0;
//! `.dat` `value / ncall`. Hostile files give a typed [`ImatrixProblem`], never a panic.

use gguf_serde::ops::imatrix::{Imatrix, ImatrixFormat};
use gguf_serde::ops::kv_override::KvOverrideValue;
use gguf_serde::{Error, ErrorKind, ImatrixProblem, QuantizeError};

use crate::common::{gt, B};

/// One GGUF entry: name, `in_sum2` values, `counts` values, and the type ids of both tensors.
struct Entry {
    name: &'static str,
    sums: Vec<f32>,
    counts: Vec<f32>,
}

fn entry(name: &'static str, sums: &[f32], counts: &[f32]) -> Entry {
    Entry { name, sums: sums.to_vec(), counts: counts.to_vec() }
}

/// What a GGUF imatrix file holds besides its entries.
struct Keys {
    datasets: bool,
    chunk_count: Option<(u32, u32)>, // (type id, value)
    chunk_size: Option<u32>,
}

const KEYS: Keys = Keys { datasets: true, chunk_count: Some((4, 3)), chunk_size: Some(64) };

/// A GGUF imatrix file as llama-imatrix writes one: `general.type`, the `imatrix.*` keys, then
/// `NAME.in_sum2` (`ne` `[n / n_counts, n_counts]`, or `[n, 1]` if they do not divide) and `NAME.counts` (`ne` `[1, n_counts]`)
/// per entry; `sums_type` is the type id given to every `in_sum2` (F32 = 0).
fn gguf_file(keys: &Keys, datasets: &[&str], entries: &[Entry], sums_type: u32) -> Vec<u8> {
    let mut tensors: Vec<(String, Vec<u64>, u32, Vec<f32>)> = Vec::new();
    for e in entries {
        let (nc, nval) = (e.counts.len() as u64, e.sums.len() as u64);
        // One row per count where they divide; else one row of every sum (a hostile file).
        let ne = if nc > 0 && nval % nc == 0 { vec![nval / nc, nc] } else { vec![nval, 1] };
        tensors.push((format!("{}.in_sum2", e.name), ne, sums_type, e.sums.clone()));
        tensors.push((format!("{}.counts", e.name), vec![1, nc], gt::F32, e.counts.clone()));
    }
    let n_kv =
        1 + u64::from(keys.datasets) + u64::from(keys.chunk_count.is_some()) + u64::from(keys.chunk_size.is_some());
    let mut b = B::le();
    b.header(3, tensors.len() as u64, n_kv);
    b.kv("general.type", 8).str("imatrix");
    if keys.datasets {
        b.kv("imatrix.datasets", 9).arr(8, datasets.len() as u64);
        for d in datasets {
            b.str(d);
        }
    }
    if let Some((ty, v)) = keys.chunk_count {
        b.kv("imatrix.chunk_count", ty).u32(v);
    }
    if let Some(v) = keys.chunk_size {
        b.kv("imatrix.chunk_size", 4).u32(v);
    }
    let mut offset = 0u64;
    let mut sizes = Vec::new();
    for (name, ne, ty, v) in &tensors {
        b.tensor(name, ne, *ty, offset);
        let bytes = v.len() as u64 * if *ty == gt::F16 { 2 } else { 4 };
        sizes.push(bytes);
        offset += bytes.div_ceil(32) * 32;
    }
    b.pad(32);
    for (_, _, ty, v) in &tensors {
        for &x in v {
            if *ty == gt::F16 {
                b.u16(0x3c00);
            } else {
                b.f32(x);
            }
        }
        b.pad(32);
    }
    b.bytes()
}

/// A legacy `.dat` file: entries `(name bytes, ncall, values)`, then the optional trailer.
fn dat_file(entries: &[(&[u8], i32, &[f32])], trailer: Option<(i32, &str)>) -> Vec<u8> {
    let mut b = B::le();
    b.i32(entries.len() as i32);
    for (name, ncall, values) in entries {
        b.i32(name.len() as i32).raw(name).i32(*ncall).i32(values.len() as i32);
        for &v in *values {
            b.f32(v);
        }
    }
    if let Some((chunks, dataset)) = trailer {
        b.i32(chunks).i32(dataset.len() as i32).raw(dataset.as_bytes());
    }
    b.bytes()
}

fn problem(e: &Error) -> ImatrixProblem {
    match e.as_quantize() {
        Some(QuantizeError::Imatrix { problem, .. }) => problem.clone(),
        _ => panic!("not an imatrix error: {e:?}"),
    }
}

fn gguf_problem(bytes: &[u8]) -> ImatrixProblem {
    problem(&Imatrix::from_bytes(bytes, "x.gguf").unwrap_err())
}

fn dat_problem(bytes: &[u8]) -> ImatrixProblem {
    problem(&Imatrix::from_bytes(bytes, "x.dat").unwrap_err())
}

#[test]
fn gguf_weights_are_sums_over_rounded_counts_and_one_for_zero_counts() {
    let entries = [
        entry("blk.0.attn_q.weight", &[2.0, 4.0, 6.0, 9.0], &[2.0]),
        // Two experts: counts 2.5 (lround: 3) and 0 (weights 1).
        entry("blk.0.ffn_up_exps.weight", &[3.0, 6.0, 7.0, 8.0], &[2.5, 0.0]),
    ];
    let bytes = gguf_file(&KEYS, &["data/text.txt", "other.txt"], &entries, gt::F32);
    let m = Imatrix::from_bytes(&bytes, "im.gguf").unwrap();
    assert_eq!(m.format, ImatrixFormat::Gguf);
    assert_eq!((m.chunk_count, m.chunk_size), (3, 64));
    assert_eq!(m.datasets, [&b"data/text.txt"[..], b"other.txt"]);
    assert_eq!(m.entries["blk.0.attn_q.weight".as_bytes()], [1.0, 2.0, 3.0, 4.5]);
    assert_eq!(m.entries["blk.0.ffn_up_exps.weight".as_bytes()], [1.0, 2.0, 1.0, 1.0]);
    // The keys llama-quantize appends, in its order.
    let kv: Vec<(Vec<u8>, KvOverrideValue)> = m.kv_overrides().into_iter().map(|o| (o.key, o.value)).collect();
    assert_eq!(
        kv,
        [
            ("quantize.imatrix.file".into(), KvOverrideValue::Str("im.gguf".into())),
            ("quantize.imatrix.dataset".into(), KvOverrideValue::Str("data/text.txt".into())),
            ("quantize.imatrix.entries_count".into(), KvOverrideValue::Int(2)),
            ("quantize.imatrix.chunks_count".into(), KvOverrideValue::Int(3)),
        ]
    );
    // A tensor of ne [2, 5, 2] takes the expert entry (ne[0] x ne[2] values); a tensor without
    // an entry gets none; a wrong size is refused.
    assert_eq!(m.weights_for("blk.0.ffn_up_exps.weight", &[2, 5, 2]).unwrap().map(<[f32]>::len), Some(4));
    assert!(m.weights_for("blk.1.attn_q.weight", &[4, 8]).unwrap().is_none());
    let p = problem(&m.weights_for("blk.0.attn_q.weight", &[8, 4]).unwrap_err());
    assert!(
        matches!(p, ImatrixProblem::SizeMismatch { ref tensor, found: 4, expected: 8, .. } if tensor == "blk.0.attn_q.weight"),
        "{p:?}"
    );
    // The token embeddings of the wrong size are quantized without (llama-quantize only warns).
    let dat = dat_file(&[(b"token_embd.weight", 1, &[1.0, 2.0])], None);
    let m = Imatrix::from_bytes(&dat, "im.dat").unwrap();
    assert!(m.weights_for("token_embd.weight", &[4, 10]).unwrap().is_none());
    assert_eq!(m.weights_for("token_embd.weight", &[2, 10]).unwrap(), Some(&[1.0f32, 2.0][..]));
}

#[test]
fn dat_weights_are_values_over_ncall_with_the_optional_trailer() {
    let entries: [(&[u8], i32, &[f32]); 2] = [(b"a.weight", 2, &[2.0, 5.0]), (b"b.weight\0junk", 4, &[8.0])];
    let m = Imatrix::from_bytes(&dat_file(&entries, Some((7, "calib.txt"))), "im.dat").unwrap();
    assert_eq!(m.format, ImatrixFormat::Legacy);
    assert_eq!(m.entries["a.weight".as_bytes()], [1.0, 2.5]);
    assert_eq!(m.entries["b.weight".as_bytes()], [2.0]); // the name ends at its first NUL
    assert_eq!((m.chunk_count, m.datasets.as_slice()), (7, [b"calib.txt".to_vec()].as_slice()));
    // Without the trailer: no dataset and no chunk count, so neither key.
    let m = Imatrix::from_bytes(&dat_file(&entries, None), "im.dat").unwrap();
    let keys: Vec<Vec<u8>> = m.kv_overrides().into_iter().map(|o| o.key).collect();
    assert_eq!(keys, [&b"quantize.imatrix.file"[..], b"quantize.imatrix.entries_count"]);
}

#[test]
fn include_and_exclude_match_substrings() {
    let entries: [(&[u8], i32, &[f32]); 3] = [
        (b"blk.0.attn_v.weight", 1, &[1.0]),
        (b"blk.0.ffn_down.weight", 1, &[1.0]),
        (b"blk.10.attn_v.weight", 1, &[1.0]),
    ];
    let m = Imatrix::from_bytes(&dat_file(&entries, None), "im.dat").unwrap();
    let names = |m: &Imatrix| m.entries.keys().map(|k| String::from_utf8_lossy(k).into_owned()).collect::<Vec<_>>();
    let mut x = m.clone();
    x.exclude(&["attn_v"]);
    assert_eq!(names(&x), ["blk.0.ffn_down.weight"]);
    let mut x = m.clone();
    x.include_only(&["blk.1", "ffn_down"]);
    assert_eq!(names(&x), ["blk.0.ffn_down.weight", "blk.10.attn_v.weight"]);
    let mut x = m.clone();
    x.exclude(&["weight"]);
    assert!(x.kv_overrides().is_empty(), "no entry left: no keys");
}

#[test]
fn every_cut_of_a_dat_file_is_a_typed_error_or_a_whole_file() {
    let entries: [(&[u8], i32, &[f32]); 2] = [(b"a.weight", 2, &[2.0, 5.0]), (b"b.weight", 4, &[8.0])];
    let full = dat_file(&entries, Some((7, "calib.txt")));
    let without_trailer = dat_file(&entries, None).len();
    for cut in 0..full.len() {
        match Imatrix::from_bytes(&full[..cut], "im.dat") {
            // Whole entries, with or without the chunk count (the dataset is optional).
            Ok(m) => assert!(cut == without_trailer || cut == without_trailer + 4, "cut {cut}: {m:?}"),
            Err(e) => assert!(matches!(problem(&e), ImatrixProblem::Truncated { .. }), "cut {cut}: {e:?}"),
        }
    }
    assert!(matches!(dat_problem(&full[..10]), ImatrixProblem::Truncated { offset: 8, needed: 8, .. }));
}

#[test]
fn hostile_dat_files_give_typed_errors() {
    let good: &[f32] = &[1.0, 2.0];
    let p = dat_problem(&dat_file(&[], None));
    assert!(matches!(p, ImatrixProblem::NoEntries { .. }), "{p:?}");
    // A negative count is not "no entries": it names the field and the value.
    let p = dat_problem(&B::le().i32(-3).bytes());
    assert!(matches!(p, ImatrixProblem::BadLength { ref item, len: -3, .. } if item == "entry count"), "{p:?}");
    assert_eq!(p.to_string(), "entry count has the invalid length -3");
    let neg_name = B::le().i32(1).i32(-5).bytes();
    let p = dat_problem(&neg_name);
    assert!(matches!(p, ImatrixProblem::BadLength { ref item, len: -5, .. } if item == "name of entry 1"), "{p:?}");
    let no_values = B::le().i32(1).i32(1).raw(b"a").i32(1).i32(0).bytes();
    let p = dat_problem(&no_values);
    assert!(matches!(p, ImatrixProblem::BadLength { ref item, len: 0, .. } if item == "values of entry 1"), "{p:?}");
    let p = dat_problem(&dat_file(&[(b"a", 0, good)], None));
    assert!(matches!(p, ImatrixProblem::ZeroCounts { ref entry, .. } if entry == "a"), "{p:?}");
    assert!(matches!(dat_problem(&dat_file(&[(b"a", -1, good)], None)), ImatrixProblem::BadCount { .. }));
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let p = dat_problem(&dat_file(&[(b"a", 1, &[1.0, bad])], None));
        assert!(matches!(p, ImatrixProblem::NonFinite { index: 1, .. }), "{bad}: {p:?}");
    }
    // A name that is not UTF-8 is kept as its bytes (llama.cpp's `std::string`), not refused.
    let m = Imatrix::from_bytes(&dat_file(&[(b"\xff\xfe", 1, good)], None), "x.dat").unwrap();
    assert_eq!(m.entries.keys().collect::<Vec<_>>(), [b"\xff\xfe"]);
    // A text file: neither format, said so (not "truncated").
    let p = dat_problem(b"this is not an importance matrix\n");
    assert!(matches!(p, ImatrixProblem::NotImatrix { len: 33, .. }), "{p:?}");
    assert!(p.to_string().starts_with("in neither format: no `GGUF` magic"), "{p}");
    // A huge value count with few bytes: a truncation, not an allocation.
    let huge = B::le().i32(1).i32(1).raw(b"a").i32(1).i32(i32::MAX).bytes();
    assert!(matches!(dat_problem(&huge), ImatrixProblem::Truncated { .. }));
    // A name of 1 byte cut off: 1 byte is needed, in the singular.
    let p = dat_problem(&B::le().i32(1).i32(1).bytes());
    assert_eq!(p.to_string(), "file truncated: name of entry 1 at offset 8 needs 1 byte");
}

#[test]
fn hostile_gguf_files_give_typed_errors() {
    let ok = [entry("a.weight", &[1.0, 2.0, 3.0, 4.0], &[1.0, 1.0])];
    assert!(Imatrix::from_bytes(&gguf_file(&KEYS, &[], &ok, gt::F32), "x").is_ok());
    // Counts that do not split the sums into whole slices, or none at all.
    let p = gguf_problem(&gguf_file(&KEYS, &[], &[entry("a", &[1.0, 2.0, 3.0], &[1.0, 1.0])], gt::F32));
    assert!(matches!(p, ImatrixProblem::CountsLength { ref entry, sums: 3, counts: 2, .. } if entry == "a"), "{p:?}");
    let p = gguf_problem(&gguf_file(&KEYS, &[], &[entry("a", &[1.0], &[1.0, 1.0])], gt::F32));
    assert!(matches!(p, ImatrixProblem::CountsLength { ref entry, sums: 1, counts: 2, .. } if entry == "a"), "{p:?}");
    let p = gguf_problem(&gguf_file(&KEYS, &[], &[entry("a", &[1.0, 2.0], &[])], gt::F32));
    assert!(matches!(p, ImatrixProblem::CountsLength { ref entry, sums: 2, counts: 0, .. } if entry == "a"), "{p:?}");
    // Counts: NaN, infinite, negative; all zero.
    for bad in [f32::NAN, f32::INFINITY, -1.0] {
        let p = gguf_problem(&gguf_file(&KEYS, &[], &[entry("a", &[1.0, 2.0], &[1.0, bad])], gt::F32));
        assert!(matches!(p, ImatrixProblem::BadCount { index: 1, .. }), "{bad}: {p:?}");
    }
    let p = gguf_problem(&gguf_file(&KEYS, &[], &[entry("a", &[1.0, 2.0], &[0.0, 0.4])], gt::F32));
    assert!(matches!(p, ImatrixProblem::ZeroCounts { ref entry, .. } if entry == "a"), "{p:?}");
    // Sums: NaN; a finite sum over a count that makes it overflow cannot happen (count >= 1).
    let p = gguf_problem(&gguf_file(&KEYS, &[], &[entry("a", &[1.0, f32::NAN], &[1.0])], gt::F32));
    assert!(matches!(p, ImatrixProblem::NonFinite { index: 1, .. }), "{p:?}");
    // Sums without counts.
    let unpaired = {
        let mut b = B::le();
        b.header(3, 1, 3);
        b.kv("imatrix.datasets", 9).arr(8, 0);
        b.kv("imatrix.chunk_count", 4).u32(1);
        b.kv("imatrix.chunk_size", 4).u32(1);
        b.tensor("a.in_sum2", &[1, 1], gt::F32, 0).pad(32).f32(1.0).pad(32);
        b.bytes()
    };
    let p = gguf_problem(&unpaired);
    assert!(matches!(p, ImatrixProblem::Unpaired { ref entry, .. } if entry == "a"), "{p:?}");
    // in_sum2 stored as F16.
    let p = gguf_problem(&gguf_file(&KEYS, &[], &[entry("a", &[1.0, 1.0], &[1.0])], gt::F16));
    assert!(matches!(p, ImatrixProblem::NotF32 { .. }), "{p:?}");
    // Missing metadata, one key at a time; a chunk count stored as i32.
    for which in 0..3 {
        let k = Keys {
            datasets: which != 0,
            chunk_count: if which == 1 { None } else { Some((4, 1)) },
            chunk_size: if which == 2 { None } else { Some(1) },
        };
        let p = gguf_problem(&gguf_file(&k, &[], &ok, gt::F32));
        assert!(matches!(p, ImatrixProblem::MissingMetadata { .. }), "{which}");
    }
    let keys = Keys { chunk_count: Some((5, 1)), ..KEYS };
    let p = gguf_problem(&gguf_file(&keys, &[], &ok, gt::F32));
    assert!(matches!(p, ImatrixProblem::KeyType { ref key, .. } if key == "imatrix.chunk_count"), "{p:?}");
    // No tensors at all.
    let p = gguf_problem(&gguf_file(&KEYS, &[], &[], gt::F32));
    assert!(matches!(p, ImatrixProblem::NoEntries { .. }), "{p:?}");
    // A GGUF file cut short is the reader's format error.
    let full = gguf_file(&KEYS, &[], &ok, gt::F32);
    // (The last tensor's 8 bytes of counts end 24 bytes before the end: cut inside them.)
    for cut in [5, 30, full.len() - 30] {
        let e = Imatrix::from_bytes(&full[..cut], "x").unwrap_err();
        let data_missing = matches!(e.kind(), ErrorKind::DataNotLoaded { .. });
        assert!(e.as_format().is_some() || data_missing, "cut {cut}: {e:?}");
    }
}
