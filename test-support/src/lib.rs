//! Test support of the workspace that needs no gguf-serde type, shared by gguf-serde's own
//! integration tests and benches, the interop tests of `gguf-tests` (which re-exports it as
//! `gguf_tests::support`) and the tests of `gguf`: a tiny GGUF byte builder that knows nothing of
//! the crate's writer, so tests of the reader and of the writer never check the writer against
//! itself; the fuzz seed corpus; a counting allocator; temporary folders; deadlines against hangs;
//! [`skip`]; an HTTP range server ([`range_server`]); the typed metadata structs of the serde
//! tests ([`metadata_structs`]); hex and f32 decoders.
//!
//! It does not depend on gguf-serde: as a dev-dependency of gguf-serde, such a dependency would be
//! a second copy of the crate whose types are not those of gguf-serde's own tests. Helpers that
//! take gguf-serde types live beside the tests that use them (`gguf-serde/tests/common/mod.rs`,
//! `tests/src/lib.rs`).
//!
//! Byte layout of the builder (ggml `docs/gguf.md`, "File Structure"): `"GGUF"`, version u32,
//! tensor count u64, KV count u64, KV pairs (u64-length key, u32 type, value), tensor infos
//! (u64-length name, u32 n_dims, u64 ne[n_dims], u32 ggml type, u64 offset), zero padding to the
//! alignment, data.

pub mod metadata_structs;
pub mod range_server;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

// ---------------------------------------------------------------------------------------------
// A counting allocator (installed by [`count_allocations!`] in the binaries that measure): per thread, the
// largest single allocation, the total of all allocations, and the peak of bytes live at once,
// to prove hostile lengths allocate nothing and opening a file allocates in proportion to it.

/// The counting allocator: the system allocator, recording sizes ([`count_allocations!`]).
pub struct Tracking;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
    static TOTAL: Cell<usize> = const { Cell::new(0) };
    // Bytes allocated minus bytes freed on this thread since the last reset (negative when the
    // thread frees what it had before), and the highest value it reached.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note(grow: usize, shrink: usize) {
    let _ = LARGEST.try_with(|c| c.set(c.get().max(grow)));
    let _ = TOTAL.try_with(|c| c.set(c.get().saturating_add(grow)));
    let _ = LIVE.try_with(|live| {
        let now = live.get().saturating_add(grow as isize).saturating_sub(shrink as isize);
        live.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

// SAFETY: forwards every call to the system allocator; only records sizes.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size(), 0);
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size(), 0);
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Counted as a new block live next to the old one: the worst case of a moving realloc.
        note(new_size, 0);
        let p = System.realloc(ptr, layout, new_size);
        note(0, layout.size());
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(0, layout.size());
        System.dealloc(ptr, layout)
    }
}

/// Installs [`Tracking`] as the global allocator of the binary (once per binary, in any of its
/// modules), so that [`measure`] sees what the code allocates.
#[macro_export]
macro_rules! count_allocations {
    () => {
        #[global_allocator]
        static ALLOC: $crate::Tracking = $crate::Tracking;
    };
}

/// What [`measure`] saw: bytes allocated on this thread while the closure ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Allocs {
    /// The largest single allocation (or reallocation's new size).
    pub largest: usize,
    /// The sum of every allocation's size.
    pub total: usize,
    /// The most bytes live at once, counted from the start of the closure (a reallocation counts
    /// old and new block together).
    pub peak: usize,
}

/// Runs `f` and returns its result with what it allocated on this thread.
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, Allocs) {
    LARGEST.with(|c| c.set(0));
    TOTAL.with(|c| c.set(0));
    LIVE.with(|c| c.set(0));
    PEAK.with(|c| c.set(0));
    let r = f();
    let a = Allocs {
        largest: LARGEST.with(|c| c.get()),
        total: TOTAL.with(|c| c.get()),
        peak: PEAK.with(|c| c.get()).max(0) as usize,
    };
    (r, a)
}

/// Runs `f` and returns its result with the largest single allocation it made on this thread.
pub fn largest_alloc<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let (r, a) = measure(f);
    (r, a.largest)
}

