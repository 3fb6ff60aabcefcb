use gguf_serde::GgufModel;

#[derive(GgufModel)]
struct Block<T> {
    #[gguf(name = "attn_q.weight")]
    attn_q: T,
}

#[derive(GgufModel)]
struct Model<T> {
    #[gguf(name = "blk")]
    blocks: Vec<Block<T>>,
}

fn main() {}
