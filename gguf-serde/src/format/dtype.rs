//! ggml tensor types: ids, names, block sizes and bytes per block.
//!
//! The table follows ggml's type traits (`ggml.c`, `type_traits[]`) and block layouts
//! (`ggml-common.h`). Ids that ggml removed (4, 5, 31–33, 36–38) are not variants: reading one is
//! [`FormatError::RemovedTensorType`](crate::FormatError::RemovedTensorType), any other unknown id
//! is [`FormatError::UnknownTensorType`](crate::FormatError::UnknownTensorType).

use std::fmt;
use std::str::FromStr;

/// A ggml tensor element type (`enum ggml_type`), as stored in a GGUF tensor info.
///
/// Quantized types store their elements in blocks of [`block_size`](Self::block_size) elements
/// that take [`type_size`](Self::type_size) bytes; blocks run along the innermost (fastest,
/// `ne[0]`, last canonical) dimension, so that dimension must be a multiple of the block size.
///
/// ```
/// use gguf_serde::GgmlType;
///
/// // Q4_K (ggml type 12): super-blocks of 256 elements in 144 bytes (ggml's `block_q4_K`).
/// let t: GgmlType = "q4_k".parse()?; // names as ggml spells them, any case
/// assert_eq!((t, t.id(), t.block_size(), t.type_size()), (GgmlType::Q4_K, 12, 256, 144));
/// assert!(t.is_quantized());
/// // A 4096 × 4096 weight (`ne` = [4096, 4096]): 16 blocks per row.
/// assert_eq!(t.row_bytes(4096), Some(16 * 144));
/// assert_eq!(t.nbytes(&[4096, 4096]), Some(4096 * 16 * 144));
/// assert_eq!(t.row_bytes(100), None); // not a whole number of blocks
/// assert_eq!(GgmlType::from_id(8), Some(GgmlType::Q8_0));
/// assert_eq!(GgmlType::F16.to_string(), "F16");
/// # Ok::<(), gguf_serde::format::UnknownTypeName>(())
/// ```
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
#[non_exhaustive]
pub enum GgmlType {
    /// IEEE 754 binary32.
    F32 = 0,
    /// IEEE 754 binary16.
    F16 = 1,
    /// 32 elements: f16 scale `d`, 16 bytes of 4-bit quants.
    Q4_0 = 2,
    /// 32 elements: f16 `d`, f16 `m`, 16 bytes of 4-bit quants.
    Q4_1 = 3,
    /// 32 elements: f16 `d`, 4 bytes of 5th bits, 16 bytes of low 4 bits.
    Q5_0 = 6,
    /// 32 elements: f16 `d`, f16 `m`, 4 bytes of 5th bits, 16 bytes of low 4 bits.
    Q5_1 = 7,
    /// 32 elements: f16 `d`, 32 i8 quants.
    Q8_0 = 8,
    /// 32 elements: f16 `d`, f16 `s` (d × sum of quants), 32 i8 quants.
    Q8_1 = 9,
    /// 256-element super-block, 2-bit k-quant.
    Q2_K = 10,
    /// 256-element super-block, 3-bit k-quant.
    Q3_K = 11,
    /// 256-element super-block, 4-bit k-quant: f16 `d`, f16 `dmin`, 12 bytes of scales, 128 bytes of quants.
    Q4_K = 12,
    /// 256-element super-block, 5-bit k-quant.
    Q5_K = 13,
    /// 256-element super-block, 6-bit k-quant.
    Q6_K = 14,
    /// 256-element super-block, 8-bit k-quant with f32 `d` (an intermediate type of ggml's dot products).
    Q8_K = 15,
    /// 256-element i-quant, 2.0625 bits per weight.
    IQ2_XXS = 16,
    /// 256-element i-quant, 2.3125 bits per weight.
    IQ2_XS = 17,
    /// 256-element i-quant, 3.0625 bits per weight.
    IQ3_XXS = 18,
    /// 256-element i-quant, 1.5625 bits per weight.
    IQ1_S = 19,
    /// 32-element non-linear 4-bit quant.
    IQ4_NL = 20,
    /// 256-element i-quant, 3.4375 bits per weight.
    IQ3_S = 21,
    /// 256-element i-quant, 2.5625 bits per weight.
    IQ2_S = 22,
    /// 256-element non-linear 4-bit quant with 6-bit sub-block scales.
    IQ4_XS = 23,
    /// Signed 8-bit integer.
    I8 = 24,
    /// Signed 16-bit integer.
    I16 = 25,
    /// Signed 32-bit integer.
    I32 = 26,
    /// Signed 64-bit integer.
    I64 = 27,
    /// IEEE 754 binary64.
    F64 = 28,
    /// 256-element i-quant, 1.75 bits per weight.
    IQ1_M = 29,
    /// bfloat16.
    BF16 = 30,
    /// 256-element ternary quant, 1.6875 bits per weight.
    TQ1_0 = 34,
    /// 256-element ternary quant, 2.0625 bits per weight.
    TQ2_0 = 35,
    /// 32 elements: e8m0 shared exponent, 16 bytes of e2m1 (FP4) values (OCP microscaling).
    MXFP4 = 39,
    /// 64 elements: four e4m3 sub-block scales and 32 bytes of e2m1 values (NVIDIA FP4).
    NVFP4 = 40,
    /// 128-element 1-bit quant.
    Q1_0 = 41,
    /// 64-element 2-bit quant.
    Q2_0 = 42,
}

