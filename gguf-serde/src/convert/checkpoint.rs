//! A Hugging Face checkpoint folder: `config.json` and memory-mapped safetensors files.
//!
//! Follows `ModelBase.index_tensors` and `ModelBase.load_hparams` of llama.cpp's
//! `convert_hf_to_gguf.py` (the `conversion/base.py` module):
//!
//! - the weight files are those listed by `model.safetensors.index.json`'s `weight_map` (each
//!   file once, in name order) when it exists, else every `model*.safetensors` file of the folder
//!   in name order;
//! - within a file, tensors come in name order (gguf-py's `SafetensorsLocal` sorts them, as the
//!   `safetensors` Python binding does); this is the order the reference converts them in, so it
//!   is the tensor order of the output;
//! - every tensor of the index must be in its file and every tensor of the files in the index;
//! - `config.json` is read as transformers' `AutoConfig` loads it ([`HfConfig`],
//!   `ModelBase.load_hparams`), and its `text_config`, when present, is merged over the top level
//!   (`TextModel`).
//!
//! Shapes: a safetensors shape is outermost first, `[out, in]` for a linear weight, which is
//! the canonical GGUF shape (stored `ne = [in, out]`).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use safetensors::{Dtype, SafeTensors};
use serde_json::{Map, Value as Json};

use super::config_defaults::{self, NotLoaded};
use super::ConvertError;
use crate::GgmlType;

type Result<T, E = ConvertError> = std::result::Result<T, E>;

/// `config.json` of a checkpoint, as the reference sees it, with the look-ups its `find_hparam`
/// makes.
///
/// The architectures read [`hparams`](Self::hparams) (through [`get`](Self::get),
/// [`find`](Self::find), ...): the reference's `self.hparams`, which `ModelBase.load_hparams`
/// takes from `AutoConfig.from_pretrained(dir).to_dict()` — the configuration class's defaults
/// filled in and the RoPE parameters normalised, see [`config_defaults`] — and from the file as
/// it is only when transformers raises; `TextModel.__init__` then merges `text_config`, when
/// present, over the top level. [`raw`](Self::raw) is the file as read (what gguf-py's
/// `Metadata` reads).
///
/// Numbers are kept as JSON numbers (parsed exactly) and narrowed where they are written: counts
/// to `u32`, floating-point values from `f64` to `f32` (round to nearest, as numpy's `float32`).
#[derive(Clone, Debug, PartialEq)]
pub struct HfConfig {
    /// `config.json` as read (with `text_config` merged over the top level).
    pub raw: Map<String, Json>,
    /// The reference's `hparams`: [`config_defaults::auto_config_dict`] of the file, or the file
    /// itself when that gives none (see [`auto_config`](Self::auto_config)), with `text_config`
    /// merged over the top level.
    pub hparams: Map<String, Json>,
    /// `Ok` when [`hparams`](Self::hparams) is transformers' dictionary; else why it is the file
    /// as read: [`NotLoaded::Raises`] is the reference's own fallback, [`NotLoaded::NotModelled`]
    /// a class or case the tables do not cover (the reference may then see other values).
    pub auto_config: std::result::Result<(), NotLoaded>,
}

fn merge_text_config(mut m: Map<String, Json>) -> Map<String, Json> {
    if let Some(Json::Object(text)) = m.get("text_config").cloned() {
        m.extend(text);
    }
    m
}

impl HfConfig {
    /// [`load`](Self::load) with an empty `name_or_path` (the `_name_or_path` of
    /// [`hparams`](Self::hparams) is then `""`).
    ///
    /// # Errors
    /// As [`load`](Self::load).
    pub fn from_json(json: Json) -> Result<HfConfig> {
        HfConfig::load(json, "")
    }

