//! Regressions from a new user's session: outputs that are not regular files, symbolic links,
//! FIFOs, merging onto a shard, overflowing integers, control characters in keys.

use std::os::unix::fs::FileTypeExt;
use std::process::Command;

use gguf_serde::{Gguf, GgufWriter, ValueRef};
use gguf_tests::temp_dir;

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
    assert!(text.contains("gap.gguf: OK (version 3, 1 keys, 1 tensors)"), "{text}");
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

/// Found by the `serde` fuzz target: 57 bytes declaring `general.alignment = 2^31` (a power of two ggml accepts). `gguf
/// validate` said OK, `inspect` gave a data offset of 2 GiB and `set` started writing 2 GiB of
/// zeros, leaving its temporary file behind when stopped. Every command now refuses the file
/// with the reader's error naming the key and its offset, writes nothing and leaves no temporary.
#[test]
fn an_alignment_of_two_gib_is_refused_by_every_command_without_writing() {
    let bytes: Vec<u8> = [
        &b"GGUF"[..],
        &3u32.to_le_bytes(),
        &0u64.to_le_bytes(),
        &1u64.to_le_bytes(),
        &17u64.to_le_bytes(),
        b"general.alignment",
        &4u32.to_le_bytes(),
        &(1u32 << 31).to_le_bytes(),
    ]
    .concat();
    assert_eq!(bytes.len(), 57);
    let dir = temp_dir("cli_alignment_2gib");
    let file = dir.join("a.gguf");
    std::fs::write(&file, &bytes).unwrap();
    let f = file.to_str().unwrap();
    let out = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    let (o1, o2, o3) = (out("out.gguf"), out("shard"), out("q.gguf"));
    let commands: [Vec<&str>; 10] = [
        vec!["validate", f],
        vec!["inspect", f],
        vec!["inspect", "--json", f],
        vec!["set", f, "general.name", "x"],
        vec!["rm", f, "general.alignment"],
        vec!["rename", f, "general.alignment", "general.other"],
        vec!["split", f, &o2],
        vec!["merge", f, &o1],
        vec!["quantize", f, &o3, "Q8_0"],
        vec!["dequantize", f, &o1],
    ];
    for args in &commands {
        let o = gguf(args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {stdout} {stderr}");
        assert!(
            format!("{stdout}{stderr}")
                .contains("general.alignment at offset 24 is 2147483648, more than the largest accepted (65536)"),
            "{args:?}: {stdout} {stderr}"
        );
        let mut left: Vec<String> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        left.sort();
        assert_eq!(left, ["a.gguf"], "{args:?} left files behind");
        assert_eq!(std::fs::read(&file).unwrap(), bytes, "{args:?} changed the file");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The same file at the largest alignment accepted (64 KiB): `set` writes a file that is a few
/// bytes longer, not one padded to the alignment (the input has no padding), and `inspect`
/// reports the data offset of a file without tensors as ggml does: the end of the tensor infos.
#[test]
fn editing_a_file_at_the_largest_alignment_costs_a_few_bytes() {
    let mut bytes: Vec<u8> = [
        &b"GGUF"[..],
        &3u32.to_le_bytes(),
        &0u64.to_le_bytes(),
        &1u64.to_le_bytes(),
        &17u64.to_le_bytes(),
        b"general.alignment",
        &4u32.to_le_bytes(),
        &(1u32 << 16).to_le_bytes(),
    ]
    .concat();
    let dir = temp_dir("cli_alignment_max");
    let file = dir.join("a.gguf");
    std::fs::write(&file, &bytes).unwrap();
    let f = file.to_str().unwrap();
    let o = gguf(&["inspect", f]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && text.contains("data offset:  57\n"), "{text}");
    let o = gguf(&["set", f, "general.name", "x"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The pair appended: key length, "general.name", type STRING, value length, "x".
    bytes[16..24].copy_from_slice(&2u64.to_le_bytes());
    bytes.extend([&12u64.to_le_bytes()[..], b"general.name", &8u32.to_le_bytes(), &1u64.to_le_bytes(), b"x"].concat());
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
