//! `gguf inspect [--json] FILE`

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use gguf_serde::container::{Kv, Source, TensorInfo};
use gguf_serde::{ArrayRef, Gguf, GgufStr, ShardedGguf, ValueRef};

use crate::out::{outln, Out, OutputError};
use gguf_serde::format::shown_path;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

/// Arguments of `gguf inspect`.
#[derive(clap::Args)]
pub struct Args {
    /// The GGUF file, or `-` for standard input (only the header, key/value pairs and tensor
    /// infos are parsed; a pipe is read to its end so that tensor bounds can be checked), or a
    /// remote file: `https://…`, `http://…` or `hf://OWNER/REPO[@REVISION]/PATH`, of which only the header,
    /// key/value pairs and tensor infos are fetched, with HTTP range requests (what they cost is
    /// printed on standard error; `GGUF_HTTP_TIMEOUT` sets the timeout of each, in seconds). A
    /// shard of a split model (`NAME-00002-of-00003.gguf`) describes the whole model; a remote
    /// one reads the other shards (their URLs named alike) in parallel.
    file: PathBuf,
    /// Print one JSON object instead of text: `{"version", "endianness", "alignment",
    /// "data_offset", "parameters" (the elements of every tensor), "metadata": [{"key", "type", "value"}], "tensors": [{"name", "dtype",
    /// "shape", "data_offset", "nbytes"}]}`. An array of more than 16 items is given as `{"key",
    /// "type", "length"}` without its items (as gguf-py's gguf-dump leaves arrays out) unless
    /// --full is given. With --stored-order, tensors have "ne" instead of "shape". A split model
    /// also has "file_size" (all shards, bytes), "shards": [{"shard", "path", "file_size",
    /// "data_offset", "tensor_count"}], and a "shard" (1-based, as in the file names) in each
    /// tensor. Keys, tensor names and shard paths are strings in the escaped form the text shows
    /// (`\\` a backslash, `\xNN` a byte that is not UTF-8, `\n`, `\u{1b}`); a string value that
    /// is not UTF-8 is `{"escaped": TEXT}`.
    #[arg(long)]
    json: bool,
    /// With --json, give every array whole.
    #[arg(long)]
    full: bool,
    /// Print tensor shapes as stored, `ne` (the fastest-varying dimension first, as llama.cpp
    /// and gguf-dump print them), instead of the canonical shape (outermost first).
    #[arg(long)]
    stored_order: bool,
    /// In text output, how many items of an array to show (its length is printed after them).
    #[arg(long, default_value_t = 8, value_name = "N", value_parser = crate::names::Text(clap::builder::RangedU64ValueParser::<usize>::new()))]
    items: usize,
    /// Also estimate what llama.cpp allocates to run the model on the CPU, as its load log
    /// reports it: the weights (`load_tensors: CPU_Mapped model buffer size`, every tensor's
    /// bytes) and the KV cache (`llama_kv_cache: size = …`: F16 K and V for every layer,
    /// `head_count_kv × key_length` (and `value_length`) values per cell, the context rounded up
    /// to a multiple of 256 cells as llama.cpp pads it). Sliding-window layers get the full
    /// context, as with llama.cpp's default full-size SWA cache. Not counted: llama.cpp's compute
    /// and output buffers and the CPU-specific repacked copies of some quantized weights
    /// (`CPU_REPACK`). Printed in MiB (1024 × 1024 bytes) after the tensors; with --json, an
    /// object "memory": {"ctx", "cells", "layers", "weights_bytes", "k_bytes", "v_bytes",
    /// "kv_bytes"} in bytes.
    #[arg(long)]
    memory: bool,
    /// With --memory, the context in tokens, at most 4294967295 (llama.cpp's `n_ctx` is a
    /// 32-bit count). 0, as llama.cpp's `n_ctx` 0, and the default both mean the model's training
    /// context, `{arch}.context_length`.
    #[arg(long, value_name = "N", requires = "memory", value_parser = crate::names::Text(clap::value_parser!(u32)))]
    ctx: Option<u32>,
    /// Describe only the file given, even when it is a shard of a split model: its own keys
    /// (`split.*` included), tensors and size, without reading the other shards.
    #[arg(long)]
    one_file: bool,
}

/// The longest array `--json` gives whole without --full.
const JSON_ARRAY_ITEMS: u64 = 16;

