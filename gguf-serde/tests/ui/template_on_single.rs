use gguf_serde::GgufModel;

#[derive(GgufModel)]
struct Model<T> {
    #[gguf(name = "blk.{}.attn_q.weight")]
    attn_q: T,
}

fn main() {}
