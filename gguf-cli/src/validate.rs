//! `gguf validate [--ggml] FILE...`

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use crate::out::{outln, Out};

use gguf_serde::container::Source;
use gguf_serde::format::shown_path;
use gguf_serde::format::{keys, MAX_USEFUL_ALIGNMENT};
use gguf_serde::Gguf;

/// Arguments of `gguf validate`.
#[derive(clap::Args)]
pub struct Args {
    /// Files to validate; `https://…`, `http://…` and `hf://OWNER/REPO[@REVISION]/PATH` are
    /// read with HTTP range requests (header, key/value pairs and tensor infos only), as
    /// `gguf inspect` reads them.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Also refuse what the spec allows but ggml's reader (llama.cpp) refuses: tensor offsets
    /// other than the running sum of padded sizes, tensor names of 64 bytes or more, empty
    /// tensor names, and standard keys stored with a type llama.cpp's loader refuses (the
    /// registry of standard keys; `{arch}` keys of the file's `general.architecture`). Without it
    /// these are printed as warnings and the file counts as valid. Keys, strings and tensor names
    /// that are not UTF-8, bool bytes other than 0 and 1, and a `general.alignment` above 64 KiB
    /// are warnings with or without it (ggml accepts them), and so are keys, strings and tensor
    /// names that hold a NUL byte (ggml keeps it, but llama.cpp and its tools cut the name there).
    #[arg(long)]
    ggml: bool,
    /// Print one JSON array with an object per file, in the order given: `{"path", "valid":
    /// true, "version", "kv_count", "tensor_count", "warnings": [TEXT]}` for a valid file (with
    /// --ggml, a file ggml refuses is `{"path", "valid": false, "ggml_refusals": [TEXT]}`), and
    /// `{"path", "valid": false, "error": TEXT}` for an invalid one. "path" is the path in the
    /// escaped form the messages show (as `inspect --json` gives names: `\\` a backslash, `\xNN`
    /// a byte that is not UTF-8, `\n`, `\u{1b}`). The exit status is as without --json.
    #[arg(long)]
    json: bool,
}

/// What ggml's `gguf.cpp` refuses in a file this crate accepts.
fn ggml_refusals<S: Source>(f: &Gguf<S>) -> Vec<String> {
    let mut out = Vec::new();
    let align = u64::from(f.alignment());
    let mut expected = 0u64;
    for t in f.tensors() {
        if t.name.is_empty() {
            out.push("a tensor has an empty name".to_owned());
        }
        if t.name.len() >= 64 {
            out.push(format!("tensor {:?}: name of {} bytes (ggml keeps at most 63)", t.name, t.name.len()));
        }
        if t.relative_offset != expected {
            out.push(format!(
                "tensor {:?}: offset {} in the data section, ggml expects {} (the running sum of padded sizes)",
                t.name, t.relative_offset, expected
            ));
        }
        expected = (t.relative_offset + t.nbytes).div_ceil(align) * align;
    }
    out.extend(key_type_refusals(f));
    out
}

/// Keys that are not ASCII, and string values (strings of arrays too) and tensor names that are
/// not UTF-8: ggml's docs/gguf.md says a key (`gguf_metadata_kv_t`) "must be a valid ASCII
/// string" and a string (`gguf_string_t`: a value, a tensor name) is UTF-8; ggml takes any bytes
/// (so llama.cpp loads the file). Warnings, also with --ggml.
fn utf8_warnings<S: Source>(f: &Gguf<S>) -> Vec<String> {
    const KEY_NOTE: &str = "(the spec requires ASCII keys; ggml and llama.cpp accept any bytes)";
    const UTF8_NOTE: &str = "(the spec asks for UTF-8; ggml and llama.cpp accept any bytes)";
    let mut out = Vec::new();
    for kv in f.metadata() {
        match kv.key_str() {
            Err(e) => out.push(format!("{e} {KEY_NOTE}")),
            // The key's bytes start after its 8-byte length, as the reader's error counts them.
            Ok(k) if !k.is_ascii() => out.push(format!(
                "key at offset {} is not ASCII (key {:?}) {KEY_NOTE}",
                kv.offset.saturating_add(8),
                kv.key
            )),
            Ok(_) => {}
        }
        if let Err(e) = kv.value_str() {
            out.push(format!("{e} {UTF8_NOTE}"));
        }
        if let Some(a) = kv.value.as_array().filter(|a| !a.is_utf8()) {
            if let Some(found) = first_string(&kv, |s| !s.is_utf8()) {
                let what = found.describe(a, kv.key, ("is", "are"), "not valid UTF-8");
                out.push(format!("{what}: {:?} {UTF8_NOTE}", found.string));
            }
        }
    }
    for t in f.tensors() {
        if let Err(e) = t.name_str() {
            out.push(format!("{e} {UTF8_NOTE}"));
        }
    }
    out
}

