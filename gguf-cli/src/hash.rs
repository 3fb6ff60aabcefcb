//! `gguf hash [--xxh64] [--sha1] [--sha256] [--all] [--no-layer] [--uuid] [-c MANIFEST] FILE`

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use gguf_serde::ops::hash::{ggml_tensor_name, hash_files, work_bytes, HashKind, HashOptions, Manifest, Verdict};
use gguf_serde::ShardedGguf;

use crate::out::{outln, Out};
use gguf_serde::format::shown_path;

/// Arguments of `gguf hash`.
#[derive(clap::Args)]
pub struct Args {
    /// The GGUF file. A shard of a split model (`NAME-00001-of-0000N.gguf`) hashes every shard of
    /// it: each shard's lines are those `llama-gguf-hash` prints for that shard, shard after shard.
    file: PathBuf,
    /// XXH64 (seed 0) hashes: the default when no kind is chosen.
    #[arg(long)]
    xxh64: bool,
    /// SHA-1 hashes.
    #[arg(long)]
    sha1: bool,
    /// SHA-256 hashes.
    #[arg(long)]
    sha256: bool,
    /// XXH64, SHA-1 and SHA-256 (not --uuid).
    #[arg(long)]
    all: bool,
    /// Only the whole model's hashes, not each tensor's.
    #[arg(long)]
    no_layer: bool,
    /// The model's UUIDv5 in llama.cpp's namespace (whole model only): the SHA-1 of the namespace
    /// and every tensor's data.
    #[arg(long)]
    uuid: bool,
    /// Check against MANIFEST (a saved output of `gguf hash` or `llama-gguf-hash`): each line gets
    /// `-  Ok`, `-  Mismatch` or `-  Not Found`; a tensor the manifest lists for FILE that FILE
    /// lacks is printed with `-  Missing`. Without a kind option, the strongest kind the manifest
    /// has is checked (sha256, sha1, xxh64, uuid), and only it: lines of the other kinds are
    /// ignored, even one naming a tensor FILE lacks (as llama-gguf-hash, which hashes only the
    /// kind it picked). Exit 1 if any hash differs, a tensor is
    /// missing, FILE has a tensor the manifest's per-tensor lines lack, or the manifest has no
    /// line for FILE at all; the last line says `Success` or `Failure`. Lines are matched by
    /// kind and name, the name being FILE as given: check with the path the manifest was made
    /// with (`gguf hash --all model.gguf > model.manifest`, then `gguf hash -c model.manifest
    /// model.gguf` in the same folder). A `uuid` line is checked too (llama-gguf-hash looks for it
    /// under `sha256` and never finds it). llama-gguf-hash spells this option `--check` only.
    #[arg(short = 'c', long = "check", value_name = "MANIFEST")]
    check: Option<PathBuf>,
}

