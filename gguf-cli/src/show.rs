//! `gguf show FILE TENSOR [--rows R] [--items N] [--json]`

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use gguf_serde::{codec, GgufStr, ShardedGguf};
use serde_json::{json, Value as Json};

use crate::out::{outln, Out};
use gguf_serde::format::shown_path;

/// Arguments of `gguf show`.
#[derive(clap::Args)]
pub struct Args {
    /// The GGUF file (any shard of a split model: the tensor is looked up in every shard).
    file: PathBuf,
    /// The tensor's name, as `gguf inspect` lists it (e.g. `blk.0.attn_q.weight`): in the escaped
    /// form of "Names" in `gguf --help` (`\xNN` a byte that is not UTF-8, `\\` a backslash, `\n`,
    /// `\0`, ...); on Unix an argument that is not UTF-8 is taken as its bytes.
    tensor: OsString,
    /// How many rows to print: a row is the innermost dimension (the last of the canonical shape,
    /// ggml's `ne[0]`), rows taken from the start of the data; 0 prints the statistics alone.
    #[arg(long, default_value_t = 4, value_name = "R", value_parser = crate::names::Text(clap::builder::RangedU64ValueParser::<usize>::new()))]
    rows: usize,
    /// In text output, how many values of each row to print (the rest are counted); --json
    /// gives every value of each row.
    #[arg(long, default_value_t = 8, value_name = "N", value_parser = crate::names::Text(clap::builder::RangedU64ValueParser::<usize>::new()))]
    items: usize,
    /// Print one JSON object: `{"name", "dtype", "shape", "elements", "min", "max", "mean",
    /// "nan", "inf", "rows": [[VALUE]]}`. Values are the dequantized F32 numbers in their
    /// shortest form (NaN and infinities, which JSON lacks, are `null`); min, max and mean are
    /// over the finite values (`null` if there are none), the mean summed in f64.
    #[arg(long)]
    json: bool,
}

/// The statistics of a tensor's values.
struct Stats {
    min: Option<f32>,
    max: Option<f32>,
    mean: Option<f64>,
    nan: u64,
    inf: u64,
}

fn stats(values: &[f32]) -> Stats {
    let (mut min, mut max, mut sum, mut n, mut nan, mut inf) =
        (f32::INFINITY, f32::NEG_INFINITY, 0f64, 0u64, 0u64, 0u64);
    for &v in values {
        if v.is_nan() {
            nan += 1;
        } else if v.is_infinite() {
            inf += 1;
        } else {
            min = min.min(v);
            max = max.max(v);
            sum += f64::from(v);
            n += 1;
        }
    }
    let some = n > 0;
    Stats { min: some.then_some(min), max: some.then_some(max), mean: some.then(|| sum / n as f64), nan, inf }
}

fn num(v: f32) -> Json {
    if v.is_finite() {
        // The f32's own shortest form, as `gguf inspect --json` writes f32 values.
        serde_json::from_str(&v.to_string()).unwrap_or(Json::Null)
    } else {
        Json::Null
    }
}

/// Prints the tensor's values and statistics.
pub fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let name = crate::names::name_arg(&a.tensor, "TENSOR")?;
    let model = ShardedGguf::open(&a.file)
        .map_err(|e| crate::out::unless_named(e, shown_path(&a.file).to_string(), &[&a.file]))?;
    let t = model
        .tensor(&name)
        .with_context(|| format!("{}: no tensor {:?}", shown_path(&a.file), GgufStr::from_bytes(&name)))?;
    let (info, bytes) = (t.info, model.tensor_data(&t).with_context(|| format!("{}", shown_path(&a.file)))?);
    let endian = model.shard(0).map(|f| f.endian()).unwrap_or(gguf_serde::Endian::Little);
    let mut values = vec![0f32; usize::try_from(info.n_elements).context("tensor too large for this machine")?];
    codec::dequantize_endian(info.dtype, endian, bytes, &mut values)
        .with_context(|| format!("tensor {}", info.name))?;
    let s = stats(&values);
    let row_len = info.shape.last().copied().unwrap_or(1).max(1) as usize;
    let n_rows = values.len().div_ceil(row_len);
    let rows: Vec<&[f32]> = values.chunks(row_len).take(a.rows).collect();
    let mut out = Out::stdout();
    if a.json {
        out.json(&json!({
            "name": info.name.escaped(),
            "dtype": info.dtype.name(),
            "shape": &*info.shape,
            "elements": info.n_elements,
            "min": s.min.map(num),
            "max": s.max.map(num),
            "mean": s.mean,
            "nan": s.nan,
            "inf": s.inf,
            "rows": rows.iter().map(|r| r.iter().map(|&v| num(v)).collect::<Vec<_>>()).collect::<Vec<_>>(),
        }))?;
    } else {
        let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        outln!(out, "tensor:    {}", info.name);
        outln!(out, "dtype:     {}", info.dtype.name());
        outln!(out, "shape:     {:?}", &*info.shape);
        outln!(out, "elements:  {}", info.n_elements);
        outln!(out, "min:       {}", opt(s.min.map(|v| v.to_string())));
        outln!(out, "max:       {}", opt(s.max.map(|v| v.to_string())));
        outln!(out, "mean:      {}", opt(s.mean.map(|v| v.to_string())));
        outln!(out, "nan:       {}", s.nan);
        outln!(out, "inf:       {}", s.inf);
        if !rows.is_empty() {
            outln!(out, "rows ({} of {n_rows}, {} each):", rows.len(), crate::out::count(row_len, "value"));
            for (i, r) in rows.iter().enumerate() {
                let shown: Vec<String> = r.iter().take(a.items).map(|v| v.to_string()).collect();
                let more = if r.len() > a.items { format!(" … ({} more)", r.len() - a.items) } else { String::new() };
                outln!(out, "  [{i}] {}{more}", shown.join(" "));
            }
        }
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}
