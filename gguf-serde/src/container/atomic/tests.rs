//! The two temporary files of [`AtomicFile`] (unnamed with `O_TMPFILE`, named, the latter also
//! committed through `rename_noreplace`'s fall-backs): nothing in the folder before the commit, a
//! target created meanwhile replaced only when asked, the mode of a replaced file kept.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::io::Write;
use std::os::unix::fs::PermissionsExt;

use super::fallback::{NO_HARD_LINKS, NO_RENAME_NOREPLACE};
use super::hook::{self, Synced};
use super::unnamed::{NAMED_ONLY, TMPFILE_ERRNO};
use super::{create_temp_file, persist_all};
use crate::container::IfExists;
use crate::AtomicFile;

/// The entries of `dir`, sorted.
fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// With [`IfExists::Fail`], a file created at the target while the write ran stays, and the
/// commit fails with `AlreadyExists`, leaving nothing else; with [`IfExists::Replace`], the file
/// is replaced and keeps the mode of the file it replaces. Each way of [`with_each_temporary`],
/// with the same error (the kind of temporary and whether the file system has `RENAME_NOREPLACE`
/// and hard links are not the caller's choice).
#[test]
fn a_file_created_during_the_write_is_replaced_only_when_asked() {
    let refusals = std::cell::RefCell::new(Vec::new());
    with_each_temporary(|dir, how| {
        let target = dir.join("out.gguf");
        let mut f = AtomicFile::create(&target, IfExists::Fail).unwrap();
        f.write_all(&[7u8; 100_000]).unwrap();
        std::fs::write(&target, "precious").unwrap();
        let e = f.commit().unwrap_err();
        let io = e.as_io().unwrap_or_else(|| panic!("{how}: {e}"));
        assert_eq!(io.kind(), std::io::ErrorKind::AlreadyExists, "{how}: {e}");
        assert!(e.to_string().contains(&target.display().to_string()), "{how}: {e}");
        refusals.borrow_mut().push(e.to_string().replace(&dir.display().to_string(), "DIR"));
        assert_eq!(std::fs::read(&target).unwrap(), b"precious", "{how}");
        assert_eq!(entries(dir), ["out.gguf"], "{how}");

        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut f = AtomicFile::create(&target, IfExists::Replace).unwrap();
        f.write_all(&[7u8; 100_000]).unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), vec![7u8; 100_000], "{how}");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{how}");
        assert_eq!(entries(dir), ["out.gguf"], "{how}");

        // a new file, not replacing: created
        let new = dir.join("new.gguf");
        let mut f = AtomicFile::create(&new, IfExists::Fail).unwrap();
        f.write_all(b"GGUF").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&new).unwrap(), b"GGUF", "{how}");
        assert_eq!(entries(dir), ["new.gguf", "out.gguf"], "{how}");
    });
    let refusals = refusals.into_inner();
    assert!(refusals.len() == 4 && refusals.iter().all(|r| *r == refusals[0]), "{refusals:?}");
}

/// Runs `test` (given a fresh folder, and how the temporary file is made and committed) with
/// unnamed temporary files (`O_TMPFILE`, where the file system has it), then with named ones:
/// renamed with `RENAME_NOREPLACE` when not replacing, and, through `rename_noreplace`'s hooks,
/// as on a file system without it (hard-linked, then unlinked) and on one without hard links
/// either (checked, then renamed).
fn with_each_temporary(test: impl Fn(&std::path::Path, &str)) {
    let ways = ["unnamed", "named", "named, no RENAME_NOREPLACE", "named, no RENAME_NOREPLACE or hard link"];
    for (i, how) in ways.into_iter().enumerate() {
        NAMED_ONLY.with(|c| c.set(i > 0));
        NO_RENAME_NOREPLACE.with(|c| c.set(i > 1));
        NO_HARD_LINKS.with(|c| c.set(i > 2));
        let tmp = gguf_test_support::temp_dir();
        test(tmp.path(), how);
    }
    NAMED_ONLY.with(|c| c.set(false));
    NO_RENAME_NOREPLACE.with(|c| c.set(false));
    NO_HARD_LINKS.with(|c| c.set(false));
}

