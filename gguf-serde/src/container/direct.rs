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
//! [`DirectWriter`] collects the output in buffers of [`CHUNK`] bytes at aligned addresses, at
//! most [`BUFFERS`] of them, allocated as they are first needed. A full buffer goes to an I/O
//! thread of the writer, which writes it with a positioned write (`pwrite`) at its offset in the
//! file and hands it back for reuse; the caller meanwhile fills the next buffer, so its `write`
//! only copies, and waits only while every other buffer is still being written. Each buffer
//! starts at an aligned offset (the file is written from offset 0, a whole buffer at a time) and
//! covers whole blocks; only the last part of the file that does not fill a block is written
//! through the page cache ([`DirectWriter::finish`]), beyond the last direct write, so the pages
//! of the two paths never overlap.
//!
//! Errors: a write fails on the I/O thread and is reported by the next call of the writer
//! ([`write`](DirectWriter::write), [`flush`](DirectWriter::flush), [`finish`](DirectWriter::finish)).
//! Where the file system refuses direct I/O (`EINVAL` when it is turned on, or at a write: tmpfs
//! before Linux 6.6, some FUSE file systems) or off Linux, the caller writes through the page
//! cache instead ([`Refused`] at the start; [`into_buffered`](DirectWriter::into_buffered) after
//! a refused write, which first rewrites each refused buffer through the page cache at its own
//! offset). Dropping the writer stops its I/O threads (writes not yet started are skipped) and
//! joins them: no thread or buffer outlives it.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

/// Bytes of one buffer, written by one direct write: a multiple of every direct-I/O alignment
/// accepted ([`MAX_ALIGN`]). 4 MiB: as fast as 8 MiB in the MoE benchmark, with half the
/// memory (BENCHMARKS.md, "Writes in flight").
pub(crate) const CHUNK: usize = 4 << 20;

/// The most buffers of a writer: the one being filled, the others written meanwhile (at most
/// `BUFFERS * CHUNK` bytes of memory, 16 MiB).
pub(crate) const BUFFERS: usize = 4;

/// I/O threads of a writer (writes in flight at once). A second one measured no faster on
/// ext4, which takes a file's inode lock exclusively for a direct write other than an
/// overwrite of blocks inside the file: every write of a new file, one at a time.
const IO_THREADS: usize = 1;

/// The largest direct-I/O alignment used (larger ones leave the file buffered).
const MAX_ALIGN: usize = 1 << 16;

/// The smallest alignment used: the page size of common systems, so that direct writes cover
/// whole pages and the buffered tail starts on a page of its own.
const MIN_ALIGN: usize = 4096;

/// Why a file is written through the page cache: the file system (or the platform) refused
/// direct I/O, or the caller asked for buffered output. Holds the file back.
#[derive(Debug)]
pub(crate) struct Refused(pub(crate) File);

/// [`CHUNK`] bytes at an aligned address.
struct Buffer {
    mem: Vec<u8>,
    /// Where the aligned bytes start in `mem`.
    start: usize,
    /// Counts the buffers alive (tests).
    #[cfg(test)]
    _live: hook::Live,
}

impl Buffer {
    /// A new buffer aligned to `align` (a power of two); `None` if the address cannot be
    /// aligned (`align_offset` may answer "cannot").
    fn new(align: usize) -> Option<Buffer> {
        let mem = vec![0u8; CHUNK.saturating_add(align)];
        let start = mem.as_ptr().align_offset(align);
        if start >= align {
            return None;
        }
        Some(Buffer {
            mem,
            start,
            #[cfg(test)]
            _live: hook::Live::buffer(),
        })
    }

    /// The first `len` bytes.
    fn bytes(&self, len: usize) -> &[u8] {
        self.mem.get(self.start..).and_then(|b| b.get(..len)).unwrap_or_default()
    }

