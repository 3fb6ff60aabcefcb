//! llama-quantize's rules for one tensor (`llama_tensor_get_type`, `tensor_allows_quantization`,
//! `tensor_type_fallback`, `tensor_requires_imatrix`) and what they say ([`Rule`], [`TensorPlan`]).

use std::fmt;

use super::params::QuantizeParams;
use crate::container::{Gguf, Source};
use crate::error::{Error, QuantizeError, Result};
use crate::format::{GgmlType, GgufStr, Ne};
use crate::ops::file_type::LlamaFileType;
use crate::ops::globs::NameGlobs;
use crate::ops::kv_override::{KvOverride, KvOverrideValue};
use crate::ops::tensor_order::blk_layer;

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

/// Which llama-quantize mix rule chose a type ([`Rule::Mix`]); see the [module docs](super).
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
    /// A `PATTERN=TYPE` rule of a `--tensor-type-file` ([`TensorTypeOverride::read_from`](super::TensorTypeOverride::read_from)).
    TensorTypeFile {
        /// The pattern.
        pattern: String,
        /// The file, as [`shown_path`](crate::format::shown_path) shows it.
        file: String,
        /// The line of the file, from 1.
        line: usize,
    },
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
            Rule::Override(Override::TensorTypeFile { pattern, file, line }) => {
                write!(f, "--tensor-type-file {file}:{line} {pattern}")
            }
            Rule::Override(Override::OutputTensorType) => f.write_str("--output-tensor-type"),
            Rule::Override(Override::TokenEmbeddingType) => f.write_str("--token-embedding-type"),
            Rule::Fallback { wanted, by } => write!(f, "fallback from {wanted} ({by})"),
        }
    }
}

/// One tensor of a [`plan_file_type`](super::plan_file_type).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TensorPlan {
    /// The tensor's name as llama.cpp holds it and the output has it: its bytes up to the first
    /// NUL byte (all of them without one), UTF-8 or not ([`GgufStr::from`] shows them, escaped).
    pub name: Vec<u8>,
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
pub(super) struct ModelFacts {
    pub(super) arch: String,
    pub(super) n_layer_all: u32,
    pub(super) n_expert: u32,
    pub(super) n_head: u32,
    pub(super) n_head_kv: u32,
    pub(super) is_70b: bool,
}

