//! llama.cpp's file types (`enum llama_ftype` in `include/llama.h`, as `llama-quantize` offers
//! them in `QUANT_OPTIONS`), written once in one table: every view (the number, the name, the
//! default tensor type, parsing, the file type of a file mostly of one tensor type) is derived
//! from it.

use std::fmt;
use std::str::FromStr;

use crate::format::GgmlType;

/// `LLAMA_FTYPE_MOSTLY_NVFP4`: a `llama_ftype` that llama-quantize does not offer (so no
/// [`LlamaFileType`]), which llama.cpp's loader still guesses for a file mostly of NVFP4.
const MOSTLY_NVFP4: u32 = 39;

/// `LLAMA_FTYPE_GUESSED`: the bit llama.cpp's loader sets on a file type it guessed.
const GUESSED: u32 = 1024;

/// The `mostly` column of [`file_types!`]: `-` for none.
macro_rules! mostly {
    (-) => {
        None
    };
    ($t:ident) => {
        Some(GgmlType::$t)
    };
}

/// The table, one row per file type: `NAME = number, default type, mostly, doc`. `mostly` is the
/// tensor type whose files llama.cpp's loader takes for this file type when `general.file_type`
/// is missing (`llama_model_loader`: `Q3_K` → `Q3_K_M`, `IQ2_S` → `IQ2_S`), `-` for none.
macro_rules! file_types {
    ($($v:ident = $n:literal, $def:ident, $mostly:tt, $desc:literal;)*) => {
        /// A llama.cpp file type (`enum llama_ftype`), as `llama-quantize` lists them (llama.cpp
        /// [`LLAMA_CPP_COMMIT`](crate::ops::quantize::LLAMA_CPP_COMMIT)): the name picks the mix of tensor types, the number is what
        /// `general.file_type` records. `COPY` (copy every tensor) is not a file type here: see
        /// [`QuantizeParams::only_copy`](crate::ops::quantize::QuantizeParams::only_copy).
        /// `MOSTLY_NVFP4` (39) exists in llama.h but llama-quantize does not offer it.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum LlamaFileType {
            $(#[doc = $desc] $v,)*
        }

        impl LlamaFileType {
            /// Every file type, in llama_ftype number order.
            pub const ALL: &'static [LlamaFileType] = &[$(Self::$v,)*];

            /// The `llama_ftype` number (`general.file_type`), e.g. 15 for `Q4_K_M`.
            pub fn number(self) -> u32 {
                match self { $(Self::$v => $n,)* }
            }

            /// The name llama-quantize gives it, e.g. `"Q4_K_M"`.
            pub fn name(self) -> &'static str {
                match self { $(Self::$v => stringify!($v),)* }
            }

            /// The tensor type most tensors get (`llama_ftype_get_default_type`): `Q4_K` for
            /// `Q4_K_M`, `IQ3_S` for `IQ3_XS` and `IQ3_M`, `IQ2_XS` for `IQ2_S`, `MXFP4` for
            /// `MXFP4_MOE`, …
            pub fn default_type(self) -> GgmlType {
                match self { $(Self::$v => GgmlType::$def,)* }
            }

            /// The tensor type of a file mostly of this file type, if this is the file type
            /// llama.cpp names such a file by (the table's `mostly` column).
            fn mostly(self) -> Option<GgmlType> {
                match self { $(Self::$v => mostly!($mostly),)* }
            }
        }
    };
}