/// Bytes allocated per byte of metadata, at most, when opening a file (the constant documented in
/// the `container` module docs; `suite/resources.rs`). Measured worst case:
/// 15.4, a file of nothing but the smallest key/value pairs (72 bytes of index and a hash-set
/// slot for every 14 to 18 bytes of file), just past a doubling of the index, counting the old
/// and new block of a reallocation together; smallest tensor infos: 9.7; real files: at most 0.04
/// (SmolLM2, 272 tensors); the 19 vocabulary files: under 0.004.
pub const PER_BYTE: usize = 16;
/// Bytes allocated regardless of the file (error messages, the index tables reserved for up to 64
/// entries before any is parsed), at most.
pub const FIXED: usize = 16 * 1024;
/// What `from_reader` may hold on top: its buffer grows in pieces up to twice the metadata and
/// starts at 64 KiB (or the file, if smaller); old and new buffer are briefly live together.
pub fn reader_extra(metadata: usize, file: usize) -> usize {
    3 * metadata.max((64 * 1024).min(file))
}

/// The bound for opening a file whose metadata is `metadata` bytes long.
pub fn bound(metadata: usize) -> usize {
    PER_BYTE * metadata + FIXED
}

/// A fresh temporary folder under `<target>/test-tmp` (see [`test_tmp_root`]), removed with
/// everything in it when dropped, also when the test fails.
pub fn temp_dir() -> tempfile::TempDir {
    let root = test_tmp_root();
    std::fs::create_dir_all(&root).expect("test-tmp folder");
    tempfile::Builder::new().prefix("gguf-test-").tempdir_in(root).expect("temp dir")
}

/// `<target>/test-tmp`, where `<target>` is the target directory the running test binary was
/// built into (`<target>/<profile>/deps/<binary>`), so that `CARGO_TARGET_DIR` is honoured.
pub fn test_tmp_root() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.ancestors().nth(3).expect("<target>/<profile>/deps/<binary>").join("test-tmp")
}

/// Runs `f` on its own thread and returns its result, or fails the test if it has not finished
/// after `limit`: a watchdog against hangs, not a speed check. A panic in `f` fails the test
/// with its message.
pub fn with_deadline<R: Send + 'static>(limit: std::time::Duration, f: impl FnOnce() -> R + Send + 'static) -> R {
    use std::sync::mpsc::RecvTimeoutError;
    let (tx, rx) = std::sync::mpsc::channel();
    let name = std::thread::current().name().unwrap_or("deadline").to_owned();
    let h = std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            let _ = tx.send(f());
        })
        .expect("spawn");
    match rx.recv_timeout(limit) {
        Ok(r) => r,
        Err(RecvTimeoutError::Timeout) => panic!("did not finish within {limit:?}: a hang"),
        Err(RecvTimeoutError::Disconnected) => match h.join() {
            Err(p) => std::panic::resume_unwind(p),
            Ok(()) => unreachable!("the thread sends before it ends"),
        },
    }
}

/// Records that the calling test returns early without checking what it is for: prints
/// `SKIPPED: <test>: <reason>` straight to the standard error (past libtest's capture, so that
/// `scripts/test.sh` counts it), or fails the test when the environment has `CI` set (to
/// anything but `false` or `0`), as `scripts/test.sh` does: there a skip is a failure.
pub fn skip(reason: &str) {
    use std::io::Write as _;
    let current = std::thread::current();
    let test = current.name().unwrap_or("?");
    let ci = std::env::var("CI").is_ok_and(|v| v != "false" && v != "0");
    assert!(!ci, "{test} would be skipped ({reason}): under CI a skip is a failure");
    let _ = writeln!(std::io::stderr(), "SKIPPED: {test}: {reason}");
}

/// GGUF value type ids (spec table `gguf_metadata_value_type`).
pub mod ty {
    pub const U8: u32 = 0;
    pub const I8: u32 = 1;
    pub const U16: u32 = 2;
    pub const I16: u32 = 3;
    pub const U32: u32 = 4;
    pub const I32: u32 = 5;
    pub const F32: u32 = 6;
    pub const BOOL: u32 = 7;
    pub const STRING: u32 = 8;
    pub const ARRAY: u32 = 9;
    pub const U64: u32 = 10;
    pub const I64: u32 = 11;
    pub const F64: u32 = 12;
}

/// ggml type ids used in tests (ggml `enum ggml_type`).
pub mod gt {
    pub const F32: u32 = 0;
    pub const F16: u32 = 1;
    pub const Q4_0: u32 = 2;
    pub const Q8_0: u32 = 8;
    pub const Q4_K: u32 = 12;
    pub const I8: u32 = 24;
    pub const BF16: u32 = 30;
}

