//! `gguf convert`: a tiny random checkpoint (`tests/py/make_hf_llama.py`) converted by the
//! command; the output checked by `tests/py/check_convert.py` (the reference's conversion redone
//! with numpy, read back with gguf-py); the default name, the refusals (exit 1, nothing
//! written), the split.

use gguf_tests::{make_hf_checkpoint, make_hf_llama, python, run_py, HfLayout};

use crate::gguf;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn convert_writes_what_check_convert_expects() {
    let Some(ckpt) = make_hf_llama("cli_convert", HfLayout::Sharded, 31) else { return };
    let py = python().unwrap();
    let out = ckpt.parent().unwrap().join("out-{ftype}.gguf");
    let o = gguf(&[
        "convert",
        ckpt.to_str().unwrap(),
        "-q",
        "--no-vocab",
        "--outtype",
        "q8_0",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // The template is filled with the output type, as the reference fills it.
    let written = ckpt.parent().unwrap().join("out-q8_0.gguf");
    assert!(written.exists(), "{}", text(&o.stdout));
    let s =
        run_py(&py, "check_convert.py", &[ckpt.to_str().unwrap(), written.to_str().unwrap(), "q8_0", "tiny-llama-hf"]);
    assert_eq!(s["tensors"], 21);
}

#[test]
fn convert_names_the_output_as_the_reference_and_refuses_to_replace_it() {
    let Some(ckpt) = make_hf_checkpoint("cli_convert_name", "qwen3", HfLayout::TiedSingle, 32) else { return };
    let o = gguf(&["convert", ckpt.to_str().unwrap(), "-q", "--no-vocab"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // auto: the first matrix is BF16. The name is gguf-py's Metadata of the folder name
    // ("Tiny Qwen3 Hf", spaces as '-' in the file name, as naming_convention writes it). The size label is gguf-py's rounding of the element count:
    // token_embd 48*64 = 3072, per block q 4096 + k 2048 + v 2048 + o 4096 + gate/up/down
    // 3*5120 + two norms 128 + q/k norms 32 = 27808, output_norm 64: 58752, "59K".
    let want = ckpt.join("Tiny-Qwen3-Hf-59K-BF16.gguf");
    assert!(want.exists(), "{}", text(&o.stdout));
    // -o naming an existing folder: the default name inside it.
    let folder = ckpt.parent().unwrap().join("outdir");
    std::fs::create_dir(&folder).unwrap();
    let o = gguf(&["convert", ckpt.to_str().unwrap(), "-q", "--no-vocab", "-o", folder.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(folder.join("Tiny-Qwen3-Hf-59K-BF16.gguf").exists(), "{}", text(&o.stdout));
    let again = gguf(&["convert", ckpt.to_str().unwrap(), "-q", "--no-vocab"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(text(&again.stderr).contains("exists"), "{}", text(&again.stderr));
}

/// The model card's front matter and `--model-name` give the `general.*` keys gguf-py's
/// `Metadata.load` gives for the same folder and name (check_convert.py compares the whole file).
#[test]
fn convert_takes_the_model_card_and_model_name_as_the_reference() {
    let Some(ckpt) = make_hf_llama("cli_convert_card", HfLayout::TiedSingle, 35) else { return };
    let py = python().unwrap();
    let card = "---\nlicense: apache-2.0\nlicense_name: tiny\nlanguage:\n- en\n- fr\ntags:\n- text-generation\n- \
                tiny\nbase_model:\n- org/Base-Model-1B\ndatasets:\n- some-org/some-data\nauthor: Someone\n\
                description: A tiny model.\n---\n# Tiny\n\nText after the front matter.\n";
    std::fs::write(ckpt.join("README.md"), card).unwrap();
    for name in [None, Some("My Model v2")] {
        let out = ckpt.parent().unwrap().join(format!("card-{}.gguf", name.is_some()));
        let mut args = vec!["convert", ckpt.to_str().unwrap(), "-q", "--no-vocab", "--outtype", "f32"];
        args.extend(["-o", out.to_str().unwrap()]);
        if let Some(n) = name {
            args.extend(["--model-name", n]);
        }
        let o = gguf(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let mut check = vec![ckpt.to_str().unwrap(), out.to_str().unwrap(), "f32", "-"];
        check.extend(name);
        let s = run_py(&py, "check_convert.py", &check);
        assert_eq!(s["tensors"], 20);
        // The card was read (check_convert.py's expected keys come from it too).
        let keys = text(&gguf(&["inspect", out.to_str().unwrap()]).stdout);
        assert!(keys.contains("general.license") && keys.contains("apache-2.0"), "{keys}");
        assert!(keys.contains("general.base_model.0.name"), "{keys}");
        assert_eq!(keys.contains("My Model v2"), name.is_some(), "{keys}");
    }
    // A front matter that is not YAML: refused, naming the card, nothing written.
    std::fs::write(ckpt.join("README.md"), "---\nlicense: [unclosed\n---\n").unwrap();
    let out = ckpt.parent().unwrap().join("card-bad.gguf");
    let o = gguf(&["convert", ckpt.to_str().unwrap(), "-q", "--no-vocab", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("README.md: the front matter is not YAML"), "{}", text(&o.stderr));
    assert!(!out.exists());
}

#[test]
fn convert_never_writes_over_a_file_of_the_checkpoint() {
    let Some(ckpt) = make_hf_llama("cli_convert_over_input", HfLayout::TiedSingle, 34) else { return };
    for name in ["model.safetensors", "config.json"] {
        let input = ckpt.join(name);
        let before = std::fs::read(&input).unwrap();
        // With --force or not: the output would replace the file being converted.
        for force in [&["--force"][..], &[]] {
            let mut args = vec!["convert", ckpt.to_str().unwrap(), "-q", "--no-vocab", "-o", input.to_str().unwrap()];
            args.extend(force);
            let o = gguf(&args);
            assert_eq!(o.status.code(), Some(1), "{name}");
            let err = text(&o.stderr);
            assert!(err.contains("is a file of the checkpoint being converted"), "{name}: {err}");
            assert_eq!(std::fs::read(&input).unwrap(), before, "{name} changed");
        }
    }
    // OUT ending in a separator is a folder: one that does not exist is refused, not a file name.
    let missing = format!("{}/", ckpt.parent().unwrap().join("no-such-folder").display());
    let o = gguf(&["convert", ckpt.to_str().unwrap(), "-q", "--no-vocab", "-o", &missing]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("no such folder"), "{}", text(&o.stderr));
    assert!(!ckpt.parent().unwrap().join("no-such-folder").exists());
    // A blank --model-name is a usage error.
    let o = gguf(&["convert", ckpt.to_str().unwrap(), "-q", "--no-vocab", "--model-name", " "]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("the model name is empty"), "{}", text(&o.stderr));
}

#[test]
fn convert_refuses_an_unknown_architecture_before_writing() {
    let Some(ckpt) = make_hf_llama("cli_convert_refuse", HfLayout::TiedSingle, 33) else { return };
    let cfg = ckpt.join("config.json");
    let c = std::fs::read_to_string(&cfg).unwrap().replace("LlamaForCausalLM", "GPT2LMHeadModel");
    std::fs::write(&cfg, c).unwrap();
    let out = ckpt.parent().unwrap().join("refused.gguf");
    let o = gguf(&["convert", ckpt.to_str().unwrap(), "-q", "--no-vocab", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("architecture \"GPT2LMHeadModel\" is not converted"), "{}", text(&o.stderr));
    assert!(!out.exists());
    let left: Vec<_> = std::fs::read_dir(ckpt.parent().unwrap()).unwrap().filter_map(|e| e.ok()).collect();
    assert!(left.iter().all(|e| !e.file_name().to_string_lossy().ends_with(".tmp")));
}

#[test]
fn convert_splits_into_shards() {
    let Some(ckpt) = make_hf_llama("cli_convert_split", HfLayout::Sharded, 34) else { return };
    let out = ckpt.parent().unwrap().join("split.gguf");
    let o = gguf(&[
        "convert",
        ckpt.to_str().unwrap(),
        "-q",
        "--no-vocab",
        "--outtype",
        "f32",
        "--split-max-size",
        "40K",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // 40 KB of tensor data per shard; the F32 model has about 250 KB.
    let stdout = text(&o.stdout);
    let shards: Vec<&str> = stdout.lines().collect();
    assert!(shards.len() > 3, "{stdout}");
    let first = ckpt.parent().unwrap().join(format!("split-00001-of-{:05}.gguf", shards.len()));
    assert!(first.exists(), "{stdout}");
    // Again, into another count: the shards there are replaced only with --force.
    let again = |extra: &[&str]| {
        let mut args = vec!["convert", ckpt.to_str().unwrap(), "-q", "--no-vocab", "--outtype", "F32"];
        args.extend(["--split-max-size", "80K", "-o", out.to_str().unwrap()]);
        args.extend(extra);
        gguf(&args)
    };
    let o = again(&[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("exists (a shard of OUT; use --force"), "{}", text(&o.stderr));
    assert!(again(&["--force"]).status.success());
    let merged = ckpt.parent().unwrap().join("merged.gguf");
    let m = gguf(&["merge", first.to_str().unwrap(), merged.to_str().unwrap()]);
    assert!(m.status.success(), "{}", text(&m.stderr));
    let py = python().unwrap();
    let s =
        run_py(&py, "check_convert.py", &[ckpt.to_str().unwrap(), merged.to_str().unwrap(), "f32", "tiny-llama-hf"]);
    assert_eq!(s["tensors"], 21);
}

#[test]
fn convert_refuses_a_checkpoint_without_a_tokenizer_unless_told() {
    let Some(ckpt) = make_hf_llama("cli_convert_novocab", HfLayout::TiedSingle, 35) else { return };
    let out = ckpt.parent().unwrap().join("novocab.gguf");
    let o = gguf(&["convert", ckpt.to_str().unwrap(), "-q", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    // Llama looks for tokenizer.model, then tokenizer.json (LlamaHfVocab, GPT-2 BPE): the last
    // file looked for is named.
    assert!(text(&o.stderr).contains("tokenizer.json: not found"), "{}", text(&o.stderr));
    assert!(!out.exists());
}
