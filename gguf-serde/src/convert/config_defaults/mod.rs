//! `config.json` as transformers' `AutoConfig` loads it: the dictionary llama.cpp's
//! `convert_hf_to_gguf.py` works from.
//!
//! The reference's `ModelBase.load_hparams` (`conversion/base.py`) takes
//! `AutoConfig.from_pretrained(dir, trust_remote_code=False).to_dict()` — nothing of the raw file
//! is merged back — and reads `config.json` as it is only when that raises (an unknown
//! `model_type`, a value of the wrong type, a RoPE dictionary missing a required key, ...).
//! [`auto_config_dict`] computes that dictionary for the configuration classes of
//! [`CONFIG_CLASSES`] as transformers 5.24.0 defines them:
//!
//! 1. every dataclass field of `PreTrainedConfig` and of the class gets the file's value, else the
//!    class default (the tables below, one per `model_type`); a name of the class's
//!    `attribute_map` is stored under the name it maps to (`num_experts` → `num_local_experts`);
//! 2. the class's `__post_init__` derives what it derives (`head_dim`, `num_key_value_heads`,
//!    `layer_types`, ...), then `PreTrainedConfig.__post_init__`: `torch_dtype` → `dtype`,
//!    `id2label`/`label2id` (two labels by default), the RoPE normalisation (below), the
//!    generation parameters (`max_length`, `temperature`, ...) dropped, `_name_or_path`, the
//!    file's other keys kept as they are, legacy `layer_types` names renamed;
//! 3. the `@strict` validation: field types (`int` refuses `1.0` and `true`, `float` refuses `1`),
//!    `validate_architecture`, `validate_layer_type`, `validate_rope`; a failure is
//!    [`NotLoaded::Raises`], and the reference then uses the raw file;
//! 4. `to_dict`: `model_type` and `transformers_version` of the class and library, private keys
//!    removed, `_output_attentions` as `output_attentions`.
//!
//! RoPE (`RotaryEmbeddingConfigMixin.convert_rope_params_to_dict` and `standardize_rope_params`):
//! `rope_scaling` (when truthy) else `rope_parameters` else `{}` becomes `rope_parameters`;
//! `rope_theta` (the file's, else the class's `default_theta`) and `partial_rotary_factor` are
//! moved in (into each per-layer-type dictionary when it is keyed by `layer_types` names), the
//! legacy `type` copied to `rope_type` (default `"default"`), and for `llama3`, `yarn` and
//! `longrope` `original_max_position_embeddings` set from `max_position_embeddings` when absent
//! (Phi-3: always from its own `original_max_position_embeddings` field). Phi-3 and Gemma 3 have
//! their own versions (see [`RopeStyle`]).
//!
//! Not modelled (the result is [`NotLoaded::NotModelled`], and the caller keeps the raw file,
//! which may differ from the reference): a `model_type` outside the table (`gemma3`, the
//! multimodal Gemma 3 configuration, among them), `mistral` with `layer_types` (transformers loads
//! it as `ministral`), remote code (`auto_map`), `per_layer_config`, a non-integer
//! `sliding_window_pattern`.

use serde_json::{Map, Value as Json};

/// The transformers version whose configuration classes the tables follow (`to_dict`'s
/// `transformers_version`).
pub const TRANSFORMERS_VERSION: &str = "5.24.0";

/// Why [`auto_config_dict`] gives no dictionary.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotLoaded {
    /// transformers raises on this file (the message says what it checks); the reference reads
    /// `config.json` as it is instead.
    #[error("transformers refuses config.json: {0}")]
    Raises(String),
    /// What transformers does with this file is not modelled here (see the [module docs](self)).
    #[error("not modelled: {0}")]
    NotModelled(String),
}

type Res<T> = Result<T, NotLoaded>;

fn raises<T>(msg: impl Into<String>) -> Res<T> {
    Err(NotLoaded::Raises(msg.into()))
}