/// `B::u8`, `B::i8`, ... `B::f64`: append one number in the builder's byte order.
macro_rules! numbers {
    ($($t:ident),*) => {
        $(
            pub fn $t(&mut self, v: $t) -> &mut Self {
                self.num(v.to_le_bytes())
            }
        )*
    };
}

/// Appends GGUF primitives to a byte vector in one byte order.
#[derive(Clone, Debug, Default)]
pub struct B {
    pub buf: Vec<u8>,
    pub big: bool,
}

impl B {
    /// A little-endian builder.
    pub fn le() -> B {
        B { buf: Vec::new(), big: false }
    }

    /// A big-endian builder.
    pub fn be() -> B {
        B { buf: Vec::new(), big: true }
    }

    /// Current length = absolute offset of the next byte.
    pub fn pos(&self) -> u64 {
        self.buf.len() as u64
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.buf.clone()
    }

    pub fn raw(&mut self, b: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(b);
        self
    }

    fn num<const N: usize>(&mut self, mut le: [u8; N]) -> &mut Self {
        if self.big {
            le.reverse();
        }
        self.buf.extend_from_slice(&le);
        self
    }

    numbers!(u8, i8, u16, i16, u32, i32, f32, u64, i64, f64);

    /// A GGUF string: u64 byte length, then the bytes (no NUL).
    pub fn str(&mut self, s: impl AsRef<[u8]>) -> &mut Self {
        let s = s.as_ref();
        self.u64(s.len() as u64).raw(s)
    }

    /// Magic, version, tensor count, KV count (24 bytes).
    pub fn header(&mut self, version: u32, n_tensors: u64, n_kv: u64) -> &mut Self {
        self.raw(b"GGUF").u32(version).u64(n_tensors).u64(n_kv)
    }

    /// A key and a value type id; the value follows with the other methods.
    pub fn kv(&mut self, key: impl AsRef<[u8]>, type_id: u32) -> &mut Self {
        self.str(key).u32(type_id)
    }

    /// An array header: element type id and count; the elements follow.
    pub fn arr(&mut self, elem: u32, count: u64) -> &mut Self {
        self.u32(elem).u64(count)
    }

    /// A tensor info with stored dims `ne` (fastest first) and a ggml type id.
    pub fn tensor(&mut self, name: impl AsRef<[u8]>, ne: &[u64], type_id: u32, offset: u64) -> &mut Self {
        self.str(name).u32(ne.len() as u32);
        for &d in ne {
            self.u64(d);
        }
        self.u32(type_id).u64(offset)
    }

    /// Zero bytes up to the next multiple of `align` (absolute offset).
    pub fn pad(&mut self, align: u64) -> &mut Self {
        while !self.pos().is_multiple_of(align) {
            self.buf.push(0);
        }
        self
    }

    /// `n` bytes of a simple non-zero pattern starting at `seed`.
    pub fn data(&mut self, n: usize, seed: u8) -> &mut Self {
        for i in 0..n {
            self.buf.push(seed.wrapping_add((i as u8).wrapping_mul(7)) | 1);
        }
        self
    }
}

/// A valid file exercising several KV types, an array of arrays, strings and three tensors, with
/// the offsets a test needs to know.
pub struct Sample {
    pub bytes: Vec<u8>,
    /// End of the tensor infos.
    pub infos_end: u64,
    /// Start of the data section (infos_end rounded up to 32).
    pub data_offset: u64,
    /// End of the last tensor's data (before its padding).
    pub data_end: u64,
}

/// Builds [`Sample`] in the given byte order. Tensors: `a` F32 ne [4, 2] (32 bytes) at 0, `b` Q8_0
/// ne [32] (34 bytes) at 32, `c` F16 ne [3] (6 bytes) at 96; each padded to 32.
pub fn sample(big: bool) -> Sample {
    let mut b = if big { B::be() } else { B::le() };
    b.header(3, 3, 7);
    b.kv("general.architecture", ty::STRING).str("llama");
    b.kv("test.u32", ty::U32).u32(42);
    b.kv("test.i16", ty::I16).i16(-3);
    b.kv("test.bool", ty::BOOL).u8(1);
    b.kv("test.f64", ty::F64).f64(0.25);
    // array<array<...>>: [[1u8, 2u8], [], ["x", "yz"]] (inner types differ).
    b.kv("test.nested", ty::ARRAY).arr(ty::ARRAY, 3);
    b.arr(ty::U8, 2).u8(1).u8(2);
    b.arr(ty::I32, 0);
    b.arr(ty::STRING, 2).str("x").str("yz");
    b.kv("test.strings", ty::ARRAY).arr(ty::STRING, 2).str("alpha").str("");
    b.tensor("a", &[4, 2], gt::F32, 0);
    b.tensor("b", &[32], gt::Q8_0, 32);
    b.tensor("c", &[3], gt::F16, 96);
    let infos_end = b.pos();
    b.pad(32);
    let data_offset = b.pos();
    b.data(32, 1).pad(32).data(34, 2).pad(32).data(6, 3);
    let data_end = b.pos();
    b.pad(32);
    assert_eq!(data_end, data_offset + 96 + 6);
    Sample { bytes: b.bytes(), infos_end, data_offset, data_end }
}