    /// Reads `config.json`'s JSON for the checkpoint folder `name_or_path` (as the reference
    /// names it: `str()` of its `pathlib.Path`, see [`python_path_str`]; it becomes
    /// `_name_or_path`), as the reference's `load_hparams` does (see the [type docs](Self)).
    ///
    /// # Errors
    /// [`ConvertError::Config`] when it is not a JSON object.
    pub fn load(json: Json, name_or_path: &str) -> Result<HfConfig> {
        let Json::Object(file) = json else {
            return Err(ConvertError::Config("config.json is not a JSON object".into()));
        };
        let (hparams, auto_config) = match config_defaults::auto_config_dict(&file, name_or_path) {
            Ok(d) => (d, Ok(())),
            Err(e) => (file.clone(), Err(e)),
        };
        Ok(HfConfig { raw: merge_text_config(file), hparams: merge_text_config(hparams), auto_config })
    }

    /// The value of `key` in [`hparams`](Self::hparams), `None` when absent or `null`
    /// (`hparams.get(key)`).
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.hparams.get(key).filter(|v| !v.is_null())
    }

    /// The first of `keys` present in [`hparams`](Self::hparams), as the reference's
    /// `find_hparam(keys, optional=True)` finds it: the first key present stops the search, and a
    /// `null` value there gives `None`.
    pub fn find<'k>(&self, keys: &[&'k str]) -> Option<(&'k str, &Json)> {
        let k = keys.iter().find(|k| self.hparams.contains_key(**k))?;
        self.get(k).map(|v| (*k, v))
    }

    /// `architectures[0]`, the Hugging Face class the reference dispatches on.
    pub fn hf_architecture(&self) -> Option<&str> {
        self.get("architectures")?.as_array()?.first()?.as_str()
    }

    /// The first of `keys` present as a `u32`.
    ///
    /// # Errors
    /// [`ConvertError::Config`] naming the key when its value is not an integer that fits.
    pub fn find_u32(&self, keys: &[&str]) -> Result<Option<u32>> {
        match self.find(keys) {
            None => Ok(None),
            Some((k, v)) => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| ConvertError::Config(format!("{k}: {v} is not an integer of 32 bits"))),
        }
    }

    /// As [`find_u32`](Self::find_u32), but the key must be present.
    ///
    /// # Errors
    /// [`ConvertError::Config`] naming the keys.
    pub fn need_u32(&self, keys: &[&str]) -> Result<u32> {
        self.find_u32(keys)?.ok_or_else(|| ConvertError::Config(format!("none of {keys:?} is given")))
    }

    /// The first of `keys` present as an `f64`.
    ///
    /// # Errors
    /// [`ConvertError::Config`] naming the key when its value is not a number.
    pub fn find_f64(&self, keys: &[&str]) -> Result<Option<f64>> {
        match self.find(keys) {
            None => Ok(None),
            Some((k, v)) => {
                v.as_f64().map(Some).ok_or_else(|| ConvertError::Config(format!("{k}: {v} is not a number")))
            }
        }
    }

    /// The reference's `rope_parameters`: `rope_parameters`, else `rope_scaling`, else empty,
    /// with `rope_theta` (from the top-level names the reference tries), `rope_type` (from
    /// `type`), `partial_rotary_factor` and `original_max_position_embeddings` mirrored into it
    /// when it has neither `full_attention` nor `sliding_attention` (`TextModel.__init__`).
    pub fn rope_parameters(&self) -> Map<String, Json> {
        // `hparams.get("rope_parameters", hparams.get("rope_scaling")) or {}`
        let given = if self.hparams.contains_key("rope_parameters") {
            self.get("rope_parameters")
        } else {
            self.get("rope_scaling")
        };
        let mut p = match given {
            Some(Json::Object(m)) => m.clone(),
            _ => Map::new(),
        };
        if p.contains_key("full_attention") || p.contains_key("sliding_attention") {
            return p;
        }
        let theta = self.find(&[
            "global_rope_theta",
            "rope_global_theta",
            "rope_theta_global",
            "rope_theta",
            "rotary_emb_base",
        ]);
        let local = self.find(&[
            "local_rope_theta",
            "rope_local_theta",
            "rope_theta_local",
            "swa_rope_theta",
            "rope_local_base_freq",
        ]);
        let partial = self.find(&["partial_rotary_factor", "rope_pct", "rope_percent"]);
        let orig = self.find(&["original_max_position_embeddings"]);
        if let Some((_, v)) = local {
            let mut m = Map::new();
            m.insert("rope_theta".into(), v.clone());
            p.insert("sliding_attention".into(), Json::Object(m));
        }
        if let Some((_, v)) = theta {
            p.entry("rope_theta").or_insert_with(|| v.clone());
        }
        if !p.contains_key("rope_type") {
            if let Some(t) = p.get("type").filter(|t| !t.is_null()).cloned() {
                p.insert("rope_type".into(), t);
            }
        }
        if let Some((_, v)) = partial {
            p.entry("partial_rotary_factor").or_insert_with(|| v.clone());
        }
        if let Some((_, v)) = orig {
            p.entry("original_max_position_embeddings").or_insert_with(|| v.clone());
        }
        p
    }
}

