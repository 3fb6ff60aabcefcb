//! Choosing each tensor's type as `llama-quantize` does: [`plan`] turns a llama.cpp file type
//! ([`LlamaFileType`], e.g. `Q4_K_M`) and the options of [`QuantizeParams`] into one
//! [`TensorPlan`] per tensor, with the [`Rule`] that chose its type;
//! [`requantize`](super::requant::requantize) writes the file.
//!
//! The rules are those of llama.cpp commit `0c1e57098` ([`LLAMA_CPP_COMMIT`]),
//! `src/llama-quant.cpp` (`llama_tensor_get_type`, `tensor_allows_quantization`,
//! `tensor_type_fallback`, `tensor_requires_imatrix`) and `tools/quantize/quantize.cpp` (the file
//! types and their names). In that order, for each tensor:
//!
//! 1. **Kept** ([`Rule::Kept`]): with `COPY`; a tensor of fewer than two dimensions (trailing
//!    `ne` of 1 do not count, as `ggml_n_dims`); a name not ending in `weight`; a name llama.cpp
//!    never quantizes (`_norm.weight`, `ffn_gate_inp.weight`, `altup`, `laurel`,
//!    `position_embd.weight`, `ssm_conv1d`, … — [`Kept::NeverQuantized`] names the match);
//!    `output.weight` with `--leave-output-tensor`; a name matching one of our own `exclude`
//!    globs (not a llama-quantize option).
//! 2. **User types**: `--token-embedding-type` for `token_embd.weight` and
//!    `per_layer_token_embd.weight` (the latter only if no `--tensor-type` pattern names it),
//!    `--output-tensor-type` for `output.weight` — whatever the file type.
//! 3. Otherwise the file type's **default** type ([`LlamaFileType::default_type`]). If that is a
//!    quantized type: the first `--tensor-type` pattern found in the name (an ECMAScript-like
//!    regular expression searched anywhere in the name, as `std::regex_search`; the pattern is
//!    lower-cased as llama-quantize does) chooses the type; else, unless `--pure`, the
//!    **mix rules** ([`MixRule`]) may promote it by tensor category (`output`, `token_embd`,
//!    `attn_v`, `attn_k`, `attn_q`, `attn_qkv`, `attn_output`, `ffn_down`, `ffn_gate`, `ffn_up`),
//!    layer position (`use_more_bits`: the first and last eighth of the layers and every third
//!    between), the model's grouped-query factor (`head_count / head_count_kv` of layer 0),
//!    expert count, tied embeddings (no `output.weight`: `token_embd.weight` follows the
//!    output rule), the architecture (`falcon`, `glm5-next`, `bailingmoe3`) and the 70B Llama
//!    shape (`llama` of 80 layers with grouped-query attention; `deci`, `olmo`, `qwen2` of 80,
//!    `jais2` of 68). The counters of `attn_v`/`ffn_*` tensors advance in llama-quantize's
//!    tensor order (by layer number, then name) and only for tensors that reach the mix rules.
//! 4. **Fallback** ([`Rule::Fallback`]): a row length (`ne[0]`) that is not a multiple of the
//!    chosen type's block size falls back: IQ1_S…IQ3_S and IQ4_XS → IQ4_NL; Q2_0, Q2_K, Q3_K,
//!    TQ1_0, TQ2_0 → Q4_0; Q4_K → Q5_0; Q5_K → Q5_1; Q6_K → Q8_0; and to F16 if the fallback
//!    (or a 32-block type) still does not fit.
//!
//! [`TensorPlan::requires_imatrix`] marks the tensors llama-quantize refuses to write without an
//! importance matrix (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, and Q2_K in a `Q2_K_S` file;
//! never `token_embd`/`output`). With an importance matrix ([`QuantizeParams::imatrix`], see
//! [`super::imatrix`]) a few mix rules change as llama-quantize's `has_imatrix` makes them: IQ3_XXS
//! keeps `attn_v` at IQ3_XXS (not IQ3_S) and `ffn_down` at its default (not Q4_K/Q3_K);
//! IQ4_NL/IQ4_XS no longer raise the first eighth of `ffn_down` to Q5_K; Q4_0 and Q5_0 raise it
//! to Q4_1 and Q5_1.
//!
//! The model facts come from the metadata, as llama.cpp's loader reads them (with `--override-kv`
//! values in force): `general.architecture`, `{arch}.block_count`, `{arch}.nextn_predict_layers`,
//! `{arch}.expert_count`, `{arch}.attention.head_count` and `head_count_kv` (a number or a
//! per-layer array). Unlike llama-quantize, any architecture is planned (llama.cpp refuses one it
//! does not know), and any integer type is accepted for these keys.

use std::fmt;
use std::str::FromStr;

use regex::Regex;

use super::imatrix::Imatrix;
use super::requant::NameGlobs;
use crate::container::{Gguf, Source, TensorInfo, Value, ValueRef};
use crate::error::{Error, QuantizeError, Result};
use crate::format::{GgmlType, Ne};

/// The llama.cpp commit whose `llama-quantize` rules [`plan`] follows.
pub const LLAMA_CPP_COMMIT: &str = "0c1e57098";

/// `GGML_QNT_VERSION`: the value llama-quantize writes as `general.quantization_version`.
pub const GGML_QNT_VERSION: u32 = 2;

macro_rules! file_types {
    ($($v:ident = $n:literal, $def:ident, $desc:literal;)*) => {
        /// A llama.cpp file type (`enum llama_ftype`), as `llama-quantize` lists them (llama.cpp
        /// [`LLAMA_CPP_COMMIT`]): the name picks the mix of tensor types, the number is what
        /// `general.file_type` records. `COPY` (copy every tensor) is not a file type here: see
        /// [`QuantizeParams::only_copy`]. `MOSTLY_NVFP4` (39) exists in llama.h but
        /// llama-quantize does not offer it.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum LlamaFileType {
            $(#[doc = $desc] $v,)*
        }

        impl LlamaFileType {
            /// Every file type, in llama_ftype number order.
            pub const ALL: &'static [LlamaFileType] = &[$(Self::$v,)*];

            /// The `llama_ftype` number (`general.file_type`), e.g. 15 for `Q4_K_M`.
            pub fn number(self) -> u32 {
                match self { $(Self::$v => $n,)* }
            }

            /// The name llama-quantize gives it, e.g. `"Q4_K_M"`.
            pub fn name(self) -> &'static str {
                match self { $(Self::$v => stringify!($v),)* }
            }

            /// The tensor type most tensors get (`llama_ftype_get_default_type`): `Q4_K` for
            /// `Q4_K_M`, `IQ3_S` for `IQ3_XS` and `IQ3_M`, `IQ2_XS` for `IQ2_S`, `MXFP4` for
            /// `MXFP4_MOE`, …
            pub fn default_type(self) -> GgmlType {
                match self { $(Self::$v => GgmlType::$def,)* }
            }
        }
    };
}