/// Bytes that are not UTF-8 where ggml takes any bytes (`gguf.cpp` never checks UTF-8, so
/// llama.cpp loads such a file), little-endian, version 3:
///
/// - [`NOT_UTF8_KEY`] (U32 7) among text keys;
/// - `tokenizer.ggml.tokens` = `["a", NOT_UTF8_TOKEN, "\u{2581}b"]` (the middle one a cut
///   3-byte sequence), `general.name` = [`NOT_UTF8_STRING`] (Latin-1 `café`);
/// - tensors [`NOT_UTF8_TENSOR`] (F32 ne [4]) and `ok` (F32 ne [4]), 16 bytes of data each,
///   padded to 32.
pub fn not_utf8() -> Vec<u8> {
    let mut b = B::le();
    b.header(3, 2, 4);
    b.kv("general.architecture", ty::STRING).str("llama");
    b.kv(NOT_UTF8_KEY, ty::U32).u32(7);
    b.kv("tokenizer.ggml.tokens", ty::ARRAY).arr(ty::STRING, 3).str("a").str(NOT_UTF8_TOKEN).str("\u{2581}b");
    b.kv("general.name", ty::STRING).str(NOT_UTF8_STRING);
    b.tensor(NOT_UTF8_TENSOR, &[4], gt::F32, 0).tensor("ok", &[4], gt::F32, 32);
    b.pad(32).data(16, 1).pad(32).data(16, 2).pad(32);
    b.bytes()
}

/// The key of [`not_utf8`] that is not UTF-8.
pub const NOT_UTF8_KEY: &[u8] = b"test.k\xffey";
/// The token of [`not_utf8`] that is not UTF-8 (index 1).
pub const NOT_UTF8_TOKEN: &[u8] = b"\xe2\x96";
/// The `general.name` of [`not_utf8`].
pub const NOT_UTF8_STRING: &[u8] = b"caf\xe9";
/// The tensor name of [`not_utf8`] that is not UTF-8 (the first tensor).
pub const NOT_UTF8_TENSOR: &[u8] = b"w.\xc3(";

/// BOOL bytes other than 0 and 1, which the spec forbids and ggml reads as true (`gguf.cpp`,
/// `gguf_reader::read(bool &)`: any non-zero byte), little-endian, version 3:
///
/// - `general.architecture` = `llama`;
/// - `test.flag`: a BOOL stored as 0x02, at offset [`ODD_BOOL_SCALAR_AT`];
/// - `test.flags`: `array<bool>` stored as `[0x01, 0x00, 0xff, 0x80]` (true, false, true, true),
///   its 0xff at offset [`ODD_BOOL_ARRAY_AT`];
/// - `test.off`: a BOOL stored as 0x00, `test.on`: one stored as 0x01;
/// - tensors `a` and `b` (F32 ne [4]), 16 bytes of data each, padded to 32.
pub fn odd_bools() -> Vec<u8> {
    let mut b = B::le();
    b.header(3, 2, 5);
    b.kv("general.architecture", ty::STRING).str("llama");
    b.kv("test.flag", ty::BOOL);
    assert_eq!(b.pos(), ODD_BOOL_SCALAR_AT);
    b.u8(0x02);
    b.kv("test.flags", ty::ARRAY).arr(ty::BOOL, 4).u8(0x01).u8(0x00);
    assert_eq!(b.pos(), ODD_BOOL_ARRAY_AT);
    b.u8(0xff).u8(0x80);
    b.kv("test.off", ty::BOOL).u8(0x00);
    b.kv("test.on", ty::BOOL).u8(0x01);
    b.tensor("a", &[4], gt::F32, 0).tensor("b", &[4], gt::F32, 32);
    b.pad(32).data(16, 1).pad(32).data(16, 2).pad(32);
    b.bytes()
}

