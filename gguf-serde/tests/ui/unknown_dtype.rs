use gguf_serde::GgufModel;

#[derive(GgufModel)]
struct Model<T> {
    #[gguf(name = "output_norm.weight", dtype = "F32 | Q9_K")]
    norm: T,
}

fn main() {}
