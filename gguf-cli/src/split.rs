//! `gguf split` and `gguf merge`
//!
//! Both write what `llama-gguf-split` writes: the same limit gives the same shards, byte for
//! byte, and either tool merges the other's shards (`tests/tests/interop/split_llama.rs` runs both).
//! Where we differ, on purpose:
//! - A first tensor larger than `--split-max-size`: `llama-gguf-split` exits with "one of splits
//!   have 0 tensors"; `gguf split` gives it a shard of its own, as both tools do for a large
//!   tensor anywhere else.
//! - `gguf merge` drops the split keys, so a split file merges back to the original byte for
//!   byte; `llama-gguf-split --merge` keeps them (`split.no = 0`, `split.tensors.count`,
//!   `split.count = 0`).
//! - Sizes: `llama-gguf-split` takes only a number with `M` or `G` (powers of 1000); `gguf split`
//!   also takes plain bytes, `K`, and `Ki`, `Mi`, `Gi` (powers of 1024).
//! - `gguf merge` refuses to replace an existing file unless `--force` (`llama-gguf-split` always
//!   refuses), and so does `gguf split` for an existing shard (`llama-gguf-split` replaces it);
//!   `--dry-run` prints our own plan format.
//! - A file with a `general.alignment` other than 32 (seen with 64): llama-gguf-split's first
//!   shard is shorter than ours and ggml's own reader refuses it ("failed to read tensor data
//!   binary blob"); ours keep the file's alignment, validate, and merge back to it byte for byte.
//!   The byte-for-byte agreement holds for files at the default alignment.
//! - A key, string or tensor name holding a NUL byte is kept whole; `llama-gguf-split` writes it
//!   cut at the NUL (it takes names as C strings), so the agreement also needs names and strings
//!   without NUL bytes.

use std::path::PathBuf;
use std::process::ExitCode;

use gguf_serde::container::{shard_path, ShardedGguf};
use gguf_serde::ops::split::{merge_file, plan_split, split_file, SplitBy, SplitOptions};
use gguf_serde::Gguf;

use crate::out::{outln, Out};
use crate::outputs::{Outputs, Reads, Shards};
use gguf_serde::format::shown_path;

/// Arguments of `gguf split`.
#[derive(clap::Args)]
pub struct SplitArgs {
    /// The GGUF file to split.
    input: PathBuf,
    /// Output prefix: shards are written as PREFIX-00001-of-0000N.gguf, ...
    prefix: PathBuf,
    /// At most N tensors per shard (the default, with N = 128, as llama-gguf-split).
    #[arg(long, value_name = "N", conflicts_with = "split_max_size",
        value_parser = crate::names::Text(clap::builder::RangedU64ValueParser::<usize>::new().range(1..)))]
    split_max_tensors: Option<usize>,
    /// At most SIZE bytes of tensor data per shard, counted as llama-gguf-split counts them
    /// (tensors padded to 32 bytes, metadata not counted). SIZE is bytes, or a number with
    /// K, M or G (powers of 1000; llama-gguf-split takes only M and G) or Ki, Mi, Gi (powers of
    /// 1024). A tensor larger than SIZE gets a shard of its own (llama-gguf-split refuses one
    /// that comes first).
    #[arg(long, value_name = "SIZE", value_parser = crate::names::Text(parse_size))]
    split_max_size: Option<u64>,
    /// The first shard holds the metadata only, no tensors.
    #[arg(long)]
    no_tensor_first_split: bool,
    /// Print the plan (tensors and bytes per shard) without writing anything.
    #[arg(long)]
    dry_run: bool,
    /// Replace shards that exist already, and write beside the shards of an earlier split of the
    /// same prefix into another count (without it, either is refused and nothing is written, as
    /// `merge` and `quantize` refuse an existing output).
    #[arg(long)]
    force: bool,
}

