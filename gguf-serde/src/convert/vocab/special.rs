//! gguf-py's `SpecialVocab`: merges, special token ids, add_bos/add_eos/add_sep, chat templates
//! and normalizer flags of a tokenizer folder.

use std::path::Path;

use serde_json::{Map, Value as J};

use super::json_parts::{self, JsonParts};
use super::{invalid, read_json, truthy, Kvs, OrderedObject, VocabError};
use crate::container::{Array, Value};

/// A chat template: one text, or named templates (`default` becomes `tokenizer.chat_template`,
/// the others `tokenizer.chat_template.NAME` and the list `tokenizer.chat_templates`).
#[derive(Clone, Debug, PartialEq)]
pub enum ChatTemplate {
    /// One template.
    Single(String),
    /// `(name, template)` pairs in file order; a pair without a name or template is skipped, as
    /// gguf-py skips it.
    Named(Vec<(String, Option<String>)>),
}

/// What `SpecialVocab` found in a folder, in the order it found it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpecialVocab {
    /// Merges (`tokenizer.json` `model.merges`, or `merges.txt`), `"a b"` each.
    pub merges: Vec<String>,
    /// Special token ids by type (`bos`, `eos`, `unk`, `sep`, `pad`, `cls`, `mask`, `eot`, …) in
    /// the order they were set.
    pub special_token_ids: Vec<(String, u32)>,
    /// `add_{type}_token` flags in the order they were set.
    pub add_special_token: Vec<(String, bool)>,
    /// The chat template.
    pub chat_template: Option<ChatTemplate>,
    /// `tokenizer.ggml.normalizer.lowercase`.
    pub normalizer_lowercase: Option<bool>,
    /// `tokenizer.ggml.normalizer.strip_accents`.
    pub normalizer_strip_accents: Option<bool>,
    types: Vec<String>,
    n_vocab: Option<usize>,
}

/// Reads the special vocabulary of `dir` as `gguf.SpecialVocab(dir, load_merges, n_vocab=n_vocab)`
/// does: `tokenizer.json` (merges if `load_merges`, normalizer, `post_processor` for
/// add_bos/add_eos/add_sep and the first/last special tokens), `tokenizer_config.json`
/// (`{type}_token` looked up by content among `tokenizer.json`'s `added_tokens`,
/// `add_{type}_token`, `chat_template`, else `chat_template.jinja` with
/// `additional_chat_templates/*.jinja` (sorted by file name here; gguf-py takes the folder's
/// listing order), else `chat_template.json`), then `config.json`'s `{type}_token_id` (or its
/// `text_config`'s); ids at or above `n_vocab` are skipped, and the first id set for a type
/// stays. Like the reference it does not read `special_tokens_map.json` or
/// `generation_config.json`. With `load_merges` and no merges in `tokenizer.json`, `merges.txt`.
pub fn special_vocab(dir: &Path, load_merges: bool, n_vocab: Option<usize>) -> Result<SpecialVocab, VocabError> {
    load(dir, load_merges, n_vocab, &["bos", "eos", "unk", "sep", "pad", "cls", "mask"])
}

pub(super) fn load(
    dir: &Path,
    load_merges: bool,
    n_vocab: Option<usize>,
    types: &[&str],
) -> Result<SpecialVocab, VocabError> {
    let mut sv = SpecialVocab { types: types.iter().map(|s| s.to_string()).collect(), n_vocab, ..Default::default() };
    sv.load_tokenizer_json(dir, load_merges)?;
    sv.load_config_json(dir)?;
    if load_merges && sv.merges.is_empty() {
        sv.load_merges_txt(dir)?;
    }
    Ok(sv)
}

fn get<'a>(v: &'a J, key: &str) -> Option<&'a J> {
    v.as_object().and_then(|o| o.get(key))
}

/// Sets `key` in the tokenizer config being rewritten, as the reference assigns into its dict;
/// only called where the config is known to be present (`has_config`), and a no-op otherwise.
fn set_key(config: &mut Option<Map<String, J>>, key: String, value: J) {
    if let Some(c) = config.as_mut() {
        c.insert(key, value);
    }
}

fn special_token_id(entry: &J) -> Option<&J> {
    get(entry, "SpecialToken").and_then(|s| get(s, "id")).filter(|v| truthy(v))
}