/// While an unnamed file is written, the folder holds nothing of it; dropped uncommitted,
/// nothing is left either way.
#[test]
#[cfg(target_os = "linux")]
fn an_unnamed_file_is_not_in_the_folder_until_committed() {
    let tmp = gguf_test_support::temp_dir();
    let dir = tmp.path();
    let target = dir.join("out.gguf");
    let mut f = AtomicFile::new(&target).unwrap();
    f.write_all(&[1u8; 10_000]).unwrap();
    assert_eq!(entries(dir), Vec::<String>::new());
    drop(f);
    assert_eq!(entries(dir), Vec::<String>::new());
}

/// The folder of a target, where its temporary file is made and which is synced after the
/// rename: the path's parent, and `.` for a bare name (relative to the working folder, as the
/// name itself is), whose `Path::parent` is the empty path, which no call can open.
#[test]
fn the_folder_of_a_bare_name_is_the_working_folder() {
    use std::path::Path;
    for (target, want) in [("m.gguf", "."), ("a/m.gguf", "a"), ("./m.gguf", "."), ("/m.gguf", "/"), ("a/b/", "a")] {
        assert_eq!(super::folder(Path::new(target)), Path::new(want), "{target}");
    }
}

/// A named temporary file is `.gguf-tmp-XXXXXX.tmp` in the target's folder while the file is
/// written (the module docs: hidden, and recognizable as ours when a SIGKILL leaves one behind),
/// and is the target after the commit.
#[test]
fn a_named_temporary_is_a_hidden_gguf_tmp_file_until_committed() {
    NAMED_ONLY.with(|c| c.set(true));
    let tmp = gguf_test_support::temp_dir();
    let target = tmp.path().join("out.gguf");
    let mut f = AtomicFile::new(&target).unwrap();
    f.write_all(b"GGUF").unwrap();
    let names = entries(tmp.path());
    NAMED_ONLY.with(|c| c.set(false));
    let [name] = &names[..] else { panic!("one temporary file: {names:?}") };
    let random = name.strip_prefix(".gguf-tmp-").and_then(|n| n.strip_suffix(".tmp"));
    assert!(random.is_some_and(|r| r.len() == 6 && r.bytes().all(|b| b.is_ascii_alphanumeric())), "{name}");
    f.commit().unwrap();
    assert_eq!(entries(tmp.path()), ["out.gguf"]);
    assert_eq!(std::fs::read(&target).unwrap(), b"GGUF");
}

/// With [`IfExists::Fail`], a target that is there when the write starts (a file, or a link to
/// one) is refused then, naming it, before any temporary file is made; the folder is left as it
/// was.
#[test]
fn a_target_there_already_is_refused_before_writing() {
    let tmp = gguf_test_support::temp_dir();
    let dir = tmp.path();
    let file = dir.join("there.gguf");
    std::fs::write(&file, "precious").unwrap();
    let link = dir.join("link.gguf");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    for target in [&file, &link] {
        let e = AtomicFile::create(target, IfExists::Fail).unwrap_err();
        assert_eq!(e.as_io().map(std::io::Error::kind), Some(std::io::ErrorKind::AlreadyExists), "{e}");
        assert!(e.to_string().contains(&target.display().to_string()), "{e}");
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"precious");
    assert_eq!(entries(dir), ["link.gguf", "there.gguf"]);
}

/// Written through a symbolic link (relative, as `ln -s` makes them), the file the link points to
/// is replaced and the link stays a link to it; each way of [`with_each_temporary`].
#[test]
#[cfg(unix)]
fn a_write_through_a_link_replaces_the_file_it_points_to() {
    with_each_temporary(|dir, how| {
        let file = dir.join("real.gguf");
        std::fs::write(&file, "old").unwrap();
        let link = dir.join("link.gguf");
        std::os::unix::fs::symlink("real.gguf", &link).unwrap();
        let mut f = AtomicFile::create(&link, IfExists::Replace).unwrap();
        f.write_all(b"GGUF new").unwrap();
        f.commit().unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "{how}");
        assert_eq!(std::fs::read_link(&link).unwrap(), std::path::Path::new("real.gguf"), "{how}");
        assert_eq!(std::fs::read(&file).unwrap(), b"GGUF new", "{how}");
        assert_eq!(entries(dir), ["link.gguf", "real.gguf"], "{how}");
    });
}

