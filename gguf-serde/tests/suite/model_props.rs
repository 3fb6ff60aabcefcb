//! Round trips of generated typed models (proptest): random numbers of blocks, optional tensors,
//! types (F32, F16, Q8_0) and shapes; written, read back as owned tensors and as views, equal to
//! what was generated, with the tensors in field order, and written again byte-identical.

use gguf_serde::{GgmlType, Gguf, GgufModel, Tensor, TensorView};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct GenMeta {
    #[serde(rename = "general.architecture")]
    arch: String,
    #[serde(rename = "{arch}.layers")]
    layers: u32,
    #[serde(rename = "{arch}.width")]
    width: u64,
}

#[derive(GgufModel, Debug, PartialEq)]
struct GenLayer<T> {
    #[gguf(name = "w", shape = "[_, 32]")]
    w: T,
    #[gguf(name = "b")]
    b: Option<T>,
}

#[derive(GgufModel, Debug, PartialEq)]
struct Gen<T> {
    #[gguf(metadata)]
    meta: GenMeta,
    #[gguf(name = "head", shape = "[width]")]
    head: T,
    #[gguf(name = "layer.{}", count = "layers")]
    layers: Vec<GenLayer<T>>,
    #[gguf(name = "tail")]
    tail: Option<T>,
}

fn tensor() -> impl Strategy<Value = Tensor> {
    (1u64..4, prop::sample::select(vec![GgmlType::F32, GgmlType::F16, GgmlType::Q8_0]), any::<u64>()).prop_map(
        |(rows, dtype, seed)| {
            let data: Vec<f32> =
                (0..rows * 32).map(|i| ((seed.wrapping_mul(i + 1) >> 40) as f32) / 1e5 - 80.0).collect();
            Tensor::from_f32("", &[rows, 32], &data).unwrap().quantize(dtype).unwrap()
        },
    )
}

fn model() -> impl Strategy<Value = Gen<Tensor>> {
    (
        prop::collection::vec((tensor(), prop::option::of(tensor())), 0..5),
        prop::option::of(tensor()),
        prop::sample::select(vec![32u64, 64]),
    )
        .prop_map(|(layers, tail, width)| Gen {
            meta: GenMeta { arch: "gen".into(), layers: layers.len() as u32, width },
            head: Tensor::from_f32("head", &[width], &vec![0.25; width as usize]).unwrap(),
            // Each tensor named as the model names it, as a read gives it back.
            layers: layers
                .into_iter()
                .enumerate()
                .map(|(i, (w, b))| GenLayer {
                    w: Tensor { name: format!("layer.{i}.w"), ..w },
                    b: b.map(|b| Tensor { name: format!("layer.{i}.b"), ..b }),
                })
                .collect(),
            tail: tail.map(|t| Tensor { name: "tail".into(), ..t }),
        })
}

/// The tensor names the model must have, in field order, worked out from the struct by hand.
fn expected_names(m: &Gen<Tensor>) -> Vec<String> {
    let mut names = vec!["head".to_owned()];
    for (i, l) in m.layers.iter().enumerate() {
        names.push(format!("layer.{i}.w"));
        if l.b.is_some() {
            names.push(format!("layer.{i}.b"));
        }
    }
    if m.tail.is_some() {
        names.push("tail".to_owned());
    }
    names
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn generated_models_round_trip(m in model()) {
        let bytes = m.to_vec().unwrap();
        let file = Gguf::from_slice(&bytes).unwrap();
        let names: Vec<&str> = file.tensors().map(|t| t.name.to_str().unwrap()).collect();
        prop_assert_eq!(names, expected_names(&m));
        prop_assert_eq!(file.get("gen.layers").and_then(|v| v.as_u64()), Some(m.layers.len() as u64));

        let owned = Gen::<Tensor>::read(&file).unwrap();
        prop_assert_eq!(&owned, &m);
        prop_assert_eq!(owned.to_vec().unwrap(), bytes.clone());

        let views = Gen::<TensorView>::read(&file).unwrap();
        for (l, g) in views.layers.iter().zip(&m.layers) {
            prop_assert_eq!(l.w.bytes, g.w.bytes.as_slice());
            prop_assert_eq!((l.w.dtype, l.w.shape), (g.w.dtype, g.w.shape));
        }
        prop_assert_eq!(views.to_vec().unwrap(), bytes);
    }
}
