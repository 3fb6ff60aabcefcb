//! Per-tensor and whole-model hashes of a GGUF file, and manifests of them, as llama.cpp's
//! `llama-gguf-hash` (`examples/gguf-hash/gguf-hash.cpp`) computes and prints them (`gguf hash`).
//!
//! What is hashed is each tensor's stored data, exactly `nbytes` bytes (ggml's `ggml_nbytes`: the
//! padding between tensors is not hashed), in the file's byte order. The whole-model hash of a
//! kind is one stream over every tensor's data in file order; the UUID is a UUIDv5 (RFC 9562) in
//! llama.cpp's namespace [`UUID_NAMESPACE_LLAMA_CPP`]: the SHA-1 of the namespace's 16 bytes
//! followed by every tensor's data, with the version and variant bits set.
//!
//! A manifest line is `{kind:<8}  {hash}  {name}` ([`manifest_line`]), `name` being `FILE:TENSOR`
//! for a tensor and `FILE` for the whole model, `FILE` the path as given to the tool; hashes are
//! lowercase hex (XXH64 as its 64-bit value, most significant byte first; SHA-1 and SHA-256 as
//! their digests), the UUID in its 8-4-4-4-12 form. [`Manifest::parse`] reads such a file (or
//! `llama-gguf-hash`'s output, check mode included) as `llama-gguf-hash -c` does: the first three
//! whitespace-separated words of each line, lines of another kind ignored.
//!
//! Names are bytes, as `llama-gguf-hash` prints them (`printf("%s")` of the path and of ggml's
//! tensor name): a tensor name that is not UTF-8 is printed as its bytes, not escaped, so that a
//! manifest of either tool checks against the other's. ggml's name of a tensor is its stored
//! bytes up to the first NUL (`gguf_init_from_file` names the tensor with `ggml_set_name` of the
//! C string), and so is the name in a line here ([`ggml_tensor_name`]).
//!
//! Tensors are hashed in parallel (feature `parallel`): one task per tensor for the per-tensor
//! hashes and one per whole-model stream, with identical results on one thread.

use std::collections::HashMap;
use std::fmt;

use sha1::Digest as _;

use crate::container::{Gguf, Source};
use crate::error::Result;

/// llama.cpp's UUIDv5 namespace for models: `uuid5(NAMESPACE_URL, "en.wikipedia.org/wiki/Llama.cpp")`,
/// `ef001206-dadc-5f6d-a15f-3359e577d4e5` (`UUID_NAMESPACE_LLAMA_CPP` of `gguf-hash.cpp`).
pub const UUID_NAMESPACE_LLAMA_CPP: [u8; 16] =
    [0xef, 0x00, 0x12, 0x06, 0xda, 0xdc, 0x5f, 0x6d, 0xa1, 0x5f, 0x33, 0x59, 0xe5, 0x77, 0xd4, 0xe5];

/// A kind of hash, with the name a manifest line starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum HashKind {
    /// XXH64 with seed 0 (`xxh64`): fast, not cryptographic. `llama-gguf-hash`'s default.
    Xxh64,
    /// SHA-1 (`sha1`).
    Sha1,
    /// SHA-256 (`sha256`).
    Sha256,
    /// The model's UUIDv5 (`uuid`): whole model only.
    Uuid,
}

impl HashKind {
    /// Every kind, in the order `llama-gguf-hash` prints a tensor's or the model's lines.
    pub const ALL: [HashKind; 4] = [HashKind::Xxh64, HashKind::Sha1, HashKind::Sha256, HashKind::Uuid];