/// How to print.
#[derive(Clone, Copy)]
struct Style {
    items: usize,
    full: bool,
    stored_order: bool,
    /// `--memory`, with `--ctx` (0 or none: the training context).
    memory: Option<Option<u32>>,
}

/// Prints the description of the file or model.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let style = Style {
        items: args.items,
        full: args.full,
        stored_order: args.stored_order,
        memory: args.memory.then_some(args.ctx),
    };
    if args.file.as_os_str() == "-" {
        let file = stdin_file().context("standard input")?;
        print(&Model::file(&file), args.json, style)
    } else if crate::remote::is_remote(&args.file) {
        if args.one_file {
            let (file, stats) = crate::remote::open(&args.file).map_err(|e| crate::remote::name_url(e, &args.file))?;
            crate::remote::report(&args.file, stats.requests, stats.bytes_fetched, stats.file_len);
            return print(&Model::file(&file), args.json, style);
        }
        let (model, stats) =
            crate::remote::open_model(&args.file).map_err(|e| one_file_hint(crate::remote::name_url(e, &args.file)))?;
        for (url, s) in model.shard_paths().zip(&stats) {
            crate::remote::report(url, s.requests, s.bytes_fetched, s.file_len);
        }
        print(&Model::sharded(&model), args.json, style)
    } else {
        let named = |e| crate::out::unless_named(e, shown_path(&args.file).to_string(), &[&args.file]);
        let file = Gguf::open(&args.file).map_err(named)?;
        if args.one_file || !is_split(&file) {
            return print(&Model::file(&file), args.json, style);
        }
        drop(file);
        // Every shard of the model: `ShardedGguf`'s errors name the shard they are about.
        let model = ShardedGguf::open(&args.file).map_err(|e| one_file_hint(e.into()))?;
        print(&Model::sharded(&model), args.json, style)
    }
}

/// `e` with a hint at `--one-file` when it is about a shard of a split model (a missing shard, a
/// shard of another split, a file name that does not say which shard it is).
fn one_file_hint(e: anyhow::Error) -> anyhow::Error {
    let about_shards = e
        .downcast_ref::<gguf_serde::Error>()
        .is_some_and(|g| matches!(g.kind(), gguf_serde::ErrorKind::Shard(_)) || g.shard().is_some());
    if about_shards {
        anyhow::anyhow!("{e:#} (--one-file describes the file given alone)")
    } else {
        e
    }
}

/// Whether `f` is a shard of a model split into more than one file (`split.count` above 1).
fn is_split<S: Source>(f: &Gguf<S>) -> bool {
    f.get(gguf_serde::format::keys::SPLIT_COUNT).and_then(|v| v.as_u64()).is_some_and(|c| c > 1)
}

/// What `inspect` describes: one file, or a split model as one (the first shard's header and
/// metadata without the split keys, the tensors of every shard, the sizes summed).
struct Model<'a> {
    version: u32,
    endian: &'static str,
    alignment: u32,
    data_offset: u64,
    file_size: u64,
    metadata: Vec<Kv<'a>>,
    /// Every tensor with the 0-based number of its shard (0 for one file).
    tensors: Vec<(usize, TensorInfo<'a>)>,
    /// The shards of a split model; empty for one file.
    shards: Vec<ShardRow>,
}

/// One shard of a split model as `inspect` lists it.
struct ShardRow {
    /// Its path or URL, shown escaped (`shown_path`).
    path: String,
    file_size: u64,
    data_offset: u64,
    tensors: usize,
}

impl<'a> Model<'a> {
    fn file<S: Source>(f: &'a Gguf<S>) -> Self {
        Model {
            version: f.version(),
            endian: f.endian().name(),
            alignment: f.alignment(),
            data_offset: f.data_offset(),
            file_size: f.file_len(),
            metadata: f.metadata().collect(),
            tensors: f.tensors().map(|t| (0, t)).collect(),
            shards: Vec::new(),
        }
    }