/// The offset of `test.flag`'s byte (0x02) in [`odd_bools`]: the 24-byte header, the pair of
/// `general.architecture` (8 + 20 + 4 + 8 + 5 bytes), then `test.flag`'s key and type (8 + 9 + 4).
pub const ODD_BOOL_SCALAR_AT: u64 = 24 + 45 + 21;
/// The offset of the first byte of `test.flags` that is neither 0 nor 1 (0xff, its third) in
/// [`odd_bools`]: after `test.flag`'s byte, the key and type of `test.flags` (8 + 10 + 4), its
/// element type and count (12), and two elements.
pub const ODD_BOOL_ARRAY_AT: u64 = ODD_BOOL_SCALAR_AT + 1 + 22 + 12 + 2;

/// One key of each of the 13 types (and an array of each), in the given byte order.
pub fn all_types(big: bool, version: u32) -> Vec<u8> {
    let mut b = if big { B::be() } else { B::le() };
    b.header(version, 1, 26);
    b.kv("u8", ty::U8).u8(200);
    b.kv("i8", ty::I8).i8(-100);
    b.kv("u16", ty::U16).u16(0xbeef);
    b.kv("i16", ty::I16).i16(-12345);
    b.kv("u32", ty::U32).u32(0xdead_beef);
    b.kv("i32", ty::I32).i32(-123_456_789);
    b.kv("f32", ty::F32).f32(-1.25);
    b.kv("bool", ty::BOOL).u8(1);
    b.kv("string", ty::STRING).str("héllo");
    b.kv("u64", ty::U64).u64(0x0123_4567_89ab_cdef);
    b.kv("i64", ty::I64).i64(-0x0123_4567_89ab_cdef);
    b.kv("f64", ty::F64).f64(std::f64::consts::PI);
    b.kv("a.u8", ty::ARRAY).arr(ty::U8, 2).u8(1).u8(255);
    b.kv("a.i8", ty::ARRAY).arr(ty::I8, 2).i8(-1).i8(1);
    b.kv("a.u16", ty::ARRAY).arr(ty::U16, 2).u16(1).u16(0xff00);
    b.kv("a.i16", ty::ARRAY).arr(ty::I16, 1).i16(-2);
    b.kv("a.u32", ty::ARRAY).arr(ty::U32, 2).u32(7).u32(0x0102_0304);
    b.kv("a.i32", ty::ARRAY).arr(ty::I32, 1).i32(-7);
    b.kv("a.f32", ty::ARRAY).arr(ty::F32, 2).f32(0.5).f32(f32::INFINITY);
    b.kv("a.bool", ty::ARRAY).arr(ty::BOOL, 3).u8(1).u8(0).u8(1);
    b.kv("a.string", ty::ARRAY).arr(ty::STRING, 3).str("a").str("").str("ü");
    b.kv("a.u64", ty::ARRAY).arr(ty::U64, 1).u64(u64::MAX - 1);
    b.kv("a.i64", ty::ARRAY).arr(ty::I64, 1).i64(i64::MIN);
    b.kv("a.f64", ty::ARRAY).arr(ty::F64, 1).f64(-0.0);
    b.kv("a.array", ty::ARRAY).arr(ty::ARRAY, 2).arr(ty::U16, 1).u16(0x1234).arr(ty::STRING, 1).str("in");
    b.kv("a.empty", ty::ARRAY).arr(ty::F32, 0);
    b.tensor("t", &[2], gt::F32, 0).pad(32).f32(1.0).f32(-2.0);
    b.buf
}

