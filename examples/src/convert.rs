//! A converter from a Hugging Face Llama checkpoint (`config.json` + `*.safetensors`) to GGUF,
//! written the way the README's "Writing a converter" section teaches: a typed model
//! (`#[derive(GgufModel)]`) whose tensor fields are a storage type that converts on the fly, and
//! a serde struct for the metadata. The `convert_safetensors` binary is a thin command line over
//! [`convert`].
//!
//! What it does, following llama.cpp's `convert_hf_to_gguf.py` (class `LlamaModel`) for the
//! facts:
//!
//! - **Input**: a folder with `config.json` and the weights, either one `model.safetensors` (or
//!   any `*.safetensors` files) or shards listed in `model.safetensors.index.json` (its
//!   `weight_map` says which file holds which tensor; every listed tensor must be in its file and
//!   every tensor of the files must be listed). Files are memory-mapped and read with the
//!   `safetensors` crate; source tensors may be F32, F16 or BF16. `config.json` must name
//!   `LlamaForCausalLM` (or `MistralForCausalLM`, the same layout).
//! - **Names** ([`gguf_name`]): `model.embed_tokens.weight` → `token_embd.weight`,
//!   `model.layers.N.self_attn.{q,k,v,o}_proj.weight` → `blk.N.attn_{q,k,v,output}.weight`,
//!   `model.layers.N.mlp.{gate,up,down}_proj.weight` → `blk.N.ffn_{gate,up,down}.weight`,
//!   `input_layernorm` → `attn_norm`, `post_attention_layernorm` → `ffn_norm`,
//!   `model.norm.weight` → `output_norm.weight`, `lm_head.weight` → `output.weight` (absent when
//!   the embeddings are tied: llama.cpp then uses `token_embd.weight`). `rotary_emb.inv_freq`
//!   buffers are skipped; any other tensor (biases, experts) is an error.
//! - **Q and K rows are permuted** ([`permuted_row`]): Hugging Face stores the rotary halves of
//!   each head one after the other, llama.cpp's `llama` graph expects them interleaved. As
//!   `LlamaModel.permute` does, the rows of `q_proj` (with `n_head` heads) and `k_proj` (with
//!   `n_head_kv` heads) are viewed as `[heads, 2, head_dim / 2, in]`, the two middle axes
//!   swapped, and viewed back as `[out, in]`.
//! - **Shapes**: a Hugging Face weight `[out, in]` is the canonical GGUF shape `[out, in]`
//!   (stored `ne = [in, out]`); norms are `[hidden]`.
//! - **Types** ([`output_type`]): one-dimensional tensors and `*_norm.weight` are F32 whatever
//!   `--outtype` says; the others get the output type, except that Q8_0 needs a row length (the
//!   last canonical dimension) that is a multiple of 32 — other tensors fall back to F16, as
//!   `convert_hf_to_gguf.py` does when gguf-py's quantizer refuses them. F16 and BF16 round to
//!   nearest even; Q8_0 is ggml's reference quantizer (`gguf_serde::codec`).
//! - **Metadata** ([`LlamaGgufMetadata`]): `general.architecture = "llama"`, `general.type`,
//!   `general.name`, the `llama.*` hyper-parameters from `config.json` (u32, and f32 for the RoPE
//!   base and the RMS epsilon), `general.file_type` (llama.cpp's `llama_ftype`: 0 F32, 1 F16,
//!   32 BF16, 7 Q8_0) and `general.quantization_version = 2`, in the order the script writes
//!   them. Differences: `llama.attention.head_count_kv` is always written (the head count when
//!   `config.json` has none, llama.cpp's default), and no tokenizer is converted: the file has
//!   no `tokenizer.ggml.*` keys, so llama.cpp needs a vocabulary from elsewhere to run it (a
//!   `tokenizer.json` in the folder is ignored).
//! - **Streaming**: tensors are converted a chunk of rows at a time while the GGUF writer streams
//!   them out ([`TensorStorage::write_stored`]); a tensor whose type does not change is copied
//!   straight from the memory mapping. Memory is one chunk (about 4 MiB of `f32`) whatever the
//!   size of the model. The output is written to a temporary file renamed into place at the end
//!   ([`GgufWriter::create`]): a failed conversion leaves no partial file.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};

use gguf_serde::model::{FieldSpec, TensorStorage, TensorView};
use gguf_serde::{codec, Endian, GgmlType, GgufModel, GgufWriter, Shape};
use memmap2::Mmap;
use safetensors::{Dtype, SafeTensors};
use serde::{Deserialize, Serialize};

use crate::models::LlamaBlock;

/// Elements converted per chunk by default: 1 Mi `f32` (4 MiB), at least one row.
pub const CHUNK_ELEMS: u64 = 1 << 20;