/// A dataclass field: name, type (`int`, `float`, `num` = `float | int`, `bool`, `str`, `dict`,
/// `list[str]`, `list[int]`, `int|list[int]`, `any`; a trailing `?` admits `None`) and default
/// as JSON text.
type Field = (&'static str, &'static str, &'static str);

/// How a class normalises its RoPE parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RopeStyle {
    /// `RotaryEmbeddingConfigMixin.convert_rope_params_to_dict` with the class's `default_theta`.
    Standard(f64),
    /// `Phi3Config.convert_rope_params_to_dict`: `rope_theta` default 10000,
    /// `partial_rotary_factor` (default 1.0) always in the dictionary, `su` and `yarn` renamed
    /// `longrope`; `validate_rope` admits only `default` and `longrope`, with factor lists of
    /// `rotary dims / 2` entries.
    Phi3,
    /// `Gemma3TextConfig.convert_rope_params_to_dict`: always `full_attention` (theta 1e6, or the
    /// file's `rope_theta`, with `rope_scaling` merged in) and `sliding_attention` (theta 1e4, or
    /// `rope_local_base_freq`).
    Gemma3Text,
}

/// A transformers configuration class: its fields and defaults, and what its `__post_init__`
/// derives.
#[derive(Clone, Copy)]
pub struct ConfigClass {
    /// `model_type` (the key of `config.json` that selects the class).
    pub model_type: &'static str,
    /// The Python class name (`LlamaConfig`).
    pub class: &'static str,
    fields: &'static [Field],
    attribute_map: &'static [(&'static str, &'static str)],
    rope: RopeStyle,
    /// The class checks `hidden_size % num_attention_heads == 0` (`validate_architecture`).
    hidden_divisible: bool,
    post_init: fn(&mut Cfg) -> Res<()>,
}

impl std::fmt::Debug for ConfigClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigClass").field("model_type", &self.model_type).field("class", &self.class).finish()
    }
}

/// `PreTrainedConfig`'s own dataclass fields (`configuration_utils.py`), before every class's.
const BASE_FIELDS: &[Field] = &[
    ("transformers_version", "str?", "null"),
    ("architectures", "any?", "null"),
    ("output_hidden_states", "bool?", "false"),
    ("return_dict", "bool?", "true"),
    ("dtype", "any?", "null"),
    ("chunk_size_feed_forward", "int", "0"),
    ("is_encoder_decoder", "bool", "false"),
    ("id2label", "any?", "null"),
    ("label2id", "any?", "null"),
    ("problem_type", "any?", "null"),
];

/// `GenerationConfig._get_default_generation_params()`: keys `PreTrainedConfig.__post_init__`
/// drops from the file's extra keys.
const GENERATION_PARAMS: &[&str] = &[
    "assistant_confidence_threshold",
    "assistant_lookbehind",
    "bad_words_ids",
    "begin_suppress_tokens",
    "diversity_penalty",
    "do_sample",
    "early_stopping",
    "encoder_no_repeat_ngram_size",
    "encoder_repetition_penalty",
    "epsilon_cutoff",
    "eta_cutoff",
    "exponential_decay_length_penalty",
    "forced_bos_token_id",
    "forced_eos_token_id",
    "length_penalty",
    "max_length",
    "min_length",
    "no_repeat_ngram_size",
    "num_assistant_tokens",
    "num_assistant_tokens_schedule",
    "num_beam_groups",
    "num_beams",
    "num_return_sequences",
    "output_scores",
    "remove_invalid_values",
    "repetition_penalty",
    "return_dict_in_generate",
    "suppress_tokens",
    "target_lookbehind",
    "temperature",
    "top_k",
    "top_p",
    "typical_p",
    "use_cache",
];

/// `ALLOWED_ATTN_LAYER_TYPES` and `ALLOWED_MLP_LAYER_TYPES` (`configuration_utils.py`).
const ALLOWED_ATTN_LAYER_TYPES: &[&str] = &[
    "full_attention",
    "sliding_attention",
    "chunked_attention",
    "window_attention",
    "indexed_attention",
    "compressed_sparse_attention",
    "heavily_compressed_attention",
    "minimax_m3_sparse",
    "conv",
    "moe",
    "hybrid",
    "hybrid_sliding",
    "reference_sliding_attention",
    "linear_attention",
];
const ALLOWED_MLP_LAYER_TYPES: &[&str] = &["sparse", "dense"];

/// `_LEGACY_LAYER_TYPE_REMAP`.
const LEGACY_LAYER_TYPES: &[(&str, &str)] = &[
    ("mamba", "linear_attention"),
    ("attention", "full_attention"),
    ("deepseek_sparse_attention", "indexed_attention"),
    ("qwen_sparse_attention", "indexed_attention"),
];

