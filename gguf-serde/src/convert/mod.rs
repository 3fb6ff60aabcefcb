//! Converting Hugging Face checkpoints to GGUF as llama.cpp's `convert_hf_to_gguf.py` does
//! (cargo feature `convert`).
//!
//! - [`vocab`]: tokenizers (`tokenizer.model`, `tokenizer.json`, `tokenizer_config.json`, …) to the
//!   `tokenizer.ggml.*` and `tokenizer.chat_template*` keys.

pub mod vocab;