/// ggml types as (id, elements per block, bytes per block), from the ggml type table (ggml
/// `ggml.c` `type_traits`; GGUF-FACTS), every id a current ggml reads.
pub const GGML_TYPES: [(u32, u64, u64); 35] = [
    (0, 1, 4),
    (1, 1, 2),
    (2, 32, 18),
    (3, 32, 20),
    (6, 32, 22),
    (7, 32, 24),
    (8, 32, 34),
    (9, 32, 36),
    (10, 256, 84),
    (11, 256, 110),
    (12, 256, 144),
    (13, 256, 176),
    (14, 256, 210),
    (15, 256, 292),
    (16, 256, 66),
    (17, 256, 74),
    (18, 256, 98),
    (19, 256, 50),
    (20, 32, 18),
    (21, 256, 110),
    (22, 256, 82),
    (23, 256, 136),
    (24, 1, 1),
    (25, 1, 2),
    (26, 1, 4),
    (27, 1, 8),
    (28, 1, 8),
    (29, 256, 56),
    (30, 1, 2),
    (34, 256, 54),
    (35, 256, 66),
    (39, 32, 17),
    (40, 64, 36),
    (41, 128, 18),
    (42, 64, 18),
];

/// A named input of the fuzz seed corpus (`fuzz/seeds/`) and of the resource tests.
pub struct Seed {
    /// File name in `fuzz/seeds/`: `ok-*` for files that open, `bad-*` for files refused.
    pub name: &'static str,
    pub bytes: Vec<u8>,
}

impl Seed {
    pub fn valid(&self) -> bool {
        self.name.starts_with("ok-")
    }
}

