//! Writing whole files safely, with tensor data copied by the kernel.
//!
//! Every file this crate writes to a path (shards, merged models, edited models) goes to a
//! temporary file in the target's folder first and is renamed into place only once it is complete
//! and synced: a failure at any point (a full disk, an I/O error, a bad edit) leaves whatever was
//! at the target untouched, and the temporary file is removed.
//!
//! On Linux the temporary file has no name (`O_TMPFILE`) where the file system has it: it is
//! linked into the folder only once complete (`linkat`, through `/proc/self/fd/N` as an
//! unprivileged process), so a process killed by SIGKILL, or a crash, leaves nothing. Elsewhere
//! it is a named `.gguf-tmp-*.tmp`, registered for [`remove_temporaries`] (a program's signal
//! handling) but left behind by SIGKILL. A write that must not replace a file
//! ([`IfExists::Fail`]) links the unnamed file to the target itself, or renames the named one
//! with `RENAME_NOREPLACE`: either fails if the target exists by then.
//!
//! [`AtomicFile`](crate::AtomicFile) (a writer of new bytes: conversion, quantization, export)
//! writes with direct I/O where it can (`super::direct`); the copies below (split, merge, edit)
//! keep to the page cache.
//!
//! Tensor data is copied with `std::io::copy` from a `Take<&File>` of the source into a
//! `BufWriter<File>` of the temporary file. Both are types that the standard library's copy
//! specializes on: on Linux it flushes the buffer and hands the copy to `copy_file_range` (or
//! `sendfile`), so the bytes never pass through user memory. (A `BufWriter<NamedTempFile>` or any
//! other wrapper type would fall back to a read/write loop: `std::io::copy` only recognizes the
//! standard library's own file types.)

use std::fs::File;
use std::io::BufWriter;
#[cfg(feature = "mmap")]
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use tempfile::TempPath;

use crate::error::{Error, Result};

/// Buffer size of the output writer (header, padding and small writes).
const BUF: usize = 1 << 20;

/// The temporary files of this process not yet renamed or removed, for
/// [`remove_temporaries`].
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Set by [`remove_temporaries`]: no write of this process may give its file a name any more.
static CANCELLED: AtomicBool = AtomicBool::new(false);

/// Removes every temporary file that a write in progress in this process has created (an
/// [`AtomicFile`](crate::AtomicFile), a shard, a merged or edited model) and not yet renamed into
/// place, and stops every write in progress from naming its file: a write that goes on
/// afterwards fails when it renames or links its file. (A file written without a name, with
/// `O_TMPFILE` on Linux, needs no removal: it goes away when the process exits.) For a
/// program's SIGINT/SIGTERM handling, right before it exits. Not async-signal-safe (it takes a
/// lock and calls `unlink`): call it from ordinary code, such as a thread woken by the signal
/// (the `gguf` command uses `signal-hook`'s iterator). Errors (a file already gone) are ignored.
pub fn remove_temporaries() {
    CANCELLED.store(true, Ordering::SeqCst);
    let mut live = LIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    for p in live.drain(..) {
        let _ = std::fs::remove_file(p);
    }
}

/// What a write to a path does with a file that is at the path when the new file is complete
/// (an [`AtomicFile`](crate::AtomicFile), and through their options every operation of
/// [`crate::ops`] and `crate::convert` that writes a new file; an edit in place always
/// replaces).
///
/// The check is the last step of the write itself, atomic: with [`Fail`](IfExists::Fail), the
/// new file is given its name by a `linkat` of the unnamed file, or a rename with
/// `RENAME_NOREPLACE` of the named one, which fails if anything is at the target by then, so a
/// file created there while the write ran (by another program, or a second write to the same
/// path) is never replaced. A target that is there already when the write starts is refused
/// then, before anything is written. The error is [`ErrorKind::Io`](crate::ErrorKind::Io) with
/// an [`std::io::ErrorKind::AlreadyExists`] source, naming the target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IfExists {
    /// Replace it (the file it replaces gives the new file its permissions). The default, as
    /// `std::fs::File::create` and `rename` replace.
    #[default]
    Replace,
    /// Keep it, and fail.
    Fail,
}