file_types! {
    F32 = 0, F32, "All F32 (`LLAMA_FTYPE_ALL_F32`, 0).";
    F16 = 1, F16, "Mostly F16 (1).";
    Q4_0 = 2, Q4_0, "Mostly Q4_0 (2).";
    Q4_1 = 3, Q4_1, "Mostly Q4_1 (3).";
    Q8_0 = 7, Q8_0, "Mostly Q8_0 (7).";
    Q5_0 = 8, Q5_0, "Mostly Q5_0 (8).";
    Q5_1 = 9, Q5_1, "Mostly Q5_1 (9).";
    Q2_K = 10, Q2_K, "Q2_K with Q3_K/Q4_K promotions (10).";
    Q3_K_S = 11, Q3_K, "Q3_K, small (11).";
    Q3_K_M = 12, Q3_K, "Q3_K, medium (12); `Q3_K` is an alias.";
    Q3_K_L = 13, Q3_K, "Q3_K, large (13).";
    Q4_K_S = 14, Q4_K, "Q4_K, small (14).";
    Q4_K_M = 15, Q4_K, "Q4_K, medium (15); `Q4_K` is an alias.";
    Q5_K_S = 16, Q5_K, "Q5_K, small (16).";
    Q5_K_M = 17, Q5_K, "Q5_K, medium (17); `Q5_K` is an alias.";
    Q6_K = 18, Q6_K, "Mostly Q6_K (18).";
    IQ2_XXS = 19, IQ2_XXS, "IQ2_XXS, 2.06 bpw (19); needs an importance matrix.";
    IQ2_XS = 20, IQ2_XS, "IQ2_XS, 2.31 bpw (20); needs an importance matrix.";
    Q2_K_S = 21, Q2_K, "Q2_K, small (21); needs an importance matrix.";
    IQ3_XS = 22, IQ3_S, "IQ3_XS, 3.3 bpw (22).";
    IQ3_XXS = 23, IQ3_XXS, "IQ3_XXS, 3.06 bpw (23); needs an importance matrix.";
    IQ1_S = 24, IQ1_S, "IQ1_S, 1.56 bpw (24); needs an importance matrix.";
    IQ4_NL = 25, IQ4_NL, "IQ4_NL, 4.50 bpw non-linear (25).";
    IQ3_S = 26, IQ3_S, "IQ3_S, 3.44 bpw (26).";
    IQ3_M = 27, IQ3_S, "IQ3_M, 3.66 bpw mix (27).";
    IQ2_S = 28, IQ2_XS, "IQ2_S, 2.5 bpw (28); needs an importance matrix.";
    IQ2_M = 29, IQ2_S, "IQ2_M, 2.7 bpw (29); needs an importance matrix.";
    IQ4_XS = 30, IQ4_XS, "IQ4_XS, 4.25 bpw non-linear (30).";
    IQ1_M = 31, IQ1_M, "IQ1_M, 1.75 bpw (31); needs an importance matrix.";
    BF16 = 32, BF16, "Mostly BF16 (32).";
    TQ1_0 = 36, TQ1_0, "TQ1_0, 1.69 bpw ternary (36).";
    TQ2_0 = 37, TQ2_0, "TQ2_0, 2.06 bpw ternary (37).";
    MXFP4_MOE = 38, MXFP4, "MXFP4 for the experts of a mixture of experts, Q8_0 elsewhere (38).";
    Q1_0 = 40, Q1_0, "Mostly Q1_0, 1.125 bpw (40).";
    Q2_0 = 41, Q2_0, "Mostly Q2_0, 2.25 bpw in groups of 64 (41).";
}

impl LlamaFileType {
    /// The file type of `llama_ftype` number `n`, if llama-quantize offers it.
    pub fn from_number(n: u32) -> Option<LlamaFileType> {
        Self::ALL.iter().copied().find(|t| t.number() == n)
    }
}

impl fmt::Display for LlamaFileType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing a [`LlamaFileType`] from a string that names none.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown llama.cpp file type {0:?} (expected one of Q4_K_M, Q8_0, Q5_K_S, IQ4_XS, F16, ... or a number)")]
pub struct UnknownFileType(pub String);

impl FromStr for LlamaFileType {
    type Err = UnknownFileType;

    /// Parses a file type as llama-quantize does: a name, case-insensitively (`q4_k_m`), the
    /// aliases `Q3_K`, `Q4_K`, `Q5_K` (the `_M` types), or a `llama_ftype` number (`15`).
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        let alias = match s.to_ascii_uppercase().as_str() {
            "Q3_K" => Some(Self::Q3_K_M),
            "Q4_K" => Some(Self::Q4_K_M),
            "Q5_K" => Some(Self::Q5_K_M),
            _ => None,
        };
        alias
            .or_else(|| Self::ALL.iter().copied().find(|t| t.name().eq_ignore_ascii_case(s)))
            .or_else(|| s.parse::<u32>().ok().and_then(Self::from_number))
            .ok_or_else(|| UnknownFileType(s.to_owned()))
    }
}

/// A `--tensor-type PATTERN=TYPE` option: tensors whose name contains a match of `pattern`
/// (a regular expression, searched anywhere in the name) get `dtype`.
#[derive(Clone, Debug)]
pub struct TensorTypeOverride {
    /// The pattern, lower-cased (llama-quantize lower-cases it; tensor names are not).
    pub pattern: String,
    regex: Regex,
    /// The type chosen for matching tensors.
    pub dtype: GgmlType,
}

impl TensorTypeOverride {
    /// An override of tensors matching `pattern` (lower-cased first) to `dtype`.
    ///
    /// # Errors
    /// [`QuantizeError`] if the pattern is not a valid regular expression.
    pub fn new(pattern: &str, dtype: GgmlType) -> Result<Self> {
        let pattern = pattern.to_lowercase();
        let regex = Regex::new(&pattern)
            .map_err(|e| Error::from(QuantizeError::refused(format!("--tensor-type pattern {pattern:?}: {e}"))))?;
        Ok(TensorTypeOverride { pattern, regex, dtype })
    }

    /// Parses `PATTERN=TYPE` (`attn_v=q8_0`, `blk\.[0-3]\.ffn_down=Q6_K`): TYPE is a ggml type
    /// name, case-insensitive.
    ///
    /// # Errors
    /// [`QuantizeError`] for a missing `=`, an empty pattern or type, an unknown type or a bad
    /// pattern.
    pub fn parse(s: &str) -> Result<Self> {
        let bad = |reason: String| Err(Error::from(QuantizeError::refused(reason)));
        let Some((pattern, ty)) = s.split_once('=') else {
            return bad(format!("malformed tensor type {s:?} (expected PATTERN=TYPE)"));
        };
        if pattern.is_empty() {
            return bad(format!("missing tensor name in {s:?}"));
        }
        if ty.is_empty() {
            return bad(format!("missing quantization type in {s:?}"));
        }
        let Ok(dtype) = ty.parse::<GgmlType>() else {
            return bad(format!("invalid quantization type {ty:?} in {s:?}"));
        };
        Self::new(pattern, dtype)
    }

    /// Whether the pattern matches somewhere in `name`.
    pub fn matches(&self, name: &str) -> bool {
        self.regex.is_match(name)
    }
}

/// The value of a `--override-kv KEY=TYPE:VALUE` option, as llama-quantize writes it.
#[derive(Clone, Debug, PartialEq)]
pub enum KvOverrideValue {
    /// `int:N`: written as UINT32 of |N| (truncated to 32 bits), as llama-quantize does.
    Int(i64),
    /// `float:X`: written as FLOAT32.
    Float(f64),
    /// `bool:true` or `bool:false`.
    Bool(bool),
    /// `str:TEXT`, at most 127 bytes.
    Str(String),
}

/// A `--override-kv` option: `key` is set (replacing any earlier value and moving to the end).
#[derive(Clone, Debug, PartialEq)]
pub struct KvOverride {
    /// The key (1 to 127 bytes).
    pub key: String,
    /// The value.
    pub value: KvOverrideValue,
}

