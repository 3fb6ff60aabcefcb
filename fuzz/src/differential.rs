//! The `differential` target: the same bytes through gguf-serde's reader and through ggml's own
//! (`gguf_init_from_buffer` of the llama.cpp build in `GGUF_LLAMA_CPP_DIR`, tensor data loaded,
//! `ggml/shim.c`), failing on any difference in verdict or in what both parsed, except the known
//! differences of [`Known`], each counted and justified in `README.md`.
//!
//! ggml aborts the process on some inputs, so it runs in a worker: this same fuzzer binary started
//! again with `GGUF_DIFF_WORKER=1`, which [`worker_if_asked`] (the target's `init`) turns into a
//! loop reading inputs from stdin and writing ggml's answer to stdout. A GGML_ABORT is reported by
//! the shim's abort callback and ends the worker; a crash ends it too. Either way the input is
//! recorded (counted, the first input of each abort message saved in
//! `artifacts/differential/ggml-abort-N`), our reader must have refused it with a typed error,
//! and a new worker serves the next input.

use std::collections::HashSet;
use std::ffi::{c_int, c_void};
use std::io::{Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use gguf_serde::{Endian, Error, ErrorKind, FormatError, Gguf, ValueRef};

extern "C" {
    fn ggml_diff_parse(data: *const u8, len: usize, out: *mut *mut u8, out_len: *mut usize) -> c_int;
    fn ggml_diff_worker_init();
    fn free(p: *mut c_void);
    fn atexit(f: extern "C" fn()) -> c_int;
}

extern "C" fn print_stats_at_exit() {
    print_stats();
}

const WORKER_ENV: &str = "GGUF_DIFF_WORKER";

/// The worker's answers: the first byte.
const REFUSED: u8 = 0;
const ACCEPTED: u8 = 1;
const ABORTED: u8 = 2;

/// Turns this process into the ggml worker when started as one (`GGUF_DIFF_WORKER` set): reads
/// `u32 length | bytes` from stdin, answers `0` (refused), `1 | u32 length | record` (accepted,
/// the record of `ggml/shim.c`) or, from the abort callback, `2 | u32 length | message`; ends
/// at the end of stdin. Returns at once otherwise.
pub fn worker_if_asked() {
    if std::env::var_os(WORKER_ENV).is_none() {
        // The fuzzer itself: print the counters when it exits (-runs, -max_total_time).
        // SAFETY: registers a function without arguments that only prints.
        unsafe { atexit(print_stats_at_exit) };
        return;
    }
    // SAFETY: installs a log and an abort callback; no other thread runs ggml.
    unsafe { ggml_diff_worker_init() };
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    loop {
        let mut len = [0u8; 4];
        if stdin.read_exact(&mut len).is_err() {
            std::process::exit(0);
        }
        let mut data = vec![0u8; u32::from_le_bytes(len) as usize];
        if stdin.read_exact(&mut data).is_err() {
            std::process::exit(0);
        }
        let (mut out, mut out_len) = (std::ptr::null_mut(), 0usize);
        // SAFETY: `data` is valid for its length; on 1 the shim hands over a malloc'ed buffer of
        // `out_len` bytes, freed below.
        let r = unsafe { ggml_diff_parse(data.as_ptr(), data.len(), &mut out, &mut out_len) };
        let answer = match r {
            1 => {
                // SAFETY: as above.
                let record = unsafe { std::slice::from_raw_parts(out, out_len) }.to_vec();
                unsafe { free(out.cast()) };
                [&[ACCEPTED][..], &(record.len() as u32).to_le_bytes(), &record].concat()
            }
            0 => vec![REFUSED],
            _ => {
                let m = b"the shim could not allocate its record";
                [&[ABORTED][..], &(m.len() as u32).to_le_bytes(), m].concat()
            }
        };
        if stdout.write_all(&answer).and_then(|()| stdout.flush()).is_err() {
            std::process::exit(0);
        }
    }
}

/// What ggml made of an input.
#[derive(Debug)]
pub enum Ggml {
    /// `gguf_init_from_buffer` returned a context: what it holds, in the shim's record format.
    Accepted(Vec<u8>),
    /// It returned NULL.
    Refused,
    /// GGML_ABORT or GGML_ASSERT, with ggml's message.
    Aborted(String),
    /// The worker ended without an answer (a crash inside ggml): how it ended.
    Died(String),
}

struct Worker {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
}

impl Worker {
    fn spawn() -> Worker {
        let exe = std::env::current_exe().expect("the fuzzer's own path");
        // Under AddressSanitizer, an allocation ggml cannot get (a tensor data section of
        // terabytes) returns NULL as from glibc instead of stopping the worker with a report.
        let asan = std::env::var("ASAN_OPTIONS").unwrap_or_default();
        let mut child = Command::new(exe)
            .env(WORKER_ENV, "1")
            .env("GGML_NO_BACKTRACE", "1")
            .env(
                "ASAN_OPTIONS",
                format!("{asan}:allocator_may_return_null=1:max_allocation_size_mb=4096:detect_leaks=0"),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the ggml worker");
        let stdin = child.stdin.take().expect("worker stdin");
        let stdout = child.stdout.take().expect("worker stdout");
        Worker { child, stdin, stdout }
    }

    fn ask(&mut self, data: &[u8]) -> std::io::Result<Ggml> {
        self.stdin.write_all(&(data.len() as u32).to_le_bytes())?;
        self.stdin.write_all(data)?;
        self.stdin.flush()?;
        let mut status = [0u8; 1];
        self.stdout.read_exact(&mut status)?;
        if status[0] == REFUSED {
            return Ok(Ggml::Refused);
        }
        let mut len = [0u8; 4];
        self.stdout.read_exact(&mut len)?;
        let mut body = vec![0u8; u32::from_le_bytes(len) as usize];
        self.stdout.read_exact(&mut body)?;
        Ok(match status[0] {
            ACCEPTED => Ggml::Accepted(body),
            _ => Ggml::Aborted(String::from_utf8_lossy(&body).into_owned()),
        })
    }
}

static WORKER: Mutex<Option<Worker>> = Mutex::new(None);

/// Runs ggml's reader on `data` in the worker (started on first use, and again after it ended).
pub fn ggml_parse(data: &[u8]) -> Ggml {
    let mut w = WORKER.lock().unwrap_or_else(|e| e.into_inner());
    let worker = w.get_or_insert_with(Worker::spawn);
    let answer = worker.ask(data);
    match answer {
        Ok(a @ (Ggml::Accepted(_) | Ggml::Refused)) => a,
        other => {
            // The worker has ended (after an abort it exits; after a crash it is gone).
            let mut worker = w.take().expect("the worker");
            drop(worker.stdin);
            let status = worker.child.wait().map(|s| s.to_string()).unwrap_or_else(|e| e.to_string());
            match other {
                Ok(a) => a,
                Err(_) => Ggml::Died(status),
            }
        }
    }
}

/// A difference between the two readers that is known and justified in `README.md`; each input
/// that shows one is counted under its name instead of failing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    /// A big-endian file: ggml refuses it (version with zero low 16 bits), we read it.
    BigEndian,
    /// An array of arrays: ggml refuses it, we read it (the spec allows it).
    NestedArray,
    /// The file ends inside the padding after the last tensor's data: ggml, loading the data,
    /// reads the whole padded data section and refuses; we (and ggml without the data, as
    /// llama.cpp loads a model) need every tensor's bytes only.
    UnpaddedEnd,
    /// A quantized tensor whose `ne[0]` × type size overflows 64 bits (`ne[0]` near 2^62):
    /// ggml's `ggml_nbytes` multiplies before it divides by the block size, so the size wraps to
    /// a few bytes and ggml accepts the file reading only those; we compute the exact size and
    /// refuse (`TensorOutOfBounds`): the tensor cannot be in the file.
    GgmlSizeWraps,
    /// A key that is `general.alignment` up to a NUL byte and goes on after it: ggml finds keys
    /// with `strcmp` on NUL-terminated strings, so it takes that pair for the alignment (refusing
    /// it when it is not a UINT32 power of two, using its value otherwise); for us it is another
    /// key, and the alignment is the default or the real `general.alignment`'s.
    NulAlignmentKey,
}

impl Known {
    /// Every entry, in the order of the counters.
    pub const ALL: [Known; 5] =
        [Known::BigEndian, Known::NestedArray, Known::UnpaddedEnd, Known::GgmlSizeWraps, Known::NulAlignmentKey];

    fn name(self) -> &'static str {
        match self {
            Known::BigEndian => "big-endian",
            Known::NestedArray => "array of arrays",
            Known::UnpaddedEnd => "unpadded end",
            Known::GgmlSizeWraps => "ggml size wraps",
            Known::NulAlignmentKey => "general.alignment up to a NUL",
        }
    }
}

