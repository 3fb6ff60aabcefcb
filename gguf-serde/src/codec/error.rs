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

    /// Quantizing without importance weights to a type whose ggml quantizer requires them:
    /// IQ2_XXS, IQ2_XS and IQ1_S (`ggml_quantize_requires_imatrix`, and `GGML_ASSERT(quant_weights)`
    /// in `quantize_row_iq2_xxs_impl`, `…_iq2_xs_impl`, `…_iq1_s_impl`). Quantize them with
    /// [`quantize_with_importance`](crate::codec::quantize_with_importance).
    #[error("quantizing to {0} needs importance weights (an importance matrix), as in ggml")]
    ImportanceRequired(GgmlType),

    /// Input on which ggml's quantizer aborts the process (a `GGML_ASSERT` or `GGML_ABORT`, or an
    /// out-of-bounds read before one): the grid i-quants (IQ1_*, IQ2_*, IQ3_*) on blocks with NaN,
    /// infinite or huge values or weights, where no grid point is at a finite distance or the
    /// sub-block scale comes out NaN. Nothing is written for such a call (its output is
    /// unspecified).
    #[error("{dtype}: ggml's quantizer aborts on block {block}: {reason}")]
    QuantizeAbort {
        /// The tensor type.
        dtype: GgmlType,
        /// The block's index in the input of the call (`element / block_size`).
        block: u64,
        /// What ggml asserts.
        reason: &'static str,
    },
}

impl CodecError {
    /// `None` for every variant: a codec works on a buffer, not a file (a block index is not
    /// an offset).
    pub fn offset(&self) -> Option<u64> {
        self.names().0
    }

    /// `None` for every variant: codecs know no metadata key.
    pub fn key(&self) -> Option<&str> {
        self.names().1
    }

    /// `None` for every variant: the tensor being converted is context, added by the caller that
    /// knows it ([`crate::Error::tensor`]).
    pub fn tensor(&self) -> Option<&str> {
        self.names().2
    }

    /// The offset, key and tensor the error names: one exhaustive match, so that a new variant
    /// says what it names.
    fn names(&self) -> (Option<u64>, Option<&str>, Option<&str>) {
        match self {
            CodecError::NotWholeBlocks { .. }
            | CodecError::CodecSizeMismatch { .. }
            | CodecError::UnsupportedQuantize(_)
            | CodecError::UnsupportedDequantize(_)
            | CodecError::ImportanceRequired(_)
            | CodecError::QuantizeAbort { .. } => (None, None, None),
        }
    }
}

/// A kernel's failure where ggml aborts: the block (counted from the kernel's first) and why.
/// The public functions turn it into [`CodecError::QuantizeAbort`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Abort {
    /// Block index within the kernel's input.
    pub(crate) block: usize,
    /// What ggml asserts.
    pub(crate) reason: &'static str,
}

impl Abort {
    /// The public error for `dtype`, the kernel's input starting at block `first`.
    pub(crate) fn at(self, dtype: GgmlType, first: usize) -> CodecError {
        CodecError::QuantizeAbort { dtype, block: (first + self.block) as u64, reason: self.reason }
    }
}

/// A `Result` whose error is [`CodecError`].
pub type Result<T, E = CodecError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// No variant carries an offset, key or tensor: each reports none (the tensor is context).
    #[test]
    fn codec_errors_carry_no_offset_key_or_tensor() {
        let t = GgmlType::Q4_0;
        let cases = [
            CodecError::NotWholeBlocks { dtype: t, what: "input bytes", len: 3, block: 18 },
            CodecError::CodecSizeMismatch { dtype: t, what: "output bytes", expected: 18, found: 3 },
            CodecError::UnsupportedQuantize(t),
            CodecError::UnsupportedDequantize(t),
            CodecError::ImportanceRequired(GgmlType::IQ1_S),
            CodecError::QuantizeAbort { dtype: t, block: 0, reason: "r" },
        ];
        for e in &cases {
            assert_eq!((e.offset(), e.key(), e.tensor()), (None, None, None), "{e:?}");
        }
    }
}
