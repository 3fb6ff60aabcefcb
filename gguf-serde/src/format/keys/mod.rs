//! The standard metadata keys: every key gguf-py defines (`gguf.constants.Keys`, gguf-py
//! 0.19.0), each as a `pub const` with its key template, and a registry ([`STANDARD_KEYS`],
//! [`lookup`]) that gives each key's GGUF value type as llama.cpp reads it.
//!
//! A key template may hold placeholders, spelled as gguf-py spells them: `{arch}` (the value of
//! `general.architecture`: `llama.rope.freq_base` is [`ROPE_FREQ_BASE`]), `{id}` (a number:
//! `general.base_model.0.name`), `{name}` (a chat template's name:
//! `tokenizer.chat_template.tool_use`) and `{dense}` (a dense layer: `{arch}.dense_2_feat_in`).
//! `{arch}` is also how the serde mapping spells the architecture in a field name
//! ([`MetadataOptions`](crate::MetadataOptions), [`ARCH`](crate::ARCH)), so a template without
//! other placeholders is a valid dotted serde field name. (A `#[serde(rename = …)]` attribute
//! takes a literal, not a constant: the typed structs in [`metadata::standard`](crate::metadata::standard) spell the same
//! strings, and their tests check them against this registry.)
//!
//! ```
//! use gguf_serde::format::keys::{self, KeyType};
//! use gguf_serde::ValueType;
//!
//! let m = keys::lookup("qwen2.rope.freq_base").unwrap();
//! assert_eq!(m.spec.key, keys::ROPE_FREQ_BASE); // "{arch}.rope.freq_base"
//! assert_eq!(m.arch, Some("qwen2"));
//! assert_eq!(m.spec.ty, KeyType::Scalar(ValueType::F32));
//! assert!(!m.spec.ty.accepts(ValueType::U32, None)); // llama.cpp refuses a u32 here
//! ```
//!
//! # Where the types come from
//!
//! Each entry says ([`KeySpec::reference`], [`KeySpec::source`]) which reference its type follows:
//!
//! - [`TypeReference::GgufPyWriter`]: the `GGUFWriter.add_*` method of gguf-py that writes the key
//!   (245 of the 269 keys). For every key that llama.cpp's loader reads (`src/llama-model.cpp`,
//!   `src/llama-vocab.cpp` through `llama_model_loader::get_key`/`get_arr`/`get_key_or_arr`,
//!   which refuse any other type: "key … has wrong type u32 but expected type f32") the type is
//!   the same; where llama.cpp reads a scalar or one value per layer (`get_key_or_arr`), the type
//!   is [`KeyType::PerLayer`].
//! - [`TypeReference::LlamaCpp`]: keys gguf-py names but does not write; the type is the one
//!   llama.cpp or its tools read or write (`llama-adapter.cpp`, `llama-vocab.cpp`,
//!   `llama-model-loader.cpp`, `gguf.cpp`, `tools/imatrix`, `tools/gguf-split`).
//! - [`TypeReference::Converter`]: keys a converter of the reference writes through the generic
//!   `add_string`/`add_bool`/… (`conversion/bert.py`, `tools/mtmd`).
//! - [`TypeReference::Spec`]: keys only the spec (ggml `docs/gguf.md`) gives a type.
//!
//! The table is checked against gguf-py by a test that runs it (gguf-tests,
//! `tests/interop/standard_keys.rs`): the key set, each template and gguf-py name, and the type
//! gguf-py's writer gives every key it writes, read back from a file by gguf-py's reader. The
//! library's unit tests check the same from a recorded copy (`tests/data/standard-keys.json`:
//! gguf-py's keys and writer types, and how concrete keys made from gguf-py's templates and
//! llama.cpp's key and architecture names resolve), and [`KeyType::accepts`] against
//! `llama_model_loader`'s checks.

use crate::format::ValueType;

