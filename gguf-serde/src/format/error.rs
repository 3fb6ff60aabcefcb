//! Why a `general.alignment` is refused ([`AlignmentProblem`]): the one format rule the reader
//! and the writer both apply ([`alignment_problem`](super::alignment_problem)), so it lives at
//! the bottom, where both can name it.

// As the rest of the format layer: every operation is checked.
#![deny(clippy::arithmetic_side_effects)]

use std::fmt;

/// Why `general.alignment` was refused: what ggml's `gguf.cpp` refuses too (a type other than
/// UINT32, 0, a value that is not a power of two). Every power of two a UINT32 holds, up to
/// [`MAX_ALIGNMENT`](crate::format::MAX_ALIGNMENT) (2^31), is taken.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AlignmentProblem {
    /// Stored with a type other than UINT32 (the type name is given).
    WrongType(&'static str),
    /// Zero.
    Zero,
    /// Not a power of two (the value is given).
    NotPowerOfTwo(u32),
}

impl fmt::Display for AlignmentProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AlignmentProblem::WrongType(t) => write!(f, "has type {t}, expected u32"),
            AlignmentProblem::Zero => f.write_str("is 0"),
            AlignmentProblem::NotPowerOfTwo(v) => write!(f, "is {v}, not a power of two"),
        }
    }
}
