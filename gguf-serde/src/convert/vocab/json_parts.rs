//! A few keys of a large JSON file, parsed without building the rest: `tokenizer.json` is
//! megabytes of vocabulary and merges (3.6 MB for a 32,000-token SentencePiece model, more for
//! GPT-2 style ones), of which `SpecialVocab` reads a few kilobytes (`normalizer`, `added_tokens`,
//! `post_processor`, and only with merges `model.merges`), and the BPE loader only
//! `model.type`. Built into `serde_json` values (and freed), the whole file took most of a
//! conversion's start-up before its first tensor (see BENCHMARKS.md, "Writes in flight"); the
//! rest of the document is still parsed, as JSON, and skipped.
//!
//! The file must be UTF-8 throughout (the reference decodes it before `json.load`) and JSON
//! throughout. A skipped string is not decoded: an escaped lone surrogate (`"\ud800"`) there is
//! taken, as `json.load` takes it, where a full parse into `serde_json` values refuses it.

use std::path::Path;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value as J};

use super::{invalid, read_file, VocabError};

/// The keys kept of a JSON document ([`read`]).
#[derive(Debug)]
pub(super) struct JsonParts {
    /// Python's truth value of the whole document (`if tokenizer:`): a non-empty object, array
    /// or string, a number other than 0, `true`.
    pub(super) truthy: bool,
    /// For an object, the object with only the kept keys (the last of a repeated key, as in
    /// `json.load`); `null` for anything else.
    pub(super) value: J,
}

/// Reads `path` if it is a file (`None` otherwise, as [`read_json`](super::read_json)), keeping
/// the top-level keys `keep` and, of the top-level `model`, the keys `model` (an object with
/// only those, `null` when `model` is not an object; no `model` at all when `model` is empty).
///
/// # Errors
/// [`VocabError::Io`]; [`VocabError::Invalid`] for bytes that are not UTF-8 (with their
/// offset); [`VocabError::Json`] for a document that is not JSON (line and column).
pub(super) fn read(path: &Path, keep: &[&str], model: &[&str]) -> Result<Option<JsonParts>, VocabError> {
    if !path.is_file() {
        return Ok(None);
    }
    parse(path, &read_file(path)?, keep, model).map(Some)
}

/// [`read`] of the bytes of `path`.
///
/// # Errors
/// As [`read`].
pub(super) fn parse(path: &Path, bytes: &[u8], keep: &[&str], model: &[&str]) -> Result<JsonParts, VocabError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| invalid(path, format!("not UTF-8: invalid bytes at offset {}", e.valid_up_to())))?;
    let mut de = serde_json::Deserializer::from_str(text);
    Top { keep, model }
        .deserialize(&mut de)
        .and_then(|parts| de.end().map(|()| parts))
        .map_err(|source| VocabError::Json { path: path.to_owned(), source })
}

/// The top level of the document.
struct Top<'k> {
    keep: &'k [&'k str],
    model: &'k [&'k str],
}

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = JsonParts;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<JsonParts, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = JsonParts;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON document")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonParts, A::Error> {
        let (mut kept, mut any) = (Map::new(), false);
        while let Some(key) = map.next_key::<String>()? {
            any = true;
            let value = if self.keep.contains(&key.as_str()) {
                map.next_value::<J>()?
            } else if key == "model" && !self.model.is_empty() {
                map.next_value_seed(Sub { keep: self.model })?
            } else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            kept.insert(key, value);
        }
        Ok(JsonParts { truthy: any, value: J::Object(kept) })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<JsonParts, A::Error> {
        Ok(JsonParts { truthy: skip_seq(seq)?, value: J::Null })
    }

    fn visit_bool<E>(self, v: bool) -> Result<JsonParts, E> {
        Ok(JsonParts { truthy: v, value: J::Null })
    }

    fn visit_i64<E>(self, v: i64) -> Result<JsonParts, E> {
        Ok(JsonParts { truthy: v != 0, value: J::Null })
    }

    fn visit_u64<E>(self, v: u64) -> Result<JsonParts, E> {
        Ok(JsonParts { truthy: v != 0, value: J::Null })
    }

    fn visit_f64<E>(self, v: f64) -> Result<JsonParts, E> {
        Ok(JsonParts { truthy: v != 0.0, value: J::Null })
    }

    fn visit_str<E>(self, v: &str) -> Result<JsonParts, E> {
        Ok(JsonParts { truthy: !v.is_empty(), value: J::Null })
    }

    fn visit_unit<E>(self) -> Result<JsonParts, E> {
        Ok(JsonParts { truthy: false, value: J::Null })
    }
}

/// Skips the elements of `seq`; whether it had any.
fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<bool, A::Error> {
    let mut any = false;
    while seq.next_element::<IgnoredAny>()?.is_some() {
        any = true;
    }
    Ok(any)
}

/// A value of which an object keeps only the keys `keep`; anything else is `null`.
struct Sub<'k> {
    keep: &'k [&'k str],
}

impl<'de> DeserializeSeed<'de> for Sub<'_> {
    type Value = J;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<J, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Sub<'_> {
    type Value = J;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<J, A::Error> {
        let mut kept = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if self.keep.contains(&key.as_str()) {
                kept.insert(key, map.next_value::<J>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(J::Object(kept))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<J, A::Error> {
        skip_seq(seq).map(|_| J::Null)
    }

    fn visit_bool<E>(self, _: bool) -> Result<J, E> {
        Ok(J::Null)
    }

    fn visit_i64<E>(self, _: i64) -> Result<J, E> {
        Ok(J::Null)
    }

    fn visit_u64<E>(self, _: u64) -> Result<J, E> {
        Ok(J::Null)
    }

    fn visit_f64<E>(self, _: f64) -> Result<J, E> {
        Ok(J::Null)
    }

    fn visit_str<E>(self, _: &str) -> Result<J, E> {
        Ok(J::Null)
    }

    fn visit_unit<E>(self) -> Result<J, E> {
        Ok(J::Null)
    }
}

#[cfg(test)]
mod tests;
