//! The serde mapping of GGUF metadata: Rust structs as the typed key/value block of a file.
//!
//! [`to_vec`] / [`to_writer`] / [`to_value`] write a value as the key/value block of a GGUF file;
//! [`from_slice`] / [`from_reader`] / [`from_gguf`] / [`from_value`] read one back (borrowing
//! strings from the file where the target type borrows). [`MetadataOptions`] sets the
//! architecture of `{arch}` keys and the nesting limit; [`elem`] forces the element type of an
//! array; [`StringArray`] holds an owned `array<string>` (a vocabulary) in two allocations
//! rather than one per string. The mapping itself (structs as dotted key prefixes, integer and float types, arrays,
//! enums, options) is documented at the crate root, with the layouts that need care:
//!
//! - a key that is also the prefix of other keys (`tokenizer.chat_template` beside
//!   `tokenizer.chat_template.tool_use`): the field of its name reads the value if its type is a
//!   value, the keys under it if it is a struct or map; a field renamed with a trailing `.`
//!   (`"tokenizer.chat_template."`) reads and writes the keys under the prefix;
//! - maps of structs (`BTreeMap<String, Expert>`) group keys by their next segment; maps of
//!   values see the rest of each key flat;
//! - a map or struct below the top level that writes no keys is an error on write (GGUF has no
//!   empty group); leave it out with `skip_serializing_if` and read it with `#[serde(default)]`;
//! - in a struct with a `#[serde(flatten)]` field, keys of the architecture are named `{arch}.…`;
//! - an empty inner array takes its siblings' element type; errors name elements as `key[1]`;
//! - keys with an empty segment (`a..b`, `a.`, `.x`) are refused on write.

mod de;
mod error;
mod options;
mod ser;
#[cfg(feature = "derive")]
pub mod standard;
mod string_array;
mod value_serde;

pub use de::{from_gguf, from_reader, from_slice, from_value};
pub use error::MetadataError;
pub(crate) use options::{array_token, array_token_type, resolve_arch_key, ARRAY_TOKEN, VALUE_TOKEN};
pub use options::{elem, MetadataOptions, ARCH, MAX_NESTING};
pub use ser::{to_value, to_vec, to_writer};
pub use string_array::{StringArray, StringArrayIter};
pub(crate) use string_array::{RAW_BE, RAW_LE, STRING_ARRAY_TOKEN};