/// Builds the constants and [`STANDARD_KEYS`] from one list (`table.rs`).
macro_rules! standard_keys {
    ($($(#[doc = $doc:literal])+ $name:ident = $key:literal, $py:literal, ($($ty:tt)+), $reference:ident, $source:literal;)+) => {
        $(
            $(#[doc = $doc])+
            #[doc = ""]
            #[doc = concat!("Key `", $key, "`; type `", stringify!($($ty)+), "` (", $source, ").")]
            pub const $name: &str = $key;
        )+

        /// Every standard key, in gguf-py's order (`gguf.constants.Keys`).
        pub static STANDARD_KEYS: &[KeySpec] = &[$(KeySpec {
            name: stringify!($name),
            key: $key,
            gguf_py: $py,
            ty: key_type!($($ty)+),
            reference: TypeReference::$reference,
            source: $source,
            doc: concat!($($doc),+),
        }),+];
    };
}

/// The [`KeyType`] of a table entry's type: `u32`, `[u32]`, `layer u32`.
macro_rules! key_type {
    ([$t:ident]) => {
        KeyType::Array(value_type!($t))
    };
    (layer $t:ident) => {
        KeyType::PerLayer(value_type!($t))
    };
    ($t:ident) => {
        KeyType::Scalar(value_type!($t))
    };
}

/// The [`ValueType`] of a short name.
macro_rules! value_type {
    (u8) => {
        ValueType::U8
    };
    (i8) => {
        ValueType::I8
    };
    (u16) => {
        ValueType::U16
    };
    (i16) => {
        ValueType::I16
    };
    (u32) => {
        ValueType::U32
    };
    (i32) => {
        ValueType::I32
    };
    (u64) => {
        ValueType::U64
    };
    (i64) => {
        ValueType::I64
    };
    (f32) => {
        ValueType::F32
    };
    (f64) => {
        ValueType::F64
    };
    (bool) => {
        ValueType::Bool
    };
    (string) => {
        ValueType::String
    };
}

#[cfg(test)]
mod reference_tests;
mod table;
pub use table::*;

/// The GGUF type a standard key is stored with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyType {
    /// A single value of this type (never [`ValueType::Array`]).
    Scalar(ValueType),
    /// An array of this element type.
    Array(ValueType),
    /// A single value of this type, or an array of it with one value per layer: llama.cpp's
    /// `get_key_or_arr` (`{arch}.attention.head_count`, `{arch}.feed_forward_length`, …).
    PerLayer(ValueType),
}

impl KeyType {
    /// The type a value written from one scalar (as `gguf set` writes it) must have: the scalar
    /// type, or the per-layer type; `None` for an array.
    pub fn scalar(self) -> Option<ValueType> {
        match self {
            KeyType::Scalar(t) | KeyType::PerLayer(t) => Some(t),
            KeyType::Array(_) => None,
        }
    }

    /// Whether llama.cpp's loader accepts a value of type `ty` (with `element`, the element type,
    /// when `ty` is [`ValueType::Array`]) for a key of this type.
    ///
    /// As `llama_model_loader` checks: a scalar must have exactly its type; array elements must
    /// have the element type, except that `i32` and `u32` elements stand for each other (its
    /// `get_arr` takes either for an integer array), and a per-layer integer array may also hold
    /// bools (`{arch}.attention.sliding_window_pattern`, which gguf-py writes as bools).
    pub fn accepts(self, ty: ValueType, element: Option<ValueType>) -> bool {
        let int = |t: ValueType| matches!(t, ValueType::I32 | ValueType::U32);
        let elem_ok = |want: ValueType, per_layer: bool| match element {
            Some(e) => e == want || (int(e) && int(want)) || (per_layer && int(want) && e == ValueType::Bool),
            None => false,
        };
        match self {
            KeyType::Scalar(t) => ty == t,
            KeyType::Array(t) => ty == ValueType::Array && elem_ok(t, false),
            KeyType::PerLayer(t) => ty == t || (ty == ValueType::Array && elem_ok(t, true)),
        }
    }
}

impl std::fmt::Display for KeyType {
    /// `u32`, `array<string>`, `u32 or array<u32>` (the names of [`ValueType::name`], and the
    /// array spelling of `gguf inspect`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyType::Scalar(t) => write!(f, "{t}"),
            KeyType::Array(t) => write!(f, "array<{t}>"),
            KeyType::PerLayer(t) => write!(f, "{t} or array<{t}>"),
        }
    }
}

