//! `gguf set`, `gguf rm`, `gguf rename`

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use gguf_serde::ops::edit::{self, edit_file, parse_value, Edit};
use gguf_serde::{EditError, Gguf, GgufStr, GgufWriter, Value, ValueRef, ValueType, WriteOptions};

use crate::inspect::show;
use crate::out::{outln, Out};
use gguf_serde::format::shown_path;

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
    /// The key, as `gguf inspect` shows it (see "Names" in `gguf --help`). A new key may be any
    /// bytes, as `gguf rename` writes them and ggml reads them (the spec requires ASCII keys:
    /// `gguf validate` warns), 1 to 65,535 of them.
    key: OsString,
    /// The value, as text taken as it is (no escapes; see --escaped). On Unix a VALUE that is not
    /// UTF-8 is a string of its bytes, as ggml stores them.
    #[arg(allow_hyphen_values = true)]
    value: OsString,
    /// Read VALUE in the escaped form `gguf inspect` shows string values in, without the quotes
    /// (see "Names" in `gguf --help`): `\\` a backslash, `\xNN` a byte (one that is not UTF-8
    /// too), `\n`, `\t`, `\r`, `\0`, `\"`, `\u{1b}`; so `gguf set F K 'caf\xe9' --escaped`
    /// writes the bytes `caf` E9. A VALUE that is not UTF-8 is refused with --escaped (exit
    /// status 2).
    #[arg(long)]
    escaped: bool,
    /// The value's type: u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, bool or string. Without
    /// it, a standard key (one gguf-py defines: `llama.rope.freq_base`, `general.file_type`, …)
    /// gets the type llama.cpp reads it as, even if the file holds another; another existing key
    /// keeps its type; a new key gets one inferred from the text: true/false → bool, an integer →
    /// u32 (i32 if negative; u64/i64 if it does not fit), a decimal number → f32, anything else →
    /// string.
    #[arg(long = "type", value_name = "TYPE", value_parser = crate::names::Text(parse_type))]
    ty: Option<ValueType>,
    /// Print what would change (`~ key KEY: TYPE = OLD -> TYPE = NEW`, or `+ key KEY: TYPE =
    /// NEW` for a new key, as `gguf diff` prints it) and write nothing. A VALUE the key already
    /// holds (the same type and bytes) changes nothing: with or without --dry-run, `= key KEY:
    /// TYPE = VALUE (unchanged)` is printed and the file is not rewritten.
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
        // ggml reads general.alignment only as a u32: no other type is written for it.
        Some(EditError::BadStandardValue { key, .. }) if key == "general.alignment" => {
            "general.alignment must be a u32 power of two (ggml takes no other)"
        }
        Some(EditError::BadStandardValue { .. }) => "give --type to write another type anyway",
        Some(EditError::ArrayFromText { .. }) => "give a scalar --type to replace it",
        _ => return e.into(),
    };
    anyhow::anyhow!("{e}; {hint}")
}

/// The first existing key that `key` would be a value and a prefix with: `key.…`, or a key
/// that `key` starts with followed by `.` (as bytes).
fn prefix_conflict<'a>(key: &[u8], mut keys: impl Iterator<Item = GgufStr<'a>>) -> Option<GgufStr<'a>> {
    keys.find(|k| {
        let k = k.as_bytes();
        (k.len() > key.len() && k.starts_with(key) && k.get(key.len()) == Some(&b'.'))
            || (key.len() > k.len() && key.starts_with(k) && key.get(k.len()) == Some(&b'.'))
    })
}

/// The edit that sets `key` to the value of `bytes` (VALUE's bytes, unescaped if asked): text is
/// parsed by [`parse_value`]; bytes that are not UTF-8 are a string (as that type is chosen for
/// them: given, the standard key's, the existing key's, or inferred), written as they are.
fn set_edit(key: &[u8], bytes: &[u8], ty: Option<ValueType>, old: Option<ValueRef<'_>>) -> anyhow::Result<Edit> {
    let shown_key = GgufStr::from_bytes(key).escaped();
    if let Ok(text) = std::str::from_utf8(bytes) {
        let value = parse_value(&shown_key, text, ty, old).map_err(type_hint)?;
        return Ok(Edit::Set { key: key.to_vec(), value });
    }
    // The escaped text stands for the bytes where a type is chosen: with its backslash it never
    // reads as a number or a bool, so it is a string or refused for the type asked.
    let refused = |ty: &str, hint: &str| {
        let (key, value) = (GgufStr::from_bytes(key), GgufStr::from_bytes(bytes));
        anyhow::anyhow!("cannot edit {key:?}: {value:?} is not UTF-8 text, so not a valid {ty}{hint}")
    };
    match parse_value(&shown_key, &GgufStr::from_bytes(bytes).escaped(), ty, old) {
        Ok(Value::String(_)) => Ok(Edit::SetString { key: key.to_vec(), value: bytes.to_vec() }),
        Ok(other) => Err(refused(other.value_type().name(), "")),
        Err(e) => Err(match e.as_edit() {
            Some(EditError::BadValue { ty, .. }) => refused(ty, "; give --type string"),
            Some(EditError::BadStandardValue { expected, .. }) => {
                refused(&expected.to_string(), "; give --type string to write a string anyway")
            }
            _ => type_hint(e),
        }),
    }
}