impl IfExists {
    /// [`Replace`](IfExists::Replace) when `replace` (a command's `--force`), else
    /// [`Fail`](IfExists::Fail).
    pub fn replace_when(replace: bool) -> IfExists {
        if replace {
            IfExists::Replace
        } else {
            IfExists::Fail
        }
    }

    /// Whether it is [`Replace`](IfExists::Replace).
    pub(crate) fn replaces(self) -> bool {
        self == IfExists::Replace
    }
}

/// A path in [`LIVE`] while this value lives.
#[derive(Debug)]
struct Registered(PathBuf);

impl Registered {
    fn new(p: &Path) -> Registered {
        Registered::new_in(&mut LIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner), p)
    }

    /// [`new`](Self::new) with [`LIVE`] already locked.
    fn new_in(live: &mut Vec<PathBuf>, p: &Path) -> Registered {
        live.push(p.to_path_buf());
        Registered(p.to_path_buf())
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut live = LIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(i) = live.iter().position(|p| *p == self.0) {
            live.swap_remove(i);
        }
    }
}

/// The temporary file of a write: a named one (`.gguf-tmp-*.tmp`, removed when dropped), or on
/// Linux an unnamed one (`O_TMPFILE`: nothing in the folder, whatever happens to the process,
/// until it is linked to a name).
#[derive(Debug)]
enum Temp {
    // Declared first, so dropped first: the path leaves the registry before the file is removed
    // (a signal in between removes nothing that another write has since created).
    Named { reg: Registered, temp: TempPath },
    Unnamed,
}

/// A temporary file waiting to be renamed to its target.
#[derive(Debug)]
pub(crate) struct PendingFile {
    temp: Temp,
    target: PathBuf,
    permissions: Option<std::fs::Permissions>,
    replace: bool,
}

/// The file a write to `path` replaces: `path` itself, or the file a symbolic link points to
/// (so the link stays a link). Refuses an existing target that is not a regular file (a device
/// such as `/dev/null`, a FIFO, a directory), which renaming over would destroy.
fn resolve_target(path: &Path) -> Result<PathBuf> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path)
            .map_err(|e| Error::io(format!("following the link {}", crate::format::shown_path(&path)), e))?,
        _ => path.to_path_buf(),
    };
    match std::fs::metadata(&target) {
        Ok(m) if !m.is_file() => Err(Error::io(
            format!("writing {}", crate::format::shown_path(&path)),
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file (writing would replace it)"),
        )),
        _ => Ok(target),
    }
}

/// Creates a temporary file for `target`, in `temp_dir` or else the target's folder. When the
/// target exists, its permissions are given to the new file at commit. A symbolic link is
/// followed (the file it points to is replaced); a target that is not a regular file is refused.
/// What is at the target at commit is replaced or kept as `if_exists` says (kept: the commit
/// fails; a target there already is refused here).
#[cfg(feature = "mmap")]
pub(crate) fn create_temp(
    target: &Path,
    temp_dir: Option<&Path>,
    if_exists: IfExists,
) -> Result<(BufWriter<File>, PendingFile)> {
    let (file, pending) = create_temp_file(target, temp_dir, if_exists.replaces())?;
    Ok((BufWriter::with_capacity(BUF, file), pending))
}