/// Ids ggml used once and removed (`Q4_2`, `Q4_3`, `Q4_0_4_4`, `Q4_0_4_8`, `Q4_0_8_8`,
/// `IQ4_NL_4_4`, `IQ4_NL_4_8`, `IQ4_NL_8_8`). Files that carry them are refused.
pub const REMOVED_TYPE_IDS: [u32; 8] = [4, 5, 31, 32, 33, 36, 37, 38];

impl GgmlType {
    /// Every type, in id order.
    pub const ALL: [GgmlType; 35] = [
        Self::F32,
        Self::F16,
        Self::Q4_0,
        Self::Q4_1,
        Self::Q5_0,
        Self::Q5_1,
        Self::Q8_0,
        Self::Q8_1,
        Self::Q2_K,
        Self::Q3_K,
        Self::Q4_K,
        Self::Q5_K,
        Self::Q6_K,
        Self::Q8_K,
        Self::IQ2_XXS,
        Self::IQ2_XS,
        Self::IQ3_XXS,
        Self::IQ1_S,
        Self::IQ4_NL,
        Self::IQ3_S,
        Self::IQ2_S,
        Self::IQ4_XS,
        Self::I8,
        Self::I16,
        Self::I32,
        Self::I64,
        Self::F64,
        Self::IQ1_M,
        Self::BF16,
        Self::TQ1_0,
        Self::TQ2_0,
        Self::MXFP4,
        Self::NVFP4,
        Self::Q1_0,
        Self::Q2_0,
    ];

    /// The type with ggml id `id`, or `None` for removed and unknown ids.
    pub fn from_id(id: u32) -> Option<GgmlType> {
        Self::ALL.iter().copied().find(|t| t.id() == id)
    }

    /// The ggml id (`enum ggml_type` value) stored in GGUF tensor infos.
    pub fn id(self) -> u32 {
        self as u32
    }

