//! The direct-I/O path of [`AtomicFile`] against the page-cache path and an in-memory writer:
//! the same bytes for every layout around the block and buffer boundaries, the fall-back when a
//! direct write is refused, and nothing left behind after an I/O error.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::path::Path;

use super::{hook, CHUNK};
use crate::{AtomicFile, GgmlType, GgufWriter};

/// A GGUF of tensors of `sizes` bytes (I8), whose header and padding end at exactly
/// `header_end` bytes (alignment 1, so nothing pads it further; at least the smallest header),
/// the data of each tensor given in pieces of `piece` bytes; written to `w`.
fn build<W: std::io::Write>(w: &mut GgufWriter<W>, header_end: usize, sizes: &[usize], piece: usize) {
    w.add_kv("general.alignment", 1u32).unwrap();
    let fixed = {
        // the header without the filler string: computed by writing it with an empty filler
        let mut header = Vec::new();
        let mut probe = GgufWriter::new(&mut header);
        probe.add_kv("general.alignment", 1u32).unwrap();
        probe.add_kv("filler", "").unwrap();
        for (i, &n) in sizes.iter().enumerate() {
            probe.add_tensor(&format!("t{i}"), GgmlType::I8, &[n as u64]).unwrap();
        }
        probe.write_header().unwrap();
        drop(probe);
        header.len()
    };
    let fill = header_end.checked_sub(fixed).expect("header_end below the smallest header");
    w.add_kv("filler", "x".repeat(fill)).unwrap();
    for (i, &n) in sizes.iter().enumerate() {
        w.add_tensor(&format!("t{i}"), GgmlType::I8, &[n as u64]).unwrap();
    }
    for (i, &n) in sizes.iter().enumerate() {
        let data: Vec<u8> = (0..n).map(|j| (j.wrapping_mul(31).wrapping_add(i * 7) >> 3) as u8).collect();
        let mut dw = w.tensor_data_writer().unwrap();
        for p in data.chunks(piece.max(1)) {
            dw.write(p).unwrap();
        }
        dw.finish().unwrap();
    }
}

/// The file [`build`] writes to `path` through an [`AtomicFile`], direct I/O tried or not;
/// returns whether the bytes still went directly at the end, and the direct writes made.
fn write_file(path: &Path, direct: bool, header_end: usize, sizes: &[usize], piece: usize) -> (bool, usize) {
    hook::plan(Vec::new());
    let mut w = GgufWriter::new(AtomicFile::with_direct_io(path, direct).unwrap());
    build(&mut w, header_end, sizes, piece);
    let f = w.finish().unwrap();
    let was_direct = f.is_direct();
    f.commit().unwrap();
    (was_direct, hook::count())
}

