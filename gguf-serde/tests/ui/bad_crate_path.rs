use gguf_serde::GgufModel;

#[derive(GgufModel)]
#[gguf(crate = "not a path")]
struct Model<T> {
    #[gguf(name = "w")]
    w: T,
}

fn main() {}
