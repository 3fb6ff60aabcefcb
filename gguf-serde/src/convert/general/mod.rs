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

mod model_id;
mod overrides;

use model_id::HF_URL_RE;
pub use model_id::{id_to_title, model_id_components, size_label, weight_count_rounded, ModelIdParts};
use overrides::{apply_override, falsy, json_kind, sampling_value, written_by_reference, wrong};
pub use overrides::{ignored_override_keys, OVERRIDE_KEYS, OVERRIDE_SOURCE};

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
        card_strings(&mut m, card)?;
        card_sources(&mut m, card, total);
        card_lists(&mut m, card)?;
    }
    let dir_name = model_id_keys(&mut m, config, model_dir, total);
    let mut sampling = generation_sampling(generation_config);
    if let Some(o) = overrides {
        apply_override(&mut m, &mut sampling, o)?;
    }
    if m.name.is_none() {
        m.name = dir_name;
    }
    if m.size_label.is_none() && total > 0 {
        m.size_label = Some(size_label(params));
    }

    let mut kv: Vec<(String, Value)> = vec![("general.type".into(), Value::String("model".into()))];
    push_sampling(&mut kv, &sampling)?;
    push_strings(&mut kv, &m);
    push_sources(&mut kv, &m)?;
    push_lists(&mut kv, &m);
    Ok(GeneralKeys { all: kv })
}

/// A `general.sampling.*` value found, per [`SAMPLING`] key: (file, field, value).
type Sampling = Vec<Option<(&'static str, String, Json)>>;

/// The model card's string fields (`name`, `model_name`, `license`, …), each into its slot of
/// `m` unless an earlier field filled it.
fn card_strings(m: &mut Meta, card: &serde_json::Map<String, Json>) -> Result<(), GeneralError> {
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
    Ok(())
}

/// The model card's base models and datasets (`base_model`, `datasets`, … as ids or lists).
fn card_sources(m: &mut Meta, card: &serde_json::Map<String, Json>, total: i64) {
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
}

/// The model card's tags (`tags`, `pipeline_tag`) and languages (`languages`, `language`).
fn card_lists(m: &mut Meta, card: &serde_json::Map<String, Json>) -> Result<(), GeneralError> {
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
    Ok(())
}

/// The parts `config.json`'s `_name_or_path` and the folder's name give (first found first);
/// returns the folder's name.
fn model_id_keys(m: &mut Meta, config: &Json, model_dir: &Path, total: i64) -> Option<String> {
    if let Some(id) = config.get("_name_or_path").and_then(Json::as_str) {
        if id.matches('/').count() <= 1 {
            apply_id(m, model_id_components(id, total));
        }
    }
    let dir_name = model_dir.file_name().map(|n| n.to_string_lossy().into_owned());
    if let Some(id) = &dir_name {
        apply_id(m, model_id_components(id, total));
    }
    dir_name
}

/// The sampling values of `generation_config.json`.
fn generation_sampling(generation_config: Option<&Json>) -> Sampling {
    let mut sampling: Sampling = vec![None; SAMPLING.len()];
    if let Some(Json::Object(g)) = generation_config {
        for (slot, (_, fields, _)) in sampling.iter_mut().zip(SAMPLING) {
            // gen_config.get(field, default): a present null counts as absent only at the end
            if let Some((field, v)) = fields.iter().find_map(|f| g.get(*f).map(|v| (*f, v))) {
                *slot = Some(("generation_config.json", field.to_string(), v.clone()));
            }
        }
    }
    sampling
}

/// The `general.sampling.*` keys, in [`SAMPLING`]'s order.
fn push_sampling(kv: &mut Vec<(String, Value)>, sampling: &Sampling) -> Result<(), GeneralError> {
    for (slot, (suffix, _, int)) in sampling.iter().zip(SAMPLING) {
        let Some((file, field, v)) = slot else { continue };
        // None is not written; neither is a falsy sequence (add_string)
        if v.is_null() || (suffix == "sequence" && falsy(v)) {
            continue;
        }
        let key = format!("general.sampling.{suffix}");
        kv.push((key.clone(), sampling_value(file, field, &key, suffix == "sequence", int, v)?));
    }
    Ok(())
}

/// The string keys `general.name` … `general.source.repo_url`, those that have a value.
fn push_strings(kv: &mut Vec<(String, Value)>, m: &Meta) {
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
}

/// `general.base_model.*` and `general.dataset.*`: the count, then each entry's fields.
fn push_sources(kv: &mut Vec<(String, Value)>, m: &Meta) -> Result<(), GeneralError> {
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
    Ok(())
}

/// `general.tags` and `general.languages`.
fn push_lists(kv: &mut Vec<(String, Value)>, m: &Meta) {
    if let Some(t) = &m.tags {
        kv.push(("general.tags".into(), Value::Array(Array::String(t.clone()))));
    }
    if let Some(l) = &m.languages {
        kv.push(("general.languages".into(), Value::Array(Array::String(l.clone()))));
    }
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
