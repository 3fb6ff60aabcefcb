//! The output policy (`gguf-cli/src/outputs.rs`), once per case across every writing command:
//! each of `quantize`, `quantize --keep-split`, `dequantize`, `split`, `merge` and `convert` (when
//! Python makes its checkpoint) against an existing file (refused without --force, replaced with
//! it), a folder and a FIFO (refused, --force or not, the folder without a --force hint), an
//! output that is its input (refused, --force or not), and, for the commands that write shards,
//! an existing shard of the output's set and one of an earlier split of the same prefix.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gguf_serde::Gguf;
use gguf_tests::support::file_names as names;
use gguf_tests::{make_hf_llama, temp_dir, HfLayout, TempDir};

use super::{gguf, s, small};

/// One writing command.
struct Writer {
    name: &'static str,
    /// Its arguments, `OUT` standing for the output argument.
    args: Vec<String>,
    /// Whether it writes shards: for the output argument `OUT`, the only shard
    /// `OUT-00001-of-00001.gguf`, else the file `OUT`.
    shards: bool,
    /// The output argument whose file is one of the inputs, and that input.
    onto_input: (PathBuf, PathBuf),
    /// Whether an existing folder as OUT is where it writes its default name (`convert`, as the
    /// reference does) rather than a refusal.
    into_folder: bool,
}

impl Writer {
    fn new(name: &'static str, args: &[&str], shards: bool, onto_input: (PathBuf, PathBuf)) -> Writer {
        let args = args.iter().map(|a| a.to_string()).collect();
        Writer { name, args, shards, onto_input, into_folder: false }
    }

    /// The file written for the output argument `out`.
    fn file(&self, out: &Path) -> PathBuf {
        if self.shards {
            gguf_serde::container::shard_path(out, 0, 1)
        } else {
            out.to_path_buf()
        }
    }
}

/// The writers, their inputs in `dir`: `in-00001-of-00001.gguf` (a copy of small.gguf: one file
/// whose name is the only shard of the prefix `in`) and the three shards `parts-*` of its split.
fn writers(dir: &Path, ckpt: Option<&Path>) -> Vec<Writer> {
    let input = dir.join("in-00001-of-00001.gguf");
    std::fs::copy(small(), &input).unwrap();
    let parts = dir.join("parts");
    let o = gguf(&["split", "--split-max-tensors", "1", s(&input), s(&parts)]);
    assert!(o.status.success(), "{o:?}");
    let first = gguf_serde::container::shard_path(&parts, 0, 3);
    let second = gguf_serde::container::shard_path(&parts, 1, 3);
    let (i, itself, prefix) = (s(&input), (input.clone(), input.clone()), (dir.join("in"), input.clone()));
    let mut v = vec![
        Writer::new("quantize", &["quantize", "-q", i, "OUT", "Q8_0"], false, itself.clone()),
        Writer::new(
            "quantize --keep-split",
            &["quantize", "-q", "--keep-split", i, "OUT", "Q8_0"],
            true,
            prefix.clone(),
        ),
        Writer::new("dequantize", &["dequantize", "-q", i, "OUT"], false, itself),
        Writer::new("split", &["split", "--split-max-tensors", "1000", i, "OUT"], true, prefix),
        Writer::new("merge", &["merge", s(&first), "OUT"], false, (second.clone(), second)),
    ];
    if let Some(ckpt) = ckpt {
        let weights = ckpt.join("model.safetensors");
        let args = ["convert", s(ckpt), "-q", "--no-vocab", "--outtype", "f32", "-o", "OUT"];
        v.push(Writer { into_folder: true, ..Writer::new("convert", &args, false, (weights.clone(), weights)) });
    }
    v
}