impl ModelFacts {
    pub(super) fn read<S: Source>(src: &Gguf<S>, overrides: &[KvOverride]) -> ModelFacts {
        // The loader keeps the first override of a key.
        let over = |key: &str| overrides.iter().find(|o| o.key == key.as_bytes()).map(|o| &o.value);
        let arch = match over("general.architecture") {
            Some(KvOverrideValue::Str(s)) => String::from_utf8_lossy(s).into_owned(),
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Category {
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

pub(super) fn category(name: &str) -> Category {
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

pub(super) fn is_attn_v(c: Category) -> bool {
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
pub(super) fn trimmed_ne(ne: &Ne) -> Ne {
    let ne = ne.dims();
    let n = ne.iter().rposition(|&d| d != 1).map_or(1, |i| i + 1);
    Ne::new(ne.get(..n).unwrap_or(&[1])).unwrap_or_default()
}

/// `tensor_allows_quantization`, with our `exclude` globs: `None` if the tensor may be
/// quantized, else why not.
pub(super) fn kept_reason(
    params: &QuantizeParams,
    exclude: &NameGlobs,
    arch: &str,
    raw: GgufStr<'_>,
    ne: &[u64],
) -> Option<Kept> {
    // llama.cpp matches names as bytes (`std::string::find`); the rules here match text. A name
    // that is not UTF-8 is matched in its lossy form, whose ASCII bytes (all the rules look for)
    // are those of the name. The globs match the bytes.
    let lossy = raw.to_string_lossy();
    let name: &str = &lossy;
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
    exclude.first_match(raw.as_bytes()).map(|p| Kept::Excluded(p.to_owned()))
}

/// llama-quantize's running state over the tensors (`quantize_state_impl`).
pub(super) struct State<'p> {
    pub(super) params: &'p QuantizeParams,
    pub(super) facts: ModelFacts,
    pub(super) n_attention_wv: i64,
    pub(super) n_layer: i64,
    pub(super) i_attention_wv: i64,
    pub(super) i_ffn_down: i64,
    pub(super) i_ffn_gate: i64,
    pub(super) i_ffn_up: i64,
    pub(super) has_tied_embeddings: bool,
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
            // Reported as the file type's default where that is Q8_0 already, as every rule is.
            return Ok((T::Q8_0, if ty == T::Q8_0 { Rule::Default } else { mix(MixRule::Glm5NextQ8) }));
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

    /// `llama_tensor_get_type` for a tensor that may be quantized. `--tensor-type` patterns
    /// match the name's bytes; the mix rules its lossy text (the ASCII they look for is the same).
    pub(super) fn choose(&mut self, raw: GgufStr<'_>, ne: &[u64], cat: Category) -> Result<(GgmlType, Rule)> {
        let p = self.params;
        let lossy = raw.to_string_lossy();
        let name: &str = &lossy;
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
        let (ty, rule) = match p.tensor_types.iter().find(|o| o.matches(raw.as_bytes())) {
            Some(o) => {
                let pattern = o.pattern.clone();
                let by = match &o.file {
                    Some((file, line)) => Override::TensorTypeFile { pattern, file: file.clone(), line: *line },
                    None => Override::TensorType(pattern),
                };
                (o.dtype, Rule::Override(by))
            }
            None if !p.pure => self.mix(default, name, ne, cat)?,
            None => (default, Rule::Default),
        };
        fallback(&raw.to_string(), ne, ty, rule)
    }
}

/// `tensor_type_fallback`: a type whose blocks fit the rows.
pub(super) fn fallback(name: &str, ne: &[u64], ty: GgmlType, rule: Rule) -> Result<(GgmlType, Rule)> {
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
                "no tensor type fallback is defined for type {t} (tensor {name}, {})",
                crate::format::count(ncols, "column")
            ))))
        }
    };
    if ncols % to.block_size() != 0 {
        to = T::F16;
    }
    Ok((to, Rule::Fallback { wanted: ty, by: Box::new(rule) }))
}

/// `tensor_requires_imatrix`.
pub(super) fn requires_imatrix(name: &str, target: GgmlType, ftype: LlamaFileType) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The rule column of `gguf quantize --dry-run`: what chose each tensor's type, in the
    /// spelling of llama-quantize's options and of llama.cpp's tensor categories.
    #[test]
    fn rules_are_shown_by_what_chose_the_type() {
        let fallback = Rule::Fallback { wanted: GgmlType::IQ3_XXS, by: Box::new(Rule::Mix(MixRule::FfnUp)) };
        let file = Override::TensorTypeFile { pattern: "ffn_.*".into(), file: "types.txt".into(), line: 3 };
        for (rule, want) in [
            (Rule::Default, "default"),
            (Rule::Mix(MixRule::AttnV), "mix: attn_v"),
            (Rule::Mix(MixRule::Glm5NextQ8), "mix: glm5-next q8_0"),
            (fallback, "fallback from IQ3_XXS (mix: ffn_up)"),
            (Rule::Kept(Kept::OneDimensional), "kept (1-D)"),
            (Rule::Kept(Kept::OutputLeft), "kept (--leave-output-tensor)"),
            (Rule::Override(Override::TensorType("attn_v".into())), "--tensor-type attn_v"),
            (Rule::Override(file), "--tensor-type-file types.txt:3 ffn_.*"),
            (Rule::Override(Override::OutputTensorType), "--output-tensor-type"),
        ] {
            assert_eq!(rule.to_string(), want);
        }
    }
}