/// What can go wrong reading a checkpoint or converting it.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// A file could not be read or mapped.
    #[error("cannot read {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// `config.json` or the index is not the JSON expected.
    #[error("{path} is not the JSON expected")]
    Json {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: serde_json::Error,
    },
    /// A weights file is not a valid safetensors file.
    #[error("{path} is not a valid safetensors file")]
    SafeTensors {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: safetensors::SafeTensorError,
    },
    /// `config.json` describes a model this converter does not handle.
    #[error("config.json: {0}")]
    Config(String),
    /// The files and the index disagree, or no weights were found.
    #[error("checkpoint: {0}")]
    Layout(String),
    /// A source tensor that cannot be converted (name, type or shape).
    #[error("tensor {name}: {reason}")]
    Tensor {
        /// The Hugging Face name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// A tensor the model needs is not in the checkpoint.
    #[error("tensor {0} is missing from the checkpoint")]
    MissingTensor(String),
    /// Writing the GGUF file failed.
    #[error(transparent)]
    Gguf(#[from] gguf_serde::Error),
}

type Result<T, E = ConvertError> = std::result::Result<T, E>;

// ---------------------------------------------------------------------------------------------
// config.json

/// The fields of a Hugging Face `config.json` (as `transformers` writes it for
/// `LlamaForCausalLM`) that the conversion uses; the others are ignored.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct HfConfig {
    /// Model classes, e.g. `["LlamaForCausalLM"]`.
    #[serde(default)]
    pub architectures: Vec<String>,
    /// Width of the residual stream.
    pub hidden_size: u32,
    /// Hidden width of the feed-forward network.
    pub intermediate_size: u32,
    /// Number of decoder layers.
    pub num_hidden_layers: u32,
    /// Query heads.
    pub num_attention_heads: u32,
    /// Key/value heads (grouped-query attention); the query head count when absent.
    #[serde(default)]
    pub num_key_value_heads: Option<u32>,
    /// Context length the model was trained for, tokens.
    pub max_position_embeddings: u32,
    /// RMS norm epsilon.
    pub rms_norm_eps: f32,
    /// RoPE base frequency.
    #[serde(default)]
    pub rope_theta: Option<f32>,
    /// Vocabulary size (rows of the embedding).
    pub vocab_size: u32,
    /// Width of a head; must be `hidden_size / num_attention_heads` here.
    #[serde(default)]
    pub head_dim: Option<u32>,
    /// Whether `lm_head` shares the embedding's weights.
    #[serde(default)]
    pub tie_word_embeddings: Option<bool>,
}

impl HfConfig {
    /// Key/value heads.
    pub fn kv_heads(&self) -> u32 {
        self.num_key_value_heads.unwrap_or(self.num_attention_heads)
    }

    /// Width of a head: `hidden_size / num_attention_heads`.
    pub fn head_width(&self) -> u32 {
        self.hidden_size.checked_div(self.num_attention_heads).unwrap_or(0)
    }

