use gguf_serde::GgufModel;

// The path is used: a crate path that does not exist is an error at the attribute's path.
#[derive(GgufModel)]
#[gguf(crate = "no_such_crate")]
struct Model<T> {
    #[gguf(name = "w")]
    w: T,
}

fn main() {}