    /// The [`CHUNK`] bytes.
    fn all_mut(&mut self) -> &mut [u8] {
        self.mem.get_mut(self.start..).and_then(|b| b.get_mut(..CHUNK)).unwrap_or_default()
    }
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Buffer")
    }
}

/// A buffer for an I/O thread to write: `len` bytes at `offset`.
struct Job {
    buf: Buffer,
    len: usize,
    offset: u64,
    /// What the test hook makes of this write.
    #[cfg(test)]
    inject: hook::Injected,
}

/// A buffer written by an I/O thread (or not: `result`), handed back.
#[derive(Debug)]
struct Done {
    buf: Buffer,
    len: usize,
    offset: u64,
    result: io::Result<()>,
}

/// The I/O threads of a writer. Dropped, they skip the writes not yet started, finish the one
/// in progress and are joined.
#[derive(Debug)]
struct Io {
    /// To the threads (`None` once dropped: the threads then end).
    jobs: Option<Sender<Job>>,
    /// From the threads. (In a mutex, only to keep the writer `Sync`: it is reached through
    /// `&mut`, never locked.)
    done: Mutex<Receiver<Done>>,
    threads: Vec<JoinHandle<()>>,
    /// Set when the writer is dropped: writes not yet started are skipped.
    cancel: Arc<AtomicBool>,
}

impl Io {
    /// Starts [`IO_THREADS`] threads writing to `file` (each with a descriptor of its own for the
    /// same open file).
    ///
    /// # Errors
    /// A thread or descriptor that cannot be had (every thread started is joined then).
    fn start(file: &File) -> io::Result<Io> {
        let (jobs, job_rx) = mpsc::channel::<Job>();
        let (done_tx, done) = mpsc::channel::<Done>();
        let job_rx = Arc::new(Mutex::new(job_rx));
        let cancel = Arc::new(AtomicBool::new(false));
        let mut io = Io { jobs: Some(jobs), done: Mutex::new(done), threads: Vec::new(), cancel };
        for _ in 0..IO_THREADS {
            let file = file.try_clone()?;
            let (jobs, done, cancel) = (Arc::clone(&job_rx), done_tx.clone(), Arc::clone(&io.cancel));
            #[cfg(test)]
            let live = hook::Live::thread();
            let thread = std::thread::Builder::new().name("gguf-direct-io".into()).spawn(move || {
                #[cfg(test)]
                let _live = live;
                io_thread(&file, &jobs, &done, &cancel);
            })?;
            io.threads.push(thread);
        }
        Ok(io)
    }

    /// Hands `job` to a thread.
    ///
    /// # Errors
    /// If every thread has stopped (the job is dropped).
    fn send(&self, job: Job) -> io::Result<()> {
        match &self.jobs {
            Some(tx) => tx.send(job).map_err(|_| io_stopped()),
            None => Err(io_stopped()),
        }
    }

    /// The next buffer handed back, waiting for it (`wait`) or not.
    ///
    /// # Errors
    /// If every thread has stopped.
    fn next_done(&mut self, wait: bool) -> io::Result<Option<Done>> {
        let rx = self.done.get_mut().unwrap_or_else(PoisonError::into_inner);
        if wait {
            return rx.recv().map(Some).map_err(|_| io_stopped());
        }
        match rx.try_recv() {
            Ok(d) => Ok(Some(d)),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => Err(io_stopped()),
        }
    }
}

impl Drop for Io {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::SeqCst);
        drop(self.jobs.take());
        for t in self.threads.drain(..) {
            // a thread's panic is already an error of its write (see `io_thread`)
            let _ = t.join();
        }
    }
}

/// The error of I/O threads gone (they end only when the writer drops them, or by a panic).
fn io_stopped() -> io::Error {
    io::Error::other("the direct-I/O thread stopped")
}