/// Keys `to_dict` removes, at every depth (`_remove_keys_not_serialized`).
const NOT_SERIALIZED: &[&str] = &[
    "_is_quantized",
    "_auto_class",
    "_commit_hash",
    "_attn_implementation_internal",
    "_experts_implementation_internal",
    "_post_init_done",
    "ignore_keys_at_rope_validation",
    "base_model_tp_plan",
    "base_model_pp_plan",
    "base_model_fsdp_plan",
    "distributed_config",
];

/// The classes of the table, one per `model_type`.
pub const CONFIG_CLASSES: &[ConfigClass] = &[
    ConfigClass {
        model_type: "llama",
        class: "LlamaConfig",
        fields: LLAMA_FIELDS,
        attribute_map: &[],
        rope: RopeStyle::Standard(10000.0),
        hidden_divisible: true,
        post_init: post_llama,
    },
    ConfigClass {
        model_type: "mistral",
        class: "MistralConfig",
        fields: MISTRAL_FIELDS,
        attribute_map: &[],
        rope: RopeStyle::Standard(10000.0),
        hidden_divisible: false,
        post_init: post_llama,
    },
    ConfigClass {
        model_type: "qwen2",
        class: "Qwen2Config",
        fields: QWEN2_FIELDS,
        attribute_map: &[],
        rope: RopeStyle::Standard(10000.0),
        hidden_divisible: false,
        post_init: post_qwen2,
    },
    ConfigClass {
        model_type: "qwen3",
        class: "Qwen3Config",
        fields: QWEN3_FIELDS,
        attribute_map: &[],
        rope: RopeStyle::Standard(10000.0),
        hidden_divisible: false,
        post_init: post_qwen2,
    },
    ConfigClass {
        model_type: "gemma3_text",
        class: "Gemma3TextConfig",
        fields: GEMMA3_TEXT_FIELDS,
        attribute_map: &[],
        rope: RopeStyle::Gemma3Text,
        hidden_divisible: true,
        post_init: post_gemma3_text,
    },
    ConfigClass {
        model_type: "phi3",
        class: "Phi3Config",
        fields: PHI3_FIELDS,
        attribute_map: &[],
        rope: RopeStyle::Phi3,
        hidden_divisible: false,
        post_init: post_kv_heads,
    },
    ConfigClass {
        model_type: "mixtral",
        class: "MixtralConfig",
        fields: MIXTRAL_FIELDS,
        attribute_map: &[("num_experts", "num_local_experts")],
        rope: RopeStyle::Standard(1_000_000.0),
        hidden_divisible: false,
        post_init: post_kv_heads,
    },
    ConfigClass {
        model_type: "qwen2_moe",
        class: "Qwen2MoeConfig",
        fields: QWEN2_MOE_FIELDS,
        attribute_map: &[],
        rope: RopeStyle::Standard(10000.0),
        hidden_divisible: false,
        post_init: post_qwen2_moe,
    },
    ConfigClass {
        model_type: "qwen3_moe",
        class: "Qwen3MoeConfig",
        fields: QWEN3_MOE_FIELDS,
        attribute_map: &[("num_experts", "num_local_experts")],
        rope: RopeStyle::Standard(10000.0),
        hidden_divisible: false,
        post_init: post_qwen3_moe,
    },
    ConfigClass {
        model_type: "olmo2",
        class: "Olmo2Config",
        fields: OLMO2_FIELDS,
        attribute_map: &[],
        rope: RopeStyle::Standard(10000.0),
        hidden_divisible: false,
        post_init: post_kv_heads,
    },
    ConfigClass {
        model_type: "gemma2",
        class: "Gemma2Config",
        fields: GEMMA2_FIELDS,
        attribute_map: &[],
        rope: RopeStyle::Standard(10000.0),
        hidden_divisible: true,
        post_init: post_gemma2,
    },
    ConfigClass {
        model_type: "smollm3",
        class: "SmolLM3Config",
        fields: SMOLLM3_FIELDS,
        attribute_map: &[],
        rope: RopeStyle::Standard(2_000_000.0),
        hidden_divisible: false,
        post_init: post_smollm3,
    },
    ConfigClass {
        model_type: "granite",
        class: "GraniteConfig",
        fields: GRANITE_FIELDS,
        attribute_map: &[],
        rope: RopeStyle::Standard(10000.0),
        hidden_divisible: false,
        post_init: post_kv_heads,
    },
    ConfigClass {
        model_type: "glm4",
        class: "Glm4Config",
        fields: GLM4_FIELDS,
        attribute_map: &[],
        rope: RopeStyle::Standard(10000.0),
        hidden_divisible: false,
        post_init: post_glm4,
    },
    ConfigClass {
        model_type: "deepseek_v2",
        class: "DeepseekV2Config",
        fields: DEEPSEEK_V2_FIELDS,
        attribute_map: &[("num_experts", "n_routed_experts")],
        rope: RopeStyle::Standard(10000.0),
        hidden_divisible: true,
        post_init: post_deepseek_v3,
    },
    ConfigClass {
        model_type: "deepseek_v3",
        class: "DeepseekV3Config",
        fields: DEEPSEEK_V3_FIELDS,
        attribute_map: &[("num_local_experts", "n_routed_experts"), ("num_mtp_layers", "num_nextn_predict_layers")],
        rope: RopeStyle::Standard(10000.0),
        hidden_divisible: false,
        post_init: post_deepseek_v3,
    },
    ConfigClass {
        model_type: "gpt_oss",
        class: "GptOssConfig",
        fields: GPT_OSS_FIELDS,
        attribute_map: &[("num_experts", "num_local_experts")],
        rope: RopeStyle::Standard(150_000.0),
        hidden_divisible: false,
        post_init: post_gpt_oss,
    },
];