/// Counters printed to stderr every 20,000 inputs (libFuzzer's log) and when the fuzzer exits normally.
struct Stats {
    inputs: AtomicU64,
    both_accept: AtomicU64,
    both_refuse: AtomicU64,
    ggml_aborts: AtomicU64,
    worker_died: AtomicU64,
    nul_strings: AtomicU64,
    known: [AtomicU64; Known::ALL.len()],
}

static STATS: Stats = Stats {
    inputs: AtomicU64::new(0),
    both_accept: AtomicU64::new(0),
    both_refuse: AtomicU64::new(0),
    ggml_aborts: AtomicU64::new(0),
    worker_died: AtomicU64::new(0),
    nul_strings: AtomicU64::new(0),
    known: [const { AtomicU64::new(0) }; Known::ALL.len()],
};

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

fn print_stats() {
    let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
    let known: Vec<String> =
        Known::ALL.iter().zip(&STATS.known).map(|(k, c)| format!("{}={}", k.name(), g(c))).collect();
    eprintln!(
        "differential: {} inputs: both accept {}, both refuse {}, ggml aborts {}, ggml worker died {}, \
         accepted with a NUL in a string {}; known differences: {}",
        g(&STATS.inputs),
        g(&STATS.both_accept),
        g(&STATS.both_refuse),
        g(&STATS.ggml_aborts),
        g(&STATS.worker_died),
        g(&STATS.nul_strings),
        known.join(", ")
    );
}

