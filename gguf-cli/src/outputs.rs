//! The files a writing command creates, and the one policy of what it may replace: every command
//! that writes a file (`quantize`, `dequantize`, `convert`, `split`, `merge`) describes its
//! outputs as [`Outputs`] and calls [`Outputs::check`] before it writes anything. (`set`, `rm`
//! and `rename` rewrite their file in place: they have no output to check.)
//!
//! In this order:
//! 1. an output that is one of the inputs (after following links and `..`) is refused, `--force`
//!    or not: the rename into place would destroy the input ([`Reads`] says how the refusal
//!    names it);
//! 2. an output that is a folder is refused, `--force` or not, saying so (no `--force` hint);
//! 3. an existing regular file (or a link to one) is refused without `--force`; another kind of
//!    file, a FIFO or a device, is left to the writer, which refuses it whether or not `--force`
//!    is given (it would replace it rather than write into it);
//! 4. shards: an existing shard of the output's own set is refused without `--force` (3); a shard
//!    of an earlier split of the same prefix into another count is refused without `--force`,
//!    and named in a warning with it (it stays beside the new shards). When the command does not
//!    know the count (`convert --split-max-size`: the library plans it), any existing shard of
//!    the prefix is refused without `--force`.
//!
//! The same rule holds at the end of the write, atomically: the command gives the library
//! [`IfExists::replace_when`]`(--force)` ([`Outputs::if_exists`]), so a file that appears at an
//! output while the command runs is kept without `--force` (the command fails with the same
//! error as for a file that was there before, [`crate::out::unless_named`]) and replaced with
//! it.

use std::path::{Path, PathBuf};

use anyhow::bail;
use gguf_serde::container::IfExists;

use crate::out::warn;
use gguf_serde::format::shown_path;

/// What a command reads, for the refusal of an output that is one of its inputs.
#[derive(Clone, Copy, Debug)]
pub enum Reads {
    /// A model: one file, or the shards of a split model (`quantize`, `dequantize`).
    Model,
    /// The file being split (`split`).
    SplitInput,
    /// The shards being merged (`merge`).
    Shards,
    /// The files of a Hugging Face checkpoint (`convert`).
    Checkpoint,
}

impl Reads {
    /// The refusal of writing `output`, which is the input `input`.
    fn refusal(self, input: &Path, output: &Path) -> String {
        match self {
            Reads::Model => format!("input and output files are the same: {}", shown_path(&input)),
            Reads::SplitInput => format!("shard {} would replace the input", shown_path(&output)),
            Reads::Shards => format!("the output {} is one of the shards", shown_path(&output)),
            Reads::Checkpoint => {
                format!("{} is a file of the checkpoint being converted; choose another OUT", shown_path(&input))
            }
        }
    }
}

/// Whether the outputs are shards, and of which set.
#[derive(Clone, Copy, Debug)]
pub enum Shards<'a> {
    /// One file.
    No,
    /// The shards `PREFIX-00001-of-0000N.gguf`, … of the known count N.
    Of {
        /// PREFIX.
        prefix: &'a Path,
        /// N.
        count: u16,
    },
    /// Shards of `PREFIX` whose count the command does not know (the library plans it).
    Unknown {
        /// PREFIX.
        prefix: &'a Path,
    },
}

/// The outputs of one run of a writing command.
#[derive(Clone, Copy, Debug)]
pub struct Outputs<'a> {
    /// The files it writes: one, or the shards of one output (none when [`Shards::Unknown`]).
    pub files: &'a [PathBuf],
    /// Whether `files` are shards.
    pub shards: Shards<'a>,
    /// The files it reads.
    pub inputs: &'a [PathBuf],
    /// What those are.
    pub reads: Reads,
    /// `--force`: replace existing files.
    pub force: bool,
}