fn in_memory(header_end: usize, sizes: &[usize], piece: usize) -> Vec<u8> {
    let mut w = GgufWriter::new(Vec::new());
    build(&mut w, header_end, sizes, piece);
    w.finish().unwrap()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// The layouts: headers ending just before, at and after a block boundary, tensor data not a
/// multiple of the block, a file smaller than one block, and files crossing the 8 MiB buffer.
fn layouts() -> Vec<(usize, Vec<usize>, usize)> {
    vec![
        (200, vec![100], 7),                 // smaller than one block
        (4095, vec![1], 1),                  // one byte short of a block... plus one
        (4095, vec![5000, 3], 4096),         // header one short of a block
        (4096, vec![5000, 8192, 1], 1000),   // header exactly a block
        (4097, vec![4095, 4097], 333),       // header one past a block
        (8191, vec![CHUNK - 8191], 1 << 20), // exactly the buffer
        (4096, vec![CHUNK + 123, 4096 * 3 + 5, 77], (3 << 20) + 1),
    ]
}

#[test]
fn direct_and_buffered_outputs_are_byte_identical() {
    let dir = gguf_test_support::temp_dir();
    let mut any_direct = false;
    for (k, (header_end, sizes, piece)) in layouts().into_iter().enumerate() {
        let want = in_memory(header_end, &sizes, piece);
        let (d, b) = (dir.path().join(format!("direct{k}.gguf")), dir.path().join(format!("buffered{k}.gguf")));
        let (direct, writes) = write_file(&d, true, header_end, &sizes, piece);
        let (buffered, no_writes) = write_file(&b, false, header_end, &sizes, piece);
        assert!(!buffered && no_writes == 0, "layout {k}: the buffered path made direct writes");
        let (got_d, got_b) = (std::fs::read(&d).unwrap(), std::fs::read(&b).unwrap());
        assert_eq!(got_b.len(), want.len(), "layout {k}");
        assert!(got_b == want, "layout {k}: the buffered file differs from the in-memory writer's bytes");
        assert!(got_d == got_b, "layout {k}: the direct file differs from the buffered one");
        // whole blocks went directly when the file has any (the test folder is on a disk)
        if direct && want.len() >= 4096 {
            assert!(writes > 0, "layout {k}: no direct write");
        }
        any_direct |= direct;
    }
    // The test folder (on the target's disk) takes direct I/O on Linux.
    if cfg!(target_os = "linux") {
        assert!(any_direct, "no layout was written with direct I/O");
    }
    assert_eq!(entries(dir.path()).len(), 2 * layouts().len(), "a temporary file was left");
}

#[test]
#[cfg(target_os = "linux")]
fn the_direct_part_of_the_output_is_not_left_in_the_page_cache() {
    let dir = gguf_test_support::temp_dir();
    let path = dir.path().join("cold.gguf");
    let sizes = [3 * CHUNK + 5];
    let (direct, _) = write_file(&path, true, 4096, &sizes, 1 << 20);
    if !direct {
        return; // a file system without direct I/O: nothing to check
    }
    let (cached, total) = resident_pages(&path);
    // only the buffered tail (one page) may be cached
    assert!(cached <= 1, "{cached} of {total} pages in the page cache");
    let path2 = dir.path().join("warm.gguf");
    write_file(&path2, false, 4096, &sizes, 1 << 20);
    let (cached, total) = resident_pages(&path2);
    assert!(cached > total / 2, "the buffered path left only {cached} of {total} pages cached");
}

/// Pages of `path` in the page cache (the kernel's `mincore` of a mapping), and its pages.
#[cfg(target_os = "linux")]
fn resident_pages(path: &Path) -> (usize, usize) {
    let file = std::fs::File::open(path).unwrap();
    // SAFETY: a read-only mapping of a file that no one changes during the test.
    let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
    let pages = map.len().div_ceil(4096);
    let mut vec = vec![0u8; pages];
    // SAFETY: the mapping is `map.len()` bytes from a page-aligned address, and `vec` holds one
    // byte per 4096-byte page of it (the page size here; a larger one needs fewer bytes).
    let rc = unsafe { libc::mincore(map.as_ptr() as *mut libc::c_void, map.len(), vec.as_mut_ptr()) };
    assert_eq!(rc, 0, "mincore: {}", std::io::Error::last_os_error());
    (vec.iter().filter(|&&b| b & 1 != 0).count(), pages)
}

#[test]
#[cfg(target_os = "linux")]
fn a_refused_direct_write_falls_back_to_the_page_cache() {
    let dir = gguf_test_support::temp_dir();
    // refused at the first write (of the first full buffer, or at commit for a small file) and
    // at a later one
    let plans: [Vec<Option<i32>>; 3] = [vec![Some(libc::EINVAL)], vec![None, Some(libc::EINVAL)], vec![None, None]];
    for (k, (header_end, sizes, piece)) in layouts().into_iter().enumerate() {
        let want = in_memory(header_end, &sizes, piece);
        for (p, plan) in plans.iter().enumerate() {
            let path = dir.path().join(format!("f{k}-{p}.gguf"));
            let f = AtomicFile::with_direct_io(&path, true).unwrap();
            if !f.is_direct() {
                return; // no direct I/O here: the page-cache path is the one tested above
            }
            let mut w = GgufWriter::new(f);
            hook::plan(plan.clone());
            build(&mut w, header_end, &sizes, piece);
            let f = w.finish().unwrap();
            let refused = plan.iter().position(Option::is_some).is_some_and(|at| hook::count() > at);
            // a refusal before commit went on through the page cache
            assert_eq!(f.is_direct(), !refused, "layout {k}, plan {p}");
            f.commit().unwrap();
            assert!(std::fs::read(&path).unwrap() == want, "layout {k}, plan {p}: wrong bytes");
        }
    }
    assert_eq!(entries(dir.path()).len(), 3 * layouts().len(), "a temporary file was left");
}

#[test]
#[cfg(target_os = "linux")]
fn an_io_error_of_a_direct_write_leaves_nothing() {
    let dir = gguf_test_support::temp_dir();
    let path = dir.path().join("model.gguf");
    std::fs::write(&path, b"the old file").unwrap();
    // EIO mid-write (the first or second buffer), and at commit (a file of less than a buffer,
    // and the last blocks of a larger one)
    for (sizes, plan) in [
        (vec![3 * CHUNK], vec![None, Some(libc::EIO)]),
        (vec![CHUNK + 1], vec![Some(libc::EIO)]),
        (vec![CHUNK / 2], vec![Some(libc::EIO)]),
        (vec![2 * CHUNK + 8192], vec![None, None, Some(libc::EIO)]),
    ] {
        let f = AtomicFile::with_direct_io(&path, true).unwrap();
        if !f.is_direct() {
            return;
        }
        let mut w = GgufWriter::new(f);
        hook::plan(plan);
        w.add_tensor("t", GgmlType::I8, &[sizes[0] as u64]).unwrap();
        let data = vec![0x5au8; sizes[0]];
        let result = w.write_tensor_data(&data).and_then(|()| w.commit());
        let e = result.expect_err(&format!("{sizes:?}"));
        match e.kind() {
            crate::ErrorKind::Io(io) => assert_eq!(io.raw_os_error(), Some(libc::EIO), "{e}"),
            _ => panic!("not the I/O error: {e}"),
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"the old file");
        assert_eq!(entries(dir.path()), ["model.gguf"], "a temporary file was left");
    }
}

#[test]
fn shared_memory_output_is_byte_identical() {
    // tmpfs takes direct I/O from Linux 6.6 on; either way the bytes are the same
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        return;
    }
    let Ok(dir) = tempfile::Builder::new().prefix("gguf-test-").tempdir_in(shm) else { return };
    let (header_end, sizes, piece) = (4097, vec![CHUNK + 4095, 3], 65536);
    let want = in_memory(header_end, &sizes, piece);
    let path = dir.path().join("shm.gguf");
    write_file(&path, true, header_end, &sizes, piece);
    assert!(std::fs::read(&path).unwrap() == want);
}