    /// ggml's name for the type (`ggml_type_name`), e.g. `"Q4_K"`, `"BF16"`.
    pub fn name(self) -> &'static str {
        self.traits().0
    }

    /// Elements per block (`ggml_blck_size`): 1 for plain types, 32/64/128/256 for quantized ones.
    pub fn block_size(self) -> u64 {
        self.traits().1
    }

    /// Bytes per block (`ggml_type_size`).
    pub fn type_size(self) -> u64 {
        self.traits().2
    }

    /// Whether the type stores blocks of quantized values rather than plain numbers.
    pub fn is_quantized(self) -> bool {
        !matches!(self, Self::F32 | Self::F16 | Self::BF16 | Self::F64 | Self::I8 | Self::I16 | Self::I32 | Self::I64)
    }

    /// Bytes taken by `n` elements laid out in one row, or `None` if `n` is not a whole number of
    /// blocks or the result overflows `u64`.
    pub fn row_bytes(self, n: u64) -> Option<u64> {
        if !n.is_multiple_of(self.block_size()) {
            return None;
        }
        n.checked_div(self.block_size())?.checked_mul(self.type_size())
    }

    /// Bytes taken by a tensor with stored dims `ne` (fastest first, `ne[0]` is the row length):
    /// `ne[0] / block_size × type_size × ne[1] × ne[2] × …`, as ggml's `ggml_nbytes` for a
    /// contiguous tensor. `None` if `ne[0]` is not a multiple of the block size or any product
    /// overflows `u64`. An empty `ne` is a scalar (one element). A tensor with a dim of 0 takes 0
    /// bytes whatever its other dims, as `ggml_nbytes` gives (the others are not multiplied, so
    /// their product cannot overflow).
    pub fn nbytes(self, ne: &[u64]) -> Option<u64> {
        let (first, rest) = match ne.split_first() {
            Some(x) => x,
            None => return self.row_bytes(1),
        };
        if ne.contains(&0) {
            return (first.checked_rem(self.block_size()) == Some(0)).then_some(0);
        }
        rest.iter().try_fold(self.row_bytes(*first)?, |acc, &d| acc.checked_mul(d))
    }

    fn traits(self) -> (&'static str, u64, u64) {
        match self {
            Self::F32 => ("F32", 1, 4),
            Self::F16 => ("F16", 1, 2),
            Self::Q4_0 => ("Q4_0", 32, 18),
            Self::Q4_1 => ("Q4_1", 32, 20),
            Self::Q5_0 => ("Q5_0", 32, 22),
            Self::Q5_1 => ("Q5_1", 32, 24),
            Self::Q8_0 => ("Q8_0", 32, 34),
            Self::Q8_1 => ("Q8_1", 32, 36),
            Self::Q2_K => ("Q2_K", 256, 84),
            Self::Q3_K => ("Q3_K", 256, 110),
            Self::Q4_K => ("Q4_K", 256, 144),
            Self::Q5_K => ("Q5_K", 256, 176),
            Self::Q6_K => ("Q6_K", 256, 210),
            Self::Q8_K => ("Q8_K", 256, 292),
            Self::IQ2_XXS => ("IQ2_XXS", 256, 66),
            Self::IQ2_XS => ("IQ2_XS", 256, 74),
            Self::IQ3_XXS => ("IQ3_XXS", 256, 98),
            Self::IQ1_S => ("IQ1_S", 256, 50),
            Self::IQ4_NL => ("IQ4_NL", 32, 18),
            Self::IQ3_S => ("IQ3_S", 256, 110),
            Self::IQ2_S => ("IQ2_S", 256, 82),
            Self::IQ4_XS => ("IQ4_XS", 256, 136),
            Self::I8 => ("I8", 1, 1),
            Self::I16 => ("I16", 1, 2),
            Self::I32 => ("I32", 1, 4),
            Self::I64 => ("I64", 1, 8),
            Self::F64 => ("F64", 1, 8),
            Self::IQ1_M => ("IQ1_M", 256, 56),
            Self::BF16 => ("BF16", 1, 2),
            Self::TQ1_0 => ("TQ1_0", 256, 54),
            Self::TQ2_0 => ("TQ2_0", 256, 66),
            Self::MXFP4 => ("MXFP4", 32, 17),
            Self::NVFP4 => ("NVFP4", 64, 36),
            Self::Q1_0 => ("Q1_0", 128, 18),
            Self::Q2_0 => ("Q2_0", 64, 18),
        }
    }
}

