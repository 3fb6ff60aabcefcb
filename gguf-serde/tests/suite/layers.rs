//! The layer map of the crate docs (gguf-serde/src/lib.rs, "The layers"), checked (the map here
//! is compared with that table): code in a
//! layer's folder names only its own layer, the layers below it, and the umbrella [`Error`] of
//! `error.rs`. A path through a crate-root re-export (`crate::Gguf`) counts as the layer the
//! re-export comes from, read off lib.rs's `pub use` lines. Comments (doc links may point up: "a
//! split is written by `ops::split`") and string literals are not code and are not read.
//!
//! [`Error`]: gguf_serde::Error

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Each layer folder with the layers it may use besides itself, bottom-up. `error` is the
/// umbrella: `Error`, `Context`, `ErrorKind` and the conversions, which every layer returns.
const LAYERS: &[(&str, &[&str])] = &[
    ("format", &[]),
    ("container", &["format"]),
    ("codec", &["format"]),
    ("metadata", &["format", "container"]),
    ("model", &["format", "container", "codec", "metadata"]),
    ("ops", &["format", "container", "codec", "metadata", "model"]),
    ("convert", &["format", "container", "codec", "metadata", "model", "ops"]),
];

/// Modules of the crate root that are not layers, with the layer they belong to.
const OTHER_ROOT_MODULES: &[(&str, &str)] = &[("error", "error"), ("__private", "model")];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source with comments and the contents of string and char literals blanked (newlines kept,
/// so that line numbers stay).
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |c: u8| if c == b'\n' { b'\n' } else { b' ' };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    out.push(b' ');
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0usize;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        out.extend_from_slice(b"  ");
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        out.extend_from_slice(b"  ");
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        out.push(blank(b[i]));
                        i += 1;
                    }
                }
            }
            // Raw strings: r"…", r#"…"#, br"…".
            b'r' if matches!(b.get(i + 1), Some(b'"' | b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') || b[i - 1] == b'b') =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    out.push(b[i]);
                    i += 1;
                    continue;
                }
                out.resize(out.len() + (j + 1 - i), b' ');
                i = j + 1;
                while i < b.len() {
                    if b[i] == b'"' && b[i + 1..].iter().take(hashes).filter(|&&c| c == b'#').count() == hashes {
                        out.resize(out.len() + 1 + hashes, b' ');
                        i += 1 + hashes;
                        break;
                    }
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
            b'"' => {
                out.push(b' ');
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        out.push(b' ');
                        i += 1;
                    }
                    if i < b.len() {
                        out.push(blank(b[i]));
                        i += 1;
                    }
                }
                out.push(b' ');
                i += 1;
            }
            // A char literal ('x', '\n', '\''), not a lifetime ('a).
            b'\'' if b.get(i + 2) == Some(&b'\'') || b.get(i + 1) == Some(&b'\\') => {
                out.push(b' ');
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    if b[i] == b'\\' {
                        out.push(b' ');
                        i += 1;
                    }
                    out.push(b' ');
                    i += 1;
                }
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out.truncate(b.len());
    String::from_utf8(out).unwrap()
}

/// Every path that starts at `crate::` in `code`, brace groups expanded (`crate::{a::B, c}` gives
/// `a::B` and `c`), with the byte offset where it starts; only the first segment matters here.
fn crate_paths(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("crate::") {
        let start = from + at;
        from = start + "crate::".len();
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `$crate::` or an identifier ending in `crate`
        }
        let rest = code[from..].trim_start();
        if rest.starts_with('{') {
            // The first segment of each top-level item of the group.
            let mut depth = 0usize;
            let mut item_start = true;
            for (k, c) in rest.char_indices() {
                match c {
                    '{' => {
                        depth += 1;
                        if depth == 1 {
                            item_start = true;
                            continue;
                        }
                    }
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => {
                        item_start = true;
                        continue;
                    }
                    _ => {}
                }
                if depth == 1 && item_start && (c.is_alphanumeric() || c == '_') {
                    let name: String = rest[k..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    found.push((start, name));
                    item_start = false;
                } else if depth == 1 && !c.is_whitespace() {
                    item_start = false;
                }
            }
        } else {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                found.push((start, name));
            }
        }
    }
    found
}

/// The crate root's re-exports, name → the root module they come from (`Gguf` → `container`),
/// read off lib.rs's `pub use module::{…};` and `pub use module::Name;` lines.
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let code = code_only(lib);
    let mut map = BTreeMap::new();
    for stmt in code.split(';') {
        let Some(at) = stmt.find("pub use ") else { continue };
        let path = stmt[at + "pub use ".len()..].trim();
        let Some((module, rest)) = path.split_once("::") else { continue };
        let module = module.trim();
        let rest = rest.trim();
        let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            group.trim_end_matches('}').split(',').collect()
        } else {
            vec![rest]
        };
        for name in names {
            // `a::B` inside a group re-exports `B`; `X as Y` re-exports `Y`.
            let name = name.trim();
            let name = name.rsplit_once(" as ").map_or(name, |(_, alias)| alias);
            let name = name.rsplit("::").next().unwrap_or(name).trim();
            if !name.is_empty() && name != "*" {
                map.insert(name.to_string(), module.to_string());
            }
        }
    }
    map
}

/// Names of the umbrella `error.rs` that any layer may use; any other name reached through
/// `crate::error::` (it re-exports the layer enums) counts as the layer that defines it.
const UMBRELLA: &[&str] = &["Error", "ErrorKind", "Result", "Found"];