/// The configuration class of `model_type`, `None` when the table has none.
pub fn config_class(model_type: &str) -> Option<&'static ConfigClass> {
    CONFIG_CLASSES.iter().find(|c| c.model_type == model_type)
}

/// `AutoConfig.from_pretrained(dir).to_dict()` for the `config.json` object `file` (see the
/// [module docs](self)); `name_or_path` is `str(dir)` as the reference passes it (a
/// `pathlib.Path` of the folder), which becomes `_name_or_path`. Float values that JSON cannot
/// hold (`{"__float__": "NaN"}`) are left as they are in the file.
///
/// # Errors
/// [`NotLoaded::Raises`] where transformers raises (the reference then reads the file as it
/// is), [`NotLoaded::NotModelled`] where what transformers does is not reproduced here.
pub fn auto_config_dict(file: &Map<String, Json>, name_or_path: &str) -> Res<Map<String, Json>> {
    if file.get("auto_map").and_then(|m| m.get("AutoConfig")).is_some() {
        return Err(NotLoaded::NotModelled("auto_map.AutoConfig (remote code)".into()));
    }
    let Some(model_type) = file.get("model_type") else {
        return Err(NotLoaded::NotModelled("no model_type (transformers guesses it from the folder name)".into()));
    };
    let Some(model_type) = model_type.as_str() else {
        return raises(format!("model_type {model_type} is not a string"));
    };
    if model_type == "mistral" && file.contains_key("layer_types") {
        return Err(NotLoaded::NotModelled("mistral with layer_types (loaded as ministral)".into()));
    }
    let Some(class) = config_class(model_type) else {
        return Err(NotLoaded::NotModelled(format!("model_type {model_type:?} is not in the table")));
    };
    // `from_dict`: the config dict with `name_or_path` added, given as keyword arguments
    let mut kwargs = file.clone();
    kwargs.insert("name_or_path".into(), Json::String(name_or_path.into()));
    let mut cfg = Cfg { class, attrs: Map::new(), kwargs: Map::new() };
    // the dataclass `__init__`: fields from the arguments or their defaults, the rest to `__post_init__`
    for (name, _, default) in BASE_FIELDS.iter().chain(class.fields) {
        let v = match kwargs.remove(*name) {
            Some(v) => v,
            None => serde_json::from_str(default).map_err(|e| {
                NotLoaded::NotModelled(format!("the default of {}.{name} in the table is not JSON: {e}", class.class))
            })?,
        };
        cfg.set(name, v);
    }
    cfg.kwargs = kwargs;
    (class.post_init)(&mut cfg)?;
    base_post_init(&mut cfg)?;
    validate(&cfg)?;
    // `from_dict` sets the `name_or_path` argument once more after construction
    cfg.attrs.insert("_name_or_path".into(), Json::String(name_or_path.into()));
    to_dict(&cfg)
}

