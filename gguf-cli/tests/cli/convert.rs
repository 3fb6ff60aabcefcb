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

/// `--metadata FILE` gives the `general.*` keys gguf-py's `Metadata.load` gives with the same
/// override file (check_convert.py compares the whole file), after the model card and
/// `generation_config.json`, and the default file name the reference gives.
#[test]
fn convert_takes_a_metadata_override_as_the_reference() {
    let Some(ckpt) = make_hf_llama("cli_convert_metadata", HfLayout::TiedSingle, 36) else { return };
    let py = python().unwrap();
    std::fs::write(
        ckpt.join("README.md"),
        "---\nlicense: mit\nlicense_link: ''\ntags:\n- card-tag\nauthor: Card Author\n---\n",
    )
    .unwrap();
    std::fs::write(ckpt.join("generation_config.json"), r#"{"temperature": 0.7, "top_k": 20, "top_p": 0.8}"#).unwrap();
    let meta = ckpt.parent().unwrap().join("metadata.json");
    // Replaced, removed (null), added, list-valued and sampling keys; one the reference ignores.
    let json = r#"{
        "general.name": "Override Name", "general.basename": "Zed", "general.finetune": "chat",
        "general.version": "v3", "general.size_label": "7B", "general.author": null,
        "general.quantized_by": "someone", "general.url": "https://example.org/zed",
        "general.uuid": "0000-1111", "general.repo_url": "https://example.org/zed.git",
        "general.license.name": "tiny licence", "general.description": "From the override.",
        "general.tags": ["override-tag", "two"], "general.languages": [], "general.doi": "",
        "general.base_models": [{"name": "Base", "organization": "Org", "repo_url": "https://example.org/base"}],
        "general.datasets": [{"name": "Data", "url": null, "doi": ""}],
        "general.sampling.top_k": 40, "general.sampling.temp": null, "general.sampling.min_p": 0.05,
        "general.sampling.sequence": "kt", "general.license": "ignored-by-the-reference"
    }"#;
    std::fs::write(&meta, json).unwrap();
    for name in [None, Some("Named")] {
        let dir = ckpt.parent().unwrap().join(format!("meta-out-{}", name.is_some()));
        std::fs::create_dir_all(&dir).unwrap();
        // OUT an existing folder: the default file name inside it.
        let mut args = vec!["convert", ckpt.to_str().unwrap(), "-q", "--no-vocab", "--outtype", "f32"];
        args.extend(["-o", dir.to_str().unwrap(), "--metadata", meta.to_str().unwrap()]);
        if let Some(n) = name {
            args.extend(["--model-name", n]);
        }
        let o = gguf(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        // The key the reference ignores is named in a warning.
        assert!(text(&o.stderr).contains("`general.license` is not one of the keys"), "{}", text(&o.stderr));
        let written: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(written.len(), 1, "{written:?}");
        let out = &written[0];
        let check =
            [ckpt.to_str().unwrap(), out.to_str().unwrap(), "f32", "-", name.unwrap_or("-"), meta.to_str().unwrap()];
        let s = run_py(&py, "check_convert.py", &check);
        assert_eq!(s["tensors"], 20);
        assert_eq!(out.file_name().unwrap().to_str().unwrap(), s["default_file_name"].as_str().unwrap());
        let keys = text(&gguf(&["inspect", out.to_str().unwrap()]).stdout);
        for present in
            ["Zed", "override-tag", "general.sampling.top_k", "general.sampling.min_p", "general.quantized_by"]
        {
            assert!(keys.contains(present), "{present}: {keys}");
        }
        // Empty values are not written (gguf-py's add_string/add_array skip them).
        for absent in [
            "general.author",
            "general.sampling.temp",
            "card-tag",
            "ignored-by-the-reference",
            "general.languages",
            "general.doi",
            "general.dataset.0.url",
            "general.dataset.0.doi",
            "general.license.link",
        ] {
            assert!(!keys.contains(absent), "{absent}: {keys}");
        }
        assert_eq!(keys.contains("Named"), name.is_some(), "{keys}");
    }
    // Refusals, nothing written: a missing file, not JSON, not an object, a value of the wrong type.
    let out = ckpt.parent().unwrap().join("meta-bad.gguf");
    let bad = ckpt.parent().unwrap().join("bad-metadata.json");
    for (content, expect) in [
        (None, "--metadata"),
        (Some("{not json"), "not JSON"),
        (Some("[1, 2]"), "expected a JSON object of GGUF keys"),
        // The file named once, the key once.
        (Some(r#"{"general.name": 3}"#), "bad-metadata.json: `general.name` is 3, expected a string\n"),
        (Some(r#"{"general.sampling.top_k": 2.5}"#), "expected an integer"),
        (Some(r#"{"general.tags": "one"}"#), "expected an array of strings"),
        (Some(r#"{"general.base_models": ["org/model"]}"#), "expected an array of objects"),
        (Some(r#"{"general.datasets": [{"name": 1}]}"#), "`name` is 1, expected a string"),
    ] {
        let _ = std::fs::remove_file(&bad);
        if let Some(c) = content {
            std::fs::write(&bad, c).unwrap();
        }
        let o = gguf(&[
            "convert",
            ckpt.to_str().unwrap(),
            "-q",
            "--no-vocab",
            "-o",
            out.to_str().unwrap(),
            "--metadata",
            bad.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1), "{content:?}");
        assert!(text(&o.stderr).contains(expect), "{content:?}: {}", text(&o.stderr));
        // The value comes from the --metadata file: the checkpoint folder is not named.
        assert!(!text(&o.stderr).contains(ckpt.to_str().unwrap()), "{content:?}: {}", text(&o.stderr));
        assert!(!out.exists(), "{content:?}");
    }
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
    // A file of the user's with the name the unsplit temporary once had: left alone.
    let users = ckpt.parent().unwrap().join(".split.unsplit.tmp");
    std::fs::write(&users, b"mine").unwrap();
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
    // The unsplit file was a registered temporary and is gone; the user's file is untouched.
    assert_eq!(std::fs::read(&users).unwrap(), b"mine");
    let temps: Vec<_> = std::fs::read_dir(ckpt.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".gguf-tmp-"))
        .collect();
    assert!(temps.is_empty(), "{temps:?}");
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
    // The shard named is the first of the split, whatever the folder's order.
    assert!(text(&o.stderr).contains(first.to_str().unwrap()), "{}", text(&o.stderr));
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
    // Llama looks for tokenizer.model, then tokenizer.json (LlamaHfVocab, GPT-2 BPE): both are
    // named, and the way out.
    let err = text(&o.stderr);
    assert!(err.contains("no tokenizer: neither tokenizer.model (SentencePiece) nor tokenizer.json (BPE)"), "{err}");
    assert!(err.contains("--no-vocab"), "{err}");
    // The folder is named once (the error names it; the command adds it only to errors that
    // name no file).
    assert_eq!(err.matches(ckpt.to_str().unwrap()).count(), 1, "{err}");
    assert!(!out.exists());
    // With only one of them missing, the one read is named with what is wrong in it.
    std::fs::write(ckpt.join("tokenizer.model"), b"not a protobuf").unwrap();
    let o = gguf(&["convert", ckpt.to_str().unwrap(), "-q", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("tokenizer.model"), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("no tokenizer"), "{}", text(&o.stderr));
    assert!(!out.exists());
}

/// The files a folder holds, sorted.
fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// A default output file name that would not be one file name is refused before anything is
/// written, naming the key and its value: a `/` in `general.finetune` (the reference would open
/// `{dir}/…-a/b-F16.gguf` in a folder that does not exist, after converting), or a name over 255
/// bytes (which would fail at the final rename). Naming the output file converts it.
#[test]
fn convert_refuses_a_default_name_that_is_not_one_file_name() {
    let Some(ckpt) = make_hf_llama("cli_convert_bad_name", HfLayout::TiedSingle, 37) else { return };
    let before = listing(&ckpt);
    let meta = ckpt.parent().unwrap().join("slash.json");
    std::fs::write(&meta, r#"{"general.finetune": "a/b"}"#).unwrap();
    let args = ["convert", ckpt.to_str().unwrap(), "-q", "--no-vocab", "--outtype", "f32"];
    let o = gguf(&[&args[..], &["--metadata", meta.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains(r#"general.finetune = "a/b" would put a path separator"#), "{err}");
    assert_eq!(listing(&ckpt), before);
    // The same for an OUT that is a folder (the default name inside it).
    let folder = ckpt.parent().unwrap().join("bad-name-out");
    std::fs::create_dir_all(&folder).unwrap();
    let o = gguf(&[&args[..], &["--metadata", meta.to_str().unwrap(), "-o", folder.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(listing(&folder).is_empty());
    // A name over NAME_MAX: refused with its length, nothing written.
    let long = "n".repeat(250);
    let o = gguf(&[&args[..], &["--model-name", &long]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("bytes, more than the 255 a file name may have"), "{err}");
    assert!(err.contains("name the output file with -o"), "{err}");
    assert_eq!(listing(&ckpt), before);
    // An OUT whose own file name is too long: refused before the temporary file is made.
    let o = gguf(&[&args[..], &["-o", folder.join(format!("{long}-long-name.gguf")).to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("the output file name is 265 bytes"), "{}", text(&o.stderr));
    assert!(listing(&folder).is_empty());
    // An OUT file: the default name is not needed, and the override is written as it is.
    let out = folder.join("named.gguf");
    let o = gguf(&[&args[..], &["--metadata", meta.to_str().unwrap(), "-o", out.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&gguf(&["inspect", out.to_str().unwrap()]).stdout).contains("a/b"));
}

/// A checkpoint without tokenizer files is refused (exit 1, nothing written); the library's
/// refusal names both files and the CLI adds the flag that converts without a tokenizer.
#[test]
fn convert_without_a_tokenizer_names_no_vocab() {
    let Some(ckpt) = make_hf_llama("cli_convert_novocab", HfLayout::TiedSingle, 16) else { return };
    let out = ckpt.parent().unwrap().join("novocab.gguf");
    let o = gguf(&["convert", ckpt.to_str().unwrap(), "-q", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("tokenizer.model") && err.contains("tokenizer.json") && err.contains("--no-vocab"), "{err}");
    assert!(!out.exists());
}

/// Writes a LoRA adapter folder `my-lora` beside `ckpt` (Python's numpy and `safetensors`): peft's
/// names for a rank-8 pair on layer 0's `q_proj` (`[8, n_embd]` and `[n_embd, 8]`, F32 random),
/// peft's copy of the adapted weight (`q_proj.base_layer.weight`, zeros) and
/// `adapter_config.json` = `config`.
fn write_adapter(ckpt: &std::path::Path, config: &str) -> std::path::PathBuf {
    let dir = ckpt.parent().unwrap().join("my-lora");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("adapter_config.json"), config).unwrap();
    let cfg: serde_json::Value = serde_json::from_slice(&std::fs::read(ckpt.join("config.json")).unwrap()).unwrap();
    let n = cfg["hidden_size"].as_u64().unwrap().to_string();
    let script = "import sys, numpy as np\nfrom safetensors.numpy import save_file\nn = int(sys.argv[2])\n\
        rng = np.random.default_rng(7)\np = 'base_model.model.model.layers.0.self_attn.q_proj.'\n\
        save_file({p + 'lora_A.weight': rng.standard_normal((8, n), dtype=np.float32),\n\
        p + 'lora_B.weight': rng.standard_normal((n, 8), dtype=np.float32),\n\
        p + 'base_layer.weight': np.zeros((n, n), dtype=np.float32)}, sys.argv[1], metadata={'format': 'pt'})\n";
    let py = python().unwrap();
    let o = std::process::Command::new(py)
        .args(["-c", script, dir.join("adapter_model.safetensors").to_str().unwrap(), &n])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    dir
}

/// `gguf convert ADAPTER_DIR --base BASE_DIR`: the adapter keys and tensors, the reference's
/// default name (`{name}-{TYPE}-LoRA.gguf` in the adapter folder, F32 by default), and the
/// refusals (exit 1, nothing written): an adapter folder without `--base`, `--outtype auto`,
/// DoRA, a missing `lora_alpha`, a target the base does not have.
#[test]
fn convert_takes_a_lora_adapter_with_its_base() {
    let Some(ckpt) = make_hf_llama("cli_convert_lora", HfLayout::TiedSingle, 34) else { return };
    let good = r#"{"peft_type": "LORA", "lora_alpha": 16, "r": 8, "target_modules": ["q_proj"]}"#;
    let adapter = write_adapter(&ckpt, good);
    let (a, b) = (adapter.to_str().unwrap(), ckpt.to_str().unwrap());
    let o = gguf(&["convert", a, "-q"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("--base BASE_DIR"), "{}", text(&o.stderr));
    let o = gguf(&["convert", a, "--base", b, "-q"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // -q hides the progress bar only: the note on the copy left out is printed
    let note = "note: base_model.model.model.layers.0.self_attn.q_proj.base_layer.weight (peft's copy";
    assert!(text(&o.stderr).contains(note), "{}", text(&o.stderr));
    let out = adapter.join("My-Lora-F32-LoRA.gguf");
    assert!(out.exists(), "{}", text(&o.stdout));
    let listing = text(&gguf(&["inspect", out.to_str().unwrap()]).stdout);
    for want in
        ["adapter.type", "lora", "adapter.lora.alpha", "16", "blk.0.attn_q.weight.lora_a", "blk.0.attn_q.weight.lora_b"]
    {
        assert!(listing.contains(want), "{want} not in:\n{listing}");
    }
    let refused = |args: &[&str], why: &str| {
        let out = adapter.join("refused.gguf");
        let o = gguf(&[&["convert", a, "--base", b, "-q", "-o", out.to_str().unwrap()], args].concat());
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains(why), "{args:?}: {}", text(&o.stderr));
        assert!(!out.exists());
    };
    refused(&["--outtype", "auto"], "auto is not taken for an adapter");
    refused(&["--fp8-as-q8"], "--fp8-as-q8 is not taken for an adapter");
    refused(&["--no-vocab"], "--no-vocab is not taken for an adapter");
    std::fs::write(adapter.join("adapter_config.json"), r#"{"lora_alpha": 16, "use_dora": true}"#).unwrap();
    refused(&[], "use_dora (DoRA) is not converted");
    std::fs::write(adapter.join("adapter_config.json"), r#"{"r": 8}"#).unwrap();
    refused(&[], "`lora_alpha` is missing");
    std::fs::write(adapter.join("adapter_config.json"), good).unwrap();
    let cfg = ckpt.join("config.json");
    let c = std::fs::read_to_string(&cfg).unwrap().replace("LlamaForCausalLM", "GPT2LMHeadModel");
    std::fs::write(&cfg, c).unwrap();
    refused(&[], "the base model's architecture \"GPT2LMHeadModel\" is not converted");
    // a folder that is no adapter, named once
    let o = gguf(&["convert", b, "--base", b, "-q"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert_eq!(err.matches(b).count(), 1, "{err}");
    assert!(err.contains("not a PEFT adapter folder"), "{err}");
    let help = text(&gguf(&["convert", "--help"]).stdout);
    assert!(help.contains("--base <BASE_DIR>"), "{help}");
    for class in ["DeepseekV3ForCausalLM", "GptOssForCausalLM"] {
        assert!(help.contains(class), "{class} not in:\n{help}");
    }
}