/// `crate::error::{A, B}` as the paths `crate::A`, `crate::B` (the root re-exports the same names)
/// unless the name is one of the umbrella's own; any other path as it is.
fn through_error(code: &str, offset: usize, first: String) -> Vec<(usize, String)> {
    if first != "error" {
        return vec![(offset, first)];
    }
    let rest = &code[offset + "crate::error".len()..];
    let Some(rest) = rest.trim_start().strip_prefix("::") else { return vec![(offset, first)] };
    let stmt = format!("crate::{}", &rest[..rest.find(';').unwrap_or(rest.len())]);
    crate_paths(&stmt)
        .into_iter()
        .filter(|(at, _)| *at == 0)
        .map(|(_, name)| if UMBRELLA.contains(&name.as_str()) { (offset, "error".to_string()) } else { (offset, name) })
        .collect()
}

/// The "uses" column of the layer table in lib.rs's crate docs, by layer.
fn documented_map(lib: &str) -> BTreeMap<String, Vec<String>> {
    let mut map = BTreeMap::new();
    for line in lib.lines() {
        let Some(row) = line.strip_prefix("//! | ") else { continue };
        let cells: Vec<&str> = row.split(" | ").collect();
        let [layer, uses, ..] = cells[..] else { continue };
        let Some(name) = layer.trim_start_matches('[').strip_prefix('`').and_then(|l| l.split('`').next()) else {
            continue;
        };
        if !LAYERS.iter().any(|(l, _)| *l == name) {
            continue;
        }
        let uses = match uses.trim() {
            "—" => vec![],
            "all of the above" => LAYERS.iter().map(|(l, _)| l.to_string()).take_while(|l| l != name).collect(),
            list => list.split(", ").map(str::to_string).collect(),
        };
        let mut uses = uses;
        uses.sort();
        map.insert(name.to_string(), uses);
    }
    map
}

#[test]
fn the_checked_map_is_the_documented_one() {
    let lib = fs::read_to_string(src().join("lib.rs")).unwrap();
    let documented = documented_map(&lib);
    let checked: BTreeMap<String, Vec<String>> = LAYERS
        .iter()
        .map(|(l, uses)| {
            let mut uses: Vec<String> = uses.iter().map(|u| u.to_string()).collect();
            uses.sort();
            (l.to_string(), uses)
        })
        .collect();
    assert_eq!(documented, checked, "the layer table of lib.rs and LAYERS here disagree");
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].bytes().filter(|&b| b == b'\n').count() + 1
}

#[test]
fn no_layer_imports_a_layer_above_it() {
    let src = src();
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let reexports = root_reexports(&lib);
    assert!(reexports.get("Gguf").is_some_and(|m| m == "container"), "lib.rs re-exports read: {reexports:?}");
    let layer_of_root_module = |m: &str| -> Option<String> {
        if LAYERS.iter().any(|(l, _)| *l == m) {
            return Some(m.to_string());
        }
        OTHER_ROOT_MODULES.iter().find(|(n, _)| *n == m).map(|(_, l)| l.to_string())
    };
    let mut upward = Vec::new();
    for (layer, below) in LAYERS {
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        assert!(!files.is_empty(), "layer folder {layer} has no files");
        for file in files {
            let text = fs::read_to_string(&file).unwrap();
            let code = code_only(&text);
            for (offset, first) in
                crate_paths(&code).into_iter().flat_map(|(offset, first)| through_error(&code, offset, first))
            {
                let target = if first.starts_with(|c: char| c.is_lowercase()) {
                    layer_of_root_module(&first).or_else(|| reexports.get(&first).and_then(|m| layer_of_root_module(m)))
                } else {
                    reexports.get(&first).and_then(|m| layer_of_root_module(m))
                };
                let Some(target) = target else {
                    upward.push(format!(
                        "{}:{}: crate::{first} is neither a layer nor a root re-export",
                        file.strip_prefix(&src).unwrap().display(),
                        line_of(&text, offset)
                    ));
                    continue;
                };
                if target == "error" || target == *layer || below.contains(&target.as_str()) {
                    continue;
                }
                upward.push(format!(
                    "{}:{}: {layer} uses crate::{first} of layer {target}",
                    file.strip_prefix(&src).unwrap().display(),
                    line_of(&text, offset)
                ));
            }
        }
    }
    assert!(upward.is_empty(), "imports against the layer map:\n{}", upward.join("\n"));
}

#[test]
fn the_lint_reads_paths_and_skips_comments_and_strings() {
    let code = code_only(
        "use crate::{ops::x, container::{A, B}, Gguf};\n// crate::convert in a comment\nlet s = \"crate::model\";\n/* crate::ops */ let r = r#\"crate::ops\"#; let c = '\"'; crate::codec::f();\n",
    );
    let firsts: Vec<String> = crate_paths(&code).into_iter().map(|(_, n)| n).collect();
    assert_eq!(firsts, ["ops", "container", "Gguf", "codec"]);
    let map = root_reexports(
        "pub use container::{Gguf, GgufWriter as Writer, sharded::ShardedGguf};\npub use format::Shape;",
    );
    assert_eq!(map.get("Gguf").map(String::as_str), Some("container"));
    assert_eq!(map.get("Writer").map(String::as_str), Some("container"));
    assert_eq!(map.get("ShardedGguf").map(String::as_str), Some("container"));
    assert_eq!(map.get("Shape").map(String::as_str), Some("format"));
    let code = "use crate::error::{Error, QuantizeError};\nlet e = crate::error::Error::io();";
    let via: Vec<String> =
        crate_paths(code).into_iter().flat_map(|(o, n)| through_error(code, o, n)).map(|(_, n)| n).collect();
    assert_eq!(via, ["error", "QuantizeError", "error"]);
}