/// Abort messages seen so far; the first input of each is saved.
static ABORTS: Mutex<Option<HashSet<String>>> = Mutex::new(None);

fn record_abort(data: &[u8], message: &str) {
    let mut seen = ABORTS.lock().unwrap_or_else(|e| e.into_inner());
    let seen = seen.get_or_insert_with(HashSet::new);
    if seen.insert(message.to_owned()) {
        let dir = std::path::Path::new("artifacts/differential");
        let path = dir.join(format!("ggml-abort-{}", seen.len()));
        let saved = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, data));
        eprintln!(
            "differential: ggml aborts ({message}); input of {} bytes {}",
            data.len(),
            match saved {
                Ok(()) => format!("saved as {}", path.display()),
                Err(e) => format!("not saved: {e}"),
            }
        );
    }
}

/// What validate --ggml adds to the reader: the ggml refusals of a file the reader accepts
/// (`gguf-cli/src/validate.rs`, `ggml_refusals`, less the llama.cpp loader's key types, which
/// are no part of ggml's reader): a tensor name of 64 bytes or more, an offset other than the
/// running sum of padded sizes.
fn ggml_refusal(f: &Gguf<&[u8]>) -> Option<String> {
    let align = u64::from(f.alignment());
    let mut expected = 0u64;
    for t in f.tensors() {
        if t.name.len() >= 64 {
            return Some(format!("tensor name of {} bytes", t.name.len()));
        }
        if t.relative_offset != expected {
            return Some(format!("tensor {:?} at offset {}, ggml expects {expected}", t.name, t.relative_offset));
        }
        expected = (t.relative_offset + t.nbytes).div_ceil(align) * align;
    }
    None
}