    /// A model from its shards; one that is a single file is described as [`Model::file`] does.
    fn sharded<S: Source>(m: &'a ShardedGguf<S>) -> Self {
        match m.shard(0) {
            Some(first) if m.shard_count() > 1 => Model {
                tensors: m.tensors().map(|t| (t.shard, t.info)).collect(),
                metadata: m.metadata().collect(),
                file_size: (0..m.shard_count())
                    .filter_map(|i| m.shard(i))
                    .map(|f| f.file_len())
                    .fold(0, u64::saturating_add),
                shards: m
                    .shard_paths()
                    .zip((0..m.shard_count()).filter_map(|i| m.shard(i)))
                    .map(|(p, f)| ShardRow {
                        path: shown_path(&p).to_string(),
                        file_size: f.file_len(),
                        data_offset: f.data_offset(),
                        tensors: f.tensor_count(),
                    })
                    .collect(),
                ..Model::file(first)
            },
            Some(first) => Model::file(first),
            None => Model {
                version: m.version(),
                endian: "little",
                alignment: 32,
                data_offset: 0,
                file_size: 0,
                metadata: Vec::new(),
                tensors: Vec::new(),
                shards: Vec::new(),
            },
        }
    }

    /// The value of `key` in the metadata.
    fn get(&self, key: impl AsRef<[u8]>) -> Option<ValueRef<'a>> {
        self.metadata.iter().find(|kv| kv.key.as_bytes() == key.as_ref()).map(|kv| kv.value)
    }
}

