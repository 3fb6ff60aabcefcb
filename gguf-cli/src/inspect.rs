//! `gguf inspect [--json] FILE`

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use gguf_serde::{ArrayRef, Gguf, ValueRef};

use crate::out::{outln, Out, OutputError};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

/// Arguments of `gguf inspect`.
#[derive(clap::Args)]
pub struct Args {
    /// The GGUF file, or `-` for standard input (only the header, key/value pairs and tensor
    /// infos are parsed; a pipe is read to its end so that tensor bounds can be checked), or a
    /// remote file: `https://…`, `http://…` or `hf://OWNER/REPO[@REVISION]/PATH`, of which only the header,
    /// key/value pairs and tensor infos are fetched, with HTTP range requests (what they cost is
    /// printed on standard error; `GGUF_HTTP_TIMEOUT` sets the timeout of each, in seconds).
    file: PathBuf,
    /// Print one JSON object instead of text: `{"version", "endianness", "alignment",
    /// "data_offset", "parameters" (the elements of every tensor), "metadata": [{"key", "type", "value"}], "tensors": [{"name", "dtype",
    /// "shape", "data_offset", "nbytes"}]}`. An array of more than 16 items is given as `{"key",
    /// "type", "length"}` without its items (as gguf-py's gguf-dump leaves arrays out) unless
    /// --full is given. With --stored-order, tensors have "ne" instead of "shape".
    #[arg(long)]
    json: bool,
    /// With --json, give every array whole.
    #[arg(long)]
    full: bool,
    /// Print tensor shapes as stored, `ne` (the fastest-varying dimension first, as llama.cpp
    /// and gguf-dump print them), instead of the canonical shape (outermost first).
    #[arg(long)]
    stored_order: bool,
    /// In text output, how many items of an array to show.
    #[arg(long, default_value_t = 8)]
    items: usize,
    /// Also estimate what llama.cpp allocates to run the model on the CPU, as its load log
    /// reports it: the weights (`load_tensors: CPU_Mapped model buffer size`, every tensor's
    /// bytes) and the KV cache (`llama_kv_cache: size = …`: F16 K and V for every layer,
    /// `head_count_kv × key_length` (and `value_length`) values per cell, the context rounded up
    /// to a multiple of 256 cells as llama.cpp pads it). Sliding-window layers get the full
    /// context, as with llama.cpp's default full-size SWA cache. Not counted: llama.cpp's compute
    /// and output buffers and the CPU-specific repacked copies of some quantized weights
    /// (`CPU_REPACK`). With --json, an object "memory": {"ctx", "cells", "layers",
    /// "weights_bytes", "k_bytes", "v_bytes", "kv_bytes"}.
    #[arg(long)]
    memory: bool,
    /// With --memory, the context in tokens (default: the model's `{arch}.context_length`).
    #[arg(long, value_name = "N", requires = "memory")]
    ctx: Option<u64>,
}

/// The longest array `--json` gives whole without --full.
const JSON_ARRAY_ITEMS: u64 = 16;

/// How to print.
#[derive(Clone, Copy)]
struct Style {
    items: usize,
    full: bool,
    stored_order: bool,
    /// `--memory`, with `--ctx`.
    memory: Option<Option<u64>>,
}