/// Sets the key.
pub fn run_set(args: &SetArgs) -> anyhow::Result<ExitCode> {
    let key = crate::names::name_arg(&args.key, "KEY")?;
    let shown_key = GgufStr::from_bytes(&key);
    let bytes = match (args.escaped, args.value.to_str()) {
        (true, Some(_)) => crate::names::name_arg(&args.value, "VALUE")?,
        // The escaped form is text: a byte that is not UTF-8 is written `\xNN` in it.
        (true, None) => {
            return Err(crate::out::usage(format!(
                "VALUE {:?} is not UTF-8, which --escaped does not take: write each byte that is not \
                 UTF-8 as \\xNN (as shown), or leave out --escaped to store the bytes as they are",
                GgufStr::from_bytes(args.value.as_encoded_bytes())
            )))
        }
        (false, _) => args.value.as_encoded_bytes().to_vec(),
    };
    let change = {
        let f = Gguf::open(&args.file)
            .map_err(|e| crate::out::unless_named(e, shown_path(&args.file).to_string(), &[&args.file]))?;
        let old = f.get(&key);
        if old.is_none() {
            if let Some(other) = prefix_conflict(&key, f.metadata().map(|kv| kv.key)) {
                if !args.allow_prefix {
                    anyhow::bail!(
                        "{}: new key {shown_key:?} would be both a value and a prefix with the existing key {other:?}; \
                         pass --allow-prefix to create this layout (it reads through serde as described in the \
                         serde mapping, \"A key that is also the prefix of other keys\")",
                        shown_path(&args.file),
                    );
                }
                eprintln!("note: {shown_key:?} is both a value and a prefix with {other:?} (--allow-prefix)");
            }
        }
        let change = set_edit(&key, &bytes, args.ty, old)?;
        // The value as the file would hold it: written to a one-key file (in the file's byte
        // order) and read back; unchanged if the pair's bytes are those the file holds (same
        // type, same bytes: `-0.0` is not `0.0`, a NaN keeps its bits) and no BOOL byte of it is
        // other than 0 and 1 (which a rewrite would write as 1).
        let one_key = |v: ValueRef<'_>| -> gguf_serde::Result<Vec<u8>> {
            let mut w = GgufWriter::with_options(Vec::new(), WriteOptions::like(&f))?;
            w.add_kv_ref("k", v)?;
            w.finish()
        };
        let mut w = GgufWriter::with_options(Vec::new(), WriteOptions::like(&f))?;
        match &change {
            Edit::SetString { value, .. } => w.add_kv_ref("k", ValueRef::String(GgufStr::from_bytes(value)))?,
            Edit::Set { value, .. } => w.add_value("k", value)?,
            _ => {}
        }
        let one = w.finish()?;
        let odd_bools = f.metadata().find(|kv| kv.key.as_bytes() == key.as_slice()).and_then(|kv| kv.odd_bool_bytes());
        let unchanged = match old {
            Some(o) if odd_bools.is_none() => one_key(o)? == one,
            _ => false,
        };
        let one = Gguf::from_slice(&one)?;
        let new = one.get("k").context("the new value")?;
        let shown = |v: &ValueRef<'_>| format!("{} = {}", v.type_name(), show(v, 8));
        if unchanged {
            // Nothing to write: the file is left as it is, by the real run too.
            let mut out = Out::stdout();
            outln!(out, "= key {shown_key}: {} (unchanged)", shown(&new));
            out.finish()?;
            return Ok(ExitCode::SUCCESS);
        }
        if args.dry_run {
            // Every refusal of the real run (a new key `a..b`, a bad `general.alignment`): the
            // edit applied to a writer that discards its output.
            let edits = [change];
            let sink = GgufWriter::with_options(std::io::sink(), WriteOptions::like(&f))?;
            edit::apply(&f, &edits, sink, |_, _| Ok(()))
                .map_err(|e| crate::out::unless_named(e, shown_path(&args.file).to_string(), &[&args.file]))?;
            let mut out = Out::stdout();
            match old {
                Some(o) => outln!(out, "~ key {shown_key}: {} -> {}", shown(&o), shown(&new)),
                None => outln!(out, "+ key {shown_key}: {}", shown(&new)),
            }
            out.finish()?;
            return Ok(ExitCode::SUCCESS);
        }
        change
    };
    edit_file(&args.file, &[change])
        .map_err(|e| crate::out::unless_named(e, shown_path(&args.file).to_string(), &[&args.file]))?;
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `gguf rm`.
#[derive(clap::Args)]
pub struct RmArgs {
    /// The GGUF file, rewritten in place.
    file: PathBuf,
    /// The key to remove, as `gguf inspect` shows it (see "Names" in `gguf --help`).
    key: OsString,
}

/// Removes the key.
pub fn run_rm(args: &RmArgs) -> anyhow::Result<ExitCode> {
    let key = crate::names::name_arg(&args.key, "KEY")?;
    edit_file(&args.file, &[Edit::Remove { key }])
        .map_err(|e| crate::out::unless_named(e, shown_path(&args.file).to_string(), &[&args.file]))?;
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `gguf rename`.
#[derive(clap::Args)]
pub struct RenameArgs {
    /// The GGUF file, rewritten in place.
    file: PathBuf,
    /// The key's name, as `gguf inspect` shows it (see "Names" in `gguf --help`).
    old: OsString,
    /// Its new name, in the same form.
    new: OsString,
}

/// Renames the key.
pub fn run_rename(args: &RenameArgs) -> anyhow::Result<ExitCode> {
    let (from, to) = (crate::names::name_arg(&args.old, "OLD")?, crate::names::name_arg(&args.new, "NEW")?);
    edit_file(&args.file, &[Edit::Rename { from, to }])
        .map_err(|e| crate::out::unless_named(e, shown_path(&args.file).to_string(), &[&args.file]))?;
    Ok(ExitCode::SUCCESS)
}
