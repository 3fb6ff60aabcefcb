//! Typed blocks: ggml's `block_*` structs (`ggml-common.h`) as `#[repr(C)]` Rust structs whose
//! fields are all bytes, so that a slice of whole blocks of any alignment is a `&[Block]` with no
//! copy and every field is read by name instead of a byte offset.
//!
//! A field is a [`Field`]: `u8`/`i8`, a little-endian scalar ([`F16`], [`BF16`], [`F32`], [`F64`],
//! [`U16`], [`U32`], [`I16`], [`I32`], [`I64`]: bytes with `get`/`new`), or an array of fields.
//! The scalar types say how wide a big-endian file's swapped units are, so a block's
//! [`Block::SWAP`] list is derived from its declaration: declare each field in the C type ggml
//! gives it, and a field that ggml reads through a wider integer (`memcpy` into `uint32_t`, a
//! `uint16_t` pointer) as an array of that integer.
//!
//! [`block!`] declares a block; [`as_blocks`] / [`as_blocks_mut`] view bytes as blocks.

use super::scalar::{f16_to_f32, f32_to_f16};

/// One run of equal-width scalars inside a block: `count` scalars of `width` bytes from byte
/// `offset`. A big-endian file stores each scalar of width > 1 byte-reversed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Swap {
    /// Byte offset of the first scalar in the block.
    pub(crate) offset: usize,
    /// Bytes per scalar (1: nothing to swap).
    pub(crate) width: usize,
    /// Number of scalars.
    pub(crate) count: usize,
}

impl Swap {
    /// The run of field type `T` at `offset`.
    pub(crate) const fn field<T: Field>(offset: usize) -> Swap {
        Swap { offset, width: T::WIDTH, count: T::COUNT }
    }
}

/// A type made of bytes only.
///
/// # Safety
/// Alignment 1, size `WIDTH × COUNT`, no padding, every bit pattern valid, no interior
/// mutability.
pub(crate) unsafe trait Field: Copy + 'static {
    /// Bytes per scalar that a big-endian file swaps (1 for bytes).
    const WIDTH: usize;
    /// Scalars in the field.
    const COUNT: usize;
}

// SAFETY: one byte.
unsafe impl Field for u8 {
    const WIDTH: usize = 1;
    const COUNT: usize = 1;
}

// SAFETY: one byte.
unsafe impl Field for i8 {
    const WIDTH: usize = 1;
    const COUNT: usize = 1;
}

// SAFETY: an array of fields is one: alignment 1, no padding between elements, size N × theirs.
unsafe impl<T: Field, const N: usize> Field for [T; N] {
    const WIDTH: usize = T::WIDTH;
    const COUNT: usize = T::COUNT * N;
}

/// A block: a `#[repr(C)]` struct of [`Field`]s, so alignment 1, no padding and any bit pattern.
///
/// # Safety
/// As [`Field`]; implemented by [`block!`] (which checks the size) and for the plain scalars.
pub(crate) unsafe trait Block: Copy + 'static {
    /// The runs of scalars a big-endian file stores byte-swapped (with width-1 runs for the byte
    /// fields, which stay).
    const SWAP: &'static [Swap];

    /// The all-zero block.
    #[inline(always)]
    fn zeroed() -> Self {
        // SAFETY: every bit pattern is a valid block (the trait's contract).
        #[allow(unsafe_code)]
        unsafe {
            std::mem::zeroed()
        }
    }
}

/// The whole blocks at the start of `bytes` (a trailing partial block is left out), without a copy.
#[inline(always)]
pub(crate) fn as_blocks<B: Block>(bytes: &[u8]) -> &[B] {
    let n = bytes.len() / std::mem::size_of::<B>();
    // SAFETY: `B` has alignment 1 and accepts any bytes (`Block`'s contract); `n` blocks fit in
    // `bytes`, whose borrow the result keeps.
    #[allow(unsafe_code)]
    unsafe {
        std::slice::from_raw_parts(bytes.as_ptr().cast::<B>(), n)
    }
}

/// [`as_blocks`] for writing.
#[inline(always)]
pub(crate) fn as_blocks_mut<B: Block>(bytes: &mut [u8]) -> &mut [B] {
    let n = bytes.len() / std::mem::size_of::<B>();
    // SAFETY: as in `as_blocks`; every bit pattern written through a `B` is valid bytes.
    #[allow(unsafe_code)]
    unsafe {
        std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<B>(), n)
    }
}