impl KvOverride {
    /// Parses `KEY=TYPE:VALUE` as llama.cpp's `string_parse_kv_override`: TYPE is `int`, `float`,
    /// `bool` or `str`; `int` and `float` values are read as C's `atol`/`atof` read them. Unlike
    /// llama-quantize, which reads text that is not a number as its longest leading number (0 if
    /// none: `int:abc` writes 0), a value that is not wholly a number is refused.
    ///
    /// # Errors
    /// [`QuantizeError`] for a missing `=`, an empty key or one of 128 bytes
    /// or more, an unknown TYPE, an `int` value that is not an integer or a `float` value that is
    /// not a number, a bool other than `true`/`false`, or a string over 127 bytes.
    pub fn parse(s: &str) -> Result<Self> {
        let bad = |why: &str| Err(Error::from(QuantizeError::refused(format!("malformed KV override {s:?}: {why}"))));
        let Some((key, rest)) = s.split_once('=') else { return bad("expected KEY=TYPE:VALUE") };
        if key.is_empty() || key.len() >= 128 {
            return bad("the key must be 1 to 127 bytes");
        }
        // llama-quantize reads `int:abc` as 0 and `int:12abc` as 12 without a word (C's `atol`);
        // text that is not a whole number is refused here instead. A number reads the same.
        let value = if let Some(v) = rest.strip_prefix("int:") {
            if v.trim().parse::<i64>().is_err() {
                return bad("the value is not an integer");
            }
            KvOverrideValue::Int(c_atol(v))
        } else if let Some(v) = rest.strip_prefix("float:") {
            if v.trim().parse::<f64>().is_err() {
                return bad("the value is not a number");
            }
            KvOverrideValue::Float(c_atof(v))
        } else if let Some(v) = rest.strip_prefix("bool:") {
            match v {
                "true" => KvOverrideValue::Bool(true),
                "false" => KvOverrideValue::Bool(false),
                _ => return bad("invalid boolean value (true or false)"),
            }
        } else if let Some(v) = rest.strip_prefix("str:") {
            if v.len() > 127 {
                return bad("value cannot exceed 127 chars");
            }
            KvOverrideValue::Str(v.to_owned())
        } else {
            return bad("invalid type (int, float, bool or str)");
        };
        Ok(KvOverride { key: key.to_owned(), value })
    }

    /// The value as written to the output.
    pub fn to_value(&self) -> Value {
        match &self.value {
            KvOverrideValue::Int(n) => Value::U32(n.unsigned_abs() as u32),
            KvOverrideValue::Float(x) => Value::F32(*x as f32),
            KvOverrideValue::Bool(b) => Value::Bool(*b),
            KvOverrideValue::Str(s) => Value::String(s.clone()),
        }
    }
}

/// The integer C's `strtol` reads at the start of `s` (leading white space, an optional sign,
/// digits; saturating), or `None` without digits.
fn leading_int(s: &str) -> Option<i64> {
    let t = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let n = digits.bytes().take_while(u8::is_ascii_digit).count();
    let v = digits.get(..n).filter(|d| !d.is_empty())?.bytes().fold(0i64, |a, b| {
        let d = i64::from(b - b'0');
        a.saturating_mul(10).saturating_add(if neg { -d } else { d })
    });
    Some(v)
}

/// C's `atol`: [`leading_int`], 0 without digits.
fn c_atol(s: &str) -> i64 {
    leading_int(s).unwrap_or(0)
}

/// C's `atof` for decimal numbers, `inf` and `nan`: the longest leading prefix that is a number.
fn c_atof(s: &str) -> f64 {
    let t = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let b = t.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let lower = t.get(i..).unwrap_or_default().to_ascii_lowercase();
    for word in ["infinity", "inf", "nan"] {
        if lower.starts_with(word) {
            return t.get(..i + word.len()).and_then(|p| p.parse().ok()).unwrap_or(0.0);
        }
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > start
    };
    let mut any = digits(&mut i);
    if b.get(i) == Some(&b'.') {
        i += 1;
        any |= digits(&mut i);
    }
    if !any {
        return 0.0;
    }
    let mantissa_end = i;
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        i = if digits(&mut j) { j } else { mantissa_end };
    }
    t.get(..i).and_then(|p| p.parse().ok()).unwrap_or(0.0)
}

/// What [`plan`] and [`requantize`](super::requant::requantize) do: llama-quantize's options.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct QuantizeParams {
    /// The file type (the mix of tensor types), e.g. [`LlamaFileType::Q4_K_M`].
    pub ftype: LlamaFileType,
    /// `COPY`: copy every tensor as it is (the file is still rewritten in llama-quantize's
    /// layout, and `general.file_type` keeps the source's).
    pub only_copy: bool,
    /// `--pure`: no mix rules; every quantizable tensor gets the default type (user types and
    /// fallbacks still apply).
    pub pure: bool,
    /// `--leave-output-tensor`: keep `output.weight` as it is.
    pub leave_output_tensor: bool,
    /// `--output-tensor-type`: the type of `output.weight` (and of a tied `token_embd.weight`
    /// the mix rules reach).
    pub output_tensor_type: Option<GgmlType>,
    /// `--token-embedding-type`: the type of `token_embd.weight` and `per_layer_token_embd.weight`.
    pub token_embedding_type: Option<GgmlType>,
    /// `--tensor-type PATTERN=TYPE`, in order; the first that matches a name wins.
    pub tensor_types: Vec<TensorTypeOverride>,
    /// `--override-kv KEY=TYPE:VALUE`, in order.
    pub kv_overrides: Vec<KvOverride>,
    /// Our own addition: names matching one of these globs ([`NameGlobs`] gives the syntax) are
    /// kept.
    pub exclude: Vec<String>,
    /// Worker threads for the conversion (`None`: rayon's default, one per core). The output
    /// does not depend on it. Without the `parallel` feature the conversion runs on the calling
    /// thread and this is ignored.
    pub threads: Option<usize>,
    /// `--imatrix`: the importance matrix, after `--include-weights`/`--exclude-weights`
    /// ([`Imatrix::include_only`], [`Imatrix::exclude`]). One with no entries left counts as
    /// none, as in llama-quantize. With one, the mix rules change where llama-quantize's do
    /// (`has_imatrix`: IQ3_XXS `attn_v` and `ffn_down`, IQ4_NL/IQ4_XS `ffn_down`, Q4_0/Q5_0
    /// `ffn_down` of the first eighth of the layers → Q4_1/Q5_1), the tensors with an entry are
    /// quantized with its weights, and the `quantize.imatrix.*` keys are written
    /// ([`Imatrix::kv_overrides`]).
    pub imatrix: Option<std::sync::Arc<Imatrix>>,
    /// `--keep-split`: write one output shard per input shard, each with the tensors of its input
    /// shard, in file order (llama-quantize then takes the tensors, for the plan's counters too, in
    /// the order of their input shard and data offset instead of its usual by-layer order). See
    /// [`requantize_sharded`](super::requant::requantize_sharded) for the files written.
    pub keep_split: bool,
}

impl QuantizeParams {
    /// The importance matrix in force: [`QuantizeParams::imatrix`] if it has entries left.
    pub fn active_imatrix(&self) -> Option<&Imatrix> {
        self.imatrix.as_deref().filter(|m| !m.entries.is_empty())
    }

    /// llama-quantize's defaults for `ftype`: mix rules on, nothing overridden.
    pub fn new(ftype: LlamaFileType) -> Self {
        QuantizeParams {
            ftype,
            only_copy: false,
            pure: false,
            leave_output_tensor: false,
            output_tensor_type: None,
            token_embedding_type: None,
            tensor_types: Vec::new(),
            kv_overrides: Vec::new(),
            exclude: Vec::new(),
            threads: None,
            imatrix: None,
            keep_split: false,
        }
    }
}