/// The check of the `differential` target.
pub fn check_differential(data: &[u8]) {
    bump(&STATS.inputs);
    let n = STATS.inputs.load(Ordering::Relaxed);
    if n % 20_000 == 0 {
        print_stats();
    }
    let ours = Gguf::from_slice(data);
    let ggml = ggml_parse(data);
    match &ggml {
        Ggml::Aborted(_) => bump(&STATS.ggml_aborts),
        Ggml::Died(_) => bump(&STATS.worker_died),
        _ => {}
    }
    let ours = ours.map(|f| {
        let refusal = ggml_refusal(&f);
        (f, refusal)
    });
    match (&ours, ggml) {
        (Err(_), Ggml::Refused) | (Ok((_, Some(_))), Ggml::Refused) => bump(&STATS.both_refuse),
        (_, Ggml::Aborted(m)) | (_, Ggml::Died(m)) => {
            record_abort(data, &m);
            // Ours must refuse it with a typed error, not crash (it did not: we are here).
            if let Ok((f, None)) = &ours {
                panic!("ggml aborts ({m}) on a file we accept ({} keys, {} tensors)", f.kv_count(), f.tensor_count());
            }
        }
        (Err(e), Ggml::Accepted(record)) => match known_refusal(e, &decode(&record)) {
            Some(k) => bump(&STATS.known[k as usize]),
            None => panic!("ggml accepts, we refuse: {e}"),
        },
        (Ok((_, Some(r))), Ggml::Accepted(_)) => panic!("ggml accepts, validate --ggml refuses: {r}"),
        (Ok((f, _)), Ggml::Refused) => match known_acceptance(f) {
            Some(k) => bump(&STATS.known[k as usize]),
            None => panic!("ggml refuses, we accept ({} keys, {} tensors)", f.kv_count(), f.tensor_count()),
        },
        (Ok((f, None)), Ggml::Accepted(_)) if nul_alignment_key(f) => {
            bump(&STATS.known[Known::NulAlignmentKey as usize])
        }
        (Ok((f, None)), Ggml::Accepted(record)) => {
            bump(&STATS.both_accept);
            let theirs = decode(&record);
            let mine = describe(f);
            if mine.nul {
                bump(&STATS.nul_strings);
            }
            if let Some(d) = first_difference(&mine, &theirs) {
                panic!("both accept, they differ: {d}");
            }
        }
    }
}

/// The known difference that explains our refusal of a file ggml accepts.
fn known_refusal(e: &Error, theirs: &View) -> Option<Known> {
    match e.kind() {
        ErrorKind::Format(FormatError::TensorOutOfBounds { .. }) if ggml_size_wrapped(theirs) => {
            Some(Known::GgmlSizeWraps)
        }
        _ => None,
    }
}

/// Whether ggml reported a tensor size other than the exact `ne[0] / block size × type size ×
/// ne[1] × …` (0 when a dim is 0), i.e. its `ggml_nbytes` wrapped.
fn ggml_size_wrapped(theirs: &View) -> bool {
    theirs.tensors.iter().any(|t| {
        let Some(dtype) = gguf_serde::GgmlType::from_id(t.ty) else { return false };
        let ne = t.ne.map(|d| d as u64);
        let exact = if ne.contains(&0) {
            Some(0)
        } else {
            ne[1..].iter().try_fold(u128::from(ne[0] / dtype.block_size() * dtype.type_size()), |acc, &d| {
                acc.checked_mul(u128::from(d))
            })
        };
        exact != Some(u128::from(t.size))
    })
}

/// Whether a key is `general.alignment` up to a NUL byte and longer (see [`Known::NulAlignmentKey`]).
fn nul_alignment_key(f: &Gguf<&[u8]>) -> bool {
    f.metadata().any(|kv| {
        let key = kv.key.as_bytes();
        key.len() > 17 && key.starts_with(b"general.alignment\0")
    })
}