/// A configuration object under construction: its attributes and the keyword arguments not yet
/// consumed.
struct Cfg {
    class: &'static ConfigClass,
    attrs: Map<String, Json>,
    kwargs: Map<String, Json>,
}

impl Cfg {
    fn name<'k>(&self, key: &'k str) -> &'k str
    where
        'static: 'k,
    {
        self.class.attribute_map.iter().find(|(from, _)| *from == key).map_or(key, |(_, to)| *to)
    }

    /// `setattr(self, key, v)` (through `attribute_map`).
    fn set(&mut self, key: &str, v: Json) {
        let k = self.name(key).to_owned();
        self.attrs.insert(k, v);
    }

    /// `getattr(self, key, None)`.
    fn attr(&self, key: &str) -> Option<&Json> {
        self.attrs.get(self.name(key))
    }

    /// `getattr(self, key)` of an `int` field that the class computes with: any other value
    /// fails, in the computation or else in the type check of the field.
    fn int(&self, key: &str) -> Res<i64> {
        match self.attr(key) {
            Some(v) if is_int(v) => Ok(v.as_i64().unwrap_or(i64::MAX)),
            Some(v) => raises(format!("{key} = {v} is not an int")),
            None => raises(format!("no attribute {key}")),
        }
    }

    fn is_none(&self, key: &str) -> bool {
        self.attr(key).is_none_or(Json::is_null)
    }

    fn truthy(&self, key: &str) -> bool {
        self.attr(key).is_some_and(truthy)
    }
}

fn is_int(v: &Json) -> bool {
    v.is_i64() || v.is_u64()
}

/// Python's truth value of a JSON value.
fn truthy(v: &Json) -> bool {
    match v {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        Json::String(s) => !s.is_empty(),
        Json::Array(a) => !a.is_empty(),
        Json::Object(m) => !m.is_empty(),
    }
}

/// Python's `a // b` on integers.
fn floor_div(a: i64, b: i64) -> Res<i64> {
    if b == 0 {
        return raises("integer division by zero");
    }
    let q = a.wrapping_div(b);
    Ok(if a % b != 0 && ((a < 0) != (b < 0)) { q - 1 } else { q })
}

/// Python's `a % b` on integers (the sign of `b`).
fn py_mod(a: i64, b: i64) -> Res<i64> {
    if b == 0 {
        return raises("integer modulo by zero");
    }
    Ok(((a % b) + b) % b)
}

fn layer_list(n: i64, f: impl Fn(i64) -> Res<&'static str>) -> Res<Json> {
    (0..n.max(0)).map(|i| f(i).map(|s| Json::String(s.into()))).collect::<Res<Vec<_>>>().map(Json::Array)
}

/// `if self.num_key_value_heads is None: self.num_key_value_heads = self.num_attention_heads`.
fn post_kv_heads(c: &mut Cfg) -> Res<()> {
    if c.is_none("num_key_value_heads") {
        let v = c.attr("num_attention_heads").cloned().unwrap_or(Json::Null);
        c.set("num_key_value_heads", v);
    }
    Ok(())
}

/// `head_dim = hidden_size // num_attention_heads` when `None`.
fn head_dim_default(c: &mut Cfg) -> Res<()> {
    if c.is_none("head_dim") {
        let d = floor_div(c.int("hidden_size")?, c.int("num_attention_heads")?)?;
        c.set("head_dim", d.into());
    }
    Ok(())
}

/// `LlamaConfig`, `MistralConfig`: `head_dim`, then `num_key_value_heads`.
fn post_llama(c: &mut Cfg) -> Res<()> {
    head_dim_default(c)?;
    post_kv_heads(c)
}

