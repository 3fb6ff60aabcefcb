//! `gguf quantize IN OUT TYPE` (llama-quantize's file types and options) and
//! `gguf dequantize IN OUT [--type F32|F16|BF16]`.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use gguf_serde::container::ShardedGguf;
use gguf_serde::ops::dequantize::{dequantize, DequantizeOptions};
use gguf_serde::ops::file_type::LlamaFileType;
use gguf_serde::ops::globs::NameGlobs;
use gguf_serde::ops::imatrix::Imatrix;
use gguf_serde::ops::kv_override::KvOverride;
use gguf_serde::ops::quantize::{
    plan_file_type, plan_file_type_sharded, QuantizeParams, TensorPlan, TensorTypeOverride, LLAMA_CPP_COMMIT,
};
use gguf_serde::ops::requant::{
    check_header, check_plan, keep_split_paths, keep_split_prefix, requantize, requantize_sharded,
};
use gguf_serde::{GgmlType, Gguf, GgufStr};
use indicatif::{ProgressBar, ProgressStyle};

use crate::names::{Escaped, Text};
use crate::out::{count, outln, Out, OutputError};
use crate::outputs::{Outputs, Reads, Shards};
use gguf_serde::format::shown_path;

/// A ggml tensor type, one of [`GgmlType::ALL`] by name (case-insensitive); the names are clap's
/// possible values, so `--help` and the shell completions list them.
fn ggml_type() -> impl clap::builder::TypedValueParser<Value = GgmlType> {
    ggml_types(&GgmlType::ALL)
}

/// One of `types` by name (case-insensitive).
fn ggml_types(types: &[GgmlType]) -> impl clap::builder::TypedValueParser<Value = GgmlType> {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(types.iter().map(|t| t.name())).try_map(|s| s.parse::<GgmlType>())
}

/// The `--type` of `gguf dequantize`: any ggml type name (another than F32, F16 and BF16 is
/// refused later, with an explanation), with F32, F16 and BF16 as possible values for `--help`
/// and the shell completions.
#[derive(Clone)]
struct FloatTarget;

impl clap::builder::TypedValueParser for FloatTarget {
    type Value = GgmlType;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<GgmlType, clap::Error> {
        ggml_type().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(["F32", "F16", "BF16"].into_iter().map(clap::builder::PossibleValue::new)))
    }
}

/// The `--type` of `gguf quantize`: any text (checked later, so that a ggml tensor type gets a
/// helpful error), with the llama.cpp file types and `COPY` as possible values for `--help` and
/// the shell completions.
#[derive(Clone)]
struct FileTypeName;

impl clap::builder::TypedValueParser for FileTypeName {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let names = LlamaFileType::ALL.iter().map(|t| t.name()).chain(["COPY"]);
        Some(Box::new(names.map(clap::builder::PossibleValue::new)))
    }
}