    /// Checks that the model is a Llama this converter can write.
    ///
    /// # Errors
    /// [`ConvertError::Config`] naming the field.
    pub fn check(&self) -> Result<()> {
        let bad = |m: String| Err(ConvertError::Config(m));
        if !self.architectures.iter().any(|a| a == "LlamaForCausalLM" || a == "MistralForCausalLM") {
            return bad(format!(
                "architectures {:?}: this converter handles LlamaForCausalLM (and MistralForCausalLM)",
                self.architectures
            ));
        }
        let (heads, kv) = (self.num_attention_heads, self.kv_heads());
        if heads.checked_rem(kv) != Some(0) || heads == 0 {
            return bad(format!("num_attention_heads {heads} is not a positive multiple of num_key_value_heads {kv}"));
        }
        if self.hidden_size == 0 || self.hidden_size.checked_rem(heads) != Some(0) || self.head_width() & 1 == 1 {
            return bad(format!(
                "hidden_size {} is not num_attention_heads {heads} times an even head width",
                self.hidden_size
            ));
        }
        if let Some(d) = self.head_dim.filter(|&d| d != self.head_width()) {
            return bad(format!(
                "head_dim {d} differs from hidden_size / num_attention_heads = {} (not a plain Llama)",
                self.head_width()
            ));
        }
        if self.num_hidden_layers == 0 || self.vocab_size == 0 || self.intermediate_size == 0 {
            return bad("num_hidden_layers, vocab_size and intermediate_size must be positive".into());
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The GGUF side: metadata and model

/// The GGUF metadata of a converted Llama, keys and types as `convert_hf_to_gguf.py` writes
/// them, in its order. `{arch}` is `general.architecture` (`llama`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LlamaGgufMetadata {
    /// `general.architecture`: `"llama"`.
    #[serde(rename = "general.architecture")]
    pub architecture: String,
    /// `general.type`: `"model"`.
    #[serde(rename = "general.type")]
    pub kind: String,
    /// `general.name`.
    #[serde(rename = "general.name")]
    pub name: String,
    /// ← `num_hidden_layers`.
    #[serde(rename = "{arch}.block_count")]
    pub block_count: u32,
    /// ← `max_position_embeddings`, tokens.
    #[serde(rename = "{arch}.context_length")]
    pub context_length: u32,
    /// ← `hidden_size`.
    #[serde(rename = "{arch}.embedding_length")]
    pub embedding_length: u32,
    /// ← `intermediate_size`.
    #[serde(rename = "{arch}.feed_forward_length")]
    pub feed_forward_length: u32,
    /// ← `num_attention_heads`.
    #[serde(rename = "{arch}.attention.head_count")]
    pub head_count: u32,
    /// ← `num_key_value_heads` (the head count when absent).
    #[serde(rename = "{arch}.attention.head_count_kv")]
    pub head_count_kv: u32,
    /// ← `rope_theta` (not written when absent).
    #[serde(rename = "{arch}.rope.freq_base", default, skip_serializing_if = "Option::is_none")]
    pub rope_freq_base: Option<f32>,
    /// ← `rms_norm_eps`.
    #[serde(rename = "{arch}.attention.layer_norm_rms_epsilon")]
    pub rms_epsilon: f32,
    /// ← `head_dim`, when `config.json` has one.
    #[serde(rename = "{arch}.attention.key_length", default, skip_serializing_if = "Option::is_none")]
    pub key_length: Option<u32>,
    /// ← `head_dim`, when `config.json` has one.
    #[serde(rename = "{arch}.attention.value_length", default, skip_serializing_if = "Option::is_none")]
    pub value_length: Option<u32>,
    /// llama.cpp's `llama_ftype` of the output type.
    #[serde(rename = "general.file_type")]
    pub file_type: u32,
    /// ← `vocab_size`.
    #[serde(rename = "{arch}.vocab_size")]
    pub vocab_size: u32,
    /// `hidden_size / num_attention_heads`.
    #[serde(rename = "{arch}.rope.dimension_count")]
    pub rope_dimension_count: u32,
    /// ggml's quantization version: 2.
    #[serde(rename = "general.quantization_version")]
    pub quantization_version: u32,
}

impl LlamaGgufMetadata {
    /// The metadata of `config` written as `outtype`, named `name`.
    pub fn from_config(config: &HfConfig, outtype: OutType, name: &str) -> Self {
        LlamaGgufMetadata {
            architecture: "llama".into(),
            kind: "model".into(),
            name: name.into(),
            block_count: config.num_hidden_layers,
            context_length: config.max_position_embeddings,
            embedding_length: config.hidden_size,
            feed_forward_length: config.intermediate_size,
            head_count: config.num_attention_heads,
            head_count_kv: config.kv_heads(),
            rope_freq_base: config.rope_theta,
            rms_epsilon: config.rms_norm_eps,
            key_length: config.head_dim,
            value_length: config.head_dim,
            file_type: outtype.file_type(),
            vocab_size: config.vocab_size,
            rope_dimension_count: config.head_width(),
            quantization_version: 2,
        }
    }
}

/// A converted Llama: the blocks are [`LlamaBlock`] of [`crate::models`]; the top level has
/// its own metadata ([`LlamaGgufMetadata`], the converter's full key set). Tensors are written in
/// field order; shapes are canonical (outermost first).
#[derive(GgufModel)]
pub struct LlamaGguf<T> {
    /// The metadata.
    #[gguf(metadata)]
    pub meta: LlamaGgufMetadata,
    /// `token_embd.weight` ← `model.embed_tokens.weight`.
    #[gguf(name = "token_embd.weight", shape = "[vocab_size, embedding_length]")]
    pub token_embd: T,
    /// `blk.N.*` ← `model.layers.N.*`.
    #[gguf(name = "blk.{}", count = "block_count")]
    pub blocks: Vec<LlamaBlock<T>>,
    /// `output_norm.weight` ← `model.norm.weight`.
    #[gguf(name = "output_norm.weight", dtype = "F32", shape = "[embedding_length]")]
    pub output_norm: T,
    /// `output.weight` ← `lm_head.weight`; absent when tied to the embeddings.
    #[gguf(name = "output.weight", shape = "[vocab_size, embedding_length]")]
    pub output: Option<T>,
}

// ---------------------------------------------------------------------------------------------
// Names, types and the permutation

/// The output type asked for (`--outtype`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutType {
    /// Everything F32.
    F32,
    /// Matrices F16, vectors F32.
    F16,
    /// Matrices BF16, vectors F32.
    BF16,
    /// Matrices Q8_0 (F16 when a row is not whole blocks of 32), vectors F32.
    Q8_0,
}

impl OutType {
    /// The ggml type of the matrices.
    pub fn ggml(self) -> GgmlType {
        match self {
            OutType::F32 => GgmlType::F32,
            OutType::F16 => GgmlType::F16,
            OutType::BF16 => GgmlType::BF16,
            OutType::Q8_0 => GgmlType::Q8_0,
        }
    }

    /// llama.cpp's `general.file_type` (`llama_ftype`): 0, 1, 32, 7.
    pub fn file_type(self) -> u32 {
        match self {
            OutType::F32 => 0,
            OutType::F16 => 1,
            OutType::BF16 => 32,
            OutType::Q8_0 => 7,
        }
    }
}

impl std::str::FromStr for OutType {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "f32" => Ok(OutType::F32),
            "f16" => Ok(OutType::F16),
            "bf16" => Ok(OutType::BF16),
            "q8_0" => Ok(OutType::Q8_0),
            _ => Err(format!("unknown output type {s:?}: f32, f16, bf16 or q8_0")),
        }
    }
}

