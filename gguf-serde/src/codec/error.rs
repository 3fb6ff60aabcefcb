//! The codecs' own error: what a quantize or dequantize call was given that it cannot convert.

use crate::format::GgmlType;

/// Why a codec call failed. Converts into [`crate::Error`] (as its `Codec` kind) with `?`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// Codec input that is not a whole number of blocks of its type.
    #[error("{dtype}: {what} of {len} is not a whole number of blocks of {block}")]
    NotWholeBlocks {
        /// The tensor type.
        dtype: GgmlType,
        /// `"input bytes"` (dequantize) or `"input elements"` (quantize).
        what: &'static str,
        /// The length given.
        len: u64,
        /// Bytes (or elements) per block.
        block: u64,
    },

    /// A codec output buffer whose length does not match its input.
    #[error("{dtype}: {what} is {found}, expected {expected}")]
    CodecSizeMismatch {
        /// The tensor type.
        dtype: GgmlType,
        /// `"output elements"` or `"output bytes"`.
        what: &'static str,
        /// The length the input calls for.
        expected: u64,
        /// The length given.
        found: u64,
    },

    /// Quantizing to a type that has no reference quantizer in this crate.
    #[error("quantizing to {0} is not supported")]
    UnsupportedQuantize(GgmlType),

    /// Dequantizing a type that has no decoder in this crate.
    #[error("dequantizing {0} is not supported")]
    UnsupportedDequantize(GgmlType),
}

/// A `Result` whose error is [`CodecError`].
pub type Result<T, E = CodecError> = std::result::Result<T, E>;