/// The file on standard input: read as [`Gguf::from_reader`] reads it (metadata only) when it can
/// seek (a redirected file), else read whole (a pipe has no length to check tensor bounds with).
fn stdin_file() -> anyhow::Result<Gguf<gguf_serde::container::MetadataOnly>> {
    use std::io::{Read, Seek};
    use std::os::fd::AsFd;
    let mut f = std::fs::File::from(std::io::stdin().as_fd().try_clone_to_owned()?);
    if f.stream_position().is_ok() && f.metadata().is_ok_and(|m| m.is_file()) {
        return Ok(Gguf::from_reader(std::io::BufReader::new(f))?);
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(Gguf::from_reader(std::io::Cursor::new(bytes))?)
}

fn print(file: &Model<'_>, json: bool, style: Style) -> anyhow::Result<ExitCode> {
    let mut out = Out::stdout();
    let memory = match style.memory {
        Some(ctx) => Some(estimate_memory(file, ctx)?),
        None => None,
    };
    if json {
        let mut v = serde_json::to_value(JsonFile(file, style)).map_err(|e| OutputError(e.into()))?;
        if let (Some(m), Some(o)) = (&memory, v.as_object_mut()) {
            o.insert(
                "memory".into(),
                serde_json::json!({"ctx": m.ctx, "cells": m.cells, "layers": m.layers, "weights_bytes": m.weights,
                    "k_bytes": m.k, "v_bytes": m.v, "kv_bytes": m.kv}),
            );
        }
        out.json(&v)?;
    } else {
        text(&mut out, file, style).map_err(OutputError)?;
        if let Some(m) = &memory {
            let mib = |b: u64| format!("{:.2} MiB", b as f64 / (1024.0 * 1024.0));
            outln!(out, "\nmemory (llama.cpp on the CPU, context {}):", crate::out::count(m.ctx, "token"));
            outln!(out, "  weights:   {}", mib(m.weights));
            outln!(
                out,
                "  KV cache:  {} ({}, {}), K (f16): {}, V (f16): {}",
                mib(m.kv),
                crate::out::count(m.cells, "cell"),
                crate::out::count(m.layers, "layer"),
                mib(m.k),
                mib(m.v)
            );
            outln!(out, "  total:     {} (without compute buffers)", mib(m.total));
        }
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

fn text(out: &mut impl Write, f: &Model<'_>, style: Style) -> std::io::Result<()> {
    let items = style.items;
    let split = !f.shards.is_empty();
    writeln!(out, "version:      {}", f.version)?;
    writeln!(out, "endianness:   {}", f.endian)?;
    writeln!(out, "alignment:    {}", f.alignment)?;
    writeln!(out, "data offset:  {}", f.data_offset)?;
    if split {
        writeln!(out, "file size:    {} (all {})", f.file_size, crate::out::count(f.shards.len(), "shard"))?;
    } else {
        writeln!(out, "file size:    {}", f.file_size)?;
    }
    let n = parameters(f);
    writeln!(out, "parameters:   {n} ({})", parameters_short(n))?;
    if split {
        writeln!(out, "\nshards ({}):", f.shards.len())?;
        let width = f.shards.iter().map(|s| s.path.chars().count()).max().unwrap_or(4).max(4);
        writeln!(
            out,
            "  {:>5}  {:width$}  {:>12}  {:>12}  {:>7}",
            "shard", "file", "file_size", "data_offset", "tensors"
        )?;
        for (i, s) in f.shards.iter().enumerate() {
            writeln!(
                out,
                "  {:>5}  {:width$}  {:>12}  {:>12}  {:>7}",
                i + 1,
                s.path,
                s.file_size,
                s.data_offset,
                s.tensors
            )?;
        }
    }
    writeln!(out, "\nmetadata ({}):", crate::out::count(f.metadata.len(), "key"))?;
    let width = f.metadata.iter().map(|kv| shown(kv.key).chars().count()).max().unwrap_or(0);
    for kv in &f.metadata {
        writeln!(out, "  {:width$}  {:<16}  {}", shown(kv.key), kv.value.type_name(), show(&kv.value, items))?;
    }
    writeln!(out, "\ntensors ({}):", f.tensors.len())?;
    let width = f.tensors.iter().map(|(_, t)| shown(t.name).chars().count()).max().unwrap_or(4).max(4);
    let shape_title = if style.stored_order { "ne" } else { "shape" };
    let shard_title = if split { format!("  {:>5}", "shard") } else { String::new() };
    writeln!(
        out,
        "  {:width$}  {:<8}  {:<22}{shard_title}  {:>12}  {:>12}",
        "name", "dtype", shape_title, "data_offset", "nbytes"
    )?;
    for (shard, t) in &f.tensors {
        let shape = if style.stored_order { format!("{:?}", t.ne().dims()) } else { format!("{:?}", &*t.shape) };
        let shard = if split { format!("  {:>5}", shard + 1) } else { String::new() };
        writeln!(
            out,
            "  {:width$}  {:<8}  {:<22}{shard}  {:>12}  {:>12}",
            shown(t.name),
            t.dtype.name(),
            shape,
            t.data_offset,
            t.nbytes
        )?;
    }
    Ok(())
}

/// What `--memory` estimates (bytes).
struct Memory {
    ctx: u64,
    cells: u64,
    layers: u64,
    weights: u64,
    k: u64,
    v: u64,
    /// `k + v`.
    kv: u64,
    /// `weights + kv`.
    total: u64,
}

/// Why `--memory` cannot estimate a file's memory. Keys are bytes: built from a
/// `general.architecture` that need not be UTF-8 (ggml reads any bytes; llama.cpp then finds no
/// such architecture, as for any unknown one).
#[derive(Debug, thiserror::Error)]
enum MemoryError {
    /// A key the estimate needs is missing (or not an integer).
    #[error("--memory: the file has no {}", shown_key(.0))]
    Missing(Vec<u8>),
    /// `{arch}.attention.head_count` is 0.
    #[error("--memory: {} is 0", shown_key(.0))]
    Zero(Vec<u8>),
    /// A size does not fit in 64 bits: `what` (a key of the file, or a tensor) has the value
    /// `value` that made it overflow.
    #[error("--memory: {} = {value} makes the {size} larger than 2^64 - 1 bytes", shown_key(.what))]
    Overflow {
        /// The key or tensor.
        what: Vec<u8>,
        /// Its value.
        value: u64,
        /// The size computed: "KV cache", "weights", ….
        size: &'static str,
    },
}

/// A key built from `general.architecture` (or another text) as a message shows it: as it is
/// when it has nothing to escape, else escaped and quoted as inspect shows names (a control
/// byte, a backslash or a byte that is not UTF-8 of the architecture never reaches the terminal
/// raw).
fn shown_key(k: &[u8]) -> String {
    let g = GgufStr::from_bytes(k);
    if g.escaped().as_bytes() == k {
        g.escaped().into_owned()
    } else {
        format!("{g:?}")
    }
}

/// `a × b`, or [`MemoryError::Overflow`] naming `what` (whose value is `b`).
fn mul(a: u64, b: u64, what: impl AsRef<[u8]>, size: &'static str) -> Result<u64, MemoryError> {
    a.checked_mul(b).ok_or_else(|| MemoryError::Overflow { what: what.as_ref().to_vec(), value: b, size })
}

/// `a + b`, or [`MemoryError::Overflow`] naming `what` (whose value is `value`).
fn add(a: u64, b: u64, what: impl AsRef<[u8]>, value: u64, size: &'static str) -> Result<u64, MemoryError> {
    a.checked_add(b).ok_or_else(|| MemoryError::Overflow { what: what.as_ref().to_vec(), value, size })
}

/// The weights and KV cache llama.cpp allocates for `file` with a context of `ctx` tokens (see
/// `--memory`; 0 or none: `.context_length`), from `general.architecture`'s
/// `{arch}.block_count`, `.context_length`, `.embedding_length`, `.attention.head_count`,
/// `.attention.head_count_kv` (a number or one per layer), `.attention.key_length` and
/// `.attention.value_length` (default: embedding length / head count), as llama.cpp's
/// `llama_hparams` reads them; a model with multi-head latent attention (`.attention.key_length_mla`
/// and `.attention.value_length_mla` both set and non-zero: DeepSeek-V2/V3) has no V cache, as
/// llama.cpp's `llama_kv_cache` allocates none when `is_mla()`. The work is bounded by what the file stores, not by its
/// `block_count`: the layers a per-layer array covers are summed one by one, the uniform rest at
/// once.
///
/// # Errors
/// [`MemoryError`] for a missing key, a head count of 0, or a size above `u64::MAX` bytes.
fn estimate_memory(f: &Model<'_>, ctx: Option<u32>) -> Result<Memory, MemoryError> {
    // Any bytes, as ggml reads them: one that is not UTF-8 is an architecture llama.cpp does not
    // know, as `llamx` is, and its keys are looked up (and shown) as bytes.
    let arch = f
        .get("general.architecture")
        .and_then(|v| v.as_gguf_str())
        .ok_or_else(|| MemoryError::Missing(b"general.architecture".to_vec()))?;
    let key = |k: &str| [arch.as_bytes(), b".", k.as_bytes()].concat();
    let num = |k: &str| f.get(key(k)).and_then(|v| v.as_u64());
    let need = |k: &str| num(k).ok_or_else(|| MemoryError::Missing(key(k)));
    let layers = need("block_count")?;
    // llama.cpp: `n_ctx` 0 is the training context.
    let ctx = match ctx {
        Some(c) if c > 0 => u64::from(c),
        _ => need("context_length")?,
    };
    let n_embd = need("embedding_length")?;
    let heads = need("attention.head_count")?;
    let head_dim = n_embd.checked_div(heads).ok_or_else(|| MemoryError::Zero(key("attention.head_count")))?;
    let (k_len, v_len) =
        (num("attention.key_length").unwrap_or(head_dim), num("attention.value_length").unwrap_or(head_dim));
    // llama.cpp pads the context to a multiple of 256 cells (`GGML_PAD(n_ctx, 256)`).
    let cells = mul(ctx.div_ceil(256), 256, "the context (--ctx or context_length)", "KV cache")?;
    const KV: &str = "KV cache";
    // The bytes of one layer's K (or V) with `kv_heads` heads of `len` values: F16, 2 bytes a value.
    let (k_key, v_key, hkv_key) =
        (key("attention.key_length"), key("attention.value_length"), key("attention.head_count_kv"));
    let layer = |kv_heads: u64, len: u64, len_key: &[u8]| -> Result<u64, MemoryError> {
        mul(mul(mul(2, cells, "the context (cells)", KV)?, len, len_key, KV)?, kv_heads, &hkv_key, KV)
    };
    // The layers the file lists a head count for, one by one, then the rest, which all have the
    // same: the work is bounded by the array the file stores, not by `block_count`.
    let mla = [key("attention.key_length_mla"), key("attention.value_length_mla")]
        .iter()
        .all(|k| f.get(k).and_then(|v| v.as_u64()).is_some_and(|x| x > 0));
    let (mut k, mut v) = (0u64, 0u64);
    let bc = key("block_count");
    let mut listed = 0u64;
    let mut one = |h: u64, times: u64| -> Result<(), MemoryError> {
        k = add(k, mul(layer(h, k_len, &k_key)?, times, &bc, KV)?, &bc, layers, KV)?;
        if !mla {
            v = add(v, mul(layer(h, v_len, &v_key)?, times, &bc, KV)?, &bc, layers, KV)?;
        }
        Ok(())
    };
    let rest_heads = match f.get(&hkv_key) {
        Some(ValueRef::Array(a)) => {
            for x in a.iter().take(usize::try_from(layers).unwrap_or(usize::MAX)) {
                one(x.as_u64().unwrap_or(heads), 1)?;
                listed += 1;
            }
            heads
        }
        Some(x) => x.as_u64().unwrap_or(heads),
        None => heads,
    };
    let rest = layers - listed;
    if rest > 0 {
        one(rest_heads, rest)?;
    }
    let kv = add(k, v, &bc, layers, KV)?;
    let mut weights = 0u64;
    for (_, t) in &f.tensors {
        weights = add(weights, t.nbytes, format!("the nbytes of tensor {}", t.name), t.nbytes, "weights")?;
    }
    let total = add(weights, kv, &bc, layers, "total")?;
    Ok(Memory { ctx, cells, layers, weights, k, v, kv, total })
}

/// The number of parameters: the elements of every tensor (experts counted one by one; of every
/// shard of a split model), as llama.cpp's loader counts them (`model params` in its log).
fn parameters(f: &Model<'_>) -> u64 {
    f.tensors.iter().map(|(_, t)| t.n_elements).fold(0, u64::saturating_add)
}

/// `n` as llama.cpp's log prints `model params`: `268.10 M`, `1.24 B` (`%.2f` with K, M, B or T).
pub(crate) fn parameters_short(n: u64) -> String {
    let x = n as f64;
    match x {
        x if x >= 1e12 => format!("{:.2} T", x * 1e-12),
        x if x >= 1e9 => format!("{:.2} B", x * 1e-9),
        x if x >= 1e6 => format!("{:.2} M", x * 1e-6),
        x => format!("{:.2} K", x * 1e-3),
    }
}

/// A key, tensor name or path as printed: [`GgufStr::escaped`], so that a file cannot write
/// escape sequences or fake lines to the terminal, and the form reads back (bytes that are not
/// UTF-8 as `\xNN`, a backslash as `\\`, control characters as `\n`, `\u{1b}`, ...).
fn shown<'a>(s: impl Into<GgufStr<'a>>) -> std::borrow::Cow<'a, str> {
    s.into().escaped()
}

pub(crate) fn show(v: &ValueRef<'_>, items: usize) -> String {
    match v {
        ValueRef::Array(a) => format!("{} (length {})", show_inner(v, items), a.len()),
        v => show_inner(v, items),
    }
}

fn show_inner(v: &ValueRef<'_>, items: usize) -> String {
    match v {
        ValueRef::String(s) => format!("{s:?}"),
        ValueRef::Array(a) => {
            let first: Vec<String> = a.iter().take(items).map(|x| show_inner(&x, items)).collect();
            let more = if a.len() > items as u64 { ", ..." } else { "" };
            format!("[{}{more}]", first.join(", "))
        }
        ValueRef::U8(x) => x.to_string(),
        ValueRef::I8(x) => x.to_string(),
        ValueRef::U16(x) => x.to_string(),
        ValueRef::I16(x) => x.to_string(),
        ValueRef::U32(x) => x.to_string(),
        ValueRef::I32(x) => x.to_string(),
        ValueRef::U64(x) => x.to_string(),
        ValueRef::I64(x) => x.to_string(),
        ValueRef::F32(x) => format!("{x:?}"),
        ValueRef::F64(x) => format!("{x:?}"),
        ValueRef::Bool(x) => x.to_string(),
    }
}

struct JsonFile<'a, 'b>(&'b Model<'a>, Style);
struct JsonValue<'a>(ValueRef<'a>);
struct JsonArray<'a>(ArrayRef<'a>);

