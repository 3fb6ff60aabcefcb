//! The workspace's interoperability tests, one binary: comparisons with gguf-py (Python), with
//! llama.cpp's tools and on the downloaded models (`models/`). `tests/README.md` says what goes
//! where and how to run them. `codec.rs` and `small_gguf.rs` beside this folder are binaries of
//! their own.

mod chat_templates;
mod convert_refs;
mod convert_runs;
mod convert_safetensors;
mod corpus;
mod derive_gemma;
mod derive_llama;
mod derive_order;
mod gemma;
mod hf_config;
mod interop_gguf_py;
mod llama_run;
mod lora_adapters;
mod moe_imatrix;
mod quantize_llama;
mod remote_gemma;
mod resources_models;
mod serde_gemma;
mod serde_llama;
mod split_llama;
mod standard_keys;
mod vocab;