/// `Qwen2Config`, `Qwen3Config`: `sliding_window` only with `use_sliding_window`; `layer_types`
/// sliding from `max_window_layers` on when there is a window.
fn post_qwen2(c: &mut Cfg) -> Res<()> {
    if !c.truthy("use_sliding_window") {
        c.set("sliding_window", Json::Null);
    }
    post_kv_heads(c)?;
    if c.is_none("layer_types") {
        let sliding = !c.is_none("sliding_window");
        let n = c.int("num_hidden_layers")?;
        let max_window = if sliding { c.int("max_window_layers")? } else { 0 };
        let t = layer_list(n, |i| Ok(if sliding && i >= max_window { "sliding_attention" } else { "full_attention" }))?;
        c.set("layer_types", t);
    }
    Ok(())
}

/// `Qwen2MoeConfig`: `mlp_only_layers` `[]`, `sliding_window` 0 without `use_sliding_window`,
/// `layer_types` alternating sliding/full below `max_window_layers` with `use_sliding_window`.
fn post_qwen2_moe(c: &mut Cfg) -> Res<()> {
    if c.is_none("mlp_only_layers") {
        c.set("mlp_only_layers", Json::Array(Vec::new()));
    }
    let use_sw = c.truthy("use_sliding_window");
    if !use_sw {
        c.set("sliding_window", 0.into());
    }
    if c.is_none("layer_types") {
        let n = c.int("num_hidden_layers")?;
        let max_window = if use_sw { c.int("max_window_layers")? } else { 0 };
        let t = layer_list(n, |i| {
            let odd = py_mod(i + 1, 2)? != 0;
            Ok(if odd && i < max_window && use_sw { "sliding_attention" } else { "full_attention" })
        })?;
        c.set("layer_types", t);
    }
    Ok(())
}

/// `Qwen3MoeConfig`: `sliding_window` only with `use_sliding_window`; `mlp_only_layers` `[]`.
fn post_qwen3_moe(c: &mut Cfg) -> Res<()> {
    if !c.truthy("use_sliding_window") {
        c.set("sliding_window", Json::Null);
    }
    if c.is_none("mlp_only_layers") {
        c.set("mlp_only_layers", Json::Array(Vec::new()));
    }
    Ok(())
}

/// `Gemma3TextConfig`: the bidirectional window (`sliding_window // 2 + 1`, undone by
/// `to_dict`), `_sliding_window_pattern` (the argument `sliding_window_pattern`, default 6) and
/// `layer_types` (every pattern-th layer full).
fn post_gemma3_text(c: &mut Cfg) -> Res<()> {
    if c.truthy("use_bidirectional_attention") {
        let w = floor_div(c.int("sliding_window")?, 2)? + 1;
        c.set("sliding_window", w.into());
    }
    let pattern = c.kwargs.get("sliding_window_pattern").cloned().unwrap_or(6.into());
    c.set("_sliding_window_pattern", pattern.clone());
    if c.is_none("layer_types") {
        let n = c.int("num_hidden_layers")?;
        if pattern.is_null() {
            return raises("sliding_window_pattern is None");
        }
        let p = pattern
            .as_i64()
            .filter(|_| is_int(&pattern))
            .ok_or_else(|| NotLoaded::NotModelled(format!("sliding_window_pattern {pattern} is not an integer")))?;
        let t = layer_list(n, |i| Ok(if py_mod(i + 1, p)? != 0 { "sliding_attention" } else { "full_attention" }))?;
        c.set("layer_types", t);
    }
    Ok(())
}

/// `Gemma2Config`: `layer_types` alternating sliding (even layers) and full.
fn post_gemma2(c: &mut Cfg) -> Res<()> {
    if c.is_none("layer_types") {
        let n = c.int("num_hidden_layers")?;
        let t = layer_list(n, |i| Ok(if (i + 1) % 2 != 0 { "sliding_attention" } else { "full_attention" }))?;
        c.set("layer_types", t);
    }
    Ok(())
}

