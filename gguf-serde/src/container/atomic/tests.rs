//! The two temporary files of [`AtomicFile`] (unnamed with `O_TMPFILE`, named): nothing in the
//! folder before the commit, a target created meanwhile replaced only when asked, the mode of a
//! replaced file kept.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::io::Write;
use std::os::unix::fs::PermissionsExt;

use super::unnamed::NAMED_ONLY;
use crate::AtomicFile;

/// The entries of `dir`, sorted.
fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// Without `replace`, a file created at the target while the write ran stays, and the
/// commit fails with `AlreadyExists`, leaving nothing else; with it, the file is replaced
/// and keeps the mode of the file it replaces. Unnamed (`O_TMPFILE`) and named temporaries.
#[test]
fn a_file_created_during_the_write_is_replaced_only_when_asked() {
    for named in [false, true] {
        NAMED_ONLY.with(|c| c.set(named));
        let tmp = gguf_test_support::temp_dir();
        let dir = tmp.path();
        let target = dir.join("out.gguf");
        let mut f = AtomicFile::with_options(&target, true, false).unwrap();
        f.write_all(&[7u8; 100_000]).unwrap();
        std::fs::write(&target, "precious").unwrap();
        let e = f.commit().unwrap_err();
        let io = e.as_io().unwrap_or_else(|| panic!("named {named}: {e}"));
        assert_eq!(io.kind(), std::io::ErrorKind::AlreadyExists, "named {named}: {e}");
        assert!(e.to_string().contains(&target.display().to_string()), "named {named}: {e}");
        assert_eq!(std::fs::read(&target).unwrap(), b"precious", "named {named}");
        assert_eq!(entries(dir), ["out.gguf"], "named {named}");

        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut f = AtomicFile::with_options(&target, true, true).unwrap();
        f.write_all(&[7u8; 100_000]).unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), vec![7u8; 100_000], "named {named}");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "named {named}");
        assert_eq!(entries(dir), ["out.gguf"], "named {named}");

        // a new file, not replacing: created
        let new = dir.join("new.gguf");
        let mut f = AtomicFile::with_options(&new, true, false).unwrap();
        f.write_all(b"GGUF").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&new).unwrap(), b"GGUF", "named {named}");
        assert_eq!(entries(dir), ["new.gguf", "out.gguf"], "named {named}");
    }
    NAMED_ONLY.with(|c| c.set(false));
}

/// While an unnamed file is written, the folder holds nothing of it; dropped uncommitted,
/// nothing is left either way.
#[test]
#[cfg(target_os = "linux")]
fn an_unnamed_file_is_not_in_the_folder_until_committed() {
    let tmp = gguf_test_support::temp_dir();
    let dir = tmp.path();
    let target = dir.join("out.gguf");
    let mut f = AtomicFile::with_options(&target, true, true).unwrap();
    f.write_all(&[1u8; 10_000]).unwrap();
    assert_eq!(entries(dir), Vec::<String>::new());
    drop(f);
    assert_eq!(entries(dir), Vec::<String>::new());
}