/// [`create_temp`] without the buffer: the new empty file, open for writing at offset 0. Without
/// a `temp_dir`, on Linux, the file has no name (`O_TMPFILE`) until it is committed, where the
/// file system takes it; elsewhere (and with `GGUF_NO_TMPFILE` set to a value other than empty
/// or `0`) it is a named `.gguf-tmp-*.tmp`. With `replace` false, a target that exists is refused
/// here ([`check_target`]), and the commit fails if anything is at the target by then.
pub(crate) fn create_temp_file(target: &Path, temp_dir: Option<&Path>, replace: bool) -> Result<(File, PendingFile)> {
    let target = &check_target(target, IfExists::replace_when(replace))?;
    let dir = temp_dir.unwrap_or_else(|| folder(target)).to_path_buf();
    let permissions = std::fs::metadata(target).ok().map(|m| m.permissions());
    if temp_dir.is_none() {
        if let Some(file) = unnamed::open(&dir).map_err(|e| temp_create_error(&dir, e))? {
            return Ok((file, PendingFile { temp: Temp::Unnamed, target: target.to_path_buf(), permissions, replace }));
        }
    }
    let mut builder = temp_names();
    // A new file gets the usual mode (0666 less the umask), not the temporary file's 0600.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let tmp = builder.tempfile_in(&dir).map_err(|e| temp_create_error(&dir, e))?;
    let (file, temp) = tmp.into_parts();
    let reg = Registered::new(&temp);
    Ok((file, PendingFile { temp: Temp::Named { reg, temp }, target: target.to_path_buf(), permissions, replace }))
}

/// The file a write to `path` gives its name to ([`resolve_target`], with its refusals), checked
/// before anything is written: with [`IfExists::Fail`], refused where something is there (a link
/// too).
///
/// # Errors
/// As [`resolve_target`]; with [`IfExists::Fail`], [`ErrorKind::Io`](crate::ErrorKind::Io) with
/// an [`std::io::ErrorKind::AlreadyExists`] source, naming `path`, for a path that exists.
pub(crate) fn check_target(path: &Path, if_exists: IfExists) -> Result<PathBuf> {
    let target = resolve_target(path)?;
    if if_exists == IfExists::Fail && std::fs::symlink_metadata(path).is_ok() {
        return Err(Error::io(
            format!("writing {}", crate::format::shown_path(&path)),
            std::io::Error::new(std::io::ErrorKind::AlreadyExists, "it exists"),
        ));
    }
    Ok(target)
}

/// A builder of this crate's temporary names, `.gguf-tmp-XXXXXX.tmp` (hidden, and recognizable as
/// ours when a SIGKILL leaves one behind).
fn temp_names() -> tempfile::Builder<'static, 'static> {
    let mut b = tempfile::Builder::new();
    b.prefix(".gguf-tmp-").suffix(".tmp");
    b
}

/// A new writer of `file` through a buffer of the usual size (the page-cache path of
/// [`AtomicFile`](crate::AtomicFile)).
pub(crate) fn buffered(file: File) -> BufWriter<File> {
    BufWriter::with_capacity(BUF, file)
}

impl PendingFile {
    /// Flushes `out` (the writer [`create_temp`] returned), gives the file the target's
    /// permissions, syncs and closes it. [`SealedFile::persist`] then renames it into place.
    pub(crate) fn seal(self, out: BufWriter<File>) -> Result<SealedFile> {
        let file = out.into_inner().map_err(|e| Error::io("flushing", e.into_error()))?;
        self.seal_file(file)
    }

    /// [`seal`](Self::seal) for the file itself, everything already written to it.
    pub(crate) fn seal_file(self, file: File) -> Result<SealedFile> {
        if let Some(p) = self.permissions {
            file.set_permissions(p).map_err(|e| Error::io("setting permissions", e))?;
        }
        file.sync_all().map_err(|e| Error::io("syncing", e))?;
        let id = file_id(file.metadata());
        let temp = match self.temp {
            Temp::Named { reg, temp } => SealedTemp::Named { reg, temp },
            // kept open: it is linked to its name through the descriptor
            Temp::Unnamed => SealedTemp::Unnamed(file),
        };
        Ok(SealedFile { temp, target: self.target, replace: self.replace, id })
    }

    /// [`seal`](Self::seal), then [`SealedFile::persist`].
    #[cfg(feature = "mmap")]
    pub(crate) fn commit(self, out: BufWriter<File>) -> Result<()> {
        self.seal(out)?.persist()
    }
}

/// The temporary file of a [`SealedFile`].
#[derive(Debug)]
enum SealedTemp {
    // Declared first, so dropped first (as in `Temp`).
    Named { reg: Registered, temp: TempPath },
    Unnamed(File),
}

