//! `gguf convert`: a Hugging Face checkpoint to GGUF, as llama.cpp's `convert_hf_to_gguf.py`
//! converts it (`gguf_serde::convert`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::Parser;
use gguf_serde::convert::general::{GeneralError, OVERRIDE_SOURCE};
use gguf_serde::convert::lora::{self, Adapter};
use gguf_serde::convert::{plan, write_plan, Checkpoint, ConvertError, ConvertOptions, OutType, Plan};

use crate::out::{outln, Out};
use crate::outputs::{Outputs, Reads, Shards};
use crate::split::parse_size;
use gguf_serde::format::shown_path;

/// `gguf convert MODEL_DIR [-o OUT] [--outtype T] [--split-max-size N]`, or
/// `gguf convert ADAPTER_DIR --base BASE_DIR [-o OUT] [--outtype T]`.
#[derive(Parser)]
pub struct ConvertArgs {
    /// The checkpoint folder: config.json and model*.safetensors (with
    /// model.safetensors.index.json when sharded); or, with --base, a PEFT LoRA adapter folder:
    /// adapter_config.json and adapter_model.safetensors.
    dir: PathBuf,
    /// The base model folder of a LoRA adapter (its config.json and its weights' headers are read):
    /// converts the adapter in the first folder as llama.cpp's convert_lora_to_gguf.py does, to
    /// a GGUF adapter llama.cpp applies to the base model's GGUF (`llama-cli --lora`). The default
    /// output is in the adapter folder, `{name}-{TYPE}-LoRA.gguf`; the default type is f32.
    #[arg(long, value_name = "BASE_DIR")]
    base: Option<PathBuf>,
    /// The GGUF file to write (default: in MODEL_DIR, named as convert_hf_to_gguf.py names it,
    /// `{name}-{size label}-{TYPE}.gguf`). `{ftype}`/`{outtype}` and `{FTYPE}`/`{OUTTYPE}` in the
    /// name are replaced by the output type in lower or upper case. A default name that would not
    /// be one file name (a `/` in the finetune, version or size label, or over 255 bytes) is
    /// refused before converting: give OUT then.
    #[arg(short, long, value_name = "OUT")]
    out: Option<PathBuf>,
    /// Type of the matrices: f32, f16, bf16, q8_0, or auto (bf16 or f16 as the checkpoint's
    /// first matrix is, f16 if none). 1-D tensors and norms are F32; Q8_0 falls back to F16 for
    /// rows that are not whole blocks of 32. Default: auto for a model; f32 for an adapter (whose
    /// reference refuses auto, as this does).
    #[arg(long, ignore_case = true, value_parser = crate::names::Text(clap::builder::PossibleValuesParser::new(["f32", "f16", "bf16", "q8_0", "auto"])))]
    outtype: Option<String>,
    /// Write shards of at most this many bytes of tensor data (K/M/G powers of 1000, Ki/Mi/Gi),
    /// named OUT without .gguf + -00001-of-0000N.gguf, in llama-gguf-split's layout.
    #[arg(long, value_name = "SIZE", value_parser = crate::names::Text(parse_size))]
    split_max_size: Option<u64>,
    /// Write no tokenizer keys (ours; the reference always converts the tokenizer). llama.cpp
    /// does not load such a file until the tokenizer keys are added: for a checkpoint whose
    /// tokenizer is converted otherwise. Without it, a checkpoint without a tokenizer the
    /// architecture reads (SentencePiece's tokenizer.model, or a BPE tokenizer.json) is refused.
    #[arg(long)]
    no_vocab: bool,
    /// `general.name` (the reference's `--model-name`), instead of the one found in the model
    /// card, `config.json` or the folder's name. The default output file takes it only when no
    /// `general.basename` was found, as the reference names files. Not empty.
    #[arg(long, value_name = "NAME", value_parser = crate::names::Text(non_blank))]
    model_name: Option<String>,
    /// A JSON file of `general.*` keys that replace what the checkpoint's files give (the
    /// reference's `--metadata`): `general.name`, `general.author`, `general.version`,
    /// `general.basename`, `general.finetune`, `general.size_label`, `general.license.name`,
    /// `general.url`, `general.sampling.temp`, ..., `general.base_models` and `general.datasets`
    /// (arrays of objects), `general.tags` and `general.languages` (arrays of strings); `null`
    /// removes one. Other keys are ignored with a warning, as the reference ignores them.
    /// `--model-name` wins over its `general.name`. Unlike the reference, a missing file is an
    /// error rather than ignored.
    #[arg(long, value_name = "FILE")]
    metadata: Option<PathBuf>,
    /// Write the matrices dequantized from FP8 (a checkpoint with `quantization_config.quant_method`
    /// "fp8": each F8_E4M3/F8_E5M2 weight with its `_scale_inv`) as Q8_0 instead of the output
    /// type (F16 where a row is not whole blocks of 32), as the reference's `--fp8-as-q8`.
    #[arg(long)]
    fp8_as_q8: bool,
    /// Replace an existing output file.
    #[arg(long)]
    force: bool,
    /// No progress bar (notes and warnings are still printed, on stderr).
    #[arg(short, long)]
    quiet: bool,
}

