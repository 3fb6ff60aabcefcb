//! The `general.*` keys of a converted model, as llama.cpp's `convert_hf_to_gguf.py` writes them.
//!
//! The reference is gguf-py's `metadata.py` (`Metadata.load`, its heuristics on the model card,
//! `config.json`'s `_name_or_path` and the checkpoint folder's name, and `set_gguf_meta_model`)
//! with `conversion/base.py`'s `prepare_metadata` and gguf-py's `utility.size_label`. Where the
//! converter writes them:
//!
//! 1. `general.architecture` (first, when the writer is made; not here),
//! 2. [`general_kv`]: `general.type`, the `general.sampling.*` keys from
//!    `generation_config.json`, then `general.name` … `general.languages`,
//! 3. the architecture's hyper-parameters, among which [`file_type_kv`] (`general.file_type`,
//!    u32) where the architecture writes it (for the text models: after the attention keys),
//! 4. [`quantization_version_kv`] (`general.quantization_version` = 2, u32), right after them,
//! 5. the tokenizer's keys.
//!
//! Types: strings, except `general.sampling.top_k`, `penalty_last_n` and `mirostat` (i32), the
//! other sampling values (f32), `general.base_model.count` and `general.dataset.count` (u32),
//! `general.tags` and `general.languages` (arrays of strings).
//!
//! The model card's front matter is YAML; this module takes it already parsed, as a JSON value
//! (see [`front_matter`] for the text the reference parses), so that it needs no YAML parser.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value as Json;

use crate::{Array, Value};

/// The parameter counts the reference computes (gguf-py's `GGUFWriter.get_total_parameter_count`)
/// and names the model's size from (`general.size_label`, when the names give none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParamCounts {
    /// All parameters (elements of every tensor written); negative for a LoRA adapter, as in the
    /// reference.
    pub total: i64,
    /// Parameters outside the experts (a mixture-of-experts model), else 0.
    pub shared: i64,
    /// Parameters of one expert, else 0.
    pub expert: i64,
    /// Number of experts; 0 for a dense model.
    pub expert_count: u64,
}

impl ParamCounts {
    /// The counts over the tensors a model writes, as gguf-py's
    /// `GGUFWriter.get_total_parameter_count` computes them (LoRA pairs aside): `tensors` are
    /// `(GGUF name, canonical shape)`, outermost dimension first. A tensor whose name has
    /// `_exps.` and at least 3 dimensions is an expert tensor: its expert count is the third
    /// dimension from the end (the second for a `.bias`), and one expert's share of its elements
    /// counts towards `expert`; every other tensor counts towards `shared`. `expert_count` is the
    /// mean (rounded down) of the expert tensors' counts; a count of 0 is taken as 1.
    pub fn from_tensors<'a, I>(tensors: I) -> ParamCounts
    where
        I: IntoIterator<Item = (&'a str, &'a [u64])>,
    {
        let (mut total, mut shared, mut expert, mut expert_sum, mut n_expert) = (0u64, 0u64, 0u64, 0u64, 0u64);
        for (name, shape) in tensors {
            let size: u64 = shape.iter().product();
            if name.contains("_exps.") && shape.len() >= 3 {
                let back = if name.contains(".bias") { 2 } else { 3 };
                let count = shape[shape.len() - back].max(1);
                expert += size / count;
                expert_sum += count;
                n_expert += 1;
            } else {
                shared += size;
            }
            total += size;
        }
        let as_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        ParamCounts {
            total: as_i64(total),
            shared: as_i64(shared),
            expert: as_i64(expert),
            expert_count: expert_sum.checked_div(n_expert).unwrap_or(0),
        }
    }
}

/// Why the `general.*` keys could not be made.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum GeneralError {
    /// A value of `generation_config.json` or the model card has a type the key cannot take.
    #[error("{source_file}: `{field}` is {found}, expected {expected}{}", for_key(.field, .key))]
    WrongType {
        /// `generation_config.json`, `README.md` or [`OVERRIDE_SOURCE`].
        source_file: &'static str,
        /// The field in that file.
        field: String,
        /// The GGUF key it would be written as.
        key: String,
        /// What the key needs (`an integer`, `a number`, `a string`).
        expected: &'static str,
        /// What the field holds, as JSON.
        found: String,
    },
    /// The metadata override (`--metadata`) is JSON but not an object of keys.
    #[error("the metadata override is {found}, expected an object of GGUF keys")]
    OverrideNotObject {
        /// What it is: `an array`, `a string`, ...
        found: &'static str,
    },
}

/// The key a field is written as, in [`GeneralError::WrongType`]'s message, when it differs from
/// the field's own name.
fn for_key(field: &str, key: &str) -> String {
    if field == key {
        String::new()
    } else {
        format!(" (for {key})")
    }
}

/// What a Hugging Face model id (`org/name` or a folder name) says, as gguf-py's
/// `Metadata.get_model_id_components` returns it: `(name, organization, basename, finetune,
/// version, size_label)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelIdParts {
    /// The name part (after `org/`), unchanged.
    pub name: Option<String>,
    /// The organization (before `/`), unless it starts with `.`.
    pub organization: Option<String>,
    /// The base model name (`Mixtral`, `Qwen1.5-MoE`).
    pub basename: Option<String>,
    /// The finetune (`Instruct`, `chat-1m`).
    pub finetune: Option<String>,
    /// The version (`v0.1`, `2407`).
    pub version: Option<String>,
    /// The size label (`8x7B`, `57B-A14B`, `mini`).
    pub size_label: Option<String>,
}

