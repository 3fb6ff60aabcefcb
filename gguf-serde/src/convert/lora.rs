//! PEFT LoRA adapters to GGUF, as llama.cpp's `convert_lora_to_gguf.py` converts them.
//!
//! An adapter folder holds `adapter_config.json` (peft's `LoraConfig`) and
//! `adapter_model.safetensors`; the base model's folder gives `config.json` (its weights are not
//! read). The reference subclasses the base architecture's converter and feeds it each adapted
//! weight as a pair `(A, B)` standing for the product `B @ A`; what follows is what it writes,
//! and what this module writes, byte for byte:
//!
//! - **Tensors**: for a Hugging Face weight `W` (`[out, in]`) adapted by `lora_A` (`[r, in]`) and
//!   `lora_B` (`[out, r]`), the GGUF tensors `{name}.lora_a` (`[r, in]`, canonical shape) and
//!   `{name}.lora_b` (`[out, r]`), `{name}` being the base architecture's GGUF name of `W`
//!   ([`Architecture::map_tensor`]: `blk.0.attn_q.weight.lora_a`). The base's row transforms
//!   act on the output rows of `B @ A`, so they apply to `lora_b` alone: Llama's Q/K permutation
//!   ([`Transform::Permute`]), a fused tensor's split along its rows ([`Mapped::Split`] with
//!   [`Transform::Slice`] on dimension 0: each part has the whole `lora_a`). Experts the base
//!   stacks into one tensor (Mixtral's `block_sparse_moe.experts.X.w1`, … →
//!   `blk.N.ffn_gate_exps.weight`) stack their pairs: `lora_a` `[n_expert, r, in]`, `lora_b`
//!   `[n_expert, out, r]`, planned where the base plans the stack (after a layer's last expert
//!   weight, `w1`, `w2`, `w3` in that order), every expert of the layer adapted. Adapted embeddings
//!   (`lora_embedding_A` `[r, vocab]`, `lora_embedding_B` `[dim, r]`) are written with `lora_a`
//!   transposed (`token_embd.weight.lora_a` `[vocab, r]`, `lora_b` `[dim, r]`), as llama.cpp
//!   reads them.
//! - **Order**: the adapter's tensors in name order (as the `safetensors` binding loads a file
//!   peft wrote); norms an adapter carries (mergekit's) first, as the reference yields them while
//!   reading, then each adapted weight in the order its first tensor came, `lora_a` before
//!   `lora_b`. peft's copies of adapted weights (`*.base_layer.weight`, which peft saves with
//!   `save_embedding_layers` when `embed_tokens` or `lm_head` is a target) are left out, as the
//!   reference leaves them out ([`Adapter::base_layer_copies`] lists them; the CLI names each):
//!   llama.cpp applies the pair to the base model's own weight.
//! - **Types**: the converter's rules ([`output_type`]): `lora_a` and
//!   `lora_b` take the output type, Q8_0 falling back to F16 where a row (`in` for `lora_a`,
//!   the rank for `lora_b`) is not whole blocks of 32; a BF16 adapter goes through F32, and an
//!   adapter whose `A` and `B` differ in type through F32.
//! - **Keys**, in the reference's order: `general.architecture` (the base's), `general.type =
//!   "adapter"`, `adapter.type = "lora"`, the `general.*` keys of the adapter folder (its model
//!   card `README.md`, which peft writes, and folder name; see [`general`]),
//!   `adapter.lora.alpha` (f32, `lora_alpha`), `adapter.alora.invocation_tokens` (u32 array)
//!   when `adapter_config.json` has `alora_invocation_tokens`, `general.quantization_version`.
//!   No hyper-parameters and no tokenizer: llama.cpp takes them from the base model.
//! - **Parameter count**: negative, as gguf-py counts an adapter (`B @ A`'s elements for each
//!   pair), so no size label is computed and the default file name ends in `-LoRA`
//!   ([`default_file_name`]).
//! - **Output type** `auto` is refused ([`AdapterError::AutoOutType`]): the reference fails on it.
//!   Its default is F32.
//!
//! Refused before anything is written, naming what and where ([`AdapterError`]): a folder
//! without `adapter_config.json` or `adapter_model.safetensors`, a missing or non-numeric
//! `lora_alpha`, a peft type other than `LORA` or LoRA variants whose scale llama.cpp does not
//! apply (DoRA, rsLoRA, `alpha_pattern`, `fan_in_fan_out`, an `invocation_string` without its
//! tokens), a base architecture not converted, an adapter tensor that is neither `lora_A` nor
//! `lora_B` (peft's `modules_to_save` copies, biases, DoRA magnitudes), a weight the base does not
//! have, an adapted `lm_head` of a base whose GGUF has no output tensor (the reference refuses it
//! where the architecture writes none, as Gemma 2's; where the base checkpoint has no
//! `lm_head.weight`, its output being the tied embedding, the reference converts it and llama.cpp
//! refuses to load the result: [`AdapterError::TiedOutput`]), peft's copy of an adapted weight
//! whose shape is not the base's (a resized vocabulary, [`AdapterError::ResizedBaseWeight`]; the
//! reference converts it and llama.cpp refuses the result), a pair with one half missing or
//! shapes that do not multiply, experts of a stacked tensor left without their pairs (the
//! reference's "Unprocessed experts"), and targets it cannot write as pairs (tensors
//! concatenated, value transforms; the base's Reshape, Transpose and Stride, as DeepSeek's
//! `kv_b_proj` split and gpt-oss's experts use).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::arch::{self, ArchContext, Architecture, Join, Mapped, Transform};
use super::checkpoint::{python_path_str, read_json};
use super::general::{self, ParamCounts};
use super::planning::{JoinedPart, Plan, PlannedTensor, TensorData};
use super::{naming_convention, output_type, Checkpoint, ConvertError, ConvertOptions, HfConfig, Kvs, OutType};
use crate::codec;
use crate::{Endian, Value};

