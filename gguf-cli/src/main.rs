//! `gguf`: inspect, validate, edit, split, quantize and convert GGUF files.
//!
//! One file per command or group of commands (`inspect.rs`, `validate.rs`, `diff.rs`, `edit.rs`
//! for `set`/`rm`/`rename`, `hash.rs`, `show.rs`, `export.rs` for `export`/`import`, `split.rs` for `split`/`merge`, `quantize.rs` for
//! `quantize`/`dequantize`, `convert.rs`, `remote.rs` for `hf://` and URLs), over three shared
//! modules that every command uses:
//!
//! - `outputs.rs`: the one policy of what a writing command may replace (an existing file without
//!   `--force`, a folder, the input, a shard set). A new command that writes a file describes its
//!   outputs there and calls `Outputs::check` before writing;
//! - `out.rs`: standard output through one writer (never `println!`), and the error texts that
//!   name a path once;
//! - `signals.rs`: an interrupt removes the temporary files of writes in progress;
//! - `names.rs`: how a key or tensor name is taken from the command line (the escaped form the
//!   outputs show, or raw bytes).
//!
//! Keys and tensor names are shown everywhere as `GgufStr`'s `Display` shows them (its one
//! reversible escaped form), and taken back through `names.rs`.
//!
//! A new command: its arguments and `run` in a file of its own, a variant of `Command` below, and
//! a row in the README's command table.

mod convert;
mod diff;
mod edit;
mod export;
mod hash;
mod inspect;
mod names;
mod out;
mod outputs;
mod quantize;
mod remote;
mod show;
mod signals;
mod split;
mod validate;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::out::{warn, OutputError};

#[derive(Parser)]
#[command(
    name = "gguf",
    version,
    about = "Inspect, validate and edit GGUF files (llama.cpp / ggml models)",
    long_about = "Inspect, validate and edit GGUF files (llama.cpp / ggml models).\n\n\
        Exit status: 0 on success, 1 on an error (a bad file, a refused edit; for `validate`, an \
        invalid file; for `diff`, differences), 2 on a usage error (an unknown option, a missing \
        argument, an invalid option value such as a bad --exclude glob or --tensor-type pattern: \
        checked before any file is read, the message names the option) or when standard output \
        cannot be written (and for `diff`, any trouble). A closed pipe (`gguf inspect FILE | head -1`) is not an error: the \
        command stops quietly (for `diff`, with the status of the differences it had found). \
        Interrupted by SIGINT, SIGTERM or SIGHUP, a command that writes a file removes its \
        temporary files and exits 130, 143 or 129.\n\n\
        Names: keys and tensor names are shown (inspect, diff, show, validate, quantize --dry-run, \
        and their --json) in one reversible escaped form: the text as it is, but `\\\\` for a \
        backslash, `\\n`, `\\t`, `\\r`, `\\0` and `\\u{1b}` for control and invisible characters \
        (Rust's escape_debug), and `\\xNN` for each byte that is not UTF-8 (which ggml accepts), so \
        that the text `\\xff` (shown `\\\\xff`) and the byte FF (shown `\\xff`) never print alike. \
        A command that takes a key or tensor name (set, rm, rename, show) takes it in that form, as \
        inspect shows it; on Unix an argument that is not UTF-8 is taken as its bytes (so are \
        `set` VALUE, with --escaped in the escaped form, and `--exclude` globs); an option value \
        that must be text (a number, a type) and is not UTF-8 is refused, naming the option and \
        showing the value in the escaped form, as are an unknown option or argument that is not \
        UTF-8. Every path and option value in a message is shown in the same form (a printable \
        UTF-8 path without a backslash as it is; in validate --json and inspect --json, a path is \
        that escaped text). In text, \
        string values are shown quoted in the same form (with `\\\"` for a quote); in JSON a string \
        value that is UTF-8 is the JSON string itself, and one that is not is the object \
        {\"escaped\": TEXT}, TEXT in the escaped form."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
