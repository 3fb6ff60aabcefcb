//! ggml's own GGUF reader against ours: the `tests/harness/ggml_read.c` harness (ggml's
//! `gguf_init_from_file`, compiled by `scripts/build-harness.sh` beside `llama_run`) dumps what
//! ggml sees in a file, and [`ggml_read_expected`] writes the same dump from what gguf-serde's
//! reader sees (the format is in the harness's header; `tests/py/check_ggml_read.py` writes it
//! from gguf-py's reader instead, slowly for a large vocabulary). [`assert_ggml_reads_as_we_do`]
//! compares the two line by line, every tensor's data hash included.

use std::path::Path;
use std::process::Command;

use gguf_serde::{Array, Gguf, Value, ValueRef, ValueType};

const FNV_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv1a(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// The harness's escaping: bytes 0x21..=0x7e other than `\` and `"` as they are, `\` as `\\`,
/// every other byte as `\xNN`; the empty string as `""`.
fn esc(b: &[u8]) -> String {
    if b.is_empty() {
        return "\"\"".into();
    }
    let mut s = String::new();
    for &c in b {
        match c {
            b'\\' => s.push_str("\\\\"),
            0x21..=0x7e if c != b'"' => s.push(char::from(c)),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s
}

/// The dump `ggml_read FILE` prints, written from gguf-serde's reading of the little-endian file
/// at `path`: header numbers, every key (scalars by value, float bit patterns; arrays by element
/// type, count and FNV-1a 64 of their stored elements, strings with their u64 length prefixes),
/// every tensor (ggml type name, ne without trailing 1s, relative offset, size, FNV-1a 64 of its
/// data).
pub fn ggml_read_expected(path: &Path) -> Vec<String> {
    let f = Gguf::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = vec![
        format!("version {}", f.version()),
        format!("alignment {}", f.alignment()),
        format!("data_offset {}", f.data_offset()),
        format!("n_kv {}", f.metadata().len()),
        format!("n_tensors {}", f.tensors().len()),
    ];
    // Each value as ggml_kv_line describes it (ggml hashes a bool array's elements as 0 or 1,
    // as the conversion to `Value` reads them).
    lines.extend(f.metadata().map(|kv| ggml_kv_line_ref(kv.key.as_bytes(), kv.value)));
    for t in f.tensors() {
        let mut ne: Vec<u64> = t.ne().dims().to_vec();
        while ne.len() > 1 && ne.last() == Some(&1) {
            ne.pop();
        }
        if ne.is_empty() {
            ne.push(1);
        }
        let ty = t.dtype.name().to_lowercase();
        let ty = match ty.strip_suffix("_k") {
            Some(stem) => format!("{stem}_K"),
            None => ty,
        };
        let data = f.tensor_data(&t).unwrap_or_else(|e| panic!("{}: {}: {e}", path.display(), t.name));
        lines.push(format!(
            "tensor {} {ty} {} {} {} {} fnv1a64:{:016x}",
            esc(t.name.as_bytes()),
            ne.len(),
            ne.iter().map(u64::to_string).collect::<Vec<_>>().join(","),
            t.relative_offset,
            t.nbytes,
            fnv1a(data, FNV_BASIS)
        ));
    }
    lines
}

/// [`ggml_kv_line`] of a pair as read, with its key's and strings' bytes as stored (UTF-8 or not;
/// ggml does not check): a string is escaped from its bytes, a string array hashed from its stored
/// elements (the file is little-endian: length prefixes as ggml hashes them).
fn ggml_kv_line_ref(key: &[u8], v: ValueRef<'_>) -> String {
    match v {
        ValueRef::String(s) => format!("kv {} str {}", esc(key), esc(s.as_bytes())),
        ValueRef::Array(a) if a.elem_type() == ValueType::String => {
            format!("kv {} arr str {} fnv1a64:{:016x}", esc(key), a.len(), fnv1a(a.raw_bytes(), FNV_BASIS))
        }
        v => ggml_kv_line(&String::from_utf8_lossy(key), &Value::from(v)).replacen(
            &format!("kv {} ", esc(String::from_utf8_lossy(key).as_bytes())),
            &format!("kv {} ", esc(key)),
            1,
        ),
    }
}

/// Runs the `ggml_read` harness (beside `llama_run`, [`crate::llama_run_harness`]) on `path`
/// and returns its dump, a line each (the format is in the harness's header). Fails the test if
/// ggml refuses the file.
pub fn ggml_read_dump(llama_run_harness: &Path, path: &Path) -> Vec<String> {
    let exe = llama_run_harness.with_file_name("ggml_read");
    let o = Command::new(&exe).arg(path).output().unwrap_or_else(|e| panic!("{}: {e}", exe.display()));
    assert!(o.status.success(), "ggml_read refused {}: {}", path.display(), String::from_utf8_lossy(&o.stderr));
    let got = String::from_utf8(o.stdout).expect("ggml_read prints ASCII");
    got.lines().map(str::to_owned).collect()
}

/// The line `ggml_read` prints for the key `key` holding `value`, written from the value alone
/// (not from a file): scalars by value (floats as bit patterns), strings escaped, arrays by
/// element type, count and FNV-1a 64 of their elements as stored (strings with their u64 length
/// prefixes, little-endian). Arrays of arrays are not supported (the test fails).
pub fn ggml_kv_line(key: &str, value: &Value) -> String {
    let key = esc(key.as_bytes());
    match value {
        Value::U8(v) => format!("kv {key} u8 {v}"),
        Value::I8(v) => format!("kv {key} i8 {v}"),
        Value::U16(v) => format!("kv {key} u16 {v}"),
        Value::I16(v) => format!("kv {key} i16 {v}"),
        Value::U32(v) => format!("kv {key} u32 {v}"),
        Value::I32(v) => format!("kv {key} i32 {v}"),
        Value::U64(v) => format!("kv {key} u64 {v}"),
        Value::I64(v) => format!("kv {key} i64 {v}"),
        Value::F32(v) => format!("kv {key} f32 0x{:08x}", v.to_bits()),
        Value::F64(v) => format!("kv {key} f64 0x{:016x}", v.to_bits()),
        Value::Bool(v) => format!("kv {key} bool {v}"),
        Value::String(s) => format!("kv {key} str {}", esc(s.as_bytes())),
        Value::Array(a) => {
            fn le<T: Copy, const N: usize>(v: &[T], f: fn(T) -> [u8; N]) -> Vec<u8> {
                v.iter().flat_map(|x| f(*x)).collect()
            }
            let (ty, n, bytes) = match a {
                Array::U8(v) => ("u8", v.len(), v.clone()),
                Array::I8(v) => ("i8", v.len(), le(v, i8::to_le_bytes)),
                Array::U16(v) => ("u16", v.len(), le(v, u16::to_le_bytes)),
                Array::I16(v) => ("i16", v.len(), le(v, i16::to_le_bytes)),
                Array::U32(v) => ("u32", v.len(), le(v, u32::to_le_bytes)),
                Array::I32(v) => ("i32", v.len(), le(v, i32::to_le_bytes)),
                Array::U64(v) => ("u64", v.len(), le(v, u64::to_le_bytes)),
                Array::I64(v) => ("i64", v.len(), le(v, i64::to_le_bytes)),
                Array::F32(v) => ("f32", v.len(), le(v, f32::to_le_bytes)),
                Array::F64(v) => ("f64", v.len(), le(v, f64::to_le_bytes)),
                Array::Bool(v) => ("bool", v.len(), v.iter().map(|b| u8::from(*b)).collect()),
                Array::String(v) => {
                    let mut b = Vec::new();
                    for s in v {
                        b.extend((s.len() as u64).to_le_bytes());
                        b.extend(s.as_bytes());
                    }
                    ("str", v.len(), b)
                }
                Array::Array(_) => panic!("{key}: ggml_kv_line does not describe arrays of arrays"),
            };
            format!("kv {key} arr {ty} {n} fnv1a64:{:016x}", fnv1a(&bytes, FNV_BASIS))
        }
    }
}

/// Runs the `ggml_read` harness ([`ggml_read_dump`]) on `path` and asserts that its dump equals
/// [`ggml_read_expected`]: ggml reads the header, every key and every tensor (its data too) as
/// gguf-serde does. Returns the number of lines compared.
pub fn assert_ggml_reads_as_we_do(llama_run_harness: &Path, path: &Path) -> usize {
    let got = ggml_read_dump(llama_run_harness, path);
    let want = ggml_read_expected(path);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "{}: line {} of ggml's dump differs from ours", path.display(), i + 1);
    }
    assert_eq!(got.len(), want.len(), "{}: ggml's dump and ours differ in length", path.display());
    got.len()
}
