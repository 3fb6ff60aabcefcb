use gguf_serde::GgufModel;

#[derive(serde::Serialize, serde::Deserialize)]
struct Meta {
    block_count: u32,
}

#[derive(GgufModel)]
struct Model<T> {
    #[gguf(metadata)]
    meta: Meta,
    #[gguf(metadata)]
    again: Meta,
    #[gguf(name = "w")]
    w: T,
}

fn main() {}
