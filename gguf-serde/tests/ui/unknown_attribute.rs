use gguf_serde::GgufModel;

#[derive(GgufModel)]
struct Model<T> {
    #[gguf(nmae = "token_embd.weight")]
    embd: T,
    #[gguf(name = "output.weight", dtyp = "F32")]
    output: T,
}

fn main() {}