/// A complete temporary file; dropped without [`persist`](Self::persist), it is removed.
#[derive(Debug)]
pub(crate) struct SealedFile {
    temp: SealedTemp,
    target: PathBuf,
    replace: bool,
    /// The file's identity (device and inode, Unix), to know it again at its target.
    id: Option<(u64, u64)>,
}

/// The device and inode of a file (Unix; `None` elsewhere, or if its metadata cannot be read):
/// `file.metadata()`, or `symlink_metadata` of its path.
fn file_id(metadata: std::io::Result<std::fs::Metadata>) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        metadata.ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        None
    }
}

/// Gives each of `files` its target's name, in order ([`SealedFile::persist`]); returns the
/// targets. `context` adds to the error of a file what names it (its shard).
///
/// When one fails, the files already given a name by this call that were written not to replace
/// anything ([`IfExists::Fail`]) are removed again, those that are still this call's own files
/// (the same device and inode, Unix): the targets were free, so nothing of the set is left and
/// nothing the user had is lost (a target that appeared meanwhile is the usual cause, and is
/// kept). Files written to replace are left in place: what they replaced is gone already.
pub(crate) fn persist_all(files: Vec<SealedFile>, context: impl FnOnce(Error, &Path) -> Error) -> Result<Vec<PathBuf>> {
    /// A file given its name by this call.
    struct Named {
        path: PathBuf,
        replace: bool,
        id: Option<(u64, u64)>,
    }
    let mut done: Vec<Named> = Vec::with_capacity(files.len());
    for f in files {
        let named = Named { path: f.target.clone(), replace: f.replace, id: f.id };
        if let Err(e) = f.persist() {
            for n in done.iter().filter(|n| !n.replace) {
                if n.id.is_some() && file_id(std::fs::symlink_metadata(&n.path)) == n.id {
                    let _ = std::fs::remove_file(&n.path);
                }
            }
            if let Some(n) = done.first() {
                let _ = sync_dir(&n.path);
            }
            return Err(context(e, &named.path));
        }
        done.push(named);
    }
    Ok(done.into_iter().map(|n| n.path).collect())
}

/// The error of a target that exists when a write that must not replace it is committed.
fn exists_error(target: &Path) -> Error {
    Error::io(
        format!("renaming into {}", crate::format::shown_path(&target)),
        std::io::Error::new(std::io::ErrorKind::AlreadyExists, "it exists (created while the file was written)"),
    )
}

/// The error of a write stopped by [`remove_temporaries`].
fn cancelled_error() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::Interrupted, "the write was cancelled (its temporary files removed)")
}

impl SealedFile {
    /// Gives the file its target's name, then syncs the target's folder, so that the new
    /// directory entry is on disk too: a crash right after cannot lose the new file (or bring
    /// back the old one). Replacing: a named temporary is renamed over the target; an unnamed
    /// one is linked to a fresh `.gguf-tmp-*.tmp` name, then renamed. Not replacing: an unnamed
    /// file is linked to the target itself, a named one renamed with `RENAME_NOREPLACE` (or,
    /// where that is not supported, hard-linked and unlinked), which fail if the target exists.
    pub(crate) fn persist(self) -> Result<()> {
        let SealedFile { temp, target, replace, .. } = self;
        let rename_err =
            |e: std::io::Error| Error::io(format!("renaming into {}", crate::format::shown_path(&target)), e);
        match temp {
            SealedTemp::Named { reg, temp } => {
                if replace {
                    temp.persist(&target).map_err(|e| rename_err(e.error))?;
                } else {
                    match rename_noreplace(&temp, &target) {
                        Ok(()) => {
                            // the path is the target's now: not removed by the drop
                            let _ = temp.keep();
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(exists_error(&target)),
                        Err(e) => return Err(rename_err(e)),
                    }
                }
                drop(reg);
            }
            SealedTemp::Unnamed(file) => {
                let dir = folder(&target);
                // Under the lock of the registry, so that `remove_temporaries` either sees the
                // name linked here (and removes it) or has already cancelled this write.
                let mut live = LIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if CANCELLED.load(Ordering::SeqCst) {
                    return Err(rename_err(cancelled_error()));
                }
                if replace {
                    let named = temp_names().make_in(dir, |p| unnamed::link(&file, p)).map_err(|e| {
                        Error::io(format!("linking the new file into {}", crate::format::shown_path(&dir)), e)
                    })?;
                    let temp = named.into_temp_path();
                    let reg = Registered::new_in(&mut live, &temp);
                    drop(live);
                    temp.persist(&target).map_err(|e| rename_err(e.error))?;
                    drop(reg);
                } else {
                    match unnamed::link(&file, &target) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(exists_error(&target)),
                        Err(e) => return Err(rename_err(e)),
                    }
                }
            }
        }
        sync_dir(&target)
    }
}

