use gguf_serde::GgufModel;

struct Handle(u32);

#[derive(GgufModel)]
struct Model<T> {
    #[gguf(name = "w")]
    w: T,
    #[gguf(skip)]
    handle: Handle,
}

fn main() {}
