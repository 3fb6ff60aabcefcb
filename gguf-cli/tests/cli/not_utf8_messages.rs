//! Messages about arguments that are not UTF-8 (Unix): an option's value, a positional argument
//! or a path is shown in the escaped form `inspect` shows names in (`\xNN` for each byte that is
//! not UTF-8), and the refusal names the option, never clap's generic "invalid UTF-8 was detected
//! in one or more arguments" nor the lossy U+FFFD.

use super::gguf_ok;
use super::not_utf8::gguf_os;

/// The subcommands whose options a user types.
const SUBCOMMANDS: [&str; 15] = [
    "inspect",
    "validate",
    "split",
    "merge",
    "set",
    "rm",
    "rename",
    "diff",
    "quantize",
    "dequantize",
    "convert",
    "export",
    "import",
    "show",
    "hash",
];

/// The options that take a value, as `gguf SUB --help` lists them (`-t, --type <TYPE>`).
fn options_with_values(sub: &str) -> Vec<String> {
    let help = gguf_ok(&[sub, "--help"]);
    let mut options = Vec::new();
    for line in help.lines() {
        let mut words = line.split_whitespace().map(|w| w.trim_end_matches(','));
        let Some(first) = words.next().filter(|w| w.starts_with('-')) else { continue };
        let (option, value) = match first.starts_with("--") {
            true => (first, words.next()),
            false => (words.next().unwrap_or_default(), words.next()),
        };
        if option.starts_with("--") && value.is_some_and(|v| v.starts_with('<')) {
            options.push(option.to_owned());
        }
    }
    options
}

/// Every option of every subcommand, given the value `x` FF, either takes the bytes (a path, a
/// glob, a name: the run then stops for the missing arguments) or is refused (exit 2) naming the
/// option and showing the value `x\xff`. The options of issue 28 are among the refused.
#[test]
fn not_utf8_option_values_are_refused_by_name() {
    let mut refused = Vec::new();
    for sub in SUBCOMMANDS {
        let options = options_with_values(sub);
        assert!(!options.is_empty() || matches!(sub, "validate" | "rm" | "rename" | "merge" | "import"), "{sub}");
        for option in options {
            let o = gguf_os(&[sub.as_bytes(), option.as_bytes(), b"x\xff"]);
            let err = String::from_utf8(o.stderr).unwrap();
            assert_eq!(o.status.code(), Some(2), "{sub} {option}: {err}");
            assert!(!err.contains('\u{fffd}') && !err.contains("invalid UTF-8 was detected"), "{sub} {option}: {err}");
            if err.contains("required arguments were not provided") {
                continue;
            }
            assert!(err.contains(&format!(r"invalid value 'x\xff' for '{option} <")), "{sub} {option}: {err}");
            refused.push(format!("{sub} {option}"));
        }
    }
    for want in [
        "quantize --type",
        "quantize --output-tensor-type",
        "quantize --token-embedding-type",
        "quantize --threads",
        "dequantize --type",
        "dequantize --threads",
        "inspect --items",
        "inspect --ctx",
        "split --split-max-tensors",
        "split --split-max-size",
        "set --type",
        "diff --items",
        "convert --outtype",
        "convert --model-name",
        "export --dtype",
        "show --rows",
    ] {
        assert!(refused.iter().any(|r| r == want), "{want} not in {refused:?}");
    }
    // A list of possible values is shown with the refusal.
    let o = gguf_os(&[b"export", b"--dtype", b"x\xff"]);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("[possible values: keep, f32, f16, bf16]"), "{err}");
    let o = gguf_os(&[b"completions", b"x\xff"]);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(o.status.code() == Some(2) && err.contains(r"invalid value 'x\xff' for '<SHELL>'"), "{err}");
}