/// Arguments of `gguf quantize`.
#[derive(clap::Args)]
#[command(after_help = file_types_help())]
// The doc comments are clap's help text: `[OUT]` is usage notation there, not a link.
#[allow(rustdoc::broken_intra_doc_links)]
pub struct QuantizeArgs {
    /// IN [OUT] [TYPE] [NTHREADS], as llama-quantize takes them: the input model (a split model
    /// by its first shard, NAME-00001-of-0000N.gguf: every shard is read); the output file
    /// (written to a temporary file, then renamed; without it, IN's folder/ggml-model-TYPE.gguf);
    /// the file type (or --type); the number of threads (or --threads).
    #[arg(value_name = "ARGS", num_args = 1.., required = true)]
    args: Vec<OsString>,
    /// The llama.cpp file type (case-insensitive): Q4_K_M, Q8_0, Q5_K_S, IQ4_XS, MXFP4_MOE, F16,
    /// COPY, ... or its number (15); see the list below. A ggml tensor type that is no file type
    /// (MXFP4, Q8_1, ...) is refused: choose tensor types with --tensor-type.
    #[arg(long = "type", short = 't', value_name = "TYPE", value_parser = Text(FileTypeName), hide_possible_values = true)]
    ftype: Option<String>,
    /// Disable the mixes: every quantizable tensor gets the file type's default type.
    #[arg(long)]
    pure: bool,
    /// Leave output.weight as it is.
    #[arg(long)]
    leave_output_tensor: bool,
    /// The ggml type of output.weight.
    #[arg(long, value_name = "GGML_TYPE", value_parser = Text(ggml_type()), ignore_case = true)]
    output_tensor_type: Option<GgmlType>,
    /// The ggml type of the token embeddings.
    #[arg(long, value_name = "GGML_TYPE", value_parser = Text(ggml_type()), ignore_case = true)]
    token_embedding_type: Option<GgmlType>,
    /// PATTERN=GGML_TYPE: tensors whose name contains a match of the regular expression PATTERN
    /// (its ASCII letters lower-cased) get that type; the first matching option wins
    /// (repeatable), e.g. --tensor-type attn_v=q8_0. PATTERN is ECMAScript as llama-quantize's
    /// std::regex (libstdc++) reads it, matched against the name's bytes: `.` is one byte, so a
    /// non-ASCII character of two bytes is `..`, and a byte that is not UTF-8 is one `.`;
    /// `\xHH` (exactly two digits) and `\uHHHH` (its low byte: `\u00ff` is the byte FF) are
    /// bytes, `\0` is NUL, `\w`, `\d`, `\s` and classes hold no byte above 127. A pattern
    /// std::regex refuses (`\x{ff}`, `[a-\xff]`) is refused, naming its std::regex error; so
    /// are look-aheads and back-references, which std::regex takes (not llama-quantize's
    /// behaviour: there they work).
    #[arg(long, value_name = "PATTERN=TYPE", value_parser = tensor_type_parser())]
    tensor_type: Vec<TensorTypeOverride>,
    /// A file of PATTERN=TYPE options separated by white space (spaces, tabs, newlines).
    /// The rules are taken in command-line order across --tensor-type and --tensor-type-file (a
    /// file's rules at its place), as llama-quantize takes them. --dry-run names such a rule by
    /// its file and line (`--tensor-type-file FILE:LINE PATTERN`), and a bad one is refused so.
    #[arg(long, value_name = "FILE")]
    tensor_type_file: Vec<PathBuf>,
    /// The command-line order of the `--tensor-type` (`false`) and `--tensor-type-file` (`true`)
    /// options ([`QuantizeArgs::set_rule_order`]); empty: every `--tensor-type`, then the files.
    #[arg(skip)]
    rule_order: Vec<bool>,
    /// Set KEY in the output: TYPE is int (written as UINT32 of the absolute value), float, bool
    /// or str (repeatable). As llama-quantize reads them (C's atol/atof), an int or float VALUE
    /// is its longest leading number, 0 without one: `int:` and `int:abc` write 0, `int:7x` 7,
    /// `float:1.5x` 1.5, `float:1e` 1; a float may be hexadecimal (`float:0x1p3` writes 8), `inf`
    /// or `nan`; bool is `true` or `false`, str at most 127 bytes.
    #[arg(long, value_name = "KEY=TYPE:VALUE", value_parser = override_kv_parser())]
    override_kv: Vec<KvOverride>,
    /// Use the importance matrix only for tensors whose name contains NAME (its bytes, as
    /// given; repeatable; not with --exclude-weights; needs --imatrix).
    #[arg(long, value_name = "NAME", requires = "imatrix")]
    include_weights: Vec<OsString>,
    /// Do not use the importance matrix for tensors whose name contains NAME (its bytes, as
    /// given; repeatable; needs --imatrix).
    #[arg(long, value_name = "NAME", requires = "imatrix")]
    exclude_weights: Vec<OsString>,
    /// An importance matrix made by llama-imatrix, in its GGUF format or the legacy .dat
    /// format; its entries are matched to tensors by the bytes of their names, UTF-8 or not,
    /// as llama-quantize matches them. Its name is written to quantize.imatrix.file as given
    /// here. Needed, as
    /// llama-quantize needs it, for every tensor (but token_embd and output) that the plan gives
    /// IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S or IQ3_XXS, or Q2_K in a Q2_K_S file: so for the
    /// file types IQ1_*, IQ2_*, IQ3_XXS, Q2_K_S, and IQ3_XS where its mix uses IQ3_XXS
    /// (`--dry-run` shows the plan and says whether the run would be refused).
    #[arg(long, value_name = "FILE")]
    imatrix: Option<PathBuf>,
    /// Write one output shard per input shard, as llama-quantize --keep-split: OUT without its
    /// final .gguf is the prefix of the shards OUT-00001-of-0000N.gguf, ... (without OUT:
    /// IN's folder/ggml-model-TYPE-00001-of-0000N.gguf). Each shard holds the tensors of its
    /// input shard, in file order; the first has all the keys, and every shard the split keys
    /// split.no, split.count, split.tensors.count. An unsplit input gives the one shard
    /// OUT-00001-of-00001.gguf, without split keys. All shards are renamed into place together
    /// once all are written; an existing one is refused without --force.
    #[arg(long)]
    keep_split: bool,
    /// Accepted for llama-quantize's command lines: requantizing is always allowed.
    #[arg(long)]
    allow_requantize: bool,
    /// Threads for the conversion (default: one per core); the output does not depend on it.
    #[arg(long, value_name = "N", value_parser = Text(clap::builder::RangedU64ValueParser::<usize>::new()))]
    threads: Option<usize>,
    /// Print the plan (each tensor with its source type, target type and the rule that chose it)
    /// and the sizes, then `left out: NAME (...)` for each tensor left out because its name
    /// starts with a NUL byte (as llama-quantize leaves it out); write nothing. Exits 1 with the real run's error after the plan if the real
    /// run would refuse it (an importance matrix needed; a tensor left without importance weights
    /// whose type ggml quantizes only with them: IQ2_XXS, IQ2_XS, IQ1_S).
    #[arg(long)]
    dry_run: bool,
    /// Replace OUT (with --keep-split, its shards) if it exists.
    #[arg(long)]
    force: bool,
    /// Leave tensors whose whole name matches the glob GLOB as they are (repeatable; not a
    /// llama-quantize option). Glob syntax: `*` any run of characters (`.` included), `?` one
    /// character, `[0-3]` / `[!0-9]` one character of a class (or not), `{a,b}` either
    /// alternative, `\` the next character literally; e.g. `blk.*.ffn_{up,down}.weight`. Names
    /// are matched as bytes: `?` and a class match one byte, so a non-ASCII character of two
    /// bytes takes `??`, and a byte that is not UTF-8 one `?`. On Unix GLOB may be bytes that are
    /// not UTF-8, each matching itself.
    #[arg(long, value_name = "GLOB", value_parser = parse_glob())]
    exclude: Vec<Vec<u8>>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

fn file_types_help() -> String {
    let mut s = format!("File types (llama.cpp {LLAMA_CPP_COMMIT}), name and general.file_type number:\n");
    let types: Vec<String> = LlamaFileType::ALL.iter().map(|t| format!("{t} ({})", t.number())).collect();
    for line in types.chunks(6) {
        s.push_str("  ");
        s.push_str(&line.join(", "));
        s.push('\n');
    }
    s.push_str("  Q3_K, Q4_K, Q5_K: aliases of the _M types; COPY: copy every tensor");
    s
}

/// Arguments of `gguf dequantize`.
#[derive(clap::Args)]
pub struct DequantizeArgs {
    /// The input model: one file (a shard of a split model is refused: merge it first with gguf
    /// merge).
    input: PathBuf,
    /// The output file.
    output: PathBuf,
    /// Float type to convert to.
    #[arg(long = "type", short = 't', default_value = "F32", ignore_case = true,
        value_parser = Text(FloatTarget))]
    target: GgmlType,
    /// Leave tensors whose whole name matches the glob GLOB as they are (repeatable). Glob
    /// syntax: `*` any run of characters (`.` included), `?` one character, `[0-3]` / `[!0-9]`
    /// one character of a class (or not), `{a,b}` either alternative, `\` the next character
    /// literally; e.g. `blk.*.ffn_{up,down}.weight`. Names are matched as bytes (`?` is one
    /// byte), as `gguf quantize --exclude` matches them; on Unix GLOB may be bytes that are not
    /// UTF-8, each matching itself.
    #[arg(long, value_name = "GLOB", value_parser = parse_glob())]
    exclude: Vec<Vec<u8>>,
    /// Threads for the conversion (default: one per core); the output does not depend on it.
    #[arg(long, value_name = "N", value_parser = Text(clap::value_parser!(u16).range(1..)))]
    threads: Option<u16>,
    /// Replace OUTPUT if it exists (never the input itself).
    #[arg(long)]
    force: bool,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

