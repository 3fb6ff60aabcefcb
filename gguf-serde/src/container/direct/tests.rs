//! The direct-I/O path of [`AtomicFile`] against the page-cache path and an in-memory writer:
//! the same bytes for every layout around the block and buffer boundaries, the fall-back when a
//! direct write is refused, and nothing left behind after an I/O error; with writes in flight on
//! the I/O thread (held there by [`hook::hold`]): errors and refusals of a later write, a writer
//! dropped mid-file, and the limit of [`BUFFERS`] buffers.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use super::{hook, usable_alignment, DirectWriter, BUFFERS, CHUNK, IO_THREADS};
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
/// multiple of the block, a file smaller than one block, files crossing one buffer, ending just
/// before and after two, and one longer than every buffer of the writer together (buffers
/// reused).
fn layouts() -> Vec<(usize, Vec<usize>, usize)> {
    vec![
        (200, vec![100], 7),                 // smaller than one block
        (4095, vec![1], 1),                  // one byte short of a block... plus one
        (4095, vec![5000, 3], 4096),         // header one short of a block
        (4096, vec![5000, 8192, 1], 1000),   // header exactly a block
        (4097, vec![4095, 4097], 333),       // header one past a block
        (8191, vec![CHUNK - 8191], 1 << 20), // exactly the buffer
        (4096, vec![CHUNK + 123, 4096 * 3 + 5, 77], (3 << 20) + 1),
        (4096, vec![2 * CHUNK - 4097], 1 << 20),       // 2 buffers less a byte
        (4097, vec![2 * CHUNK - 4096], (1 << 20) + 7), // 2 buffers and a byte
        (8191, vec![BUFFERS * CHUNK, CHUNK + 1], (5 << 20) + 3), // more than every buffer
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

/// A file system that takes `O_DIRECT` but does not report its direct-I/O alignment (`statx`
/// without `STATX_DIOALIGN` in its answer's mask: every file system before Linux 6.1, tmpfs still)
/// gets direct I/O tried at the page size, not refused (`dio_alignment`): here a tmpfs, the one
/// at `/dev/shm` (skipped where there is none, it refuses `O_DIRECT`, as before Linux 6.6, or it
/// reports an alignment), written byte for byte as the in-memory writer writes.
#[test]
#[cfg(target_os = "linux")]
fn direct_io_is_tried_where_the_file_system_does_not_report_its_alignment() {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(dir) = tempfile::Builder::new().prefix("gguf-test-").tempdir_in("/dev/shm") else {
        gguf_test_support::skip("no /dev/shm to write to");
        return;
    };
    let probe = dir.path().join("probe");
    std::fs::write(&probe, b"").unwrap();
    let Ok(file) = std::fs::OpenOptions::new().write(true).custom_flags(libc::O_DIRECT).open(&probe) else {
        gguf_test_support::skip("/dev/shm refuses O_DIRECT");
        return;
    };
    // SAFETY: all-zero bytes are a valid `statx` (integers only).
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: an empty NUL-terminated path with AT_EMPTY_PATH names the open descriptor; `stx`
    // is writable and outlives the call.
    let rc =
        unsafe { libc::statx(file.as_raw_fd(), c"".as_ptr(), libc::AT_EMPTY_PATH, libc::STATX_DIOALIGN, &mut stx) };
    assert_eq!(rc, 0, "statx: {}", std::io::Error::last_os_error());
    if stx.stx_mask & libc::STATX_DIOALIGN != 0 {
        gguf_test_support::skip("/dev/shm reports its direct-I/O alignment");
        return;
    }
    let (header_end, sizes, piece) = (4096, [3 * CHUNK + 5], 1000);
    let path = dir.path().join("model.gguf");
    let (direct, writes) = write_file(&path, true, header_end, &sizes, piece);
    assert!(direct && writes > 0, "direct I/O was not used: direct {direct}, {writes} direct writes");
    assert!(std::fs::read(&path).unwrap() == in_memory(header_end, &sizes, piece));
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
    // at a later one (the second, and the fourth, which the layouts larger than the buffers make
    // while others are in flight)
    let plans: [Vec<Option<i32>>; 4] = [
        vec![Some(libc::EINVAL)],
        vec![None, Some(libc::EINVAL)],
        vec![None, None],
        vec![None, None, None, Some(libc::EINVAL)],
    ];
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
    assert_eq!(entries(dir.path()).len(), plans.len() * layouts().len(), "a temporary file was left");
}

#[test]
#[cfg(target_os = "linux")]
fn an_io_error_of_a_direct_write_leaves_nothing() {
    let dir = gguf_test_support::temp_dir();
    let path = old_file(dir.path());
    // EIO mid-write (the first or second buffer), and at commit (a file of less than a buffer,
    // and the last blocks of a larger one)
    for (sizes, plan) in [
        (vec![3 * CHUNK], vec![None, Some(libc::EIO)]),
        (vec![CHUNK + 1], vec![Some(libc::EIO)]),
        (vec![CHUNK / 2], vec![Some(libc::EIO)]),
        (vec![2 * CHUNK + 8192], vec![None, None, Some(libc::EIO)]),
        // the second and the third of more than the writer's buffers
        (vec![(BUFFERS + 2) * CHUNK], vec![None, Some(libc::EIO)]),
        (vec![(BUFFERS + 2) * CHUNK], vec![None, None, Some(libc::EIO), None, Some(libc::EIO)]),
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
        assert_untouched(&path);
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

/// `n` bytes of a pattern that differs at every offset of a block and from block to block.
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i ^ (i >> 12) ^ (i >> 20)).wrapping_mul(131) as u8).collect()
}

/// Runs `f` on a thread of its own (the hook is per thread), failing after two minutes (a hang).
fn within_deadline(f: impl FnOnce() + Send + 'static) {
    gguf_test_support::with_deadline(Duration::from_secs(120), f);
}

/// A new [`AtomicFile`] for `path` written with direct I/O; `None`, the test skipped, where the
/// test folder has no direct I/O.
fn direct_file(path: &Path) -> Option<AtomicFile> {
    let f = AtomicFile::with_direct_io(path, true).unwrap();
    if !f.is_direct() {
        gguf_test_support::skip("no direct I/O in the test folder");
        return None;
    }
    Some(f)
}

/// Writes `bytes` (three buffers) to `f` with the direct writes held back, checks that the three
/// are in flight together, and lets them go on.
fn write_held(f: &mut AtomicFile, bytes: &[u8]) {
    assert_eq!(bytes.len(), 3 * CHUNK);
    hook::hold();
    f.write_all(bytes).unwrap();
    assert_eq!(f.direct_writer().map(|d| d.in_flight), Some(3), "writes in flight");
    hook::release();
}

/// A file `model.gguf` in `dir`, for a write that must leave it as it is ([`assert_untouched`]).
fn old_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("model.gguf");
    std::fs::write(&path, b"the old file").unwrap();
    path
}