/// The seed corpus: small valid files of every shape the reader knows (both byte orders, both
/// versions, every value type, every ggml type, alignments 1 and 64, no tensors with and without
/// padding, tensors without dims or of length 0, nested arrays) and one malformed file per kind
/// of error. Each is under 8 KiB.
pub fn seeds() -> Vec<Seed> {
    let mut out = Vec::new();
    let mut add = |name: &'static str, bytes: Vec<u8>| out.push(Seed { name, bytes });
    add("ok-sample-le", sample(false).bytes);
    add("ok-sample-be", sample(true).bytes);
    add("ok-all-types-le-v3", all_types(false, 3));
    add("ok-all-types-be-v3", all_types(true, 3));
    add("ok-all-types-le-v2", all_types(false, 2));
    add("ok-all-types-be-v2", all_types(true, 2));
    add("ok-header-only", B::le().header(3, 0, 0).bytes());
    add(
        "ok-vocab-padded",
        B::le().header(3, 0, 1).kv("t", ty::ARRAY).arr(ty::STRING, 2).str("a").str("bc").pad(32).bytes(),
    );
    add("ok-vocab-unpadded", B::le().header(3, 0, 1).kv("t", ty::ARRAY).arr(ty::STRING, 2).str("a").str("bc").bytes());
    {
        // One block of every ggml type, back to back (alignment 32).
        let mut b = B::le();
        b.header(3, GGML_TYPES.len() as u64, 0);
        let mut off = 0;
        for (i, &(id, blk, size)) in GGML_TYPES.iter().enumerate() {
            b.tensor(format!("t{i}"), &[blk], id, off);
            off = (off + size).div_ceil(32) * 32;
        }
        b.pad(32);
        for &(_, _, size) in &GGML_TYPES {
            b.data(size as usize, 5).pad(32);
        }
        add("ok-every-ggml-type", b.bytes());
    }
    {
        // A model the fuzz `model` target binds: token_embd.weight (F32 [2, 4]), two blocks'
        // attn_q.weight (F32 [4], Q8_0 [32]) and output.weight (F16 [4]).
        let mut b = B::le();
        b.header(3, 4, 1).kv("general.architecture", ty::STRING).str("llama");
        b.tensor("token_embd.weight", &[4, 2], 0, 0);
        b.tensor("blk.0.attn_q.weight", &[4], 0, 32);
        b.tensor("blk.1.attn_q.weight", &[32], 8, 64);
        b.tensor("output.weight", &[4], 1, 128);
        b.pad(32);
        b.data(32, 7).pad(32).data(16, 8).pad(32).data(34, 9).pad(32).data(8, 10).pad(32);
        add("ok-model", b.bytes());
    }
    add(
        "ok-alignment-1",
        B::le()
            .header(3, 2, 1)
            .kv("general.alignment", ty::U32)
            .u32(1)
            .tensor("a", &[3], 24, 0)
            .tensor("b", &[1], 25, 3)
            .data(5, 9)
            .bytes(),
    );
    add(
        "ok-alignment-64",
        B::le()
            .header(3, 1, 1)
            .kv("general.alignment", ty::U32)
            .u32(64)
            .tensor("a", &[2, 2], gt::F16, 0)
            .pad(64)
            .data(8, 3)
            .pad(64)
            .bytes(),
    );
    add(
        "ok-odd-tensors",
        // No dims (a scalar), a zero-length dim, offsets out of declaration order, trailing bytes.
        B::le()
            .header(3, 3, 0)
            .tensor("scalar", &[], gt::F32, 32)
            .tensor("empty", &[0, 4], gt::Q8_0, 64)
            .tensor("first", &[2], gt::I8, 0)
            .pad(32)
            .data(2, 1)
            .pad(32)
            .data(4, 2)
            .pad(32)
            .data(7, 3)
            .bytes(),
    );
    {
        let mut b = B::be();
        b.header(3, 0, 1).kv("deep", ty::ARRAY).arr(ty::ARRAY, 2).arr(ty::ARRAY, 1).arr(ty::F64, 1).f64(-0.5);
        b.arr(ty::ARRAY, 0).pad(32);
        add("ok-nested-be", b.bytes());
    }
    // Malformed: one per kind of error.
    add("bad-magic", B::le().raw(b"GGUG").u32(3).u64(0).u64(0).bytes());
    add("bad-version-1", B::le().raw(b"GGUF").u32(1).u32(0).u32(0).bytes());
    add("bad-version-4", B::le().header(4, 0, 0).bytes());
    add("bad-cut-header", B::le().raw(b"GGUF").u32(3).u32(0).bytes());
    {
        let s = sample(false).bytes;
        add("bad-cut-metadata", s[..s.len() / 3].to_vec());
        add("bad-cut-data", s[..s.len() - 40].to_vec());
    }
    add("bad-kv-count", B::le().header(3, 0, u64::MAX).kv("a", ty::U8).u8(1).bytes());
    add("bad-tensor-count", B::le().header(3, 1 << 60, 0).tensor("a", &[1], gt::F32, 0).bytes());
    add("bad-key-length", B::le().header(3, 0, 1).u64(i64::MAX as u64).raw(b"key").bytes());
    add("bad-string-length", B::le().header(3, 0, 1).kv("s", ty::STRING).u64(1 << 60).raw(b"abc").bytes());
    add("bad-array-count", B::le().header(3, 0, 1).kv("a", ty::ARRAY).arr(ty::U32, 1 << 60).u32(1).bytes());
    add(
        "bad-string-array-count",
        B::le().header(3, 0, 1).kv("a", ty::ARRAY).arr(ty::STRING, u64::MAX).str("x").bytes(),
    );
    add("bad-empty-key", B::le().header(3, 0, 1).kv("", ty::U8).u8(1).bytes());
    add("bad-duplicate-key", B::le().header(3, 0, 2).kv("k", ty::U8).u8(1).kv("k", ty::U8).u8(2).bytes());
    add("bad-value-type", B::le().header(3, 0, 1).kv("k", 13).u8(1).bytes());
    add("bad-array-type", B::le().header(3, 0, 1).kv("k", ty::ARRAY).arr(99, 1).u8(1).bytes());
    // ggml reads a BOOL byte other than 0 as true: a file holding such bytes opens.
    add("ok-bool-bytes", odd_bools());
    // ggml takes keys, strings and names as bytes: a file with bytes that are not UTF-8 opens.
    add("ok-not-utf8", not_utf8());
    add("bad-alignment-zero", B::le().header(3, 0, 1).kv("general.alignment", ty::U32).u32(0).bytes());
    add("bad-alignment-3", B::le().header(3, 0, 1).kv("general.alignment", ty::U32).u32(3).bytes());
    add("bad-alignment-type", B::le().header(3, 0, 1).kv("general.alignment", ty::U64).u64(32).bytes());
    // Fuzz target `serde`, 2026-12-01: 57 bytes declaring 2^31, the largest alignment (ggml and
    // gguf-py take every power of two), in a file without tensors and without padding; a rewrite
    // with padding is 2 GiB.
    add("ok-alignment-max", B::le().header(3, 0, 1).kv("general.alignment", ty::U32).u32(1 << 31).bytes());
    add("ok-alignment-128k", B::le().header(3, 0, 1).kv("general.alignment", ty::U32).u32(1 << 17).bytes());
    add("ok-alignment-64k", B::le().header(3, 0, 1).kv("general.alignment", ty::U32).u32(1 << 16).bytes());
    // With a tensor, the data section starts at 2^31, past the end of the file: refused (ggml's
    // reader cannot seek there either).
    add(
        "bad-alignment-max-tensor",
        B::le().header(3, 1, 1).kv("general.alignment", ty::U32).u32(1 << 31).tensor("t", &[1], gt::F32, 0).bytes(),
    );
    {
        let mut b = B::le();
        b.header(3, 0, 1).kv("deep", ty::ARRAY);
        for _ in 0..40 {
            b.arr(ty::ARRAY, 1);
        }
        add("bad-too-deep", b.bytes());
    }
    add("bad-name-65", B::le().header(3, 1, 0).tensor([b'n'; 65], &[1], gt::F32, 0).pad(32).data(4, 1).bytes());
    add(
        "bad-duplicate-tensor",
        B::le().header(3, 2, 0).tensor("t", &[1], 24, 0).tensor("t", &[1], 24, 32).pad(32).data(33, 1).bytes(),
    );
    add("bad-dims-5", B::le().header(3, 1, 0).tensor("t", &[1, 1, 1, 1, 1], gt::F32, 0).pad(32).data(4, 1).bytes());
    add("bad-dim-negative", B::le().header(3, 1, 0).tensor("t", &[u64::MAX], gt::F32, 0).bytes());
    add("bad-dims-wrap", B::le().header(3, 1, 0).tensor("t", &[1 << 32, 1 << 32], 24, 0).bytes());
    add("bad-block-multiple", B::le().header(3, 1, 0).tensor("t", &[31], gt::Q8_0, 0).pad(32).data(34, 1).bytes());
    add("bad-removed-type", B::le().header(3, 1, 0).tensor("t", &[32], 4, 0).pad(32).data(32, 1).bytes());
    add("bad-unknown-type", B::le().header(3, 1, 0).tensor("t", &[1], 43, 0).pad(32).data(32, 1).bytes());
    add("bad-misaligned", B::le().header(3, 1, 0).tensor("t", &[1], 24, 1).pad(32).data(32, 1).bytes());
    add(
        "bad-overlap",
        B::le().header(3, 2, 0).tensor("a", &[64], 24, 0).tensor("b", &[1], 24, 32).pad(32).data(64, 1).bytes(),
    );
    add("bad-out-of-bounds", B::le().header(3, 1, 0).tensor("t", &[64], gt::F32, 0).pad(32).data(64, 1).bytes());
    add("bad-offset-huge", B::le().header(3, 1, 0).tensor("t", &[1], 24, u64::MAX - 31).pad(32).data(1, 1).bytes());
    out
}