/// A file type argument: a [`LlamaFileType`] or `COPY`.
fn parse_file_type(s: &str) -> Option<(LlamaFileType, bool)> {
    if s.eq_ignore_ascii_case("copy") {
        return Some((LlamaFileType::F32, true));
    }
    s.parse().ok().map(|t| (t, false))
}

/// The refusal of the file type `s` (any bytes: a positional argument), shown quoted in the
/// escaped form of names (`\xNN` for a byte that is not UTF-8).
fn bad_file_type(s: &OsStr) -> anyhow::Error {
    match text(s).parse::<GgmlType>() {
        Ok(t) => crate::out::usage(format!(
            "{t} is a ggml tensor type, not a llama.cpp file type: give a file type (Q4_K_M, Q8_0, MXFP4_MOE, \
             ...; see gguf quantize --help), and choose tensor types with --tensor-type PATTERN={t}"
        )),
        Err(_) => crate::out::usage(format!("unknown file type {} (see gguf quantize --help)", quoted(s))),
    }
}

/// The refusal of IN and one more argument, `last`, that is not a file type (llama-quantize
/// takes it as OUT and asks for the TYPE after it): a file name (ending in `.gguf`) is taken as
/// OUT without a file type after it; anything else is refused as an unknown file type, as
/// [`bad_file_type`] refuses it.
fn missing_file_type(last: &OsStr) -> anyhow::Error {
    let bytes = last.as_encoded_bytes();
    if bytes.len() >= 5 && bytes[bytes.len() - 5..].eq_ignore_ascii_case(b".gguf") {
        return crate::out::usage(format!("missing the file type after OUT {}", shown_path(last)));
    }
    bad_file_type(last)
}