/// Checks that the file of [`old_file`] is unchanged and alone in its folder.
fn assert_untouched(path: &Path) {
    assert_eq!(std::fs::read(path).unwrap(), b"the old file");
    assert_eq!(entries(path.parent().unwrap()), ["model.gguf"], "a temporary file was left");
}

/// Checks that no I/O thread or buffer of this thread's writers is left.
fn assert_all_gone() {
    assert_eq!((hook::live_threads(), hook::live_buffers()), (0, 0), "a thread or buffer outlived its writer");
}

/// Writes `bytes` to `d` until a call fails, and returns that error (`None` if none did).
fn write_until_error(d: &mut DirectWriter, mut bytes: &[u8]) -> Option<std::io::Error> {
    while !bytes.is_empty() {
        match d.write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) => return Some(e),
        }
    }
    None
}

/// Bytes given in small pieces go to the disk a full buffer at a time (the module's docs): 3
/// buffers' worth in pieces of 1000 bytes are 3 direct writes of [`CHUNK`] bytes, not one per
/// few blocks; the file is the bytes given.
#[test]
#[cfg(target_os = "linux")]
fn pieces_go_to_the_disk_a_full_buffer_at_a_time() {
    within_deadline(|| {
        let dir = gguf_test_support::temp_dir();
        let Ok(mut d) = DirectWriter::new(std::fs::File::create(dir.path().join("f")).unwrap()) else {
            return gguf_test_support::skip("no direct I/O in the test folder");
        };
        hook::plan(Vec::new());
        let data = pattern(3 * CHUNK);
        assert!(data.chunks(1000).all(|piece| write_until_error(&mut d, piece).is_none()));
        d.flush().unwrap();
        assert_eq!((hook::count(), d.on_file()), (3, 3 * CHUNK as u64), "direct writes, bytes handed");
        drop(d.finish().unwrap());
        assert!(std::fs::read(dir.path().join("f")).unwrap() == data);
    });
}