type Result<T, E = ConvertError> = std::result::Result<T, E>;

/// The adapter's weights file.
pub const ADAPTER_WEIGHTS: &str = "adapter_model.safetensors";
/// The adapter's configuration file.
pub const ADAPTER_CONFIG: &str = "adapter_config.json";

/// Why an adapter is not converted ([`ConvertError::Adapter`]).
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum AdapterError {
    /// The folder has no `adapter_config.json` or no `adapter_model.safetensors`.
    #[error("{}: not a PEFT adapter folder (no {file})", crate::format::shown_path(dir))]
    NotAnAdapter {
        /// The folder.
        dir: PathBuf,
        /// The file it lacks.
        file: &'static str,
    },
    /// The adapter's weights are a pickled `adapter_model.bin`, which is not read.
    #[error("{}: adapter_model.bin (a pickled torch file) is not read; save the adapter as safetensors (peft's save_pretrained does by default)", crate::format::shown_path(dir))]
    PickledWeights {
        /// The folder.
        dir: PathBuf,
    },
    /// A field of `adapter_config.json` the conversion needs is missing or of the wrong type.
    #[error("adapter_config.json: `{field}` {problem}")]
    ConfigField {
        /// The field (`lora_alpha`).
        field: &'static str,
        /// What is wrong: `is missing`, `is "x", not a number`.
        problem: String,
    },
    /// A peft method or option llama.cpp does not apply as a LoRA adapter.
    #[error("adapter_config.json: {what} is not converted: {why}")]
    UnsupportedPeft {
        /// The method or option (`peft_type "LOHA"`, `use_dora (DoRA)`).
        what: String,
        /// Why.
        why: &'static str,
    },
    /// The base model's architecture is not one the converter converts.
    #[error("{}: the base model's architecture {class:?} is not converted (known: {known})", crate::format::shown_path(base), known = arch::BUILTIN_CLASSES.join(", "))]
    BaseArchitecture {
        /// The base model folder.
        base: PathBuf,
        /// `architectures[0]` of its `config.json`.
        class: String,
    },
    /// An adapter tensor that is neither half of a LoRA pair (nor a norm, nor peft's copy of an
    /// adapted embedding).
    #[error("tensor {name}: not a lora_A or lora_B tensor{hint}")]
    UnexpectedTensor {
        /// The adapter tensor.
        name: String,
        /// More about it: peft's `modules_to_save`, embeddings, trainable tokens, DoRA's magnitude.
        hint: &'static str,
    },
    /// An adapted weight the base architecture does not have.
    #[error(
        "tensor {name}: the adapter targets {base_name}, which is not a tensor of the base model's {arch} architecture"
    )]
    TargetNotInBase {
        /// The adapter tensor.
        name: String,
        /// The base model's tensor it adapts.
        base_name: String,
        /// The GGUF architecture.
        arch: String,
    },
    /// `lm_head` is adapted but the base model's GGUF has no output tensor: its architecture
    /// writes none (Gemma 2's output is its tied token embedding; the reference raises the same),
    /// or the base checkpoint has no `lm_head.weight` (`tie_word_embeddings`: Qwen2, Llama 3.2,
    /// ...; when BASE_DIR has no weights, `tie_word_embeddings` of its `config.json` decides).
    /// In the second case `convert_lora_to_gguf.py` writes `output.weight.lora_a`/`lora_b`, which
    /// llama.cpp refuses to load ("LoRA tensor 'output.weight' does not exist in base model"):
    /// refused here before anything is written, unlike the reference.
    #[error("tensor {name}: the adapter targets lm_head, which the base model's GGUF does not have (its output is the tied token embedding), so llama.cpp would not load the adapter; merge the adapter into the base model instead")]
    TiedOutput {
        /// The adapter tensor.
        name: String,
    },
    /// peft's copy of an adapted weight (`*.base_layer.weight`, saved with
    /// `save_embedding_layers`) whose shape differs from the base model's weight: the fine-tune
    /// resized it (new tokens). The reference leaves the copy out and writes an adapter whose
    /// pair does not fit the base, which llama.cpp refuses ("has incorrect shape").
    #[error("tensor {name}: peft's copy of {base_name} has shape {shape:?}, the base model's has {base_shape:?} (the fine-tune resized it, e.g. added tokens), so the adapter does not fit the base model; merge the adapter into the base model instead")]
    ResizedBaseWeight {
        /// The adapter tensor (`...embed_tokens.base_layer.weight`).
        name: String,
        /// The base model's weight (`model.embed_tokens.weight`).
        base_name: String,
        /// The copy's shape, outermost first.
        shape: Vec<u64>,
        /// The base weight's shape, outermost first.
        base_shape: Vec<u64>,
    },
    /// A LoRA pair whose shapes do not fit the base model's weight (known from BASE_DIR's
    /// safetensors headers): llama.cpp's loader (`llama_adapter_lora_init`, `src/llama-adapter.cpp`)
    /// wants `lora_A`'s columns (its `ne[0]`) equal to the weight's, `lora_B`'s rows (its `ne[1]`)
    /// equal to the weight's, and `lora_A`'s rows equal to `lora_B`'s columns (the rank), and
    /// refuses the adapter otherwise ("has incorrect shape"); `convert_lora_to_gguf.py` writes it
    /// (`lora_A`/`lora_B` swapped, an adapter of another base model). Refused before anything is
    /// written. Not checked for embeddings and expert stacks.
    #[error("{base_name}: the LoRA pair does not fit the base model's weight of shape {base_shape:?}: lora_A is {a_shape:?}, lora_B is {b_shape:?} (llama.cpp wants lora_A [rank, {in_}] and lora_B [{out}, rank]; lora_A and lora_B swapped, or an adapter of another base model?)", in_ = base_shape.get(1).copied().unwrap_or(0), out = base_shape.first().copied().unwrap_or(0))]
    PairShape {
        /// The adapted weight (Hugging Face name).
        base_name: String,
        /// `lora_A`'s shape, outermost first.
        a_shape: Vec<u64>,
        /// `lora_B`'s shape, outermost first.
        b_shape: Vec<u64>,
        /// The base model's weight's shape, outermost first.
        base_shape: Vec<u64>,
    },
    /// `adapter_config.json` is JSON but not an object (`[]`, a number, ...).
    #[error("adapter_config.json is not a JSON object")]
    NotAnObject,
    /// One half of a LoRA pair is missing.
    #[error("{base_name}: the adapter has {present} but not {missing}")]
    HalfPair {
        /// The adapted weight.
        base_name: String,
        /// The tensor there is.
        present: String,
        /// The half that is missing (`lora_B`).
        missing: &'static str,
    },
    /// A LoRA pair whose target the reference cannot write as a pair.
    #[error("{base_name}: {reason}")]
    UnsupportedTarget {
        /// The adapted weight.
        base_name: String,
        /// Why.
        reason: String,
    },
    /// `--outtype auto`, on which the reference fails.
    #[error("output type auto is not taken for an adapter (convert_lora_to_gguf.py fails on it); give f32 (the default), f16, bf16 or q8_0")]
    AutoOutType,
}