/// `SmolLM3Config`: `num_key_value_heads`, `no_rope_layers` (0 for every
/// `no_rope_layer_interval`-th layer, else 1) and `layer_types` (sliding for the no-RoPE layers
/// when `use_sliding_window` and a window are set).
fn post_smollm3(c: &mut Cfg) -> Res<()> {
    post_kv_heads(c)?;
    let n = c.int("num_hidden_layers")?;
    if c.is_none("no_rope_layers") {
        let interval = c.int("no_rope_layer_interval")?;
        let v =
            (0..n.max(0)).map(|i| Ok(Json::from(i64::from(py_mod(i + 1, interval)? != 0)))).collect::<Res<Vec<_>>>()?;
        c.set("no_rope_layers", Json::Array(v));
    }
    if c.is_none("layer_types") {
        let no_rope = c.attr("no_rope_layers").and_then(Json::as_array).cloned().unwrap_or_default();
        let sliding = c.truthy("use_sliding_window") && !c.is_none("sliding_window");
        let t = layer_list(n, |i| {
            let has_rope = no_rope
                .get(i as usize)
                .ok_or_else(|| NotLoaded::Raises("no_rope_layers is shorter than num_hidden_layers".into()))?;
            Ok(if sliding && !truthy(has_rope) { "sliding_attention" } else { "full_attention" })
        })?;
        c.set("layer_types", t);
    }
    Ok(())
}

/// `Glm4Config`: `partial_rotary_factor` 0.5 unless given; `eos_token_id` defaults to
/// `[151329, 151336, 151338]`.
fn post_glm4(c: &mut Cfg) -> Res<()> {
    if !c.kwargs.contains_key("partial_rotary_factor") {
        c.kwargs.insert("partial_rotary_factor".into(), 0.5.into());
    }
    if c.is_none("eos_token_id") {
        c.set("eos_token_id", serde_json::json!([151329, 151336, 151338]));
    }
    Ok(())
}

/// `DeepseekV3Config` and `DeepseekV2Config`: `num_key_value_heads`, `qk_head_dim =
/// qk_nope_head_dim + qk_rope_head_dim`, and `head_dim = qk_rope_head_dim` (always).
fn post_deepseek_v3(c: &mut Cfg) -> Res<()> {
    post_kv_heads(c)?;
    let (nope, rope) = (c.int("qk_nope_head_dim")?, c.int("qk_rope_head_dim")?);
    c.set("qk_head_dim", (nope + rope).into());
    let v = c.attr("qk_rope_head_dim").cloned().unwrap_or(Json::Null);
    c.set("head_dim", v);
    Ok(())
}

