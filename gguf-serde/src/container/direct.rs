//! Writing a new file with direct I/O (`O_DIRECT`, Linux), past the page cache.
//!
//! A buffered `write` copies the bytes into page-cache pages, which the kernel then writes to
//! disk: for a file of gigabytes that is a second copy of the output, and on a virtual machine
//! whose free memory goes back to the host (a balloon with free page reporting) the first touch
//! of each of those pages is a fault in the hypervisor, seconds per gigabyte. A direct write
//! goes from the process's memory to the device. The kernel then requires the file offset, the
//! length and the memory address of each write to be multiples of the file system's direct-I/O
//! alignment (`statx` with `STATX_DIOALIGN`, Linux 6.1 and later; 4096 where it does not say).
//!
//! [`DirectWriter`] collects the output in a buffer of [`CHUNK`] bytes at an aligned address
//! and writes it a whole buffer at a time, from offset 0, so every direct write starts at an
//! aligned offset and covers whole blocks; only the last part of the file that does not fill a
//! block is written through the page cache ([`DirectWriter::finish`]), beyond the last direct
//! write, so the pages of the two paths never overlap. Where the file system refuses direct I/O
//! (`EINVAL` when it is turned on, or at a write: tmpfs before Linux 6.6, some FUSE file systems)
//! or off Linux, the caller writes through the page cache instead ([`Refused`]).

use std::fs::File;
use std::io::{self, Write};

/// Bytes collected before a direct write: a multiple of every direct-I/O alignment accepted
/// ([`MAX_ALIGN`]).
pub(crate) const CHUNK: usize = 8 << 20;

/// The largest direct-I/O alignment used (larger ones leave the file buffered).
const MAX_ALIGN: usize = 1 << 16;

/// The smallest alignment used: the page size of common systems, so that direct writes cover
/// whole pages and the buffered tail starts on a page of its own.
const MIN_ALIGN: usize = 4096;

/// Why a file is written through the page cache: the file system (or the platform) refused
/// direct I/O, or the caller asked for buffered output. Holds the file back.
#[derive(Debug)]
pub(crate) struct Refused(pub(crate) File);

/// A file written with direct I/O through an aligned buffer (see the module docs).
#[derive(Debug)]
pub(crate) struct DirectWriter {
    file: File,
    /// [`CHUNK`] bytes from [`Self::start`] are the aligned buffer.
    mem: Vec<u8>,
    start: usize,
    /// Bytes held in the buffer (`mem[start..start + len]`), not yet on the file.
    len: usize,
    /// The alignment of offsets, lengths and addresses.
    align: usize,
    /// Bytes on the file (always a multiple of `align` while writing directly).
    on_file: u64,
}

impl DirectWriter {
    /// Turns on direct I/O for `file`, a new empty file opened for writing at offset 0.
    ///
    /// # Errors
    /// [`Refused`] with the file when direct I/O is not available for it.
    pub(crate) fn new(file: File) -> std::result::Result<DirectWriter, Refused> {
        let Some(align) = dio_alignment(&file) else { return Err(Refused(file)) };
        let mem = vec![0u8; CHUNK.saturating_add(align)];
        let start = mem.as_ptr().align_offset(align);
        // `align_offset` may answer "cannot" (usize::MAX): then no direct I/O, rather than a guess
        if start >= align || set_direct(&file, true).is_err() {
            return Err(Refused(file));
        }
        Ok(DirectWriter { file, mem, start, len: 0, align, on_file: 0 })
    }

    /// Bytes on the file.
    pub(crate) fn on_file(&self) -> u64 {
        self.on_file
    }

    /// The aligned buffer.
    fn buf(&self) -> &[u8] {
        self.mem.get(self.start..).unwrap_or_default()
    }

