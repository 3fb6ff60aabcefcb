use gguf_serde::GgufModel;

#[derive(serde::Serialize, serde::Deserialize)]
struct Meta {
    vocab_size: u32,
}

#[derive(GgufModel)]
struct Model<T> {
    #[gguf(metadata)]
    meta: Meta,
    #[gguf(name = "token_embd.weight", shape = "[vocab_size, embedding_length]")]
    embd: T,
}

fn main() {}
