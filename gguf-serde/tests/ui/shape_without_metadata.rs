use gguf_serde::GgufModel;

#[derive(GgufModel)]
struct Model<T> {
    #[gguf(name = "token_embd.weight", shape = "[vocab_size, 640]")]
    embd: T,
}

fn main() {}