/// Declares a block struct: `#[repr(C)]`, every field a [`Field`], its size checked against
/// ggml's at compile time, its [`Block::SWAP`] list derived from the field types.
macro_rules! block {
    ($(#[$m:meta])* pub(crate) struct $name:ident [$size:literal bytes] {
        $($(#[$fm:meta])* $field:ident: $ty:ty,)*
    }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy)]
        pub(crate) struct $name {
            $($(#[$fm])* pub(crate) $field: $ty,)*
        }
        const _: () = assert!(
            ::std::mem::size_of::<$name>() == $size && ::std::mem::align_of::<$name>() == 1,
            concat!(stringify!($name), ": not ", stringify!($size), " bytes of alignment 1")
        );
        // SAFETY: `#[repr(C)]` of `Field`s only (`Swap::field::<$ty>` requires it of each), so
        // alignment 1, no padding, every bit pattern valid; the size is checked above.
        #[allow(unsafe_code)]
        unsafe impl $crate::codec::block::Block for $name {
            const SWAP: &'static [$crate::codec::block::Swap] =
                &[$($crate::codec::block::Swap::field::<$ty>(::std::mem::offset_of!($name, $field)),)*];
        }
    };
}
pub(crate) use block;

/// Little-endian scalars: `[u8; N]` with the integer read and written through `bits`/`from_bits`.
macro_rules! le_scalar {
    ($($(#[$m:meta])* $name:ident: $bits:ty;)*) => {$(
        $(#[$m])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub(crate) struct $name(pub(crate) [u8; std::mem::size_of::<$bits>()]);

        impl $name {
            /// The stored integer.
            #[inline(always)]
            pub(crate) fn bits(self) -> $bits {
                <$bits>::from_le_bytes(self.0)
            }
            /// Stores `v`.
            #[inline(always)]
            #[allow(dead_code)] // not every scalar is written by a quantizer
            pub(crate) fn from_bits(v: $bits) -> Self {
                Self(v.to_le_bytes())
            }
        }

        // SAFETY: `[u8; N]`, transparent.
        #[allow(unsafe_code)]
        unsafe impl Field for $name {
            const WIDTH: usize = std::mem::size_of::<$bits>();
            const COUNT: usize = 1;
        }

        // SAFETY: a plain type's block is one scalar (`[u8; N]`, transparent).
        #[allow(unsafe_code)]
        unsafe impl Block for $name {
            const SWAP: &'static [Swap] = &[Swap::field::<$name>(0)];
        }
    )*};
}

le_scalar! {
    /// A little-endian `ggml_half` (IEEE binary16).
    F16: u16;
    /// A little-endian `ggml_bf16_t`.
    BF16: u16;
    /// A little-endian `float`.
    F32: u32;
    /// A little-endian `double`.
    F64: u64;
    /// A little-endian `uint16_t`.
    U16: u16;
    /// A little-endian `uint32_t`.
    U32: u32;
    /// A little-endian `int16_t`.
    I16: i16;
    /// A little-endian `int32_t`.
    I32: i32;
    /// A little-endian `int64_t`.
    I64: i64;
}

// SAFETY: one byte (the I8 type's block).
#[allow(unsafe_code)]
unsafe impl Block for i8 {
    const SWAP: &'static [Swap] = &[Swap::field::<i8>(0)];
}

impl F16 {
    /// The value as f32, as ggml's `GGML_FP16_TO_FP32` (exact; NaN quieted, payload kept).
    #[inline(always)]
    pub(crate) fn get(self) -> f32 {
        f16_to_f32(self.bits())
    }
    /// `x` rounded as ggml's `GGML_FP32_TO_FP16`.
    #[inline(always)]
    pub(crate) fn new(x: f32) -> F16 {
        F16::from_bits(f32_to_f16(x))
    }
}

impl F32 {
    /// The stored value.
    #[inline(always)]
    pub(crate) fn get(self) -> f32 {
        f32::from_bits(self.bits())
    }
    /// Stores `x`.
    #[inline(always)]
    pub(crate) fn new(x: f32) -> F32 {
        F32::from_bits(x.to_bits())
    }
}

impl F64 {
    /// The stored value.
    #[inline(always)]
    pub(crate) fn get(self) -> f64 {
        f64::from_bits(self.bits())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    block! {
        /// A test block with every kind of field.
        pub(crate) struct Mixed [20 bytes] {
            a: u8,
            d: F16,
            w: [U32; 2],
            q: [i8; 4],
            s: [I16; 2],
            #[allow(dead_code)]
            tail: u8,
        }
    }

    #[test]
    fn swap_list_follows_the_fields() {
        let want = [
            Swap { offset: 0, width: 1, count: 1 },
            Swap { offset: 1, width: 2, count: 1 },
            Swap { offset: 3, width: 4, count: 2 },
            Swap { offset: 11, width: 1, count: 4 },
            Swap { offset: 15, width: 2, count: 2 },
            Swap { offset: 19, width: 1, count: 1 },
        ];
        assert_eq!(Mixed::SWAP, want);
    }

    #[test]
    fn views_read_fields_at_any_alignment() {
        let mut bytes = [0u8; 1 + 2 * 20 + 5];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = i as u8;
        }
        // Offset 1: not aligned for any wider integer.
        let blocks = as_blocks::<Mixed>(&bytes[1..]);
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].a, 1);
        assert_eq!(blocks[0].d.bits(), u16::from_le_bytes([2, 3]));
        assert_eq!(blocks[0].w[1].bits(), u32::from_le_bytes([8, 9, 10, 11]));
        assert_eq!(blocks[1].q, [32, 33, 34, 35]);
        assert_eq!(blocks[1].s[0].bits(), i16::from_le_bytes([36, 37]));
        let m = as_blocks_mut::<Mixed>(&mut bytes[1..]);
        m[1].d = F16::new(1.0);
        assert_eq!(bytes[1 + 20 + 1..1 + 20 + 3], [0x00, 0x3C]);
        assert_eq!(as_blocks::<Mixed>(&bytes[..18]).len(), 0);
    }
}
