//! llama-quantize's tensor order (`weight_name_comparer`): the order the plan's counters advance
//! in and the output lists its tensors in.

use super::c_num::leading_int;
use crate::container::{Gguf, Source, TensorInfo};
use crate::format::GgufStr;

/// `sscanf(name, "blk.%d.", &layer)`: the layer number after `blk.`, if any.
pub(super) fn blk_layer(name: &str) -> Option<i32> {
    // glibc stores the `long` it read into the `int`: truncation.
    name.strip_prefix("blk.").and_then(leading_int).map(|v| v as i32)
}

/// The name llama.cpp gives a tensor named `name` in a file: its bytes up to the first NUL. ggml's
/// `gguf_init_from_file` (`ggml/src/gguf.cpp`) names each tensor with `ggml_set_name`, which
/// copies the name as a C string into the tensor's `char name[GGML_MAX_NAME]`; llama.cpp's loader
/// and `llama-quantize` (`src/llama-quant.cpp`) then see, compare, match and write that name.
pub(crate) fn c_name(name: GgufStr<'_>) -> GgufStr<'_> {
    let bytes = name.as_bytes();
    match bytes.iter().position(|&b| b == 0) {
        Some(end) => GgufStr::from_bytes(&bytes[..end]),
        None => name,
    }
}

/// llama.cpp's `weight_name_comparer`: by layer number (`blk.N.`; -1 for none), then by name
/// (its bytes, as `std::string` compares; for UTF-8 names the order of `&str`); names as llama.cpp
/// holds them, up to their first NUL ([`c_name`]).
pub(crate) fn llama_order<'a>(a: impl Into<GgufStr<'a>>, b: impl Into<GgufStr<'a>>) -> std::cmp::Ordering {
    let (a, b): (GgufStr<'a>, GgufStr<'a>) = (c_name(a.into()), c_name(b.into()));
    // The layer number is ASCII: the lossy text of a name that is not UTF-8 has the same.
    let layer = |n: GgufStr<'_>| blk_layer(&n.to_string_lossy()).unwrap_or(-1);
    layer(a).cmp(&layer(b)).then_with(|| a.cmp(&b))
}

/// The tensors of `src` in llama-quantize's output order: by layer number (`blk.N.`, tensors
/// without one first), then by name (each name up to its first NUL byte, as llama.cpp holds it).
pub fn llama_tensor_order<'a, S: Source>(src: &'a Gguf<S>) -> Vec<TensorInfo<'a>> {
    let mut v: Vec<TensorInfo<'a>> = src.tensors().collect();
    v.sort_by(|a, b| llama_order(a.name, b.name));
    v
}

/// The tensors of `shards` (shard 0 first) in llama-quantize's order for `keep_split`, each with
/// its shard: without it, all of them in [`llama_order`] (by layer, then name); with it, shard by
/// shard, each shard's tensors by data offset (`std::sort` by `(idx, offs)` in
/// `llama_model_quantize_impl`).
pub(crate) fn ordered_tensors<'a, S: Source>(shards: &[&'a Gguf<S>], keep_split: bool) -> Vec<(usize, TensorInfo<'a>)> {
    let mut v: Vec<(usize, TensorInfo<'a>)> =
        shards.iter().enumerate().flat_map(|(s, f)| f.tensors().map(move |t| (s, t))).collect();
    if keep_split {
        v.sort_by_key(|(s, t)| (*s, t.data_offset));
    } else {
        v.sort_by(|a, b| llama_order(a.1.name, b.1.name));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_order_and_sscanf() {
        assert_eq!(blk_layer("blk.12.attn_q.weight"), Some(12));
        assert_eq!(blk_layer("blk.x"), None);
        assert_eq!(blk_layer("output.weight"), None);
        let mut v = vec!["blk.10.a", "output.weight", "blk.2.b", "blk.2.a", "token_embd.weight"];
        v.sort_by(|a, b| llama_order(*a, *b));
        assert_eq!(v, ["output.weight", "token_embd.weight", "blk.2.a", "blk.2.b", "blk.10.a"]);
    }
}