/// Python's `str.islower()`: at least one cased character, and all cased characters lowercase.
fn py_islower(s: &str) -> bool {
    let mut cased = false;
    for c in s.chars() {
        if c.is_uppercase() {
            return false;
        }
        if c.is_lowercase() {
            cased = true;
        }
    }
    cased
}

/// Python's `str.title()`: each run of cased letters starts uppercase and goes on lowercase.
fn py_title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_cased = false;
    for c in s.chars() {
        let cased = c.is_uppercase() || c.is_lowercase();
        if cased && !prev_cased {
            out.extend(c.to_uppercase());
        } else if cased {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
        prev_cased = cased;
    }
    out
}

fn is_decimal(c: char) -> bool {
    c.is_ascii_digit()
}

/// A pattern of the reference's heuristics, compiled once. The patterns are constants of this
/// file (each compiled by the unit tests), never built from input, so `Regex::new` cannot fail
/// whatever a checkpoint holds.
fn constant_re(pattern: &'static str) -> Regex {
    Regex::new(pattern).expect("a constant pattern of this module")
}

/// Words `id_to_title` keeps as they are: versions and words starting with a digit.
static TITLE_KEEP_RE: LazyLock<Regex> = LazyLock::new(|| constant_re(r"^(v\d+(?:\.\d+)*|\d.*)"));
/// A version part of a model id (`v0.1`, `iter3`, `2.5`).
static VERSION_RE: LazyLock<Regex> = LazyLock::new(|| constant_re(r"(?i)^(v|iter)?\d+([.]\d+)*$"));
/// A weight-type part (`q4_k`, `fp16`, `bf16`).
static TYPE_RE: LazyLock<Regex> = LazyLock::new(|| constant_re(r"(?i)^(i?q\d(_\w)*|b?fp?(16|32))$"));
/// A size part (`7B`, `8x7B`, `A3B`, `small`, `xl`).
static SIZE_RE: LazyLock<Regex> =
    LazyLock::new(|| constant_re(r"(?i)^(([A]|\d+[x])?\d+([._]\d+)?[KMBT][\d]?|small|mini|medium|large|x?xl)$"));
/// A finetune part (`chat`, `instruct`, `vision`, `lora`).
static FINETUNE_RE: LazyLock<Regex> = LazyLock::new(|| constant_re(r"(?i)^(chat|instruct|vision|lora)$"));

/// A Hugging Face model URL, capturing `OWNER/REPO`.
static HF_URL_RE: LazyLock<Regex> = LazyLock::new(|| constant_re(r"^https?://huggingface.co/([^/]+/[^/]+)$"));

/// gguf-py's `Metadata.id_to_title`: dashes to spaces, and each all-lowercase word title-cased
/// unless it is a version (`v0.1`) or starts with a digit (`8b`). `"Mixtral-8x7B-Instruct-v0.1"`
/// → `"Mixtral 8x7B Instruct v0.1"`.
pub fn id_to_title(s: &str) -> String {
    let keep = &*TITLE_KEEP_RE;
    s.trim()
        .replace('-', " ")
        .split_whitespace()
        .map(|w| if py_islower(w) && !keep.is_match(w) { py_title(w) } else { w.to_string() })
        .collect::<Vec<_>>()
        .join(" ")
}

#[derive(Default, Clone)]
struct Tags {
    basename: bool,
    size_label: bool,
    finetune: bool,
    version: bool,
    kind: bool,
}

impl Tags {
    fn is_empty(&self) -> bool {
        !(self.basename || self.size_label || self.finetune || self.version || self.kind)
    }
    fn count(&self) -> usize {
        [self.basename, self.size_label, self.finetune, self.version, self.kind].iter().filter(|b| **b).count()
    }
}

