//! Python oracle runs done once and kept: a script's output for the same script, arguments, input
//! contents and installed packages is the same, so it is computed once per target directory and
//! shared by every test (and test process) that asks for it.
//!
//! Kept in `<target>/test-tmp/py-cache/` ([`crate::test_tmp_root`]): the stdout of a run
//! ([`run_py_cached`]) or a folder a script wrote ([`cached_py_folder`]), under a key that is the
//! sha256 of
//! - the script's bytes (`tests/py/<script>`),
//! - each argument, where an argument that names one of the run's `content` paths counts by the
//!   sha256 of that path's bytes (a folder: of every file under it, by relative path) instead of
//!   its name, so that the same input under another temporary name is the same run,
//! - the sha256 of the other `content` paths (sources the script reads that are not arguments,
//!   such as llama.cpp's `conversion/` package),
//! - the interpreter (the file the venv's `python` links to) and the names of the `*.dist-info` folders of its `site-packages`
//!   (the installed packages with their versions: a reinstalled pin is a new key).
//!
//! A fresh target folder (as CI has) computes every entry in its first run, once per process at
//! most: tests of one process asking for the same key wait for the one that runs it. Entries
//! are written to a temporary name and renamed into place, so no process reads half of one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value as Json;

use crate::{run_py_text, sha256, test_tmp_root, workspace_root};

/// The sha256 of a file's bytes, or, for a folder, of the list of its files (relative path and
/// sha256 of each, sorted by path, recursively, without `__pycache__` folders). Memoised per process for files by path, length
/// and modification time (the Gemma 3 model is hashed once however many tests read it). Panics
/// (fails the test) if it cannot be read.
pub fn content_sha256(path: &Path) -> String {
    type Memo = Mutex<HashMap<(PathBuf, u64, std::time::SystemTime), String>>;
    static FILES: OnceLock<Memo> = OnceLock::new();
    let meta = std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if meta.is_dir() {
        let mut files = Vec::new();
        list_files(path, path, &mut files);
        files.sort();
        let listing: String =
            files.iter().map(|rel| format!("{}\0{}\n", rel.display(), content_sha256(&path.join(rel)))).collect();
        return sha256(listing.as_bytes());
    }
    let id = (path.to_path_buf(), meta.len(), meta.modified().unwrap_or(std::time::UNIX_EPOCH));
    if let Some(h) = FILES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner()).get(&id) {
        return h.clone();
    }
    let h = sha256(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
    FILES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner()).insert(id, h.clone());
    h
}

fn list_files(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path();
        if path.is_dir() {
            // Python's bytecode caches come and go with the runs; they are not the sources.
            if path.file_name() != Some(std::ffi::OsStr::new("__pycache__")) {
                list_files(root, &path, out);
            }
        } else {
            out.push(path.strip_prefix(root).expect("under the root").to_path_buf());
        }
    }
}

/// The interpreter (the file the venv's `python` links to, so that the same interpreter in
/// another clone's venv is the same key) and the sorted names of its `site-packages/*.dist-info`
/// folders (empty when it has none that can be found: the key then changes with nothing installed
/// but the interpreter).
fn installed_packages(python: &Path) -> String {
    static MEMO: OnceLock<Mutex<HashMap<PathBuf, String>>> = OnceLock::new();
    let memo = MEMO.get_or_init(Default::default);
    if let Some(s) = memo.lock().unwrap_or_else(|e| e.into_inner()).get(python) {
        return s.clone();
    }
    let interpreter = std::fs::canonicalize(python).unwrap_or_else(|_| python.to_path_buf());
    let mut names = vec![interpreter.display().to_string()];
    // <venv>/bin/python -> <venv>/lib/python3.X/site-packages
    let lib = python.parent().and_then(Path::parent).map(|venv| venv.join("lib"));
    for version in lib.and_then(|l| std::fs::read_dir(l).ok()).into_iter().flatten().flatten() {
        let site = version.path().join("site-packages");
        for e in std::fs::read_dir(&site).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".dist-info") {
                names.push(name);
            }
        }
    }
    names[1..].sort();
    let s = names.join("\n");
    memo.lock().unwrap_or_else(|e| e.into_inner()).insert(python.to_path_buf(), s.clone());
    s
}

/// The cache key of a run (see the module's documentation).
fn key(python: &Path, script: &str, args: &[&str], content: &[&Path]) -> String {
    let script_path = workspace_root().join("tests/py").join(script);
    let mut k = format!("{script}\0{}\0", content_sha256(&script_path));
    for a in args {
        match content.iter().find(|c| c.as_os_str() == std::ffi::OsStr::new(a)) {
            Some(c) => k.push_str(&format!("content {}\0", content_sha256(c))),
            None => k.push_str(&format!("arg {a}\0")),
        }
    }
    for c in content.iter().filter(|c| !args.iter().any(|a| c.as_os_str() == std::ffi::OsStr::new(a))) {
        k.push_str(&format!("source {}\0", content_sha256(c)));
    }
    k.push_str(&installed_packages(python));
    sha256(k.as_bytes())
}

/// One slot per key and process: the first test to ask computes, the others wait for it.
fn slot(key: &str) -> Arc<Mutex<Option<PathBuf>>> {
    type Slots = Mutex<HashMap<String, Arc<Mutex<Option<PathBuf>>>>>;
    static SLOTS: OnceLock<Slots> = OnceLock::new();
    SLOTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key.to_owned())
        .or_default()
        .clone()
}

