use gguf_serde::GgufModel;

#[derive(GgufModel)]
struct Model<T> {
    #[gguf(name = "w")]
    w: T,
    #[gguf(skip, name = "cache")]
    cache: Vec<u8>,
}

fn main() {}