/// Why a tensor is copied as it is ([`Rule::Kept`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kept {
    /// `COPY` was asked for.
    Copy,
    /// Fewer than two dimensions (norms, biases, scalars).
    OneDimensional,
    /// The name does not end in `weight`.
    NotWeight,
    /// llama.cpp never quantizes tensors whose name contains (or is) this.
    NeverQuantized(&'static str),
    /// `output.weight` with `--leave-output-tensor`.
    OutputLeft,
    /// The name matches this `exclude` glob.
    Excluded(String),
}

/// Which llama-quantize mix rule chose a type ([`Rule::Mix`]); see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MixRule {
    /// `output.weight`, or `token_embd.weight` of a model without one: Q6_K (Q5_K for IQ1/IQ2/
    /// IQ3_XXS file types, Q8_0 for MXFP4_MOE, falcon, or rows that are not whole blocks).
    Output,
    /// `token_embd.weight` of IQ1/IQ2/IQ3_XXS/TQ/Q2_0 file types.
    TokenEmbd,
    /// MXFP4_MOE: expert tensors (three dimensions) MXFP4, every other Q8_0.
    Mxfp4Moe,
    /// `attn_v`/`attn_qkv`/`attn_kv_b` by file type, layer position, grouped-query factor,
    /// expert count and the 70B shape.
    AttnV,
    /// `attn_k` (8 experts; IQ3_XS, IQ3_XXS).
    AttnK,
    /// `attn_q` (IQ3_XS, IQ3_XXS).
    AttnQ,
    /// `attn_qkv` (Q3_K_M/L, IQ3_M, Q4_K_M, Q5_K_M).
    AttnQkv,
    /// `attn_output` (Q2_K, Q3_K_M/L, IQ3_XXS, IQ3_M, IQ1/IQ2, 8 experts).
    AttnOutput,
    /// `ffn_down` by file type and layer position.
    FfnDown,
    /// `ffn_gate` (IQ3_XS, middle layers).
    FfnGate,
    /// `ffn_up` (IQ3_XS, middle layers).
    FfnUp,
    /// glm5-next: `attn_q_a`, `attn_q_b`, `nextn.eh_proj` never below Q8_0.
    Glm5NextQ8,
}

/// Which user option chose a type ([`Rule::Override`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Override {
    /// `--tensor-type PATTERN=TYPE`, with the pattern.
    TensorType(String),
    /// `--output-tensor-type`.
    OutputTensorType,
    /// `--token-embedding-type`.
    TokenEmbeddingType,
}

/// Why a tensor gets its type.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rule {
    /// Not quantized: copied as it is.
    Kept(Kept),
    /// The file type's default type.
    Default,
    /// Promoted (or demoted) by a llama-quantize mix rule.
    Mix(MixRule),
    /// Chosen by a user option.
    Override(Override),
    /// The row length is not a multiple of `wanted`'s block size (the type `by` chose).
    Fallback {
        /// The type the rule `by` chose.
        wanted: GgmlType,
        /// The rule that chose `wanted`.
        by: Box<Rule>,
    },
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::Kept(Kept::Copy) => f.write_str("kept (COPY)"),
            Rule::Kept(Kept::OneDimensional) => f.write_str("kept (1-D)"),
            Rule::Kept(Kept::NotWeight) => f.write_str("kept (name does not end in weight)"),
            Rule::Kept(Kept::NeverQuantized(p)) => write!(f, "kept (never quantized: {p})"),
            Rule::Kept(Kept::OutputLeft) => f.write_str("kept (--leave-output-tensor)"),
            Rule::Kept(Kept::Excluded(p)) => write!(f, "kept (--exclude {p})"),
            Rule::Default => f.write_str("default"),
            Rule::Mix(m) => {
                let name = match m {
                    MixRule::Output => "output",
                    MixRule::TokenEmbd => "token_embd",
                    MixRule::Mxfp4Moe => "mxfp4_moe",
                    MixRule::AttnV => "attn_v",
                    MixRule::AttnK => "attn_k",
                    MixRule::AttnQ => "attn_q",
                    MixRule::AttnQkv => "attn_qkv",
                    MixRule::AttnOutput => "attn_output",
                    MixRule::FfnDown => "ffn_down",
                    MixRule::FfnGate => "ffn_gate",
                    MixRule::FfnUp => "ffn_up",
                    MixRule::Glm5NextQ8 => "glm5-next q8_0",
                };
                write!(f, "mix: {name}")
            }
            Rule::Override(Override::TensorType(p)) => write!(f, "--tensor-type {p}"),
            Rule::Override(Override::OutputTensorType) => f.write_str("--output-tensor-type"),
            Rule::Override(Override::TokenEmbeddingType) => f.write_str("--token-embedding-type"),
            Rule::Fallback { wanted, by } => write!(f, "fallback from {wanted} ({by})"),
        }
    }
}

/// One tensor of a [`plan`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TensorPlan {
    /// The tensor's name.
    pub name: String,
    /// Its stored dims `ne` (fastest first) as llama-quantize writes them: trailing dims of 1
    /// dropped (`ggml_n_dims`), at least one.
    pub ne: Ne,
    /// Its type in the source.
    pub source: GgmlType,
    /// Its type in the output (equal to `source` when kept or when the rules choose it).
    pub target: GgmlType,
    /// What chose `target`.
    pub rule: Rule,
    /// llama-quantize refuses to write this tensor without an importance matrix.
    pub requires_imatrix: bool,
}

impl TensorPlan {
    /// Whether the data is converted (`target` differs from `source`).
    pub fn converts(&self) -> bool {
        self.target != self.source
    }
}

/// The model facts the rules use, read from the metadata as llama.cpp's loader does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct ModelFacts {
    arch: String,
    n_layer_all: u32,
    n_expert: u32,
    n_head: u32,
    n_head_kv: u32,
    is_70b: bool,
}

impl ModelFacts {
    fn read<S: Source>(src: &Gguf<S>, overrides: &[KvOverride]) -> ModelFacts {
        // The loader keeps the first override of a key.
        let over = |key: &str| overrides.iter().find(|o| o.key == key).map(|o| &o.value);
        let arch = match over("general.architecture") {
            Some(KvOverrideValue::Str(s)) => s.clone(),
            _ => src.get("general.architecture").and_then(|v| v.as_str()).unwrap_or_default().to_owned(),
        };
        // An integer key, or element 0 of an integer array (per-layer values).
        let int = |key: String| -> Option<u32> {
            if let Some(KvOverrideValue::Int(n)) = over(&key) {
                return Some(*n as u32);
            }
            let v = src.get(&key)?;
            let v = match v.as_array() {
                Some(a) => a.get(0)?,
                None => v,
            };
            v.as_u64().map(|n| n as u32).or_else(|| v.as_i64().map(|n| n as u32))
        };
        let n_layer_all = int(format!("{arch}.block_count")).unwrap_or(0);
        let n_nextn = int(format!("{arch}.nextn_predict_layers")).unwrap_or(0);
        let n_expert = int(format!("{arch}.expert_count")).unwrap_or(0);
        let n_head = int(format!("{arch}.attention.head_count")).unwrap_or(0);
        let n_head_kv = int(format!("{arch}.attention.head_count_kv")).unwrap_or(n_head);
        let n_layer = n_layer_all.saturating_sub(n_nextn);
        let is_70b = match arch.as_str() {
            "llama" => n_expert != 8 && n_layer == 80 && n_head != n_head_kv,
            "deci" | "olmo" | "qwen2" => n_layer == 80,
            "jais2" => n_layer == 68,
            _ => false,
        };
        ModelFacts { arch, n_layer_all, n_expert, n_head, n_head_kv, is_70b }
    }

    fn n_gqa(&self) -> u32 {
        self.n_head.checked_div(self.n_head_kv).unwrap_or(0)
    }
}