/// Prints the description of the file.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let style = Style {
        items: args.items,
        full: args.full,
        stored_order: args.stored_order,
        memory: args.memory.then_some(args.ctx),
    };
    if args.file.as_os_str() == "-" {
        let file = stdin_file().context("standard input")?;
        print(&file, args.json, style)
    } else if crate::remote::is_remote(&args.file) {
        let (file, stats) = crate::remote::open(&args.file).map_err(|e| crate::remote::name_url(e, &args.file))?;
        crate::remote::report(&args.file, stats.requests, stats.bytes_fetched, stats.file_len);
        print(&file, args.json, style)
    } else {
        let file = Gguf::open(&args.file)
            .map_err(|e| crate::out::unless_named(e, args.file.display().to_string(), &[&args.file]))?;
        print(&file, args.json, style)
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

fn print<S: gguf_serde::container::Source>(file: &Gguf<S>, json: bool, style: Style) -> anyhow::Result<ExitCode> {
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
                    "k_bytes": m.k, "v_bytes": m.v, "kv_bytes": m.k + m.v}),
            );
        }
        out.json(&v)?;
    } else {
        text(&mut out, file, style).map_err(OutputError)?;
        if let Some(m) = &memory {
            let mib = |b: u64| format!("{:.2} MiB", b as f64 / (1024.0 * 1024.0));
            outln!(out, "\nmemory (llama.cpp on the CPU, context {} tokens):", m.ctx);
            outln!(out, "  weights:   {}", mib(m.weights));
            outln!(
                out,
                "  KV cache:  {} ({} cells, {} layers), K (f16): {}, V (f16): {}",
                mib(m.k + m.v),
                m.cells,
                m.layers,
                mib(m.k),
                mib(m.v)
            );
            outln!(out, "  total:     {} (without compute buffers)", mib(m.weights + m.k + m.v));
        }
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

fn text<S: gguf_serde::container::Source>(out: &mut impl Write, f: &Gguf<S>, style: Style) -> std::io::Result<()> {
    let items = style.items;
    writeln!(out, "version:      {}", f.version())?;
    writeln!(out, "endianness:   {}", f.endian().name())?;
    writeln!(out, "alignment:    {}", f.alignment())?;
    writeln!(out, "data offset:  {}", f.data_offset())?;
    writeln!(out, "file size:    {}", f.file_len())?;
    let n = parameters(f);
    writeln!(out, "parameters:   {n} ({})", parameters_short(n))?;
    writeln!(out, "\nmetadata ({} keys):", f.kv_count())?;
    let width = f.metadata().map(|kv| shown(kv.key).len()).max().unwrap_or(0);
    for kv in f.metadata() {
        writeln!(out, "  {:width$}  {:<16}  {}", shown(kv.key), kv.value.type_name(), show(&kv.value, items))?;
    }
    writeln!(out, "\ntensors ({}):", f.tensor_count())?;
    let width = f.tensors().map(|t| shown(t.name).len()).max().unwrap_or(4).max(4);
    let shape_title = if style.stored_order { "ne" } else { "shape" };
    writeln!(out, "  {:width$}  {:<8}  {:<22}  {:>12}  {:>12}", "name", "dtype", shape_title, "data_offset", "nbytes")?;
    for t in f.tensors() {
        let shape = if style.stored_order { format!("{:?}", t.ne().dims()) } else { format!("{:?}", &*t.shape) };
        writeln!(
            out,
            "  {:width$}  {:<8}  {:<22}  {:>12}  {:>12}",
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
}

/// The weights and KV cache llama.cpp allocates for `file` with a context of `ctx` tokens (see
/// `--memory`), from `general.architecture`'s `{arch}.block_count`, `.context_length`,
/// `.embedding_length`, `.attention.head_count`, `.attention.head_count_kv` (a number or one per
/// layer), `.attention.key_length` and `.attention.value_length` (default: embedding length / head
/// count), as llama.cpp's `llama_hparams` reads them.
fn estimate_memory<S: gguf_serde::container::Source>(f: &Gguf<S>, ctx: Option<u64>) -> anyhow::Result<Memory> {
    let arch = f
        .get("general.architecture")
        .and_then(|v| v.as_str().map(str::to_owned))
        .context("--memory: the file has no general.architecture")?;
    let key = |k: &str| format!("{arch}.{k}");
    let num = |k: &str| f.get(&key(k)).and_then(|v| v.as_u64());
    let need = |k: &str| num(k).with_context(|| format!("--memory: the file has no {}", key(k)));
    let layers = need("block_count")?;
    let ctx = match ctx {
        Some(c) => c,
        None => need("context_length")?,
    };
    let n_embd = need("embedding_length")?;
    let heads = need("attention.head_count")?;
    let head_dim = n_embd.checked_div(heads).context("--memory: attention.head_count is 0")?;
    let (k_len, v_len) =
        (num("attention.key_length").unwrap_or(head_dim), num("attention.value_length").unwrap_or(head_dim));
    let kv_heads = |il: u64| -> u64 {
        match f.get(&key("attention.head_count_kv")) {
            Some(ValueRef::Array(a)) => a.get(il).and_then(|v| v.as_u64()).unwrap_or(heads),
            Some(v) => v.as_u64().unwrap_or(heads),
            None => heads,
        }
    };
    // llama.cpp pads the context to a multiple of 256 cells (`GGML_PAD(n_ctx, 256)`).
    let cells = ctx.div_ceil(256).saturating_mul(256);
    let (mut k, mut v) = (0u64, 0u64);
    for il in 0..layers {
        // F16: 2 bytes a value.
        k = k.saturating_add(kv_heads(il).saturating_mul(k_len).saturating_mul(cells).saturating_mul(2));
        v = v.saturating_add(kv_heads(il).saturating_mul(v_len).saturating_mul(cells).saturating_mul(2));
    }
    let weights = f.tensors().map(|t| t.nbytes).fold(0, u64::saturating_add);
    Ok(Memory { ctx, cells, layers, weights, k, v })
}

/// The number of parameters: the elements of every tensor (experts counted one by one), as
/// llama.cpp's loader counts them (`model params` in its log).
pub(crate) fn parameters<S: gguf_serde::container::Source>(f: &Gguf<S>) -> u64 {
    f.tensors().map(|t| t.n_elements).fold(0, u64::saturating_add)
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

/// A key or tensor name as printed: quoted and escaped if it holds control characters, so a file
/// cannot write escape sequences or fake lines to the terminal.
fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    if s.chars().any(char::is_control) {
        format!("{s:?}").into()
    } else {
        s.into()
    }
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

struct JsonFile<'a, S>(&'a Gguf<S>, Style);
struct JsonValue<'a>(ValueRef<'a>);
struct JsonArray<'a>(ArrayRef<'a>);

impl<S: gguf_serde::container::Source> Serialize for JsonFile<'_, S> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        struct Metadata<'a, S>(&'a Gguf<S>, Style);
        struct Tensors<'a, S>(&'a Gguf<S>, Style);
        impl<S: gguf_serde::container::Source> Serialize for Metadata<'_, S> {
            fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
                let mut seq = s.serialize_seq(Some(self.0.kv_count()))?;
                for kv in self.0.metadata() {
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
        impl<S: gguf_serde::container::Source> Serialize for Tensors<'_, S> {
            fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
                let mut seq = s.serialize_seq(Some(self.0.tensor_count()))?;
                for t in self.0.tensors() {
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
                        data_offset: t.data_offset,
                        nbytes: t.nbytes,
                    })?;
                }
                seq.end()
            }
        }
        let f = self.0;
        let mut m = s.serialize_map(Some(7))?;
        m.serialize_entry("version", &f.version())?;
        m.serialize_entry("endianness", f.endian().name())?;
        m.serialize_entry("alignment", &f.alignment())?;
        m.serialize_entry("data_offset", &f.data_offset())?;
        m.serialize_entry("parameters", &parameters(f))?;
        m.serialize_entry("metadata", &Metadata(f, self.1))?;
        m.serialize_entry("tensors", &Tensors(f, self.1))?;
        m.end()
    }
}

#[derive(Serialize)]
struct KvJson<'a> {
    key: &'a str,
    r#type: String,
    value: JsonValue<'a>,
}

#[derive(Serialize)]
struct LongArrayJson<'a> {
    key: &'a str,
    r#type: String,
    length: u64,
}

#[derive(Serialize)]
struct TensorJson<'a> {
    name: &'a str,
    dtype: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    shape: Option<&'a [u64]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ne: Option<&'a [u64]>,
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
            ValueRef::String(x) => s.serialize_str(x),
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
