//! `gguf inspect` of a split model on an HTTP server (`…-00001-of-00003.gguf`): a cut of SmolLM2
//! (4 layers, 39 tensors) split by llama.cpp's `llama-gguf-split` into 3 shards, served by one
//! range server at their names. The remote model is compared with `gguf inspect` of the local
//! shards (text, `--json`, `--stored-order`, `--memory`), with what `llama-gguf-split` says it
//! wrote (the shard count and each shard's tensor count) and with gguf-py's reading of each shard
//! (`tests/py/dump.py`: the tensors of all shards in order with their shard, dtype, shape, offset
//! and size; the first shard's keys without `split.*`; the parameter count as the sum of the
//! shapes' products). A missing shard, a shard of another split and a shard the server refuses
//! fail the command with an error naming that shard's URL.

use std::path::Path;

use gguf_serde::container::shard_path;
use gguf_tests::support::range_server::{Behaviour, RangeServer};
use gguf_tests::{llama_tool, model, path_arg as s, python, run_py, temp_dir};
use serde_json::Value as Json;

use crate::gguf;

/// SmolLM2 cut to 4 layers and split by `llama-gguf-split` with at most `max_tensors` tensors a
/// shard into `dir/PREFIX-0000i-of-0000N.gguf`; returns the split tool's standard output.
fn split_smollm2(dir: &Path, prefix: &str, max_tensors: u32) -> Option<String> {
    let split = llama_tool("llama-gguf-split")?;
    let src = model("SmolLM2-135M-Instruct.Q4_1.gguf")?;
    let cut = dir.join("smollm2-4.gguf");
    if !cut.exists() {
        gguf_tests::cut_layers(&src, &cut, 4);
    }
    let n = max_tensors.to_string();
    let o = gguf_tests::run_tool(&split, &["--split", "--split-max-tensors", &n, s(&cut), s(&dir.join(prefix))]);
    assert!(o.status.success(), "llama-gguf-split: {}", String::from_utf8_lossy(&o.stderr));
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// The shard count and each shard's tensor count as `llama-gguf-split` prints them (`n_split: 3`,
/// `split 00001: n_tensors = 15, total_size = …`).
fn split_tool_counts(stdout: &str) -> (usize, Vec<u64>) {
    let n_split = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("n_split:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("n_split in llama-gguf-split's output");
    let tensors = stdout
        .lines()
        .filter_map(|l| l.split("n_tensors = ").nth(1))
        .map(|r| r.split(',').next().unwrap().trim().parse().unwrap())
        .collect();
    (n_split, tensors)
}

/// The shards `dir/PREFIX-0000i-of-0000N.gguf` served at `m/NAME`.
fn serve(dir: &Path, names: &[String], behaviour: Behaviour) -> RangeServer {
    let files = names.iter().map(|n| (format!("m/{n}"), std::fs::read(dir.join(n)).unwrap())).collect();
    RangeServer::start_files(files, behaviour)
}

fn text(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `out` with each line's runs of spaces made one (the shard table's column width follows the
/// length of the paths, which differ between the URLs and the local paths).
fn words(out: &str) -> Vec<String> {
    out.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect()
}

#[test]
fn inspect_of_a_remote_split_model_is_the_local_models() {
    let dir = temp_dir("remote-split");
    let Some(split_out) = split_smollm2(&dir, "smol", 15) else { return };
    let names: Vec<String> = (0..3).map(|i| shard_path("smol", i, 3).to_str().unwrap().to_owned()).collect();
    let server = serve(&dir, &names, Behaviour::Ranges);
    let local_prefix = format!("{}/", dir.display());
    let url_prefix = format!("{}/m/", server.base);

    // What llama-gguf-split wrote: 3 shards of 15, 15 and 9 tensors.
    let (n_split, per_shard) = split_tool_counts(&split_out);
    assert_eq!((n_split, per_shard.len()), (3, 3), "{split_out}");

    // Any shard names the model; the output is inspect's of the local shards, URLs for paths.
    let first_local = dir.join(&names[0]);
    for given in [&names[0], &names[2]] {
        let url = format!("{url_prefix}{given}");
        for extra in [&[][..], &["--json"][..], &["--stored-order"][..], &["--memory", "--ctx", "1000"][..]] {
            let local = gguf(&[&["inspect", s(&first_local)], extra].concat());
            let remote = gguf(&[&["inspect", &url], extra].concat());
            assert!(local.status.success(), "{local:?}");
            assert!(remote.status.success(), "{}", String::from_utf8_lossy(&remote.stderr));
            let local = text(&local).replace(&local_prefix, &url_prefix);
            assert_eq!(words(&text(&remote)), words(&local), "{given} {extra:?}");
            // Each shard's cost on standard error, shard after shard.
            let err = String::from_utf8_lossy(&remote.stderr);
            for n in &names {
                assert!(err.contains(&format!("{url_prefix}{n}: fetched ")), "{err}");
            }
        }
    }

    // The JSON against llama-gguf-split's counts and gguf-py's reading of each shard.
    let remote = gguf(&["inspect", "--json", &format!("{url_prefix}{}", names[0])]);
    assert!(remote.status.success(), "{}", String::from_utf8_lossy(&remote.stderr));
    let ours: Json = serde_json::from_slice(&remote.stdout).unwrap();
    let shards = ours["shards"].as_array().unwrap();
    assert_eq!(shards.len(), n_split);
    for (i, (sh, n)) in shards.iter().zip(&per_shard).enumerate() {
        assert_eq!(sh["tensor_count"], *n, "shard {}", i + 1);
        assert_eq!(sh["path"], format!("{url_prefix}{}", names[i]));
        assert_eq!(sh["file_size"], std::fs::metadata(dir.join(&names[i])).unwrap().len());
    }
    assert_eq!(ours["tensors"].as_array().unwrap().len() as u64, per_shard.iter().sum::<u64>());
    let sizes: u64 = names.iter().map(|n| std::fs::metadata(dir.join(n)).unwrap().len()).sum();
    assert_eq!(ours["file_size"], sizes);

    let Some(py) = python() else { return };
    let theirs: Vec<Json> =
        names.iter().map(|n| run_py(&py, "dump.py", &[s(&dir.join(n)), "--no-tensor-hash"])).collect();
    for field in ["version", "endianness", "alignment", "data_offset"] {
        assert_eq!(ours[field], theirs[0][field], "{field}");
    }
    for (sh, t) in shards.iter().zip(&theirs) {
        assert_eq!(sh["data_offset"], t["data_offset"]);
    }
    // The tensors of every shard in order, each with its shard.
    let mut expected = Vec::new();
    for (i, t) in theirs.iter().enumerate() {
        for mut x in t["tensors"].as_array().unwrap().iter().cloned() {
            x["shard"] = (i + 1).into();
            expected.push(x);
        }
    }
    let tensors = ours["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), expected.len());
    for (o, e) in tensors.iter().zip(&expected) {
        for (k, v) in e.as_object().unwrap() {
            assert_eq!(&o[k], v, "{k} of tensor {}", e["name"]);
        }
    }
    let params: u64 = expected
        .iter()
        .map(|t| t["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap()).product::<u64>())
        .sum();
    assert_eq!(ours["parameters"], params);
    // The first shard's keys without the split keys, with gguf-py's types and values.
    let keys: Vec<&Json> = theirs[0]["metadata"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|kv| !kv["key"].as_str().unwrap().starts_with("split."))
        .collect();
    let metadata = ours["metadata"].as_array().unwrap();
    assert_eq!(metadata.len(), keys.len());
    for (o, e) in metadata.iter().zip(keys) {
        assert_eq!((&o["key"], &o["type"]), (&e["key"], &e["type"]));
        match (o.get("value"), o.get("length")) {
            // f32 values: ours in f32's shortest form, gguf-py's widened to f64.
            (Some(v), _) if o["type"] == "f32" => {
                assert_eq!(v.as_f64().unwrap() as f32, e["value"].as_f64().unwrap() as f32, "{}", e["key"])
            }
            (Some(v), _) => assert_eq!(v, &e["value"], "{}", e["key"]),
            (None, Some(n)) => assert_eq!(n.as_u64().unwrap() as usize, e["value"].as_array().unwrap().len()),
            (None, None) => panic!("{o}"),
        }
    }
}

#[test]
fn a_missing_foreign_or_refused_shard_fails_naming_its_url() {
    let dir = temp_dir("remote-split-errors");
    let Some(_) = split_smollm2(&dir, "smol", 15) else { return };
    // Another split of the same model, into 4 shards.
    split_smollm2(&dir, "other", 10);
    let names: Vec<String> = (0..3).map(|i| shard_path("smol", i, 3).to_str().unwrap().to_owned()).collect();
    let fail = |server: &RangeServer, shard: &str, reason: &str| {
        let out = gguf(&["inspect", &format!("{}/m/{}", server.base, names[0])]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("{}/m/{shard}", server.base)) && err.contains(reason), "{reason}: {err}");
    };

    // The third shard missing: 404.
    let server = serve(&dir, &names[..2], Behaviour::Ranges);
    fail(&server, &names[2], "shard 3 of 3 is missing");

    // The second shard of the 4-shard split in the place of ours.
    let mut files: Vec<(String, Vec<u8>)> =
        [&names[0], &names[2]].iter().map(|n| (format!("m/{n}"), std::fs::read(dir.join(n)).unwrap())).collect();
    files.push((format!("m/{}", names[1]), std::fs::read(dir.join("other-00002-of-00004.gguf")).unwrap()));
    let server = RangeServer::start_files(files, Behaviour::Ranges);
    fail(&server, &names[1], "split.count is 4, expected 3");

    // The server refuses the second shard.
    let server = serve(&dir, &names, Behaviour::ForbiddenAt("-00002-of-00003.gguf"));
    fail(&server, &names[1], "HTTP status 403");

    // --one-file reads the shard given alone.
    let out = gguf(&["inspect", "--one-file", "--json", &format!("{}/m/{}", server.base, names[0])]);
    assert!(out.status.success(), "{out:?}");
    let local = gguf(&["inspect", "--one-file", "--json", s(&dir.join(&names[0]))]);
    assert_eq!(text(&out), text(&local));
}