/// Parses `500M`, `2G`, `64Ki`, `1000`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let units: [(&str, u64); 6] =
        [("Ki", 1 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30), ("K", 1_000), ("M", 1_000_000), ("G", 1_000_000_000)];
    let (num, mult) = units.iter().find_map(|&(u, m)| t.strip_suffix(u).map(|n| (n, m))).unwrap_or((t, 1));
    let n: u64 = num.trim().parse().map_err(|e: std::num::ParseIntError| match e.kind() {
        std::num::IntErrorKind::PosOverflow => format!("{s:?} is too large"),
        _ => format!("{s:?} is not a size (e.g. 500M, 2G, 64Ki, 1000)"),
    })?;
    match n.checked_mul(mult) {
        Some(0) => Err("the size must be positive".into()),
        Some(v) => Ok(v),
        None => Err(format!("{s:?} is too large")),
    }
}

/// Splits the file.
pub fn run_split(args: &SplitArgs) -> anyhow::Result<ExitCode> {
    let by = match (args.split_max_tensors, args.split_max_size) {
        (_, Some(size)) => SplitBy::MaxBytes(size),
        (n, None) => SplitBy::MaxTensors(n.unwrap_or(128)),
    };
    let opts = SplitOptions::new(by).with_no_tensor_first_split(args.no_tensor_first_split);
    let (paths, if_exists) = {
        let f = Gguf::open(&args.input)
            .map_err(|e| crate::out::unless_named(e, shown_path(&args.input).to_string(), &[&args.input]))?;
        let plan = plan_split(&f, &opts)?;
        let count = u16::try_from(plan.len()).unwrap_or(u16::MAX);
        let paths: Vec<PathBuf> = (0..count).map(|i| shard_path(&args.prefix, i, count)).collect();
        if args.dry_run {
            let mut out = Out::stdout();
            outln!(out, "{}", crate::out::count(plan.len(), "shard"));
            for (r, path) in plan.iter().zip(&paths) {
                let bytes: u64 = r.clone().filter_map(|t| f.tensor_at(t)).map(|t| t.nbytes).sum();
                let tensors = crate::out::count(r.len(), "tensor");
                let bytes = crate::out::count(bytes, "byte");
                outln!(out, "{}: {tensors}, {bytes} of tensor data", shown_path(&path));
            }
            out.finish()?;
            return Ok(ExitCode::SUCCESS);
        }
        let shards = Shards::Of { prefix: &args.prefix, count };
        let inputs = std::slice::from_ref(&args.input);
        let if_exists =
            Outputs { files: &paths, shards, inputs, reads: Reads::SplitInput, force: args.force }.check()?;
        (paths, if_exists)
    };
    let opts = opts.with_if_exists(if_exists);
    // An error writing a shard names that shard (one that appeared meanwhile: "SHARD exists",
    // as before the write); others the input, once.
    let paths = split_file(&args.input, &args.prefix, &opts).map_err(|e| {
        if e.shard().is_some() {
            crate::out::writing(e.into(), &paths)
        } else {
            crate::out::unless_named(e, shown_path(&args.input).to_string(), &[&args.input])
        }
    })?;
    let mut out = Out::stdout();
    for p in &paths {
        outln!(out, "{}", shown_path(&p));
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `gguf merge`.
#[derive(clap::Args)]
pub struct MergeArgs {
    /// Any shard of the split (usually the first, NAME-00001-of-0000N.gguf).
    shard: PathBuf,
    /// The merged file to write.
    out: PathBuf,
    /// Replace OUT if it exists.
    #[arg(long)]
    force: bool,
}

/// Merges the shards.
pub fn run_merge(args: &MergeArgs) -> anyhow::Result<ExitCode> {
    // An error writing OUT names it; others say what was being merged into what.
    let merging = |e: gguf_serde::Error| {
        let what = format!("merging {} into {}", shown_path(&args.shard), shown_path(&args.out));
        crate::out::unless_named(e, what, &[&args.out])
    };
    let shards: Vec<PathBuf> =
        ShardedGguf::open(&args.shard).map_err(merging)?.shard_paths().map(PathBuf::from).collect();
    let if_exists = Outputs::one(std::slice::from_ref(&args.out), &shards, Reads::Shards, args.force).check()?;
    merge_file(&args.shard, &args.out, if_exists).map_err(merging)?;
    Ok(ExitCode::SUCCESS)
}