file_types! {
    F32 = 0, F32, F32, "All F32 (`LLAMA_FTYPE_ALL_F32`, 0).";
    F16 = 1, F16, F16, "Mostly F16 (1).";
    Q4_0 = 2, Q4_0, Q4_0, "Mostly Q4_0 (2).";
    Q4_1 = 3, Q4_1, Q4_1, "Mostly Q4_1 (3).";
    Q8_0 = 7, Q8_0, Q8_0, "Mostly Q8_0 (7).";
    Q5_0 = 8, Q5_0, Q5_0, "Mostly Q5_0 (8).";
    Q5_1 = 9, Q5_1, Q5_1, "Mostly Q5_1 (9).";
    Q2_K = 10, Q2_K, Q2_K, "Q2_K with Q3_K/Q4_K promotions (10).";
    Q3_K_S = 11, Q3_K, -, "Q3_K, small (11).";
    Q3_K_M = 12, Q3_K, Q3_K, "Q3_K, medium (12); `Q3_K` is an alias.";
    Q3_K_L = 13, Q3_K, -, "Q3_K, large (13).";
    Q4_K_S = 14, Q4_K, -, "Q4_K, small (14).";
    Q4_K_M = 15, Q4_K, Q4_K, "Q4_K, medium (15); `Q4_K` is an alias.";
    Q5_K_S = 16, Q5_K, -, "Q5_K, small (16).";
    Q5_K_M = 17, Q5_K, Q5_K, "Q5_K, medium (17); `Q5_K` is an alias.";
    Q6_K = 18, Q6_K, Q6_K, "Mostly Q6_K (18).";
    IQ2_XXS = 19, IQ2_XXS, IQ2_XXS, "IQ2_XXS, 2.06 bpw (19); needs an importance matrix.";
    IQ2_XS = 20, IQ2_XS, IQ2_XS, "IQ2_XS, 2.31 bpw (20); needs an importance matrix.";
    Q2_K_S = 21, Q2_K, -, "Q2_K, small (21); needs an importance matrix.";
    IQ3_XS = 22, IQ3_S, -, "IQ3_XS, 3.3 bpw (22).";
    IQ3_XXS = 23, IQ3_XXS, IQ3_XXS, "IQ3_XXS, 3.06 bpw (23); needs an importance matrix.";
    IQ1_S = 24, IQ1_S, IQ1_S, "IQ1_S, 1.56 bpw (24); needs an importance matrix.";
    IQ4_NL = 25, IQ4_NL, IQ4_NL, "IQ4_NL, 4.50 bpw non-linear (25).";
    IQ3_S = 26, IQ3_S, IQ3_S, "IQ3_S, 3.44 bpw (26).";
    IQ3_M = 27, IQ3_S, -, "IQ3_M, 3.66 bpw mix (27).";
    IQ2_S = 28, IQ2_XS, IQ2_S, "IQ2_S, 2.5 bpw (28); needs an importance matrix.";
    IQ2_M = 29, IQ2_S, -, "IQ2_M, 2.7 bpw (29); needs an importance matrix.";
    IQ4_XS = 30, IQ4_XS, IQ4_XS, "IQ4_XS, 4.25 bpw non-linear (30).";
    IQ1_M = 31, IQ1_M, IQ1_M, "IQ1_M, 1.75 bpw (31); needs an importance matrix.";
    BF16 = 32, BF16, BF16, "Mostly BF16 (32).";
    TQ1_0 = 36, TQ1_0, TQ1_0, "TQ1_0, 1.69 bpw ternary (36).";
    TQ2_0 = 37, TQ2_0, TQ2_0, "TQ2_0, 2.06 bpw ternary (37).";
    MXFP4_MOE = 38, MXFP4, MXFP4, "MXFP4 for the experts of a mixture of experts, Q8_0 elsewhere (38).";
    Q1_0 = 40, Q1_0, Q1_0, "Mostly Q1_0, 1.125 bpw (40).";
    Q2_0 = 41, Q2_0, Q2_0, "Mostly Q2_0, 2.25 bpw in groups of 64 (41).";
}

impl LlamaFileType {
    /// The file type of `llama_ftype` number `n`, if llama-quantize offers it.
    pub fn from_number(n: u32) -> Option<LlamaFileType> {
        Self::ALL.iter().copied().find(|t| t.number() == n)
    }
}

impl fmt::Display for LlamaFileType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing a [`LlamaFileType`] from a string that names none.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown llama.cpp file type {0:?} (expected one of Q4_K_M, Q8_0, Q5_K_S, IQ4_XS, F16, ... or a number)")]
pub struct UnknownFileType(pub String);

impl FromStr for LlamaFileType {
    type Err = UnknownFileType;

    /// Parses a file type as llama-quantize does: a name, case-insensitively (`q4_k_m`), the
    /// aliases `Q3_K`, `Q4_K`, `Q5_K` (the `_M` types), or a `llama_ftype` number (`15`).
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        let alias = match s.to_ascii_uppercase().as_str() {
            "Q3_K" => Some(Self::Q3_K_M),
            "Q4_K" => Some(Self::Q4_K_M),
            "Q5_K" => Some(Self::Q5_K_M),
            _ => None,
        };
        alias
            .or_else(|| Self::ALL.iter().copied().find(|t| t.name().eq_ignore_ascii_case(s)))
            .or_else(|| s.parse::<u32>().ok().and_then(Self::from_number))
            .ok_or_else(|| UnknownFileType(s.to_owned()))
    }
}