/// Renames `from` to `to` unless `to` exists (`AlreadyExists` then): `renameat2` with
/// `RENAME_NOREPLACE` on Linux; where the file system or platform does not have it, a hard link
/// (which fails if `to` exists) and the removal of `from`; where hard links are refused too
/// (some FUSE or FAT file systems), a check then a rename (not atomic: the last resort).
fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let (Ok(f), Ok(t)) =
            (std::ffi::CString::new(from.as_os_str().as_bytes()), std::ffi::CString::new(to.as_os_str().as_bytes()))
        else {
            return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
        };
        #[cfg(test)]
        let unsupported = fallback::NO_RENAME_NOREPLACE.with(std::cell::Cell::get);
        #[cfg(not(test))]
        let unsupported = false;
        let e = if unsupported {
            std::io::Error::from_raw_os_error(libc::EINVAL)
        } else {
            // SAFETY: both paths are NUL-terminated strings that outlive the call.
            let rc = unsafe {
                libc::renameat2(libc::AT_FDCWD, f.as_ptr(), libc::AT_FDCWD, t.as_ptr(), libc::RENAME_NOREPLACE)
            };
            if rc == 0 {
                return Ok(());
            }
            std::io::Error::last_os_error()
        };
        if !matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP)) {
            return Err(e);
        }
    }
    #[cfg(test)]
    let linked = if fallback::NO_HARD_LINKS.with(std::cell::Cell::get) {
        Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied))
    } else {
        std::fs::hard_link(from, to)
    };
    #[cfg(not(test))]
    let linked = std::fs::hard_link(from, to);
    match linked {
        Ok(()) => std::fs::remove_file(from),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(e),
        Err(_) => {
            if std::fs::symlink_metadata(to).is_ok() {
                return Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists));
            }
            std::fs::rename(from, to)
        }
    }
}

/// Test hooks of [`rename_noreplace`]: its fall-backs, which the file systems of the tests do not
/// need (they all have `RENAME_NOREPLACE`), taken as on one that does not.
#[cfg(test)]
pub(super) mod fallback {
    thread_local! {
        /// Set by a test: this thread's `renameat2` with `RENAME_NOREPLACE` is not made and
        /// answers `EINVAL`, as on a file system without it.
        pub(crate) static NO_RENAME_NOREPLACE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// Set by a test: this thread's hard links are refused (`PermissionDenied`), as on FAT.
        pub(crate) static NO_HARD_LINKS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
}

/// The folder holding `path` (`.` for a bare name).
fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Unnamed files (`O_TMPFILE`, Linux 3.11 and later, on file systems that have it: ext4, XFS,
/// Btrfs, tmpfs, ...), given a name only once complete.
mod unnamed {
    use std::fs::File;
    use std::io;
    use std::path::Path;

    /// A new unnamed file in `dir`, open for writing, mode 0666 less the umask; `None` where
    /// unnamed files are not available (another system, a file system without them, no
    /// `/proc/self/fd` to link it through, or `GGUF_NO_TMPFILE` set to a value other than empty
    /// or `0`).
    ///
    /// # Errors
    /// Errors other than "not supported" (a missing folder, no permission).
    pub(super) fn open(dir: &Path) -> io::Result<Option<File>> {
        if std::env::var_os("GGUF_NO_TMPFILE").is_some_and(|v| !v.is_empty() && v != "0") {
            return Ok(None);
        }
        #[cfg(test)]
        if NAMED_ONLY.with(std::cell::Cell::get) {
            return Ok(None);
        }
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::fs::OpenOptionsExt;
            if !Path::new("/proc/self/fd").is_dir() {
                return Ok(None);
            }
            let opened = std::fs::OpenOptions::new().write(true).mode(0o666).custom_flags(libc::O_TMPFILE).open(dir);
            // A test stands in for a file system without unnamed files (none is mounted here).
            #[cfg(test)]
            let opened = match TMPFILE_ERRNO.with(std::cell::Cell::get) {
                Some(errno) => opened.and_then(|_| Err(io::Error::from_raw_os_error(errno))),
                None => opened,
            };
            match opened {
                Ok(f) => Ok(Some(f)),
                Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)) => Ok(None),
                Err(e) => Err(e),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = dir;
            Ok(None)
        }
    }

