use gguf_serde::GgufModel;

#[derive(GgufModel)]
struct Model<T> {
    #[gguf(name = "token_embd.weight")]
    embd: T,
    #[gguf(name = "token_embd.weight")]
    output: T,
}

fn main() {}