/// The known difference that explains our acceptance of a file ggml refuses.
fn known_acceptance(f: &Gguf<&[u8]>) -> Option<Known> {
    if f.endian() == Endian::Big {
        return Some(Known::BigEndian);
    }
    if nul_alignment_key(f) {
        return Some(Known::NulAlignmentKey);
    }
    if f.metadata().any(|kv| kv.value.as_array().is_some_and(|a| a.elem_type() == gguf_serde::ValueType::Array)) {
        return Some(Known::NestedArray);
    }
    // The padded data section (offsets are ggml's running sums here: validate --ggml checked).
    let align = u64::from(f.alignment());
    let padded = f.tensors().last().map_or(0, |t| (t.relative_offset + t.nbytes).div_ceil(align) * align);
    (f.data_offset() + padded > f.file_len()).then_some(Known::UnpaddedEnd)
}

/// One reader's view, in the terms both share: strings as bytes up to the first NUL (ggml's C
/// API has no length), numbers as their little-endian bytes, bools as 0/1, ne padded with 1s to
/// four dims.
#[derive(Debug, PartialEq)]
struct View {
    version: u32,
    alignment: u64,
    data_offset: u64,
    kvs: Vec<KvView>,
    tensors: Vec<TensorView>,
    /// Whether a string was cut at a NUL.
    nul: bool,
}

#[derive(Debug, PartialEq)]
struct KvView {
    key: Vec<u8>,
    ty: u32,
    /// Element type and count, for an array.
    array: Option<(u32, u64)>,
    /// The value's (or elements') bytes: numbers as stored little-endian, strings as `u32`
    /// length and bytes each.
    payload: Vec<u8>,
}

#[derive(Debug, PartialEq)]
struct TensorView {
    name: Vec<u8>,
    ty: u32,
    ne: [i64; 4],
    offset: u64,
    size: u64,
    data_hash: u64,
}

fn upto_nul(b: &[u8], nul: &mut bool) -> Vec<u8> {
    match b.iter().position(|&c| c == 0) {
        Some(i) => {
            *nul = true;
            b[..i].to_vec()
        }
        None => b.to_vec(),
    }
}

fn put_str(out: &mut Vec<u8>, s: &[u8], nul: &mut bool) {
    let s = upto_nul(s, nul);
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(&s);
}

fn scalar_bytes(v: ValueRef<'_>, out: &mut Vec<u8>, nul: &mut bool) {
    match v {
        ValueRef::U8(x) => out.extend_from_slice(&x.to_le_bytes()),
        ValueRef::I8(x) => out.extend_from_slice(&x.to_le_bytes()),
        ValueRef::U16(x) => out.extend_from_slice(&x.to_le_bytes()),
        ValueRef::I16(x) => out.extend_from_slice(&x.to_le_bytes()),
        ValueRef::U32(x) => out.extend_from_slice(&x.to_le_bytes()),
        ValueRef::I32(x) => out.extend_from_slice(&x.to_le_bytes()),
        ValueRef::F32(x) => out.extend_from_slice(&x.to_bits().to_le_bytes()),
        ValueRef::Bool(x) => out.push(u8::from(x)),
        ValueRef::String(s) => put_str(out, s.as_bytes(), nul),
        ValueRef::U64(x) => out.extend_from_slice(&x.to_le_bytes()),
        ValueRef::I64(x) => out.extend_from_slice(&x.to_le_bytes()),
        ValueRef::F64(x) => out.extend_from_slice(&x.to_bits().to_le_bytes()),
        ValueRef::Array(_) => unreachable!("arrays of arrays are a known difference, not compared"),
    }
}

