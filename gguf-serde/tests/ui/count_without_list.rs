use gguf_serde::GgufModel;

#[derive(serde::Serialize, serde::Deserialize)]
struct Meta {
    block_count: u32,
}

#[derive(GgufModel)]
struct Model<T> {
    #[gguf(metadata)]
    meta: Meta,
    #[gguf(name = "blk.0.attn_q.weight", count = "block_count")]
    attn_q: T,
}

fn main() {}