    #[cfg(test)]
    thread_local! {
        /// Set by a test: this thread's writes use named temporary files.
        pub(super) static NAMED_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// Set by a test: this thread's `O_TMPFILE` opens that succeed fail with this error
        /// number instead (the file opened is closed).
        pub(super) static TMPFILE_ERRNO: std::cell::Cell<Option<i32>> = const { std::cell::Cell::new(None) };
    }

    /// Gives `file` (from [`open`]) the name `to` (a new link; `AlreadyExists` if `to` exists):
    /// `linkat` with `AT_EMPTY_PATH` (which needs `CAP_DAC_READ_SEARCH`), else through
    /// `/proc/self/fd/N` with `AT_SYMLINK_FOLLOW`.
    pub(super) fn link(file: &File, to: &Path) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            use std::os::unix::ffi::OsStrExt;
            let to = std::ffi::CString::new(to.as_os_str().as_bytes())
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
            let fd = file.as_raw_fd();
            // SAFETY: the paths are NUL-terminated strings that outlive the call; the descriptor
            // stays open for the borrow of `file`.
            let rc = unsafe { libc::linkat(fd, c"".as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_EMPTY_PATH) };
            if rc == 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if !matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EPERM)) {
                return Err(e);
            }
            let proc = std::ffi::CString::new(format!("/proc/self/fd/{fd}"))
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
            // SAFETY: as above.
            let rc = unsafe {
                libc::linkat(libc::AT_FDCWD, proc.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_SYMLINK_FOLLOW)
            };
            if rc == 0 {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (file, to);
            Err(io::Error::from(io::ErrorKind::Unsupported))
        }
    }
}

/// The error of creating a temporary file in `dir`, naming the folder. `tempfile` appends the
/// random name it tried (`... at path "/dir/.gguf-tmp-1wIZ51.tmp"`), a file that never existed:
/// that part is dropped (the kind and the operating system's text stay).
fn temp_create_error(dir: &Path, e: std::io::Error) -> Error {
    let e = match (e.raw_os_error(), e.get_ref().map(ToString::to_string)) {
        (None, Some(text)) => match text.rfind(" at path \"") {
            Some(i) => std::io::Error::new(e.kind(), text[..i].to_owned()),
            None => e,
        },
        _ => e,
    };
    Error::io(format!("creating a temporary file in {}", crate::format::shown_path(&dir)), e)
}

