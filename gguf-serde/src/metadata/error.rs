//! The serde mapping's error ([`MetadataError`]). Its key and offset are context of the
//! [`Error`](crate::Error) that carries it, filled in by the deserializer and serializer.

/// An error of the [serde mapping](crate#the-serde-mapping). The full key it happened at is
/// [`Error::key`](crate::Error::key), and when reading, the offset of the value is [`Error::offset`](crate::Error::offset); both are part
/// of the message (` at key "K" (offset N)`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MetadataError {
    /// What serde, a `Serialize` or `Deserialize` impl, or the mapping reports in words: a type
    /// mismatch (`invalid type: expected u32, found string`), a value that does not fit its type,
    /// an unknown enum variant, a value GGUF cannot store, a key that appears twice.
    #[error("{message}")]
    #[non_exhaustive]
    Message {
        /// The message.
        message: String,
    },

    /// A struct field with no key of its name nor under it: the key is [`Error::key`](crate::Error::key).
    #[error(
        "missing (no key of this name, nor under it{})",
        not_utf8.as_ref().map(|(k, o)| format!(
            " that is UTF-8: the key \"{k}\" at offset {o} is not, and the serde view skips it; read it \
             through Gguf::metadata"
        )).unwrap_or_default()
    )]
    #[non_exhaustive]
    MissingKey {
        /// A key under the missing one that is not UTF-8, which the serde view leaves out (shown
        /// escaped, as [`GgufStr`](crate::GgufStr) shows it), and the offset of its value: a map
        /// of byte keys (`BTreeMap<ByteBuf, _>`) does not see it either.
        not_utf8: Option<(String, u64)>,
    },

    /// serde's missing field, where the deserializer could not name the key (a map read by a
    /// custom `Deserialize` impl).
    #[error("missing field `{field}`")]
    #[non_exhaustive]
    MissingField {
        /// The field.
        field: &'static str,
    },

    /// A key with an [`ARCH`](crate::ARCH) segment while the architecture is unknown.
    #[error(
        "key has an {{arch}} segment but the architecture is unknown: there is no general.architecture \
         string and none was given with MetadataOptions::arch"
    )]
    #[non_exhaustive]
    UnknownArch,
}