/// `sscanf(name, "blk.%d.", &layer)`: the layer number after `blk.`, if any.
fn blk_layer(name: &str) -> Option<i32> {
    // glibc stores the `long` it read into the `int`: truncation.
    name.strip_prefix("blk.").and_then(leading_int).map(|v| v as i32)
}

/// llama.cpp's `weight_name_comparer`: by layer number (`blk.N.`; -1 for none), then by name.
pub(crate) fn llama_order(a: &str, b: &str) -> std::cmp::Ordering {
    let (la, lb) = (blk_layer(a).unwrap_or(-1), blk_layer(b).unwrap_or(-1));
    la.cmp(&lb).then_with(|| a.cmp(b))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Category {
    TokenEmbd,
    AttnQ,
    AttnV,
    AttnK,
    AttnQkv,
    AttnKvB,
    AttnOutput,
    FfnUp,
    FfnGate,
    FfnDown,
    Output,
    Other,
}

fn category(name: &str) -> Category {
    if name == "output.weight" {
        return Category::Output;
    }
    if name == "token_embd.weight" || name == "per_layer_token_embd.weight" {
        return Category::TokenEmbd;
    }
    const BY_PART: [(&str, Category); 9] = [
        ("attn_qkv.weight", Category::AttnQkv),
        ("attn_kv_b.weight", Category::AttnKvB),
        ("attn_v.weight", Category::AttnV),
        ("attn_k.weight", Category::AttnK),
        ("attn_q.weight", Category::AttnQ),
        ("attn_output.weight", Category::AttnOutput),
        ("ffn_up", Category::FfnUp),
        ("ffn_gate", Category::FfnGate),
        ("ffn_down", Category::FfnDown),
    ];
    BY_PART.iter().find(|(p, _)| name.contains(p)).map_or(Category::Other, |&(_, c)| c)
}

fn is_attn_v(c: Category) -> bool {
    matches!(c, Category::AttnV | Category::AttnQkv | Category::AttnKvB)
}

/// Substrings that keep a tensor as it is (`tensor_allows_quantization`).
const NEVER: &[&str] = &[
    "_norm.weight",
    "ffn_gate_inp.weight",
    "ffn_gate_tid2eid.weight",
    "altup",
    "laurel",
    "per_layer_model_proj",
    "ssm_conv1d",
    "shortconv.conv.weight",
    "indexer.k_proj.weight",
    "indexer.q_proj.weight",
    "time_mix_first.weight",
    "time_mix_w0.weight",
    "time_mix_w1.weight",
    "time_mix_w2.weight",
    "time_mix_v0.weight",
    "time_mix_v1.weight",
    "time_mix_v2.weight",
    "time_mix_a0.weight",
    "time_mix_a1.weight",
    "time_mix_a2.weight",
    "time_mix_g1.weight",
    "time_mix_g2.weight",
    "time_mix_decay_w1.weight",
    "time_mix_decay_w2.weight",
    "time_mix_lerp_fused.weight",
    "attn_rel_b.weight",
    ".position_embd",
    "sam.pos_embd",
    "sam.neck.",
    "sam.net_",
    ".rel_pos",
    ".patch_embd",
    ".patch_merger",
    "a.rvq.codebook",
    "mm.a.code_embd",
];

/// More substrings kept as they are in glm5-next models.
const NEVER_GLM5_NEXT: &[&str] = &[
    "hc_",
    "indexer.attn_q_b",
    "indexer.attn_k",
    "indexer.proj",
    "indexer_compressor_gate",
    "indexer_compressor_ape",
    "ssm_f_a.weight",
    "ssm_f_b.weight",
    "ssm_g_a.weight",
    "ssm_g_b.weight",
    "ssm_beta.weight",
    "attn_kv_a_mqa.weight",
    "attn_k_b.weight",
    "attn_v_b.weight",
];

/// `ggml_n_dims`: the stored dims without trailing 1s, at least one.
fn trimmed_ne(ne: &Ne) -> Ne {
    let ne = ne.dims();
    let n = ne.iter().rposition(|&d| d != 1).map_or(1, |i| i + 1);
    Ne::new(ne.get(..n).unwrap_or(&[1])).unwrap_or_default()
}

/// `tensor_allows_quantization`, with our `exclude` globs: `None` if the tensor may be
/// quantized, else why not.
fn kept_reason(params: &QuantizeParams, exclude: &NameGlobs, arch: &str, name: &str, ne: &[u64]) -> Option<Kept> {
    if params.only_copy {
        return Some(Kept::Copy);
    }
    if ne.len() < 2 {
        return Some(Kept::OneDimensional);
    }
    if !name.ends_with("weight") {
        return Some(Kept::NotWeight);
    }
    if let Some(p) = NEVER.iter().find(|p| name.contains(*p)) {
        return Some(Kept::NeverQuantized(p));
    }
    if params.leave_output_tensor && name == "output.weight" {
        return Some(Kept::OutputLeft);
    }
    for exact in ["position_embd.weight", "token_types.weight"] {
        if name == exact {
            return Some(Kept::NeverQuantized(exact));
        }
    }
    if arch == "glm5-next" {
        if let Some(p) = NEVER_GLM5_NEXT.iter().find(|p| name.contains(*p)) {
            return Some(Kept::NeverQuantized(p));
        }
    }
    exclude.first_match(name).map(|p| Kept::Excluded(p.to_owned()))
}

/// llama-quantize's running state over the tensors (`quantize_state_impl`).
struct State<'p> {
    params: &'p QuantizeParams,
    facts: ModelFacts,
    n_attention_wv: i64,
    n_layer: i64,
    i_attention_wv: i64,
    i_ffn_down: i64,
    i_ffn_gate: i64,
    i_ffn_up: i64,
    has_tied_embeddings: bool,
}

fn use_more_bits(i: i64, n: i64) -> bool {
    i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2
}