// The doc comments are clap's help text: `[OUT]` is usage notation there, not a link.
#[allow(rustdoc::broken_intra_doc_links)]
enum Command {
    /// Describe a file or a split model: header, parameter count, every key/value pair with its
    /// type, and a table of tensors (name, dtype, canonical shape outermost first, absolute data
    /// offset, bytes).
    ///
    /// Sizes and offsets are in bytes. A shard of a split model (`NAME-00001-of-0000N.gguf`, on
    /// disk or remote; any shard will do) describes the whole model: the first shard's header and
    /// keys without the `split.*` keys, a table of the shards (file, size, data offset, tensor
    /// count), every shard's tensors with the shard that holds each, and the parameters and file
    /// size of all shards together; --one-file describes the shard alone.
    ///
    /// Exit status: 0; 1 if the file or a shard cannot be read (a missing shard, a shard of
    /// another split, an HTTP error: the message names the shard) or is not valid GGUF; 2 on a
    /// usage error.
    Inspect(inspect::Args),
    /// Validate files: exit 0 if every file is valid, 1 otherwise, printing the error per file.
    /// An error names the absolute byte offset in the file where it was found; a warning about
    /// the bytes of a key, a string (a value, an element of an array) or a tensor name (not
    /// UTF-8, a NUL byte), the absolute offset of that string's first byte, after its 8-byte
    /// length.
    Validate(validate::Args),
    /// Split a model into shards NAME-00001-of-0000N.gguf, ... in llama-gguf-split's layout
    /// (the first shard has all the metadata; every shard has split.no, split.count and
    /// split.tensors.count). Writes nothing unless every shard is complete. Keys, strings and
    /// tensor names are kept whole after a NUL byte, where llama-gguf-split cuts them (see the
    /// README, "NUL bytes").
    Split(split::SplitArgs),
    /// Merge the shards of a split model (give any shard) into one file without the split keys:
    /// byte-identical to the file that `gguf split` split.
    Merge(split::MergeArgs),
    /// Set a metadata key (rewrites the file safely: temporary file, then rename).
    Set(edit::SetArgs),
    /// Remove a metadata key (rewrites the file safely).
    Rm(edit::RmArgs),
    /// Rename a metadata key, keeping its place and value (rewrites the file safely).
    Rename(edit::RenameArgs),
    /// Show the keys and tensors that differ between two files (only in A: -, only in B: +,
    /// changed: ~). Values are compared as decoded (floats bit for bit) and tensor data byte for
    /// byte after swapping to one byte order, so a big-endian file and its little-endian copy
    /// have no differences. Exit 0 if none, 1 if any (also when the output pipe closes early),
    /// 2 on any trouble (an unreadable file, a failed write to standard output).
    Diff(diff::Args),
    /// Quantize a model as llama.cpp's llama-quantize does: IN [OUT] TYPE with a llama.cpp file
    /// type (Q4_K_M, Q8_0, ...); each tensor's type chosen by llama-quantize's rules (--dry-run
    /// shows them), the output laid out as llama-quantize writes it, with ggml's reference
    /// quantizers. As in llama-quantize, which takes them as C strings, a tensor name, a key and a
    /// string end at their first NUL byte: a name holding one is planned, matched and written cut
    /// (`x.weight\0jk` as `x.weight`; one that starts with a NUL is left out), and two names
    /// equal once cut are refused.
    Quantize(quantize::QuantizeArgs),
    /// Convert a model's quantized tensors to F32 (or F16, BF16).
    Dequantize(quantize::DequantizeArgs),
    /// Convert a Hugging Face checkpoint (config.json + safetensors) to GGUF as llama.cpp's
    /// convert_hf_to_gguf.py does, for LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM,
    /// Qwen3ForCausalLM, Gemma2ForCausalLM, Gemma3ForCausalLM, Phi3ForCausalLM, Olmo2ForCausalLM,
    /// SmolLM3ForCausalLM, GraniteForCausalLM, Glm4ForCausalLM and the mixtures of experts
    /// MixtralForCausalLM, Qwen2MoeForCausalLM, Qwen3MoeForCausalLM, DeepseekV2ForCausalLM,
    /// DeepseekV3ForCausalLM and GptOssForCausalLM (experts stacked a chunk of rows at a time;
    /// FP8 block-scaled weights dequantized, gpt-oss's MXFP4 experts repacked): config.json read as transformers reads it, tensor names, transforms,
    /// types, key order, general.* keys, and the tokenizer (SentencePiece tokenizer.model, a
    /// byte-fallback tokenizer.json as gguf-py's LlamaHfVocab, or GPT-2 BPE tokenizer.json with
    /// the pre-tokenizer named as the reference names it). An unknown
    /// architecture, an unknown or missing tensor, a tokenizer of a kind not converted or a BPE
    /// pre-tokenizer the reference does not know is refused before anything is written. With
    /// --base BASE_DIR, a PEFT LoRA adapter (adapter_config.json + adapter_model.safetensors) of
    /// such a model, as convert_lora_to_gguf.py converts it.
    Convert(convert::ConvertArgs),
    /// Write a model as a safetensors file: every tensor under its GGUF name with its canonical
    /// shape (outermost first), plain types kept and quantized ones dequantized to F32 (or
    /// --dtype), the GGUF metadata as JSON text in the header's __metadata__.
    ///
    /// The __metadata__ keys: `gguf.version`, `gguf.metadata` ([{"key", "type", "value"}] in file
    /// order, every array whole, non-finite floats as "nan", "inf", "-inf"), `gguf.tensors`
    /// ([{"name", "type"}], each tensor's GGUF type) and `format`: `pt`. Streamed a chunk at a
    /// time (memory stays flat), written to a temporary file renamed into place; `gguf import`
    /// reads it back.
    ///
    /// Exit status: 0; 1 if INPUT cannot be read or is a shard of a split model, or OUTPUT exists
    /// (without --force) or cannot be written; 2 on a usage error (a bad --exclude glob).
    Export(export::ExportArgs),
    /// Write a safetensors file as GGUF: the metadata and tensor order that `gguf export` stored
    /// (a file it exported without quantized tensors comes back byte-identical), else the tensors
    /// alone in data order; F32, F16, BF16, F64, I8, I16, I32 and I64 tensors (other types,
    /// U8 and U32 among them, are refused: GGUF has no type for them).
    ///
    /// Exit status: 0; 1 if INPUT cannot be read, is not safetensors or has a tensor of another
    /// type (F8_E4M3, …), or OUTPUT exists (without --force) or cannot be written; 2 on a usage
    /// error.
    Import(export::ImportArgs),
    /// Print a tensor's values dequantized to F32: name, dtype, canonical shape, element count,
    /// min, max and mean of the finite values, NaN and infinity counts, and its first rows (a row
    /// is the innermost dimension), as text or one JSON object.
    ///
    /// Dequantized as gguf-py's gguf.quants.dequantize does (bit-identical). Example: `gguf show
    /// model.gguf blk.0.attn_q.weight --rows 2 --items 4`.
    ///
    /// Exit status: 0; 1 if FILE cannot be read or has no tensor TENSOR (the message names it);
    /// 2 on a usage error.
    Show(show::Args),
    /// Hash every tensor and the whole model (XXH64, SHA-1, SHA-256, UUIDv5) as llama.cpp's
    /// llama-gguf-hash prints them (`TYPE  HASH  FILE:TENSOR`, then `TYPE  HASH  FILE`), or check
    /// the file against such a manifest with -c (exit 1 naming each tensor that differs or is
    /// missing).
    ///
    /// A tensor's hash is that of its stored bytes (padding left out); the whole model's, of every
    /// tensor's bytes in file order. Hashes are lowercase hex. Example: `gguf hash --sha256
    /// model.gguf > model.manifest`, later `gguf hash -c model.manifest model.gguf`. Tensors are
    /// hashed in parallel; a progress bar shows on a terminal (on standard error).
    ///
    /// Exit status: 0 (with -c: every hash matches); 1 if a hash differs or a tensor is missing
    /// or unlisted (with -c), or FILE or MANIFEST cannot be read; 2 on a usage error.
    Hash(hash::Args),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish): `gguf completions
    /// bash > /etc/bash_completion.d/gguf`, `gguf completions zsh > ~/.zfunc/_gguf`, `gguf
    /// completions fish > ~/.config/fish/completions/gguf.fish`, `gguf completions powershell >>
    /// $PROFILE` (PowerShell), `gguf completions elvish >> ~/.config/elvish/rc.elv`.
    Completions {
        /// The shell.
        #[arg(value_parser = names::Text(clap::builder::EnumValueParser::<clap_complete::Shell>::new()))]
        shell: clap_complete::Shell,
    },
}