/// An I/O thread: writes each job's buffer at its offset and hands it back, until the writer
/// closes the channel; once `cancel` is set, jobs are dropped unwritten.
fn io_thread(file: &File, jobs: &Mutex<Receiver<Job>>, done: &Sender<Done>, cancel: &AtomicBool) {
    loop {
        // the lock is released at the end of the statement, before the write
        let job = jobs.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok(job) = job else { return };
        if cancel.load(Ordering::SeqCst) {
            continue;
        }
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| write_job(file, &job, cancel)))
            .unwrap_or_else(|_| Err(io::Error::other("the direct-I/O thread panicked")));
        #[cfg(test)]
        let Job { buf, len, offset, inject } = job;
        #[cfg(not(test))]
        let Job { buf, len, offset } = job;
        if done.send(Done { buf, len, offset, result }).is_err() {
            return;
        }
        #[cfg(test)]
        inject.handed_back();
    }
}

/// Writes the bytes of `job` at its offset (in tests, through the hook's injection).
fn write_job(file: &File, job: &Job, cancel: &AtomicBool) -> io::Result<()> {
    #[cfg(test)]
    if let Some(e) = job.inject.apply(cancel) {
        return Err(e);
    }
    #[cfg(not(test))]
    let _ = cancel;
    write_at(file, job.buf.bytes(job.len), job.offset)
}

