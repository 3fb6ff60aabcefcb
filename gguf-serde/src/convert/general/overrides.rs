//! The metadata override (`convert_hf_to_gguf.py --metadata FILE`): the keys it takes, and how
//! its values replace what the checkpoint's files gave, with their type checks.

use super::*;

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
pub(super) fn falsy(v: &Json) -> bool {
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
pub(super) fn written_by_reference(value: &Value) -> bool {
    match value {
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => true,
    }
}

pub(super) fn json_kind(v: &Json) -> &'static str {
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
pub(super) fn sampling_value(
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
pub(super) fn apply_override(
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

pub(super) fn wrong(
    source_file: &'static str,
    field: &str,
    key: &str,
    expected: &'static str,
    found: &Json,
) -> GeneralError {
    GeneralError::WrongType {
        source_file,
        field: field.to_string(),
        key: key.to_string(),
        expected,
        found: found.to_string(),
    }
}