/// Writes the completion script of `shell` to standard output.
fn completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    // clap_complete panics on a write error: generate into memory, then write.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "gguf", &mut script);
    let mut out = out::Out::stdout();
    out.bytes(&script)?;
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// clap's refusal `e` of the command line (an unknown option or subcommand, an argument too many)
/// with each argument shown escaped ([`names::shown_bytes`]: `\xNN` for each byte that is not
/// UTF-8, `\\` for a backslash, `\n`, `\u{1b}` for control characters) where clap shows it
/// lossily (U+FFFD) or raw.
fn escape_clap_error(mut e: clap::Error) -> clap::Error {
    use clap::builder::StyledStr;
    use clap::error::ContextValue;
    let odd: Vec<(String, String)> = std::env::args_os()
        .skip(1)
        .map(|a| (a.to_string_lossy().into_owned(), names::shown_bytes(a.as_encoded_bytes())))
        .filter(|(lossy, shown)| lossy != shown)
        .collect();
    if odd.is_empty() {
        return e;
    }
    let escape = |text: &str| odd.iter().fold(text.to_owned(), |t, (lossy, shown)| t.replace(lossy.as_str(), shown));
    let odd_in = |t: &str| odd.iter().any(|(lossy, _)| t.contains(lossy.as_str()));
    let changed: Vec<_> = e
        .context()
        .filter_map(|(kind, value)| match value {
            ContextValue::String(t) if odd_in(t) => Some((kind, ContextValue::String(escape(t)))),
            ContextValue::Strings(v) if v.iter().any(|t| odd_in(t)) => {
                Some((kind, ContextValue::Strings(v.iter().map(|t| escape(t)).collect())))
            }
            ContextValue::StyledStr(t) if odd_in(&t.to_string()) => {
                Some((kind, ContextValue::StyledStr(StyledStr::from(escape(&t.to_string())))))
            }
            ContextValue::StyledStrs(v) if v.iter().any(|t| odd_in(&t.to_string())) => {
                let v = v.iter().map(|t| StyledStr::from(escape(&t.to_string()))).collect();
                Some((kind, ContextValue::StyledStrs(v)))
            }
            _ => None,
        })
        .collect();
    for (kind, value) in changed {
        e.insert(kind, value);
    }
    e
}