/// gguf-py's `Metadata.get_model_id_components(model_id, total_params)`: splits a model id into
/// its parts by the reference's heuristics. `total_params` (0 = unknown, negative = a LoRA
/// adapter) demotes a size in the name that is far from the real size to a finetune (a context
/// length like `4k`). An id with a space is a plain name; an id with neither size, finetune nor
/// version gives no basename.
pub fn model_id_components(model_id: &str, total_params: i64) -> ModelIdParts {
    if model_id.contains(' ') {
        return ModelIdParts { name: Some(model_id.to_string()), ..Default::default() };
    }
    let (mut org, full) = match model_id.split_once('/') {
        Some((o, n)) => (Some(o.to_string()), n.to_string()),
        None => (None, model_id.to_string()),
    };
    if org.as_deref().is_some_and(|o| o.starts_with('.')) {
        org = None;
    }
    let mut parts: Vec<String> = full.split('-').filter(|p| !p.is_empty()).map(str::to_string).collect();
    let mut tags = vec![Tags::default(); parts.len()];
    let (version_re, type_re, size_re, finetune_re) = (&*VERSION_RE, &*TYPE_RE, &*SIZE_RE, &*FINETUNE_RE);
    for i in 0..parts.len() {
        let part = parts[i].clone();
        if version_re.is_match(&part) {
            tags[i].version = true;
        } else if type_re.is_match(&part) {
            tags[i].kind = true;
            parts[i] = part.to_uppercase();
        } else if i > 0 && size_re.is_match(&part) {
            let mut p: Vec<char> = part.replace('_', ".").chars().collect();
            // bloom-7b1: the digit after the unit is the first decimal
            if p.last().is_some_and(|c| is_decimal(*c)) && p.len() >= 2 {
                let n = p.len();
                let (unit, last) = (p[n - 2], p[n - 1]);
                p.truncate(n - 2);
                p.extend(['.', last, unit]);
            }
            let n = p.len();
            if n > 1 && is_decimal(p[n - 2]) && "kmbt".contains(p[n - 1]) {
                p[n - 1] = p[n - 1].to_ascii_uppercase();
            }
            let mut part: String = p.iter().collect();
            if total_params != 0 {
                let n = p.len();
                let number: String = p[..n - 1].iter().collect();
                if let Ok(x) = number.parse::<f64>() {
                    // " KMBT".find(unit): -1 when absent, as in Python
                    let idx = " KMBT".find(p[n - 1]).map_or(-1, |i| i as i32);
                    let label = x * 1000f64.powi(idx);
                    let t = total_params;
                    let far = (t < 0 && label < (t.unsigned_abs() / 8) as f64)
                        || (t > 0 && (label - t as f64).abs() > (7 * t).div_euclid(8) as f64);
                    if far {
                        tags[i].finetune = true;
                        let last = p[n - 1].to_lowercase().collect::<String>();
                        part = format!("{number}{last}");
                    }
                }
            }
            if tags[i].is_empty() {
                tags[i].size_label = true;
            }
            parts[i] = part;
        } else if i > 0 && finetune_re.is_match(&part) {
            if total_params < 0 && part.to_lowercase() == "lora" {
                tags[i].kind = true;
            } else {
                tags[i].finetune = true;
            }
        }
    }
    // Word sizes (mini, large) give way to a numeric one
    let numeric = parts.iter().zip(&tags).any(|(n, t)| t.size_label && n.chars().any(is_decimal));
    if numeric {
        for (n, t) in parts.iter().zip(tags.iter_mut()) {
            if t.size_label && n.chars().all(char::is_alphabetic) {
                t.size_label = false;
            }
        }
    }
    let mut at_start = true;
    for (part, t) in parts.iter().zip(tags.iter_mut()) {
        let starts_alpha = part.chars().next().is_some_and(char::is_alphabetic);
        if at_start && ((t.is_empty() && starts_alpha) || t.version) {
            t.basename = true;
        } else {
            at_start = false;
            if t.is_empty() {
                t.finetune = true;
            }
        }
    }
    for t in tags.iter_mut().rev() {
        if t.basename && t.count() > 1 {
            t.basename = false;
        } else {
            break;
        }
    }
    let join = |f: &dyn Fn(&Tags) -> bool| {
        let v: Vec<&str> = parts.iter().zip(&tags).filter(|(_, t)| f(t)).map(|(n, _)| n.as_str()).collect();
        if v.is_empty() {
            None
        } else {
            Some(v.join("-"))
        }
    };
    let mut basename = join(&|t| t.basename);
    let mut sizes: Vec<&str> = Vec::new();
    for (n, t) in parts.iter().zip(&tags) {
        if t.size_label && !sizes.contains(&n.as_str()) {
            sizes.push(n);
        }
    }
    let size_label = if sizes.is_empty() { None } else { Some(sizes.join("-")) };
    let finetune = join(&|t| t.finetune);
    let version = join(&|t| t.version && !t.basename);
    if size_label.is_none() && finetune.is_none() && version.is_none() {
        basename = None;
    }
    ModelIdParts { name: Some(full), organization: org, basename, finetune, version, size_label }
}

/// gguf-py's `utility.model_weight_count_rounded_notation`: `n` scaled to K, M, B or T (the
/// first whose threshold `n` exceeds, from T down; K otherwise) with enough decimals for
/// `min_digits` significant digits: 4,200,000 → `"4.2M"`, 268,098,176 → `"268M"`.
pub fn weight_count_rounded(n: u64, min_digits: usize) -> String {
    let x = n as f64;
    let (scaled, suffix) = if x > 1e12 {
        (x * 1e-12, "T")
    } else if x > 1e9 {
        (x * 1e-9, "B")
    } else if x > 1e6 {
        (x * 1e-6, "M")
    } else {
        (x * 1e-3, "K")
    };
    let digits = format!("{}", scaled.round_ties_even() as u64);
    let digits = digits.trim_start_matches('0').len();
    let fix = min_digits.saturating_sub(digits);
    format!("{scaled:.fix$}{suffix}")
}

/// gguf-py's `utility.size_label`: `"{experts}x{shared + expert}"` for a mixture of experts,
/// else the rounded total (absolute values, so a LoRA's negative count works too).
pub fn size_label(p: &ParamCounts) -> String {
    if p.expert_count > 0 {
        let pretty = weight_count_rounded(p.shared.unsigned_abs() + p.expert.unsigned_abs(), 2);
        format!("{}x{pretty}", p.expert_count)
    } else {
        weight_count_rounded(p.total.unsigned_abs(), 2)
    }
}

/// The YAML front matter of a model card (`README.md`) as the reference reads it: the lines
/// between a first line `---` and the next `---` (or the end), joined with newlines, with `- no`
/// list items quoted (YAML 1.1 would read them as false) and tabs as two spaces. `None` when the
/// card does not start with `---` or is empty. Parse it as YAML and pass it to [`general_kv`].
pub fn front_matter(readme: &str) -> Option<String> {
    let mut lines = readme.lines();
    if lines.next()? != "---" {
        return None;
    }
    let body: Vec<&str> = lines.take_while(|l| *l != "---").collect();
    let yaml = body.join("\n") + "\n";
    Some(yaml.replace("- no\n", "- \"no\"\n").replace('\t', "  "))
}