/// Prints the hashes, or checks them against a manifest.
pub fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let mut out = Out::stdout();
    let manifest = match &a.check {
        None => None,
        Some(path) => {
            let text = std::fs::read(path).with_context(|| format!("reading manifest {}", shown_path(&path)))?;
            let m = Manifest::parse(&text);
            let kinds = m.kinds();
            if kinds.is_empty() {
                anyhow::bail!(
                    "manifest {}: no line of a known hash kind (xxh64, sha1, sha256, uuid)",
                    shown_path(&path)
                );
            }
            // llama-gguf-hash's header: the kinds found, strongest first.
            let mut header = [b"manifest  ", path_bytes(path)].concat();
            for k in [HashKind::Sha256, HashKind::Sha1, HashKind::Xxh64, HashKind::Uuid] {
                if kinds.contains(&k) {
                    header.extend_from_slice(b"  ");
                    header.extend_from_slice(k.name().as_bytes());
                }
            }
            line(&mut out, &header)?;
            Some((path, m))
        }
    };

    let mut kinds: Vec<HashKind> = [
        (a.xxh64 || a.all, HashKind::Xxh64),
        (a.sha1 || a.all, HashKind::Sha1),
        (a.sha256 || a.all, HashKind::Sha256),
        (a.uuid, HashKind::Uuid),
    ]
    .into_iter()
    .filter_map(|(on, k)| on.then_some(k))
    .collect();
    if kinds.is_empty() {
        kinds.push(manifest.as_ref().and_then(|(_, m)| m.strongest_kind()).unwrap_or(HashKind::Xxh64));
    }
    let options = HashOptions::new(kinds).with_no_layer(a.no_layer);

    let model = ShardedGguf::open(&a.file)
        .map_err(|e| crate::out::unless_named(e, shown_path(&a.file).to_string(), &[&a.file]))?;
    let shards: Vec<_> = (0..model.shard_count()).filter_map(|i| model.shard(i)).collect();
    let names: Vec<&[u8]> = model.shard_paths().map(path_bytes).collect();

    let bar = crate::quantize::progress_bar(false);
    bar.set_length(work_bytes(&shards, &options));
    let hashes = hash_files(&shards, &options, &|n| bar.inc(n))
        .map_err(|e| crate::out::unless_named(e, shown_path(&a.file).to_string(), &[&a.file]))?;
    bar.finish_and_clear();

    let Some((path, manifest)) = manifest else {
        for (h, name) in hashes.iter().zip(&names) {
            for entry in h.lines(name) {
                line(&mut out, &entry.line())?;
            }
        }
        out.finish()?;
        return Ok(ExitCode::SUCCESS);
    };

    let mut failed = false;
    let mut found_any = false;
    for ((h, name), shard) in hashes.iter().zip(&names).zip(&shards) {
        let tensor_prefix = [name, &b":"[..]].concat();
        let listed: HashSet<(HashKind, &[u8])> = manifest
            .entries()
            .iter()
            .filter(|e| e.name.starts_with(&tensor_prefix))
            .map(|e| (e.kind, e.name.as_slice()))
            .collect();
        for entry in h.lines(name) {
            let verdict = manifest.verify(&entry);
            let is_tensor = entry.name.len() > name.len();
            match verdict {
                Verdict::Ok => found_any = true,
                Verdict::Mismatch => {
                    found_any = true;
                    failed = true;
                }
                // A tensor of the file that the manifest's per-tensor lines of this kind lack.
                Verdict::NotFound if is_tensor && listed.iter().any(|(k, _)| *k == entry.kind) => failed = true,
                Verdict::NotFound => {}
            }
            line(&mut out, &[&entry.line(), format!("  -  {}", verdict.name()).as_bytes()].concat())?;
        }
        // The manifest's tensors of this file that the file lacks, for the kinds checked.
        if !a.no_layer {
            let present: HashSet<&[u8]> = shard.tensors().map(|t| ggml_tensor_name(t.name.as_bytes())).collect();
            for e in manifest.entries() {
                let Some(tensor) = e.name.strip_prefix(tensor_prefix.as_slice()) else { continue };
                if options.kinds.contains(&e.kind) && e.kind != HashKind::Uuid && !present.contains(tensor) {
                    failed = true;
                    found_any = true;
                    line(&mut out, &[&e.line(), &b"  -  Missing"[..]].concat())?;
                }
            }
        }
    }
    if !found_any {
        failed = true;
        crate::out::warn(format_args!(
            "{}: the manifest has no {} line for {}",
            shown_path(&path),
            options.kinds.iter().map(|k| k.name()).collect::<Vec<_>>().join("/"),
            model.shard_paths().map(|p| shown_path(&p).to_string()).collect::<Vec<_>>().join(", ")
        ));
    }
    outln!(out, "");
    let verdict = if failed { "Failure" } else { "Success" };
    line(
        &mut out,
        &[&b"Verification results for "[..], path_bytes(path), format!(" - {verdict}").as_bytes()].concat(),
    )?;
    out.finish()?;
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// The bytes of `path` as given, as `llama-gguf-hash` prints its `argv` (on Unix; elsewhere its
/// text, or `?` where it is not Unicode).
fn path_bytes(path: &Path) -> &[u8] {
    #[cfg(unix)]
    {
        std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str())
    }
    #[cfg(not(unix))]
    {
        path.to_str().unwrap_or("?").as_bytes()
    }
}

/// Writes `bytes` and a newline to `out`.
fn line(out: &mut Out, bytes: &[u8]) -> Result<(), crate::out::OutputError> {
    out.bytes(bytes)?;
    out.bytes(b"\n")
}
