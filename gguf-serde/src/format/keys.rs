//! Well-known metadata keys that the container and the tools act on.
//!
//! Spec: ggml `docs/gguf.md`, "Standardized key-value pairs"; the split keys are
//! `llama-gguf-split`'s (llama.cpp `examples/gguf-split`).

/// Key of the data alignment in bytes (UINT32, a power of two; 32 when absent).
pub const GENERAL_ALIGNMENT: &str = "general.alignment";
/// Key of the model architecture (STRING), which `{arch}` in key names stands for.
pub const GENERAL_ARCHITECTURE: &str = "general.architecture";

/// Key of the 0-based shard number (UINT16).
pub const SPLIT_NO: &str = "split.no";
/// Key of the number of shards (UINT16).
pub const SPLIT_COUNT: &str = "split.count";
/// Key of the number of tensors in all shards (INT32).
pub const SPLIT_TENSORS_COUNT: &str = "split.tensors.count";

/// Whether `key` is one of the three split keys.
pub fn is_split_key(key: &str) -> bool {
    key == SPLIT_NO || key == SPLIT_COUNT || key == SPLIT_TENSORS_COUNT
}