/// [`persist_all`]: when a file is kept at the target of the third of three files written with
/// [`IfExists::Fail`], the two already given their names are removed again, the kept file
/// stays, and the error names the third target (through `context`). Unnamed and named
/// temporaries.
#[test]
fn a_set_renamed_together_leaves_none_of_it_when_one_target_is_kept() {
    with_each_temporary(|dir, how| {
        let targets: Vec<_> = (1..=3).map(|i| dir.join(format!("s-{i}.gguf"))).collect();
        hook::take();
        let sealed: Vec<_> = targets
            .iter()
            .map(|t| {
                let (mut file, pending) = create_temp_file(t, None, false).unwrap();
                file.write_all(b"GGUF shard").unwrap();
                pending.seal_file(file).unwrap()
            })
            .collect();
        std::fs::write(&targets[2], "precious").unwrap();
        let mut named_by_context = Vec::new();
        let e = persist_all(sealed, |e, path| {
            named_by_context.push(path.to_path_buf());
            e
        })
        .unwrap_err();
        assert_eq!(named_by_context, [targets[2].clone()], "{how}");
        assert_eq!(e.as_io().map(std::io::Error::kind), Some(std::io::ErrorKind::AlreadyExists), "{how}: {e}");
        assert!(e.to_string().contains(&targets[2].display().to_string()), "{how}: {e}");
        assert_eq!(std::fs::read(&targets[2]).unwrap(), b"precious", "{how}");
        assert_eq!(entries(dir), ["s-3.gguf"], "{how}");
        // each of the two named synced its folder; their removal is synced too
        let folder = |of: &std::path::PathBuf, present| Synced::Folder { of: of.clone(), present };
        let want = [folder(&targets[0], true), folder(&targets[1], true), folder(&targets[0], false)];
        assert_eq!(hook::take(), want, "{how}");
    });
}

/// [`persist_all`] removes again only the files it named that are still there as it wrote them
/// (the same device and inode): a target given a new file since is left. Here the set renames a
/// first file to `t`, a second one over it (replacing), then fails at a third target that is
/// kept: `t` holds the second file, which is left; the first is gone with it. Unnamed and named
/// temporaries.
#[test]
fn a_set_that_fails_leaves_a_file_that_replaced_one_of_its_own() {
    with_each_temporary(|dir, how| {
        let (t, kept) = (dir.join("t.gguf"), dir.join("kept.gguf"));
        let sealed: Vec<_> = [(&t, false, "first"), (&t, true, "second"), (&kept, false, "third")]
            .into_iter()
            .map(|(target, replace, text)| {
                let (mut file, pending) = create_temp_file(target, None, replace).unwrap();
                file.write_all(text.as_bytes()).unwrap();
                pending.seal_file(file).unwrap()
            })
            .collect();
        std::fs::write(&kept, "precious").unwrap();
        let e = persist_all(sealed, |e, _| e).unwrap_err();
        assert_eq!(e.as_io().map(std::io::Error::kind), Some(std::io::ErrorKind::AlreadyExists), "{how}: {e}");
        assert_eq!(std::fs::read(&t).unwrap(), b"second", "{how}");
        assert_eq!(std::fs::read(&kept).unwrap(), b"precious", "{how}");
        assert_eq!(entries(dir), ["kept.gguf", "t.gguf"], "{how}");
    });
}