/// What the positional arguments and options say: IN, OUT, the file type (and whether it is
/// COPY), the thread count.
struct Positional {
    input: PathBuf,
    output: Option<PathBuf>,
    ftype: (LlamaFileType, bool),
    threads: Option<usize>,
}

/// A positional argument as text, for a file type or a thread count (a path may be any bytes):
/// one that is not UTF-8 is none of them, and is shown in messages by [`quoted`].
fn text(s: &OsStr) -> std::borrow::Cow<'_, str> {
    s.to_string_lossy()
}

/// An argument quoted in a message, in the escaped form of names: `"Q4\xff"` for the bytes
/// `Q4` FF, never U+FFFD.
fn quoted(s: &OsStr) -> String {
    format!("{:?}", GgufStr::from_bytes(s.as_encoded_bytes()))
}

fn positional(a: &QuantizeArgs) -> anyhow::Result<Positional> {
    if a.args.iter().any(|s| s.is_empty()) {
        return Err(crate::out::usage("an empty argument: IN and OUT must name files"));
    }
    let mut rest = a.args.iter().map(OsString::as_os_str);
    let input = PathBuf::from(rest.next().ok_or_else(|| crate::out::usage("missing the input model"))?);
    let mut output = None;
    let ftype = match &a.ftype {
        Some(t) => {
            output = rest.next().map(PathBuf::from);
            if let Some(second) = rest.clone().next().filter(|s| parse_file_type(&text(s)).is_some()) {
                return Err(crate::out::usage(format!("two file types: {} and --type {t}", text(second))));
            }
            parse_file_type(t).ok_or_else(|| bad_file_type(OsStr::new(t)))?
        }
        None => {
            let next = rest.next().ok_or_else(|| crate::out::usage("missing the file type"))?;
            match parse_file_type(&text(next)) {
                Some(t) => t,
                None => {
                    output = Some(PathBuf::from(next));
                    let t = rest.next().ok_or_else(|| missing_file_type(next))?;
                    parse_file_type(&text(t)).ok_or_else(|| bad_file_type(t))?
                }
            }
        }
    };
    let mut threads = a.threads;
    if let Some(n) = rest.next() {
        let n: usize = match n.to_str() {
            Some(t) => t.parse().map_err(|e| format!("{e}")),
            // as --threads refuses it
            None => Err("not UTF-8 text".to_owned()),
        }
        .map_err(|e| crate::out::usage(format!("invalid nthread {}: {e}", quoted(n))))?;
        if threads.is_some_and(|t| t != n) {
            return Err(crate::out::usage(format!(
                "two thread counts: {n} and --threads {}",
                threads.unwrap_or_default()
            )));
        }
        threads = Some(n);
    }
    if let Some(extra) = rest.next() {
        return Err(crate::out::usage(format!("unexpected argument {}", quoted(extra))));
    }
    Ok(Positional { input, output, ftype, threads: threads.filter(|&n| n > 0) })
}

