use gguf_serde::{GgufModel, TensorView};

#[derive(GgufModel)]
struct Model<'a> {
    #[gguf(name = "token_embd.weight")]
    embd: TensorView<'a>,
    #[gguf(name = "block_count")]
    block_count: u32,
}

fn main() {}