fn err(e: AdapterError) -> ConvertError {
    ConvertError::Adapter(e)
}

/// What the conversion reads of `adapter_config.json`.
#[derive(Clone, Debug, PartialEq)]
pub struct LoraConfig {
    /// `lora_alpha`, written as `adapter.lora.alpha` (llama.cpp scales `B @ A` by alpha / rank).
    pub alpha: f64,
    /// `alora_invocation_tokens` (activated LoRA), written as `adapter.alora.invocation_tokens`.
    pub invocation_tokens: Option<Vec<u32>>,
}

impl LoraConfig {
    /// Reads `adapter_config.json`'s JSON and checks that llama.cpp applies the adapter as peft
    /// does.
    ///
    /// # Errors
    /// [`AdapterError::NotAnObject`] for JSON that is not an object;
    /// [`AdapterError::ConfigField`] for a missing or non-numeric `lora_alpha`, or
    /// `alora_invocation_tokens` that are not token ids; [`AdapterError::UnsupportedPeft`] for a
    /// `peft_type` other than `LORA`, `use_dora`, `use_rslora`, a non-empty `alpha_pattern`,
    /// `fan_in_fan_out`, or an `invocation_string` without `alora_invocation_tokens`.
    pub fn from_json(json: &Json) -> Result<LoraConfig, AdapterError> {
        let field = |f: &'static str, problem: String| AdapterError::ConfigField { field: f, problem };
        let Json::Object(m) = json else {
            return Err(AdapterError::NotAnObject);
        };
        let truthy = |k: &str| m.get(k).is_some_and(|v| !matches!(v, Json::Null | Json::Bool(false)));
        let unsupported = |what: String, why| AdapterError::UnsupportedPeft { what, why };
        if let Some(t) = m.get("peft_type").filter(|v| !v.is_null()) {
            if t.as_str() != Some("LORA") {
                return Err(unsupported(
                    format!("peft_type {t}"),
                    "only LoRA adapters (peft_type \"LORA\") are converted, as the reference converts them",
                ));
            }
        }
        if truthy("use_dora") {
            return Err(unsupported(
                "use_dora (DoRA)".into(),
                "llama.cpp applies no DoRA magnitude vector; merge the adapter into the model instead",
            ));
        }
        if truthy("use_rslora") {
            return Err(unsupported(
                "use_rslora (rank-stabilised LoRA)".into(),
                "llama.cpp scales by lora_alpha / r, not lora_alpha / sqrt(r)",
            ));
        }
        if m.get("alpha_pattern").and_then(Json::as_object).is_some_and(|p| !p.is_empty()) {
            return Err(unsupported("alpha_pattern".into(), "llama.cpp takes one lora_alpha for the whole adapter"));
        }
        if truthy("fan_in_fan_out") {
            return Err(unsupported(
                "fan_in_fan_out".into(),
                "its lora_A/lora_B are stored transposed (GPT-2's Conv1D layers)",
            ));
        }
        let alpha = match m.get("lora_alpha") {
            None | Some(Json::Null) => return Err(field("lora_alpha", "is missing".into())),
            Some(v) => v.as_f64().ok_or_else(|| field("lora_alpha", format!("is {v}, not a number")))?,
        };
        let invocation_tokens = match m.get("alora_invocation_tokens") {
            None | Some(Json::Null) => None,
            Some(Json::Array(a)) if a.is_empty() => None,
            Some(Json::Array(a)) => Some(
                a.iter()
                    .map(|t| t.as_u64().and_then(|n| u32::try_from(n).ok()))
                    .collect::<Option<Vec<u32>>>()
                    .ok_or_else(|| field("alora_invocation_tokens", "are not all token ids (u32)".into()))?,
            ),
            Some(v) => return Err(field("alora_invocation_tokens", format!("is {v}, not a list of token ids"))),
        };
        let string = m.get("invocation_string").and_then(Json::as_str).filter(|s| !s.is_empty());
        if string.is_some() && invocation_tokens.is_none() {
            return Err(unsupported(
                "invocation_string without alora_invocation_tokens".into(),
                "the reference tokenizes it with the base model's tokenizer from the Hub; give the token ids as alora_invocation_tokens",
            ));
        }
        Ok(LoraConfig { alpha, invocation_tokens })
    }
}