    /// The name in a manifest line: `xxh64`, `sha1`, `sha256`, `uuid`.
    pub fn name(self) -> &'static str {
        match self {
            HashKind::Xxh64 => "xxh64",
            HashKind::Sha1 => "sha1",
            HashKind::Sha256 => "sha256",
            HashKind::Uuid => "uuid",
        }
    }

    /// The kind named `name` in a manifest line (case-sensitive, as `llama-gguf-hash` reads it).
    pub fn from_name(name: &str) -> Option<HashKind> {
        HashKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for HashKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What to compute: the kinds, and whether each tensor gets its own hashes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HashOptions {
    /// The kinds, any order; [`HashKind::Uuid`] is computed for the whole model only.
    pub kinds: Vec<HashKind>,
    /// No per-tensor hashes, only the whole model's (`--no-layer`).
    pub no_layer: bool,
}

impl HashOptions {
    /// Hashes of `kinds`, per tensor and for the whole model.
    pub fn new(kinds: impl IntoIterator<Item = HashKind>) -> Self {
        let mut kinds: Vec<HashKind> = kinds.into_iter().collect();
        kinds.sort();
        kinds.dedup();
        HashOptions { kinds, no_layer: false }
    }

    /// The same without per-tensor hashes.
    pub fn with_no_layer(mut self, no_layer: bool) -> Self {
        self.no_layer = no_layer;
        self
    }

    fn tensor_kinds(&self) -> impl Iterator<Item = HashKind> + '_ {
        self.kinds.iter().copied().filter(|k| *k != HashKind::Uuid && !self.no_layer)
    }
}

/// Hashes of one tensor or model: each kind with its hash as a manifest writes it, kinds in
/// [`HashKind::ALL`]'s order.
pub type Hashes = Vec<(HashKind, String)>;

/// The hashes of one file: per tensor in file order, then the whole model's.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileHashes {
    /// Each tensor's name as ggml names it ([`ggml_tensor_name`]: its bytes, UTF-8 or not, up to
    /// the first NUL) and its hashes (kinds in [`HashKind::ALL`]'s order); empty with
    /// [`HashOptions::no_layer`].
    pub tensors: Vec<(Vec<u8>, Hashes)>,
    /// The whole model's hashes, kinds in [`HashKind::ALL`]'s order.
    pub model: Hashes,
}

impl FileHashes {
    /// The manifest lines of this file as `llama-gguf-hash FILE` prints them, `file` being the
    /// path as given (its bytes): every tensor's lines (`FILE:TENSOR`), then the model's
    /// (`FILE`).
    pub fn lines<'a>(&'a self, file: &'a [u8]) -> impl Iterator<Item = ManifestEntry> + 'a {
        let tensors = self.tensors.iter().flat_map(move |(name, hashes)| {
            hashes.iter().map(move |(kind, hash)| ManifestEntry {
                kind: *kind,
                hash: hash.clone(),
                name: [file, b":", name].concat(),
            })
        });
        let model = self.model.iter().map(move |(kind, hash)| ManifestEntry {
            kind: *kind,
            hash: hash.clone(),
            name: file.to_vec(),
        });
        tensors.chain(model)
    }
}

/// A tensor's name as ggml names it, and so as `llama-gguf-hash` prints it: the stored bytes up
/// to the first NUL (all of them when there is none).
pub fn ggml_tensor_name(stored: &[u8]) -> &[u8] {
    stored.split(|&b| b == 0).next().unwrap_or_default()
}

/// A line of a manifest: a kind, its hash, and what was hashed (`FILE:TENSOR` or `FILE`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ManifestEntry {
    /// The kind of hash.
    pub kind: HashKind,
    /// The hash in lowercase hex (a UUID in its hyphenated form).
    pub hash: String,
    /// `FILE:TENSOR` or `FILE`, bytes as the line has them (UTF-8 or not).
    pub name: Vec<u8>,
}

impl ManifestEntry {
    /// The line as `llama-gguf-hash` prints it, without the newline: [`manifest_line`].
    pub fn line(&self) -> Vec<u8> {
        manifest_line(self.kind, &self.hash, &self.name)
    }
}

impl fmt::Display for ManifestEntry {
    /// The line with the name's bytes that are not UTF-8 as `\xNN` ([`GgufStr`]'s `Display`):
    /// for messages. [`ManifestEntry::line`] has the bytes.
    ///
    /// [`GgufStr`]: crate::GgufStr
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:<8}  {}  {}", self.kind.name(), self.hash, crate::GgufStr::from_bytes(&self.name))
    }
}