fn main() -> ExitCode {
    let matches = Cli::command().try_get_matches().unwrap_or_else(|e| escape_clap_error(e).exit());
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut Cli::command()).exit());
    if let (Command::Quantize(args), Some(m)) = (&mut cli.command, matches.subcommand_matches("quantize")) {
        args.set_rule_order(m);
    }
    signals::install();
    let result = match cli.command {
        Command::Inspect(args) => inspect::run(&args),
        Command::Validate(args) => validate::run(&args),
        Command::Split(args) => split::run_split(&args),
        Command::Merge(args) => split::run_merge(&args),
        Command::Set(args) => edit::run_set(&args),
        Command::Rm(args) => edit::run_rm(&args),
        Command::Rename(args) => edit::run_rename(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Quantize(args) => quantize::run_quantize(&args),
        Command::Dequantize(args) => quantize::run_dequantize(&args),
        Command::Convert(args) => convert::run(&args),
        Command::Hash(args) => hash::run(&args),
        Command::Show(args) => show::run(&args),
        Command::Export(args) => export::run_export(&args),
        Command::Import(args) => export::run_import(&args),
        Command::Completions { shell } => completions(shell),
    };
    // A write that failed because a signal's handler removed its temporary file: exit as the signal.
    signals::wait_if_interrupted();
    match result {
        Ok(code) => code,
        Err(e) if e.chain().any(|c| c.is::<out::Usage>()) => {
            warn(format_args!("error: {e:#}"));
            ExitCode::from(2)
        }
        Err(e) => match e.chain().find_map(|c| c.downcast_ref::<OutputError>()) {
            // `gguf inspect FILE | head`: a closed pipe is not an error.
            Some(o) if o.is_closed_pipe() => ExitCode::SUCCESS,
            Some(o) => {
                warn(format_args!("error: {o}"));
                ExitCode::from(2)
            }
            None => {
                // The chain: the CLI's context (a path), then the error; each error prints its own
                // cause or returns it as `source`, never both, so each text appears once.
                warn(format_args!("error: {e:#}"));
                ExitCode::FAILURE
            }
        },
    }
}