/// Syncs the folder holding `path` (on Unix; elsewhere a folder cannot be opened to sync it).
fn sync_dir(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        let dir = folder(path);
        let d = File::open(dir)
            .map_err(|e| Error::io(format!("opening the folder {}", crate::format::shown_path(&dir)), e))?;
        d.sync_all().map_err(|e| Error::io(format!("syncing the folder {}", crate::format::shown_path(&dir)), e))?;
        #[cfg(test)]
        hook::record(hook::Synced::Folder { of: path.to_owned(), present: path.symlink_metadata().is_ok() });
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Bytes reaching a temporary file between two early-writeback requests ([`Writeback`]).
const WRITEBACK_STEP: u64 = 32 << 20;

/// Early writeback: every [`WRITEBACK_STEP`] bytes that reach the file, the kernel is asked to
/// start writing them to disk (`sync_file_range(SYNC_FILE_RANGE_WRITE)`, Linux), without waiting
/// for it. The disk then works while the rest of the file is produced, and the `fsync` of
/// [`PendingFile::seal`] waits only for the tail instead of the whole file. Durability is
/// unchanged: the file is still synced before it is renamed. Elsewhere it does nothing.
#[derive(Debug, Default)]
pub(crate) struct Writeback {
    /// Bytes given to the writer so far (some may still be in its buffer).
    accepted: u64,
    /// The end of the range already handed to the kernel.
    requested: u64,
}

impl Writeback {
    /// Early writeback of a file that already has `offset` bytes on it (on disk: written
    /// directly), from there on.
    pub(crate) fn from_offset(offset: u64) -> Writeback {
        Writeback { accepted: offset, requested: offset }
    }

    /// Records `n` more bytes accepted by `out` and requests writeback of what reached the file
    /// since the last request, once that is at least [`WRITEBACK_STEP`].
    pub(crate) fn wrote(&mut self, n: usize, out: &BufWriter<File>) {
        self.accepted = self.accepted.saturating_add(n as u64);
        let on_file = self.accepted.saturating_sub(out.buffer().len() as u64);
        let pending = on_file.saturating_sub(self.requested);
        if pending >= WRITEBACK_STEP {
            start_writeback(out.get_ref(), self.requested, pending);
            self.requested = on_file;
        }
    }
}

/// Asks the kernel to start writing `len` bytes of `file` from `offset` to disk, and returns
/// without waiting. A hint: failure (an old kernel, a file system without it) is ignored, as the
/// final `fsync` syncs everything anyway.
fn start_writeback(file: &File, offset: u64, len: u64) {
    #[cfg(test)]
    hook::record(hook::Synced::Writeback { offset, len });
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else { return };
        // SAFETY: `sync_file_range` takes no pointers; the descriptor stays open for the borrow of
        // `file`. Its result is a hint's and is ignored on purpose.
        let _ = unsafe { libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, offset, len);
}

/// `len` bytes of `file` from absolute offset `offset`, as a reader that `std::io::copy` turns
/// into a kernel copy (see the module docs).
#[cfg(feature = "mmap")]
pub(crate) fn file_range(file: &File, offset: u64, len: u64) -> Result<std::io::Take<&File>> {
    let mut f = file;
    f.seek(SeekFrom::Start(offset)).map_err(|e| Error::io("seeking in the source file", e))?;
    Ok(f.take(len))
}

/// Opens `path` for reading, with the path in the error.
#[cfg(feature = "mmap")]
pub(crate) fn open_file(path: &Path) -> Result<File> {
    File::open(path).map_err(|e| Error::io(format!("opening {}", crate::format::shown_path(&path)), e))
}

/// Test hooks: the folder syncs and early-writeback requests made on this thread, in order.
#[cfg(test)]
pub(crate) mod hook {
    use std::cell::RefCell;
    use std::path::PathBuf;

    /// A sync or writeback request.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(crate) enum Synced {
        /// `sync_file_range(offset, len, SYNC_FILE_RANGE_WRITE)` asked ([`super::Writeback`]).
        Writeback { offset: u64, len: u64 },
        /// The folder of `of` synced, and whether `of` was there then.
        Folder { of: PathBuf, present: bool },
    }

    thread_local! {
        static LOG: RefCell<Vec<Synced>> = const { RefCell::new(Vec::new()) };
    }

    pub(super) fn record(s: Synced) {
        LOG.with(|l| l.borrow_mut().push(s));
    }

    /// The syncs and requests made on this thread since the last call.
    pub(crate) fn take() -> Vec<Synced> {
        LOG.with(|l| std::mem::take(&mut *l.borrow_mut()))
    }
}

#[cfg(test)]
mod tests;