/// `{kind:<8}  {hash}  {name}`: a manifest line as `llama-gguf-hash` prints it (its
/// `"%-8s  %-s  %s"`: the name's bytes as they are), without the newline.
pub fn manifest_line(kind: HashKind, hash: &str, name: &[u8]) -> Vec<u8> {
    [format!("{:<8}  {hash}  ", kind.name()).as_bytes(), name].concat()
}

/// The bytes hashed between two progress reports: big tensors report as they go.
const PROGRESS_CHUNK: usize = 8 << 20;

enum Hasher {
    Xxh64(Box<xxhash_rust::xxh64::Xxh64>),
    Sha1(sha1::Sha1),
    Sha256(sha2::Sha256),
}

impl Hasher {
    fn new(kind: HashKind) -> Hasher {
        match kind {
            HashKind::Xxh64 => Hasher::Xxh64(Box::new(xxhash_rust::xxh64::Xxh64::new(0))),
            HashKind::Sha1 => Hasher::Sha1(sha1::Sha1::new()),
            HashKind::Sha256 => Hasher::Sha256(sha2::Sha256::new()),
            HashKind::Uuid => {
                let mut h = sha1::Sha1::new();
                h.update(UUID_NAMESPACE_LLAMA_CPP);
                Hasher::Sha1(h)
            }
        }
    }

    fn update(&mut self, data: &[u8]) {
        match self {
            Hasher::Xxh64(h) => h.update(data),
            Hasher::Sha1(h) => h.update(data),
            Hasher::Sha256(h) => h.update(data),
        }
    }