/// An adapter folder and its base model folder, opened: the adapter's weights memory-mapped, with
/// the base's `config.json` (as transformers loads it, [`HfConfig`]).
#[derive(Debug)]
pub struct Adapter {
    /// The adapter's weights, with the base's configuration ([`Checkpoint::from_files`]).
    pub checkpoint: Checkpoint,
    /// The base model folder.
    pub base_dir: PathBuf,
    /// `adapter_config.json`.
    pub config: LoraConfig,
    /// The base checkpoint's tensors (name as the converter filters it, shape outermost first),
    /// from the safetensors headers of BASE_DIR; `None` when BASE_DIR has no weights (then only
    /// its `config.json` is read).
    pub base_tensors: Option<HashMap<String, Vec<u64>>>,
}

/// Whether `dir` is an adapter folder (has `adapter_config.json`).
pub fn is_adapter(dir: &Path) -> bool {
    dir.join(ADAPTER_CONFIG).is_file()
}

impl Adapter {
    /// Opens the adapter in `dir` for the base model in `base_dir`.
    ///
    /// # Errors
    /// [`AdapterError::NotAnAdapter`], [`AdapterError::PickledWeights`], as
    /// [`LoraConfig::from_json`]; [`ConvertError::Io`] and [`ConvertError::Json`] for the base's
    /// `config.json`, [`ConvertError::Config`] when it is not an object; as [`Checkpoint::open`]
    /// and [`Checkpoint::tensors`] for the base's weights when BASE_DIR has any
    /// (`model.safetensors` or `model.safetensors.index.json`).
    pub fn open(dir: impl AsRef<Path>, base_dir: impl AsRef<Path>) -> Result<Adapter> {
        let (dir, base_dir) = (dir.as_ref(), base_dir.as_ref());
        if !dir.join(ADAPTER_CONFIG).is_file() {
            return Err(err(AdapterError::NotAnAdapter { dir: dir.into(), file: ADAPTER_CONFIG }));
        }
        if !dir.join(ADAPTER_WEIGHTS).is_file() {
            if dir.join("adapter_model.bin").is_file() {
                return Err(err(AdapterError::PickledWeights { dir: dir.into() }));
            }
            return Err(err(AdapterError::NotAnAdapter { dir: dir.into(), file: ADAPTER_WEIGHTS }));
        }
        let config = LoraConfig::from_json(&read_json(&dir.join(ADAPTER_CONFIG))?).map_err(err)?;
        let base_config = HfConfig::load(read_json(&base_dir.join("config.json"))?, &python_path_str(base_dir))?;
        let checkpoint = Checkpoint::from_files(dir, base_config, &[ADAPTER_WEIGHTS])?;
        let base_tensors = if base_dir.join("model.safetensors").is_file()
            || base_dir.join("model.safetensors.index.json").is_file()
        {
            let base = Checkpoint::open(base_dir)?;
            let names = base.tensors()?.into_iter().filter_map(|t| filter_name(&t.name).map(|n| (n, t.shape)));
            Some(names.collect())
        } else {
            None
        };
        Ok(Adapter { checkpoint, base_dir: base_dir.into(), config, base_tensors })
    }

    /// Whether the base model's GGUF has no output tensor of its own because the base
    /// checkpoint has no `lm_head.weight` (its output is the tied token embedding); without
    /// base weights, `tie_word_embeddings` of the base's `config.json` (false when absent).
    pub fn base_output_tied(&self) -> bool {
        match &self.base_tensors {
            Some(t) => !t.contains_key("lm_head.weight"),
            None => {
                let tied = self.checkpoint.config.get("tie_word_embeddings").and_then(Json::as_bool);
                tied.unwrap_or(false)
            }
        }
    }

    /// peft's copies of adapted weights in the adapter (`*.base_layer.weight`, saved with
    /// `save_embedding_layers`, e.g. when `embed_tokens` or `lm_head` is a target), which the
    /// conversion leaves out as the reference does (llama.cpp applies the pair to the base
    /// model's own weight), in the adapter's order.
    ///
    /// # Errors
    /// As [`Checkpoint::tensors`].
    pub fn base_layer_copies(&self) -> Result<Vec<String>> {
        let tensors = self.checkpoint.tensors()?;
        Ok(tensors.into_iter().map(|t| t.name).filter(|n| n.contains(".base_layer.weight")).collect())
    }
}

/// The reference's `get_base_tensor_name`: the adapted weight's name in the base model.
fn base_tensor_name(name: &str) -> String {
    name.replace("base_model.model.", "")
        .replace(".lora_A.weight", ".weight")
        .replace(".lora_B.weight", ".weight")
        .replace(".lora_embedding_A", ".weight")
        .replace(".lora_embedding_B", ".weight")
}