/// The GGUF name of a Hugging Face Llama tensor (see the [module docs](self)), or `None` for a
/// name that is not part of the mapping.
pub fn gguf_name(hf: &str) -> Option<String> {
    match hf {
        "model.embed_tokens.weight" => return Some("token_embd.weight".into()),
        "model.norm.weight" => return Some("output_norm.weight".into()),
        "lm_head.weight" => return Some("output.weight".into()),
        _ => {}
    }
    let rest = hf.strip_prefix("model.layers.")?;
    let (n, suffix) = rest.split_once('.')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || (n.len() > 1 && n.starts_with('0')) {
        return None;
    }
    let name = match suffix {
        "self_attn.q_proj.weight" => "attn_q.weight",
        "self_attn.k_proj.weight" => "attn_k.weight",
        "self_attn.v_proj.weight" => "attn_v.weight",
        "self_attn.o_proj.weight" => "attn_output.weight",
        "mlp.gate_proj.weight" => "ffn_gate.weight",
        "mlp.up_proj.weight" => "ffn_up.weight",
        "mlp.down_proj.weight" => "ffn_down.weight",
        "input_layernorm.weight" => "attn_norm.weight",
        "post_attention_layernorm.weight" => "ffn_norm.weight",
        _ => return None,
    };
    Some(format!("blk.{n}.{name}"))
}

/// Whether a Hugging Face tensor is skipped, as `convert_hf_to_gguf.py` skips it (the rotary
/// embedding's precomputed frequencies).
pub fn is_skipped(hf: &str) -> bool {
    hf.ends_with(".rotary_emb.inv_freq")
}

/// The ggml type a tensor named `gguf_name` with canonical `shape` is written as for `outtype`
/// (see the [module docs](self)).
pub fn output_type(gguf_name: &str, shape: &[u64], outtype: OutType) -> GgmlType {
    if shape.len() <= 1 || gguf_name.ends_with("_norm.weight") {
        return GgmlType::F32;
    }
    let row = shape.last().copied().unwrap_or(0);
    match outtype.ggml() {
        t if row.checked_rem(t.block_size()) == Some(0) => t,
        _ => GgmlType::F16,
    }
}

/// The source row of output row `row` of a Q or K projection with `rows` rows and `heads` heads,
/// under `LlamaModel.permute`: within each head of `w = rows / heads` rows, output row `2j + s`
/// is source row `s * w / 2 + j` (`j < w / 2`, `s` is 0 or 1). `rows` must be a multiple of
/// `2 * heads`.
pub fn permuted_row(row: u64, rows: u64, heads: u64) -> u64 {
    let w = rows / heads.max(1);
    let (h, i) = (row / w.max(1), row % w.max(1));
    h * w + (i % 2) * (w / 2) + i / 2
}

// ---------------------------------------------------------------------------------------------
// The checkpoint

/// A source tensor: a Hugging Face name, its type (F32, F16 or BF16, as ggml types of the same
/// layout), canonical shape and little-endian bytes in the memory mapping.
#[derive(Clone, Debug)]
pub struct SourceTensor<'a> {
    /// The Hugging Face name.
    pub name: String,
    /// F32, F16 or BF16.
    pub dtype: GgmlType,
    /// The shape, outermost first (up to 4 dims).
    pub shape: Shape,
    /// The data, row-major, little-endian.
    pub data: &'a [u8],
}

/// A checkpoint folder: `config.json` and the memory-mapped weight files.
pub struct Checkpoint {
    /// The folder.
    pub dir: PathBuf,
    /// `config.json`.
    pub config: HfConfig,
    /// The weight files and their mappings, in file name order.
    files: Vec<(PathBuf, Mmap)>,
    /// `model.safetensors.index.json`'s `weight_map`, when the checkpoint has one.
    weight_map: Option<BTreeMap<String, String>>,
}