/// Which reference a [`KeySpec`]'s type follows (the module docs say how each is checked).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TypeReference {
    /// The gguf-py `GGUFWriter.add_*` method named in [`KeySpec::source`]; llama.cpp reads the
    /// same type wherever it reads the key.
    GgufPyWriter,
    /// llama.cpp or one of its tools, as named in [`KeySpec::source`].
    LlamaCpp,
    /// A converter of the reference that writes the key with a generic `add_*` method.
    Converter,
    /// The spec, ggml `docs/gguf.md`.
    Spec,
}

/// One standard key: its template, its type and where the type comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeySpec {
    /// The name of its constant in this module (`ROPE_FREQ_BASE`).
    pub name: &'static str,
    /// The key template, placeholders included (`{arch}.rope.freq_base`).
    pub key: &'static str,
    /// gguf-py's name for it: the class path under `Keys` and the constant (`Rope.FREQ_BASE`).
    pub gguf_py: &'static str,
    /// The GGUF type llama.cpp reads it as.
    pub ty: KeyType,
    /// Which reference [`ty`](Self::ty) follows.
    pub reference: TypeReference,
    /// Where in that reference (`gguf-py GGUFWriter.add_rope_freq_base`).
    pub source: &'static str,
    /// What the key means.
    pub doc: &'static str,
}

/// A concrete key resolved to its registry entry by [`lookup`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeyMatch<'k> {
    /// The entry.
    pub spec: &'static KeySpec,
    /// What `{arch}` stands for in the key (`qwen2` in `qwen2.attention.head_count`), if the
    /// template has it.
    pub arch: Option<&'k str>,
}

/// The registry entry of a concrete key: `llama.rope.freq_base` gives [`ROPE_FREQ_BASE`]'s entry
/// with `arch` `llama`; `general.base_model.0.name` gives [`GENERAL_BASE_MODEL_NAME`]'s.
///
/// `{arch}` matches one dotted segment (any architecture name: the caller compares
/// [`KeyMatch::arch`] with the file's `general.architecture` when that matters), `{id}` a
/// decimal number, `{dense}` the text before `_feat_in`/`_feat_out` in its segment, `{name}` the
/// rest of the key. A template without placeholders wins over one with them
/// (`tokenizer.chat_template` is not a named template). `None` for a key that is not standard.
pub fn lookup(key: &str) -> Option<KeyMatch<'_>> {
    let index = Index::get();
    if let Some(spec) = index.exact.get(key) {
        return Some(KeyMatch { spec, arch: None });
    }
    // `{arch}.REST` with a fixed REST: the architecture is the first segment, REST the others.
    let fixed = key.split_once('.').and_then(|(arch, rest)| {
        let (at, spec) = index.arch_fixed.get(rest).copied()?;
        (!arch.is_empty() && !index.reserved.contains(arch)).then_some((at, KeyMatch { spec, arch: Some(arch) }))
    });
    // The other templates, in registry order; the first match in that order wins.
    let other = index.other.iter().find_map(|&(at, spec)| {
        let mut arch = None;
        // `{arch}` is never a namespace of the spec's own keys (`general`, `tokenizer`, …):
        // `general.rope.freq_base` is not a key of an architecture named "general".
        (matches(spec.key, key, &mut arch) && !arch.is_some_and(|a| index.reserved.contains(a)))
            .then_some((at, KeyMatch { spec, arch }))
    });
    match (fixed, other) {
        (Some(a), Some(b)) => Some(if a.0 < b.0 { a.1 } else { b.1 }),
        (a, b) => a.or(b).map(|(_, m)| m),
    }
}

