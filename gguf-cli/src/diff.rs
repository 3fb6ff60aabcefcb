//! `gguf diff A B`

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use gguf_serde::codec::swap_blocks;
use gguf_serde::container::Source;
use gguf_serde::{Endian, Gguf, GgufStr, ValueRef};
use serde_json::{json, Value as Json};

use crate::inspect::show;
use crate::out::{outln, warn, Out, OutputError};
use gguf_serde::format::shown_path;

/// Arguments of `gguf diff`.
#[derive(clap::Args)]
pub struct Args {
    /// The first file.
    a: PathBuf,
    /// The second file.
    b: PathBuf,
    /// How many items of an array to show.
    #[arg(long, default_value_t = 8, value_parser = crate::names::Text(clap::builder::RangedU64ValueParser::<usize>::new()))]
    items: usize,
    /// Print one JSON object instead of text: `{"differences": N, "changes": [{"change": "-" |
    /// "+" | "~", "what": "version" | "key" | "key order" | "tensor" | "tensor
    /// order" | "tensor data", "name": KEY or TENSOR (for key, tensor, tensor data), "a": TEXT,
    /// "b": TEXT (the side or sides that have it, as the text output shows them)}]}`.
    #[arg(long)]
    json: bool,
}

/// One difference.
struct Change {
    /// `-` only in A, `+` only in B, `~` changed.
    sign: char,
    what: &'static str,
    name: Option<String>,
    a: Option<String>,
    b: Option<String>,
}

impl Change {
    fn text(&self) -> String {
        let name = self.name.as_deref().map(|n| format!(" {n}")).unwrap_or_default();
        match (self.what, &self.a, &self.b) {
            ("version", Some(a), Some(b)) => format!("{}: {a} -> {b}", self.what),
            ("key order" | "tensor order", ..) => format!("~ {} differs", self.what),
            ("tensor data", ..) => format!("~ tensor{name}: data differs"),
            (w, Some(a), Some(b)) => format!("~ {w}{name}: {a} -> {b}"),
            (w, Some(a), None) => format!("- {w}{name}: {a}"),
            (w, None, Some(b)) => format!("+ {w}{name}: {b}"),
            (w, None, None) => format!("{} {w}{name}", self.sign),
        }
    }

    fn json(&self) -> Json {
        let mut m = json!({"change": self.sign.to_string(), "what": self.what});
        for (k, v) in [("name", &self.name), ("a", &self.a), ("b", &self.b)] {
            if let Some(v) = v {
                m[k] = Json::String(v.clone());
            }
        }
        m
    }
}

/// Values equal as decoded: floats compared bit for bit (a NaN equals itself), arrays item by
/// item, so the same array stored big-endian and little-endian is the same.
fn same(a: &ValueRef<'_>, b: &ValueRef<'_>) -> bool {
    match (a, b) {
        (ValueRef::F32(x), ValueRef::F32(y)) => x.to_bits() == y.to_bits(),
        (ValueRef::F64(x), ValueRef::F64(y)) => x.to_bits() == y.to_bits(),
        (ValueRef::Array(x), ValueRef::Array(y)) => {
            if x.elem_type() != y.elem_type() || x.len() != y.len() {
                return false;
            }
            if x.endian() == y.endian() && x.raw_bytes() == y.raw_bytes() {
                return true;
            }
            x.iter().zip(y.iter()).all(|(u, v)| same(&u, &v))
        }
        _ => a == b,
    }
}

/// Prints the differences; exit 0 if none, 1 if any, 2 on error (including a failed write to
/// standard output). A closed pipe still gives 1: something had been written, so something
/// differs.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let open = |p: &PathBuf| Gguf::open(p).map_err(|e| crate::out::unless_named(e, shown_path(&p).to_string(), &[p]));
    let (a, b) = match (open(&args.a), open(&args.b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            warn(format_args!("error: {e:#}"));
            return Ok(ExitCode::from(2));
        }
    };
    let changes = diff(&a, &b, args.items);
    let n = changes.len();
    let code = if n == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) };
    match print(&changes, args.json) {
        Ok(()) => Ok(code),
        Err(e) if e.is_closed_pipe() => Ok(code),
        Err(e) => {
            warn(format_args!("error: {e}"));
            Ok(ExitCode::from(2))
        }
    }
}