/// `TextModel.filter_tensors` and `ModelBase.filter_tensors`: `None` for the multimodal tensors
/// it drops, else the name with `language_model.` removed.
fn filter_name(name: &str) -> Option<String> {
    const PREFIXES: [&str; 10] = [
        "mlp",
        "vit.",
        "vpm.",
        "siglip2.",
        "conformer.",
        "merger.",
        "resampler.",
        "sound_encoder.",
        "sound_projection.",
        "speech_embeddings.",
    ];
    const PARTS: [&str; 17] = [
        "visual.",
        "vision.",
        "audio.",
        "talker.",
        "vision_",
        "audio_",
        "token2wav.",
        "code2wav.",
        "projector.",
        "pre_mm_projector_norm",
        "image_newline",
        "view_seperator",
        "patch_embed",
        "patch_embedding",
        "patch_merger.",
        "patch_merge_mlp.",
        "model.connector.",
    ];
    if PREFIXES.iter().any(|p| name.starts_with(p)) || PARTS.iter().any(|p| name.contains(p)) {
        return None;
    }
    let name = if name.ends_with("e_score_correction_bias") {
        name.replace("e_score_correction_bias", "e_score_correction.bias")
    } else {
        name.to_owned()
    };
    Some(name.replace("language_model.", ""))
}

/// One adapted weight: its two halves, as they come.
#[derive(Default)]
struct Pair<'a> {
    a: Option<super::SourceTensor<'a>>,
    b: Option<super::SourceTensor<'a>>,
    embedding: bool,
}

/// Plans the conversion of `adapter` (see the [module docs](self)); written by
/// [`write_plan`](super::write_plan). `opts.outtype` must not be [`OutType::Auto`];
/// `opts.model_card` is the adapter's `README.md` front matter, `opts.name` and
/// `opts.metadata_override` act as for a model; `opts.vocab` is not used.
///
/// # Errors
/// [`ConvertError::Adapter`] (see [`AdapterError`]); [`ConvertError::BadShape`] for a pair
/// whose shapes do not multiply; as [`Checkpoint::tensors`], the base architecture's
/// [`Architecture::check`] and [`Architecture::map_tensor`], and the general keys.
pub fn plan_adapter<'a>(adapter: &'a Adapter, opts: &ConvertOptions<'_>) -> Result<Plan<'a>> {
    let ckpt = &adapter.checkpoint;
    let config = &ckpt.config;
    let class = config.hf_architecture().unwrap_or("").to_owned();
    let arch = arch::builtin(&class)
        .ok_or_else(|| err(AdapterError::BaseArchitecture { base: adapter.base_dir.clone(), class }))?;
    let outtype = match opts.outtype {
        OutType::Auto => return Err(err(AdapterError::AutoOutType)),
        t => t,
    };
    let block_count = config.need_u32(&["n_layers", "num_hidden_layers", "n_layer", "num_layers"])?;
    let cx = ArchContext { dir: &adapter.base_dir, config, block_count };
    arch.check(&cx)?;

    let mut tensors: Vec<PlannedTensor<'a>> = Vec::new();
    let mut order: Vec<String> = Vec::new();
    let mut pairs: HashMap<String, Pair<'a>> = HashMap::new();
    let mut stacks = Stacks::default();
    for src in ckpt.tensors()? {
        let Some(base_name) = filter_name(&base_tensor_name(&src.name)) else { continue };
        let n = &src.name;
        let is_a = n.contains(".lora_A.weight") || n.contains(".lora_embedding_A");
        let is_b = n.contains(".lora_B.weight") || n.contains(".lora_embedding_B");
        if !is_a && !is_b {
            if n.contains(".base_layer.weight") {
                // peft's copy of the adapted weight: left out, as the reference leaves it out,
                // unless it cannot be the base's weight (a resized vocabulary)
                let base_weight = base_name.replace(".base_layer.weight", ".weight");
                let base_shape = adapter.base_tensors.as_ref().and_then(|t| t.get(&base_weight));
                if let Some(base_shape) = base_shape.filter(|s| **s != src.shape) {
                    return Err(err(AdapterError::ResizedBaseWeight {
                        name: src.name,
                        base_name: base_weight,
                        shape: src.shape,
                        base_shape: base_shape.clone(),
                    }));
                }
                continue;
            }
            if n.contains("_layernorm") || n.contains(".norm") {
                // mergekit's norms: the base's tensor, converted as the base converts it
                plan_plain(arch, &cx, src, &base_name, outtype, &mut tensors)?;
                continue;
            }
            let hint = if n.contains("lora_magnitude_vector") {
                " (a DoRA magnitude vector)"
            } else if n.contains("modules_to_save")
                || n.ends_with("embed_tokens.weight")
                || n.ends_with("lm_head.weight")
            {
                " (a whole weight saved with the adapter, as peft's modules_to_save or new tokens save it: merge the adapter instead)"
            } else if n.contains("trainable_tokens_") {
                " (peft's trainable tokens, trainable_token_indices: new values for some rows of the embedding, which a GGUF adapter cannot hold: merge the adapter instead)"
            } else if n.ends_with(".bias") {
                " (a LoRA bias)"
            } else {
                ""
            };
            return Err(err(AdapterError::UnexpectedTensor { name: src.name, hint }));
        }
        if base_name == "lm_head.weight" && adapter.base_output_tied() {
            return Err(err(AdapterError::TiedOutput { name: src.name }));
        }
        let embedding = n.contains(".lora_embedding_");
        let pair = pairs.entry(base_name.clone()).or_insert_with(|| {
            order.push(base_name.clone());
            Pair::default()
        });
        pair.embedding |= embedding;
        if is_a {
            pair.a = Some(src);
        } else {
            pair.b = Some(src);
        }
    }
    for base_name in order {
        let Some(pair) = pairs.remove(&base_name) else { continue };
        let (a, b) = match (pair.a, pair.b) {
            (Some(a), Some(b)) => (a, b),
            (Some(a), None) => {
                return Err(err(AdapterError::HalfPair { base_name, present: a.name, missing: "lora_B" }))
            }
            (None, Some(b)) => {
                return Err(err(AdapterError::HalfPair { base_name, present: b.name, missing: "lora_A" }))
            }
            (None, None) => continue,
        };
        let base_shape = adapter.base_tensors.as_ref().and_then(|t| t.get(&base_name));
        if let (Some(w), false) = (base_shape, pair.embedding) {
            let fits = |a: &[u64], b: &[u64]| {
                a.len() != 2 || b.len() != 2 || w.len() != 2 || (a[1] == w[1] && b[0] == w[0] && a[0] == b[1])
            };
            if !fits(&a.shape, &b.shape) {
                return Err(err(AdapterError::PairShape {
                    base_name,
                    a_shape: a.shape,
                    b_shape: b.shape,
                    base_shape: w.clone(),
                }));
            }
        }
        plan_pair(arch, &cx, a, b, pair.embedding, &base_name, outtype, &mut tensors, &mut stacks)?;
    }
    stacks.check_done()?;
    let mut seen = std::collections::HashSet::new();
    for t in &tensors {
        if !seen.insert(t.name.as_str()) {
            return Err(ConvertError::Layout(format!("two adapter tensors map to {}", t.name)));
        }
    }

    let params = lora_param_counts(&tensors);
    let mut kvs = Kvs::default();
    kvs.set("general.architecture", Value::String(arch.name().into()));
    kvs.set("general.type", Value::String("adapter".into()));
    kvs.set("adapter.type", Value::String("lora".into()));
    let config_json = match read_json(&ckpt.dir.join("config.json")) {
        Ok(j) => j,
        Err(_) => Json::Object(Default::default()),
    };
    let mut keys =
        general::general_kv(&ckpt.dir, &config_json, &params, opts.model_card, None, opts.metadata_override)?;
    if let Some(n) = opts.name {
        keys.set_name(n);
    }
    let name_parts = keys.name_parts();
    kvs.extend(keys.into_keys().into_iter().filter(|(k, _)| k != "general.type"));
    kvs.set("adapter.lora.alpha", Value::F32(adapter.config.alpha as f32));
    if let Some(tokens) = &adapter.config.invocation_tokens {
        kvs.set("adapter.alora.invocation_tokens", Value::Array(crate::Array::U32(tokens.clone())));
    }
    kvs.set("general.quantization_version", Value::U32(2));
    Ok(Plan { arch: arch.name(), outtype, kvs, tensors, params, name_parts, checkpoint: ckpt })
}