/// Writes all of `bytes` to `file` at `offset` (positioned writes: the file's own offset is
/// unchanged).
fn write_at(file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    return std::os::unix::fs::FileExt::write_all_at(file, bytes, offset);
    #[cfg(not(unix))]
    {
        let _ = (file, bytes, offset);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

/// A direct write the file system refused, kept to be rewritten through the page cache.
#[derive(Debug)]
struct RefusedWrite {
    buf: Buffer,
    len: usize,
    offset: u64,
    /// The error's number (`EINVAL`).
    errno: i32,
}

/// A file written with direct I/O through aligned buffers and an I/O thread (see the module
/// docs).
#[derive(Debug)]
pub(crate) struct DirectWriter {
    /// Declared first, so dropped first: the threads are stopped and joined before anything else
    /// of the writer goes.
    io: Io,
    file: File,
    /// The alignment of offsets, lengths and addresses.
    align: usize,
    /// The buffer being filled: its first byte goes to the file at `offset`.
    cur: Buffer,
    /// Bytes held in `cur`.
    len: usize,
    /// Bytes handed to the I/O threads so far (a multiple of `align`): written, in flight, or
    /// refused.
    offset: u64,
    /// Buffers handed back, to reuse.
    free: Vec<Buffer>,
    /// Buffers allocated (at most [`BUFFERS`]).
    buffers: usize,
    /// Buffers with the I/O threads.
    in_flight: usize,
    /// The first error of a write (other than a refusal), not yet reported.
    error: Option<io::Error>,
    /// An error was reported: every later call fails.
    failed: bool,
    /// Direct writes the file system refused.
    refused: Vec<RefusedWrite>,
}

impl DirectWriter {
    /// Turns on direct I/O for `file`, a new empty file opened for writing at offset 0, and
    /// starts the writer's I/O thread.
    ///
    /// # Errors
    /// [`Refused`] with the file when direct I/O is not available for it (or its thread cannot
    /// be started).
    pub(crate) fn new(file: File) -> std::result::Result<DirectWriter, Refused> {
        let Some(align) = dio_alignment(&file) else { return Err(Refused(file)) };
        let Some(cur) = Buffer::new(align) else { return Err(Refused(file)) };
        let Ok(io) = Io::start(&file) else { return Err(Refused(file)) };
        if set_direct(&file, true).is_err() {
            drop(io);
            return Err(Refused(file));
        }
        Ok(DirectWriter {
            io,
            file,
            align,
            cur,
            len: 0,
            offset: 0,
            free: Vec::new(),
            buffers: 1,
            in_flight: 0,
            error: None,
            failed: false,
            refused: Vec::new(),
        })
    }

    /// Bytes handed to the file: all of them on it once the writes in flight are done (or, after
    /// a refusal, rewritten by [`into_buffered`](Self::into_buffered)).
    pub(crate) fn on_file(&self) -> u64 {
        self.offset
    }

    /// Takes up to the free room of the current buffer from `bytes`; a buffer it fills goes to
    /// the I/O thread (waiting, if every buffer is in flight, for one to come back). A call either
    /// takes bytes or fails without taking any.
    ///
    /// # Errors
    /// The first error of an earlier write not yet reported (the bytes of a failed call are not
    /// taken); after an error, every call fails. `EINVAL` means the file system refused a direct
    /// write (nothing of it is on the file): the caller goes on with
    /// [`into_buffered`](Self::into_buffered).
    pub(crate) fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.poll()?;
        if self.len >= CHUNK && !self.submit() {
            self.check()?;
        }
        let room = self.cur.all_mut().get_mut(self.len..).unwrap_or_default();
        let n = bytes.len().min(room.len());
        if let (Some(to), Some(from)) = (room.get_mut(..n), bytes.get(..n)) {
            to.copy_from_slice(from);
        }
        // n <= CHUNK - len
        self.len = self.len.saturating_add(n);
        if self.len >= CHUNK {
            // the bytes are taken: an error of this is reported by the next call
            let _ = self.submit();
        }
        Ok(n)
    }

    /// Hands the whole blocks held to the I/O thread and waits until every write in flight is
    /// done; the rest (less than a block) stays held.
    ///
    /// # Errors
    /// As [`write`](Self::write).
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.poll()?;
        if self.submit() {
            while self.in_flight > 0 && !self.pending() {
                self.wait_one();
            }
        }
        self.check()
    }

    /// Waits for every write in flight, turns direct I/O off, rewrites the buffers whose direct
    /// write was refused through the page cache at their offsets, and returns the file (its
    /// offset at [`on_file`](Self::on_file), the end of what is on it) and the bytes held, for the
    /// caller to go on through the page cache.
    ///
    /// # Errors
    /// The first error of a write (other than a refusal), or of turning direct I/O off or of the
    /// rewrites.
    pub(crate) fn into_buffered(mut self) -> io::Result<(File, Vec<u8>)> {
        while self.in_flight > 0 {
            self.wait_one();
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.failed {
            return Err(failed_before());
        }
        let DirectWriter { mut file, io, cur, len, offset, refused, .. } = self;
        drop(io);
        set_direct(&file, false)?;
        for r in &refused {
            write_at(&file, r.buf.bytes(r.len), r.offset)?;
        }
        file.seek(SeekFrom::Start(offset))?;
        Ok((file, cur.bytes(len).to_vec()))
    }

    /// Writes the whole blocks held directly and the rest (the end of the file, less than a
    /// block) through the page cache, and returns the file (not yet synced) once every write is
    /// done.
    ///
    /// # Errors
    /// As [`into_buffered`](Self::into_buffered); refused direct writes are written through the
    /// page cache instead.
    pub(crate) fn finish(mut self) -> io::Result<File> {
        match self.flush() {
            Ok(()) => {}
            Err(e) if is_refusal(&e) => {}
            Err(e) => return Err(e),
        }
        let (mut file, tail) = self.into_buffered()?;
        file.write_all(&tail)?;
        Ok(file)
    }

    /// Hands the whole blocks of the current buffer to the I/O thread and goes on in another
    /// buffer, the rest (less than a block) moved to its front; waits for a buffer while every
    /// one is in flight. Returns `false`, having handed nothing, when an error is pending.
    fn submit(&mut self) -> bool {
        // align > 0 (a power of two)
        let whole = self.len.checked_div(self.align).unwrap_or(0).saturating_mul(self.align);
        if whole == 0 {
            return !self.pending();
        }
        let Some(mut next) = self.take_buffer() else { return false };
        let rest = self.cur.bytes(self.len).get(whole..).unwrap_or_default();
        if let Some(to) = next.all_mut().get_mut(..rest.len()) {
            to.copy_from_slice(rest);
        }
        let full = std::mem::replace(&mut self.cur, next);
        let job = Job {
            buf: full,
            len: whole,
            offset: self.offset,
            #[cfg(test)]
            inject: hook::next_write(),
        };
        // whole <= len <= CHUNK
        self.len = self.len.saturating_sub(whole);
        self.offset = self.offset.saturating_add(whole as u64);
        match self.io.send(job) {
            Ok(()) => self.in_flight = self.in_flight.saturating_add(1),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
        true
    }

    /// A buffer to fill: one handed back, a new one while fewer than [`BUFFERS`] exist, or else
    /// the next to come back. `None` when an error is pending.
    fn take_buffer(&mut self) -> Option<Buffer> {
        loop {
            if self.pending() {
                return None;
            }
            if let Some(b) = self.free.pop() {
                return Some(b);
            }
            if self.buffers < BUFFERS {
                if let Some(b) = Buffer::new(self.align) {
                    self.buffers = self.buffers.saturating_add(1);
                    return Some(b);
                }
            }
            if self.in_flight == 0 {
                self.error.get_or_insert_with(|| io::Error::other("no aligned buffer for a direct write"));
                return None;
            }
            #[cfg(test)]
            hook::waiting_for_a_buffer();
            self.wait_one();
        }
    }

    /// Takes back the buffers the I/O threads are done with, without waiting.
    fn poll(&mut self) -> io::Result<()> {
        while self.in_flight > 0 {
            match self.io.next_done(false) {
                Ok(Some(d)) => self.take_back(d),
                Ok(None) => break,
                Err(e) => self.lost(e),
            }
        }
        self.check()
    }

    /// Waits for the next buffer the I/O threads are done with.
    fn wait_one(&mut self) {
        match self.io.next_done(true) {
            Ok(Some(d)) => self.take_back(d),
            Ok(None) => {}
            Err(e) => self.lost(e),
        }
    }

    /// The I/O threads are gone with the buffers in flight.
    fn lost(&mut self, e: io::Error) {
        self.in_flight = 0;
        self.error.get_or_insert(e);
    }

    /// Records a buffer handed back: to reuse, its error kept, or its refused write kept.
    fn take_back(&mut self, d: Done) {
        self.in_flight = self.in_flight.saturating_sub(1);
        let Done { buf, len, offset, result } = d;
        match result {
            Ok(()) => self.free.push(buf),
            Err(e) => match e.raw_os_error() {
                Some(errno) if is_refusal(&e) => self.refused.push(RefusedWrite { buf, len, offset, errno }),
                _ => {
                    self.error.get_or_insert(e);
                    self.free.push(buf);
                }
            },
        }
    }

    /// Whether an error is to be reported (or was: the writer failed).
    fn pending(&self) -> bool {
        self.error.is_some() || self.failed || !self.refused.is_empty()
    }

    /// The error to report: the first error of a write (then the writer has failed), else a
    /// refusal.
    fn check(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            self.failed = true;
            return Err(e);
        }
        if self.failed {
            return Err(failed_before());
        }
        match self.refused.first() {
            Some(r) => Err(io::Error::from_raw_os_error(r.errno)),
            None => Ok(()),
        }
    }
}

/// The error of a call after a write failed.
fn failed_before() -> io::Error {
    io::Error::other("an earlier direct write failed")
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

/// The alignment direct writes use, from what `statx` reports (`STATX_DIOALIGN`, statx(2)):
/// `reported` is `(stx_dio_offset_align, stx_dio_mem_align)`, or `None` where the kernel does not
/// report them (before Linux 6.1; direct I/O is then tried at [`MIN_ALIGN`], and a refusal at
/// the first write falls back to the page cache). An offset alignment of 0 is the file system
/// saying it has no direct I/O: `None`. Otherwise the larger of the two, raised to [`MIN_ALIGN`];
/// `None` if that is not a power of two (an aligned buffer needs one) or is over [`MAX_ALIGN`].
#[cfg(any(target_os = "linux", test))]
fn usable_alignment(reported: Option<(u32, u32)>) -> Option<usize> {
    let align = match reported {
        None => MIN_ALIGN,
        Some((0, _)) => return None,
        Some((offset, mem)) => usize::try_from(offset.max(mem)).ok()?.max(MIN_ALIGN),
    };
    (align.is_power_of_two() && align <= MAX_ALIGN).then_some(align)
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
        // an older kernel (no STATX_DIOALIGN): `None`, direct I/O tried at the page size
        let reported = (rc == 0 && stx.stx_mask & libc::STATX_DIOALIGN != 0)
            .then_some((stx.stx_dio_offset_align, stx.stx_dio_mem_align));
        usable_alignment(reported)
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

/// Test hooks of the direct writes: errors injected, writes held back, and the threads and
/// buffers alive.
#[cfg(test)]
pub(crate) mod hook {
    use std::cell::{Cell, RefCell};
    use std::io;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Arc, Condvar, Mutex, PoisonError};
    use std::time::Duration;

    /// I/O threads and buffers alive, of the writers created on one thread.
    #[derive(Debug, Default)]
    struct Counts {
        threads: AtomicUsize,
        buffers: AtomicUsize,
    }

    /// While closed, holds the direct writes of one thread's writers before they are made.
    #[derive(Debug, Default)]
    pub(super) struct Gate {
        closed: Mutex<bool>,
        opened: Condvar,
        /// Writes handed back to the writer (their result in its channel).
        handed_back: Mutex<usize>,
        came_back: Condvar,
    }

    thread_local! {
        /// Per coming direct write: `None` writes, `Some(errno)` fails with that error.
        static PLAN: RefCell<Vec<Option<i32>>> = const { RefCell::new(Vec::new()) };
        /// Direct writes handed to an I/O thread on this thread.
        static COUNT: Cell<usize> = const { Cell::new(0) };
        static GATE: Arc<Gate> = Arc::default();
        static COUNTS: Arc<Counts> = Arc::default();
    }

    /// The next direct writes handed to an I/O thread by this thread's writers, in order:
    /// `Some(errno)` fails one with that error, `None` lets one through; writes past the plan go
    /// through.
    pub(crate) fn plan(p: Vec<Option<i32>>) {
        PLAN.with(|x| *x.borrow_mut() = p.into_iter().rev().collect());
        COUNT.with(|c| c.set(0));
    }

    /// Direct writes handed to an I/O thread on this thread since [`plan`].
    pub(crate) fn count() -> usize {
        COUNT.with(Cell::get)
    }

    /// Holds every direct write of this thread's writers, in its I/O thread before it is made,
    /// until [`release`] (or until the writer is dropped: the write is then not made).
    pub(crate) fn hold() {
        GATE.with(|g| *g.closed.lock().unwrap_or_else(PoisonError::into_inner) = true);
    }

    /// Lets the writes held by [`hold`] go on.
    pub(crate) fn release() {
        GATE.with(|g| {
            *g.closed.lock().unwrap_or_else(PoisonError::into_inner) = false;
            g.opened.notify_all();
        });
    }

    thread_local! {
        /// Waits of this thread's writers for a buffer to come back (all [`BUFFERS`](super::BUFFERS)
        /// in use), since [`release_when_waiting_for_a_buffer`].
        static BUFFER_WAITS: Cell<usize> = const { Cell::new(0) };
        /// Whether the next such wait lets the held writes go on ([`release`]).
        static RELEASE_ON_WAIT: Cell<bool> = const { Cell::new(false) };
    }

    /// Makes the next wait of this thread's writers for a buffer release the writes held by
    /// [`hold`] (which it would otherwise wait for forever), and counts the waits from now.
    pub(crate) fn release_when_waiting_for_a_buffer() {
        BUFFER_WAITS.with(|c| c.set(0));
        RELEASE_ON_WAIT.with(|c| c.set(true));
    }

    /// Waits of this thread's writers for a buffer since [`release_when_waiting_for_a_buffer`].
    pub(crate) fn buffer_waits() -> usize {
        BUFFER_WAITS.with(Cell::get)
    }

    /// A writer is about to wait for a buffer to come back.
    pub(super) fn waiting_for_a_buffer() {
        BUFFER_WAITS.with(|c| c.set(c.get().saturating_add(1)));
        if RELEASE_ON_WAIT.with(|c| c.replace(false)) {
            release();
        }
    }

    /// I/O threads alive of the writers created on this thread.
    pub(crate) fn live_threads() -> usize {
        COUNTS.with(|c| c.threads.load(Ordering::SeqCst))
    }

    /// Buffers alive of the writers created on this thread.
    pub(crate) fn live_buffers() -> usize {
        COUNTS.with(|c| c.buffers.load(Ordering::SeqCst))
    }

    /// What the hook makes of one direct write: drawn on the writer's thread as the write is
    /// handed to the I/O thread, applied there.
    #[derive(Debug)]
    pub(super) struct Injected {
        fail: Option<i32>,
        gate: Arc<Gate>,
    }

    impl Injected {
        /// Waits while the gate is closed (a dropped writer, `cancel`, ends the wait with
        /// `Interrupted`), then the error the write fails with, if any.
        pub(super) fn apply(&self, cancel: &AtomicBool) -> Option<io::Error> {
            let mut closed = self.gate.closed.lock().unwrap_or_else(PoisonError::into_inner);
            while *closed {
                if cancel.load(Ordering::SeqCst) {
                    return Some(io::Error::from(io::ErrorKind::Interrupted));
                }
                // a timeout: `cancel` is set without notifying the gate
                closed = self
                    .gate
                    .opened
                    .wait_timeout(closed, Duration::from_millis(5))
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            self.fail.map(io::Error::from_raw_os_error)
        }

        /// The write is handed back (in the I/O thread, after its result is sent).
        pub(super) fn handed_back(&self) {
            let mut done = self.gate.handed_back.lock().unwrap_or_else(PoisonError::into_inner);
            *done = done.saturating_add(1);
            drop(done);
            self.gate.came_back.notify_all();
        }
    }

    /// Waits until `n` direct writes of this thread's writers (counted from the first) are
    /// handed back: their results wait in the writer's channel.
    pub(crate) fn wait_handed_back(n: usize) {
        GATE.with(|g| {
            let mut done = g.handed_back.lock().unwrap_or_else(PoisonError::into_inner);
            while *done < n {
                done = g.came_back.wait(done).unwrap_or_else(PoisonError::into_inner);
            }
        });
    }

    pub(super) fn next_write() -> Injected {
        COUNT.with(|c| c.set(c.get().saturating_add(1)));
        let fail = PLAN.with(|x| x.borrow_mut().pop().flatten());
        Injected { fail, gate: GATE.with(Arc::clone) }
    }

    /// One I/O thread or buffer alive, counted until dropped.
    #[derive(Debug)]
    pub(super) struct Live {
        counts: Arc<Counts>,
        thread: bool,
    }

    impl Live {
        fn new(thread: bool) -> Live {
            let counts = COUNTS.with(Arc::clone);
            let n = if thread { &counts.threads } else { &counts.buffers };
            n.fetch_add(1, Ordering::SeqCst);
            Live { counts, thread }
        }

        pub(super) fn thread() -> Live {
            Live::new(true)
        }

        pub(super) fn buffer() -> Live {
            Live::new(false)
        }
    }

    impl Drop for Live {
        fn drop(&mut self) {
            let n = if self.thread { &self.counts.threads } else { &self.counts.buffers };
            n.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests;
