//! Regressions from a new user's session: outputs that are not regular files, symbolic links,
//! FIFOs, merging onto a shard, overflowing integers, control characters in keys.

use std::os::unix::fs::FileTypeExt;
use std::process::Command;

use gguf_serde::{Gguf, GgufWriter, ValueRef};
use gguf_tests::ggml_read::{assert_ggml_reads_as_we_do, ggml_read_dump};
use gguf_tests::{llama_run_harness, temp_dir};

use super::{gguf, small};

#[test]
fn an_output_that_is_not_a_regular_file_is_refused() {
    // A FIFO of the test's own stands for any special file (a device such as /dev/null, a
    // socket): the tool must refuse it rather than replace it, and must not open it (opening a
    // FIFO with no reader would block: the deadline of `gguf` turns that into a failure).
    let dir = temp_dir("cli_special_output");
    let fifo = dir.join("out.gguf");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let o = gguf(&["dequantize", "-q", &small(), fifo.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a regular file (writing would replace it)"));
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "a refused run left a file");
}

#[test]
fn a_folder_as_quantize_output_is_refused_without_suggesting_force() {
    let dir = temp_dir("cli_quantize_folder_output");
    let out = dir.join("d1");
    std::fs::create_dir(&out).unwrap();
    let input = small();
    for extra in [None, Some("--force")] {
        let mut args = vec!["quantize", "-q"];
        args.extend(extra);
        args.extend([input.as_str(), out.to_str().unwrap(), "Q8_0"]);
        let o = gguf(&args);
        assert_eq!(o.status.code(), Some(1), "{extra:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("is a folder: give the output file's path"), "{extra:?}: {err}");
        assert!(!err.contains("--force"), "{extra:?}: {err}");
        assert!(out.is_dir() && std::fs::read_dir(&out).unwrap().count() == 0);
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "a refused run left a file");
}

#[test]
fn editing_through_a_symbolic_link_edits_its_target() {
    let dir = temp_dir("cli_symlink");
    let real = dir.join("real.gguf");
    std::fs::copy(small(), &real).unwrap();
    let link = dir.join("link.gguf");
    std::os::unix::fs::symlink("real.gguf", &link).unwrap();
    let o = gguf(&["set", link.to_str().unwrap(), "test.answer", "7"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    let bytes = std::fs::read(&real).unwrap();
    assert_eq!(Gguf::from_slice(&bytes).unwrap().get("test.answer"), Some(ValueRef::U32(7)));
}

#[test]
fn a_fifo_is_refused_without_waiting_for_a_writer() {
    let dir = temp_dir("cli_fifo");
    let fifo = dir.join("f.gguf");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let o = gguf(&["inspect", fifo.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a regular file"));
}

#[test]
fn merging_onto_one_of_the_shards_is_refused() {
    let dir = temp_dir("cli_merge_onto_shard");
    let prefix = dir.join("x");
    assert!(gguf(&["split", "--split-max-tensors", "1", &small(), prefix.to_str().unwrap()]).status.success());
    let (first, second) = (dir.join("x-00001-of-00003.gguf"), dir.join("x-00002-of-00003.gguf"));
    let before = std::fs::read(&second).unwrap();
    let o = gguf(&["merge", first.to_str().unwrap(), second.to_str().unwrap(), "--force"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is one of the shards"));
    assert_eq!(std::fs::read(&second).unwrap(), before);
}

#[test]
fn an_integer_too_large_for_any_integer_type_is_an_error() {
    let dir = temp_dir("cli_set_overflow");
    let f = dir.join("s.gguf");
    std::fs::copy(small(), &f).unwrap();
    let o = gguf(&["set", f.to_str().unwrap(), "test.v", "-9223372036854775809"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is an integer outside u64 and i64"));
    let o = gguf(&["set", f.to_str().unwrap(), "test.v", "18446744073709551615"]);
    assert!(o.status.success());
    let bytes = std::fs::read(&f).unwrap();
    assert_eq!(Gguf::from_slice(&bytes).unwrap().get("test.v"), Some(ValueRef::U64(u64::MAX)));
}

#[test]
fn control_characters_in_keys_are_escaped_in_text_output() {
    let dir = temp_dir("cli_control_keys");
    let f = dir.join("k.gguf");
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("evil\n\u{1b}[31mRED", 1u32).unwrap();
    std::fs::write(&f, w.finish().unwrap()).unwrap();
    let o = gguf(&["inspect", f.to_str().unwrap()]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(text.contains(r"  evil\n\u{1b}[31mRED "), "{text}");
}

/// A file whose only tensor sits at offset 64 of the data section (aligned, inside the file: valid
/// GGUF), which ggml refuses ("has offset 64, expected 0").
#[test]
fn validate_warns_about_what_ggml_refuses_and_ggml_flag_refuses_it() {
    let dir = temp_dir("cli_validate_ggml");
    let f = dir.join("gap.gguf");
    // Header 24 + one KV (general.architecture = "llama": 45) + one tensor info ("w", 1 dim: 33) =
    // 102, data section at 128; the tensor (F32 [4], 16 bytes) at relative offset 64.
    let mut b = Vec::new();
    b.extend_from_slice(b"GGUF");
    b.extend_from_slice(&3u32.to_le_bytes());
    b.extend_from_slice(&1u64.to_le_bytes());
    b.extend_from_slice(&1u64.to_le_bytes());
    b.extend_from_slice(&20u64.to_le_bytes());
    b.extend_from_slice(b"general.architecture");
    b.extend_from_slice(&8u32.to_le_bytes());
    b.extend_from_slice(&5u64.to_le_bytes());
    b.extend_from_slice(b"llama");
    b.extend_from_slice(&1u64.to_le_bytes());
    b.extend_from_slice(b"w");
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&4u64.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&64u64.to_le_bytes());
    assert_eq!(b.len(), 102);
    b.resize(128 + 64 + 16, 0);
    std::fs::write(&f, &b).unwrap();
    let o = gguf(&["validate", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("gap.gguf: OK (version 3, 1 key, 1 tensor)"), "{text}");
    assert!(
        text.contains("warning: valid GGUF, but ggml's reader refuses it: tensor \"w\": offset 64 in the data section, ggml expects 0"),
        "{text}"
    );
    let o = gguf(&["validate", "--ggml", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("INVALID for ggml"));
    // The shipped test vector is fine for ggml too.
    let o = gguf(&["validate", "--ggml", &small()]);
    assert_eq!(o.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("warning"));
}

/// Found by the `serde` fuzz target: 57 bytes declaring `general.alignment = 2^31`, a power of
/// two. `set` wrote 2 GiB of zeros (the padding after empty tensor infos) and left its temporary
/// file behind when stopped; issue 15 then refused the file. ggml and gguf-py read it (issue 28:
/// no stricter than them; `ggml_read`: alignment 2147483648, data offset 57), and so does every
/// command: `validate` warns about what a rewrite costs, with and without `--ggml`; `inspect`
/// reports the data offset of a file without tensors as ggml does (the end of its tensor infos);
/// `set`, `rm`, `rename`, `split`, `merge` and `dequantize` write files a few bytes longer or
/// shorter, not padded to the alignment (the input has no padding; `quantize` pads the empty
/// data section to the alignment, as ggml's `gguf_write_to_file` does, and so writes 2 GiB),
/// which ggml reads as we do.
#[test]
fn an_alignment_of_two_gib_is_read_and_edited_for_a_few_bytes() {
    let pair = |key: &[u8], ty: u32, value: &[u8]| {
        [&(key.len() as u64).to_le_bytes()[..], key, &ty.to_le_bytes(), value].concat()
    };
    let head = |kvs: u64| [&b"GGUF"[..], &3u32.to_le_bytes(), &0u64.to_le_bytes(), &kvs.to_le_bytes()].concat();
    let alignment = pair(b"general.alignment", 4, &(1u32 << 31).to_le_bytes());
    let bytes = [head(1), alignment.clone()].concat();
    assert_eq!(bytes.len(), 57);
    let dir = temp_dir("cli_alignment_2gib");
    let file = dir.join("a.gguf");
    std::fs::write(&file, &bytes).unwrap();
    let f = file.to_str().unwrap();
    let harness = llama_run_harness();
    if let Some(h) = &harness {
        let dump = ggml_read_dump(h, &file);
        assert_eq!(dump[1..3], ["alignment 2147483648", "data_offset 57"]);
        assert_ggml_reads_as_we_do(h, &file);
    }

    let warning = "warning: general.alignment at offset 24 is 2147483648, above 65536 (the largest memory page): \
                   ggml and llama.cpp read it, but a rewrite pads the tensor infos and each tensor to it \
                   (up to 2147483647 zero bytes each)";
    for args in [vec!["validate", f], vec!["validate", "--ggml", f]] {
        let o = gguf(&args);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {stdout}");
        assert!(stdout.contains(warning), "{args:?}: {stdout}");
    }
    let o = gguf(&["inspect", f]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    assert!(text.contains("alignment:    2147483648\n") && text.contains("data offset:  57\n"), "{text}");

    // Each edit on a copy: the exact bytes, unpadded as the input.
    let name = pair(b"general.name", 8, &[&1u64.to_le_bytes()[..], b"x"].concat());
    let other = pair(b"general.other", 4, &(1u32 << 31).to_le_bytes());
    let edits: [(&[&str], Vec<u8>); 3] = [
        (&["set", "general.name", "x"], [head(2), alignment.clone(), name].concat()),
        (&["rm", "general.alignment"], head(0)),
        (&["rename", "general.alignment", "general.other"], [head(1), other].concat()),
    ];
    for (i, (args, want)) in edits.iter().enumerate() {
        let out = dir.join(format!("edit{i}.gguf"));
        std::fs::copy(&file, &out).unwrap();
        let cmd = [&args[..1], &[out.to_str().unwrap()], &args[1..]].concat();
        let o = gguf(&cmd);
        assert!(o.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(std::fs::read(&out).unwrap(), *want, "{cmd:?}");
        if let Some(h) = &harness {
            assert_ggml_reads_as_we_do(h, &out);
        }
    }
    // Split into one shard (the split keys added, unpadded), merged back to the file itself;
    // dequantized (no tensors to convert, `general.file_type` added): none padded.
    let (shard, merged, deq) = (dir.join("s-00001-of-00001.gguf"), dir.join("m.gguf"), dir.join("d.gguf"));
    for args in [
        vec!["split", "--split-max-tensors", "1", f, dir.join("s").to_str().unwrap()],
        vec!["merge", shard.to_str().unwrap(), merged.to_str().unwrap()],
        vec!["dequantize", "-q", f, deq.to_str().unwrap()],
    ] {
        let o = gguf(&args);
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(std::fs::read(&merged).unwrap(), bytes);
    for out in [&shard, &deq] {
        let len = std::fs::metadata(out).unwrap().len();
        assert!(len < 200, "{}: {len} bytes", out.display());
        assert_eq!(Gguf::open(out).unwrap().alignment(), 1 << 31);
        if let Some(h) = &harness {
            assert_ggml_reads_as_we_do(h, out);
        }
    }
    let mut left: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    left.sort();
    let made = ["a.gguf", "d.gguf", "edit0.gguf", "edit1.gguf", "edit2.gguf", "m.gguf", "s-00001-of-00001.gguf"];
    assert_eq!(left, made, "a temporary file was left behind");
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn set_refuses_a_key_that_is_both_a_value_and_a_prefix_unless_asked() {
    let dir = temp_dir("cli_set_prefix");
    let f = dir.join("t.gguf");
    let mut w = GgufWriter::create(&f).unwrap();
    w.add_kv("tokenizer.chat_template", "default").unwrap();
    w.add_kv("general.name", "x").unwrap();
    w.commit().unwrap();
    let before = std::fs::read(&f).unwrap();
    let path = f.to_str().unwrap();
    // A new key under an existing value, and a new value over existing keys: refused, file intact.
    for key in ["tokenizer.chat_template.tool_use", "general", "tokenizer"] {
        let o = gguf(&["set", path, key, "v"]);
        assert_eq!(o.status.code(), Some(1), "{key}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("would be both a value and a prefix with the existing key"), "{key}: {err}");
        assert!(err.contains("--allow-prefix"), "{err}");
        assert_eq!(std::fs::read(&f).unwrap(), before);
    }
    // A key that only shares characters is no conflict; an existing key is set as before. (Not
    // `tokenizer.chat_templates`: that standard key is an array of strings, not settable from text.)
    assert!(gguf(&["set", path, "tokenizer.chat_template_x", "a"]).status.success());
    assert!(gguf(&["set", path, "tokenizer.chat_template", "new"]).status.success());
    // Asked for: created, with a note.
    let o = gguf(&["set", path, "tokenizer.chat_template.tool_use", "tools", "--allow-prefix"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("note:"));
    let bytes = std::fs::read(&f).unwrap();
    let g = Gguf::from_slice(&bytes).unwrap();
    assert_eq!(g.get("tokenizer.chat_template"), Some(ValueRef::String("new".into())));
    assert_eq!(g.get("tokenizer.chat_template.tool_use"), Some(ValueRef::String("tools".into())));
}

/// A split or merge that cannot write its output names what it was writing, once: the shard for
/// `split` (not the input), the merged file for `merge` when writing it fails; nothing is left.
#[test]
fn split_and_merge_write_errors_name_the_output() {
    let dir = temp_dir("cli_split_write_errors");
    let missing = dir.join("no-such-folder");
    let o = gguf(&["split", "--split-max-tensors", "1", &small(), missing.join("sp").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("shard {}", missing.join("sp-00001-of-00003.gguf").display())), "{err}");
    assert!(!err.contains("small.gguf") && !err.contains(".gguf-tmp-"), "{err}");
    // A merge whose output cannot be created names its folder (and not a temporary name).
    let prefix = dir.join("sp");
    assert!(gguf(&["split", "--split-max-tensors", "1", &small(), prefix.to_str().unwrap()]).status.success());
    let first = dir.join("sp-00001-of-00003.gguf");
    let o = gguf(&["merge", first.to_str().unwrap(), missing.join("m.gguf").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(missing.to_str().unwrap()) && !err.contains(".gguf-tmp-"), "{err}");
    assert!(!missing.exists());
}

/// A split whose shard would be the input file itself (`x-00001-of-00001.gguf` split to the prefix
/// `x`) is refused, --force or not, and the input is left as it was.
#[test]
fn a_split_never_replaces_its_input() {
    let dir = temp_dir("cli_split_onto_input");
    let input = dir.join("x-00001-of-00001.gguf");
    std::fs::copy(small(), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    for force in [false, true] {
        let mut args = vec!["split", "--split-max-tensors", "100", input.to_str().unwrap()];
        let prefix = dir.join("x");
        args.push(prefix.to_str().unwrap());
        if force {
            args.push("--force");
        }
        let o = gguf(&args);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        assert_eq!(std::fs::read(&input).unwrap(), before, "--force {force}: the input was replaced");
    }
    let o = gguf(&[
        "split",
        "--split-max-tensors",
        "100",
        input.to_str().unwrap(),
        dir.join("x").to_str().unwrap(),
        "--force",
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("would replace the input"), "{o:?}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "a refused split left a file");
}