/// A commit that cannot give the file its name for another reason than a file there (here the
/// target's folder, removed meanwhile; the temporary file is in another folder) reports that
/// error (`NotFound`), not `AlreadyExists`. Each way of [`with_each_temporary`].
#[test]
fn a_commit_into_a_folder_removed_meanwhile_reports_not_found() {
    with_each_temporary(|dir, how| {
        let (temps, sub) = (dir.join("temps"), dir.join("sub"));
        std::fs::create_dir(&temps).unwrap();
        std::fs::create_dir(&sub).unwrap();
        let (mut file, pending) = create_temp_file(&sub.join("out.gguf"), Some(&temps), false).unwrap();
        file.write_all(b"GGUF").unwrap();
        let sealed = pending.seal_file(file).unwrap();
        std::fs::remove_dir(&sub).unwrap();
        let e = persist_all(vec![sealed], |e, _| e).unwrap_err();
        assert_eq!(e.as_io().map(std::io::Error::kind), Some(std::io::ErrorKind::NotFound), "{how}: {e}");
        assert_eq!(entries(&temps), Vec::<String>::new(), "{how}");
    });
}

/// Without `CAP_DAC_READ_SEARCH` (an unprivileged process), `linkat` with `AT_EMPTY_PATH` refuses
/// a file opened under other credentials with `ENOENT` (linkat(2)): the unnamed file of a write
/// that must not replace is then linked through `/proc/self/fd/N`, and the commit succeeds. The
/// capability is dropped, after the file is opened, from the effective set of a thread of the
/// test's own (capabilities are per thread), so the fallback is tested when run as root too.
#[test]
#[cfg(target_os = "linux")]
fn an_unnamed_file_is_linked_through_proc_self_fd_without_cap_dac_read_search() {
    use std::os::fd::AsRawFd;
    std::thread::spawn(|| {
        let tmp = gguf_test_support::temp_dir();
        let dir = tmp.path();
        let Some(probe) = super::unnamed::open(dir).unwrap() else {
            gguf_test_support::skip("no unnamed files in the test folder");
            return;
        };
        let target = dir.join("out.gguf");
        let mut f = AtomicFile::create(&target, IfExists::Fail).unwrap();
        f.write_all(b"GGUF and more").unwrap();
        drop_effective_capability(CAP_DAC_READ_SEARCH);
        // The first way is refused on this thread now (else this test would not reach the other).
        let to = std::ffi::CString::new(dir.join("probe").into_os_string().into_encoded_bytes()).unwrap();
        // SAFETY: NUL-terminated paths that outlive the call; `probe` is open.
        let rc =
            unsafe { libc::linkat(probe.as_raw_fd(), c"".as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_EMPTY_PATH) };
        if rc == 0 {
            gguf_test_support::skip("linkat with AT_EMPTY_PATH works without CAP_DAC_READ_SEARCH here");
            return;
        }
        assert_eq!(std::io::Error::last_os_error().raw_os_error(), Some(libc::ENOENT));
        assert_eq!(entries(dir), Vec::<String>::new(), "the temporary file is not unnamed");
        f.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"GGUF and more");
        assert_eq!(entries(dir), ["out.gguf"]);
    })
    .join()
    .unwrap();
}

/// `CAP_DAC_READ_SEARCH` (`linux/capability.h`).
#[cfg(target_os = "linux")]
const CAP_DAC_READ_SEARCH: u32 = 2;