/// A source tensor: its Hugging Face name, type, canonical shape and little-endian bytes in the
/// memory mapping, with the scale that dequantizes it in a pre-quantized checkpoint
/// ([`quant`](super::quant)).
#[derive(Clone, Debug)]
pub struct SourceTensor<'a> {
    /// The Hugging Face name.
    pub name: String,
    /// F32, F16 or BF16 (the ggml types of the same layouts as safetensors' `F32`, `F16`, `BF16`);
    /// `I8` stands for safetensors' `U8`, raw bytes that only an architecture that knows them
    /// reads ([`Architecture::mxfp4_tensors`](super::Architecture::mxfp4_tensors): MXFP4 blocks
    /// and scales); as values they are refused ([`ConvertError::Unsupported`]).
    /// F32 for an FP8 tensor ([`fp8`](Self::fp8)), which the reference widens to F32.
    pub dtype: GgmlType,
    /// The 8-bit float format when the data is `F8_E4M3` or `F8_E5M2` (one byte a value).
    pub fp8: Option<super::quant::Fp8>,
    /// The scale the values are multiplied by (`{name}_scale_inv` with `quant_method = "fp8"`),
    /// making an F32 tensor.
    pub scale: Option<super::quant::Scale<'a>>,
    /// The shape, outermost first (safetensors' order, the canonical GGUF shape).
    pub shape: Vec<u64>,
    /// The data, row-major, little-endian, borrowed from the mapping.
    pub data: &'a [u8],
}

/// A checkpoint folder: `config.json` and the memory-mapped weight files.
#[derive(Debug)]
pub struct Checkpoint {
    /// The folder.
    pub dir: PathBuf,
    /// `config.json`.
    pub config: HfConfig,
    files: Vec<(PathBuf, Mmap)>,
    weight_map: Option<BTreeMap<String, String>>,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ConvertError + '_ {
    move |source| ConvertError::Io { path: path.into(), source }
}

/// `str(pathlib.Path(dir))`: the path as Python prints it, without `.` components (`.` when
/// nothing else is left) and without a trailing separator; the `_name_or_path` transformers records for the
/// folder the reference loads.
pub fn python_path_str(dir: &Path) -> String {
    use std::path::Component;
    let parts: PathBuf = dir.components().filter(|c| !matches!(c, Component::CurDir)).collect();
    if parts.as_os_str().is_empty() {
        return ".".into();
    }
    parts.to_string_lossy().into_owned()
}

/// Reads a JSON file.
pub(crate) fn read_json(path: &Path) -> Result<Json> {
    let text = std::fs::read(path).map_err(io_err(path))?;
    serde_json::from_slice(&text).map_err(|source| ConvertError::Json { path: path.into(), source })
}