/// The first string of an array value that `bad` picks out ([`first_string`]).
struct FoundString<'a> {
    /// The string.
    string: gguf_serde::GgufStr<'a>,
    /// Its index among the strings of the array (of all its inner arrays, in order, for an array
    /// of arrays).
    index: u64,
    /// The absolute offset of its first byte, after its 8-byte length.
    offset: u64,
    /// How many strings `bad` picks out.
    count: u64,
}

impl FoundString<'_> {
    /// `N strings of key K VERB WHAT, the first at PLACE` (`1 string of key K VERB WHAT, at
    /// PLACE`), VERB `verbs.0` for one string and `verbs.1` for more; PLACE `index I (offset O)`,
    /// or in an array of arrays `offset O (in an inner array)` (an index would count across the
    /// inner arrays).
    fn describe(
        &self,
        a: gguf_serde::container::ArrayRef<'_>,
        key: gguf_serde::GgufStr<'_>,
        verbs: (&str, &str),
        what: &str,
    ) -> String {
        let (verb, first) = if self.count == 1 { (verbs.0, "at") } else { (verbs.1, "the first at") };
        let place = match a.elem_type() {
            gguf_serde::ValueType::Array => format!("offset {} (in an inner array)", self.offset),
            _ => format!("index {} (offset {})", self.index, self.offset),
        };
        format!("{} of key {key} {verb} {what}, {first} {place}", crate::out::count(self.count, "string"))
    }
}

/// The first string of the array value of `kv` (its inner arrays' strings too, in order) that
/// `bad` picks out, with its absolute offset, and how many `bad` picks out; `None` if none (always
/// for a value that is not an array). An array's elements follow its element type (4 bytes) and
/// count (8); each string its 8-byte length; an inner array its own type and count.
fn first_string<'a>(
    kv: &gguf_serde::Kv<'a>,
    bad: impl Fn(&gguf_serde::GgufStr<'a>) -> bool,
) -> Option<FoundString<'a>> {
    fn walk<'a>(
        a: gguf_serde::container::ArrayRef<'a>,
        mut at: u64,
        index: &mut u64,
        bad: &dyn Fn(&gguf_serde::GgufStr<'a>) -> bool,
        found: &mut Option<FoundString<'a>>,
    ) {
        for v in a.iter() {
            match v {
                gguf_serde::ValueRef::String(s) => {
                    let offset = at.saturating_add(8);
                    if bad(&s) {
                        match found {
                            Some(f) => f.count += 1,
                            None => *found = Some(FoundString { string: s, index: *index, offset, count: 1 }),
                        }
                    }
                    *index += 1;
                    at = offset.saturating_add(s.as_bytes().len() as u64);
                }
                gguf_serde::ValueRef::Array(inner) => {
                    let start = at.saturating_add(12);
                    walk(inner, start, index, bad, found);
                    at = start.saturating_add(inner.raw_bytes().len() as u64);
                }
                // Not strings: nothing to find in this array.
                _ => return,
            }
        }
    }
    let a = kv.value.as_array()?;
    let mut found = None;
    walk(a, kv.value_offset.saturating_add(12), &mut 0, &bad, &mut found);
    found
}