/// Removes capability `cap` from the calling thread's effective set (`capset(2)`, version 3).
#[cfg(target_os = "linux")]
fn drop_effective_capability(cap: u32) {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let mut header = Header { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
    let mut data = [Data::default(); 2];
    // SAFETY: a version 3 header and the two data structs that version reads and writes.
    let rc = unsafe { libc::syscall(libc::SYS_capget, &mut header as *mut Header, data.as_mut_ptr()) };
    assert_eq!(rc, 0, "capget: {}", std::io::Error::last_os_error());
    data[(cap / 32) as usize].effective &= !(1 << (cap % 32));
    // SAFETY: as above; capset only reads them.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &mut header as *mut Header, data.as_ptr()) };
    assert_eq!(rc, 0, "capset: {}", std::io::Error::last_os_error());
}

/// A file given its name has its folder synced after the name is there (the directory entry on
/// disk too, so that a crash cannot lose it), once per file: written to replace or not, a set of
/// files in two folders each in its own, each way of naming a temporary.
#[test]
fn each_file_named_has_its_folder_synced_after_the_name_is_there() {
    with_each_temporary(|dir, how| {
        hook::take();
        for (i, if_exists) in [IfExists::Fail, IfExists::Replace, IfExists::Replace].into_iter().enumerate() {
            let target = dir.join("m.gguf");
            let mut f = AtomicFile::create(&target, if_exists).unwrap();
            f.write_all(b"GGUF").unwrap();
            f.commit().unwrap();
            assert_eq!(hook::take(), [Synced::Folder { of: target, present: true }], "{how}, write {i}");
        }
        let targets = [dir.join("a").join("s-1.gguf"), dir.join("b").join("s-2.gguf")];
        let sealed: Vec<_> = targets
            .iter()
            .map(|t| {
                std::fs::create_dir(t.parent().unwrap()).unwrap();
                let (mut file, pending) = create_temp_file(t, None, false).unwrap();
                file.write_all(b"GGUF shard").unwrap();
                pending.seal_file(file).unwrap()
            })
            .collect();
        persist_all(sealed, |e, _| e).unwrap();
        let want = targets.map(|of| Synced::Folder { of, present: true });
        assert_eq!(hook::take(), want, "{how}");
    });
}

/// Early writeback ([`super::Writeback`]): the kernel is asked to start writing each 32 MiB that
/// reach the file, as soon as they have, from where the last request ended. Pieces of 1 MiB (a
/// request after exactly 32 MiB) and of 1 MiB and 3 bytes (at the first write that passes it),
/// written past the buffer (each at least its 1 MiB) so that every piece reaches the file.
#[test]
fn early_writeback_is_asked_for_each_32_mib_that_reached_the_file() {
    const MIB: u64 = 1 << 20;
    let dir = gguf_test_support::temp_dir();
    for (piece, pieces, step) in [(MIB, 70, 32 * MIB), (MIB + 3, 40, 32 * (MIB + 3))] {
        let mut f = AtomicFile::with_direct_io(&dir.path().join("f.gguf"), false).unwrap();
        hook::take();
        let bytes = vec![9u8; piece as usize];
        for _ in 0..pieces {
            f.write_all(&bytes).unwrap();
        }
        let requests = (pieces * piece / step) as usize;
        let want: Vec<Synced> =
            (0..requests as u64).map(|k| Synced::Writeback { offset: k * step, len: step }).collect();
        assert_eq!(hook::take(), want, "pieces of {piece} bytes");
        drop(f);
    }
    assert!(entries(dir.path()).is_empty(), "a temporary file was left");
}

/// `GGUF_NO_TMPFILE` and `GGUF_NO_DIRECT_IO` turn the unnamed temporary file and direct I/O off
/// when set to a value other than empty or `0`; empty or `0` is the same as not set
/// ([`AtomicFile`]'s docs). The environment is the process's, so each setting is tried in a child
/// process, this test binary running this test alone, which writes a file and prints whether its
/// temporary is unnamed (nothing of it in the folder) and whether it goes with direct I/O.
#[test]
#[cfg(target_os = "linux")]
fn the_environment_switches_are_off_when_empty_or_0() {
    const CHILD: &str = "GGUF_TEST_ENV_SWITCH_CHILD";
    const NAME: &str = "container::atomic::tests::the_environment_switches_are_off_when_empty_or_0";
    if std::env::var_os(CHILD).is_some() {
        let tmp = gguf_test_support::temp_dir();
        let mut f = AtomicFile::new(tmp.path().join("out.gguf")).unwrap();
        f.write_all(&[1u8; 10_000]).unwrap();
        println!("unnamed {} direct {}", entries(tmp.path()).is_empty(), f.is_direct());
        return;
    }
    // (unnamed, direct) in a child with `var` set to `value` (none: `var` empty)
    let run = |var: &str, value: &str| -> (bool, bool) {
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args(["--exact", NAME, "--nocapture", "--test-threads=1"]).env(CHILD, "1");
        cmd.env_remove("GGUF_NO_TMPFILE").env_remove("GGUF_NO_DIRECT_IO");
        if !var.is_empty() {
            cmd.env(var, value);
        }
        let out = gguf_test_support::output_with_deadline(&mut cmd, std::time::Duration::from_secs(120));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{var}={value:?}: {stdout}{}", String::from_utf8_lossy(&out.stderr));
        // (after libtest's "test NAME ... " on the same line)
        let line = stdout.lines().find_map(|l| l.split_once("unnamed ")).expect("the child's line").1;
        let (unnamed, direct) = line.split_once(" direct ").expect("the child's line");
        (unnamed == "true", direct.starts_with("true"))
    };
    if run("", "") != (true, true) {
        return gguf_test_support::skip("no unnamed files or no direct I/O in the test folder");
    }
    for value in ["", "0"] {
        assert_eq!(run("GGUF_NO_TMPFILE", value), (true, true), "GGUF_NO_TMPFILE={value:?}");
        assert_eq!(run("GGUF_NO_DIRECT_IO", value), (true, true), "GGUF_NO_DIRECT_IO={value:?}");
    }
    for value in ["1", "yes"] {
        assert_eq!(run("GGUF_NO_TMPFILE", value), (false, true), "GGUF_NO_TMPFILE={value:?}");
        assert_eq!(run("GGUF_NO_DIRECT_IO", value), (true, false), "GGUF_NO_DIRECT_IO={value:?}");
    }
}

/// [`remove_temporaries`](super::remove_temporaries) removes the named temporary file of a write
/// in progress and stops that write from naming its file: the commit fails and the folder is left
/// empty (its docs). It stops every later write of the process too, so the check runs in a child
/// process, this test binary running this test alone.
#[test]
fn remove_temporaries_removes_a_named_temporary_and_stops_its_commit() {
    const CHILD: &str = "GGUF_TEST_REMOVE_TEMPORARIES_CHILD";
    const NAME: &str = "container::atomic::tests::remove_temporaries_removes_a_named_temporary_and_stops_its_commit";
    if std::env::var_os(CHILD).is_none() {
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args(["--exact", NAME, "--test-threads=1"]).env(CHILD, "1");
        let out = gguf_test_support::output_with_deadline(&mut cmd, std::time::Duration::from_secs(120));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains("1 passed"), "the child did not run the test: {stdout}");
        return;
    }
    NAMED_ONLY.with(|c| c.set(true));
    let tmp = gguf_test_support::temp_dir();
    let mut f = AtomicFile::new(tmp.path().join("out.gguf")).unwrap();
    f.write_all(b"GGUF").unwrap();
    assert_eq!(entries(tmp.path()).len(), 1, "the named temporary file");
    super::remove_temporaries();
    assert_eq!(entries(tmp.path()), Vec::<String>::new(), "the temporary file was left");
    assert!(f.commit().is_err(), "the write named its file after remove_temporaries");
    assert_eq!(entries(tmp.path()), Vec::<String>::new());
}