impl LlamaFileType {
    /// The file type of a file mostly of tensor type `t` (what `gguf dequantize` writes as
    /// `general.file_type`): `Q3_K` → `Q3_K_M`, `Q4_K` → `Q4_K_M`, `IQ2_S` → `IQ2_S`, `MXFP4`
    /// → `MXFP4_MOE`; `None` for a type no file type is named after (`Q8_1`, `NVFP4`, the
    /// integer types).
    pub fn of_tensor_type(t: GgmlType) -> Option<LlamaFileType> {
        Self::ALL.iter().copied().find(|f| f.mostly() == Some(t))
    }
}

/// The `llama_ftype` llama.cpp's loader guesses for a file without `general.file_type` whose most
/// common tensor type is `t` (`llama_model_loader`), with [`GUESSED`] set:
/// [`LlamaFileType::of_tensor_type`], except that the loader knows no file type for `MXFP4`
/// (`ALL_F32`, as for a type it does not know) and one for `NVFP4` ([`MOSTLY_NVFP4`]).
pub(crate) fn guessed_number(t: GgmlType) -> u32 {
    let n = match t {
        GgmlType::MXFP4 => 0,
        GgmlType::NVFP4 => MOSTLY_NVFP4,
        t => LlamaFileType::of_tensor_type(t).map_or(0, LlamaFileType::number),
    };
    n | GUESSED
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_type_names_numbers_and_aliases() {
        assert_eq!(LlamaFileType::ALL.len(), 35);
        assert_eq!("q4_k_m".parse(), Ok(LlamaFileType::Q4_K_M));
        assert_eq!("Q4_K".parse(), Ok(LlamaFileType::Q4_K_M));
        assert_eq!("q3_k".parse(), Ok(LlamaFileType::Q3_K_M));
        assert_eq!("15".parse(), Ok(LlamaFileType::Q4_K_M));
        assert_eq!("38".parse(), Ok(LlamaFileType::MXFP4_MOE));
        assert_eq!(LlamaFileType::MXFP4_MOE.number(), 38);
        assert!("39".parse::<LlamaFileType>().is_err(), "NVFP4 is not offered");
        assert!("MXFP4".parse::<LlamaFileType>().is_err());
        assert_eq!(LlamaFileType::IQ2_S.default_type(), GgmlType::IQ2_XS);
        for t in LlamaFileType::ALL {
            assert_eq!(t.name().parse(), Ok(*t));
            assert_eq!(LlamaFileType::from_number(t.number()), Some(*t));
        }
    }

    /// The loader's guess, as `llama_model_loader`'s `switch (type_max)` writes it.
    #[test]
    fn guessed_file_types_follow_the_loader() {
        use GgmlType as T;
        let loader = [
            (T::F32, 0),
            (T::F16, 1),
            (T::BF16, 32),
            (T::Q4_0, 2),
            (T::Q4_1, 3),
            (T::Q5_0, 8),
            (T::Q5_1, 9),
            (T::Q8_0, 7),
            (T::Q2_K, 10),
            (T::Q3_K, 12),
            (T::Q4_K, 15),
            (T::Q5_K, 17),
            (T::Q6_K, 18),
            (T::TQ1_0, 36),
            (T::TQ2_0, 37),
            (T::IQ2_XXS, 19),
            (T::IQ2_XS, 20),
            (T::IQ2_S, 28),
            (T::IQ3_XXS, 23),
            (T::IQ1_S, 24),
            (T::IQ1_M, 31),
            (T::IQ4_NL, 25),
            (T::IQ4_XS, 30),
            (T::IQ3_S, 26),
            (T::NVFP4, 39),
            (T::Q1_0, 40),
            (T::Q2_0, 41),
            (T::MXFP4, 0),
            (T::Q8_1, 0),
            (T::I8, 0),
        ];
        for (t, n) in loader {
            assert_eq!(guessed_number(t), n | 1024, "{t}");
        }
        assert_eq!(LlamaFileType::of_tensor_type(T::MXFP4), Some(LlamaFileType::MXFP4_MOE));
        assert_eq!(LlamaFileType::of_tensor_type(T::Q3_K), Some(LlamaFileType::Q3_K_M));
        assert_eq!(LlamaFileType::of_tensor_type(T::NVFP4), None);
    }
}