// ---------------------------------------------------------------------------------------------
// Every source agrees: the one parser gives the same answer however its bytes arrive.

/// A reader that yields at most `step` bytes per `read` (a pipe, a slow socket).
pub struct Trickle<'a> {
    pub bytes: &'a [u8],
    pub step: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

// ---------------------------------------------------------------------------------------------
// Decoders and a deadline for child processes.

/// A `Write` that counts the bytes written to it and holds none: a writer's output of gigabytes
/// (the padding of a large `general.alignment`) measured without the memory.
#[derive(Debug, Default)]
pub struct Count(pub u64);

impl std::io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The bytes of hex text, white space and any other non-hex character ignored (`"47475546
/// 03000000"`). Panics (fails the test) on an odd number of digits.
pub fn unhex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(u8::is_ascii_hexdigit).collect();
    assert_eq!(digits.len() % 2, 0, "an odd number of hex digits");
    digits.chunks(2).map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap_or("?"), 16).unwrap_or(0)).collect()
}

/// Little-endian f32s of `bytes` (a trailing partial value is ignored).
pub fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// The names of the entries of `dir`, sorted.
pub fn file_names(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Runs `cmd` to completion with its output captured, killing it and failing the test if it has
/// not exited after `limit` (a hang).
pub fn output_with_deadline(cmd: &mut std::process::Command, limit: std::time::Duration) -> std::process::Output {
    use std::process::Stdio;
    let child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    wait_with_deadline(child, limit, &format!("{cmd:?}"))
}

/// Waits for `child` (spawned with its output piped, or not) with its output captured, killing it
/// and failing the test if it has not exited after `limit` (a hang); `what` names it then.
pub fn wait_with_deadline(
    mut child: std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> std::process::Output {
    use std::time::{Duration, Instant};
    // Read both pipes on threads so that a chatty child cannot block on a full pipe.
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut v);
            }
            v
        })
    };
    let out = read(child.stdout.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let err = read(child.stderr.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not finish within {limit:?}: a hang");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    std::process::Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}