fn params(
    a: &QuantizeArgs,
    (ftype, only_copy): (LlamaFileType, bool),
    threads: Option<usize>,
) -> anyhow::Result<QuantizeParams> {
    if !a.include_weights.is_empty() && !a.exclude_weights.is_empty() {
        return Err(crate::out::usage("--include-weights and --exclude-weights cannot be used together"));
    }
    let mut p = QuantizeParams::new(ftype);
    p.only_copy = only_copy;
    p.pure = a.pure;
    p.leave_output_tensor = a.leave_output_tensor;
    p.output_tensor_type = a.output_tensor_type;
    p.token_embedding_type = a.token_embedding_type;
    p.exclude = a.exclude.clone();
    p.threads = threads;
    p.keep_split = a.keep_split;
    let (mut options, mut files) = (a.tensor_type.iter(), a.tensor_type_file.iter());
    let order = if a.rule_order.is_empty() {
        let n = (a.tensor_type.len(), a.tensor_type_file.len());
        std::iter::repeat_n(false, n.0).chain(std::iter::repeat_n(true, n.1)).collect()
    } else {
        a.rule_order.clone()
    };
    for is_file in order {
        if !is_file {
            p.tensor_types.extend(options.next().cloned());
            continue;
        }
        let Some(f) = files.next() else { continue };
        let path = shown_path(f);
        let bytes = std::fs::read(f).with_context(|| format!("--tensor-type-file: reading {path}"))?;
        // Words of any bytes, split at C's `isspace` as llama-quantize's `file >> arg` splits them
        // (the lines first, to name each rule's line).
        let space = |b: &u8| matches!(b, b' ' | b'\t' | 0x0b | 0x0c | b'\r');
        for (n, row) in bytes.split(|&b| b == b'\n').enumerate() {
            for t in row.split(space).filter(|w| !w.is_empty()) {
                // llama-quantize passes each word on as a C string, which ends at a NUL byte.
                let t = t.split(|&b| b == 0).next().unwrap_or_default();
                let parsed = TensorTypeOverride::parse(t).map_err(|e| {
                    crate::out::usage(format!("--tensor-type-file {path}:{}: {}", n + 1, usage_error(e)))
                })?;
                p.tensor_types.push(parsed.read_from(path.clone(), n + 1));
            }
        }
    }
    p.kv_overrides.extend(a.override_kv.iter().cloned());
    if let Some(path) = &a.imatrix {
        // The option named, and the path unless the error names it already.
        let mut m = Imatrix::open(path).map_err(|e| {
            let (e, shown) = (anyhow::Error::from(e), shown_path(&path));
            if format!("{e:#}").contains(&*shown) {
                e.context("--imatrix")
            } else {
                e.context(format!("--imatrix {shown}"))
            }
        })?;
        let bytes = |v: &[OsString]| -> Vec<Vec<u8>> { v.iter().map(|s| s.as_encoded_bytes().to_vec()).collect() };
        m.exclude(&bytes(&a.exclude_weights));
        m.include_only(&bytes(&a.include_weights));
        p.imatrix = Some(std::sync::Arc::new(m));
    }
    Ok(p)
}

/// Checks an `--exclude` glob when the arguments are parsed ([`NameGlobs`] gives the syntax), so
/// that an invalid one is a usage error (exit 2) naming the pattern, before any file is read. The
/// option's bytes are taken as given (on Unix, bytes that are not UTF-8 too: each matches itself).
pub(crate) fn parse_glob() -> impl clap::builder::TypedValueParser<Value = Vec<u8>> {
    use clap::builder::TypedValueParser;
    Escaped(clap::builder::OsStringValueParser::new().try_map(|s: OsString| {
        let bytes = s.as_encoded_bytes().to_vec();
        NameGlobs::new(&[&bytes]).map(|_| bytes).map_err(usage_error)
    }))
}

/// Parses a `--tensor-type` option when the arguments are parsed, so that a malformed one or a
/// bad regular expression is a usage error (exit 2), as a bad `--exclude` glob is. The option's
/// bytes are taken as given (on Unix, bytes that are not UTF-8 too), as llama-quantize takes them.
fn tensor_type_parser() -> impl clap::builder::TypedValueParser<Value = TensorTypeOverride> {
    use clap::builder::TypedValueParser;
    Escaped(
        clap::builder::OsStringValueParser::new()
            .try_map(|s: OsString| TensorTypeOverride::parse(s.as_encoded_bytes()).map_err(usage_error)),
    )
}

/// Parses an `--override-kv` option when the arguments are parsed (a usage error, exit 2); its
/// bytes are taken as given (on Unix, bytes that are not UTF-8 too), as llama-quantize takes them.
fn override_kv_parser() -> impl clap::builder::TypedValueParser<Value = KvOverride> {
    use clap::builder::TypedValueParser;
    Escaped(
        clap::builder::OsStringValueParser::new()
            .try_map(|s: OsString| KvOverride::parse_bytes(s.as_encoded_bytes()).map_err(usage_error)),
    )
}

