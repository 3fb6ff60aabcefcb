use gguf_serde::GgufModel;

#[derive(GgufModel)]
enum Model<T> {
    Small(T),
}

fn main() {}