impl State<'_> {
    /// `layer_info`: the layer of an ffn tensor, from its name when the model has experts.
    fn layer(&self, counter: i64, name: &str) -> Result<(i64, i64)> {
        let n = self.n_layer;
        if self.facts.n_expert.max(1) > 1 {
            let Some(i) = blk_layer(name).map(i64::from) else {
                return Err(Error::from(QuantizeError::refused(format!(
                    "failed to determine layer for tensor {name}"
                ))));
            };
            if i < 0 || i >= n {
                return Err(Error::from(QuantizeError::refused(format!(
                    "bad layer {i} for tensor {name}: must be in [0, {n})"
                ))));
            }
            return Ok((i, n));
        }
        Ok((counter, n))
    }

    /// `llama_tensor_get_type_impl`: the mix rules.
    fn mix(&mut self, ty: GgmlType, name: &str, ne: &[u64], cat: Category) -> Result<(GgmlType, Rule)> {
        use GgmlType as T;
        use LlamaFileType as F;
        let ft = self.params.ftype;
        let facts = &self.facts;
        let arch = facts.arch.as_str();
        let falcon = arch == "falcon";
        let n_gqa = facts.n_gqa();
        let n_expert = facts.n_expert;
        let has_imatrix = self.params.active_imatrix().is_some();
        let mut new = ty;
        let mix = |r| Rule::Mix(r);

        if arch == "glm5-next"
            && (name.contains("attn_q_a") || name.contains("attn_q_b") || name.contains("nextn.eh_proj"))
            && !matches!(new, T::F32 | T::BF16 | T::F16)
        {
            return Ok((T::Q8_0, mix(MixRule::Glm5NextQ8)));
        }
        let iq12 = matches!(ft, F::IQ2_XXS | F::IQ2_XS | F::IQ1_S | F::IQ2_S | F::IQ2_M | F::IQ1_M);
        let mut rule = Rule::Default;
        if cat == Category::Output || (self.has_tied_embeddings && cat == Category::TokenEmbd) {
            if let Some(t) = self.params.output_tensor_type {
                return Ok((t, Rule::Override(Override::OutputTensorType)));
            }
            let nx = ne.first().copied().unwrap_or(1);
            new = if ft == F::MXFP4_MOE || falcon || nx % new.block_size() != 0 {
                T::Q8_0
            } else if iq12 || ft == F::IQ3_XXS {
                T::Q5_K
            } else if new != T::Q8_0 {
                T::Q6_K
            } else {
                new
            };
            rule = mix(MixRule::Output);
        } else if ft == F::MXFP4_MOE {
            let bailing_expert =
                arch == "bailingmoe3" && matches!(cat, Category::FfnUp | Category::FfnGate | Category::FfnDown);
            let ne2 = ne.get(2).copied().unwrap_or(1);
            new = if ne2 > 1 && (arch != "bailingmoe3" || bailing_expert) { T::MXFP4 } else { T::Q8_0 };
            rule = mix(MixRule::Mxfp4Moe);
        } else if cat == Category::TokenEmbd {
            if let Some(t) = self.params.token_embedding_type {
                return Ok((t, Rule::Override(Override::TokenEmbeddingType)));
            }
            new = match ft {
                F::IQ2_XXS | F::IQ2_XS | F::IQ1_S | F::IQ1_M => T::Q2_K,
                F::IQ2_S | F::IQ2_M | F::IQ3_XXS => T::IQ3_S,
                F::TQ1_0 | F::TQ2_0 | F::Q2_0 => T::Q4_K,
                _ => new,
            };
            rule = mix(MixRule::TokenEmbd);
        } else if iq12 {
            let iq2sm = matches!(ft, F::IQ2_S | F::IQ2_M);
            if is_attn_v(cat) {
                new = if n_gqa >= 4 || n_expert >= 4 {
                    T::Q4_K
                } else if iq2sm {
                    T::IQ3_S
                } else {
                    T::Q2_K
                };
                self.i_attention_wv += 1;
                rule = mix(MixRule::AttnV);
            } else if n_expert == 8 && cat == Category::AttnK {
                new = T::Q4_K;
                rule = mix(MixRule::AttnK);
            } else if cat == Category::FfnDown {
                if self.i_ffn_down < self.n_layer / 8 {
                    new = if iq2sm { T::IQ3_S } else { T::Q2_K };
                }
                self.i_ffn_down += 1;
                rule = mix(MixRule::FfnDown);
            } else if cat == Category::AttnOutput {
                if n_expert == 8 {
                    new = T::Q5_K;
                } else if matches!(ft, F::IQ1_S | F::IQ1_M) {
                    new = T::IQ2_XXS;
                } else if iq2sm {
                    new = T::IQ3_S;
                }
                rule = mix(MixRule::AttnOutput);
            }
        } else if is_attn_v(cat) {
            let i = self.i_attention_wv;
            new = match ft {
                F::Q2_K => {
                    if n_gqa >= 4 {
                        T::Q4_K
                    } else {
                        T::Q3_K
                    }
                }
                F::Q2_K_S if n_gqa >= 4 => T::Q4_K,
                F::IQ3_XXS => {
                    if n_gqa >= 4 {
                        T::Q4_K
                    } else if has_imatrix {
                        T::IQ3_XXS
                    } else {
                        T::IQ3_S
                    }
                }
                F::IQ3_XS | F::IQ3_S if n_gqa >= 4 => T::Q4_K,
                F::IQ3_M => T::Q4_K,
                F::Q3_K_M => {
                    if i < 2 {
                        T::Q5_K
                    } else {
                        T::Q4_K
                    }
                }
                F::Q3_K_L => T::Q5_K,
                F::IQ4_NL | F::IQ4_XS if n_gqa >= 4 => T::Q5_K,
                F::Q4_K_M | F::Q5_K_M if use_more_bits(i, self.n_attention_wv) => T::Q6_K,
                F::Q4_K_S if i < 4 => T::Q5_K,
                _ => new,
            };
            if facts.is_70b && matches!(new, T::Q3_K | T::Q4_K) {
                new = T::Q5_K;
            }
            if n_expert == 8 {
                new = T::Q8_0;
            }
            self.i_attention_wv += 1;
            rule = mix(MixRule::AttnV);
        } else if cat == Category::AttnK {
            if n_expert == 8 {
                new = T::Q8_0;
            } else if ft == F::IQ3_XS {
                new = T::IQ3_XXS;
            } else if ft == F::IQ3_XXS {
                new = T::IQ2_S;
            }
            rule = mix(MixRule::AttnK);
        } else if cat == Category::AttnQ {
            if ft == F::IQ3_XS {
                new = T::IQ3_XXS;
            } else if ft == F::IQ3_XXS {
                new = T::IQ2_S;
            }
            rule = mix(MixRule::AttnQ);
        } else if cat == Category::FfnDown {
            let (i, n) = self.layer(self.i_ffn_down, name)?;
            new = match ft {
                F::Q2_K => T::Q3_K,
                F::Q2_K_S => {
                    if i < n / 8 {
                        T::Q4_K
                    } else {
                        new
                    }
                }
                F::IQ3_XXS if !has_imatrix => {
                    if i < n / 8 {
                        T::Q4_K
                    } else {
                        T::Q3_K
                    }
                }
                F::Q3_K_M => {
                    if i < n / 16 {
                        T::Q5_K
                    } else if !falcon || use_more_bits(i, n) {
                        T::Q4_K
                    } else {
                        T::Q3_K
                    }
                }
                F::IQ3_M if i < n / 8 || (n_expert == 8 && use_more_bits(i, n)) => T::Q4_K,
                F::Q3_K_L => {
                    if falcon {
                        T::Q4_K
                    } else {
                        T::Q5_K
                    }
                }
                F::Q4_K_M => {
                    if falcon {
                        if i < n / 16 {
                            T::Q6_K
                        } else if use_more_bits(i, n) {
                            T::Q5_K
                        } else {
                            T::Q4_K
                        }
                    } else if use_more_bits(i, n) {
                        T::Q6_K
                    } else {
                        new
                    }
                }
                F::IQ4_NL | F::IQ4_XS if i < n / 8 && !has_imatrix => T::Q5_K,
                F::Q5_K_M if use_more_bits(i, n) => T::Q6_K,
                F::Q4_K_S if !falcon && i < n / 8 => T::Q5_K,
                // Only with an importance matrix, as llama.cpp guards its first ffn_down layers.
                F::Q4_0 if has_imatrix && i < n / 8 => T::Q4_1,
                F::Q5_0 if has_imatrix && i < n / 8 => T::Q5_1,
                _ => new,
            };
            self.i_ffn_down += 1;
            rule = mix(MixRule::FfnDown);
        } else if cat == Category::AttnOutput {
            if !falcon {
                if n_expert == 8 {
                    if matches!(
                        ft,
                        F::Q2_K
                            | F::IQ3_XS
                            | F::IQ3_XXS
                            | F::Q3_K_S
                            | F::Q3_K_M
                            | F::IQ4_NL
                            | F::Q4_K_S
                            | F::Q4_K_M
                            | F::IQ3_S
                            | F::IQ3_M
                            | F::IQ4_XS
                    ) {
                        new = T::Q5_K;
                    }
                } else {
                    new = match ft {
                        F::Q2_K => T::Q3_K,
                        F::IQ3_XXS => T::IQ3_S,
                        F::Q3_K_M | F::IQ3_M => T::Q4_K,
                        F::Q3_K_L => T::Q5_K,
                        _ => new,
                    };
                }
            } else if ft == F::Q3_K_L {
                new = T::Q4_K;
            }
            rule = mix(MixRule::AttnOutput);
        } else if cat == Category::AttnQkv {
            new = match ft {
                F::Q3_K_M | F::Q3_K_L | F::IQ3_M => T::Q4_K,
                F::Q4_K_M => T::Q5_K,
                F::Q5_K_M => T::Q6_K,
                _ => new,
            };
            rule = mix(MixRule::AttnQkv);
        } else if cat == Category::FfnGate || cat == Category::FfnUp {
            let counter = if cat == Category::FfnGate { self.i_ffn_gate } else { self.i_ffn_up };
            let (i, n) = self.layer(counter, name)?;
            if ft == F::IQ3_XS && i >= n / 8 && i < 7 * n / 8 {
                new = T::IQ3_XXS;
            }
            if cat == Category::FfnGate {
                self.i_ffn_gate += 1;
                rule = mix(MixRule::FfnGate);
            } else {
                self.i_ffn_up += 1;
                rule = mix(MixRule::FfnUp);
            }
        }
        Ok((new, if new == ty { Rule::Default } else { rule }))
    }

    /// `llama_tensor_get_type` for a tensor that may be quantized.
    fn choose(&mut self, name: &str, ne: &[u64], cat: Category) -> Result<(GgmlType, Rule)> {
        let p = self.params;
        if let (Some(t), Category::TokenEmbd) = (p.token_embedding_type, cat) {
            let named = name == "per_layer_token_embd.weight" && p.tensor_types.iter().any(|o| o.matches(name));
            if !named {
                return Ok((t, Rule::Override(Override::TokenEmbeddingType)));
            }
        }
        if let (Some(t), Category::Output) = (p.output_tensor_type, cat) {
            return Ok((t, Rule::Override(Override::OutputTensorType)));
        }
        let default = p.ftype.default_type();
        if !default.is_quantized() {
            return Ok((default, Rule::Default));
        }
        let (ty, rule) = match p.tensor_types.iter().find(|o| o.matches(name)) {
            Some(o) => (o.dtype, Rule::Override(Override::TensorType(o.pattern.clone()))),
            None if !p.pure => self.mix(default, name, ne, cat)?,
            None => (default, Rule::Default),
        };
        fallback(name, ne, ty, rule)
    }
}