fn print(changes: &[Change], json: bool) -> Result<(), OutputError> {
    let mut out = Out::stdout();
    let n = changes.len();
    if json {
        out.json(&json!({"differences": n, "changes": changes.iter().map(Change::json).collect::<Vec<_>>()}))?;
    } else {
        for c in changes {
            outln!(out, "{}", c.text());
        }
        if n > 0 {
            outln!(out, "{}", crate::out::count(n, "difference"));
        }
    }
    out.finish()
}

/// Whether two tensors of the same type and shape hold the same values: their bytes, after
/// swapping B's blocks into A's byte order ([`swap_blocks`]) when the files' orders differ.
fn same_data(a: Option<&[u8]>, ea: Endian, b: Option<&[u8]>, eb: Endian, dtype: gguf_serde::GgmlType) -> bool {
    match (a, b) {
        (Some(x), Some(y)) if ea != eb && x.len() == y.len() => {
            let mut y = y.to_vec();
            swap_blocks(dtype, &mut y);
            x == y.as_slice()
        }
        (x, y) => x == y,
    }
}

fn diff<S: Source>(a: &Gguf<S>, b: &Gguf<S>, items: usize) -> Vec<Change> {
    let mut out = Vec::new();
    // Keys and tensor names are compared as bytes and shown escaped (bad bytes as `\xNN`).
    let ch = |sign, what, name: Option<GgufStr<'_>>, a: Option<String>, b: Option<String>| Change {
        sign,
        what,
        name: name.map(|n| n.to_string()),
        a,
        b,
    };
    if a.version() != b.version() {
        out.push(ch('~', "version", None, Some(a.version().to_string()), Some(b.version().to_string())));
    }
    // The byte order is not a difference: values and tensor data are compared as decoded.
    let show_kv = |v: &ValueRef<'_>| format!("{} = {}", v.type_name(), show(v, items));
    let bkeys: HashMap<GgufStr<'_>, ValueRef<'_>> = b.metadata().map(|kv| (kv.key, kv.value)).collect();
    let akeys: HashMap<GgufStr<'_>, ValueRef<'_>> = a.metadata().map(|kv| (kv.key, kv.value)).collect();
    for kv in a.metadata() {
        match bkeys.get(&kv.key) {
            None => out.push(ch('-', "key", Some(kv.key), Some(show_kv(&kv.value)), None)),
            Some(v) if !same(&kv.value, v) => {
                out.push(ch('~', "key", Some(kv.key), Some(show_kv(&kv.value)), Some(show_kv(v))));
            }
            Some(_) => {}
        }
    }
    for kv in b.metadata().filter(|kv| !akeys.contains_key(&kv.key)) {
        out.push(ch('+', "key", Some(kv.key), None, Some(show_kv(&kv.value))));
    }
    let common_a: Vec<GgufStr<'_>> = a.metadata().map(|kv| kv.key).filter(|k| bkeys.contains_key(k)).collect();
    let common_b: Vec<GgufStr<'_>> = b.metadata().map(|kv| kv.key).filter(|k| akeys.contains_key(k)).collect();
    if common_a != common_b {
        out.push(ch('~', "key order", None, None, None));
    }

    let desc = |t: &gguf_serde::TensorInfo<'_>| format!("{} {:?}", t.dtype.name(), &*t.shape);
    for t in a.tensors() {
        match b.tensor(t.name) {
            None => out.push(ch('-', "tensor", Some(t.name), Some(desc(&t)), None)),
            Some(u) if (u.dtype, u.shape) != (t.dtype, t.shape) => {
                out.push(ch('~', "tensor", Some(t.name), Some(desc(&t)), Some(desc(&u))));
            }
            Some(u) => {
                let (x, y) = (a.tensor_data(&t).ok(), b.tensor_data(&u).ok());
                if !same_data(x, a.endian(), y, b.endian(), t.dtype) {
                    out.push(ch('~', "tensor data", Some(t.name), None, None));
                }
            }
        }
    }
    for t in b.tensors().filter(|t| a.tensor(t.name).is_none()) {
        out.push(ch('+', "tensor", Some(t.name), None, Some(desc(&t))));
    }
    let order_a: Vec<GgufStr<'_>> = a.tensors().map(|t| t.name).filter(|x| b.tensor(x).is_some()).collect();
    let order_b: Vec<GgufStr<'_>> = b.tensors().map(|t| t.name).filter(|x| a.tensor(x).is_some()).collect();
    if order_a != order_b {
        out.push(ch('~', "tensor order", None, None, None));
    }
    out
}