/// Keys, tensor names and strings (values and strings of arrays) that hold a NUL byte: ggml
/// keeps the bytes, but llama.cpp and its tools take them as C strings, cut at the first NUL, so
/// they see another name (two names may become one) and llama-gguf-split and llama-quantize write
/// the cut one where `gguf split` and `gguf quantize` keep every byte. Warnings, also with --ggml.
fn nul_warnings<S: Source>(f: &Gguf<S>) -> Vec<String> {
    /// `s` up to its first NUL, as llama.cpp reads it.
    fn cut(s: gguf_serde::GgufStr<'_>) -> gguf_serde::GgufStr<'_> {
        gguf_serde::GgufStr::from_bytes(s.as_bytes().split(|&b| b == 0).next().unwrap_or_default())
    }
    let has_nul = |s: &gguf_serde::GgufStr<'_>| s.as_bytes().contains(&0);
    let mut out = Vec::new();
    // Each string named by the offset of its first byte, after its 8-byte length, as the
    // findings of bytes that are not UTF-8 name it.
    for kv in f.metadata() {
        if has_nul(&kv.key) {
            out.push(format!(
                "key at offset {} holds a NUL byte (key {:?}): llama.cpp reads it as {:?}",
                kv.offset.saturating_add(8),
                kv.key,
                cut(kv.key)
            ));
        }
        match kv.value {
            gguf_serde::ValueRef::String(s) if has_nul(&s) => {
                out.push(format!(
                    "string at offset {} holds a NUL byte (key {}): llama.cpp reads it as {:?}",
                    kv.value_offset.saturating_add(8),
                    kv.key,
                    cut(s)
                ));
            }
            gguf_serde::ValueRef::Array(a) => {
                if let Some(found) = first_string(&kv, has_nul) {
                    let what = found.describe(a, kv.key, ("holds", "hold"), "a NUL byte");
                    out.push(format!("{what}: llama.cpp reads {:?} as {:?}", found.string, cut(found.string)));
                }
            }
            _ => {}
        }
    }
    for t in f.tensors().filter(|t| has_nul(&t.name)) {
        out.push(format!(
            "tensor name at offset {} holds a NUL byte (tensor {:?}): llama.cpp names it {:?}",
            t.info_offset.saturating_add(8),
            t.name,
            cut(t.name)
        ));
    }
    let note = "(ggml keeps the bytes, but llama.cpp and its tools cut C strings at the first NUL)";
    out.into_iter().map(|w| format!("{w} {note}")).collect()
}

/// BOOL bytes other than 0 and 1 (the spec's only values), a warning per key naming the first
/// and its offset: ggml reads them as true, as gguf-serde does. Warnings, also with --ggml.
fn bool_warnings<S: Source>(f: &Gguf<S>) -> Vec<String> {
    let note = "(the spec allows 0 and 1; ggml and llama.cpp read any other byte as true, a rewrite writes 1)";
    f.metadata()
        .filter_map(|kv| {
            let odd = kv.odd_bool_bytes()?;
            Some(match odd.count {
                1 => format!(
                    "key {}: bool byte {:#04x} at offset {} is neither 0 nor 1 {note}",
                    kv.key, odd.first, odd.offset
                ),
                n => format!(
                    "key {}: {n} bool bytes are neither 0 nor 1, the first {:#04x} at offset {} {note}",
                    kv.key, odd.first, odd.offset
                ),
            })
        })
        .collect()
}

/// A `general.alignment` above the largest memory page ([`MAX_USEFUL_ALIGNMENT`], 64 KiB): ggml
/// reads it, but whoever rewrites the file writes its padding. A warning, also with --ggml.
fn alignment_warning<S: Source>(f: &Gguf<S>) -> Option<String> {
    let a = f.alignment();
    if a <= MAX_USEFUL_ALIGNMENT {
        return None;
    }
    let offset = f.metadata().find(|kv| kv.key == keys::GENERAL_ALIGNMENT).map_or(0, |kv| kv.offset);
    Some(format!(
        "general.alignment at offset {offset} is {a}, above {MAX_USEFUL_ALIGNMENT} (the largest memory page): \
         ggml and llama.cpp read it, but a rewrite pads the tensor infos and each tensor to it \
         (up to {} zero bytes each)",
        a - 1
    ))
}

/// Prints (or, with --json, collects) the report of one file that parsed; whether it is valid.
fn report<S: Source>(
    f: &Gguf<S>,
    path: &std::path::Path,
    args: &Args,
    mut out: &mut Out,
    reports: &mut Vec<serde_json::Value>,
) -> anyhow::Result<bool> {
    let p = shown_path(&path);
    let refusals = ggml_refusals(f);
    if args.ggml && !refusals.is_empty() {
        if args.json {
            reports.push(json!({"path": p.to_string(), "valid": false, "ggml_refusals": refusals}));
        } else {
            outln!(out, "{p}: INVALID for ggml: {}", refusals.join("; "));
        }
        return Ok(false);
    }
    let mut warnings = utf8_warnings(f);
    warnings.extend(nul_warnings(f));
    warnings.extend(bool_warnings(f));
    warnings.extend(alignment_warning(f));
    if args.json {
        let warnings: Vec<&String> = refusals.iter().chain(&warnings).collect();
        reports.push(json!({"path": p.to_string(), "valid": true, "version": f.version(),
            "kv_count": f.kv_count(), "tensor_count": f.tensor_count(), "warnings": warnings}));
        return Ok(true);
    }
    let (keys, tensors) = (crate::out::count(f.kv_count(), "key"), crate::out::count(f.tensor_count(), "tensor"));
    outln!(out, "{p}: OK (version {}, {keys}, {tensors})", f.version());
    for r in refusals {
        outln!(out, "{p}: warning: valid GGUF, but ggml's reader refuses it: {r}");
    }
    for w in warnings {
        outln!(out, "{p}: warning: {w}");
    }
    Ok(true)
}

/// The standard keys of `f` stored with a type llama.cpp refuses: `key K has type T, llama.cpp
/// expects E`. `{arch}` keys count only for the file's own architecture (`general.architecture`):
/// llama.cpp reads no other.
fn key_type_refusals<S: Source>(f: &Gguf<S>) -> Vec<String> {
    let arch = f.get(keys::GENERAL_ARCHITECTURE).and_then(|v| v.as_str());
    f.metadata()
        .filter_map(|kv| {
            let m = keys::lookup(kv.key.to_str().ok()?)?;
            if m.arch.is_some() && m.arch != arch {
                return None;
            }
            let elem = kv.value.as_array().map(|a| a.elem_type());
            (!m.spec.ty.accepts(kv.value.value_type(), elem)).then(|| {
                format!(
                    "key {}: stored as {}, but llama.cpp expects {} (standard key {})",
                    kv.key,
                    kv.value.type_name(),
                    m.spec.ty,
                    m.spec.key
                )
            })
        })
        .collect()
}

/// Opens each file with full validation; prints `OK` or the error per file.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let mut out = Out::stdout();
    let mut bad = 0;
    let mut reports = Vec::new();
    for path in &args.files {
        let p = shown_path(&path);
        let opened = if crate::remote::is_remote(path) {
            crate::remote::open(path).map(|(f, stats)| {
                crate::remote::report(path, stats.requests, stats.bytes_fetched, stats.file_len);
                report(&f, path, args, &mut out, &mut reports)
            })
        } else {
            Gguf::open(path).map(|f| report(&f, path, args, &mut out, &mut reports)).map_err(anyhow::Error::from)
        };
        match opened {
            Ok(valid) => bad += usize::from(!valid?),
            Err(e) => {
                bad += 1;
                let e = e.to_string();
                if args.json {
                    reports.push(json!({"path": p.to_string(), "valid": false, "error": e}));
                } else {
                    outln!(out, "{p}: INVALID: {e}");
                }
            }
        }
    }
    if args.json {
        out.json(&reports)?;
    }
    out.finish()?;
    Ok(if bad == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
