//! Bounded resources: opening a file allocates memory in proportion to the bytes its
//! metadata really occupies, never to a count or length it merely claims; no claimed size makes
//! the reader hang.
//!
//! The bound, documented in the `container` module docs: opening allocates at most
//! [`PER_BYTE`] bytes per byte of metadata (the file up to the end of its tensor infos, or up to
//! where it was refused) plus [`FIXED`] bytes; `from_reader` adds its read buffer (the metadata
//! bytes themselves, read in pieces of at least 64 KiB). Measured by a counting allocator
//! (`common::measure`) on the seed corpus, on worst-case files made of the smallest possible
//! entries, and on real models (`real_models_allocate_a_small_fraction_of_their_metadata`, in
//! `tests/tests/interop/resources_models.rs`: it needs the downloaded models).
//!
//! Recursion depth (arrays of arrays) is tested at `MAX_DEPTH` and one past it in
//! `validation/keys_and_values.rs` (`nesting_at_the_limit_reads`, `nesting_past_the_limit_refused`, which also
//! feeds 200,000 levels), and on write in `writer.rs`.

use std::io::Cursor;

use crate::common::{bound, measure, reader_extra, seeds, temp_dir, ty, with_deadline, Allocs, B};
use gguf_serde::Item;
use gguf_serde::{ErrorKind, FormatError, Gguf};

/// Opens `bytes` with `from_slice` and `from_reader`; returns what each allocated, and the
/// metadata length: the end of the tensor infos if it opens, else the offset of the error (or
/// the whole file when the error has none).
fn open(bytes: &[u8]) -> (Allocs, Allocs, usize) {
    let (r, slice) = measure(|| Gguf::from_slice(bytes).map(|g| g.tensor_infos_end()));
    let (_, reader) = measure(|| Gguf::from_reader(Cursor::new(bytes)).map(|g| g.tensor_infos_end()));
    let metadata = match r {
        Ok(end) => end as usize,
        Err(_) => bytes.len(),
    };
    (slice, reader, metadata)
}

fn check(name: &str, bytes: &[u8]) -> (f64, Allocs) {
    let (slice, reader, metadata) = open(bytes);
    assert!(
        slice.peak <= bound(metadata),
        "{name}: from_slice peaked at {} bytes for {metadata} bytes of metadata (bound {})",
        slice.peak,
        bound(metadata)
    );
    let reader_bound = bound(metadata) + reader_extra(metadata, bytes.len());
    assert!(
        reader.peak <= reader_bound,
        "{name}: from_reader peaked at {} bytes for {metadata} bytes of metadata (bound {reader_bound})",
        reader.peak
    );
    (slice.peak as f64 / metadata.max(1) as f64, slice)
}

#[test]
fn seed_corpus_allocates_within_the_bound() {
    let mut worst = (0.0, "");
    for s in seeds() {
        let (ratio, a) = check(s.name, &s.bytes);
        eprintln!("{:28} {:6} B  peak {:6} B  total {:6} B", s.name, s.bytes.len(), a.peak, a.total);
        if ratio > worst.0 {
            worst = (ratio, s.name);
        }
    }
    eprintln!("worst peak / metadata: {:.2} ({})", worst.0, worst.1);
}

/// `n` key/value pairs as small as they get (a short key, a u8 value: 14 to 18 bytes each).
fn many_pairs(n: u64) -> Vec<u8> {
    let mut b = B::le();
    b.header(3, 0, n);
    for i in 0..n {
        b.kv(format!("{i:x}"), ty::U8).u8(1);
    }
    b.buf
}

/// `n` tensor infos as small as they get (a short name, no dims, I8: 25 to 29 bytes each),
/// alignment 1, one byte of data each.
fn many_tensors(n: u64) -> Vec<u8> {
    let mut b = B::le();
    b.header(3, n, 1).kv("general.alignment", ty::U32).u32(1);
    for i in 0..n {
        b.tensor(format!("{i:x}"), &[], 24, i);
    }
    b.data(n as usize, 1);
    b.buf
}

#[test]
fn smallest_entries_are_the_worst_case_and_within_the_bound() {
    for n in [100, 1_025, 4_097, 10_000, 16_385, 60_000, 65_537] {
        for (what, bytes) in [("pairs", many_pairs(n)), ("tensors", many_tensors(n))] {
            let (ratio, a) = check(what, &bytes);
            let g = Gguf::from_slice(&bytes).unwrap();
            assert_eq!(g.kv_count() + g.tensor_count(), n as usize + usize::from(what == "tensors"));
            eprintln!("{n:6} {what:8} {:8} B  peak {:9} B  {ratio:.2} B/B", bytes.len(), a.peak);
        }
    }
}

