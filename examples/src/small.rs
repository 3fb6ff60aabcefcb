//! The spec's test vector `small.gguf`: version 3, `general.architecture = "llama"`,
//! `test.answer = 42` (u32), `test.note = "tensor-format-specs"`, and three tensors:
//!
//! | name | dtype | canonical shape | values |
//! |---|---|---|---|
//! | `w_f32` | F32 | [4, 64] | `sin(0.37·i)·(row + 1)` for flat index `i` |
//! | `w_q8_0` | Q8_0 | [4, 64] | the Q8_0 blocks of `w_f32` |
//! | `e_bf16` | BF16 | [6, 16] | `(i − 48) / 16`, exact in bf16 |
//!
//! 1,792 bytes. `cargo run -p gguf-examples --bin make-small-gguf` writes it to
//! `tests/data/small.gguf`; a test checks the checked-in file equals [`build`].

use gguf_serde::{codec, GgmlType, GgufWriter, Result};

/// `w_f32`'s values, row-major in the canonical shape [4, 64].
pub fn w_f32() -> Vec<f32> {
    (0..256).map(|i| (0.37 * i as f32).sin() * (i / 64 + 1) as f32).collect()
}

/// `e_bf16`'s values as f32, row-major in the canonical shape [6, 16].
pub fn e_bf16() -> Vec<f32> {
    (0..96).map(|i| (i as f32 - 48.0) / 16.0).collect()
}

/// The bytes of `small.gguf`.
///
/// # Errors
/// None in practice; the writer's and codecs' errors are passed on.
pub fn build() -> Result<Vec<u8>> {
    let w_f32 = w_f32();
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama")?;
    w.add_kv("test.answer", 42u32)?;
    w.add_kv("test.note", "tensor-format-specs")?;
    w.add_tensor("w_f32", GgmlType::F32, &[4, 64])?;
    w.add_tensor("w_q8_0", GgmlType::Q8_0, &[4, 64])?;
    w.add_tensor("e_bf16", GgmlType::BF16, &[6, 16])?;
    w.write_tensor_data(&w_f32.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())?;
    w.write_tensor_data(&codec::quantize_to_vec(GgmlType::Q8_0, &w_f32)?)?;
    w.write_tensor_data(&codec::quantize_to_vec(GgmlType::BF16, &e_bf16())?)?;
    w.finish()
}
