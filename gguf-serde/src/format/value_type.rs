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
    /// 7: bool, one byte: the spec allows 0 (false) and 1 (true); ggml reads any other byte as
    /// true, and so does this crate (written back as 1).
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `gguf_metadata_value_type` as the spec (`docs/gguf.md`) numbers it, with the bytes
    /// `gguf.cpp` reads for one value (`GGUF_TYPE_SIZE`; 0 for the variable-size STRING and
    /// ARRAY) and the least bytes a value takes (a STRING's u64 length; an ARRAY's u32 element
    /// type and u64 count), written out independently of the code above.
    const TABLE: [(u32, &str, usize, usize); 13] = [
        (0, "u8", 1, 1),
        (1, "i8", 1, 1),
        (2, "u16", 2, 2),
        (3, "i16", 2, 2),
        (4, "u32", 4, 4),
        (5, "i32", 4, 4),
        (6, "f32", 4, 4),
        (7, "bool", 1, 1),
        (8, "string", 0, 8),
        (9, "array", 0, 12),
        (10, "u64", 8, 8),
        (11, "i64", 8, 8),
        (12, "f64", 8, 8),
    ];

    #[test]
    fn every_value_type_of_the_spec() {
        for (id, name, size, min) in TABLE {
            let t = ValueType::from_id(id).unwrap_or_else(|| panic!("id {id}"));
            assert_eq!((t.id(), t.name(), t.to_string()), (id, name, name.to_owned()));
            assert_eq!(t.fixed_size().unwrap_or(0), size, "{name}");
            assert_eq!(t.min_size(), min, "{name}");
            assert_eq!(ValueType::from_name(name), Some(t));
        }
        for id in [13, 14, 255, u32::MAX] {
            assert_eq!(ValueType::from_id(id), None, "id {id}");
        }
        assert_eq!(ValueType::from_name("U8"), None);
        assert_eq!(ValueType::from_name("uint8"), None);
    }
}