/// The text of an option's refusal for clap's usage error (which names the option).
fn usage_error(e: gguf_serde::Error) -> String {
    match e.kind() {
        gguf_serde::ErrorKind::Quantize(gguf_serde::QuantizeError::Refused { reason, .. }) => reason.clone(),
        _ => e.to_string(),
    }
}

const MIB: f64 = 1024.0 * 1024.0;

/// The plan as a table. With an importance matrix in force, an `imatrix` column says for each
/// converted tensor whether it is quantized with the matrix's weights (`yes`), without (`no`: no
/// entry of that name), or cannot be (`wrong size`: the entry does not fit the tensor); kept
/// tensors show `-`. After the sizes, a line `left out: NAME (...)` for each tensor of `left_out`.
fn print_plan(tensors: &[TensorPlan], left_out: &[String], imatrix: Option<&Imatrix>) -> Result<(), OutputError> {
    let mut out = Out::stdout();
    let names: Vec<String> = tensors.iter().map(|t| GgufStr::from(&t.name).to_string()).collect();
    let w = names.iter().map(|n| n.chars().count()).max().unwrap_or(4).max(4);
    let column = if imatrix.is_some() { "  imatrix   " } else { "" };
    outln!(out, "{:<w$}  {:<20}  {:<7}  {:<7}{column}  rule", "name", "shape", "source", "target");
    let (mut before, mut after) = (0u64, 0u64);
    for (t, name) in tensors.iter().zip(&names) {
        let shape: Vec<String> = t.ne.shape().iter().map(u64::to_string).collect();
        let (src, dst) = (t.source.name(), t.target.name());
        let entry = match imatrix {
            None => String::new(),
            Some(_) if !t.converts() => format!("  {:<10}", "-"),
            Some(m) => format!(
                "  {:<10}",
                match m.weights_for(&t.name, t.ne.dims()) {
                    Ok(Some(_)) => "yes",
                    Ok(None) => "no",
                    Err(_) => "wrong size",
                }
            ),
        };
        outln!(out, "{name:<w$}  {:<20}  {src:<7}  {dst:<7}{entry}  {}", shape.join("x"), t.rule);
        before += t.source.nbytes(t.ne.dims()).unwrap_or(0);
        after += t.target.nbytes(t.ne.dims()).unwrap_or(0);
    }
    let n = tensors.iter().filter(|t| t.converts()).count();
    outln!(
        out,
        "{}: {n} converted, {} kept; tensor data {:.2} MiB -> {:.2} MiB",
        count(tensors.len(), "tensor"),
        tensors.len() - n,
        before as f64 / MIB,
        after as f64 / MIB
    );
    print_left_out(&mut out, left_out)?;
    out.finish()
}

/// A line `left out: NAME (...)` for each tensor of `left_out` ([`left_out`]), as both the
/// `--dry-run` plan and the real run's summary say it.
fn print_left_out(out: &mut Out, left_out: &[String]) -> Result<(), OutputError> {
    for name in left_out {
        outln!(
            *out,
            "left out: {name} (its name starts with a NUL byte, which ends a name in llama.cpp: llama-quantize \
             leaves it out)"
        );
    }
    Ok(())
}

/// The tensors of `files` that the plan leaves out, as llama-quantize leaves them out: those whose
/// name starts with a NUL byte (llama.cpp cuts a name at its first NUL, and takes the empty name
/// for a pruned layer's tensor), shown escaped (`\0abc.weight`), in file order.
fn left_out<S: gguf_serde::container::Source>(files: &[&Gguf<S>]) -> Vec<String> {
    let nul = |t: &gguf_serde::TensorInfo<'_>| t.name.as_bytes().first() == Some(&0);
    files.iter().flat_map(|f| f.tensors().filter(nul).map(|t| t.name.to_string())).collect()
}

impl QuantizeArgs {
    /// Records the command-line order of the `--tensor-type` and `--tensor-type-file` options
    /// from clap's matches of `gguf quantize`: llama-quantize (`tools/quantize/quantize.cpp`)
    /// appends each option's rule, or each rule of a file, to one list as it reads its arguments,
    /// and the first matching rule wins.
    pub fn set_rule_order(&mut self, m: &clap::ArgMatches) {
        let at = |id: &str, file: bool| -> Vec<(usize, bool)> {
            m.indices_of(id).map(|i| i.map(|i| (i, file)).collect()).unwrap_or_default()
        };
        let mut order = at("tensor_type", false);
        order.extend(at("tensor_type_file", true));
        order.sort_unstable();
        self.rule_order = order.into_iter().map(|(_, file)| file).collect();
    }
}