/// A tensor of the adapter that is a tensor of the base (a norm): planned as the base plans it.
fn plan_plain<'a>(
    arch: &dyn Architecture,
    cx: &ArchContext<'_>,
    src: super::SourceTensor<'a>,
    base_name: &str,
    outtype: OutType,
    tensors: &mut Vec<PlannedTensor<'a>>,
) -> Result<()> {
    match arch.map_tensor(base_name, &src.shape, cx)? {
        Mapped::To { name, transforms } => {
            let (shape, _) = super::rows::plan_rows(&src.name, &src.shape, &transforms)?;
            let dtype = output_type(&name, &shape, outtype, arch.force_type(base_name, &name, shape.len()));
            tensors.push(PlannedTensor { name, shape, dtype, data: TensorData::Source(src), transforms });
            Ok(())
        }
        Mapped::Skip => Ok(()),
        _ => Err(err(AdapterError::TargetNotInBase {
            name: src.name,
            base_name: base_name.to_owned(),
            arch: arch.name().to_owned(),
        })),
    }
}

/// Plans `{name}.lora_a` and `{name}.lora_b` of one adapted weight.
#[allow(clippy::too_many_arguments)] // the pair and what it is planned with
fn plan_pair<'a>(
    arch: &dyn Architecture,
    cx: &ArchContext<'_>,
    a: super::SourceTensor<'a>,
    b: super::SourceTensor<'a>,
    embedding: bool,
    base_name: &str,
    outtype: OutType,
    tensors: &mut Vec<PlannedTensor<'a>>,
    stacks: &mut Stacks<'a>,
) -> Result<()> {
    let bad = |reason: String| ConvertError::BadShape { name: b.name.clone(), reason };
    if a.shape.len() != 2 || b.shape.len() != 2 || a.shape[0] != b.shape[1] {
        return Err(bad(format!(
            "lora_B {:?} and lora_A {:?} ({}) are not the factors of one matrix (B: [out, r], A: [r, in])",
            b.shape, a.shape, a.name
        )));
    }
    // The shape of B @ A, as the reference's pair reports it.
    let full = [b.shape[0], a.shape[1]];
    let unsupported = |reason: String| err(AdapterError::UnsupportedTarget { base_name: base_name.to_owned(), reason });
    let targets = match arch.map_tensor(base_name, &full, cx)? {
        Mapped::To { name, transforms } => vec![(name, transforms)],
        Mapped::Split(targets) => targets.into_iter().map(|t| (t.name, t.transforms)).collect(),
        Mapped::Skip if base_name == "lm_head.weight" => {
            return Err(err(AdapterError::TiedOutput { name: b.name.clone() }))
        }
        Mapped::Skip => return Ok(()),
        Mapped::Unknown => {
            return Err(err(AdapterError::TargetNotInBase {
                name: a.name.clone(),
                base_name: base_name.to_owned(),
                arch: arch.name().to_owned(),
            }))
        }
        Mapped::Part { name, index, count, join: Join::Stack, transforms, batch } if transforms.is_empty() => {
            let typed =
                |n: &str, shape: &[u64]| output_type(n, shape, outtype, arch.force_type(base_name, n, shape.len()));
            for t in stacks.add(name, index, count, batch, a, b, base_name)? {
                let a_name = format!("{}.lora_a", t.name);
                let b_name = format!("{}.lora_b", t.name);
                for (n, parts) in [(a_name, t.a), (b_name, t.b)] {
                    let mut shape = vec![parts.len() as u64];
                    shape.extend_from_slice(&parts[0].shape);
                    let parts = parts
                        .into_iter()
                        .map(|p| JoinedPart { shape: p.shape.clone(), source: p, transforms: Vec::new() })
                        .collect();
                    tensors.push(PlannedTensor {
                        dtype: typed(&n, &shape),
                        name: n,
                        shape,
                        data: TensorData::Joined { join: Join::Stack, parts },
                        transforms: Vec::new(),
                    });
                }
            }
            return Ok(());
        }
        Mapped::Part { name, .. } => {
            return Err(unsupported(format!(
                "the base joins it into {name} by concatenation or with transforms; LoRA on it is not converted"
            )))
        }
    };
    for (name, transforms) in targets {
        for t in &transforms {
            let rows_only = match t {
                Transform::Permute { .. } | Transform::KeepRows(_) => true,
                Transform::Slice { dim, .. } => *dim == 0,
                // value transforms, and the ones that move values across rows (DeepSeek's `kv_b`
                // split, gpt-oss's experts)
                Transform::Add(_)
                | Transform::Rows(_)
                | Transform::Reshape(_)
                | Transform::Transpose
                | Transform::Stride { .. } => false,
            };
            if !rows_only || (embedding && !transforms.is_empty()) {
                return Err(unsupported(format!(
                    "the base converts it to {name} with {t:?}, which does not act on the rows of lora_b alone"
                )));
            }
        }
        let a_name = format!("{name}.lora_a");
        let b_name = format!("{name}.lora_b");
        let (b_shape, _) = super::rows::plan_rows(&b.name, &b.shape, &transforms)?;
        let typed = |n: &str, shape: &[u64]| output_type(n, shape, outtype, arch.force_type(base_name, n, shape.len()));
        let a_planned = if embedding && name.contains("token_embd.weight") {
            // llama.cpp reads an embedding's lora_a transposed: [vocab, r]
            let (r, vocab) = (a.shape[0], a.shape[1]);
            let values = transposed(&a)?;
            let shape = vec![vocab, r];
            PlannedTensor {
                dtype: typed(&a_name, &shape),
                name: a_name,
                shape,
                data: TensorData::Generated(values),
                transforms: Vec::new(),
            }
        } else {
            PlannedTensor {
                dtype: typed(&a_name, &a.shape),
                name: a_name,
                shape: a.shape.clone(),
                data: TensorData::Source(a.clone()),
                transforms: Vec::new(),
            }
        };
        let b_planned = PlannedTensor {
            dtype: typed(&b_name, &b_shape),
            name: b_name,
            shape: b_shape,
            data: TensorData::Source(b.clone()),
            transforms,
        };
        tensors.push(a_planned);
        tensors.push(b_planned);
    }
    Ok(())
}