#[derive(Deserialize)]
struct Index {
    weight_map: BTreeMap<String, String>,
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T> {
    let text = std::fs::read(path).map_err(|source| ConvertError::Io { path: path.into(), source })?;
    serde_json::from_slice(&text).map_err(|source| ConvertError::Json { path: path.into(), source })
}

impl Checkpoint {
    /// Opens `dir`: reads `config.json` (checked with [`HfConfig::check`]) and maps the weight
    /// files — those named in `model.safetensors.index.json` when it exists, else every
    /// `*.safetensors` file of the folder.
    ///
    /// # Errors
    /// [`ConvertError::Io`], [`ConvertError::Json`], [`ConvertError::Config`],
    /// [`ConvertError::Layout`] for no weights, or an index naming a file outside the folder.
    pub fn open(dir: impl AsRef<Path>) -> Result<Checkpoint> {
        let dir = dir.as_ref().to_path_buf();
        let config: HfConfig = read_json(&dir.join("config.json"))?;
        config.check()?;
        let index_path = dir.join("model.safetensors.index.json");
        let (names, weight_map) = if index_path.is_file() {
            let index: Index = read_json(&index_path)?;
            let mut names: Vec<String> = index.weight_map.values().cloned().collect();
            names.sort();
            names.dedup();
            for n in &names {
                let plain = Path::new(n).file_name().is_some_and(|f| f == n.as_str());
                if !plain || !n.ends_with(".safetensors") {
                    return Err(ConvertError::Layout(format!(
                        "{}: {n:?} is not a .safetensors file name in the folder",
                        index_path.display()
                    )));
                }
            }
            (names, Some(index.weight_map))
        } else {
            let rd = std::fs::read_dir(&dir).map_err(|source| ConvertError::Io { path: dir.clone(), source })?;
            let mut names = Vec::new();
            for e in rd {
                let e = e.map_err(|source| ConvertError::Io { path: dir.clone(), source })?;
                if let Some(n) = e.file_name().to_str().filter(|n| n.ends_with(".safetensors")) {
                    names.push(n.to_owned());
                }
            }
            names.sort();
            (names, None)
        };
        if names.is_empty() {
            return Err(ConvertError::Layout(format!("no .safetensors file in {}", dir.display())));
        }
        let mut files = Vec::new();
        for n in names {
            let path = dir.join(&n);
            let file = File::open(&path).map_err(|source| ConvertError::Io { path: path.clone(), source })?;
            // SAFETY: the mapping is read-only; like every memory-mapped reader, we rely on the
            // file not being truncated while it is converted (the safetensors crate checks the
            // layout against the length once).
            let map = unsafe { Mmap::map(&file) }.map_err(|source| ConvertError::Io { path: path.clone(), source })?;
            files.push((path, map));
        }
        Ok(Checkpoint { dir, config, files, weight_map })
    }

    /// Every tensor of the weight files by Hugging Face name, checked against the index (when
    /// there is one) as `convert_hf_to_gguf.py` checks it.
    ///
    /// # Errors
    /// [`ConvertError::SafeTensors`] for a file that is not valid safetensors;
    /// [`ConvertError::Tensor`] for a type other than F32/F16/BF16 or more than 4 dims;
    /// [`ConvertError::Layout`] for a name in two files, or files that disagree with the index.
    pub fn tensors(&self) -> Result<BTreeMap<String, SourceTensor<'_>>> {
        let mut out: BTreeMap<String, SourceTensor<'_>> = BTreeMap::new();
        let mut file_of: HashMap<String, &Path> = HashMap::new();
        for (path, map) in &self.files {
            // Checks every tensor's offsets and size against the file.
            let st = SafeTensors::deserialize(map)
                .map_err(|source| ConvertError::SafeTensors { path: path.clone(), source })?;
            for (name, view) in st.iter() {
                let tensor_err = |reason: String| ConvertError::Tensor { name: name.to_owned(), reason };
                let dtype = match view.dtype() {
                    Dtype::F32 => GgmlType::F32,
                    Dtype::F16 => GgmlType::F16,
                    Dtype::BF16 => GgmlType::BF16,
                    d => return Err(tensor_err(format!("type {d:?} is not supported (F32, F16, BF16)"))),
                };
                let dims: Vec<u64> = view.shape().iter().map(|&d| d as u64).collect();
                let shape = Shape::from_canonical(&dims)
                    .ok_or_else(|| tensor_err(format!("{} dimensions, at most 4", dims.len())))?;
                if file_of.insert(name.to_owned(), path).is_some() {
                    return Err(ConvertError::Layout(format!("tensor {name} is in more than one file")));
                }
                out.insert(name.to_owned(), SourceTensor { name: name.to_owned(), dtype, shape, data: view.data() });
            }
        }
        if let Some(map) = &self.weight_map {
            for (name, file) in map {
                match file_of.get(name) {
                    Some(p) if p.file_name().is_some_and(|f| f == file.as_str()) => {}
                    Some(p) => {
                        return Err(ConvertError::Layout(format!(
                            "the index puts {name} in {file}, but it is in {}",
                            p.display()
                        )))
                    }
                    None => return Err(ConvertError::Layout(format!("{name} is in the index but not in {file}"))),
                }
            }
            if let Some((extra, p)) = file_of.iter().find(|(n, _)| !map.contains_key(*n)) {
                return Err(ConvertError::Layout(format!("{extra} is in {} but not in the index", p.display())));
            }
        }
        Ok(out)
    }
}

// ---------------------------------------------------------------------------------------------
// The tensor storage that converts while the writer streams

/// A tensor of the output: a source tensor, the type it is written as, and whether its rows are
/// permuted (Q and K). Implements [`TensorStorage`], so that a [`LlamaGguf<ConvTensor>`] is
/// written by the derive; [`write_stored`](TensorStorage::write_stored) converts a chunk of rows
/// at a time.
pub struct ConvTensor<'a> {
    /// The source.
    pub src: SourceTensor<'a>,
    /// The output type.
    pub dtype: GgmlType,
    /// `Some(heads)`: the rows are permuted as [`permuted_row`] says, with this many heads.
    pub permute_heads: Option<u64>,
    /// Called with the number of source bytes converted after each chunk.
    pub progress: Option<&'a (dyn Fn(u64) + Sync)>,
    /// Elements per chunk (at least one row is converted at a time); a tensor that keeps its
    /// type is copied in pieces of this many `f32`'s bytes.
    pub chunk_elems: u64,
}