impl Checkpoint {
    /// Opens `dir`: reads `config.json` and maps the weight files (see the
    /// [module docs](self)).
    ///
    /// # Errors
    /// [`ConvertError::Io`] (a missing `config.json` or shard names the file),
    /// [`ConvertError::Json`], [`ConvertError::Config`], [`ConvertError::Layout`] for no
    /// weights or an index naming a file outside the folder.
    pub fn open(dir: impl AsRef<Path>) -> Result<Checkpoint> {
        let dir = dir.as_ref().to_path_buf();
        let config = HfConfig::load(read_json(&dir.join("config.json"))?, &python_path_str(&dir))?;
        let index_path = dir.join("model.safetensors.index.json");
        let (names, weight_map) = if index_path.is_file() {
            let index = read_json(&index_path)?;
            let wm = index.get("weight_map").and_then(Json::as_object).ok_or_else(|| {
                ConvertError::Layout(format!("{}: no weight_map object", crate::format::shown_path(&index_path)))
            })?;
            let mut map = BTreeMap::new();
            for (k, v) in wm {
                let Some(f) = v.as_str() else {
                    return Err(ConvertError::Layout(format!(
                        "{}: {k} maps to {v}, not a file name",
                        crate::format::shown_path(&index_path)
                    )));
                };
                map.insert(k.clone(), f.to_owned());
            }
            let mut names: Vec<String> = map.values().cloned().collect();
            names.sort();
            names.dedup();
            for n in &names {
                let plain = Path::new(n).file_name().is_some_and(|f| f == n.as_str());
                if !plain || !n.ends_with(".safetensors") {
                    return Err(ConvertError::Layout(format!(
                        "{}: {n:?} is not a .safetensors file name in the folder",
                        crate::format::shown_path(&index_path)
                    )));
                }
            }
            (names, Some(map))
        } else {
            let mut names = Vec::new();
            for e in std::fs::read_dir(&dir).map_err(io_err(&dir))? {
                let e = e.map_err(io_err(&dir))?;
                if let Some(n) =
                    e.file_name().to_str().filter(|n| n.starts_with("model") && n.ends_with(".safetensors"))
                {
                    names.push(n.to_owned());
                }
            }
            names.sort();
            (names, None)
        };
        if names.is_empty() {
            return Err(ConvertError::Layout(format!(
                "no model*.safetensors file in {}",
                crate::format::shown_path(&dir)
            )));
        }
        let mut files = Vec::new();
        for n in names {
            let path = dir.join(&n);
            let file = File::open(&path).map_err(io_err(&path))?;
            // SAFETY: a read-only mapping; as every memory-mapped reader, we rely on the file not
            // being truncated while it is converted (safetensors checks the layout once).
            let map = unsafe { Mmap::map(&file) }.map_err(io_err(&path))?;
            files.push((path, map));
        }
        Ok(Checkpoint { dir, config, files, weight_map })
    }

    /// A checkpoint of the given weight files of `dir` (plain file names in the folder, in the
    /// order their tensors are converted) with `config`, read from elsewhere: a LoRA adapter's
    /// `adapter_model.safetensors` with its base model's `config.json`
    /// ([`lora`](super::lora)). There is no index.
    ///
    /// # Errors
    /// [`ConvertError::Io`] naming a file that cannot be opened or mapped.
    pub fn from_files(dir: impl AsRef<Path>, config: HfConfig, names: &[&str]) -> Result<Checkpoint> {
        let dir = dir.as_ref().to_path_buf();
        let mut files = Vec::new();
        for n in names {
            let path = dir.join(n);
            let file = File::open(&path).map_err(io_err(&path))?;
            // SAFETY: as in `open`.
            let map = unsafe { Mmap::map(&file) }.map_err(io_err(&path))?;
            files.push((path, map));
        }
        Ok(Checkpoint { dir, config, files, weight_map: None })
    }

    /// Lets the system drop the resident pages of `data` (a tensor's bytes, see
    /// [`SourceTensor::data`]) from this process's mappings, as [`write_plan`](super::write_plan)
    /// does with each chunk of rows once it is converted, so that the resident size stays about
    /// a chunk of rows rather than growing to the size of the mapped files. The data stays
    /// valid: a later read maps the pages again from the file (from the page cache when they are
    /// still there). Only the whole pages inside `data` are released; a slice not inside one of
    /// this checkpoint's mappings, and any error of the system call, are ignored (it is only
    /// advice). The release is [`Source::release`](crate::container::Source::release) of the
    /// mapping that holds `data`.
    pub fn release(&self, data: &[u8]) {
        use crate::container::Source;
        let (start, len) = (data.as_ptr() as usize, data.len());
        for (_, map) in &self.files {
            let base = map.as_ptr() as usize;
            if start >= base && start + len <= base + map.len() {
                // the mapping's own page-rounded MADV_DONTNEED (`Source for Mmap`)
                map.release(start - base..start - base + len);
                return;
            }
        }
    }