/// A stacked tensor's LoRA pairs, complete: `{name}.lora_a` stacks the `A`s
/// (`[n_expert, r, in]`), `{name}.lora_b` the `B`s (`[n_expert, out, r]`), as the reference's
/// `torch.stack` of its pairs does.
struct Stacked<'a> {
    name: String,
    a: Vec<super::SourceTensor<'a>>,
    b: Vec<super::SourceTensor<'a>>,
}

/// An adapted weight's `lora_A` and `lora_B`.
type LoraPair<'a> = (super::SourceTensor<'a>, super::SourceTensor<'a>);

/// Expert pairs gathered until their stacked tensor, and its batch ([`arch::Batch`]: the
/// reference stacks a layer's `w1`, `w2`, `w3` once every expert of all three has come), is
/// complete.
#[derive(Default)]
struct Stacks<'a> {
    /// Stacked name → the pairs by expert index, and the adapted weight seen last.
    pending: HashMap<String, (Vec<Option<LoraPair<'a>>>, String)>,
    /// Batch key → (size, complete stacks by rank).
    batches: HashMap<String, (u32, Vec<(u32, Stacked<'a>)>)>,
}

impl<'a> Stacks<'a> {
    /// Adds expert `index` of `count` of `name`; the stacks to plan now, in order.
    #[allow(clippy::too_many_arguments)] // one expert's pair and where it goes
    fn add(
        &mut self,
        name: String,
        index: u64,
        count: u64,
        batch: Option<arch::Batch>,
        a: super::SourceTensor<'a>,
        b: super::SourceTensor<'a>,
        base_name: &str,
    ) -> Result<Vec<Stacked<'a>>> {
        let layout = |m: String| ConvertError::Layout(m);
        let n = usize::try_from(count).ok().filter(|&n| n > 0 && n <= 1 << 16 && index < count);
        let Some(n) = n else {
            return Err(layout(format!("{base_name}: expert {index} of {count} for {name}")));
        };
        let entry = self
            .pending
            .entry(name.clone())
            .or_insert_with(|| (std::iter::repeat_with(|| None).take(n).collect(), String::new()));
        if entry.0.len() != n || entry.0[index as usize].is_some() {
            return Err(layout(format!("{base_name}: expert {index} of {name} is given twice or out of range")));
        }
        if let Some(Some((pa, pb))) = entry.0.iter().find(|p| p.is_some()) {
            if pa.shape != a.shape || pb.shape != b.shape || pa.dtype != a.dtype || pb.dtype != b.dtype {
                return Err(layout(format!(
                    "{base_name}: its lora_A/lora_B differ in shape or type from {}'s",
                    pa.name
                )));
            }
        }
        entry.0[index as usize] = Some((a, b));
        entry.1 = base_name.to_owned();
        if entry.0.iter().any(Option::is_none) {
            return Ok(Vec::new());
        }
        let Some((done, _)) = self.pending.remove(&name) else { return Ok(Vec::new()) };
        let (a, b): (Vec<_>, Vec<_>) = done.into_iter().flatten().unzip();
        let stacked = Stacked { name, a, b };
        let Some(arch::Batch { key, rank, size }) = batch else { return Ok(vec![stacked]) };
        let held = self.batches.entry(key.clone()).or_insert_with(|| (size, Vec::new()));
        if held.0 != size || rank >= size || held.1.iter().any(|(r, _)| *r == rank) {
            return Err(layout(format!("{}: rank {rank} of {size} in batch {key} is given twice", stacked.name)));
        }
        held.1.push((rank, stacked));
        if held.1.len() < size as usize {
            return Ok(Vec::new());
        }
        let mut done = self.batches.remove(&key).map(|(_, v)| v).unwrap_or_default();
        done.sort_by_key(|(r, _)| *r);
        Ok(done.into_iter().map(|(_, s)| s).collect())
    }

    /// Refuses experts left unstacked, as the reference's "Unprocessed experts" does.
    fn check_done(&self) -> Result<()> {
        let mut left: Vec<(&String, &String)> = self.pending.iter().map(|(k, (_, last))| (k, last)).collect();
        left.extend(self.batches.iter().flat_map(|(_, (_, v))| v.iter().map(|(_, s)| (&s.name, &s.name))));
        left.sort();
        match left.first() {
            None => Ok(()),
            Some((name, last)) => Err(err(AdapterError::UnsupportedTarget {
                base_name: (*last).clone(),
                reason: format!(
                    "the base stacks it into {name} with the other experts' weights, but the adapter does not adapt all of them (every expert's w1, w2 and w3 of the layer)"
                ),
            })),
        }
    }
}

/// The values of a 2-D tensor `[rows, cols]`, transposed to `[cols, rows]`, as F32.
fn transposed(t: &super::SourceTensor<'_>) -> Result<Vec<f32>> {
    let (rows, cols) = (t.shape[0] as usize, t.shape[1] as usize);
    let mut values = vec![0f32; rows * cols];
    codec::dequantize_par(t.dtype, Endian::Little, t.data, &mut values)?;
    let mut out = vec![0f32; rows * cols];
    for (r, row) in values.chunks_exact(cols.max(1)).enumerate() {
        for (c, v) in row.iter().enumerate() {
            out[c * rows + r] = *v;
        }
    }
    Ok(out)
}

/// gguf-py's `get_total_parameter_count` for an adapter: a `lora_b` right after its `lora_a`
/// counts as the product `[*lora_b.shape[:-1], lora_a.shape[-1]]`, other tensors by their
/// elements; the total is negated when there is any `lora_a`.
fn lora_param_counts(tensors: &[PlannedTensor<'_>]) -> ParamCounts {
    let mut shapes: Vec<(String, Vec<u64>)> = Vec::with_capacity(tensors.len());
    let mut last_a: Option<(&str, &[u64])> = None;
    let mut any_a = false;
    for t in tensors {
        if t.name.ends_with(".lora_a") {
            last_a = Some((t.name.as_str(), t.shape.as_slice()));
            any_a = true;
            continue;
        }
        let mut shape = t.shape.clone();
        if let Some(stem) = t.name.strip_suffix(".lora_b") {
            match last_a {
                Some((an, ashape)) if an.strip_suffix(".lora_a") == Some(stem) => {
                    shape.pop();
                    shape.push(ashape.last().copied().unwrap_or(0));
                }
                // gguf-py gives up counting: no size at all
                _ => return ParamCounts::default(),
            }
        }
        shapes.push((t.name.clone(), shape));
    }
    let mut p = ParamCounts::from_tensors(shapes.iter().map(|(n, s)| (n.as_str(), s.as_slice())));
    if any_a {
        p.total = -p.total;
    }
    p
}

/// The reference's default output file name for an adapter: gguf-py's `naming_convention` with
/// `model_type="LoRA"`, `{name}-{finetune}-{version}-{TYPE}-LoRA.gguf` (an adapter has no size
/// label unless its names give one), written into the adapter folder by default.
///
/// # Errors
/// As [`super::default_file_name`].
pub fn default_file_name(plan: &Plan<'_>) -> Result<String> {
    // the checks of a model's name (no separator in a part, not too long), then the adapter's
    super::default_file_name(&plan.name_parts, plan.outtype)?;
    let name = format!("{}-LoRA.gguf", naming_convention(&plan.name_parts, plan.outtype));
    super::naming::check_name_length(&name)?;
    Ok(name)
}

#[cfg(test)]
mod tests;