/// A `--model-name` with something to write in `general.name` and a file name.
fn non_blank(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("the model name is empty".into());
    }
    Ok(s.to_owned())
}

/// `gguf_serde`'s `fill_templated_filename`: the output type in a file name template.
fn fill_template(name: &str, outtype: OutType) -> String {
    let (lo, up) = (outtype.label().to_lowercase(), outtype.label().to_uppercase());
    name.replace("{ftype}", &lo).replace("{outtype}", &lo).replace("{FTYPE}", &up).replace("{OUTTYPE}", &up)
}

/// Runs `gguf convert`.
pub fn run(args: &ConvertArgs) -> anyhow::Result<ExitCode> {
    if let Some(base) = &args.base {
        return run_adapter(args, base);
    }
    if lora::is_adapter(&args.dir) {
        bail!(
            "{}: a LoRA adapter (it has {}): give its base model's folder with --base BASE_DIR",
            shown_path(&args.dir),
            lora::ADAPTER_CONFIG
        );
    }
    let outtype = parse_outtype(args, "auto")?;
    let ckpt = Checkpoint::open(&args.dir).map_err(|e| in_dir(e, &args.dir))?;
    let (card, overrides, bar) = side_inputs(args)?;
    let inc = |n: u64| bar.inc(n);
    let mut opts = options(args, outtype, (&card, &overrides), &inc);
    // Everything is checked here, before a file is created.
    let plan = plan(&ckpt, &opts).map_err(|e| match (e, &args.metadata) {
        // A value of the --metadata file: name that file, not the checkpoint.
        (ConvertError::General(GeneralError::WrongType { source_file, field, expected, found, .. }), Some(m))
            if source_file == OVERRIDE_SOURCE =>
        {
            anyhow::anyhow!("--metadata {}: `{field}` is {found}, expected {expected}", shown_path(&m))
        }
        (e, _) => in_dir(e, &args.dir),
    })?;
    for (name, format) in plan.unscaled_fp8() {
        let format = match format {
            gguf_serde::convert::quant::Fp8::E4M3 => "F8_E4M3",
            gguf_serde::convert::quant::Fp8::E5M2 => "F8_E5M2",
        };
        eprintln!(
            "note: {name} is {format} with no {name}_scale_inv beside it: widened to F32 unscaled (scale 1), as convert_hf_to_gguf.py does"
        );
    }
    let out = match &args.out {
        Some(o) => {
            let name = o.file_name().and_then(|n| n.to_str()).map(|n| fill_template(n, plan.outtype));
            match name {
                Some(n) => o.with_file_name(n),
                None => o.clone(),
            }
        }
        // The default name; one too long for a file name is fixed by naming the output.
        None => args.dir.join(plan.default_file_name().map_err(|e| match e {
            ConvertError::FileNameTooLong { .. } => anyhow::anyhow!("{e}; name the output file with -o"),
            e => anyhow::Error::new(e),
        })?),
    };
    // An existing folder: the default name inside it, as the reference writes it. A name ending
    // in a separator means a folder too: one that does not exist is refused, not taken as a file.
    if let Some(o) = &args.out {
        if o.as_os_str().to_string_lossy().ends_with(std::path::MAIN_SEPARATOR) && !o.is_dir() {
            bail!("{}: no such folder", shown_path(&o));
        }
    }
    let out = if out.is_dir() { out.join(plan.default_file_name()?) } else { out };
    let prefix = out.with_extension("");
    // Unsplit, the file OUT; split, shards of OUT without its extension, as `write_plan` names them.
    let (files, shards) = match args.split_max_size {
        None => (vec![out.clone()], Shards::No),
        Some(_) => (Vec::new(), Shards::Unknown { prefix: &prefix }),
    };
    let inputs = inputs(&ckpt);
    opts.if_exists =
        Outputs { files: &files, shards, inputs: &inputs, reads: Reads::Checkpoint, force: args.force }.check()?;
    write_reporting(&plan, &out, &opts, &bar, "")
}