    /// Takes up to the free room of the buffer from `bytes`, first writing the buffer out if it
    /// is full. A call either takes bytes or fails without taking any.
    ///
    /// # Errors
    /// The write's error; `EINVAL` means the file system refused the direct write (nothing of
    /// it was written): the caller goes on with [`into_buffered`](Self::into_buffered).
    pub(crate) fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.len >= CHUNK {
            self.write_blocks()?;
        }
        let free = self.mem.get_mut(self.start..).unwrap_or_default().get_mut(self.len..CHUNK).unwrap_or_default();
        let n = bytes.len().min(free.len());
        if let (Some(to), Some(from)) = (free.get_mut(..n), bytes.get(..n)) {
            to.copy_from_slice(from);
        }
        // n <= CHUNK - len
        self.len = self.len.saturating_add(n);
        Ok(n)
    }

    /// Writes the whole blocks held to the file with direct writes; the rest (less than a block)
    /// moves to the front of the buffer.
    ///
    /// # Errors
    /// As [`write`](Self::write); the bytes not written stay held.
    pub(crate) fn write_blocks(&mut self) -> io::Result<()> {
        // align > 0 (a power of two)
        let whole = self.len.checked_div(self.align).unwrap_or(0).saturating_mul(self.align);
        let mut done = 0usize;
        let result = loop {
            let Some(rest) = self.buf().get(done..whole).filter(|r| !r.is_empty()) else { break Ok(()) };
            match direct_write(&self.file, rest) {
                Ok(0) => break Err(io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => {
                    // n <= rest.len(), so done stays <= whole
                    done = done.saturating_add(n);
                    self.on_file = self.on_file.saturating_add(n as u64);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        let (s, e) = (self.start.saturating_add(done), self.start.saturating_add(self.len));
        self.mem.copy_within(s..e, self.start);
        self.len = self.len.saturating_sub(done);
        result
    }

    /// Turns direct I/O off and returns the file (its offset at [`on_file`](Self::on_file), the
    /// end of what is on it) and the bytes held, for the caller to write through the page cache.
    ///
    /// # Errors
    /// If direct I/O cannot be turned off.
    pub(crate) fn into_buffered(self) -> io::Result<(File, Vec<u8>)> {
        set_direct(&self.file, false)?;
        let held = self.buf().get(..self.len).unwrap_or_default().to_vec();
        Ok((self.file, held))
    }

    /// Writes the whole blocks held directly and the rest (the end of the file, less than a
    /// block) through the page cache, and returns the file (not yet synced).
    ///
    /// # Errors
    /// The write's error; a refused direct write (`EINVAL`) writes everything through the page
    /// cache instead.
    pub(crate) fn finish(mut self) -> io::Result<File> {
        match self.write_blocks() {
            Ok(()) => {}
            Err(e) if is_refusal(&e) => {}
            Err(e) => return Err(e),
        }
        let (mut file, tail) = self.into_buffered()?;
        file.write_all(&tail)?;
        Ok(file)
    }
}

/// Whether `e` is the file system refusing a direct write (rather than an I/O error).
pub(crate) fn is_refusal(e: &io::Error) -> bool {
    #[cfg(target_os = "linux")]
    return e.raw_os_error() == Some(libc::EINVAL);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = e;
        false
    }
}

/// The direct-I/O alignment of `file` (of offsets, lengths and memory; at least [`MIN_ALIGN`]),
/// or `None` when the file system says it has no direct I/O, the alignment is over [`MAX_ALIGN`],
/// the platform is not Linux, or `GGUF_NO_DIRECT_IO` is set to a value other than empty or `0`.
fn dio_alignment(file: &File) -> Option<usize> {
    if std::env::var_os("GGUF_NO_DIRECT_IO").is_some_and(|v| !v.is_empty() && v != "0") {
        return None;
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: all-zero bytes are a valid `statx` (integers only).
        let mut stx: libc::statx = unsafe { std::mem::zeroed() };
        // SAFETY: the path is a NUL-terminated empty string, with AT_EMPTY_PATH naming the open
        // descriptor itself; `stx` is a writable `statx` that outlives the call.
        let rc =
            unsafe { libc::statx(file.as_raw_fd(), c"".as_ptr(), libc::AT_EMPTY_PATH, libc::STATX_DIOALIGN, &mut stx) };
        let align = if rc == 0 && stx.stx_mask & libc::STATX_DIOALIGN != 0 {
            if stx.stx_dio_offset_align == 0 {
                return None;
            }
            (stx.stx_dio_offset_align.max(stx.stx_dio_mem_align) as usize).max(MIN_ALIGN)
        } else {
            // an older kernel: try the page size; a refusal at the first write falls back
            MIN_ALIGN
        };
        (align.is_power_of_two() && align <= MAX_ALIGN).then_some(align)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}

/// Turns `O_DIRECT` on or off for `file`.
fn set_direct(file: &File, on: bool) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let fd = file.as_raw_fd();
        // SAFETY: F_GETFL takes no pointer; the descriptor stays open for the borrow of `file`.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 {
            return Err(io::Error::last_os_error());
        }
        let flags = if on { flags | libc::O_DIRECT } else { flags & !libc::O_DIRECT };
        // SAFETY: F_SETFL takes an integer; the descriptor stays open for the borrow of `file`.
        if unsafe { libc::fcntl(fd, libc::F_SETFL, flags) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, on);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

/// One direct `write` of `bytes` (aligned) to `file` (in tests, through the error injection of
/// `hook`).
fn direct_write(mut file: &File, bytes: &[u8]) -> io::Result<usize> {
    #[cfg(test)]
    if let Some(e) = hook::next_write() {
        return Err(e);
    }
    file.write(bytes)
}

/// Errors injected into the direct writes of the current thread, for tests.
#[cfg(test)]
pub(crate) mod hook {
    use std::cell::{Cell, RefCell};
    use std::io;

    thread_local! {
        /// Per coming direct write: `None` writes, `Some(errno)` fails with that error.
        static PLAN: RefCell<Vec<Option<i32>>> = const { RefCell::new(Vec::new()) };
        /// Direct writes made (or failed) on this thread.
        static COUNT: Cell<usize> = const { Cell::new(0) };
    }

    /// The next direct writes of this thread: `Some(errno)` fails one with that error, `None`
    /// lets one through; writes past the plan go through.
    pub(crate) fn plan(p: Vec<Option<i32>>) {
        PLAN.with(|x| *x.borrow_mut() = p.into_iter().rev().collect());
        COUNT.with(|c| c.set(0));
    }

    /// Direct writes made or failed on this thread since [`plan`].
    pub(crate) fn count() -> usize {
        COUNT.with(Cell::get)
    }

    pub(super) fn next_write() -> Option<io::Error> {
        COUNT.with(|c| c.set(c.get().saturating_add(1)));
        PLAN.with(|x| x.borrow_mut().pop().flatten()).map(io::Error::from_raw_os_error)
    }
}

#[cfg(test)]
mod tests;