impl Serialize for JsonFile<'_, '_> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        struct Metadata<'a, 'b>(&'b Model<'a>, Style);
        struct Tensors<'a, 'b>(&'b Model<'a>, Style);
        struct Shards<'a, 'b>(&'b Model<'a>);
        impl Serialize for Metadata<'_, '_> {
            fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
                let mut seq = s.serialize_seq(Some(self.0.metadata.len()))?;
                for kv in &self.0.metadata {
                    let r#type = kv.value.type_name();
                    match kv.value {
                        ValueRef::Array(a) if !self.1.full && a.len() > JSON_ARRAY_ITEMS => {
                            seq.serialize_element(&LongArrayJson { key: kv.key, r#type, length: a.len() })?;
                        }
                        v => seq.serialize_element(&KvJson { key: kv.key, r#type, value: JsonValue(v) })?,
                    }
                }
                seq.end()
            }
        }
        impl Serialize for Tensors<'_, '_> {
            fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
                let split = !self.0.shards.is_empty();
                let mut seq = s.serialize_seq(Some(self.0.tensors.len()))?;
                for (shard, t) in &self.0.tensors {
                    let ne: Vec<u64>;
                    let (shape, ne) = if self.1.stored_order {
                        ne = t.ne().dims().to_vec();
                        (None, Some(&ne[..]))
                    } else {
                        (Some(&t.shape[..]), None)
                    };
                    seq.serialize_element(&TensorJson {
                        name: t.name,
                        dtype: t.dtype.name(),
                        shape,
                        ne,
                        shard: split.then_some(shard + 1),
                        data_offset: t.data_offset,
                        nbytes: t.nbytes,
                    })?;
                }
                seq.end()
            }
        }
        impl Serialize for Shards<'_, '_> {
            fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
                let mut seq = s.serialize_seq(Some(self.0.shards.len()))?;
                for (i, sh) in self.0.shards.iter().enumerate() {
                    seq.serialize_element(&serde_json::json!({"shard": i + 1, "path": sh.path,
                        "file_size": sh.file_size, "data_offset": sh.data_offset, "tensor_count": sh.tensors}))?;
                }
                seq.end()
            }
        }
        let f = self.0;
        let split = !f.shards.is_empty();
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("version", &f.version)?;
        m.serialize_entry("endianness", f.endian)?;
        m.serialize_entry("alignment", &f.alignment)?;
        m.serialize_entry("data_offset", &f.data_offset)?;
        if split {
            m.serialize_entry("file_size", &f.file_size)?;
        }
        m.serialize_entry("parameters", &parameters(f))?;
        if split {
            m.serialize_entry("shards", &Shards(f))?;
        }
        m.serialize_entry("metadata", &Metadata(f, self.1))?;
        m.serialize_entry("tensors", &Tensors(f, self.1))?;
        m.end()
    }
}