/// The model card, the `--metadata` override and the progress bar, which a conversion's options
/// borrow ([`options`]).
fn side_inputs(
    args: &ConvertArgs,
) -> anyhow::Result<(Option<serde_json::Value>, Option<serde_json::Value>, indicatif::ProgressBar)> {
    let card = model_card(&args.dir)?;
    let overrides = args.metadata.as_deref().map(metadata_override).transpose()?;
    Ok((card, overrides, crate::quantize::progress_bar(args.quiet)))
}

/// The options of the conversion `args` asks for: `outtype`, the model card and `--metadata`
/// override of [`side_inputs`], progress reported to `progress`.
fn options<'a>(
    args: &'a ConvertArgs,
    outtype: OutType,
    (card, overrides): (&'a Option<serde_json::Value>, &'a Option<serde_json::Value>),
    progress: &'a (dyn Fn(u64) + Sync),
) -> ConvertOptions<'a> {
    ConvertOptions {
        progress: Some(progress),
        split_max_size: args.split_max_size,
        vocab: !args.no_vocab,
        name: args.model_name.as_deref(),
        model_card: card.as_ref(),
        metadata_override: overrides.as_ref(),
        fp8_as_q8: args.fp8_as_q8,
        ..ConvertOptions::new(outtype)
    }
}

/// Writes `plan` to `out` (its folder must exist), with the progress `bar`, and prints each file
/// written: `FILE: ARCH [KIND ]TYPE, N bytes`.
fn write_reporting(
    plan: &Plan<'_>,
    out: &Path,
    opts: &ConvertOptions<'_>,
    bar: &indicatif::ProgressBar,
    kind: &str,
) -> anyhow::Result<ExitCode> {
    check_parent(out)?;
    bar.set_length(plan.source_bytes());
    let report = write_plan(plan, out, opts)
        .map_err(|e| crate::out::writing(e.into(), std::slice::from_ref(&out.to_path_buf())))?;
    bar.finish_and_clear();
    let mut o = Out::stdout();
    for f in &report.files {
        let bytes = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        let bytes = crate::out::count(bytes, "byte");
        outln!(o, "{}: {} {kind}{}, {bytes}", shown_path(&f), plan.arch, plan.outtype.label());
    }
    o.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// `--outtype`, or `default` without it.
fn parse_outtype(args: &ConvertArgs, default: &str) -> anyhow::Result<OutType> {
    args.outtype.as_deref().unwrap_or(default).to_lowercase().parse().map_err(anyhow::Error::msg)
}

/// `gguf convert ADAPTER_DIR --base BASE_DIR`: a LoRA adapter ([`gguf_serde::convert::lora`]).
fn run_adapter(args: &ConvertArgs, base: &Path) -> anyhow::Result<ExitCode> {
    if args.split_max_size.is_some() {
        bail!("--split-max-size is not taken for an adapter (the reference writes one file)");
    }
    if args.no_vocab {
        bail!("--no-vocab is not taken for an adapter (an adapter has no tokenizer)");
    }
    if args.fp8_as_q8 {
        bail!("--fp8-as-q8 is not taken for an adapter (convert_lora_to_gguf.py has no such option)");
    }
    let outtype = parse_outtype(args, "f32")?;
    if !base.join("config.json").is_file() {
        bail!("--base {}: no config.json (the base model's folder is needed)", shown_path(&base));
    }
    let adapter = Adapter::open(&args.dir, base).map_err(|e| in_dir(e, &args.dir))?;
    // (no --split-max-size, --no-vocab or --fp8-as-q8: refused above)
    let (card, overrides, bar) = side_inputs(args)?;
    let inc = |n: u64| bar.inc(n);
    let mut opts = options(args, outtype, (&card, &overrides), &inc);
    let plan = lora::plan_adapter(&adapter, &opts).map_err(|e| in_dir(e, &args.dir))?;
    // Notes are printed with -q too: it hides the progress bar only.
    for name in adapter.base_layer_copies().map_err(|e| in_dir(e, &args.dir))? {
        eprintln!(
            "note: {name} (peft's copy of the adapted weight) is left out, as convert_lora_to_gguf.py leaves it out: llama.cpp applies the adapter to the base model's own weight"
        );
    }
    let default_name = || {
        lora::default_file_name(&plan).map_err(|e| match e {
            ConvertError::FileNameTooLong { .. } => anyhow::anyhow!("{e}; name the output file with -o"),
            e => anyhow::Error::new(e),
        })
    };
    let out = match &args.out {
        Some(o) => {
            if o.as_os_str().to_string_lossy().ends_with(std::path::MAIN_SEPARATOR) && !o.is_dir() {
                bail!("{}: no such folder", shown_path(&o));
            }
            if o.is_dir() {
                o.join(default_name()?)
            } else {
                let name = o.file_name().and_then(|n| n.to_str()).map(|n| fill_template(n, plan.outtype));
                name.map_or_else(|| o.clone(), |n| o.with_file_name(n))
            }
        }
        None => args.dir.join(default_name()?),
    };
    let inputs: Vec<PathBuf> = [lora::ADAPTER_WEIGHTS, lora::ADAPTER_CONFIG, "README.md"]
        .iter()
        .map(|n| args.dir.join(n))
        .chain(["config.json"].iter().map(|n| base.join(n)))
        .collect();
    let files = vec![out.clone()];
    opts.if_exists =
        Outputs { files: &files, shards: Shards::No, inputs: &inputs, reads: Reads::Checkpoint, force: args.force }
            .check()?;
    write_reporting(&plan, &out, &opts, &bar, "LoRA adapter ")
}

/// `e` with the checkpoint folder `dir` as context, unless its message names a file or folder
/// itself ([`ConvertError::path`]: the folder, or a file in it), so that the folder is printed
/// once.
fn in_dir(e: ConvertError, dir: &Path) -> anyhow::Error {
    if matches!(e, ConvertError::UnsupportedTokenizer { .. }) {
        return anyhow::anyhow!("{e} (--no-vocab converts without the tokenizer, which llama.cpp then cannot load)");
    }
    if e.path().is_some() {
        e.into()
    } else {
        anyhow::Error::new(e).context(shown_path(&dir).to_string())
    }
}

/// The `--metadata` file: JSON, as the reference reads it (`Metadata.load_metadata_override`),
/// with a warning for each key it ignores.
fn metadata_override(path: &Path) -> anyhow::Result<serde_json::Value> {
    let bytes = std::fs::read(path).with_context(|| format!("--metadata {}", shown_path(&path)))?;
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).with_context(|| format!("--metadata {}: not JSON", shown_path(&path)))?;
    if !value.is_object() {
        bail!("--metadata {}: expected a JSON object of GGUF keys", shown_path(&path));
    }
    for key in gguf_serde::convert::general::ignored_override_keys(&value) {
        eprintln!(
            "warning: --metadata {}: `{key}` is not one of the keys a metadata file sets (see --help); ignored",
            shown_path(&path)
        );
    }
    Ok(value)
}

