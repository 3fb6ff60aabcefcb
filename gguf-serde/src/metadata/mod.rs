//! The serde mapping of GGUF metadata: Rust structs as the typed key/value block of a file.
//!
//! [`to_vec`] / [`to_writer`] / [`to_value`] write a value as the key/value block of a GGUF file;
//! [`from_slice`] / [`from_reader`] / [`from_gguf`] / [`from_value`] read one back (borrowing
//! strings from the file where the target type borrows). [`MetadataOptions`] sets the
//! architecture of `{arch}` keys and the nesting limit; [`elem`] forces the element type of an
//! array. The mapping itself (structs as dotted key prefixes, integer and float types, arrays,
//! enums, options) is documented at the crate root.

mod de;
mod options;
mod ser;
mod value_serde;

pub use de::{from_gguf, from_reader, from_slice, from_value};
pub(crate) use options::{array_token, array_token_type, resolve_arch_key, ARRAY_TOKEN, VALUE_TOKEN};
pub use options::{elem, MetadataOptions, ARCH, MAX_NESTING};
pub use ser::{to_value, to_vec, to_writer};