/// `claim` pairs or tensors claimed in the header, one real entry, then `filler` bytes that do
/// not parse (as if the count were written over a real file's tensor data).
fn claiming(tensors: bool, filler: usize) -> Vec<u8> {
    let mut b = B::le();
    if tensors {
        b.header(3, (filler / 24) as u64, 0).tensor("t", &[1], 0, 0);
    } else {
        b.header(3, 0, (filler / 14) as u64).kv("a", ty::U8).u8(1);
    }
    // Lengths of u64::MAX: the next entry is refused at once.
    b.raw(&vec![0xff; filler]);
    b.buf
}

#[test]
fn claimed_counts_allocate_nothing_in_proportion_to_the_claim() {
    // The header claims as many entries as the rest of the file could hold; only one is there.
    // What opening allocates must not grow with the file: 1 MiB and 16 MiB of filler allocate
    // the same few bytes (the metadata really present is under 64 bytes).
    for tensors in [false, true] {
        let mut peaks = Vec::new();
        for filler in [1 << 20, 16 << 20] {
            let bytes = claiming(tensors, filler);
            let ((e, _), slice, _) = {
                let (slice, reader, m) = open(&bytes);
                ((Gguf::from_slice(&bytes).unwrap_err(), reader), slice, m)
            };
            let item = if tensors { Item::TensorName } else { Item::Key };
            assert!(matches!(e.kind(), ErrorKind::Format(FormatError::TooLong { item: i, .. }) if *i == item), "{e:?}");
            assert!(slice.peak <= bound(64), "claiming {filler} bytes of entries: peak {} bytes", slice.peak);
            peaks.push(slice.peak);
        }
        assert_eq!(peaks[0], peaks[1], "allocation grows with the claimed count");
    }
}

#[test]
fn largest_claims_in_every_field_are_refused_at_once() {
    // A hang fails the test (after a generous limit) rather than the whole run.
    with_deadline(std::time::Duration::from_secs(300), largest_claims);
}

fn largest_claims() {
    // Every count, length and dim field set to each of the largest values: each file is refused
    // with an error (the deadline is the check that none hangs), allocating little.
    // A long tail of zero bytes makes "larger than the file" checks see a large file.
    let tail = vec![0u8; 1 << 16];
    for big in [u64::MAX, 1 << 60, i64::MAX as u64, u64::MAX / 14, (1 << 16) + 1] {
        let files: Vec<(&str, Vec<u8>)> = vec![
            ("tensor count", B::le().header(3, big, 0).raw(&tail).bytes()),
            ("kv count", B::le().header(3, 0, big).raw(&tail).bytes()),
            ("key length", B::le().header(3, 0, 1).u64(big).raw(&tail).bytes()),
            ("string length", B::le().header(3, 0, 1).kv("s", ty::STRING).u64(big).raw(&tail).bytes()),
            ("array count", B::le().header(3, 0, 1).kv("a", ty::ARRAY).arr(ty::U64, big).raw(&tail).bytes()),
            ("string array count", B::le().header(3, 0, 1).kv("a", ty::ARRAY).arr(ty::STRING, big).raw(&tail).bytes()),
            (
                "array of arrays count",
                B::le().header(3, 0, 1).kv("a", ty::ARRAY).arr(ty::ARRAY, big).raw(&tail).bytes(),
            ),
            (
                "string in an array",
                B::le().header(3, 0, 1).kv("a", ty::ARRAY).arr(ty::STRING, 1).u64(big).raw(&tail).bytes(),
            ),
            ("tensor name length", B::le().header(3, 1, 0).u64(big).raw(&tail).bytes()),
            ("n_dims", B::le().header(3, 1, 0).str("t").u32(big.min(u32::MAX.into()) as u32).raw(&tail).bytes()),
            ("dim 0", B::le().header(3, 1, 0).tensor("t", &[big], 0, 0).raw(&tail).bytes()),
            ("dim 3", B::le().header(3, 1, 0).tensor("t", &[1, 1, 1, big], 0, 0).raw(&tail).bytes()),
            ("all dims", B::le().header(3, 1, 0).tensor("t", &[big; 4], 24, 0).raw(&tail).bytes()),
            ("tensor offset", B::le().header(3, 1, 0).tensor("t", &[1], 0, big & !31).raw(&tail).bytes()),
        ];
        for (what, bytes) in files {
            let (r, slice, reader, _) = {
                let (slice, reader, m) = open(&bytes);
                (Gguf::from_slice(&bytes).map(|_| ()), slice, reader, m)
            };
            let (r2, _) = measure(|| Gguf::from_reader(Cursor::new(&bytes)).map(|_| ()));
            assert_eq!(r.as_ref().err().map(ToString::to_string), r2.err().map(|e| e.to_string()), "{what}");
            assert!(r.is_err(), "{what} = {big}: accepted");
            assert!(slice.peak <= bound(64), "{what} = {big}: from_slice peaked at {} bytes", slice.peak);
            assert!(reader.peak <= bound(64) + reader_extra(64, bytes.len()), "{what} = {big}: {}", reader.peak);
        }
    }
}