    /// The weight files, in the order their tensors are converted.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(|(p, _)| p.as_path())
    }

    /// Every tensor, in the reference's order (files in order, names sorted within a file),
    /// checked against the index when there is one; in a pre-quantized checkpoint, each scale
    /// attached to its weight and left out of the list ([`quant`](super::quant)).
    ///
    /// # Errors
    /// [`ConvertError::SafeTensors`] for a file that is not valid safetensors;
    /// [`ConvertError::Unsupported`] for a type other than F32/F16/BF16/U8/F8_E4M3/F8_E5M2;
    /// [`ConvertError::Layout`] for a name in two files, or files that disagree with the index;
    /// as [`quant`](super::quant) ([`ConvertError::UnsupportedQuantization`] for a
    /// `quant_method` other than `fp8` and `mxfp4`).
    pub fn tensors(&self) -> Result<Vec<SourceTensor<'_>>> {
        let mut out = Vec::new();
        let mut file_of: HashMap<String, &Path> = HashMap::new();
        for (path, map) in &self.files {
            let st = SafeTensors::deserialize(map)
                .map_err(|source| ConvertError::SafeTensors { path: path.clone(), source })?;
            let mut views: Vec<_> = st.iter().collect();
            views.sort_by(|a, b| a.0.cmp(b.0));
            for (name, view) in views {
                use super::quant::Fp8;
                let (dtype, fp8) = match view.dtype() {
                    Dtype::F32 => (GgmlType::F32, None),
                    // raw bytes (MXFP4 blocks and scales), see `SourceTensor::dtype`
                    Dtype::U8 => (GgmlType::I8, None),
                    Dtype::F16 => (GgmlType::F16, None),
                    Dtype::BF16 => (GgmlType::BF16, None),
                    Dtype::F8_E4M3 => (GgmlType::F32, Some(Fp8::E4M3)),
                    Dtype::F8_E5M2 => (GgmlType::F32, Some(Fp8::E5M2)),
                    d => {
                        return Err(ConvertError::Unsupported {
                            name: name.to_owned(),
                            reason: format!("type {d:?} is not converted (F32, F16, BF16, F8_E4M3, F8_E5M2)"),
                        })
                    }
                };
                if file_of.insert(name.to_owned(), path).is_some() {
                    return Err(ConvertError::Layout(format!("tensor {name} is in more than one file")));
                }
                let shape = view.shape().iter().map(|&d| d as u64).collect();
                out.push(SourceTensor { name: name.to_owned(), dtype, fp8, scale: None, shape, data: view.data() });
            }
        }
        if let Some(map) = &self.weight_map {
            for (name, file) in map {
                match file_of.get(name) {
                    Some(p) if p.file_name().is_some_and(|f| f == file.as_str()) => {}
                    Some(p) => {
                        return Err(ConvertError::Layout(format!(
                            "the index puts {name} in {file}, but it is in {}",
                            crate::format::shown_path(&p)
                        )))
                    }
                    None => return Err(ConvertError::Layout(format!("{name} is in the index but not in {file}"))),
                }
            }
            let mut extra: Vec<_> = file_of.iter().filter(|(n, _)| !map.contains_key(*n)).collect();
            extra.sort();
            if let Some((n, p)) = extra.first() {
                return Err(ConvertError::Layout(format!(
                    "{n} is in {} but not in the index",
                    crate::format::shown_path(&p)
                )));
            }
        }
        super::quant::dequantized(&self.dir, &self.config, out)
    }
}