impl<'a> ConvTensor<'a> {
    /// `(rows, row length)`: a row is the last dimension; a 1-D tensor is one row.
    fn rows(&self) -> (u64, u64) {
        let row = self.src.shape.last().copied().unwrap_or(1);
        let n: u64 = self.src.shape.iter().product();
        (n.checked_div(row).unwrap_or(0), row)
    }

    fn invalid(&self, reason: String) -> gguf_serde::Error {
        gguf_serde::Error::invalid_tensor(self.src.name.clone(), reason)
    }

    fn report(&self, bytes: usize) {
        if let Some(p) = self.progress {
            p(bytes as u64);
        }
    }
}

impl<'a> TensorStorage<'a> for ConvTensor<'a> {
    /// A GGUF tensor of type F32, F16 or BF16 as a source, written as it is.
    fn from_view(view: TensorView<'a>) -> gguf_serde::Result<Self> {
        if !matches!(view.dtype, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16) || view.endian != Endian::Little {
            return Err(gguf_serde::Error::invalid_tensor(
                view.name,
                format!("a conversion source is little-endian F32, F16 or BF16, not {}", view.dtype),
            ));
        }
        let src = SourceTensor { name: view.name.to_owned(), dtype: view.dtype, shape: view.shape, data: view.bytes };
        Ok(ConvTensor { src, dtype: view.dtype, permute_heads: None, progress: None, chunk_elems: CHUNK_ELEMS })
    }

    fn layout(&self, _spec: &FieldSpec<'_>) -> gguf_serde::Result<(GgmlType, Shape)> {
        Ok((self.dtype, self.src.shape))
    }

    fn stored_bytes(&self, dtype: GgmlType, endian: Endian) -> gguf_serde::Result<Cow<'_, [u8]>> {
        if dtype == self.src.dtype && self.permute_heads.is_none() && endian == Endian::Little {
            return Ok(Cow::Borrowed(self.src.data));
        }
        let mut out = Vec::new();
        self.write_stored(dtype, endian, &mut |piece| {
            out.extend_from_slice(piece);
            Ok(())
        })?;
        Ok(Cow::Owned(out))
    }

    fn write_stored(
        &self,
        dtype: GgmlType,
        endian: Endian,
        out: &mut dyn FnMut(&[u8]) -> gguf_serde::Result<()>,
    ) -> gguf_serde::Result<()> {
        let src = &self.src;
        // Same type, same order: copy from the mapping.
        if dtype == src.dtype && self.permute_heads.is_none() && endian == Endian::Little {
            let piece_len = usize::try_from(self.chunk_elems.saturating_mul(4)).unwrap_or(usize::MAX).max(1);
            for piece in src.data.chunks(piece_len) {
                out(piece)?;
                self.report(piece.len());
            }
            return Ok(());
        }
        let (rows, row) = self.rows();
        let in_row = src.dtype.row_bytes(row).ok_or_else(|| self.invalid("row size overflows".into()))?;
        let out_row =
            dtype.row_bytes(row).ok_or_else(|| self.invalid(format!("a row of {row} is not whole {dtype} blocks")))?;
        if rows.checked_mul(in_row) != Some(src.data.len() as u64) {
            return Err(self.invalid(format!("{} bytes of data for {rows} rows of {row}", src.data.len())));
        }
        if let Some(heads) = self.permute_heads {
            if rows.checked_rem(heads.saturating_mul(2)) != Some(0) {
                return Err(self.invalid(format!("{rows} rows are not {heads} heads of an even width")));
            }
        }
        let (row_u, in_row_u, out_row_u) = (row as usize, in_row as usize, out_row as usize);
        let rows_per_chunk = (self.chunk_elems / row.max(1)).max(1);
        let mut scratch: Vec<f32> = Vec::new();
        let mut buf: Vec<u8> = Vec::new();
        let mut r = 0u64;
        while r < rows {
            let n = rows_per_chunk.min(rows - r);
            scratch.resize(n as usize * row_u, 0.0);
            match self.permute_heads {
                None => {
                    let start = r as usize * in_row_u;
                    let bytes = src.data.get(start..start + n as usize * in_row_u).unwrap_or_default();
                    codec::dequantize_par(src.dtype, Endian::Little, bytes, &mut scratch)?;
                }
                Some(heads) => {
                    for (i, dst) in scratch.chunks_mut(row_u.max(1)).enumerate() {
                        let from = permuted_row(r + i as u64, rows, heads) as usize * in_row_u;
                        let bytes = src.data.get(from..from + in_row_u).unwrap_or_default();
                        codec::dequantize_endian(src.dtype, Endian::Little, bytes, dst)?;
                    }
                }
            }
            buf.resize(n as usize * out_row_u, 0);
            codec::quantize_par(dtype, endian, &scratch, &mut buf)?;
            out(&buf)?;
            self.report(n as usize * in_row_u);
            r += n;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Planning and converting

/// Options of [`plan`] and [`convert`].
#[derive(Clone, Copy)]
pub struct ConvertOptions<'p> {
    /// The output type.
    pub outtype: OutType,
    /// `general.name`; the folder's name when `None`.
    pub name: Option<&'p str>,
    /// Called with the number of source bytes converted after each chunk.
    pub progress: Option<&'p (dyn Fn(u64) + Sync)>,
    /// Elements converted per chunk ([`CHUNK_ELEMS`] by default; the tests make it small to
    /// cross chunk boundaries inside tiny tensors).
    pub chunk_elems: u64,
}

impl ConvertOptions<'_> {
    /// Options for `outtype`, no name, no progress, chunks of [`CHUNK_ELEMS`].
    pub fn new(outtype: OutType) -> Self {
        ConvertOptions { outtype, name: None, progress: None, chunk_elems: CHUNK_ELEMS }
    }
}

