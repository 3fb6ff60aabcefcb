//! `gguf inspect [--json] FILE`

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use gguf_serde::{ArrayRef, Gguf, ValueRef};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

/// Arguments of `gguf inspect`.
#[derive(clap::Args)]
pub struct Args {
    /// The GGUF file.
    file: PathBuf,
    /// Print one JSON object instead of text: `{"version", "endianness", "alignment",
    /// "data_offset", "metadata": [{"key", "type", "value"}], "tensors": [{"name", "dtype",
    /// "shape", "data_offset", "nbytes"}]}`. Arrays are given whole.
    #[arg(long)]
    json: bool,
    /// In text output, how many items of an array to show.
    #[arg(long, default_value_t = 8)]
    items: usize,
}

/// Prints the description of the file.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let file = Gguf::open(&args.file).with_context(|| format!("{}", args.file.display()))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        serde_json::to_writer(&mut out, &JsonFile(&file))?;
        writeln!(out)?;
    } else {
        text(&mut out, &file, args.items)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn text<S: gguf_serde::container::Source>(out: &mut impl Write, f: &Gguf<S>, items: usize) -> std::io::Result<()> {
    writeln!(out, "version:      {}", f.version())?;
    writeln!(out, "endianness:   {}", f.endian().name())?;
    writeln!(out, "alignment:    {}", f.alignment())?;
    writeln!(out, "data offset:  {}", f.data_offset())?;
    writeln!(out, "file size:    {}", f.file_len())?;
    writeln!(out, "\nmetadata ({} keys):", f.kv_count())?;
    let width = f.metadata().map(|kv| shown(kv.key).len()).max().unwrap_or(0);
    for kv in f.metadata() {
        writeln!(out, "  {:width$}  {:<16}  {}", shown(kv.key), kv.value.type_name(), show(&kv.value, items))?;
    }
    writeln!(out, "\ntensors ({}):", f.tensor_count())?;
    let width = f.tensors().map(|t| shown(t.name).len()).max().unwrap_or(4).max(4);
    writeln!(out, "  {:width$}  {:<8}  {:<22}  {:>12}  {:>12}", "name", "dtype", "shape", "data_offset", "nbytes")?;
    for t in f.tensors() {
        let shape = format!("{:?}", &*t.shape);
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

struct JsonFile<'a, S>(&'a Gguf<S>);
struct JsonValue<'a>(ValueRef<'a>);
struct JsonArray<'a>(ArrayRef<'a>);

impl<S: gguf_serde::container::Source> Serialize for JsonFile<'_, S> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        struct Metadata<'a, S>(&'a Gguf<S>);
        struct Tensors<'a, S>(&'a Gguf<S>);
        impl<S: gguf_serde::container::Source> Serialize for Metadata<'_, S> {
            fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
                let mut seq = s.serialize_seq(Some(self.0.kv_count()))?;
                for kv in self.0.metadata() {
                    seq.serialize_element(&KvJson {
                        key: kv.key,
                        r#type: kv.value.type_name(),
                        value: JsonValue(kv.value),
                    })?;
                }
                seq.end()
            }
        }
        impl<S: gguf_serde::container::Source> Serialize for Tensors<'_, S> {
            fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
                let mut seq = s.serialize_seq(Some(self.0.tensor_count()))?;
                for t in self.0.tensors() {
                    seq.serialize_element(&TensorJson {
                        name: t.name,
                        dtype: t.dtype.name(),
                        shape: &t.shape,
                        data_offset: t.data_offset,
                        nbytes: t.nbytes,
                    })?;
                }
                seq.end()
            }
        }
        let f = self.0;
        let mut m = s.serialize_map(Some(6))?;
        m.serialize_entry("version", &f.version())?;
        m.serialize_entry("endianness", f.endian().name())?;
        m.serialize_entry("alignment", &f.alignment())?;
        m.serialize_entry("data_offset", &f.data_offset())?;
        m.serialize_entry("metadata", &Metadata(f))?;
        m.serialize_entry("tensors", &Tensors(f))?;
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
struct TensorJson<'a> {
    name: &'a str,
    dtype: &'static str,
    shape: &'a [u64],
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