/// An entry of `general.base_model.*` or `general.dataset.*`: the fields the reference writes
/// (`name`, `author`, `version`, `organization`, `description`, `url`, `doi`, `uuid`,
/// `repo_url`), as strings.
type Source = Vec<(String, Json)>;

const SOURCE_FIELDS: [&str; 9] =
    ["name", "author", "version", "organization", "description", "url", "doi", "uuid", "repo_url"];

fn source_from_id(id: &Json, total: i64) -> Option<Source> {
    let mut out: Source = Vec::new();
    let mut put = |k: &str, v: String| out.push((k.to_string(), Json::String(v)));
    match id {
        Json::String(s) if s.starts_with("http://") || s.starts_with("https://") || s.starts_with("ssh://") => {
            put("repo_url", s.clone());
            if s.contains("huggingface.co") {
                if let Some(c) = HF_URL_RE.captures(s) {
                    let p = model_id_components(&c[1], total);
                    if let Some(n) = p.name {
                        put("name", id_to_title(&n));
                    }
                    if let Some(o) = p.organization {
                        put("organization", id_to_title(&o));
                    }
                    if let Some(v) = p.version {
                        put("version", v);
                    }
                }
            }
        }
        Json::String(s) => {
            let p = model_id_components(s, total);
            if let Some(n) = &p.name {
                put("name", id_to_title(n));
            }
            if let Some(o) = &p.organization {
                put("organization", id_to_title(o));
            }
            if let Some(v) = p.version {
                put("version", v);
            }
            if let (Some(o), Some(n)) = (&p.organization, &p.name) {
                put("repo_url", format!("https://huggingface.co/{o}/{n}"));
            }
        }
        Json::Object(m) => return Some(m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        // the reference logs the entry as not in a known format and writes an empty one
        _ => {}
    }
    Some(out)
}

#[derive(Default)]
struct Meta {
    name: Option<String>,
    author: Option<String>,
    version: Option<String>,
    organization: Option<String>,
    finetune: Option<String>,
    basename: Option<String>,
    description: Option<String>,
    quantized_by: Option<String>,
    size_label: Option<String>,
    url: Option<String>,
    doi: Option<String>,
    uuid: Option<String>,
    repo_url: Option<String>,
    source_url: Option<String>,
    source_doi: Option<String>,
    source_uuid: Option<String>,
    source_repo_url: Option<String>,
    license: Option<String>,
    license_name: Option<String>,
    license_link: Option<String>,
    base_models: Option<Vec<Source>>,
    /// The file `base_models` came from (`README.md` or the override), for errors.
    base_models_from: &'static str,
    datasets: Option<Vec<Source>>,
    datasets_from: &'static str,
    tags: Option<Vec<String>>,
    languages: Option<Vec<String>>,
}

fn card_string(card: &serde_json::Map<String, Json>, field: &str, key: &str) -> Result<Option<String>, GeneralError> {
    match card.get(field) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s.clone())),
        // YAML numbers and booleans: Python writes them with str() only where it formats; the
        // writer's add_string would fail on them, so refuse
        Some(Json::Array(items)) if key == "general.license" => {
            // a list of licenses is written joined with commas
            let v: Option<Vec<&str>> = items.iter().map(Json::as_str).collect();
            v.map(|v| Some(v.join(",")))
                .ok_or_else(|| wrong("README.md", field, key, "a string", &Json::Array(items.clone())))
        }
        Some(other) => Err(wrong("README.md", field, key, "a string", other)),
    }
}

/// The `general.sampling.*` keys in the reference's order: (key suffix, `generation_config.json`
/// fields, first found first, whether the key is an i32; the others are f32 but `sequence`, a
/// string).
const SAMPLING: [(&str, &[&str], bool); 12] = [
    ("sequence", &["sequence"], false),
    ("top_k", &["top_k"], true),
    ("top_p", &["top_p"], false),
    ("min_p", &["min_p"], false),
    ("xtc_probability", &["xtc_probability"], false),
    ("xtc_threshold", &["xtc_threshold"], false),
    ("temp", &["temperature"], false),
    ("penalty_last_n", &["penalty_last_n"], true),
    ("penalty_repeat", &["penalty_repeat", "repetition_penalty"], false),
    ("mirostat", &["mirostat"], true),
    ("mirostat_tau", &["mirostat_tau"], false),
    ("mirostat_eta", &["mirostat_eta"], false),
];

/// What [`GeneralError::WrongType`] names as the file of a value from the metadata override.
pub const OVERRIDE_SOURCE: &str = "the metadata override";

/// The keys a metadata override (`convert_hf_to_gguf.py --metadata FILE`, gguf-py's
/// `Metadata.load`) takes, with what each needs: the twelve `general.sampling.*` keys (strings,
/// i32 or f32 as written), the string keys `general.name` … `general.source.repo_url`, the lists
/// `general.base_models` and `general.datasets` (arrays of objects with string fields `name`,
/// `author`, `version`, `organization`, `description`, `url`, `doi`, `uuid`, `repo_url`; written
/// as `general.base_model.count`, `general.base_model.{i}.*`, ...) and `general.tags` and
/// `general.languages` (arrays of strings). Not among them, as in the reference:
/// `general.license` (only the model card gives it), `general.architecture`, `general.type`.
pub const OVERRIDE_KEYS: [&str; 35] = [
    "general.sampling.sequence",
    "general.sampling.top_k",
    "general.sampling.top_p",
    "general.sampling.min_p",
    "general.sampling.xtc_probability",
    "general.sampling.xtc_threshold",
    "general.sampling.temp",
    "general.sampling.penalty_last_n",
    "general.sampling.penalty_repeat",
    "general.sampling.mirostat",
    "general.sampling.mirostat_tau",
    "general.sampling.mirostat_eta",
    "general.name",
    "general.author",
    "general.version",
    "general.organization",
    "general.finetune",
    "general.basename",
    "general.description",
    "general.quantized_by",
    "general.size_label",
    "general.license.name",
    "general.license.link",
    "general.url",
    "general.doi",
    "general.uuid",
    "general.repo_url",
    "general.source.url",
    "general.source.doi",
    "general.source.uuid",
    "general.source.repo_url",
    "general.base_models",
    "general.datasets",
    "general.tags",
    "general.languages",
];