/// The model to write: every tensor of `tensors` bound to its field, with its output type and
/// permutation, and the metadata from the configuration. Nothing is converted yet.
///
/// # Errors
/// [`ConvertError::MissingTensor`] for a tensor the model needs; [`ConvertError::Tensor`] for a
/// tensor the mapping does not know (other than the skipped ones) or a 1-D/2-D shape that does
/// not fit its role (the derive's shape constraints check the sizes when the model is written).
pub fn plan<'a>(
    config: &HfConfig,
    tensors: &BTreeMap<String, SourceTensor<'a>>,
    dir_name: &str,
    opts: &ConvertOptions<'a>,
) -> Result<LlamaGguf<ConvTensor<'a>>> {
    config.check()?;
    let mut by_gguf: HashMap<String, &SourceTensor<'a>> = HashMap::new();
    for (hf, t) in tensors {
        if is_skipped(hf) {
            continue;
        }
        let Some(g) = gguf_name(hf) else {
            return Err(ConvertError::Tensor {
                name: hf.clone(),
                reason: "not a Llama tensor this converter maps (see convert_hf_to_gguf.py's tensor map)".into(),
            });
        };
        by_gguf.insert(g, t);
    }
    let heads = u64::from(config.num_attention_heads);
    let kv_heads = u64::from(config.kv_heads());
    let mut take = |gguf: String, hf: String, permute: Option<u64>| -> Result<ConvTensor<'a>> {
        let src = by_gguf.remove(&gguf).ok_or(ConvertError::MissingTensor(hf))?.clone();
        let dtype = output_type(&gguf, &src.shape, opts.outtype);
        if permute.is_some() && src.shape.len() != 2 {
            return Err(ConvertError::Tensor { name: src.name, reason: "a Q/K projection is 2-D".into() });
        }
        Ok(ConvTensor { src, dtype, permute_heads: permute, progress: opts.progress, chunk_elems: opts.chunk_elems })
    };
    let token_embd = take("token_embd.weight".into(), "model.embed_tokens.weight".into(), None)?;
    let mut blocks = Vec::new();
    for i in 0..config.num_hidden_layers {
        let mut t = |name: &str, hf: &str, permute: Option<u64>| {
            take(format!("blk.{i}.{name}.weight"), format!("model.layers.{i}.{hf}.weight"), permute)
        };
        blocks.push(LlamaBlock {
            attn_norm: t("attn_norm", "input_layernorm", None)?,
            attn_q: t("attn_q", "self_attn.q_proj", Some(heads))?,
            attn_k: t("attn_k", "self_attn.k_proj", Some(kv_heads))?,
            attn_v: t("attn_v", "self_attn.v_proj", None)?,
            attn_output: t("attn_output", "self_attn.o_proj", None)?,
            ffn_norm: t("ffn_norm", "post_attention_layernorm", None)?,
            ffn_gate: t("ffn_gate", "mlp.gate_proj", None)?,
            ffn_down: t("ffn_down", "mlp.down_proj", None)?,
            ffn_up: t("ffn_up", "mlp.up_proj", None)?,
        });
    }
    let output_norm = take("output_norm.weight".into(), "model.norm.weight".into(), None)?;
    let output = match take("output.weight".into(), "lm_head.weight".into(), None) {
        Ok(t) => Some(t),
        Err(ConvertError::MissingTensor(_)) => None,
        Err(e) => return Err(e),
    };
    if let Some(g) = by_gguf.keys().next() {
        // A block numbered past num_hidden_layers.
        return Err(ConvertError::Tensor {
            name: by_gguf[g].name.clone(),
            reason: format!("{g} is beyond num_hidden_layers = {}", config.num_hidden_layers),
        });
    }
    let name = opts.name.unwrap_or(dir_name);
    let meta = LlamaGgufMetadata::from_config(config, opts.outtype, name);
    Ok(LlamaGguf { meta, token_embd, blocks, output_norm, output })
}

