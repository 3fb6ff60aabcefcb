//! `gguf diff A B`

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use gguf_serde::container::Source;
use gguf_serde::{Gguf, ValueRef};

use crate::inspect::show;

/// Arguments of `gguf diff`.
#[derive(clap::Args)]
pub struct Args {
    /// The first file.
    a: PathBuf,
    /// The second file.
    b: PathBuf,
    /// How many items of an array to show.
    #[arg(long, default_value_t = 8)]
    items: usize,
}

/// Values equal with floats compared bit for bit (a NaN equals itself) and arrays by their stored
/// bytes and element type.
fn same(a: &ValueRef<'_>, b: &ValueRef<'_>) -> bool {
    match (a, b) {
        (ValueRef::F32(x), ValueRef::F32(y)) => x.to_bits() == y.to_bits(),
        (ValueRef::F64(x), ValueRef::F64(y)) => x.to_bits() == y.to_bits(),
        (ValueRef::Array(x), ValueRef::Array(y)) => {
            x.elem_type() == y.elem_type()
                && x.len() == y.len()
                && x.endian() == y.endian()
                && x.raw_bytes() == y.raw_bytes()
        }
        _ => a == b,
    }
}

/// Prints the differences; exit 0 if none, 1 if any, 2 on error.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let open = |p: &PathBuf| Gguf::open(p).with_context(|| p.display().to_string());
    let (a, b) = match (open(&args.a), open(&args.b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let n = diff(&mut out, &a, &b, args.items)?;
    if n > 0 {
        writeln!(out, "{n} difference{}", if n == 1 { "" } else { "s" })?;
    }
    out.flush()?;
    Ok(if n == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn diff<S: Source>(out: &mut impl Write, a: &Gguf<S>, b: &Gguf<S>, items: usize) -> std::io::Result<usize> {
    let mut n = 0;
    if a.version() != b.version() {
        n += 1;
        writeln!(out, "version: {} -> {}", a.version(), b.version())?;
    }
    if a.endian() != b.endian() {
        n += 1;
        writeln!(out, "byte order: {} -> {}", a.endian().name(), b.endian().name())?;
    }
    let show_kv = |v: &ValueRef<'_>| format!("{} = {}", v.type_name(), show(v, items));
    let bkeys: HashMap<&str, ValueRef<'_>> = b.metadata().map(|kv| (kv.key, kv.value)).collect();
    let akeys: HashMap<&str, ValueRef<'_>> = a.metadata().map(|kv| (kv.key, kv.value)).collect();
    for kv in a.metadata() {
        match bkeys.get(kv.key) {
            None => {
                n += 1;
                writeln!(out, "- key {}: {}", kv.key, show_kv(&kv.value))?;
            }
            Some(v) if !same(&kv.value, v) => {
                n += 1;
                writeln!(out, "~ key {}: {} -> {}", kv.key, show_kv(&kv.value), show_kv(v))?;
            }
            Some(_) => {}
        }
    }
    for kv in b.metadata().filter(|kv| !akeys.contains_key(kv.key)) {
        n += 1;
        writeln!(out, "+ key {}: {}", kv.key, show_kv(&kv.value))?;
    }
    let common_a: Vec<&str> = a.metadata().map(|kv| kv.key).filter(|k| bkeys.contains_key(k)).collect();
    let common_b: Vec<&str> = b.metadata().map(|kv| kv.key).filter(|k| akeys.contains_key(k)).collect();
    if common_a != common_b {
        n += 1;
        writeln!(out, "~ key order differs")?;
    }

    let desc = |t: &gguf_serde::TensorInfo<'_>| format!("{} {:?}", t.dtype.name(), &*t.shape);
    for t in a.tensors() {
        match b.tensor(t.name) {
            None => {
                n += 1;
                writeln!(out, "- tensor {}: {}", t.name, desc(&t))?;
            }
            Some(u) if (u.dtype, u.shape) != (t.dtype, t.shape) => {
                n += 1;
                writeln!(out, "~ tensor {}: {} -> {}", t.name, desc(&t), desc(&u))?;
            }
            Some(u) => {
                if a.tensor_data(&t).ok() != b.tensor_data(&u).ok() {
                    n += 1;
                    writeln!(out, "~ tensor {}: data differs", t.name)?;
                }
            }
        }
    }
    for t in b.tensors().filter(|t| a.tensor(t.name).is_none()) {
        n += 1;
        writeln!(out, "+ tensor {}: {}", t.name, desc(&t))?;
    }
    let order_a: Vec<&str> = a.tensors().map(|t| t.name).filter(|x| b.tensor(x).is_some()).collect();
    let order_b: Vec<&str> = b.tensors().map(|t| t.name).filter(|x| a.tensor(x).is_some()).collect();
    if order_a != order_b {
        n += 1;
        writeln!(out, "~ tensor order differs")?;
    }
    Ok(n)
}