/// The error of a write already handed back is reported by the very next call, which takes none
/// of its bytes (`DirectWriter::write`'s docs), not only when the writer next waits for a buffer.
#[test]
#[cfg(target_os = "linux")]
fn the_error_of_a_write_handed_back_is_reported_by_the_next_call() {
    within_deadline(|| {
        let dir = gguf_test_support::temp_dir();
        let file = std::fs::File::create(dir.path().join("f")).unwrap();
        let Ok(mut d) = DirectWriter::new(file) else {
            return gguf_test_support::skip("no direct I/O in the test folder");
        };
        hook::plan(vec![Some(libc::EIO)]);
        assert_eq!(d.write(&pattern(CHUNK)).unwrap(), CHUNK);
        hook::wait_handed_back(1);
        let e = d.write(b"more").expect_err("the next call after the failed write");
        assert_eq!(e.raw_os_error(), Some(libc::EIO), "{e}");
        assert_eq!(d.on_file(), CHUNK as u64);
        assert!(d.finish().is_err());
        assert_all_gone();
    });
}

/// `finish` with a failed direct write in flight: a refusal (`EINVAL`) is passed over, the refused
/// bytes written again through the page cache (the file is the bytes written); an I/O error is
/// reported as that write's own error, not as the writer having failed before (`finish`'s docs:
/// as `into_buffered`, the first error of a write other than a refusal).
#[test]
#[cfg(target_os = "linux")]
fn finish_passes_over_a_refusal_and_reports_an_io_error_of_a_write_in_flight() {
    within_deadline(|| {
        let dir = gguf_test_support::temp_dir();
        let data = pattern(CHUNK);
        for errno in [libc::EINVAL, libc::EIO] {
            let path = dir.path().join(format!("f{errno}"));
            let Ok(mut d) = DirectWriter::new(std::fs::File::create(&path).unwrap()) else {
                return gguf_test_support::skip("no direct I/O in the test folder");
            };
            hook::plan(vec![Some(errno)]);
            // a full buffer: handed to the I/O thread at once, its error met by `finish`
            assert_eq!(d.write(&data).unwrap(), CHUNK);
            match d.finish() {
                Ok(file) if errno == libc::EINVAL => {
                    drop(file);
                    assert!(std::fs::read(&path).unwrap() == data, "the refused bytes were not written again");
                }
                Err(e) if errno == libc::EIO => assert_eq!(e.raw_os_error(), Some(libc::EIO), "{e}"),
                r => panic!("errno {errno}: {r:?}"),
            }
        }
        assert_all_gone();
    });
}