/// The tensors of a planned model, in file order.
pub fn tensors_of<'m, 'a>(model: &'m LlamaGguf<ConvTensor<'a>>) -> Vec<&'m ConvTensor<'a>> {
    let mut v = vec![&model.token_embd];
    for b in &model.blocks {
        v.extend([
            &b.attn_norm,
            &b.attn_q,
            &b.attn_k,
            &b.attn_v,
            &b.attn_output,
            &b.ffn_norm,
            &b.ffn_gate,
            &b.ffn_down,
            &b.ffn_up,
        ]);
    }
    v.push(&model.output_norm);
    v.extend(model.output.as_ref());
    v
}

/// What [`convert`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConvertReport {
    /// GGUF name, type and canonical shape of each tensor, in file order.
    pub tensors: Vec<(String, GgmlType, Vec<u64>)>,
    /// Bytes of source tensor data read.
    pub source_bytes: u64,
}

/// Source bytes of a planned model (the progress total).
pub fn source_bytes(model: &LlamaGguf<ConvTensor<'_>>) -> u64 {
    tensors_of(model).iter().map(|t| t.src.data.len() as u64).sum()
}

/// Converts the checkpoint in `dir` to a GGUF file at `out` (written atomically).
///
/// # Errors
/// As [`Checkpoint::open`], [`Checkpoint::tensors`] and [`plan`]; [`ConvertError::Gguf`] from
/// writing (a shape that breaks the model's constraints, I/O). On error no file is left at `out`.
pub fn convert(dir: impl AsRef<Path>, out: impl AsRef<Path>, opts: &ConvertOptions<'_>) -> Result<ConvertReport> {
    let ckpt = Checkpoint::open(dir)?;
    let tensors = ckpt.tensors()?;
    let dir_name = ckpt.dir.file_name().and_then(|n| n.to_str()).unwrap_or("model").to_owned();
    let model = plan(&ckpt.config, &tensors, &dir_name, opts)?;
    let mut w = GgufWriter::create(out)?;
    model.write(&mut w)?;
    w.commit()?;
    let names = model_names(&model);
    let report = ConvertReport {
        tensors: tensors_of(&model).into_iter().zip(names).map(|(t, n)| (n, t.dtype, t.src.shape.to_vec())).collect(),
        source_bytes: source_bytes(&model),
    };
    Ok(report)
}

/// The GGUF names of [`tensors_of`], in the same order.
fn model_names(model: &LlamaGguf<ConvTensor<'_>>) -> Vec<String> {
    let mut v = vec!["token_embd.weight".to_owned()];
    for i in 0..model.blocks.len() {
        for n in
            ["attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_down", "ffn_up"]
        {
            v.push(format!("blk.{i}.{n}.weight"));
        }
    }
    v.push("output_norm.weight".into());
    if model.output.is_some() {
        v.push("output.weight".into());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_llama_map() {
        let cases = [
            ("model.embed_tokens.weight", Some("token_embd.weight")),
            ("model.layers.0.self_attn.q_proj.weight", Some("blk.0.attn_q.weight")),
            ("model.layers.12.self_attn.o_proj.weight", Some("blk.12.attn_output.weight")),
            ("model.layers.3.mlp.down_proj.weight", Some("blk.3.ffn_down.weight")),
            ("model.layers.3.input_layernorm.weight", Some("blk.3.attn_norm.weight")),
            ("model.layers.3.post_attention_layernorm.weight", Some("blk.3.ffn_norm.weight")),
            ("model.norm.weight", Some("output_norm.weight")),
            ("lm_head.weight", Some("output.weight")),
            ("model.layers.01.mlp.up_proj.weight", None),
            ("model.layers.x.mlp.up_proj.weight", None),
            ("model.layers.0.self_attn.q_proj.bias", None),
        ];
        for (hf, want) in cases {
            assert_eq!(gguf_name(hf).as_deref(), want, "{hf}");
        }
    }

    #[test]
    fn permutation_by_hand() {
        // One head of 8 rows: halves [0 1 2 3 | 4 5 6 7] interleave to 0 4 1 5 2 6 3 7.
        let got: Vec<u64> = (0..8).map(|r| permuted_row(r, 8, 1)).collect();
        assert_eq!(got, [0, 4, 1, 5, 2, 6, 3, 7]);
        // Two heads of 4 rows: 0 2 1 3 | 4 6 5 7.
        let got: Vec<u64> = (0..8).map(|r| permuted_row(r, 8, 2)).collect();
        assert_eq!(got, [0, 2, 1, 3, 4, 6, 5, 7]);
    }

    #[test]
    fn types_as_llama_cpp_chooses() {
        assert_eq!(output_type("blk.0.attn_norm.weight", &[64], OutType::Q8_0), GgmlType::F32);
        assert_eq!(output_type("blk.0.attn_q.weight", &[64, 64], OutType::Q8_0), GgmlType::Q8_0);
        assert_eq!(output_type("blk.0.ffn_down.weight", &[64, 96], OutType::Q8_0), GgmlType::Q8_0);
        assert_eq!(output_type("blk.0.ffn_down.weight", &[64, 80], OutType::Q8_0), GgmlType::F16);
        assert_eq!(output_type("token_embd.weight", &[32, 64], OutType::BF16), GgmlType::BF16);
        assert_eq!(output_type("output_norm.weight", &[64], OutType::F16), GgmlType::F32);
    }
}
