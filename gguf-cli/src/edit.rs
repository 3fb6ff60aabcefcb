//! `gguf set`, `gguf rm`, `gguf rename`

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use gguf_serde::ops::edit::{self, edit_file, parse_value, Edit};
use gguf_serde::{EditError, Gguf, GgufWriter, ValueRef, ValueType, WriteOptions};

use crate::inspect::show;
use crate::out::{outln, Out};

/// A value type name for `--type`.
fn parse_type(s: &str) -> Result<ValueType, String> {
    ValueType::from_name(s)
        .filter(|t| *t != ValueType::Array)
        .ok_or_else(|| format!("{s:?} is not one of u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, bool, string"))
}

/// Arguments of `gguf set`.
#[derive(clap::Args)]
pub struct SetArgs {
    /// The GGUF file, rewritten in place.
    file: PathBuf,
    /// The key.
    key: String,
    /// The value, as text.
    #[arg(allow_hyphen_values = true)]
    value: String,
    /// The value's type: u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, bool or string. Without
    /// it, a standard key (one gguf-py defines: `llama.rope.freq_base`, `general.file_type`, …)
    /// gets the type llama.cpp reads it as, even if the file holds another; another existing key
    /// keeps its type; a new key gets one inferred from the text: true/false → bool, an integer →
    /// u32 (i32 if negative; u64/i64 if it does not fit), a decimal number → f32, anything else →
    /// string.
    #[arg(long = "type", value_name = "TYPE", value_parser = parse_type)]
    ty: Option<ValueType>,
    /// Print what would change (`~ key KEY: TYPE = OLD -> TYPE = NEW`, or `+ key KEY: TYPE =
    /// NEW` for a new key, as `gguf diff` prints it) and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Allow a new key that is the prefix of existing keys, or has an existing key as a prefix
    /// (`a` beside `a.b`, as llama.cpp's `tokenizer.chat_template` beside
    /// `tokenizer.chat_template.tool_use`). Without it such a key is refused: a reader that takes
    /// `a` as a group of keys (a serde struct or map) no longer sees the value, or the reverse.
    #[arg(long)]
    allow_prefix: bool,
}

/// A refusal of [`parse_value`] with the `--type` that lifts it, where one does.
fn type_hint(e: gguf_serde::Error) -> anyhow::Error {
    let hint = match e.as_edit() {
        Some(EditError::IntegerTooLarge { .. }) => "give --type f32, f64 or string",
        Some(EditError::BadStandardValue { .. }) => "give --type to write another type anyway",
        Some(EditError::ArrayFromText { .. }) => "give a scalar --type to replace it",
        _ => return e.into(),
    };
    anyhow::anyhow!("{e}; {hint}")
}

/// The first existing key that `key` would be a value and a prefix with: `key.…`, or a key
/// that `key` starts with followed by `.`.
fn prefix_conflict<'a>(key: &str, mut keys: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    keys.find(|k| {
        (k.len() > key.len() && k.starts_with(key) && k.as_bytes().get(key.len()) == Some(&b'.'))
            || (key.len() > k.len() && key.starts_with(k) && key.as_bytes().get(k.len()) == Some(&b'.'))
    })
}

/// Sets the key.
pub fn run_set(args: &SetArgs) -> anyhow::Result<ExitCode> {
    let value = {
        let f = Gguf::open(&args.file)
            .map_err(|e| crate::out::unless_named(e, args.file.display().to_string(), &[&args.file]))?;
        let old = f.get(&args.key);
        if old.is_none() {
            // A key that is not UTF-8 is never a prefix of a text key, nor has one.
            if let Some(other) = prefix_conflict(&args.key, f.metadata().filter_map(|kv| kv.key.to_str().ok())) {
                if !args.allow_prefix {
                    anyhow::bail!(
                        "{}: new key {:?} would be both a value and a prefix with the existing key {other:?}; \
                         pass --allow-prefix to create this layout (it reads through serde as described in the \
                         serde mapping, \"A key that is also the prefix of other keys\")",
                        args.file.display(),
                        args.key
                    );
                }
                eprintln!("note: {:?} is both a value and a prefix with {other:?} (--allow-prefix)", args.key);
            }
        }
        let value = parse_value(&args.key, &args.value, args.ty, old).map_err(type_hint)?;
        if args.dry_run {
            // Every refusal of the real run (a new key `a..b`, a bad `general.alignment`): the
            // edit applied to a writer that discards its output.
            let edits = [Edit::Set { key: args.key.clone(), value: value.clone() }];
            let sink = GgufWriter::with_options(std::io::sink(), WriteOptions::like(&f))?;
            edit::apply(&f, &edits, sink, |_, _| Ok(()))
                .map_err(|e| crate::out::unless_named(e, args.file.display().to_string(), &[&args.file]))?;
            // The value as the file would hold it: written to a one-key file and read back.
            let mut w = GgufWriter::new(Vec::new());
            w.add_value(&args.key, &value)?;
            let one = w.finish()?;
            let one = Gguf::from_slice(&one)?;
            let new = one.get(&args.key).context("the new value")?;
            let shown = |v: &ValueRef<'_>| format!("{} = {}", v.type_name(), show(v, 8));
            let mut out = Out::stdout();
            match old {
                Some(o) => outln!(out, "~ key {}: {} -> {}", args.key, shown(&o), shown(&new)),
                None => outln!(out, "+ key {}: {}", args.key, shown(&new)),
            }
            out.finish()?;
            return Ok(ExitCode::SUCCESS);
        }
        value
    };
    edit_file(&args.file, &[Edit::Set { key: args.key.clone(), value }])
        .map_err(|e| crate::out::unless_named(e, args.file.display().to_string(), &[&args.file]))?;
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `gguf rm`.
#[derive(clap::Args)]
pub struct RmArgs {
    /// The GGUF file, rewritten in place.
    file: PathBuf,
    /// The key to remove.
    key: String,
}

/// Removes the key.
pub fn run_rm(args: &RmArgs) -> anyhow::Result<ExitCode> {
    edit_file(&args.file, &[Edit::Remove { key: args.key.clone() }])
        .map_err(|e| crate::out::unless_named(e, args.file.display().to_string(), &[&args.file]))?;
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `gguf rename`.
#[derive(clap::Args)]
pub struct RenameArgs {
    /// The GGUF file, rewritten in place.
    file: PathBuf,
    /// The key's name.
    old: String,
    /// Its new name.
    new: String,
}

/// Renames the key.
pub fn run_rename(args: &RenameArgs) -> anyhow::Result<ExitCode> {
    edit_file(&args.file, &[Edit::Rename { from: args.old.clone(), to: args.new.clone() }])
        .map_err(|e| crate::out::unless_named(e, args.file.display().to_string(), &[&args.file]))?;
    Ok(ExitCode::SUCCESS)
}