/// `GptOssConfig`: `num_key_value_heads`, `head_dim`, `layer_types` alternating sliding and full,
/// and the default RoPE parameters (YaRN, factor 32 over 4096 positions).
fn post_gpt_oss(c: &mut Cfg) -> Res<()> {
    post_kv_heads(c)?;
    head_dim_default(c)?;
    post_gemma2(c)?;
    if c.is_none("rope_parameters") {
        c.set(
            "rope_parameters",
            serde_json::json!({"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                "truncate": false, "original_max_position_embeddings": 4096}),
        );
    }
    Ok(())
}

/// `PreTrainedConfig.__post_init__` (after the class's own).
fn base_post_init(c: &mut Cfg) -> Res<()> {
    if let Some(dtype) = c.kwargs.remove("torch_dtype").filter(|v| !v.is_null()) {
        if c.is_none("dtype") {
            c.set("dtype", dtype);
        }
    }
    match c.attr("id2label").cloned() {
        None | Some(Json::Null) => {
            let n = c.kwargs.get("num_labels").cloned().unwrap_or(2.into());
            set_num_labels(c, &n)?;
        }
        Some(Json::Object(m)) => {
            let mut out = Map::new();
            for (k, v) in m {
                let i: i64 =
                    k.trim().parse().map_err(|_| NotLoaded::Raises(format!("id2label key {k:?} is not an integer")))?;
                out.insert(i.to_string(), v);
            }
            c.set("id2label", Json::Object(out));
        }
        Some(other) => return raises(format!("id2label {other} is not a dictionary")),
    }
    let num_labels = c.attr("id2label").and_then(Json::as_object).map(Map::len);
    if c.attr("problem_type").and_then(Json::as_str) == Some("single_label_classification") && num_labels == Some(1) {
        return raises("problem_type single_label_classification with one label");
    }
    match c.class.rope {
        RopeStyle::Standard(theta) => rope_standard(c, theta)?,
        RopeStyle::Phi3 => rope_phi3(c)?,
        RopeStyle::Gemma3Text => rope_gemma3_text(c)?,
    }
    for k in GENERATION_PARAMS {
        c.kwargs.remove(*k);
    }
    let name = match c.kwargs.remove("name_or_path") {
        Some(Json::String(s)) => s,
        Some(v) => v.to_string(),
        None => String::new(),
    };
    c.attrs.insert("_name_or_path".into(), Json::String(name));
    c.kwargs.remove("_commit_hash");
    let output_attentions = c.kwargs.remove("output_attentions").unwrap_or(Json::Bool(false));
    c.attrs.insert("_output_attentions".into(), output_attentions);
    let attn = c.kwargs.remove("attn_implementation").unwrap_or(Json::Null);
    c.kwargs.remove("experts_implementation");
    if c.attrs.get("_output_attentions").is_some_and(truthy) && !(attn.is_null() || attn == "eager") {
        return raises(format!("output_attentions with attn_implementation {attn}"));
    }
    if c.kwargs.remove("per_layer_config").is_some_and(|v| !v.is_null()) {
        return Err(NotLoaded::NotModelled("per_layer_config".into()));
    }
    for (k, v) in std::mem::take(&mut c.kwargs) {
        match k.as_str() {
            "_attn_implementation_internal" | "_experts_implementation_internal" => {}
            "_attn_implementation" | "_experts_implementation" => {}
            "num_labels" => set_num_labels(c, &v)?,
            "use_return_dict" | "is_heterogeneous" => return raises(format!("{k} cannot be set")),
            _ => c.set(&k, v),
        }
    }
    for key in ["layer_types", "mtp_layer_types"] {
        if let Some(Json::Array(a)) = c.attrs.get_mut(key) {
            for t in a.iter_mut() {
                if let Some((_, to)) = LEGACY_LAYER_TYPES.iter().find(|(from, _)| t == from) {
                    *t = Json::String((*to).into());
                }
            }
        }
    }
    Ok(())
}

/// The `num_labels` setter: `id2label` `{i: "LABEL_i"}` and `label2id` its inverse, unless
/// `id2label` already has that many entries.
fn set_num_labels(c: &mut Cfg, n: &Json) -> Res<()> {
    let Some(n) = n.as_i64().filter(|_| is_int(n)) else {
        return raises(format!("num_labels {n} is not an integer"));
    };
    let current = c.attr("id2label").and_then(Json::as_object).map(Map::len);
    if current.is_none() || current != usize::try_from(n).ok() {
        let (mut id2label, mut label2id) = (Map::new(), Map::new());
        for i in 0..n.max(0) {
            id2label.insert(i.to_string(), Json::String(format!("LABEL_{i}")));
            label2id.insert(format!("LABEL_{i}"), i.into());
        }
        c.set("id2label", Json::Object(id2label));
        c.set("label2id", Json::Object(label2id));
    }
    Ok(())
}

/// `to_dict`.
fn to_dict(c: &Cfg) -> Res<Map<String, Json>> {
    let mut out = c.attrs.clone();
    out.insert("model_type".into(), c.class.model_type.into());
    out.insert("transformers_version".into(), TRANSFORMERS_VERSION.into());
    scrub(&mut out)?;
    if c.class.rope == RopeStyle::Gemma3Text && c.truthy("use_bidirectional_attention") {
        let w = (c.int("sliding_window")? - 1) * 2;
        out.insert("sliding_window".into(), w.into());
    }
    Ok(out)
}

/// `_remove_keys_not_serialized` and `dict_dtype_to_str`, at every depth.
fn scrub(d: &mut Map<String, Json>) -> Res<()> {
    for k in NOT_SERIALIZED {
        d.remove(*k);
    }
    if let Some(v) = d.remove("_output_attentions") {
        d.insert("output_attentions".into(), v);
    }
    match d.get("dtype") {
        None | Some(Json::Null | Json::String(_)) => {}
        Some(v) if is_int(v) => {}
        Some(Json::Object(_)) => return Err(NotLoaded::NotModelled("dtype given per sub-module".into())),
        Some(v) => return Err(NotLoaded::NotModelled(format!("dtype {v}"))),
    }
    for v in d.values_mut() {
        if let Json::Object(m) = v {
            scrub(m)?;
        }
    }
    Ok(())
}

mod fields;
mod rope;
#[cfg(test)]
mod tests;
mod validate;

use fields::*;
use rope::*;
use validate::*;
