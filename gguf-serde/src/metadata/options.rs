//! MetadataOptions shared by the serde [`Serializer`](crate::ser) and [`Deserializer`](crate::de): the
//! architecture of [`ARCH`] keys, the nesting limit, and the element-type markers of [`elem`].

use crate::error::{Error, MetadataError, Result};
use crate::format::ValueType;

/// The placeholder key segment that stands for the model architecture.
///
/// A key segment that is exactly `{arch}` — a field renamed `"{arch}"`, or a dotted rename such
/// as `"{arch}.context_length"` — is replaced, on write and on read, by the architecture: the one
/// given with [`MetadataOptions::arch`], else the STRING value of `general.architecture` (of the value
/// being serialized, or of the file being read). So one struct of hyper-parameters serves every
/// architecture:
///
/// ```
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Debug, PartialEq)]
/// struct Hparams {
///     context_length: u32,
///     attention: Attention,
/// }
/// #[derive(Serialize, Deserialize, Debug, PartialEq)]
/// struct Attention {
///     head_count: u32,
/// }
/// #[derive(Serialize, Deserialize, Debug, PartialEq)]
/// struct General {
///     architecture: String,
/// }
/// #[derive(Serialize, Deserialize, Debug, PartialEq)]
/// struct Meta {
///     general: General,
///     #[serde(rename = "{arch}")]
///     hparams: Hparams,
/// }
///
/// let meta = Meta {
///     general: General { architecture: "gemma3".into() },
///     hparams: Hparams { context_length: 32768, attention: Attention { head_count: 4 } },
/// };
/// let bytes = gguf_serde::to_vec(&meta)?;
/// let file = gguf_serde::Gguf::from_slice(&bytes)?;
/// assert_eq!(file.get("gemma3.attention.head_count"), Some(gguf_serde::ValueRef::U32(4)));
/// assert_eq!(gguf_serde::from_slice::<Meta>(&bytes)?, meta);
///
/// // A caller-given architecture wins over general.architecture:
/// let hp: Hparams = gguf_serde::MetadataOptions::new().arch("gemma3").from_slice(&bytes).map(|m: Meta| m.hparams)?;
/// assert_eq!(hp.context_length, 32768);
/// # Ok::<(), gguf_serde::Error>(())
/// ```
///
/// The placeholder is resolved for fields of structs (which name their fields to serde). A map
/// (`BTreeMap<String, _>`, or a struct with a `#[serde(flatten)]` field, which serde reads as a
/// map) sees the file's real keys.
pub const ARCH: &str = "{arch}";

/// Deepest nesting of structs and maps (key groups) the serializer and deserializer follow: a
/// key of more than `MAX_NESTING` dotted segments read into as many nested structs is an error,
/// not a stack overflow. Arrays of arrays have their own limit,
/// [`MAX_DEPTH`](crate::format::MAX_DEPTH).
pub const MAX_NESTING: usize = 64;

/// MetadataOptions of the serde mapping: today, the architecture that [`ARCH`] segments stand for.
///
/// ```
/// # use serde::Serialize;
/// #[derive(Serialize)]
/// struct Hp {
///     #[serde(rename = "{arch}.context_length")]
///     context_length: u32,
/// }
/// let bytes = gguf_serde::MetadataOptions::new().arch("llama").to_vec(&Hp { context_length: 4096 })?;
/// let file = gguf_serde::Gguf::from_slice(&bytes)?;
/// assert_eq!(file.get("llama.context_length"), Some(gguf_serde::ValueRef::U32(4096)));
/// # Ok::<(), gguf_serde::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetadataOptions {
    pub(crate) arch: Option<String>,
}

impl MetadataOptions {
    /// Default options: [`ARCH`] resolves from `general.architecture`.
    pub fn new() -> Self {
        MetadataOptions::default()
    }

    /// Resolves [`ARCH`] segments to `arch` (e.g. `"llama"`), whatever `general.architecture` says.
    pub fn arch(mut self, arch: impl Into<String>) -> Self {
        self.arch = Some(arch.into());
        self
    }
}