/// A named temporary file is in the list [`remove_temporaries`](super::remove_temporaries)
/// removes while its write is in progress, and out of it once the write is committed or dropped:
/// a later call must not remove a file of that name that is no longer ours (the committed file
/// went by another name, but a new temporary of another write may take the old one).
#[test]
fn a_temporary_is_listed_for_removal_only_while_its_write_is_in_progress() {
    let listed = |dir: &std::path::Path| -> Vec<std::path::PathBuf> {
        let live = super::LIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        live.iter().filter(|p| p.starts_with(dir)).cloned().collect()
    };
    NAMED_ONLY.with(|c| c.set(true));
    let tmp = gguf_test_support::temp_dir();
    for commit in [true, false] {
        let mut f = AtomicFile::new(tmp.path().join("out.gguf")).unwrap();
        f.write_all(b"GGUF").unwrap();
        let names = entries(tmp.path()).into_iter().filter(|n| n.starts_with(".gguf-tmp-")).collect::<Vec<_>>();
        assert_eq!(listed(tmp.path()), names.iter().map(|n| tmp.path().join(n)).collect::<Vec<_>>());
        if commit {
            f.commit().unwrap();
            std::fs::remove_file(tmp.path().join("out.gguf")).unwrap();
        } else {
            drop(f);
        }
        assert_eq!(listed(tmp.path()), Vec::<std::path::PathBuf>::new(), "commit {commit}");
        assert_eq!(entries(tmp.path()), Vec::<String>::new(), "commit {commit}");
    }
    NAMED_ONLY.with(|c| c.set(false));
}