/// `tensor_type_fallback`: a type whose blocks fit the rows.
fn fallback(name: &str, ne: &[u64], ty: GgmlType, rule: Rule) -> Result<(GgmlType, Rule)> {
    use GgmlType as T;
    let ncols = ne.first().copied().unwrap_or(1);
    if ncols % ty.block_size() == 0 {
        return Ok((ty, rule));
    }
    let mut to = match ty {
        T::IQ1_S | T::IQ1_M | T::IQ2_XXS | T::IQ2_XS | T::IQ2_S | T::IQ3_XXS | T::IQ3_S | T::IQ4_XS => T::IQ4_NL,
        T::Q2_0 | T::Q2_K | T::Q3_K | T::TQ1_0 | T::TQ2_0 => T::Q4_0,
        T::Q4_K => T::Q5_0,
        T::Q5_K => T::Q5_1,
        T::Q6_K => T::Q8_0,
        t if t.block_size() <= 32 => t,
        t => {
            return Err(Error::from(QuantizeError::refused(format!(
                "no tensor type fallback is defined for type {t} (tensor {name}, {ncols} columns)"
            ))))
        }
    };
    if ncols % to.block_size() != 0 {
        to = T::F16;
    }
    Ok((to, Rule::Fallback { wanted: ty, by: Box::new(rule) }))
}

/// `tensor_requires_imatrix`.
fn requires_imatrix(name: &str, target: GgmlType, ftype: LlamaFileType) -> bool {
    use GgmlType as T;
    if matches!(name, "token_embd.weight" | "per_layer_token_embd.weight" | "output.weight") {
        return false;
    }
    match target {
        T::IQ3_XXS | T::IQ2_XXS | T::IQ2_XS | T::IQ2_S | T::IQ1_M | T::IQ1_S => true,
        T::Q2_K => ftype == LlamaFileType::Q2_K_S,
        _ => false,
    }
}

/// The tensors of `src` in llama-quantize's output order: by layer number (`blk.N.`, tensors
/// without one first), then by name.
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

/// Each tensor's type in llama-quantize's output for `params`, in its output order
/// ([`llama_tensor_order`]; with [`QuantizeParams::keep_split`], file order), with the rule that
/// chose it; see the [module docs](self).
///
/// # Errors
/// [`QuantizeError`] where llama-quantize fails: a row length no fallback fits (e.g. Q1_0 rows
/// that are not whole 128-blocks), or, in a model with experts, an `ffn_*` tensor whose name has
/// no layer number in `[0, block_count)`; [`QuantizeError::Refused`]
/// for an `exclude` pattern that is not a valid glob ([`NameGlobs`]).
pub fn plan<S: Source>(src: &Gguf<S>, params: &QuantizeParams) -> Result<Vec<TensorPlan>> {
    plan_shards(&[src], params)
}

/// [`plan`] for a split model (read from shard 0's metadata, over the tensors of every shard), in
/// its output order: by layer then name, or with [`QuantizeParams::keep_split`] shard by shard in
/// file order.
///
/// # Errors
/// As [`plan`].
#[cfg(feature = "mmap")]
pub fn plan_sharded(model: &crate::container::ShardedGguf, params: &QuantizeParams) -> Result<Vec<TensorPlan>> {
    let shards: Vec<_> = (0..model.shard_count()).filter_map(|i| model.shard(i)).collect();
    plan_shards(&shards, params)
}

/// [`plan`] over the tensors of `shards` (metadata from the first).
pub(crate) fn plan_shards<S: Source>(shards: &[&Gguf<S>], params: &QuantizeParams) -> Result<Vec<TensorPlan>> {
    let Some(meta) = shards.first() else { return Ok(Vec::new()) };
    let tensors: Vec<TensorInfo<'_>> = ordered_tensors(shards, params.keep_split).into_iter().map(|(_, t)| t).collect();
    plan_ordered(meta, &tensors, params)
}