impl fmt::Display for GgmlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing a [`GgmlType`] from a name that is not one (see [`GgmlType::from_str`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown ggml type name {0:?} (expected one of F32, F16, BF16, Q8_0, Q4_K, ...)")]
pub struct UnknownTypeName(pub String);

impl FromStr for GgmlType {
    type Err = UnknownTypeName;

    /// Parses a ggml type name, case-insensitively (`"q4_k"`, `"Q4_K"`, `"bf16"`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .iter()
            .copied()
            .find(|t| t.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownTypeName(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row of ggml's type table (id, name, block size, bytes per block), written out
    /// independently of the `traits` match above.
    const TABLE: [(u32, &str, u64, u64); 35] = [
        (0, "F32", 1, 4),
        (1, "F16", 1, 2),
        (2, "Q4_0", 32, 18),
        (3, "Q4_1", 32, 20),
        (6, "Q5_0", 32, 22),
        (7, "Q5_1", 32, 24),
        (8, "Q8_0", 32, 34),
        (9, "Q8_1", 32, 36),
        (10, "Q2_K", 256, 84),
        (11, "Q3_K", 256, 110),
        (12, "Q4_K", 256, 144),
        (13, "Q5_K", 256, 176),
        (14, "Q6_K", 256, 210),
        (15, "Q8_K", 256, 292),
        (16, "IQ2_XXS", 256, 66),
        (17, "IQ2_XS", 256, 74),
        (18, "IQ3_XXS", 256, 98),
        (19, "IQ1_S", 256, 50),
        (20, "IQ4_NL", 32, 18),
        (21, "IQ3_S", 256, 110),
        (22, "IQ2_S", 256, 82),
        (23, "IQ4_XS", 256, 136),
        (24, "I8", 1, 1),
        (25, "I16", 1, 2),
        (26, "I32", 1, 4),
        (27, "I64", 1, 8),
        (28, "F64", 1, 8),
        (29, "IQ1_M", 256, 56),
        (30, "BF16", 1, 2),
        (34, "TQ1_0", 256, 54),
        (35, "TQ2_0", 256, 66),
        (39, "MXFP4", 32, 17),
        (40, "NVFP4", 64, 36),
        (41, "Q1_0", 128, 18),
        (42, "Q2_0", 64, 18),
    ];

    #[test]
    fn every_row_of_the_ggml_table() {
        for (id, name, blk, size) in TABLE {
            let t = GgmlType::from_id(id).unwrap_or_else(|| panic!("id {id} missing"));
            assert_eq!((t.id(), t.name(), t.block_size(), t.type_size()), (id, name, blk, size));
            assert_eq!(t.to_string(), name);
            assert_eq!(name.parse::<GgmlType>(), Ok(t));
            assert_eq!(name.to_lowercase().parse::<GgmlType>(), Ok(t));
        }
    }

    #[test]
    fn removed_and_unknown_ids() {
        for id in REMOVED_TYPE_IDS.into_iter().chain([43, 100, u32::MAX]) {
            assert_eq!(GgmlType::from_id(id), None, "id {id}");
        }
        let known = (0..64).filter(|&id| GgmlType::from_id(id).is_some()).count();
        assert_eq!(known, 35);
    }

    #[test]
    fn nbytes_checks_blocks_and_overflow() {
        assert_eq!(GgmlType::Q8_0.nbytes(&[64, 3]), Some(2 * 34 * 3));
        assert_eq!(GgmlType::Q4_K.nbytes(&[256, 2, 2]), Some(144 * 4));
        assert_eq!(GgmlType::Q8_0.nbytes(&[33]), None);
        assert_eq!(GgmlType::F32.nbytes(&[]), Some(4));
        assert_eq!(GgmlType::F32.nbytes(&[0, 7]), Some(0));
        // A dim of 0 makes 0 bytes before the others can overflow (ggml_nbytes).
        assert_eq!(GgmlType::F32.nbytes(&[3_238_002_688, 1_677_721_600, 0, 0]), Some(0));
        assert_eq!(GgmlType::F32.nbytes(&[1 << 62, 0]), Some(0));
        assert_eq!(GgmlType::Q8_0.nbytes(&[33, 0]), None);
        assert_eq!(GgmlType::F32.nbytes(&[1 << 32, 1 << 32]), None);
        assert_eq!(GgmlType::I8.nbytes(&[1 << 32, 1 << 32]), None);
    }
}