/// The keys of a metadata override that [`general_kv`] ignores (not in [`OVERRIDE_KEYS`]), in
/// the file's order: the reference ignores them silently, a caller may warn. Empty for a value
/// that is not an object.
pub fn ignored_override_keys(metadata_override: &Json) -> Vec<String> {
    match metadata_override {
        Json::Object(o) => o.keys().filter(|k| !OVERRIDE_KEYS.contains(&k.as_str())).cloned().collect(),
        _ => Vec::new(),
    }
}

/// Python's falsiness of a JSON value: `null`, `false`, `0`, `""`, `[]`, `{}`. gguf-py's
/// `add_string` and `add_array` write nothing for such a value.
fn falsy(v: &Json) -> bool {
    match v {
        Json::Null => true,
        Json::Bool(b) => !b,
        Json::Number(n) => n.as_f64() == Some(0.0),
        Json::String(s) => s.is_empty(),
        Json::Array(a) => a.is_empty(),
        Json::Object(o) => o.is_empty(),
    }
}

/// Whether gguf-py's writer writes `value`: it skips an empty one (`add_string` of `""`,
/// `add_array` of `[]`), which still counts for the default file name (`naming_convention`) and
/// stops the fallbacks.
fn written_by_reference(value: &Value) -> bool {
    match value {
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => true,
    }
}

fn json_kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// A sampling value as the reference's writer packs it: a string (`sequence`), an i32 (an integer
/// or a boolean in range: Python's `struct.pack("<i")`), or an f32 (a number or a boolean; a
/// finite number that rounds to infinity is refused, as `struct.pack("<f")` refuses it).
fn sampling_value(
    file: &'static str,
    field: &str,
    key: &str,
    string: bool,
    int: bool,
    v: &Json,
) -> Result<Value, GeneralError> {
    if string {
        return Ok(Value::String(v.as_str().ok_or_else(|| wrong(file, field, key, "a string", v))?.into()));
    }
    if int {
        let i = v.as_i64().or_else(|| v.as_bool().map(i64::from)).and_then(|i| i32::try_from(i).ok());
        return Ok(Value::I32(i.ok_or_else(|| wrong(file, field, key, "an integer", v))?));
    }
    let f = v.as_f64().or_else(|| v.as_bool().map(|b| f64::from(u8::from(b))));
    match f {
        #[allow(clippy::cast_possible_truncation)] // rounding to f32 is what the key stores
        Some(f) if (f as f32).is_finite() || !f.is_finite() => Ok(Value::F32(f as f32)),
        Some(_) => Err(wrong(file, field, key, "a number within the f32 range", v)),
        None => Err(wrong(file, field, key, "a number", v)),
    }
}