#[test]
#[cfg(target_os = "linux")]
fn an_io_error_of_the_second_or_third_write_in_flight_is_reported_by_a_later_call() {
    within_deadline(|| {
        let dir = gguf_test_support::temp_dir();
        let data = pattern(3 * CHUNK);
        // (the write that fails, whether the error is awaited by `flush` or met by `write`)
        for (fail_at, by_flush) in [(1, true), (2, true), (1, false), (2, false)] {
            let file = std::fs::File::create(dir.path().join(format!("f{fail_at}{by_flush}"))).unwrap();
            let Ok(mut d) = DirectWriter::new(file) else {
                return gguf_test_support::skip("no direct I/O in the test folder");
            };
            let mut plan = vec![None; fail_at];
            plan.push(Some(libc::EIO));
            hook::plan(plan);
            hook::hold();
            // three full buffers: each goes to the I/O thread as it fills, and is held there
            assert!(write_until_error(&mut d, &data).is_none());
            assert_eq!((d.in_flight, d.buffers, hook::count()), (3, BUFFERS, 3), "fail at {fail_at}");
            assert_eq!(d.on_file(), 3 * CHUNK as u64);
            hook::release();
            let e = if by_flush {
                d.flush().expect_err("flush after a failed write")
            } else {
                // the writer waits for a buffer at the latest when the fourth is full, so the
                // error is met within the next buffers
                write_until_error(&mut d, &pattern(BUFFERS * CHUNK)).expect("no write reported the error")
            };
            assert_eq!(e.raw_os_error(), Some(libc::EIO), "fail at {fail_at}: {e}");
            // every later call fails
            assert!(d.write(b"more").is_err());
            assert!(d.flush().is_err());
            assert!(d.finish().is_err());
        }
        assert_all_gone();
    });
}

#[test]
#[cfg(target_os = "linux")]
fn a_refusal_with_other_writes_in_flight_rewrites_the_refused_bytes_through_the_page_cache() {
    within_deadline(|| {
        let dir = gguf_test_support::temp_dir();
        let data = pattern(5 * CHUNK + 12_345);
        let refuse = Some(libc::EINVAL);
        // the refused writes among three in flight: the second, the third, both, the first
        let plans = [vec![None, refuse, None], vec![None, None, refuse], vec![None, refuse, refuse], vec![refuse]];
        for (p, plan) in plans.into_iter().enumerate() {
            let path = dir.path().join(format!("f{p}.gguf"));
            let Some(mut f) = direct_file(&path) else { return };
            hook::plan(plan);
            write_held(&mut f, &data[..3 * CHUNK]);
            for piece in data[3 * CHUNK..].chunks((1 << 20) + 1) {
                f.write_all(piece).unwrap();
            }
            f.flush().unwrap();
            assert!(!f.is_direct(), "plan {p}: still direct after a refusal");
            f.commit().unwrap();
            assert!(std::fs::read(&path).unwrap() == data, "plan {p}: wrong bytes");
        }
        assert_eq!(entries(dir.path()).len(), 4, "a temporary file was left");
        assert_all_gone();
    });
}

#[test]
#[cfg(target_os = "linux")]
fn an_io_error_beside_a_refusal_leaves_nothing() {
    within_deadline(|| {
        let dir = gguf_test_support::temp_dir();
        let path = old_file(dir.path());
        let data = pattern(3 * CHUNK + 5);
        // the refusal comes first (the fall-back then waits for the rest), or after the error
        for plan in [vec![None, Some(libc::EINVAL), Some(libc::EIO)], vec![Some(libc::EIO), Some(libc::EINVAL)]] {
            let Some(mut f) = direct_file(&path) else { return };
            hook::plan(plan.clone());
            write_held(&mut f, &data[..3 * CHUNK]);
            let e = f.write_all(&data[3 * CHUNK..]).and_then(|()| f.flush()).expect_err(&format!("{plan:?}"));
            assert_eq!(e.raw_os_error(), Some(libc::EIO), "{plan:?}: {e}");
            drop(f);
            assert_untouched(&path);
        }
    });
}

/// Writes [`BUFFERS`] buffers and 100 bytes to a new direct file `model.gguf` in `dir`, the
/// direct writes as `plan` says and held until the writer waits for a buffer (the hook then lets
/// them go on), and checks that it waited once; returns the file, not committed, its path, the
/// bytes and the result of writing them (`None`, the test skipped, where the test folder has no
/// direct I/O).
fn write_until_a_buffer_wait(
    dir: &Path,
    plan: Vec<Option<i32>>,
) -> Option<(AtomicFile, std::path::PathBuf, Vec<u8>, std::io::Result<()>)> {
    let path = dir.join("model.gguf");
    let data = pattern(BUFFERS * CHUNK + 100);
    let mut f = direct_file(&path)?;
    hook::plan(plan);
    hook::hold();
    hook::release_when_waiting_for_a_buffer();
    let result = f.write_all(&data);
    assert_eq!(hook::buffer_waits(), 1, "waits for a buffer");
    Some((f, path, data, result))
}