/// Where the file system has no unnamed files (`O_TMPFILE` refused with `EOPNOTSUPP`, or `EISDIR`
/// or `EINVAL` from a kernel without them: open(2)), the write falls back on a named temporary
/// file and commits; any other error of that open (no permission, a missing folder) is the
/// write's error, not hidden by the fall-back.
#[test]
fn unnamed_files_not_supported_fall_back_on_a_named_temporary() {
    let tmp = gguf_test_support::temp_dir();
    for errno in [libc::EOPNOTSUPP, libc::EISDIR, libc::EINVAL] {
        TMPFILE_ERRNO.with(|c| c.set(Some(errno)));
        let target = tmp.path().join("out.gguf");
        let mut f = AtomicFile::new(&target).unwrap();
        f.write_all(b"GGUF").unwrap();
        let names = entries(tmp.path());
        assert!(names.len() == 1 && names[0].starts_with(".gguf-tmp-"), "errno {errno}: {names:?}");
        f.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"GGUF");
        std::fs::remove_file(&target).unwrap();
    }
    TMPFILE_ERRNO.with(|c| c.set(Some(libc::EACCES)));
    let e = AtomicFile::new(tmp.path().join("out.gguf")).unwrap_err();
    TMPFILE_ERRNO.with(|c| c.set(None));
    assert!(e.to_string().contains(&std::io::Error::from_raw_os_error(libc::EACCES).to_string()), "{e}");
    assert_eq!(entries(tmp.path()), Vec::<String>::new());
    // A real error: the folder is not there.
    let e = super::unnamed::open(&tmp.path().join("missing")).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
}

/// An unnamed file whose folder is gone by the commit cannot be linked there: that I/O error
/// (`NotFound`) is the commit's, not "already exists", which only a file at the target gives.
#[test]
#[cfg(target_os = "linux")]
fn an_unnamed_file_whose_folder_is_gone_fails_with_that_error() {
    let tmp = gguf_test_support::temp_dir();
    let sub = tmp.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let mut f = AtomicFile::create(sub.join("out.gguf"), IfExists::Fail).unwrap();
    f.write_all(b"GGUF").unwrap();
    if !entries(&sub).is_empty() {
        return; // no unnamed files here: the named temporary keeps the folder
    }
    std::fs::remove_dir(&sub).unwrap();
    let e = f.commit().unwrap_err();
    assert_eq!(e.as_io().map(std::io::Error::kind), Some(std::io::ErrorKind::NotFound), "{e}");
    assert!(!e.to_string().contains("exists"), "{e}");
}

/// A temporary file that cannot be made (its folder is missing) fails with an error naming that
/// folder and keeping the operating system's text and kind, without the random name `tempfile`
/// tried and appends (`... at path "/dir/.gguf-tmp-1wIZ51.tmp"`): no such file ever existed.
#[test]
fn a_temporary_that_cannot_be_made_names_its_folder_not_the_name_tried() {
    let tmp = gguf_test_support::temp_dir();
    let missing = tmp.path().join("missing");
    let e = create_temp_file(&tmp.path().join("out.gguf"), Some(&missing), false).unwrap_err();
    let io = e.as_io().unwrap_or_else(|| panic!("{e}"));
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound, "{e}");
    assert_eq!(io.to_string(), std::io::Error::from_raw_os_error(libc::ENOENT).to_string(), "{e}");
    let shown = e.to_string();
    // The whole message: the action and the operating system's text, nothing after it.
    assert!(shown.ends_with(&format!("{}: {io}", crate::format::shown_path(&missing))), "{shown}");
    assert!(
        shown.starts_with(&format!("I/O error creating a temporary file in {}", crate::format::shown_path(&missing))),
        "{shown}"
    );
    assert!(!shown.contains("gguf-tmp"), "{shown}");
    assert!(entries(tmp.path()).is_empty());
}