/// [`STANDARD_KEYS`] indexed for [`lookup`], built once.
struct Index {
    /// Keys without placeholders.
    exact: std::collections::HashMap<&'static str, &'static KeySpec>,
    /// `{arch}.REST` templates with no other placeholder, by REST, with their registry position.
    arch_fixed: std::collections::HashMap<&'static str, (usize, &'static KeySpec)>,
    /// Every other template, with its registry position.
    other: Vec<(usize, &'static KeySpec)>,
    /// The first segments of the keys that do not start with `{arch}`.
    reserved: std::collections::HashSet<&'static str>,
}

impl Index {
    fn get() -> &'static Index {
        static INDEX: std::sync::OnceLock<Index> = std::sync::OnceLock::new();
        INDEX.get_or_init(|| {
            let mut index = Index {
                exact: Default::default(),
                arch_fixed: Default::default(),
                other: Vec::new(),
                reserved: Default::default(),
            };
            for (at, spec) in STANDARD_KEYS.iter().enumerate() {
                if !spec.key.starts_with('{') {
                    index.reserved.extend(spec.key.split('.').next());
                }
                match spec.key.strip_prefix("{arch}.") {
                    _ if !spec.key.contains('{') => {
                        index.exact.entry(spec.key).or_insert(spec);
                    }
                    Some(rest) if !rest.contains('{') => {
                        index.arch_fixed.entry(rest).or_insert((at, spec));
                    }
                    _ => index.other.push((at, spec)),
                }
            }
            index
        })
    }
}

/// Whether `key` fits `template`; sets `arch` to what `{arch}` matched.
fn matches<'k>(template: &str, key: &'k str, arch: &mut Option<&'k str>) -> bool {
    let Some((lit, after_open)) = template.split_once('{') else {
        return template == key;
    };
    let Some((placeholder, rest)) = after_open.split_once('}') else {
        return false;
    };
    let Some(tail) = key.strip_prefix(lit) else {
        return false;
    };
    // The candidate ends of the placeholder's text: within one segment, except `{name}`.
    let segment = tail.find('.').unwrap_or(tail.len());
    let limit = if placeholder == "name" { tail.len() } else { segment };
    // A placeholder other than `{name}` followed by `.` can only end where its segment does.
    let lowest = if placeholder != "name" && rest.starts_with('.') { segment.max(1) } else { 1 };
    (lowest..=limit).rev().filter(|&end| tail.is_char_boundary(end)).any(|end| {
        let (value, after) = tail.split_at(end);
        let ok = match placeholder {
            "id" => value.bytes().all(|b| b.is_ascii_digit()),
            _ => true,
        };
        if !ok {
            return false;
        }
        let mut a = *arch;
        if placeholder == "arch" {
            a = Some(value);
        }
        if matches(rest, after, &mut a) {
            *arch = a;
            true
        } else {
            false
        }
    })
}

/// Whether `key` has an empty segment between dots (`a..b`, `a.`, `.x`). The spec does not forbid
/// such keys and real files may hold them (the reader and [`GgufWriter::add_kv`] keep them), but
/// the serde writer and the edits that make a new key refuse them: no reader can address them as
/// nested fields. The empty key itself is not counted here (it is refused everywhere).
///
/// [`GgufWriter::add_kv`]: crate::GgufWriter::add_kv
pub fn has_empty_segment(key: impl AsRef<[u8]>) -> bool {
    let key = key.as_ref();
    !key.is_empty() && key.split(|&b| b == b'.').any(<[u8]>::is_empty)
}

/// Whether `key` is one of the three split keys.
pub fn is_split_key(key: &str) -> bool {
    key == SPLIT_NO || key == SPLIT_COUNT || key == SPLIT_TENSORS_COUNT
}
