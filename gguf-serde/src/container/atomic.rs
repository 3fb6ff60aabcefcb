//! Writing whole files safely, with tensor data copied by the kernel.
//!
//! Every file this crate writes to a path (shards, merged models, edited models) goes to a
//! temporary file in the target's folder first and is renamed into place only once it is complete
//! and synced: a failure at any point (a full disk, an I/O error, a bad edit) leaves whatever was
//! at the target untouched, and the temporary file is removed.
//!
//! Tensor data is copied with `std::io::copy` from a `Take<&File>` of the source into a
//! `BufWriter<File>` of the temporary file. Both are types that the standard library's copy
//! specializes on: on Linux it flushes the buffer and hands the copy to `copy_file_range` (or
//! `sendfile`), so the bytes never pass through user memory. (A `BufWriter<NamedTempFile>` or any
//! other wrapper type would fall back to a read/write loop: `std::io::copy` only recognizes the
//! standard library's own file types.)

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use tempfile::TempPath;

use crate::error::{Error, Result};

/// Buffer size of the output writer (header, padding and small writes).
const BUF: usize = 1 << 20;

/// A temporary file waiting to be renamed to its target.
#[derive(Debug)]
pub(crate) struct PendingFile {
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
pub(crate) fn create_temp(target: &Path, temp_dir: Option<&Path>) -> Result<(BufWriter<File>, PendingFile)> {
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
    let tmp = builder
        .tempfile_in(&dir)
        .map_err(|e| Error::io(format!("creating a temporary file in {}", dir.display()), e))?;
    let permissions = std::fs::metadata(target).ok().map(|m| m.permissions());
    let (file, temp) = tmp.into_parts();
    Ok((BufWriter::with_capacity(BUF, file), PendingFile { temp, target: target.to_path_buf(), permissions }))
}

impl PendingFile {
    /// Flushes `out` (the writer [`create_temp`] returned), gives the file the target's
    /// permissions, syncs and closes it. [`SealedFile::persist`] then renames it into place.
    pub(crate) fn seal(self, out: BufWriter<File>) -> Result<SealedFile> {
        let file = out.into_inner().map_err(|e| Error::io("flushing", e.into_error()))?;
        if let Some(p) = self.permissions {
            file.set_permissions(p).map_err(|e| Error::io("setting permissions", e))?;
        }
        file.sync_all().map_err(|e| Error::io("syncing", e))?;
        Ok(SealedFile { temp: self.temp, target: self.target })
    }

    /// [`seal`](Self::seal), then [`SealedFile::persist`].
    pub(crate) fn commit(self, out: BufWriter<File>) -> Result<()> {
        self.seal(out)?.persist()
    }
}

/// A complete temporary file; dropped without [`persist`](Self::persist), it is removed.
#[derive(Debug)]
pub(crate) struct SealedFile {
    temp: TempPath,
    target: PathBuf,
}

impl SealedFile {
    /// The target path.
    pub(crate) fn target(&self) -> &Path {
        &self.target
    }

    /// Renames the temporary file to the target (atomically replacing a file there).
    pub(crate) fn persist(self) -> Result<()> {
        let target = self.target;
        self.temp.persist(&target).map_err(|e| Error::io(format!("renaming into {}", target.display()), e.error))?;
        Ok(())
    }
}

/// `len` bytes of `file` from absolute offset `offset`, as a reader that `std::io::copy` turns
/// into a kernel copy (see the module docs).
pub(crate) fn file_range(file: &File, offset: u64, len: u64) -> Result<std::io::Take<&File>> {
    let mut f = file;
    f.seek(SeekFrom::Start(offset)).map_err(|e| Error::io("seeking in the source file", e))?;
    Ok(f.take(len))
}

/// Opens `path` for reading, with the path in the error.
pub(crate) fn open_file(path: &Path) -> Result<File> {
    File::open(path).map_err(|e| Error::io(format!("opening {}", path.display()), e))
}