/// At most [`BUFFERS`] buffers (`BUFFERS * CHUNK` bytes of memory) whatever the output: with all
/// of them in use, the writer waits for one to come back. With the writes held, four buffers are
/// full and sent and 100 bytes remain: the writer waits (the hook then lets the writes go on)
/// rather than allocate a fifth, and the file is the bytes written.
#[test]
#[cfg(target_os = "linux")]
fn a_writer_waits_for_a_buffer_rather_than_allocate_more_than_its_limit() {
    within_deadline(|| {
        let dir = gguf_test_support::temp_dir();
        let Some((f, path, data, result)) = write_until_a_buffer_wait(dir.path(), Vec::new()) else { return };
        result.unwrap();
        assert_eq!(hook::live_buffers(), BUFFERS, "buffers");
        f.commit().unwrap();
        assert!(std::fs::read(&path).unwrap() == data);
        assert_all_gone();
    });
}

/// An error that comes back while the writer waits for a buffer stops the direct writes there
/// (`take_buffer`'s docs: `None` when an error is pending; `submit` then hands nothing): with the
/// writes held, three buffers sent and the fourth full,
/// - all three refused: the writer stops waiting at the first refusal rather than wait for the
///   other two and find no buffer left (an error of its own, not a refusal); the next call
///   reports `EINVAL`, the caller goes on through the page cache and the file is the bytes
///   written;
/// - the first failing with `EIO`: no fourth direct write, the next call reports `EIO`, and the
///   old file is left as it was.
#[test]
#[cfg(target_os = "linux")]
fn an_error_met_waiting_for_a_buffer_stops_the_direct_writes() {
    within_deadline(|| {
        let dir = gguf_test_support::temp_dir();
        let refused = vec![Some(libc::EINVAL); BUFFERS - 1];
        let Some((f, path, data, result)) = write_until_a_buffer_wait(dir.path(), refused) else { return };
        result.unwrap();
        assert!(!f.is_direct(), "still direct after the refusals");
        f.commit().unwrap();
        assert!(std::fs::read(&path).unwrap() == data, "wrong bytes");

        let dir = gguf_test_support::temp_dir();
        let path = old_file(dir.path());
        let Some((f, _, _, result)) = write_until_a_buffer_wait(dir.path(), vec![Some(libc::EIO)]) else { return };
        let e = result.expect_err("the write after the failed one");
        assert_eq!((e.raw_os_error(), hook::count()), (Some(libc::EIO), BUFFERS - 1), "error, direct writes: {e}");
        drop(f);
        assert_untouched(&path);
        assert_all_gone();
    });
}

/// A file that refuses `O_DIRECT` is given back for the page-cache path: `fcntl(F_SETFL)` with
/// `O_DIRECT` fails with `EINVAL` where the file does not support direct I/O (fcntl(2)), as
/// `/dev/null` does (a character device), and `DirectWriter::new` is then [`Refused`](super::Refused).
#[test]
#[cfg(target_os = "linux")]
fn a_file_that_refuses_o_direct_is_given_back() {
    let open = || std::fs::OpenOptions::new().write(true).open("/dev/null").unwrap();
    let e = super::set_direct(&open(), true).expect_err("O_DIRECT on /dev/null");
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{e}");
    assert!(DirectWriter::new(open()).is_err(), "a direct writer on /dev/null");
    assert_all_gone();
}