fn run(w: &Writer, out: &Path, force: bool) -> Output {
    let mut args: Vec<&str> = w.args.iter().map(|a| if a == "OUT" { s(out) } else { a }).collect();
    if force {
        args.push("--force");
    }
    gguf(&args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts `o` failed with exit status 1 and an error containing `want`.
fn refused(o: &Output, want: &str, what: &str) {
    assert_eq!(o.status.code(), Some(1), "{what}: {o:?}");
    assert!(stderr(o).contains(want), "{what}: {}", stderr(o));
}

/// The checkpoint `convert` converts, when Python makes one.
fn checkpoint() -> Option<TempDir> {
    make_hf_llama("cli_policy_convert", HfLayout::TiedSingle, 35)
}

#[test]
fn every_writing_command_follows_one_output_policy() {
    let ckpt = checkpoint();
    let dir = temp_dir("cli_output_policy");
    let inputs = dir.join("inputs");
    std::fs::create_dir(&inputs).unwrap();
    let writers = writers(&inputs, ckpt.as_deref());
    for w in &writers {
        let case = |c: &str| format!("{}: {c}", w.name);
        let here = dir.join(w.name.replace([' ', '-'], "_"));
        std::fs::create_dir(&here).unwrap();
        let out = here.join("t");
        let file = w.file(&out);

        // An existing file: refused without --force and left as it was; replaced with it.
        std::fs::write(&file, b"mine").unwrap();
        refused(&run(w, &out, false), "exists (use --force to replace it)", &case("existing file"));
        assert_eq!(std::fs::read(&file).unwrap(), b"mine", "{}", case("existing file"));
        let o = run(w, &out, true);
        assert!(o.status.success(), "{}: {o:?}", case("existing file, --force"));
        assert!(Gguf::open(&file).is_ok(), "{}", case("existing file, --force"));
        std::fs::remove_file(&file).unwrap();

        for force in [false, true] {
            // A folder: refused, saying so, without suggesting --force (or, for convert, the
            // folder to write the default name in).
            std::fs::create_dir(&file).unwrap();
            let o = run(w, &out, force);
            if w.into_folder {
                assert!(o.status.success(), "{}: {o:?}", case("folder"));
                assert_eq!(names(&file).len(), 1, "{}", case("folder"));
                std::fs::remove_dir_all(&file).unwrap();
            } else {
                refused(&o, "is a folder: give the output file's path", &case(&format!("folder, --force {force}")));
                assert!(!stderr(&o).contains("--force"), "{}", case("folder"));
                std::fs::remove_dir(&file).unwrap();
            }

            // A FIFO (any special file): the writer's refusal, which --force does not lift.
            assert!(Command::new("mkfifo").arg(&file).status().unwrap().success());
            refused(&run(w, &out, force), "not a regular file", &case(&format!("FIFO, --force {force}")));
            assert!(std::fs::symlink_metadata(&file).unwrap().file_type().is_fifo(), "{}", case("FIFO"));
            std::fs::remove_file(&file).unwrap();

            // The output is an input: refused, --force or not, and the input is unchanged.
            let (onto, input) = &w.onto_input;
            let before = std::fs::read(input).unwrap();
            let o = run(w, onto, force);
            assert_eq!(o.status.code(), Some(1), "{}: {o:?}", case(&format!("onto the input, --force {force}")));
            assert_eq!(&std::fs::read(input).unwrap(), &before, "{}", case("onto the input"));
        }
        assert!(names(&here).is_empty(), "{}: a refused run left {:?}", w.name, names(&here));

        if w.shards {
            // A shard of an earlier split of the same prefix into another count: refused without
            // --force; with it, named in a warning and left beside the new shard.
            let old = gguf_serde::container::shard_path(&out, 0, 2);
            std::fs::write(&old, b"mine").unwrap();
            refused(&run(w, &out, false), "is a shard of an earlier split of the same prefix", &case("earlier split"));
            assert!(!file.exists(), "{}", case("earlier split"));
            let o = run(w, &out, true);
            assert!(o.status.success(), "{}: {o:?}", case("earlier split, --force"));
            assert!(stderr(&o).contains("of an earlier split is left as it is"), "{}", stderr(&o));
            assert_eq!(std::fs::read(&old).unwrap(), b"mine");
        }
    }
    assert!(Gguf::open(inputs.join("in-00001-of-00001.gguf")).is_ok());
}

/// `convert --split-max-size` knows its shard count only once written: any existing shard of the
/// prefix is refused without --force, the first by name.
#[test]
fn convert_refuses_any_shard_of_its_prefix_without_force() {
    let Some(ckpt) = checkpoint() else { return };
    let dir = ckpt.parent().unwrap();
    let out = dir.join("s.gguf");
    let (first, other) = (dir.join("s-00001-of-00003.gguf"), dir.join("s-00002-of-00003.gguf"));
    std::fs::write(&other, b"mine").unwrap();
    std::fs::write(&first, b"mine").unwrap();
    let args = |force: bool| {
        let mut a = vec!["convert", ckpt.to_str().unwrap(), "-q", "--no-vocab", "--outtype", "f32"];
        a.extend(["--split-max-size", "1G", "-o", out.to_str().unwrap()]);
        if force {
            a.push("--force");
        }
        gguf(&a)
    };
    let o = args(false);
    refused(&o, "exists (a shard of OUT; use --force to replace it)", "convert --split-max-size");
    assert!(stderr(&o).contains(first.to_str().unwrap()), "{}", stderr(&o));
    let o = args(true);
    assert!(o.status.success(), "{o:?}");
    assert!(Gguf::open(dir.join("s-00001-of-00001.gguf")).is_ok());
}