/// A fresh name beside `entry` for writing before the rename into place.
fn staging(entry: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let mut name = entry.file_name().expect("entry name").to_os_string();
    name.push(format!(".tmp-{}-{n}", std::process::id()));
    entry.with_file_name(name)
}

fn cache_root() -> PathBuf {
    let root = test_tmp_root().join("py-cache");
    std::fs::create_dir_all(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
    root
}

/// [`crate::run_py_text`] of `tests/py/<script>` with `args`, computed once per key (see the
/// module's documentation; `content`: the paths whose bytes the output depends on, among the
/// arguments or not) and kept. The script must print the same bytes for the same key (no
/// temporary paths, times or randomness in its output).
pub fn run_py_text_cached(python: &Path, script: &str, args: &[&str], content: &[&Path]) -> String {
    let key = key(python, script, args, content);
    let slot = slot(&key);
    let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
    let entry = cache_root().join(format!("{}-{}.out", script.trim_end_matches(".py"), &key[..24]));
    if slot.is_none() {
        if !entry.is_file() {
            let text = run_py_text(python, script, args);
            let tmp = staging(&entry);
            std::fs::write(&tmp, &text).unwrap_or_else(|e| panic!("{}: {e}", tmp.display()));
            std::fs::rename(&tmp, &entry).unwrap_or_else(|e| panic!("{}: {e}", entry.display()));
            *slot = Some(entry.clone());
            return text;
        }
        *slot = Some(entry.clone());
    }
    std::fs::read_to_string(&entry).unwrap_or_else(|e| panic!("{}: {e}", entry.display()))
}

/// [`run_py_text_cached`], parsed as JSON.
pub fn run_py_cached(python: &Path, script: &str, args: &[&str], content: &[&Path]) -> Json {
    serde_json::from_str(&run_py_text_cached(python, script, args, content)).expect("JSON from python")
}

/// The folder that `tests/py/<script>` writes when run with `args` followed by an output folder
/// (as `hf_tokenizer_from_gguf.py VOCAB.gguf OUTDIR`), made once per key (the module's
/// documentation; `content` as for [`run_py_text_cached`]) and kept. Do not change its files:
/// copy it ([`copy_folder`]) to edit.
pub fn cached_py_folder(python: &Path, script: &str, args: &[&str], content: &[&Path]) -> PathBuf {
    cached_py_outputs(python, script, args, content, None).0
}

/// [`cached_py_folder`] for a script whose last argument is an output file (`out_file`, made in
/// the kept folder) and whose stdout matters too: the kept folder and the stdout of the run that
/// made it.
pub fn cached_py_file(
    python: &Path,
    script: &str,
    args: &[&str],
    content: &[&Path],
    out_file: &str,
) -> (PathBuf, String) {
    let (dir, stdout) = cached_py_outputs(python, script, args, content, Some(out_file));
    (dir.join(out_file), stdout)
}

fn cached_py_outputs(
    python: &Path,
    script: &str,
    args: &[&str],
    content: &[&Path],
    out_file: Option<&str>,
) -> (PathBuf, String) {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(out_file.map(|_| "<output file>"));
    let key = key(python, script, &all, content);
    let slot = slot(&key);
    let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
    let entry = cache_root().join(format!("{}-{}", script.trim_end_matches(".py"), &key[..24]));
    let stdout_file = entry.with_extension("stdout");
    if slot.is_none() && !(entry.is_dir() && stdout_file.is_file()) {
        let tmp = staging(&entry);
        std::fs::create_dir_all(&tmp).unwrap_or_else(|e| panic!("{}: {e}", tmp.display()));
        let out = match out_file {
            Some(name) => tmp.join(name),
            None => tmp.clone(),
        };
        let mut all: Vec<&str> = args.to_vec();
        all.push(out.to_str().expect("a UTF-8 path"));
        let stdout = run_py_text(python, script, &all);
        let _ = std::fs::remove_dir_all(&entry);
        if std::fs::rename(&tmp, &entry).is_err() {
            // Another process kept the same folder meanwhile.
            let _ = std::fs::remove_dir_all(&tmp);
            assert!(entry.is_dir(), "{}: could not keep the folder", entry.display());
        }
        let tmp = staging(&stdout_file);
        std::fs::write(&tmp, stdout).unwrap_or_else(|e| panic!("{}: {e}", tmp.display()));
        std::fs::rename(&tmp, &stdout_file).unwrap_or_else(|e| panic!("{}: {e}", stdout_file.display()));
    }
    *slot = Some(entry.clone());
    let stdout = std::fs::read_to_string(&stdout_file).unwrap_or_else(|e| panic!("{}: {e}", stdout_file.display()));
    (entry, stdout)
}

/// Copies the files of `from` (recursively) into `to`, created if missing.
pub fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let path = entry.unwrap_or_else(|e| panic!("{}: {e}", from.display())).path();
        let dest = to.join(path.file_name().expect("a file name"));
        if path.is_dir() {
            copy_folder(&path, &dest);
        } else {
            std::fs::copy(&path, &dest).unwrap_or_else(|e| panic!("{} -> {}: {e}", path.display(), dest.display()));
        }
    }
}
