use gguf_serde::GgufModel;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct Dims {
    #[serde(rename = "{arch}.embedding_length")]
    embd: u32,
}

#[derive(GgufModel)]
#[gguf(metadata = "Dims")]
struct Block<T> {
    #[gguf(metadata)]
    dims: Dims,
    #[gguf(name = "w", shape = "[embd]")]
    w: T,
}

fn main() {}