/// The llama-quantize-style positional TYPE and NTHREADS (and an argument too many), not UTF-8,
/// are refused (exit 2) showing them escaped; nothing is read.
#[test]
fn quantize_positional_arguments_not_utf8_are_shown_escaped() {
    for (args, want) in [
        (&[&b"m.gguf"[..], b"o.gguf", b"Q4\xff"][..], r#"unknown file type "Q4\xff""#),
        (&[b"m.gguf", b"o.gguf", b"Q4_0", b"4\xff"], r#"invalid nthread "4\xff""#),
        (&[b"m.gguf", b"o.gguf", b"Q4_0", b"4", b"\xff"], r#"unexpected argument "\xff""#),
    ] {
        let o = gguf_os(&[&[&b"quantize"[..]][..], args].concat());
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want) && !err.contains('\u{fffd}'), "want {want}, got {err}");
    }
}

/// Paths that are not UTF-8 (IN, OUT, `--imatrix`, shards, split and merge paths) are shown in
/// messages and listings as `\xNN` escapes (never U+FFFD), each once.
#[test]
fn not_utf8_paths_are_shown_escaped_in_messages() {
    use std::os::unix::ffi::OsStrExt;
    let dir = gguf_tests::temp_dir("not-utf8-path-messages");
    let d = dir.to_str().expect("a UTF-8 temporary folder");
    let path = |name: &[u8]| [dir.as_os_str().as_bytes(), b"/", name].concat();
    let (model, out, none) = (path(b"m\xff.gguf"), path(b"o\xfe.gguf"), path(b"n\xfd.gguf"));
    super::not_utf8::tiny_llama(std::path::Path::new(std::ffi::OsStr::from_bytes(&model)));
    std::fs::write(std::ffi::OsStr::from_bytes(&out), b"").unwrap();
    let imatrix = path(b"i\xfc.dat");
    let shards = path(b"s\xfb");
    let cases: [(&[&[u8]], i32, String); 9] = [
        (&[b"quantize", &none, b"Q4_0"], 1, format!(r"I/O error opening {d}/n\xfd.gguf: ")),
        (&[b"quantize", &model, &out, b"Q4_0"], 1, format!(r"{d}/o\xfe.gguf exists (use --force to replace it)")),
        (&[b"quantize", b"--imatrix", &imatrix, &model, b"Q4_0"], 1, format!(r"I/O error reading {d}/i\xfc.dat: ")),
        (
            &[b"quantize", b"--dry-run", b"--keep-split", &model, &out, b"Q4_0"],
            0,
            format!(r"{d}/o\xfe-00001-of-00001.gguf: "),
        ),
        (&[b"dequantize", &model, &out], 1, format!(r"{d}/o\xfe.gguf exists (use --force to replace it)")),
        (&[b"split", &none, &shards], 1, format!(r"I/O error opening {d}/n\xfd.gguf: ")),
        (&[b"merge", &none, &out], 1, format!(r"merging {d}/n\xfd.gguf into {d}/o\xfe.gguf: ")),
        (&[b"inspect", &none], 1, format!(r"I/O error opening {d}/n\xfd.gguf: ")),
        (&[b"quantize", b"-q", b"--force", &model, &out, b"Q8_0"], 0, format!(r"{d}/o\xfe.gguf: Q8_0, ")),
    ];
    for (args, code, want) in cases {
        let o = gguf_os(args);
        let text = format!("{}{}", String::from_utf8(o.stdout).unwrap(), String::from_utf8(o.stderr).unwrap());
        assert_eq!(o.status.code(), Some(code), "{text}");
        assert!(text.contains(&want) && !text.contains('\u{fffd}'), "want {want}, got {text}");
        assert_eq!(text.matches(&want).count(), 1, "{text}");
    }
}

/// `--override-kv k=blob\xff:1` (the byte FF in TYPE) is refused for its unknown type, named
/// escaped, as llama.cpp's `string_parse_kv_override` refuses it for its type ("invalid type
/// for KV override"), not for its value; llama-quantize refuses it too (checked when it is
/// built).
#[test]
fn not_utf8_override_kv_type_is_named_unknown() {
    let dir = gguf_tests::temp_dir("not-utf8-override-kv-type");
    let model = dir.join("m.gguf");
    super::not_utf8::tiny_llama(&model);
    let m = model.as_os_str().as_encoded_bytes();
    let o = gguf_os(&[b"quantize", b"--override-kv", b"k=blob\xff:1", m, b"Q4_0"]);
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(r#"malformed KV override "k=blob\xff:1": unknown type "blob\xff" (int, float, bool or str)"#),
        "{err}"
    );
    if let Some(lq) = gguf_tests::llama_quantize() {
        use std::os::unix::ffi::OsStrExt;
        let arg = std::ffi::OsStr::from_bytes(b"k=blob\xff:1");
        let o = std::process::Command::new(lq).arg("--override-kv").arg(arg).arg(&model).arg("Q4_0").output().unwrap();
        // Refused while the arguments are read (its log line is not flushed before it exits):
        // the usage, and no model read.
        let log = String::from_utf8_lossy(&[o.stdout, o.stderr].concat()).into_owned();
        assert!(!o.status.success() && log.contains("usage: ") && !log.contains("loaded meta data"), "{log}");
    }
}

/// `quantize --dry-run` says which tensor it leaves out for a name that starts with a NUL byte
/// (llama-quantize drops it: `quantize_cuts_names_at_a_nul_as_llama_quantize` compares the files),
/// and the real run writes every other tensor and not that one, and says so in the same words.
#[test]
fn not_utf8_dry_run_names_a_tensor_left_out_for_a_nul() {
    let dir = gguf_tests::temp_dir("dry-run-left-out");
    let model = dir.join("m.gguf");
    super::not_utf8::llama_with(&model, &[b"\x00abc.weight", b"x\xff.weight"], |_| {});
    let dry = gguf_ok(&["quantize", "--dry-run", super::s(&model), "Q8_0"]);
    let left: Vec<&str> = dry.lines().filter(|l| l.starts_with("left out: ")).collect();
    assert_eq!(
        left,
        [
            r"left out: \0abc.weight (its name starts with a NUL byte, which ends a name in llama.cpp: llama-quantize leaves it out)"
        ],
        "{dry}"
    );
    assert!(dry.contains("\n4 tensors: "), "{dry}");
    let out = dir.join("q.gguf");
    // The real run says it too, after its summary, in the dry run's words.
    let said = gguf_ok(&["quantize", "-q", super::s(&model), super::s(&out), "Q8_0"]);
    let real: Vec<&str> = said.lines().filter(|l| l.starts_with("left out: ")).collect();
    assert_eq!(real, left, "{said}");
    assert!(said.lines().last().is_some_and(|l| l.starts_with("left out: ")), "{said}");
    let f = gguf_serde::Gguf::open(&out).unwrap();
    assert_eq!(f.tensor_count(), 4);
    assert!(f.tensors().all(|t| t.name.as_bytes().first() != Some(&0)));
    // A count of one is singular.
    let d = dir.join("d.gguf");
    let said = gguf_ok(&["dequantize", "--exclude", "blk.*", "--exclude", "x?.weight", super::s(&out), super::s(&d)]);
    assert!(said.contains(": 1 tensor converted to F32, 3 kept;"), "{said}");
}

/// A `--tensor-type-file` rule is labelled in the `--dry-run` plan with its file (escaped when not
/// UTF-8) and line, a `--tensor-type` rule with the option; a bad rule names its line.
#[test]
fn not_utf8_tensor_type_file_rules_name_their_file_and_line() {
    use std::os::unix::ffi::OsStrExt;
    let dir = gguf_tests::temp_dir("tensor-type-file-labels");
    super::not_utf8::tiny_llama(&dir.join("m.gguf"));
    std::fs::write(dir.join(std::ffi::OsStr::from_bytes(b"r\xfe.txt")), "ffn=q5_1\n\n  attn_q=q4_1 token=q8_0\n")
        .unwrap();
    std::fs::write(dir.join("bad.txt"), "ffn=q5_1\nattn=q9\n").unwrap();
    let run = |args: &[&[u8]]| {
        let mut c = crate::gguf_command();
        c.current_dir(&*dir).args(args.iter().map(|a| std::ffi::OsStr::from_bytes(a)));
        gguf_tests::output_with_deadline(&mut c, crate::HANG)
    };
    let o = run(&[
        b"quantize",
        b"--dry-run",
        b"--tensor-type-file",
        b"r\xfe.txt",
        b"--tensor-type",
        b"x=q8_0",
        b"m.gguf",
        b"Q4_0",
    ]);
    let plan = String::from_utf8(o.stdout).unwrap();
    assert!(o.status.success(), "{plan}");
    let rule = |name: &str| {
        let row = plan.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("{name}: {plan}"));
        row.split("  ").filter(|c| !c.is_empty()).last().unwrap().trim().to_owned()
    };
    assert_eq!(rule("blk.0.ffn_down.weight"), r"--tensor-type-file r\xfe.txt:1 ffn");
    assert_eq!(rule("blk.0.attn_q.weight"), r"--tensor-type-file r\xfe.txt:3 attn_q");
    assert_eq!(rule("token_embd.weight"), r"--tensor-type-file r\xfe.txt:3 token");
    assert_eq!(rule(r"x\xff.weight"), "--tensor-type x");
    let o = run(&[b"quantize", b"--dry-run", b"--tensor-type-file", b"bad.txt", b"m.gguf", b"Q4_0"]);
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(r#"--tensor-type-file bad.txt:2: invalid quantization type "q9""#), "{err}");
}

/// A key that starts with a NUL byte is refused before anything is written, naming the key
/// (escaped), its offset in the input and the input, not "writing OUT": llama-quantize would copy
/// it as the empty key, on which ggml aborts (checked when llama-quantize is built). The dry run
/// says the real run would fail, the same way.
#[test]
fn not_utf8_key_starting_with_nul_is_refused_where_it_is() {
    use gguf_serde::{GgufStr, ValueRef};
    let dir = gguf_tests::temp_dir("nul-key-refused");
    let model = dir.join("m.gguf");
    super::not_utf8::llama_with(&model, &[], |w| {
        w.add_kv_ref(GgufStr::from_bytes(b"\x00abc"), ValueRef::U32(1)).unwrap();
    });
    // The pair's offset, from the layout: the 24-byte header, then each earlier pair (u64 key
    // length, key, u32 type, value: the architecture a u64-long string, the others 4 bytes).
    let earlier = [
        ("general.architecture", 8 + 5),
        ("llama.context_length", 4),
        ("llama.embedding_length", 4),
        ("llama.block_count", 4),
        ("llama.feed_forward_length", 4),
        ("llama.attention.head_count", 4),
        ("llama.attention.head_count_kv", 4),
        ("llama.attention.layer_norm_rms_epsilon", 4),
    ];
    let offset: usize = 24 + earlier.iter().map(|(k, v)| 8 + k.len() + 4 + v).sum::<usize>();
    let out = dir.join("o.gguf");
    let want = format!(r#"cannot quantize: the key "\0abc" at offset {offset} starts with a NUL byte"#);
    for args in [vec!["quantize", "-q"], vec!["quantize", "--dry-run"]] {
        let o = super::gguf(&[&args[..], &[super::s(&model), super::s(&out), "Q8_0"]].concat());
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains(&want) && !err.contains("writing"), "want {want}, got {err}");
        assert!(err.starts_with(&format!("error: {}: ", model.display())), "{err}");
        assert!(!out.exists());
    }
    if let Some(lq) = gguf_tests::llama_quantize() {
        let o = std::process::Command::new(lq).arg(&model).arg(dir.join("t.gguf")).arg("Q8_0").output().unwrap();
        let log = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && log.contains("GGML_ASSERT(!key.empty()) failed"), "{log}");
    }
}

/// clap's own refusals of the command line (an unknown option or subcommand, an argument too
/// many, with its tip) show an argument that is not UTF-8 escaped, exit status 2 as before.
#[test]
fn not_utf8_unknown_arguments_are_shown_escaped() {
    for (args, want) in [
        (&[&b"inspect"[..], b"-\xff", b"a.gguf"][..], r"unexpected argument '-\xff' found"),
        (&[b"inspect", b"-\xff", b"a.gguf"], r"to pass '-\xff' as a value, use '-- -\xff'"),
        (&[b"inspect", b"a.gguf", b"b\xff"], r"unexpected argument 'b\xff' found"),
        (&[b"insp\xff"], r"unrecognized subcommand 'insp\xff'"),
    ] {
        let o = gguf_os(args);
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want) && !err.contains('\u{fffd}'), "want {want}, got {err}");
    }
}