#[test]
#[cfg(target_os = "linux")]
fn dropping_a_writer_mid_file_stops_its_thread_and_frees_its_buffers() {
    within_deadline(|| {
        let dir = gguf_test_support::temp_dir();
        let path = old_file(dir.path());
        let data = pattern(3 * CHUNK + 100);
        let Some(mut f) = direct_file(&path) else { return };
        hook::plan(Vec::new());
        hook::hold();
        f.write_all(&data).unwrap();
        assert_eq!(f.direct_writer().map(|d| d.in_flight), Some(3));
        assert_eq!((hook::live_threads(), hook::live_buffers()), (IO_THREADS, BUFFERS));
        // the writes are still held: the drop does not wait for them
        drop(f);
        assert_all_gone();
        hook::release();
        assert_untouched(&path);
    });
}

/// The alignment used from what `statx` reports (statx(2): `stx_dio_offset_align` 0 means no
/// direct I/O): the larger of the offset and memory alignments, at least a page (4096), used
/// only as a power of two of at most 64 KiB; the page size where the kernel reports nothing.
#[test]
fn the_alignment_used_is_a_power_of_two_from_a_page_to_64_kib() {
    // (stx_dio_offset_align, stx_dio_mem_align) reported, alignment used
    let cases = [
        (None, Some(4096)),
        (Some((0, 0)), None),
        (Some((0, 512)), None),
        (Some((512, 512)), Some(4096)),
        (Some((512, 4)), Some(4096)),
        (Some((4096, 8)), Some(4096)),
        (Some((8192, 512)), Some(8192)),
        (Some((512, 16384)), Some(16384)),
        (Some((65536, 4)), Some(65536)),
        (Some((131_072, 512)), None),
        (Some((512, 131_072)), None),
        (Some((12288, 512)), None),
        (Some((4096, 12288)), None),
        (Some((1 << 31, 0)), None),
    ];
    for (reported, want) in cases {
        assert_eq!(usable_alignment(reported), want, "reported {reported:?}");
    }
}

/// After a refused direct write, the file goes on through the page cache with early writeback
/// ([`Writeback`](crate::container::atomic::Writeback)) counted from where the direct writes
/// ended (what is on the file: those bytes are not in the page cache to be written back), each
/// request from the end of the last.
#[test]
#[cfg(target_os = "linux")]
fn after_a_fall_back_early_writeback_starts_where_the_direct_writes_ended() {
    within_deadline(|| {
        use crate::container::atomic::hook::{take, Synced};
        let dir = gguf_test_support::temp_dir();
        let Some(mut f) = direct_file(&dir.path().join("f")) else { return };
        hook::plan(vec![None, Some(libc::EINVAL)]);
        take();
        let piece = pattern(1 << 20);
        let mut fell_back_at = None;
        let mut left = 60 * piece.len();
        while left > 0 {
            let on_file = f.direct_writer().map(DirectWriter::on_file);
            let n = f.write(piece.get(..left.min(piece.len())).unwrap()).unwrap();
            left -= n;
            if !f.is_direct() && fell_back_at.is_none() {
                fell_back_at = Some(on_file.expect("the first write is direct"));
            }
        }
        let start = fell_back_at.expect("the second direct write is refused");
        assert!(start >= CHUNK as u64 && start % CHUNK as u64 == 0, "fell back at {start}");
        let requests = take();
        assert!(!requests.is_empty(), "no early writeback after {start} bytes on the file");
        let mut next = start;
        for r in &requests {
            let Synced::Writeback { offset, len } = *r else { panic!("{r:?}") };
            assert_eq!(offset, next, "requests {requests:?}");
            assert!(len >= 32 << 20, "requests {requests:?}");
            next = offset + len;
        }
        assert!(60 * (1 << 20) - next < 32 << 20, "requests {requests:?} of 60 MiB");
    });
}

/// A buffer debugs as its name only, not its `CHUNK` bytes: the writer's `Debug` (and so an
/// `AtomicFile`'s) stays a few lines, whatever the buffers hold.
#[test]
fn a_buffer_debugs_as_its_name_only() {
    let b = super::Buffer::new(4096).unwrap();
    assert_eq!(format!("{b:?}"), "Buffer");
}
