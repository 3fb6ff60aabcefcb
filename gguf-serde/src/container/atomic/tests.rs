//! The two temporary files of [`AtomicFile`] (unnamed with `O_TMPFILE`, named): nothing in the
//! folder before the commit, a target created meanwhile replaced only when asked, the mode of a
//! replaced file kept.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::io::Write;
use std::os::unix::fs::PermissionsExt;

use super::unnamed::NAMED_ONLY;
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
/// is replaced and keeps the mode of the file it replaces. Unnamed (`O_TMPFILE`) and named
/// temporaries.
#[test]
fn a_file_created_during_the_write_is_replaced_only_when_asked() {
    with_both_temporaries(|dir, named| {
        let target = dir.join("out.gguf");
        let mut f = AtomicFile::create(&target, IfExists::Fail).unwrap();
        f.write_all(&[7u8; 100_000]).unwrap();
        std::fs::write(&target, "precious").unwrap();
        let e = f.commit().unwrap_err();
        let io = e.as_io().unwrap_or_else(|| panic!("named {named}: {e}"));
        assert_eq!(io.kind(), std::io::ErrorKind::AlreadyExists, "named {named}: {e}");
        assert!(e.to_string().contains(&target.display().to_string()), "named {named}: {e}");
        assert_eq!(std::fs::read(&target).unwrap(), b"precious", "named {named}");
        assert_eq!(entries(dir), ["out.gguf"], "named {named}");

        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut f = AtomicFile::create(&target, IfExists::Replace).unwrap();
        f.write_all(&[7u8; 100_000]).unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), vec![7u8; 100_000], "named {named}");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "named {named}");
        assert_eq!(entries(dir), ["out.gguf"], "named {named}");

        // a new file, not replacing: created
        let new = dir.join("new.gguf");
        let mut f = AtomicFile::create(&new, IfExists::Fail).unwrap();
        f.write_all(b"GGUF").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&new).unwrap(), b"GGUF", "named {named}");
        assert_eq!(entries(dir), ["new.gguf", "out.gguf"], "named {named}");
    });
}

/// Runs `test` (given a fresh folder, and whether the temporary files are named) with unnamed
/// temporary files (`O_TMPFILE`, where the file system has it), then with named ones.
fn with_both_temporaries(test: impl Fn(&std::path::Path, bool)) {
    for named in [false, true] {
        NAMED_ONLY.with(|c| c.set(named));
        let tmp = gguf_test_support::temp_dir();
        test(tmp.path(), named);
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
    let mut f = AtomicFile::new(&target).unwrap();
    f.write_all(&[1u8; 10_000]).unwrap();
    assert_eq!(entries(dir), Vec::<String>::new());
    drop(f);
    assert_eq!(entries(dir), Vec::<String>::new());
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

/// [`persist_all`]: when a file is kept at the target of the third of three files written with
/// [`IfExists::Fail`], the two already given their names are removed again, the kept file
/// stays, and the error names the third target (through `context`). Unnamed and named
/// temporaries.
#[test]
fn a_set_renamed_together_leaves_none_of_it_when_one_target_is_kept() {
    with_both_temporaries(|dir, named| {
        let targets: Vec<_> = (1..=3).map(|i| dir.join(format!("s-{i}.gguf"))).collect();
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
        assert_eq!(named_by_context, [targets[2].clone()], "named {named}");
        assert_eq!(e.as_io().map(std::io::Error::kind), Some(std::io::ErrorKind::AlreadyExists), "named {named}: {e}");
        assert!(e.to_string().contains(&targets[2].display().to_string()), "named {named}: {e}");
        assert_eq!(std::fs::read(&targets[2]).unwrap(), b"precious", "named {named}");
        assert_eq!(entries(dir), ["s-3.gguf"], "named {named}");
    });
}
