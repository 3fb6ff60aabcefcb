//! Writing whole files safely, with tensor data copied by the kernel.
//!
//! Every file this crate writes to a path (shards, merged models, edited models) goes to a
//! temporary file in the target's folder first and is renamed into place only once it is complete
//! and synced: a failure at any point (a full disk, an I/O error, a bad edit) leaves whatever was
//! at the target untouched, and the temporary file is removed.
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
use std::sync::Mutex;

use tempfile::TempPath;

use crate::error::{Error, Result};

/// Buffer size of the output writer (header, padding and small writes).
const BUF: usize = 1 << 20;

/// The temporary files of this process not yet renamed or removed, for
/// [`remove_temporaries`].
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes every temporary file that a write in progress in this process has created (an
/// [`AtomicFile`](crate::AtomicFile), a shard, a merged or edited model) and not yet renamed into
/// place. For a program's SIGINT/SIGTERM handling, right before it exits: a write that goes on
/// afterwards fails when it renames its (removed) file. Not async-signal-safe (it takes a lock
/// and calls `unlink`): call it from ordinary code, such as a thread woken by the signal (the
/// `gguf` command uses `signal-hook`'s iterator). Errors (a file already gone) are ignored.
pub fn remove_temporaries() {
    let mut live = LIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    for p in live.drain(..) {
        let _ = std::fs::remove_file(p);
    }
}

/// A path in [`LIVE`] while this value lives.
#[derive(Debug)]
struct Registered(PathBuf);

impl Registered {
    fn new(p: &Path) -> Registered {
        LIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(p.to_path_buf());
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

/// A temporary file waiting to be renamed to its target.
#[derive(Debug)]
pub(crate) struct PendingFile {
    // Declared first, so dropped first: the path leaves the registry before the file is removed
    // (a signal in between removes nothing that another write has since created).
    reg: Registered,
    temp: TempPath,
    target: PathBuf,
    permissions: Option<std::fs::Permissions>,
}

/// The file a write to `path` replaces: `path` itself, or the file a symbolic link points to
/// (so the link stays a link). Refuses an existing target that is not a regular file (a device
/// such as `/dev/null`, a FIFO, a directory), which renaming over would destroy.
fn resolve_target(path: &Path) -> Result<PathBuf> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).map_err(|e| Error::io(format!("following the link {}", path.display()), e))?
        }
        _ => path.to_path_buf(),
    };
    match std::fs::metadata(&target) {
        Ok(m) if !m.is_file() => Err(Error::io(
            format!("writing {}", path.display()),
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file (writing would replace it)"),
        )),
        _ => Ok(target),
    }
}

/// Creates a temporary file for `target`, in `temp_dir` or else the target's folder. When the
/// target exists, its permissions are given to the new file at commit. A symbolic link is
/// followed (the file it points to is replaced); a target that is not a regular file is refused.
#[cfg(feature = "mmap")]
pub(crate) fn create_temp(target: &Path, temp_dir: Option<&Path>) -> Result<(BufWriter<File>, PendingFile)> {
    let (file, pending) = create_temp_file(target, temp_dir)?;
    Ok((BufWriter::with_capacity(BUF, file), pending))
}

/// [`create_temp`] without the buffer: the new empty file, open for writing at offset 0.
pub(crate) fn create_temp_file(target: &Path, temp_dir: Option<&Path>) -> Result<(File, PendingFile)> {
    let target = &resolve_target(target)?;
    let dir = match (temp_dir, target.parent()) {
        (Some(d), _) => d.to_path_buf(),
        (None, Some(p)) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".gguf-tmp-").suffix(".tmp");
    // A new file gets the usual mode (0666 less the umask), not the temporary file's 0600.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let tmp = builder.tempfile_in(&dir).map_err(|e| temp_create_error(&dir, e))?;
    let permissions = std::fs::metadata(target).ok().map(|m| m.permissions());
    let (file, temp) = tmp.into_parts();
    let reg = Registered::new(&temp);
    Ok((file, PendingFile { reg, temp, target: target.to_path_buf(), permissions }))
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
        Ok(SealedFile { reg: self.reg, temp: self.temp, target: self.target })
    }

    /// [`seal`](Self::seal), then [`SealedFile::persist`].
    #[cfg(feature = "mmap")]
    pub(crate) fn commit(self, out: BufWriter<File>) -> Result<()> {
        self.seal(out)?.persist()
    }
}

/// A complete temporary file; dropped without [`persist`](Self::persist), it is removed.
#[derive(Debug)]
pub(crate) struct SealedFile {
    reg: Registered,
    temp: TempPath,
    target: PathBuf,
}

impl SealedFile {
    /// The target path.
    #[cfg(feature = "mmap")]
    pub(crate) fn target(&self) -> &Path {
        &self.target
    }

    /// Renames the temporary file to the target (atomically replacing a file there), then syncs
    /// the target's folder, so that the new directory entry is on disk too: a crash right after
    /// the rename cannot lose the new file (or bring back the old one).
    pub(crate) fn persist(self) -> Result<()> {
        let SealedFile { reg, temp, target } = self;
        temp.persist(&target).map_err(|e| Error::io(format!("renaming into {}", target.display()), e.error))?;
        drop(reg);
        sync_dir(&target)
    }
}

/// A scratch file of a write in progress (such as the unsplit file that a split conversion then
/// splits): an empty file with a fresh `.gguf-tmp-*.tmp` name in `dir`, registered for
/// [`remove_temporaries`] and removed when this value is dropped, whatever is written to its path
/// meanwhile (including a file renamed onto it).
#[cfg(feature = "convert")]
#[derive(Debug)]
pub(crate) struct ScratchFile {
    // Declared first, so dropped first (as in `PendingFile`).
    _reg: Registered,
    temp: TempPath,
}

#[cfg(feature = "convert")]
impl ScratchFile {
    /// Creates the scratch file in `dir`.
    pub(crate) fn new_in(dir: &Path) -> Result<ScratchFile> {
        let tmp = tempfile::Builder::new()
            .prefix(".gguf-tmp-")
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|e| temp_create_error(dir, e))?;
        let temp = tmp.into_temp_path();
        Ok(ScratchFile { _reg: Registered::new(&temp), temp })
    }

    /// Its path.
    pub(crate) fn path(&self) -> &Path {
        &self.temp
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
    Error::io(format!("creating a temporary file in {}", dir.display()), e)
}

/// Syncs the folder holding `path` (on Unix; elsewhere a folder cannot be opened to sync it).
fn sync_dir(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let d = File::open(dir).map_err(|e| Error::io(format!("opening the folder {}", dir.display()), e))?;
        d.sync_all().map_err(|e| Error::io(format!("syncing the folder {}", dir.display()), e))?;
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
    File::open(path).map_err(|e| Error::io(format!("opening {}", path.display()), e))
}