/// Applies a metadata override as gguf-py's `Metadata.load` does, after the model card, the
/// model ids and `generation_config.json`: every key of [`OVERRIDE_KEYS`] present replaces the
/// value (`null` clears it).
fn apply_override(
    m: &mut Meta,
    sampling: &mut [Option<(&'static str, String, Json)>],
    o: &serde_json::Map<String, Json>,
) -> Result<(), GeneralError> {
    for (slot, (suffix, _, _)) in sampling.iter_mut().zip(SAMPLING) {
        let key = format!("general.sampling.{suffix}");
        if let Some(v) = o.get(&key) {
            *slot = Some((OVERRIDE_SOURCE, key, v.clone()));
        }
    }
    let strings: [(&str, &mut Option<String>); 19] = [
        ("general.name", &mut m.name),
        ("general.author", &mut m.author),
        ("general.version", &mut m.version),
        ("general.organization", &mut m.organization),
        ("general.finetune", &mut m.finetune),
        ("general.basename", &mut m.basename),
        ("general.description", &mut m.description),
        ("general.quantized_by", &mut m.quantized_by),
        ("general.size_label", &mut m.size_label),
        ("general.license.name", &mut m.license_name),
        ("general.license.link", &mut m.license_link),
        ("general.url", &mut m.url),
        ("general.doi", &mut m.doi),
        ("general.uuid", &mut m.uuid),
        ("general.repo_url", &mut m.repo_url),
        ("general.source.url", &mut m.source_url),
        ("general.source.doi", &mut m.source_doi),
        ("general.source.uuid", &mut m.source_uuid),
        ("general.source.repo_url", &mut m.source_repo_url),
    ];
    for (key, target) in strings {
        match o.get(key) {
            None => {}
            Some(Json::Null) => *target = None,
            Some(Json::String(s)) => *target = Some(s.clone()),
            // false, 0, [], {}: set (no fallback replaces it), and not written, as the
            // reference's add_string skips every falsy value
            Some(v) if falsy(v) => *target = Some(String::new()),
            Some(other) => return Err(wrong(OVERRIDE_SOURCE, key, key, "a string", other)),
        }
    }
    for (key, list, from) in [
        ("general.base_models", &mut m.base_models, &mut m.base_models_from),
        ("general.datasets", &mut m.datasets, &mut m.datasets_from),
    ] {
        match o.get(key) {
            None => {}
            Some(Json::Null) => *list = None,
            Some(Json::Array(items)) => {
                let mut entries = Vec::with_capacity(items.len());
                for item in items {
                    // each entry is a dict whose string fields are written (the others are not)
                    let Json::Object(e) = item else {
                        return Err(wrong(
                            OVERRIDE_SOURCE,
                            key,
                            key,
                            "an array of objects",
                            &Json::Array(items.clone()),
                        ));
                    };
                    entries.push(e.iter().map(|(k, v)| (k.clone(), v.clone())).collect::<Source>());
                }
                *list = Some(entries);
                *from = OVERRIDE_SOURCE;
            }
            Some(other) => return Err(wrong(OVERRIDE_SOURCE, key, key, "an array of objects", other)),
        }
    }
    for (key, list) in [("general.tags", &mut m.tags), ("general.languages", &mut m.languages)] {
        match o.get(key) {
            None => {}
            Some(Json::Null) => *list = None,
            Some(Json::Array(items)) => {
                let v: Option<Vec<String>> = items.iter().map(|i| i.as_str().map(str::to_owned)).collect();
                *list = Some(v.ok_or_else(|| {
                    wrong(OVERRIDE_SOURCE, key, key, "an array of strings", &Json::Array(items.clone()))
                })?);
            }
            Some(other) => return Err(wrong(OVERRIDE_SOURCE, key, key, "an array of strings", other)),
        }
    }
    Ok(())
}

fn wrong(source_file: &'static str, field: &str, key: &str, expected: &'static str, found: &Json) -> GeneralError {
    GeneralError::WrongType {
        source_file,
        field: field.to_string(),
        key: key.to_string(),
        expected,
        found: found.to_string(),
    }
}

fn apply_id(m: &mut Meta, p: ModelIdParts) {
    if m.name.is_none() {
        m.name = p.name.as_deref().map(id_to_title);
    }
    if m.organization.is_none() {
        m.organization = p.organization.as_deref().map(id_to_title);
    }
    if m.basename.is_none() {
        m.basename = p.basename;
    }
    if m.finetune.is_none() {
        m.finetune = p.finetune;
    }
    if m.version.is_none() {
        m.version = p.version;
    }
    if m.size_label.is_none() {
        m.size_label = p.size_label;
    }
}

/// The parts of a default output file name (gguf-py's `naming_convention`), as the model's
/// `general.*` keys give them, empty values included (see [`GeneralKeys::name_parts`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameParts {
    /// `general.name`.
    pub name: Option<String>,
    /// `general.basename` (preferred over the name).
    pub basename: Option<String>,
    /// `general.finetune`.
    pub finetune: Option<String>,
    /// `general.version`.
    pub version: Option<String>,
    /// `general.size_label`.
    pub size_label: Option<String>,
}

/// The `general.*` keys [`general_kv`] made: the keys to write ([`keys`](Self::keys)) and the
/// parts of the default file name ([`name_parts`](Self::name_parts)).
///
/// The two differ on purpose, as in the reference (gguf-py's `Metadata.set_gguf_meta_model` and
/// `naming_convention`): an empty string or array (`general.finetune = ""` from a metadata
/// override, an empty `tags` list in the model card) is not written, since gguf-py's
/// `add_string` and `add_array` skip it, but still counts for the file name and stops the
/// fallbacks. Only the keys to write are given out, so that a caller cannot write an empty one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GeneralKeys {
    /// Every key made, in the reference's order, empty values included.
    all: Vec<(String, Value)>,
}

impl GeneralKeys {
    /// Sets `general.name` (the reference's `--model-name`, which replaces the name found): in
    /// its place when the keys have it, else appended. An empty `name` is not written, and names
    /// the file as an empty name does in the reference.
    pub fn set_name(&mut self, name: &str) {
        let value = Value::String(name.to_owned());
        match self.all.iter_mut().find(|(k, _)| k == "general.name") {
            Some(slot) => slot.1 = value,
            None => self.all.push(("general.name".to_owned(), value)),
        }
    }

    /// The keys to write, in the reference's order, without the empty strings and arrays that
    /// gguf-py's writer skips.
    pub fn keys(&self) -> impl Iterator<Item = &(String, Value)> {
        self.all.iter().filter(|(_, v)| written_by_reference(v))
    }

    /// [`keys`](Self::keys), owned.
    pub fn into_keys(self) -> Vec<(String, Value)> {
        self.all.into_iter().filter(|(_, v)| written_by_reference(v)).collect()
    }

    /// The parts of the default output file name: `general.name`, `general.basename`,
    /// `general.finetune`, `general.version` and `general.size_label` as made, an empty one
    /// included (the reference names the file from its metadata, not from what it wrote).
    pub fn name_parts(&self) -> NameParts {
        let text = |key: &str| {
            self.all.iter().find(|(k, _)| k == key).and_then(|(_, v)| match v {
                Value::String(s) => Some(s.clone()),
                _ => None,
            })
        };
        NameParts {
            name: text("general.name"),
            basename: text("general.basename"),
            finetune: text("general.finetune"),
            version: text("general.version"),
            size_label: text("general.size_label"),
        }
    }
}