/// `key` with its `{arch}` segments replaced; `None` if it has none.
pub(crate) fn resolve_arch_key(key: &str, arch: Option<&str>) -> Result<Option<String>> {
    if !key.split('.').any(|s| s == ARCH) {
        return Ok(None);
    }
    let Some(arch) = arch else {
        return Err(Error::metadata(MetadataError::UnknownArch, Some(key.to_owned()), None));
    };
    Ok(Some(key.split('.').map(|s| if s == ARCH { arch } else { s }).collect::<Vec<_>>().join(".")))
}

/// The newtype-struct names that carry an array element type to the serializer (and make other
/// formats see a transparent newtype).
const ARRAY_TOKENS: [(&str, ValueType); 13] = [
    ("\0gguf_serde::array<u8>", ValueType::U8),
    ("\0gguf_serde::array<i8>", ValueType::I8),
    ("\0gguf_serde::array<u16>", ValueType::U16),
    ("\0gguf_serde::array<i16>", ValueType::I16),
    ("\0gguf_serde::array<u32>", ValueType::U32),
    ("\0gguf_serde::array<i32>", ValueType::I32),
    ("\0gguf_serde::array<f32>", ValueType::F32),
    ("\0gguf_serde::array<bool>", ValueType::Bool),
    ("\0gguf_serde::array<string>", ValueType::String),
    ("\0gguf_serde::array<array>", ValueType::Array),
    ("\0gguf_serde::array<u64>", ValueType::U64),
    ("\0gguf_serde::array<i64>", ValueType::I64),
    ("\0gguf_serde::array<f64>", ValueType::F64),
];

/// The newtype name asking our deserializer for an exact [`Value`](crate::Value).
pub(crate) const VALUE_TOKEN: &str = "\0gguf_serde::Value";
/// The newtype name asking our deserializer for an exact [`Array`](crate::Array).
pub(crate) const ARRAY_TOKEN: &str = "\0gguf_serde::Array";

pub(crate) fn array_token(t: ValueType) -> &'static str {
    ARRAY_TOKENS.iter().find(|(_, v)| *v == t).map_or(ARRAY_TOKENS[0].0, |(n, _)| n)
}

pub(crate) fn array_token_type(name: &str) -> Option<ValueType> {
    if !name.starts_with('\0') {
        return None;
    }
    ARRAY_TOKENS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Forcing the element type of a sequence, for `#[serde(with = "gguf_serde::elem::TYPE")]`.
///
/// A sequence's element type is the type of its first element; an empty sequence has none, and
/// writing it is an error unless its type is forced:
///
/// ```
/// use serde::{Deserialize, Serialize};
/// #[derive(Serialize, Deserialize)]
/// struct Tok {
///     #[serde(with = "gguf_serde::elem::string")]
///     merges: Vec<String>,
/// }
/// let bytes = gguf_serde::to_vec(&Tok { merges: vec![] })?;
/// let file = gguf_serde::Gguf::from_slice(&bytes)?;
/// assert_eq!(file.get("merges").unwrap().type_name(), "array<string>");
/// # Ok::<(), gguf_serde::Error>(())
/// ```
///
/// With elements, they must all have the forced type (an error names the key and index
/// otherwise). On a sequence of sequences, a forced type other than `array` is the type of the
/// innermost arrays: `elem::string` on a `Vec<Vec<String>>` writes `array<array<string>>`, empty
/// inner arrays included. Other serde formats see the field unchanged. On read the module does
/// nothing special: the field reads as its own type.
pub mod elem {
    macro_rules! elem_mod {
        ($($name:ident => $t:ident),* $(,)?) => {$(
            #[doc = concat!("Writes the sequence as `array<", stringify!($name), ">`, also when empty.")]
            pub mod $name {
                use serde::{Deserialize, Deserializer, Serialize, Serializer};

                /// Serializes `v` with this element type.
                ///
                /// # Errors
                /// The serializer's, e.g. an element of another type.
                pub fn serialize<T: ?Sized + Serialize, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
                    s.serialize_newtype_struct(super::super::array_token(crate::format::ValueType::$t), v)
                }

                /// Deserializes as `T` itself.
                ///
                /// # Errors
                /// The deserializer's.
                pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
                    T::deserialize(d)
                }
            }
        )*};
    }
    elem_mod!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, f32 => F32, bool => Bool,
        string => String, array => Array, u64 => U64, i64 => I64, f64 => F64);
}