/// The front matter of `MODEL_DIR/README.md` (the model card), parsed from YAML as the reference
/// reads it (`Metadata.load_model_card`: [`gguf_serde::convert::general::front_matter`], then a
/// YAML parser), or `None` when there is no card or it has no front matter. A front matter that is
/// not YAML is an error naming the file, as in the reference. (YAML 1.2 here, 1.1 in the
/// reference's PyYAML: unquoted `yes`/`no`/`on`/`off` stay strings here.)
fn model_card(dir: &Path) -> anyhow::Result<Option<serde_json::Value>> {
    let path = dir.join("README.md");
    let Ok(text) = std::fs::read_to_string(&path) else { return Ok(None) };
    let Some(yaml) = gguf_serde::convert::general::front_matter(&text) else { return Ok(None) };
    let card: serde_json::Value = serde_norway::from_str(&yaml)
        .with_context(|| format!("{}: the front matter is not YAML", shown_path(&path)))?;
    // An empty front matter parses as null: no card, as the reference's `or {}`.
    Ok(Some(card).filter(|c| !c.is_null()))
}

/// The files of the checkpoint that no output may replace: the weight files, and the
/// configuration, tokenizer and model card files beside them.
fn inputs(ckpt: &Checkpoint) -> Vec<PathBuf> {
    const READ_BESIDE: [&str; 9] = [
        "config.json",
        "model.safetensors.index.json",
        "generation_config.json",
        "tokenizer.model",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "added_tokens.json",
        "README.md",
    ];
    let beside = READ_BESIDE.iter().map(|n| ckpt.dir.join(n));
    ckpt.files().map(Path::to_path_buf).chain(beside).collect()
}

fn check_parent(out: &Path) -> anyhow::Result<()> {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() && !p.is_dir() => bail!("{}: no such folder", shown_path(&p)),
        _ => Ok(()),
    }
}
