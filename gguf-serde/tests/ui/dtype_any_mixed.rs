use gguf_serde::GgufModel;

#[derive(GgufModel)]
struct Model<T> {
    #[gguf(name = "w", dtype = "any | F32")]
    w: T,
}

fn main() {}