/// The plan of `tensors`, taken in the order given, with the model facts of `meta`'s metadata.
fn plan_ordered<S: Source>(
    meta: &Gguf<S>,
    tensors: &[TensorInfo<'_>],
    params: &QuantizeParams,
) -> Result<Vec<TensorPlan>> {
    let exclude = NameGlobs::new(&params.exclude)?;
    let facts = ModelFacts::read(meta, &params.kv_overrides);
    let cats: Vec<Category> = tensors.iter().map(|t| category(t.name)).collect();
    let mut st = State {
        params,
        n_attention_wv: cats.iter().filter(|&&c| is_attn_v(c)).count() as i64,
        n_layer: i64::from(facts.n_layer_all),
        i_attention_wv: 0,
        i_ffn_down: 0,
        i_ffn_gate: 0,
        i_ffn_up: 0,
        has_tied_embeddings: !cats.contains(&Category::Output),
        facts,
    };
    let mut out = Vec::with_capacity(tensors.len());
    for (t, &cat) in tensors.iter().zip(&cats) {
        let ne = trimmed_ne(&t.ne());
        let (target, rule) = match kept_reason(params, &exclude, &st.facts.arch, t.name, ne.dims()) {
            Some(k) => (t.dtype, Rule::Kept(k)),
            None => st.choose(t.name, ne.dims(), cat)?,
        };
        let requires_imatrix = !matches!(rule, Rule::Kept(_)) && requires_imatrix(t.name, target, params.ftype);
        out.push(TensorPlan { name: t.name.to_owned(), ne, source: t.dtype, target, rule, requires_imatrix });
    }
    Ok(out)
}

/// The `llama_ftype` llama.cpp's loader gives `src` (what `COPY` writes as `general.file_type`):
/// its `general.file_type` if that is a UINT32, else the file type of its most common tensor type
/// (ties to the first in llama-quantize's order) with bit 1024 (`LLAMA_FTYPE_GUESSED`) set.
pub fn source_file_type<S: Source>(src: &Gguf<S>, overrides: &[KvOverride]) -> u32 {
    source_file_type_of(src, &llama_tensor_order(src), overrides)
}

/// [`source_file_type`] with the metadata of `meta` and the tensors `tensors` (in llama-quantize's
/// order, [`llama_tensor_order`]; for a split model, those of every shard).
pub(crate) fn source_file_type_of<S: Source>(
    meta: &Gguf<S>,
    tensors: &[TensorInfo<'_>],
    overrides: &[KvOverride],
) -> u32 {
    let src = meta;
    if let Some(KvOverride { value: KvOverrideValue::Int(n), .. }) =
        overrides.iter().find(|o| o.key == "general.file_type")
    {
        return *n as u32;
    }
    if let Some(ValueRef::U32(n)) = src.get("general.file_type") {
        return n;
    }
    let mut counts: Vec<(GgmlType, u32)> = Vec::new();
    let (mut best, mut best_n) = (GgmlType::F32, 0u32);
    for t in tensors {
        let n = match counts.iter_mut().find(|(ty, _)| *ty == t.dtype) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                counts.push((t.dtype, 1));
                1
            }
        };
        if best_n < n {
            (best, best_n) = (t.dtype, n);
        }
    }
    use GgmlType as T;
    let ft = match best {
        T::F16 => 1,
        T::BF16 => 32,
        T::Q4_0 => 2,
        T::Q4_1 => 3,
        T::Q5_0 => 8,
        T::Q5_1 => 9,
        T::Q8_0 => 7,
        T::Q2_K => 10,
        T::Q3_K => 12,
        T::Q4_K => 15,
        T::Q5_K => 17,
        T::Q6_K => 18,
        T::TQ1_0 => 36,
        T::TQ2_0 => 37,
        T::IQ2_XXS => 19,
        T::IQ2_XS => 20,
        T::IQ2_S => 28,
        T::IQ3_XXS => 23,
        T::IQ1_S => 24,
        T::IQ1_M => 31,
        T::IQ4_NL => 25,
        T::IQ4_XS => 30,
        T::IQ3_S => 26,
        T::NVFP4 => 39,
        T::Q1_0 => 40,
        T::Q2_0 => 41,
        _ => 0,
    };
    ft | 1024
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_type_names_numbers_and_aliases() {
        assert_eq!(LlamaFileType::ALL.len(), 35);
        assert_eq!("q4_k_m".parse(), Ok(LlamaFileType::Q4_K_M));
        assert_eq!("Q4_K".parse(), Ok(LlamaFileType::Q4_K_M));
        assert_eq!("q3_k".parse(), Ok(LlamaFileType::Q3_K_M));
        assert_eq!("15".parse(), Ok(LlamaFileType::Q4_K_M));
        assert_eq!("38".parse(), Ok(LlamaFileType::MXFP4_MOE));
        assert_eq!(LlamaFileType::MXFP4_MOE.number(), 38);
        assert!("39".parse::<LlamaFileType>().is_err(), "NVFP4 is not offered");
        assert!("MXFP4".parse::<LlamaFileType>().is_err());
        assert_eq!(LlamaFileType::IQ2_S.default_type(), GgmlType::IQ2_XS);
        for t in LlamaFileType::ALL {
            assert_eq!(t.name().parse(), Ok(*t));
            assert_eq!(LlamaFileType::from_number(t.number()), Some(*t));
        }
    }

    #[test]
    fn layer_order_and_sscanf() {
        assert_eq!(blk_layer("blk.12.attn_q.weight"), Some(12));
        assert_eq!(blk_layer("blk.x"), None);
        assert_eq!(blk_layer("output.weight"), None);
        let mut v = vec!["blk.10.a", "output.weight", "blk.2.b", "blk.2.a", "token_embd.weight"];
        v.sort_by(|a, b| llama_order(a, b));
        assert_eq!(v, ["output.weight", "token_embd.weight", "blk.2.a", "blk.2.b", "blk.10.a"]);
    }

    #[test]
    fn c_number_parsing() {
        assert_eq!(c_atol(" 42abc"), 42);
        assert_eq!(c_atol("-7"), -7);
        assert_eq!(c_atol("x"), 0);
        assert_eq!(c_atof("1.5e3x"), 1500.0);
        assert_eq!(c_atof("2e"), 2.0);
        assert_eq!(c_atof(".5"), 0.5);
        assert_eq!(c_atof("abc"), 0.0);
        assert!(c_atof("-inf").is_infinite());
    }

    #[test]
    fn kv_override_values_must_be_numbers() {
        let v = |s: &str| KvOverride::parse(s).map(|o| o.to_value());
        assert_eq!(v("a=int:-7").unwrap(), Value::U32(7));
        assert_eq!(v("a=int: 42").unwrap(), Value::U32(42));
        assert_eq!(v("a=float:1.5e3").unwrap(), Value::F32(1500.0));
        for bad in ["a=int:abc", "a=int:12abc", "a=int:", "a=float:x", "a=float:2e"] {
            let e = v(bad).unwrap_err();
            assert!(e.as_quantize().is_some(), "{bad}: {e:?}");
            assert!(e.to_string().contains("is not a"), "{bad}: {e}");
        }
    }

    #[test]
    fn overrides_parse_as_llama_cpp() {
        let o = KvOverride::parse("general.name=str:tiny").unwrap();
        assert_eq!(o.to_value(), Value::String("tiny".into()));
        assert_eq!(KvOverride::parse("a.b=int:-5").unwrap().to_value(), Value::U32(5));
        assert_eq!(KvOverride::parse("a.b=bool:true").unwrap().to_value(), Value::Bool(true));
        assert!(KvOverride::parse("a.b=bool:yes").is_err());
        assert!(KvOverride::parse("a.b=u8:1").is_err());
        assert!(KvOverride::parse("=int:1").is_err());
        let t = TensorTypeOverride::parse("ATTN_V=q8_0").unwrap();
        assert_eq!((t.pattern.as_str(), t.dtype), ("attn_v", GgmlType::Q8_0));
        assert!(t.matches("blk.0.attn_v.weight"));
        assert!(TensorTypeOverride::parse("attn_v").is_err());
        assert!(TensorTypeOverride::parse("attn_v=q9").is_err());
        assert!(TensorTypeOverride::parse("(=q8_0").is_err());
    }

    #[test]
    fn fallbacks() {
        let f = |t| fallback("x", &[640, 2], t, Rule::Default).unwrap().0;
        assert_eq!(f(GgmlType::Q4_K), GgmlType::Q5_0);
        assert_eq!(f(GgmlType::Q5_K), GgmlType::Q5_1);
        assert_eq!(f(GgmlType::Q6_K), GgmlType::Q8_0);
        assert_eq!(f(GgmlType::Q2_K), GgmlType::Q4_0);
        assert_eq!(f(GgmlType::IQ4_XS), GgmlType::IQ4_NL);
        assert_eq!(fallback("x", &[80, 2], GgmlType::Q8_0, Rule::Default).unwrap().0, GgmlType::F16);
        assert!(fallback("x", &[576, 2], GgmlType::Q1_0, Rule::Default).is_err());
    }
}