    /// The hash as a manifest writes it.
    fn finish(self, kind: HashKind) -> String {
        match (self, kind) {
            (Hasher::Xxh64(h), _) => format!("{:016x}", h.digest()),
            (Hasher::Sha1(h), HashKind::Uuid) => {
                let digest: [u8; 20] = h.finalize().into();
                let mut bytes = [0u8; 16];
                bytes.copy_from_slice(&digest[..16]);
                uuid::Builder::from_sha1_bytes(bytes).into_uuid().hyphenated().to_string()
            }
            (Hasher::Sha1(h), _) => hex(&h.finalize()),
            (Hasher::Sha256(h), _) => hex(&h.finalize()),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    use fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Feeds `data` to `hasher` in chunks, reporting each chunk's length to `progress`.
fn feed(hasher: &mut Hasher, data: &[u8], progress: &(dyn Fn(u64) + Sync)) {
    for chunk in data.chunks(PROGRESS_CHUNK) {
        hasher.update(chunk);
        progress(chunk.len() as u64);
    }
}

/// The number of bytes [`hash_files`] reads through its hashers for `files` (each tensor's bytes
/// once per per-tensor kind and once per whole-model kind): the total of its progress reports.
pub fn work_bytes<S: Source>(files: &[&Gguf<S>], options: &HashOptions) -> u64 {
    let per_byte = (options.tensor_kinds().count() + options.kinds.len()) as u64;
    files.iter().flat_map(|f| f.tensors()).map(|t| t.nbytes).sum::<u64>().saturating_mul(per_byte)
}

/// Hashes each of `files` (the shards of a split model are hashed each as a file of its own, as
/// `llama-gguf-hash` would hash each shard), the tensors in parallel (feature `parallel`).
///
/// `progress` is called with a count of bytes hashed, from any thread, as the work goes on; the
/// counts add up to [`work_bytes`]. `options.kinds` empty gives no hashes at all.
///
/// # Errors
/// A tensor whose data the source does not hold ([`Gguf::tensor_data`]'s errors:
/// [`ErrorKind::DataNotLoaded`](crate::ErrorKind::DataNotLoaded) for a file read with
/// [`Gguf::from_reader`]).
pub fn hash_files<S: Source + Sync>(
    files: &[&Gguf<S>],
    options: &HashOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<FileHashes>> {
    // Every tensor's bytes, checked up front so that the tasks cannot fail.
    let data: Vec<Vec<(crate::GgufStr<'_>, &[u8])>> = files
        .iter()
        .map(|f| f.tensors().map(|t| Ok((t.name, f.tensor_data(&t)?))).collect::<Result<Vec<_>>>())
        .collect::<Result<_>>()?;
    let tensor_kinds: Vec<HashKind> = options.tensor_kinds().collect();

    // Tasks: one per (file, tensor) for the per-tensor hashes, one per (file, kind) for the
    // whole-model streams, largest first so that a long stream does not start last.
    enum Task {
        Tensor(usize, usize),
        Model(usize, HashKind),
    }
    let mut tasks: Vec<(u64, Task)> = Vec::new();
    for (f, tensors) in data.iter().enumerate() {
        let total: u64 = tensors.iter().map(|(_, d)| d.len() as u64).sum();
        for &kind in &options.kinds {
            tasks.push((total, Task::Model(f, kind)));
        }
        if !tensor_kinds.is_empty() {
            for (t, (_, d)) in tensors.iter().enumerate() {
                tasks.push((d.len() as u64, Task::Tensor(f, t)));
            }
        }
    }
    tasks.sort_by_key(|(size, _)| std::cmp::Reverse(*size));

    enum Done {
        Tensor(usize, usize, Vec<(HashKind, String)>),
        Model(usize, HashKind, String),
    }
    let run = |task: &Task| -> Done {
        match *task {
            Task::Tensor(f, t) => {
                let bytes = data[f][t].1;
                let hashes = tensor_kinds
                    .iter()
                    .map(|&kind| {
                        let mut h = Hasher::new(kind);
                        feed(&mut h, bytes, progress);
                        (kind, h.finish(kind))
                    })
                    .collect();
                Done::Tensor(f, t, hashes)
            }
            Task::Model(f, kind) => {
                let mut h = Hasher::new(kind);
                for (_, bytes) in &data[f] {
                    feed(&mut h, bytes, progress);
                }
                Done::Model(f, kind, h.finish(kind))
            }
        }
    };
    #[cfg(feature = "parallel")]
    let done: Vec<Done> = {
        use rayon::prelude::*;
        tasks.par_iter().with_max_len(1).map(|(_, t)| run(t)).collect()
    };
    #[cfg(not(feature = "parallel"))]
    let done: Vec<Done> = tasks.iter().map(|(_, t)| run(t)).collect();

    let mut out: Vec<FileHashes> = data
        .iter()
        .map(|tensors| FileHashes {
            tensors: if tensor_kinds.is_empty() {
                Vec::new()
            } else {
                tensors.iter().map(|(n, _)| (ggml_tensor_name(n.as_bytes()).to_vec(), Vec::new())).collect()
            },
            model: Vec::new(),
        })
        .collect();
    for d in done {
        match d {
            Done::Tensor(f, t, hashes) => out[f].tensors[t].1 = hashes,
            Done::Model(f, kind, hash) => out[f].model.push((kind, hash)),
        }
    }
    for f in &mut out {
        f.model.sort_by_key(|(k, _)| *k);
    }
    Ok(out)
}

/// A manifest: the lines of `llama-gguf-hash` output (or ours), by kind and name.
#[derive(Clone, Debug, Default)]
pub struct Manifest {
    entries: Vec<ManifestEntry>,
    index: HashMap<(HashKind, Vec<u8>), usize>,
}

/// How an entry compares with a manifest ([`Manifest::verify`]): `llama-gguf-hash -c`'s three
/// results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The manifest has this kind and name with the same hash (`Ok`).
    Ok,
    /// The manifest has this kind and name with another hash (`Mismatch`).
    Mismatch,
    /// The manifest has no line of this kind and name (`Not Found`).
    NotFound,
}

impl Verdict {
    /// `Ok`, `Mismatch` or `Not Found`, as `llama-gguf-hash -c` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Ok => "Ok",
            Verdict::Mismatch => "Mismatch",
            Verdict::NotFound => "Not Found",
        }
    }
}

/// C's `isspace` in the "C" locale: space, tab, newline, vertical tab, form feed, carriage return.
fn is_c_space(b: &u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// The entry of one manifest line (see [`Manifest::parse`]), or `None` if it is none: kind and
/// hash are its first two words, the name the rest after the hash and two spaces (or, in a line
/// spaced otherwise, after the white space that follows the hash).
fn manifest_entry(line: &[u8]) -> Option<ManifestEntry> {
    fn skip(s: &[u8]) -> Option<&[u8]> {
        s.iter().position(|b| !is_c_space(b)).and_then(|at| s.get(at..))
    }
    fn word(s: &[u8]) -> (&[u8], &[u8]) {
        let end = s.iter().position(is_c_space).unwrap_or(s.len());
        (s.get(..end).unwrap_or_default(), s.get(end..).unwrap_or_default())
    }
    let (kind, rest) = word(skip(line)?);
    let kind = std::str::from_utf8(kind).ok().and_then(HashKind::from_name)?;
    let (hash, rest) = word(skip(rest)?);
    let name = match rest.strip_prefix(b"  ") {
        Some(name) if name.first().is_some_and(|b| !is_c_space(b)) => name,
        _ => skip(rest)?,
    };
    if name.iter().all(is_c_space) {
        return None;
    }
    // A hash that is not UTF-8 matches none of ours: kept lossily, it still says Mismatch.
    Some(ManifestEntry { kind, hash: String::from_utf8_lossy(hash).into_owned(), name: name.to_vec() })
}

impl Manifest {
    /// Reads a manifest as `llama-gguf-hash` writes it (`"%-8s  %-s  %s\n"`: kind, hash and the
    /// name's bytes as they are, UTF-8 or not): each line's first two words (separated by C's
    /// `isspace` bytes, as `llama-gguf-hash -c` reads them with `>>`) are kind and hash, and the
    /// name is the rest of the line after the two spaces that follow the hash, so that a name
    /// holding spaces or tabs is read whole (`llama-gguf-hash -c` reads only up to its first
    /// white space: it then reports such a tensor `Not Found`, which does not fail its check). A
    /// line that is no entry (its first word is no [`HashKind`] name; not empty, not `--check`'s
    /// last line `Verification results for …`) right after an entry continues that entry's name
    /// after a newline, as a name holding a newline is written. A
    /// `\r` ending a name is dropped (a manifest with CRLF line ends), and so is a verdict
    /// `  -  Ok`, `  -  Mismatch`, `  -  Not Found` or `  -  Missing` ending it (so that the
    /// output of `--check` reads as a manifest too). A line with fewer than three words, or
    /// another first word, is skipped. For a kind and name given twice, the first line counts,
    /// as in `llama-gguf-hash`.
    pub fn parse(text: &[u8]) -> Manifest {
        let mut entries: Vec<ManifestEntry> = Vec::new();
        // Whether the last line read was an entry (a following line that is none continues it).
        let mut after_entry = false;
        for line in text.split(|&b| b == b'\n') {
            let Some(entry) = manifest_entry(line) else {
                match entries.last_mut() {
                    // Not the last line of `--check`'s output.
                    Some(last)
                        if after_entry && !line.is_empty() && !line.starts_with(b"Verification results for ") =>
                    {
                        last.name.push(b'\n');
                        last.name.extend_from_slice(line);
                    }
                    _ => after_entry = false,
                }
                continue;
            };
            entries.push(entry);
            after_entry = true;
        }
        let mut m = Manifest::default();
        for mut e in entries {
            for verdict in [&b"  -  Ok"[..], b"  -  Mismatch", b"  -  Not Found", b"  -  Missing"] {
                if let Some(name) = e.name.strip_suffix(b"\r").unwrap_or(&e.name).strip_suffix(verdict) {
                    e.name = name.to_vec();
                    break;
                }
            }
            if let Some(name) = e.name.strip_suffix(b"\r") {
                e.name = name.to_vec();
            }
            let key = (e.kind, e.name.clone());
            if !m.index.contains_key(&key) {
                m.index.insert(key, m.entries.len());
                m.entries.push(e);
            }
        }
        m
    }

    /// The entries, in the manifest's order (the first of each kind and name).
    pub fn entries(&self) -> &[ManifestEntry] {
        &self.entries
    }

    /// The kinds the manifest has lines of, in [`HashKind::ALL`]'s order.
    pub fn kinds(&self) -> Vec<HashKind> {
        HashKind::ALL.into_iter().filter(|k| self.entries.iter().any(|e| e.kind == *k)).collect()
    }

    /// The kind `llama-gguf-hash -c` checks when none is asked for: the strongest the manifest has
    /// (SHA-256, then SHA-1, XXH64, UUID).
    pub fn strongest_kind(&self) -> Option<HashKind> {
        let kinds = self.kinds();
        [HashKind::Sha256, HashKind::Sha1, HashKind::Xxh64, HashKind::Uuid].into_iter().find(|k| kinds.contains(k))
    }

    /// How `entry` compares with the manifest's line of the same kind and name.
    pub fn verify(&self, entry: &ManifestEntry) -> Verdict {
        match self.index.get(&(entry.kind, entry.name.clone())).and_then(|&i| self.entries.get(i)) {
            None => Verdict::NotFound,
            Some(e) if e.hash == entry.hash => Verdict::Ok,
            Some(_) => Verdict::Mismatch,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_reads_check_output_and_keeps_the_first_line() {
        let m = Manifest::parse(
            b"manifest  m.txt  sha256  xxh64\n\
             xxh64     00000000000000aa  f.gguf:a  -  Ok\n\
             xxh64     00000000000000bb  f.gguf:a\n\
             sha256    ff  f.gguf\n\
             md5 00 f.gguf\n\
             \n\
             Verification results for m.txt - Success\n",
        );
        assert_eq!(m.kinds(), vec![HashKind::Xxh64, HashKind::Sha256]);
        assert_eq!(m.strongest_kind(), Some(HashKind::Sha256));
        let e = |kind, hash: &str, name: &[u8]| ManifestEntry { kind, hash: hash.into(), name: name.into() };
        assert_eq!(m.verify(&e(HashKind::Xxh64, "00000000000000aa", b"f.gguf:a")), Verdict::Ok);
        assert_eq!(m.verify(&e(HashKind::Xxh64, "00000000000000bb", b"f.gguf:a")), Verdict::Mismatch);
        assert_eq!(m.verify(&e(HashKind::Sha1, "ff", b"f.gguf")), Verdict::NotFound);
        assert_eq!(m.entries().len(), 2);
    }

    /// Words as C++'s `>>` reads them: separated by any `isspace` byte (a vertical tab and a
    /// carriage return too), not by Unicode spaces; a name's bytes kept as they are.
    #[test]
    fn manifest_words_are_cpp_words_of_bytes() {
        let m = Manifest::parse(b"xxh64\x0baa\tf.gguf:w.\xc3(\r\nsha1 bb f\xc2\xa0g\n");
        let names: Vec<&[u8]> = m.entries().iter().map(|e| e.name.as_slice()).collect();
        assert_eq!(names, [&b"f.gguf:w.\xc3("[..], b"f\xc2\xa0g"]);
        assert_eq!(m.entries()[0].hash, "aa");
    }

    #[test]
    fn line_layout_is_llama_gguf_hash_printf() {
        // "%-8s  %-s  %s", the name's bytes as they are
        assert_eq!(manifest_line(HashKind::Xxh64, "ab", b"f:t"), b"xxh64     ab  f:t");
        assert_eq!(manifest_line(HashKind::Sha256, "ab", b"f"), b"sha256    ab  f");
        let e = ManifestEntry { kind: HashKind::Sha1, hash: "ab".into(), name: b"f:w.\xc3(".to_vec() };
        assert_eq!(e.line(), b"sha1      ab  f:w.\xc3(");
        assert_eq!(e.to_string(), r"sha1      ab  f:w.\xc3(");
    }

    /// ggml's name of a tensor: `ggml_set_name(&t, name.c_str())`, the bytes before a NUL.
    #[test]
    fn a_tensor_name_ends_at_a_nul_as_in_ggml() {
        assert_eq!(ggml_tensor_name(b"a\0b"), b"a");
        assert_eq!(ggml_tensor_name(b"w.\xc3("), b"w.\xc3(");
        assert_eq!(ggml_tensor_name(b""), b"");
    }
}