/// Quantizes a model as llama-quantize does.
pub fn run_quantize(a: &QuantizeArgs) -> anyhow::Result<ExitCode> {
    let Positional { input, output, ftype, threads } = positional(a)?;
    let mut p = params(a, ftype, threads)?;
    if let (Some(path), None) = (&a.imatrix, p.active_imatrix()) {
        // llama-quantize goes on as without a matrix; say so, since a type that needs one is
        // then refused as if none had been given.
        eprintln!(
            "warning: {}: no entry is left after --include-weights/--exclude-weights: quantizing without an \
             importance matrix",
            shown_path(&path)
        );
    }
    let src = Gguf::open(&input).map_err(|e| crate::out::unless_named(e, shown_path(&input).to_string(), &[&input]))?;
    // A shard of a split model (split.count > 1), or --keep-split: every shard is read.
    let split = src.get("split.count").and_then(|v| v.as_u64().or_else(|| v.as_i64().map(|n| n.max(0) as u64)));
    let model = match (split.is_some_and(|n| n > 1), a.keep_split) {
        (false, false) => None,
        _ => Some(
            ShardedGguf::open(&input)
                .map_err(|e| crate::out::unless_named(e, shown_path(&input).to_string(), &[&input]))?,
        ),
    };
    // llama.cpp's loader takes a split model from its first shard only.
    if let Some(no) = src.get("split.no").and_then(|v| v.as_u64()).filter(|&n| n > 0 && split.is_some_and(|c| c > 1)) {
        let first = model.as_ref().and_then(|m| m.shard_paths().next().map(PathBuf::from)).unwrap_or_default();
        bail!(
            "{}: illegal split file idx: {no} (shard {} of the split, split.no counting from 0): the model must be \
             given by its first shard ({}), as llama-quantize requires",
            shown_path(&input),
            no + 1,
            shown_path(&first)
        );
    }
    let name = if p.only_copy { "COPY" } else { p.ftype.name() };
    // llama-quantize's default output: IN's folder/ggml-model-TYPE.gguf; with --keep-split the
    // prefix IN's folder/ggml-model-TYPE, and OUT's final .gguf is dropped.
    let output = match (output, a.keep_split) {
        (Some(o), false) => o,
        (Some(o), true) => keep_split_prefix(o),
        (None, false) => input.with_file_name(format!("ggml-model-{name}.gguf")),
        (None, true) => input.with_file_name(format!("ggml-model-{name}")),
    };
    let shards: Option<Vec<(PathBuf, usize)>> = match (&model, a.keep_split) {
        (Some(m), true) => Some(keep_split_paths(m, &output).with_context(|| shown_path(&input).to_string())?),
        _ => None,
    };
    let files: Vec<_> = match &model {
        Some(m) => (0..m.shard_count()).filter_map(|i| m.shard(i)).collect(),
        None => vec![&src],
    };
    let left = left_out(&files);
    if a.dry_run {
        let tensors = match &model {
            Some(m) => plan_file_type_sharded(m, &p),
            None => plan_file_type(&src, &p),
        }
        .with_context(|| shown_path(&input).to_string())?;
        print_plan(&tensors, &left, p.active_imatrix())?;
        if let Some(shards) = &shards {
            let mut out = Out::stdout();
            outln!(out, "--keep-split: {}", count(shards.len(), "shard"));
            for (path, n) in shards {
                outln!(out, "{}: {}", shown_path(&path), count(*n, "tensor"));
            }
            out.finish()?;
        }
        // The plan is printed either way; the status says whether the real run would go through.
        let meta = model.as_ref().and_then(|m| m.shard(0));
        let header = match meta {
            Some(f) => check_header(f, &p, &tensors),
            None => check_header(&src, &p, &tensors),
        };
        check_plan(&tensors, p.active_imatrix())
            .and(header)
            .map_err(|e| imatrix_hint(e, a))
            .with_context(|| format!("{}: the real run would fail", shown_path(&input)))?;
        return Ok(ExitCode::SUCCESS);
    }
    let outputs: Vec<PathBuf> = match &shards {
        Some(s) => s.iter().map(|(p, _)| p.clone()).collect(),
        None => vec![output.clone()],
    };
    let inputs: Vec<PathBuf> = match &model {
        Some(m) => m.shard_paths().map(PathBuf::from).collect(),
        None => vec![input.clone()],
    };
    let set = match &shards {
        Some(s) => Shards::Of { prefix: &output, count: u16::try_from(s.len()).unwrap_or(u16::MAX) },
        None => Shards::No,
    };
    p.if_exists =
        Outputs { files: &outputs, shards: set, inputs: &inputs, reads: Reads::Model, force: a.force }.check()?;
    let bar = progress_bar(a.quiet);
    let report_progress = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let report = match &model {
        Some(m) => requantize_sharded(m, &output, &p, Some(&report_progress)),
        None => requantize(&src, &output, &p, Some(&report_progress)),
    };
    // What was written: the file, or (listed above it) the shards.
    let shown = match outputs.as_slice() {
        [one] => shown_path(&one).to_string(),
        many => format!("{} shards", many.len()),
    };
    // A refusal of the model (its plan, its keys, an importance matrix it needs) is about the
    // input, as the dry run says; the rest (I/O, the writer's errors) about the output.
    let report = report.map_err(|e| match e.as_quantize() {
        Some(_) => imatrix_hint(e, a).context(shown_path(&input).into_owned()),
        None => crate::out::writing(imatrix_hint(e, a), &outputs),
    })?;
    bar.finish_and_clear();
    let mut out = Out::stdout();
    if a.keep_split {
        for path in &report.paths {
            outln!(out, "{}", shown_path(&path));
        }
    }
    outln!(
        out,
        "{shown}: {name}, {} converted, {} kept; tensor data {} -> {} bytes",
        count(report.converted.len(), "tensor"),
        report.kept.len(),
        report.bytes_in,
        report.bytes_out
    );
    print_left_out(&mut out, &left)?;
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// A refusal for want of an importance matrix, with what to do about it: give one, or keep some
/// of its entries when `--include-weights`/`--exclude-weights` left none.
fn imatrix_hint(e: gguf_serde::Error, a: &QuantizeArgs) -> anyhow::Error {
    if !matches!(e.as_quantize(), Some(gguf_serde::QuantizeError::ImatrixRequired { .. })) {
        return e.into();
    }
    let hint = match &a.imatrix {
        None => "give one with --imatrix".to_string(),
        Some(path) => format!(
            "--include-weights/--exclude-weights left no entry of {}; keep the entries of the tensors that need them",
            shown_path(&path)
        ),
    };
    anyhow::Error::new(e).context(hint)
}

pub(crate) fn progress_bar(quiet: bool) -> ProgressBar {
    let bar = if quiet { ProgressBar::hidden() } else { ProgressBar::new(0) };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// Dequantizes a model to a float type.
pub fn run_dequantize(a: &DequantizeArgs) -> anyhow::Result<ExitCode> {
    if !matches!(a.target, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16) {
        return Err(crate::out::usage(format!("dequantize converts to F32, F16 or BF16, not {}", a.target)));
    }
    let src =
        Gguf::open(&a.input).map_err(|e| crate::out::unless_named(e, shown_path(&a.input).to_string(), &[&a.input]))?;
    // One file is read: a shard of a split model would give an orphan shard under a plain name.
    if let Some(n) = src.get("split.count").and_then(|v| v.as_u64()).filter(|&n| n > 1) {
        let no = src.get("split.no").and_then(|v| v.as_u64()).unwrap_or(0);
        bail!(
            "{}: shard {} of a model split into {n} files: dequantize reads one file; merge the shards first \
             (gguf merge {} MERGED.gguf)",
            shown_path(&a.input),
            no + 1,
            shown_path(&a.input)
        );
    }
    let if_exists =
        Outputs::one(std::slice::from_ref(&a.output), std::slice::from_ref(&a.input), Reads::Model, a.force).check()?;
    let bar = progress_bar(a.quiet);
    let report_progress = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let mut opts = DequantizeOptions::new(a.target);
    opts.exclude = a.exclude.clone();
    opts.progress = Some(&report_progress);
    opts.if_exists = if_exists;
    let run = || {
        dequantize(&src, &a.output, &opts).map_err(|e| crate::out::writing(e.into(), std::slice::from_ref(&a.output)))
    };
    let report = match a.threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(n))
            .build()
            .with_context(|| format!("cannot start {}", count(n, "thread")))?
            .install(run)?,
        None => run()?,
    };
    bar.finish_and_clear();
    let mut out = Out::stdout();
    outln!(
        out,
        "{}: {} converted to {}, {} kept; tensor data {} -> {} bytes",
        shown_path(&a.output),
        count(report.converted.len(), "tensor"),
        a.target,
        report.kept.len(),
        report.bytes_in,
        report.bytes_out
    );
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}