impl SpecialVocab {
    /// `_set_special_token`: an integer id under `n_vocab` is kept unless the type has one.
    pub(super) fn set_special_token(&mut self, typ: &str, id: u64) {
        if self.n_vocab.is_none_or(|n| (id as u128) < n as u128)
            && id <= u32::MAX as u64
            && !self.special_token_ids.iter().any(|(t, _)| t == typ)
        {
            self.special_token_ids.push((typ.to_owned(), id as u32));
        }
    }

    fn set_from_json(&mut self, path: &Path, typ: &str, v: Option<&J>) -> Result<(), VocabError> {
        match v {
            Some(J::Number(n)) if n.is_i64() || n.is_u64() => match n.as_u64() {
                Some(id) => {
                    self.set_special_token(typ, id);
                    Ok(())
                }
                None => Err(invalid(path, format!("invalid value for special token type {typ}: {n}"))),
            },
            // Python's bool is an int.
            Some(J::Bool(b)) => {
                self.set_special_token(typ, u64::from(*b));
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn add_flag(&mut self, typ: &str, value: bool, overwrite: bool) {
        if let Some(slot) = self.add_special_token.iter_mut().find(|(t, _)| t == typ) {
            if overwrite {
                slot.1 = value;
            }
        } else {
            self.add_special_token.push((typ.to_owned(), value));
        }
    }

    fn load_merges_txt(&mut self, dir: &Path) -> Result<(), VocabError> {
        let path = dir.join("merges.txt");
        if !path.is_file() {
            return Ok(());
        }
        let bytes = super::read_file(&path)?;
        let text = String::from_utf8(bytes).map_err(|_| invalid(&path, "not UTF-8"))?;
        let mut lines = text.split_inclusive('\n').peekable();
        if lines.peek().is_some_and(|l| l.trim().starts_with('#')) {
            lines.next();
        }
        self.merges = lines
            .filter_map(|l| {
                let parts: Vec<&str> = l.split_whitespace().collect();
                (parts.len() == 2).then(|| format!("{} {}", parts[0], parts[1]))
            })
            .collect();
        Ok(())
    }

    fn load_normalizer(&mut self, path: &Path, n: &J) -> Result<(), VocabError> {
        let flag = |v: &J, name: &str| -> Result<Option<bool>, VocabError> {
            match v {
                J::Bool(b) => Ok(Some(*b)),
                J::Null => Ok(None),
                other => Err(invalid(path, format!("normalizer.{name}: {other} is not a bool"))),
            }
        };
        match get(n, "type").and_then(J::as_str) {
            Some("Lowercase") => self.normalizer_lowercase = Some(true),
            Some("StripAccents") => self.normalizer_strip_accents = Some(true),
            Some("BertNormalizer") => {
                if let Some(v) = get(n, "lowercase") {
                    self.normalizer_lowercase = flag(v, "lowercase")?;
                }
                if let Some(v) = get(n, "strip_accents") {
                    self.normalizer_strip_accents = flag(v, "strip_accents")?;
                }
            }
            Some("Sequence") => {
                if let Some(J::Array(list)) = get(n, "normalizers") {
                    for m in list {
                        self.load_normalizer(path, m)?;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn load_tokenizer_json(&mut self, dir: &Path, load_merges: bool) -> Result<(), VocabError> {
        let tok_path = dir.join("tokenizer.json");
        let model_keys: &[&str] = if load_merges { &["merges"] } else { &[] };
        let tokenizer = json_parts::read(&tok_path, &["normalizer", "added_tokens", "post_processor"], model_keys)?;
        let mut added_tokens: &[J] = &[];
        if let Some(JsonParts { value: tok, .. }) = &tokenizer {
            if load_merges {
                if let Some(J::Array(merges)) = get(tok, "model").and_then(|m| get(m, "merges")) {
                    self.merges = parse_merges(&tok_path, merges)?;
                }
            }
            if let Some(n) = get(tok, "normalizer").filter(|n| truthy(n)) {
                self.load_normalizer(&tok_path, n)?;
            }
            if let Some(J::Array(a)) = get(tok, "added_tokens") {
                added_tokens = a;
            }
        }
        let config_path = dir.join("tokenizer_config.json");
        let mut config: Option<Map<String, J>> = match read_json::<J>(&config_path)? {
            None => None,
            Some(J::Object(m)) => Some(m),
            Some(_) => return Err(invalid(&config_path, "not a JSON object")),
        };
        // `if tokenizer_config` in Python: an empty object counts as none.
        let has_config = |c: &Option<Map<String, J>>| c.as_ref().is_some_and(|m| !m.is_empty());
        if let Some(JsonParts { value: tok, .. }) = tokenizer.as_ref().filter(|t| t.truthy) {
            let cget =
                |c: &Option<Map<String, J>>, k: &str| c.as_ref().and_then(|m| m.get(k)).cloned().unwrap_or(J::Null);
            let mut bos = cget(&config, "bos_token");
            let mut cls = cget(&config, "cls_token");
            let mut eos = cget(&config, "eos_token");
            let mut sep = cget(&config, "sep_token");
            if !truthy(&bos) && truthy(&cls) && has_config(&config) {
                bos = cls.clone();
                set_key(&mut config, "bos_token".into(), bos.clone());
            }
            if !truthy(&eos) && truthy(&sep) && has_config(&config) {
                eos = sep.clone();
                set_key(&mut config, "eos_token".into(), eos.clone());
            }
            if let Some(pp) = get(tok, "post_processor").filter(|p| truthy(p)) {
                let list: Vec<&J> = match get(pp, "processors") {
                    Some(J::Array(a)) => a.iter().collect(),
                    Some(_) => return Err(invalid(&tok_path, "post_processor.processors: not a list")),
                    None => vec![pp],
                };
                for p in list {
                    match get(p, "type").and_then(J::as_str) {
                        Some("ByteLevel") => {
                            self.add_flag("bos", false, false);
                            self.add_flag("eos", false, false);
                        }
                        Some("RobertaProcessing") => {
                            self.add_flag("bos", true, true);
                            self.add_flag("eos", true, true);
                            self.add_flag("sep", true, true);
                            if !truthy(&cls) && has_config(&config) {
                                cls = get(p, "cls").and_then(|v| v.get(0)).cloned().unwrap_or(bos.clone());
                                set_key(&mut config, "cls_token".into(), cls.clone());
                            }
                            if !truthy(&sep) && has_config(&config) {
                                sep = get(p, "sep").and_then(|v| v.get(0)).cloned().unwrap_or(eos.clone());
                                set_key(&mut config, "sep_token".into(), sep.clone());
                            }
                        }
                        Some("TemplateProcessing") => {
                            let empty = Vec::new();
                            let single = get(p, "single").and_then(J::as_array).unwrap_or(&empty);
                            let pair = get(p, "pair").and_then(J::as_array).unwrap_or(&empty);
                            let mut first: Option<J> = None;
                            let mut last: Option<J> = None;
                            if single.len() > 1 {
                                if let Some(f) = special_token_id(&single[0]).cloned() {
                                    if !has_config(&config) {
                                        bos = f.clone();
                                    } else if f != bos && f != cls {
                                        if !truthy(&bos) {
                                            bos = f.clone();
                                            set_key(&mut config, "bos_token".into(), f.clone());
                                        }
                                        if !truthy(&cls) {
                                            cls = f.clone();
                                            set_key(&mut config, "cls_token".into(), f.clone());
                                        }
                                    }
                                    self.add_flag("bos", f == bos || f == cls, true);
                                    first = Some(f);
                                }
                                if let Some(l) = special_token_id(&single[single.len() - 1]).cloned() {
                                    if !has_config(&config) {
                                        eos = l.clone();
                                    } else if l != eos {
                                        if !self.types.iter().any(|t| t == "eot") {
                                            self.types.push("eot".into());
                                            set_key(&mut config, "eot_token".into(), eos.clone());
                                        } else if !self.types.iter().any(|t| t == "eom") {
                                            self.types.push("eom".into());
                                            set_key(&mut config, "eom_token".into(), eos.clone());
                                        }
                                        eos = l.clone();
                                        set_key(&mut config, "eos_token".into(), l.clone());
                                    }
                                    self.add_flag("eos", l == eos, true);
                                    last = Some(l);
                                }
                            }
                            if !pair.is_empty() {
                                let start =
                                    usize::from(first.is_some() && special_token_id(&pair[0]).cloned() == first);
                                let stop_trim =
                                    last.is_some() && special_token_id(&pair[pair.len() - 1]).cloned() == last;
                                let end = if stop_trim { pair.len() - 1 } else { pair.len() };
                                let mid = if start <= end { &pair[start..end] } else { &pair[0..0] };
                                if !mid.is_empty() {
                                    let a = get(&mid[0], "Sequence").and_then(|s| get(s, "id")).and_then(J::as_str);
                                    let b = get(&mid[mid.len() - 1], "Sequence")
                                        .and_then(|s| get(s, "id"))
                                        .and_then(J::as_str);
                                    if a == Some("A") && b == Some("B") && mid.len() > 2 {
                                        let inner = &mid[1..mid.len() - 1];
                                        let mut add_sep = false;
                                        let is_sep = |e: &J| *e == sep || *e == eos;
                                        if let Some(e) = special_token_id(&inner[0]) {
                                            if is_sep(e) && last.is_none() {
                                                add_sep = true;
                                            }
                                        }
                                        if inner.len() == 2 {
                                            if let Some(e) = special_token_id(&inner[1]) {
                                                if is_sep(e) {
                                                    add_sep = true;
                                                }
                                            }
                                        }
                                        self.add_flag("sep", add_sep, true);
                                        if add_sep && !truthy(&sep) && has_config(&config) {
                                            set_key(&mut config, "sep_token".into(), eos.clone());
                                        }
                                    }
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        let Some(config) = config.filter(|c| !c.is_empty()) else {
            return Ok(());
        };
        self.chat_template = chat_template(dir, &config_path, &config)?;
        for typ in self.types.clone() {
            if let Some(J::Bool(b)) = config.get(&format!("add_{typ}_token")) {
                self.add_flag(&typ, *b, false);
            }
            let content = match config.get(&format!("{typ}_token")) {
                Some(J::String(s)) => s.as_str(),
                Some(J::Object(o)) => match o.get("content") {
                    Some(J::String(s)) => s.as_str(),
                    _ => continue,
                },
                _ => continue,
            };
            let id = added_tokens
                .iter()
                .find(|t| get(t, "content").and_then(J::as_str) == Some(content))
                .and_then(|t| get(t, "id"));
            self.set_from_json(&tok_path, &typ, id)?;
        }
        Ok(())
    }

    fn load_config_json(&mut self, dir: &Path) -> Result<(), VocabError> {
        let path = dir.join("config.json");
        let Some(config) = read_json::<J>(&path)? else {
            return Ok(());
        };
        for typ in self.types.clone() {
            let key = format!("{typ}_token_id");
            let mut id = get(&config, &key).filter(|v| !v.is_null());
            if id.is_none() {
                id = get(&config, "text_config").and_then(|t| get(t, &key));
            }
            self.set_from_json(&path, &typ, id)?;
        }
        Ok(())
    }

    /// The keys `SpecialVocab.add_to_gguf` writes, in its order: `tokenizer.ggml.merges`, the
    /// token ids that have a writer method (`bos`, `eos`, `unk`, `sep` as
    /// `seperator_token_id`, `pad` as `padding_token_id`, `mask`, `eot`, `eom`; `cls` has
    /// none and is skipped, as gguf-py skips it), `add_bos_token`/`add_eos_token`/
    /// `add_sep_token`, the chat templates, the normalizer flags.
    pub fn keys(&self) -> Result<Vec<(String, Value)>, VocabError> {
        let mut kvs = Kvs::default();
        self.write_into(&mut kvs)?;
        Ok(kvs.0)
    }

    pub(super) fn write_into(&self, kvs: &mut Kvs) -> Result<(), VocabError> {
        kvs.set_array("tokenizer.ggml.merges", Array::String(self.merges.clone()));
        for (typ, id) in &self.special_token_ids {
            let key = match typ.as_str() {
                "bos" => "bos_token_id",
                "eos" => "eos_token_id",
                "unk" => "unknown_token_id",
                "sep" => "seperator_token_id",
                "pad" => "padding_token_id",
                "mask" => "mask_token_id",
                "eot" => "eot_token_id",
                "eom" => "eom_token_id",
                _ => continue,
            };
            kvs.set(&format!("tokenizer.ggml.{key}"), Value::U32(*id));
        }
        for (typ, v) in &self.add_special_token {
            if matches!(typ.as_str(), "bos" | "eos" | "sep") {
                kvs.set(&format!("tokenizer.ggml.add_{typ}_token"), Value::Bool(*v));
            }
        }
        match &self.chat_template {
            None => {}
            Some(ChatTemplate::Single(t)) => kvs.set("tokenizer.chat_template", Value::String(t.clone())),
            Some(ChatTemplate::Named(list)) => {
                let mut default = None;
                let mut names: Vec<String> = Vec::new();
                for (name, template) in list {
                    let name: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
                    let Some(template) = template else { continue };
                    if name.is_empty() {
                        continue;
                    }
                    if name == "default" {
                        default = Some(template.clone());
                    } else {
                        kvs.set(&format!("tokenizer.chat_template.{name}"), Value::String(template.clone()));
                        if !names.contains(&name) {
                            names.push(name);
                        }
                    }
                }
                // gguf-py writes the names from a Python set (its order varies from run to run);
                // here they keep file order.
                kvs.set_array("tokenizer.chat_templates", Array::String(names));
                if let Some(t) = default {
                    kvs.set("tokenizer.chat_template", Value::String(t));
                }
            }
        }
        if let Some(b) = self.normalizer_lowercase {
            kvs.set("tokenizer.ggml.normalizer.lowercase", Value::Bool(b));
        }
        if let Some(b) = self.normalizer_strip_accents {
            kvs.set("tokenizer.ggml.normalizer.strip_accents", Value::Bool(b));
        }
        Ok(())
    }
}

fn parse_merges(path: &Path, merges: &[J]) -> Result<Vec<String>, VocabError> {
    match merges.first() {
        None => Ok(Vec::new()),
        Some(J::String(_)) => merges
            .iter()
            .enumerate()
            .map(|(i, m)| {
                m.as_str().map(str::to_owned).ok_or_else(|| invalid(path, format!("model.merges[{i}]: not a string")))
            })
            .collect(),
        Some(J::Array(p)) if p.len() == 2 && p[0].is_string() => merges
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let pair = m
                    .as_array()
                    .filter(|p| p.iter().all(J::is_string))
                    .ok_or_else(|| invalid(path, format!("model.merges[{i}]: not a list of strings")))?;
                // Spaces inside a part are stored as U+0120 (' ' + 256), as gguf-py does.
                let parts: Vec<String> =
                    pair.iter().map(|s| s.as_str().unwrap_or("").replace(' ', "\u{120}")).collect();
                Ok(parts.join(" "))
            })
            .collect(),
        Some(_) => Err(invalid(path, "model.merges: unknown tokenizer merges format")),
    }
}

fn chat_template(dir: &Path, config_path: &Path, config: &Map<String, J>) -> Result<Option<ChatTemplate>, VocabError> {
    let jinja = dir.join("chat_template.jinja");
    let json = dir.join("chat_template.json");
    let mut alt: Option<J> = None;
    if jinja.is_file() {
        let text = read_text(&jinja)?;
        let extra_dir = dir.join("additional_chat_templates");
        let mut extra: Vec<std::path::PathBuf> = match std::fs::read_dir(&extra_dir) {
            Ok(rd) => rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "jinja"))
                .collect(),
            Err(_) => Vec::new(),
        };
        extra.sort();
        if extra.is_empty() {
            alt = Some(J::String(text));
        } else {
            let mut list = vec![serde_json::json!({"name": "default", "template": text})];
            for p in extra {
                let name = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                list.push(serde_json::json!({"name": name, "template": read_text(&p)?}));
            }
            alt = Some(J::Array(list));
        }
    } else if let Some(OrderedObject(o)) = read_json::<OrderedObject>(&json)? {
        alt = o.into_iter().find(|(k, _)| k == "chat_template").map(|(_, v)| v);
    }
    let value = match config.get("chat_template") {
        Some(v) => Some(v.clone()),
        None => alt,
    };
    Ok(match value {
        None | Some(J::Null) => None,
        Some(J::String(s)) => Some(ChatTemplate::Single(s)),
        Some(J::Array(list)) => {
            let mut out = Vec::new();
            for (i, c) in list.iter().enumerate() {
                let o =
                    c.as_object().ok_or_else(|| invalid(config_path, format!("chat_template[{i}]: not an object")))?;
                let name = match o.get("name") {
                    None => String::new(),
                    Some(J::String(s)) => s.clone(),
                    Some(_) => return Err(invalid(config_path, format!("chat_template[{i}].name: not a string"))),
                };
                let template = match o.get("template") {
                    None | Some(J::Null) => None,
                    Some(J::String(s)) => Some(s.clone()),
                    Some(_) => return Err(invalid(config_path, format!("chat_template[{i}].template: not a string"))),
                };
                out.push((name, template));
            }
            Some(ChatTemplate::Named(out))
        }
        // gguf-py warns and ignores a template of another type.
        Some(_) => None,
    })
}

fn read_text(path: &Path) -> Result<String, VocabError> {
    String::from_utf8(super::read_file(path)?).map_err(|_| invalid(path, "not UTF-8"))
}