/// A key or tensor name in JSON: its escaped form ([`GgufStr::escaped`]), as the text shows it.
fn escaped<S: Serializer>(v: &GgufStr<'_>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&v.escaped())
}

#[derive(Serialize)]
struct KvJson<'a> {
    #[serde(serialize_with = "escaped")]
    key: GgufStr<'a>,
    r#type: String,
    value: JsonValue<'a>,
}

#[derive(Serialize)]
struct LongArrayJson<'a> {
    #[serde(serialize_with = "escaped")]
    key: GgufStr<'a>,
    r#type: String,
    length: u64,
}

#[derive(Serialize)]
struct TensorJson<'a> {
    #[serde(serialize_with = "escaped")]
    name: GgufStr<'a>,
    dtype: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    shape: Option<&'a [u64]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ne: Option<&'a [u64]>,
    /// A split model's: the 1-based number of the shard holding the tensor.
    #[serde(skip_serializing_if = "Option::is_none")]
    shard: Option<usize>,
    data_offset: u64,
    nbytes: u64,
}

impl Serialize for JsonValue<'_> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        match self.0 {
            ValueRef::U8(x) => s.serialize_u8(x),
            ValueRef::I8(x) => s.serialize_i8(x),
            ValueRef::U16(x) => s.serialize_u16(x),
            ValueRef::I16(x) => s.serialize_i16(x),
            ValueRef::U32(x) => s.serialize_u32(x),
            ValueRef::I32(x) => s.serialize_i32(x),
            ValueRef::U64(x) => s.serialize_u64(x),
            ValueRef::I64(x) => s.serialize_i64(x),
            // f32 is written in its own shortest form (1e-6, not 9.99999997e-7); NaN and
            // infinities, which JSON lacks, become null.
            ValueRef::F32(x) => s.serialize_f32(x),
            ValueRef::F64(x) => s.serialize_f64(x),
            ValueRef::Bool(x) => s.serialize_bool(x),
            // A string as it is; one that is not UTF-8 as `{"escaped": TEXT}` (the escaped form
            // of the text output), so that it cannot pass for a string that is.
            ValueRef::String(x) => match x.to_str() {
                Ok(text) => s.serialize_str(text),
                Err(_) => {
                    let mut m = s.serialize_map(Some(1))?;
                    m.serialize_entry("escaped", &x.escaped())?;
                    m.end()
                }
            },
            ValueRef::Array(a) => JsonArray(a).serialize(s),
        }
    }
}

impl Serialize for JsonArray<'_> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let mut seq = s.serialize_seq(usize::try_from(self.0.len()).ok())?;
        for v in self.0.iter() {
            seq.serialize_element(&JsonValue(v))?;
        }
        seq.end()
    }
}
