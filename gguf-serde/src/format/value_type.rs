//! The 13 metadata value types.
//!
//! Spec: ggml `docs/gguf.md`, "File Structure" (`gguf_metadata_value_type`).

use std::fmt;

/// One of GGUF's 13 metadata value types (`gguf_metadata_value_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ValueType {
    /// 0: `u8`.
    U8 = 0,
    /// 1: `i8`.
    I8 = 1,
    /// 2: `u16`.
    U16 = 2,
    /// 3: `i16`.
    I16 = 3,
    /// 4: `u32`.
    U32 = 4,
    /// 5: `i32`.
    I32 = 5,
    /// 6: `f32`.
    F32 = 6,
    /// 7: bool, one byte that must be 0 or 1.
    Bool = 7,
    /// 8: string, a `u64` byte length and UTF-8 bytes, no NUL.
    String = 8,
    /// 9: array, a `u32` element type, a `u64` count and the elements.
    Array = 9,
    /// 10: `u64`.
    U64 = 10,
    /// 11: `i64`.
    I64 = 11,
    /// 12: `f64`.
    F64 = 12,
}

impl ValueType {
    /// The type with GGUF id `id` (0–12).
    pub fn from_id(id: u32) -> Option<ValueType> {
        Some(match id {
            0 => Self::U8,
            1 => Self::I8,
            2 => Self::U16,
            3 => Self::I16,
            4 => Self::U32,
            5 => Self::I32,
            6 => Self::F32,
            7 => Self::Bool,
            8 => Self::String,
            9 => Self::Array,
            10 => Self::U64,
            11 => Self::I64,
            12 => Self::F64,
            _ => return None,
        })
    }

    /// The id stored in the file.
    pub fn id(self) -> u32 {
        self as u32
    }

    /// Size in bytes of a value of a fixed-size type; `None` for strings and arrays.
    pub fn fixed_size(self) -> Option<usize> {
        Some(match self {
            Self::U8 | Self::I8 | Self::Bool => 1,
            Self::U16 | Self::I16 => 2,
            Self::U32 | Self::I32 | Self::F32 => 4,
            Self::U64 | Self::I64 | Self::F64 => 8,
            Self::String | Self::Array => return None,
        })
    }

    /// The smallest number of bytes a value of this type can occupy (8 for a string's length,
    /// 12 for an array's element type and count).
    pub fn min_size(self) -> usize {
        match self {
            Self::String => 8,
            Self::Array => 12,
            t => t.fixed_size().unwrap_or(1),
        }
    }

    /// Short name: `u8`, `i8`, `u16`, `i16`, `u32`, `i32`, `f32`, `bool`, `string`, `array`,
    /// `u64`, `i64`, `f64`.
    pub fn name(self) -> &'static str {
        match self {
            Self::U8 => "u8",
            Self::I8 => "i8",
            Self::U16 => "u16",
            Self::I16 => "i16",
            Self::U32 => "u32",
            Self::I32 => "i32",
            Self::F32 => "f32",
            Self::Bool => "bool",
            Self::String => "string",
            Self::Array => "array",
            Self::U64 => "u64",
            Self::I64 => "i64",
            Self::F64 => "f64",
        }
    }

    /// Parses a short name as [`name`](Self::name) gives it.
    pub fn from_name(name: &str) -> Option<ValueType> {
        (0..13).filter_map(ValueType::from_id).find(|t| t.name() == name)
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
