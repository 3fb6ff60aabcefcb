use gguf_serde::GgufModel;

#[derive(GgufModel)]
#[gguf(metadata = "1 + 2")]
struct Block<T> {
    #[gguf(name = "w")]
    w: T,
}

fn main() {}