#[test]
fn count_claimed_over_a_large_file_does_not_reserve_memory_for_it() {
    // A model's header with its key/value count overwritten: the count is checked against the
    // bytes left in the file, tensor data included, so it passes that check; what is reserved for
    // it must still be bounded by the entries really parsed. A sparse 64 GiB file (no disk used)
    // stands for the model; before the fix, reserving 4.9e9 entries aborted the process.
    // Removed with its two 64 GiB sparse files when dropped, also when an assertion fails.
    let dir = temp_dir();
    for (name, header) in [
        ("kv-count", B::le().header(3, 0, ((64u64 << 30) - 64) / 14).kv("a", ty::U8).u8(1).raw(&[0xff; 8]).bytes()),
        (
            "tensor-count",
            B::le().header(3, ((64u64 << 30) - 64) / 24, 0).tensor("t", &[1], 0, 0).raw(&[0xff; 8]).bytes(),
        ),
    ] {
        // The second entry starts with a length of u64::MAX (refused at once); zeros would make
        // valid empty-named tensor infos, 64 GiB of them.
        let path = dir.path().join(name);
        let f = std::fs::File::create(&path).unwrap();
        std::io::Write::write_all(&mut &f, &header).unwrap();
        f.set_len(64 << 30).unwrap();
        drop(f);
        let (r, a) = measure(|| Gguf::open(&path).map(|_| ()));
        assert!(r.is_err(), "{name}: the second entry is refused");
        assert!(a.peak <= bound(64), "{name}: peak {} bytes", a.peak);
    }
}

/// `Source::release` on a memory mapping (`Gguf::open`) gives back the whole pages inside the
/// range and only those (the trait's docs; madvise(2) `MADV_DONTNEED` on a shared file mapping:
/// the pages leave this process's page table and a later read maps them again from the file).
/// Read from `/proc/self/pagemap` (bit 63, "page present"; proc(5)): after every page of the
/// mapping is read, releasing bytes 100 to 3 pages + 5 unmaps pages 1 and 2, not the pages 0 and
/// 3 it covers only in part, nor the rest; the bytes read again are the file's.
#[test]
#[cfg(target_os = "linux")]
fn a_mapping_gives_back_the_whole_pages_inside_a_released_range() {
    use gguf_serde::Source;
    use std::os::unix::fs::FileExt;
    const PAGE: usize = 4096;
    // SAFETY: sysconf reads a constant of the system.
    #[allow(unsafe_code)]
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if page != PAGE as libc::c_long {
        return crate::common::skip("the page size is not 4096 bytes");
    }
    let Ok(pagemap) = std::fs::File::open("/proc/self/pagemap") else {
        return crate::common::skip("no /proc/self/pagemap");
    };
    // one I8 tensor of 5 pages after a 32-aligned header: 6 pages, the last in part
    let bytes = B::le().header(3, 1, 0).tensor("t", &[5 * PAGE as u64], 24, 0).pad(32).data(5 * PAGE, 3).bytes();
    let dir = temp_dir();
    let path = dir.path().join("m.gguf");
    std::fs::write(&path, &bytes).unwrap();
    let g = Gguf::open(&path).unwrap();
    let map = g.bytes();
    assert_eq!(map.len(), bytes.len());
    let present = |i: usize| {
        let addr = map.as_ptr() as usize + i * PAGE;
        let mut entry = [0u8; 8];
        pagemap.read_exact_at(&mut entry, (addr / PAGE * 8) as u64).unwrap();
        u64::from_ne_bytes(entry) >> 63 == 1
    };
    let pages = bytes.len().div_ceil(PAGE);
    let sum = (0..pages).map(|i| std::hint::black_box(map[i * PAGE])).fold(0u8, u8::wrapping_add);
    std::hint::black_box(sum);
    assert_eq!((0..pages).map(present).collect::<Vec<_>>(), vec![true; pages], "pages mapped after reading them");
    g.source().release(100..3 * PAGE + 5);
    let want: Vec<bool> = (0..pages).map(|i| !(1..3).contains(&i)).collect();
    assert_eq!((0..pages).map(present).collect::<Vec<_>>(), want, "pages mapped after the release");
    assert!(g.bytes() == bytes, "the bytes read again");
}