impl Outputs<'_> {
    /// One output file `file`, read from `inputs`.
    pub fn one<'a>(file: &'a [PathBuf], inputs: &'a [PathBuf], reads: Reads, force: bool) -> Outputs<'a> {
        Outputs { files: file, shards: Shards::No, inputs, reads, force }
    }

    /// What the write does with a file that appears at an output meanwhile (see the module
    /// docs): replace it with `--force`, else keep it and fail.
    pub fn if_exists(&self) -> IfExists {
        IfExists::replace_when(self.force)
    }

    /// Refuses what the policy of the module docs refuses; warns of an earlier split's shards that
    /// `--force` leaves beside the new ones. Returns [`Outputs::if_exists`], for the write.
    pub fn check(&self) -> anyhow::Result<IfExists> {
        let unknown_count = match self.shards {
            Shards::Unknown { prefix } => shard_files(prefix).into_iter().map(|(p, _)| p).collect(),
            _ => Vec::new(),
        };
        for o in self.files.iter().chain(&unknown_count) {
            if let Some(i) = self.inputs.iter().find(|i| same_file(i, o)) {
                bail!("{}", self.reads.refusal(i, o));
            }
        }
        if let Some(o) = self.files.iter().find(|o| o.is_dir()) {
            bail!("{} is a folder: give the output file's path", shown_path(&o));
        }
        if !self.force {
            if let Some(o) = self.files.iter().find(|o| o.is_file()) {
                bail!("{} exists (use --force to replace it)", shown_path(&o));
            }
            if let Some(o) = unknown_count.iter().find(|o| o.is_file()) {
                bail!("{} exists (a shard of OUT; use --force to replace it)", shown_path(&o));
            }
        }
        if let Shards::Of { prefix, count } = self.shards {
            // Shards of an earlier split into another count would stay beside the new ones, and a
            // merge of the wrong set would still succeed: refused without --force, named with it.
            if let Some((old, _)) = shard_files(prefix).into_iter().find(|&(_, n)| n != u32::from(count)) {
                if !self.force {
                    bail!(
                        "{} is a shard of an earlier split of the same prefix (remove those shards, or use --force \
                         to write beside them)",
                        shown_path(&old)
                    );
                }
                warn(format_args!("warning: {} of an earlier split is left as it is", shown_path(&old)));
            }
        }
        Ok(self.if_exists())
    }
}

/// Whether `a` and `b` name the same existing file (after following links and `..`).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// The files `PREFIX-NNNNN-of-MMMMM.gguf` beside `prefix`, with their count `MMMMM`, in name
/// order (so that a refusal names shard 1 of a split, whatever the folder's order).
fn shard_files(prefix: &Path) -> Vec<(PathBuf, u32)> {
    let Some(stem) = prefix.file_name().map(|n| n.as_encoded_bytes()) else { return Vec::new() };
    let dir = match prefix.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut found: Vec<(PathBuf, u32)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name();
            let count = name.as_encoded_bytes().strip_prefix(stem).and_then(shard_count)?;
            Some((dir.join(name), count))
        })
        .collect();
    found.sort();
    found
}

/// The count `MMMMM` of a shard name's end `-NNNNN-of-MMMMM.gguf`.
fn shard_count(b: &[u8]) -> Option<u32> {
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let shaped = b.len() == 20
        && b.starts_with(b"-")
        && digits(1..6)
        && b.get(6..10) == Some(b"-of-")
        && digits(10..15)
        && b.ends_with(b".gguf");
    if !shaped {
        return None;
    }
    std::str::from_utf8(b.get(10..15)?).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::shard_count;

    #[test]
    fn shard_names() {
        assert_eq!(shard_count(b"-00001-of-00003.gguf"), Some(3));
        assert_eq!(shard_count(b"-00001-of-0003.gguf"), None);
        assert_eq!(shard_count(b"-0000a-of-00003.gguf"), None);
        assert_eq!(shard_count(b"-00001-of-00003.bin"), None);
        assert_eq!(shard_count(b".gguf"), None);
    }
}