/// The `general.*` keys from `general.type` to `general.languages`, in the reference's order
/// with its types (see the module docs), for the checkpoint in `model_dir`.
///
/// - `config`: its `config.json` (only `_name_or_path` is read: a model id with at most one `/`).
/// - `params`: the counts of the tensors that will be written ([`ParamCounts`]).
/// - `model_card`: the front matter of its `README.md` parsed from YAML ([`front_matter`]), if any.
/// - `generation_config`: its `generation_config.json`, if any (the `general.sampling.*` keys).
/// - `metadata_override`: the reference's `--metadata` file, parsed from JSON, if any: an object
///   whose keys are GGUF key names ([`OVERRIDE_KEYS`]). Each key it has replaces what the files
///   above gave (`null` removes it); the other keys are ignored, as in the reference
///   ([`ignored_override_keys`] lists them).
///
/// Names come, first found first, from the model card (`name`, `model_name`, ...), then
/// `_name_or_path`, then the folder's name (`model_dir`'s last component), each through
/// [`model_id_components`] and [`id_to_title`]; the folder's name itself if all fail;
/// `general.size_label` from [`size_label`] when no name gave one and `params.total > 0`.
/// `--model-name` is not taken here: the caller replaces `general.name` with it
/// ([`GeneralKeys::set_name`]). The keys to write ([`GeneralKeys::keys`]) leave out the empty
/// strings and arrays, as the reference's writer does; the default file name's parts
/// ([`GeneralKeys::name_parts`]) still take them, as the reference's `naming_convention` does.
///
/// Errors: a value whose type its key cannot take ([`GeneralError::WrongType`]); a
/// `metadata_override` that is not a JSON object ([`GeneralError::OverrideNotObject`]).
pub fn general_kv(
    model_dir: &Path,
    config: &Json,
    params: &ParamCounts,
    model_card: Option<&Json>,
    generation_config: Option<&Json>,
    metadata_override: Option<&Json>,
) -> Result<GeneralKeys, GeneralError> {
    let overrides = match metadata_override {
        None => None,
        Some(Json::Object(o)) => Some(o),
        Some(other) => return Err(GeneralError::OverrideNotObject { found: json_kind(other) }),
    };
    let total = params.total;
    let mut m = Meta::default();
    if let Some(Json::Object(card)) = model_card {
        let fields: [(&str, &str); 30] = [
            ("name", "name"),
            ("author", "author"),
            ("version", "version"),
            ("organization", "organization"),
            ("description", "description"),
            ("finetune", "finetune"),
            ("basename", "basename"),
            ("size_label", "size_label"),
            ("source_url", "url"),
            ("source_doi", "doi"),
            ("source_uuid", "uuid"),
            ("source_repo_url", "repo_url"),
            ("name", "model_name"),
            ("author", "model_author"),
            ("version", "model_version"),
            ("organization", "model_organization"),
            ("description", "model_description"),
            ("finetune", "model_finetune"),
            ("basename", "model_basename"),
            ("size_label", "model_size_label"),
            ("source_url", "model_url"),
            ("source_doi", "model_doi"),
            ("source_uuid", "model_uuid"),
            ("source_repo_url", "model_repo_url"),
            ("name", "model_name"),
            ("author", "model_creator"),
            ("basename", "model_type"),
            ("license", "license"),
            ("license_name", "license_name"),
            ("license_link", "license_link"),
        ];
        for (slot, field) in fields.iter() {
            // license fields come after base models and datasets in the reference; their values
            // do not depend on them, so the order here only matters for errors
            let key = match *slot {
                "source_url" => "general.source.url".to_string(),
                "source_doi" => "general.source.doi".to_string(),
                "source_uuid" => "general.source.uuid".to_string(),
                "source_repo_url" => "general.source.repo_url".to_string(),
                "license_name" => "general.license.name".to_string(),
                "license_link" => "general.license.link".to_string(),
                s => format!("general.{s}"),
            };
            let target = match *slot {
                "name" => &mut m.name,
                "author" => &mut m.author,
                "version" => &mut m.version,
                "organization" => &mut m.organization,
                "description" => &mut m.description,
                "finetune" => &mut m.finetune,
                "basename" => &mut m.basename,
                "size_label" => &mut m.size_label,
                "source_url" => &mut m.source_url,
                "source_doi" => &mut m.source_doi,
                "source_uuid" => &mut m.source_uuid,
                "source_repo_url" => &mut m.source_repo_url,
                "license" => &mut m.license,
                "license_name" => &mut m.license_name,
                _ => &mut m.license_link,
            };
            if target.is_none() && card.contains_key(*field) {
                *target = card_string(card, field, &key)?;
            }
        }
        let first = |names: [&str; 3]| names.iter().find_map(|n| card.get(*n));
        if ["base_model", "base_models", "base_model_sources"].iter().any(|k| card.contains_key(*k)) {
            let ids: Vec<Json> = match first(["base_model", "base_models", "base_model_sources"]) {
                Some(Json::Array(v)) => v.clone(),
                Some(s @ Json::String(_)) => vec![s.clone()],
                _ => Vec::new(),
            };
            m.base_models = Some(ids.iter().filter_map(|id| source_from_id(id, total)).collect());
            m.base_models_from = "README.md";
        }
        if ["datasets", "dataset", "dataset_sources"].iter().any(|k| card.contains_key(*k)) {
            let ids: Vec<Json> = match first(["datasets", "dataset", "dataset_sources"]) {
                Some(Json::Array(v)) => v.clone(),
                Some(s @ Json::String(_)) => vec![s.clone()],
                _ => Vec::new(),
            };
            m.datasets = Some(ids.iter().filter_map(|id| source_from_id(id, total)).collect());
            m.datasets_from = "README.md";
        }
        for (slot, field) in
            [("tags", "tags"), ("tags", "pipeline_tag"), ("languages", "languages"), ("languages", "language")]
        {
            let key = format!("general.{slot}");
            let list = if slot == "tags" { &mut m.tags } else { &mut m.languages };
            match card.get(field) {
                None | Some(Json::Null) => {}
                Some(Json::String(s)) => list.get_or_insert_with(Vec::new).push(s.clone()),
                Some(Json::Array(items)) => {
                    let l = list.get_or_insert_with(Vec::new);
                    for it in items {
                        l.push(it.as_str().ok_or_else(|| wrong("README.md", field, &key, "a string", it))?.to_string());
                    }
                }
                // other types: the reference keeps the list as it was (created empty)
                Some(_) => {
                    list.get_or_insert_with(Vec::new);
                }
            }
        }
    }
    if let Some(id) = config.get("_name_or_path").and_then(Json::as_str) {
        if id.matches('/').count() <= 1 {
            apply_id(&mut m, model_id_components(id, total));
        }
    }
    let dir_name = model_dir.file_name().map(|n| n.to_string_lossy().into_owned());
    if let Some(id) = &dir_name {
        apply_id(&mut m, model_id_components(id, total));
    }

    // The sampling values, first from generation_config.json: (file, field, value) per key.
    let mut sampling: Vec<Option<(&'static str, String, Json)>> = vec![None; SAMPLING.len()];
    if let Some(Json::Object(g)) = generation_config {
        for (slot, (_, fields, _)) in sampling.iter_mut().zip(SAMPLING) {
            // gen_config.get(field, default): a present null counts as absent only at the end
            if let Some((field, v)) = fields.iter().find_map(|f| g.get(*f).map(|v| (*f, v))) {
                *slot = Some(("generation_config.json", field.to_string(), v.clone()));
            }
        }
    }
    if let Some(o) = overrides {
        apply_override(&mut m, &mut sampling, o)?;
    }
    if m.name.is_none() {
        m.name = dir_name.clone();
    }
    if m.size_label.is_none() && total > 0 {
        m.size_label = Some(size_label(params));
    }

    let mut kv: Vec<(String, Value)> = vec![("general.type".into(), Value::String("model".into()))];
    for (slot, (suffix, _, int)) in sampling.iter().zip(SAMPLING) {
        let Some((file, field, v)) = slot else { continue };
        // None is not written; neither is a falsy sequence (add_string)
        if v.is_null() || (suffix == "sequence" && falsy(v)) {
            continue;
        }
        let key = format!("general.sampling.{suffix}");
        kv.push((key.clone(), sampling_value(file, field, &key, suffix == "sequence", int, v)?));
    }
    let mut put = |k: &str, v: &Option<String>| {
        if let Some(v) = v {
            kv.push((k.to_string(), Value::String(v.clone())));
        }
    };
    put("general.name", &m.name);
    put("general.author", &m.author);
    put("general.version", &m.version);
    put("general.organization", &m.organization);
    put("general.finetune", &m.finetune);
    put("general.basename", &m.basename);
    put("general.description", &m.description);
    put("general.quantized_by", &m.quantized_by);
    put("general.size_label", &m.size_label);
    put("general.license", &m.license);
    put("general.license.name", &m.license_name);
    put("general.license.link", &m.license_link);
    put("general.url", &m.url);
    put("general.doi", &m.doi);
    put("general.uuid", &m.uuid);
    put("general.repo_url", &m.repo_url);
    put("general.source.url", &m.source_url);
    put("general.source.doi", &m.source_doi);
    put("general.source.uuid", &m.source_uuid);
    put("general.source.repo_url", &m.source_repo_url);
    for (group, list, file) in
        [("base_model", &m.base_models, m.base_models_from), ("dataset", &m.datasets, m.datasets_from)]
    {
        let Some(list) = list else { continue };
        kv.push((format!("general.{group}.count"), Value::U32(list.len() as u32)));
        for (i, entry) in list.iter().enumerate() {
            for field in SOURCE_FIELDS {
                if let Some((_, v)) = entry.iter().find(|(k, _)| k == field) {
                    if falsy(v) {
                        // add_string(None or "") writes nothing
                        continue;
                    }
                    let key = format!("general.{group}.{i}.{field}");
                    let s = v.as_str().ok_or_else(|| wrong(file, field, &key, "a string", v))?;
                    kv.push((key, Value::String(s.to_string())));
                }
            }
        }
    }
    if let Some(t) = &m.tags {
        kv.push(("general.tags".into(), Value::Array(Array::String(t.clone()))));
    }
    if let Some(l) = &m.languages {
        kv.push(("general.languages".into(), Value::Array(Array::String(l.clone()))));
    }
    Ok(GeneralKeys { all: kv })
}

/// `general.file_type` (u32): llama.cpp's file type number of the output (`LlamaFileType`:
/// 0 all F32, 1 mostly F16, 7 mostly Q8_0, 32 mostly BF16, ...).
pub fn file_type_kv(file_type: u32) -> (String, Value) {
    ("general.file_type".into(), Value::U32(file_type))
}

/// `general.quantization_version` (u32) = 2, ggml's `GGML_QNT_VERSION`, written by the reference
/// right after the architecture's hyper-parameters.
pub fn quantization_version_kv() -> (String, Value) {
    ("general.quantization_version".into(), Value::U32(2))
}

#[cfg(test)]
mod tests;