fn fnv1a(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Our reader's view of a file it accepts (little-endian, no arrays of arrays: ggml refuses
/// those, so they are not compared).
fn describe(f: &Gguf<&[u8]>) -> View {
    let mut nul = false;
    let kvs = f
        .metadata()
        .map(|kv| {
            let mut payload = Vec::new();
            let array = kv.value.as_array().map(|a| {
                for v in a.iter() {
                    scalar_bytes(v, &mut payload, &mut nul);
                }
                (a.elem_type().id(), a.len())
            });
            if array.is_none() {
                scalar_bytes(kv.value, &mut payload, &mut nul);
            }
            KvView { key: upto_nul(kv.key.as_bytes(), &mut nul), ty: kv.value.value_type().id(), array, payload }
        })
        .collect();
    let tensors = f
        .tensors()
        .map(|t| {
            let mut ne = [1i64; 4];
            for (d, &n) in ne.iter_mut().zip(t.ne().dims()) {
                *d = n as i64;
            }
            TensorView {
                name: upto_nul(t.name.as_bytes(), &mut nul),
                ty: t.dtype.id(),
                ne,
                offset: t.relative_offset,
                size: t.nbytes,
                data_hash: fnv1a(f.tensor_data(&t).expect("a tensor of an accepted slice has its data")),
            }
        })
        .collect();
    View { version: f.version(), alignment: u64::from(f.alignment()), data_offset: f.data_offset(), kvs, tensors, nul }
}

/// Reads the shim's record (see `ggml/shim.c`).
struct Record<'a>(&'a [u8]);

impl Record<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().unwrap())
    }
    fn str(&mut self) -> Vec<u8> {
        let n = self.u32() as usize;
        self.take(n).to_vec()
    }
}

/// Bytes of one element of a fixed-size GGUF type, by id.
fn scalar_size(id: u32) -> usize {
    match id {
        0 | 1 | 7 => 1,
        2 | 3 => 2,
        4..=6 => 4,
        10..=12 => 8,
        _ => panic!("ggml reported value type {id}"),
    }
}

fn decode(record: &[u8]) -> View {
    let mut r = Record(record);
    let (version, alignment, data_offset) = (r.u32(), r.u64(), r.u64());
    let (n_kv, n_tensors) = (r.u64(), r.u64());
    let read_values = |r: &mut Record<'_>, ty: u32, n: u64| {
        let mut payload = Vec::new();
        for _ in 0..n {
            if ty == 8 {
                let s = r.str();
                payload.extend_from_slice(&(s.len() as u32).to_le_bytes());
                payload.extend_from_slice(&s);
            } else {
                payload.extend_from_slice(r.take(scalar_size(ty)));
            }
        }
        payload
    };
    let kvs = (0..n_kv)
        .map(|_| {
            let key = r.str();
            let ty = r.u32();
            let (array, payload) = if ty == 9 {
                let (elem, n) = (r.u32(), r.u64());
                (Some((elem, n)), read_values(&mut r, elem, n))
            } else {
                (None, read_values(&mut r, ty, 1))
            };
            KvView { key, ty, array, payload }
        })
        .collect();
    let tensors = (0..n_tensors)
        .map(|_| {
            let name = r.str();
            let ty = r.u32();
            let ne = [r.u64() as i64, r.u64() as i64, r.u64() as i64, r.u64() as i64];
            TensorView { name, ty, ne, offset: r.u64(), size: r.u64(), data_hash: r.u64() }
        })
        .collect();
    assert!(r.0.is_empty(), "the shim's record has {} bytes too many", r.0.len());
    View { version, alignment, data_offset, kvs, tensors, nul: false }
}

/// The first difference between our view and ggml's, described.
fn first_difference(ours: &View, ggml: &View) -> Option<String> {
    let head = |v: &View| (v.version, v.alignment, v.data_offset, v.kvs.len(), v.tensors.len());
    if head(ours) != head(ggml) {
        return Some(format!(
            "(version, alignment, data offset, keys, tensors): ours {:?}, ggml {:?}",
            head(ours),
            head(ggml)
        ));
    }
    for (i, (a, b)) in ours.kvs.iter().zip(&ggml.kvs).enumerate() {
        if a != b {
            return Some(format!("pair {i}: ours {a:?}, ggml {b:?}"));
        }
    }
    for (i, (a, b)) in ours.tensors.iter().zip(&ggml.tensors).enumerate() {
        if a != b {
            return Some(format!("tensor {i}: ours {a:?}, ggml {b:?}"));
        }
    }
    None
}
