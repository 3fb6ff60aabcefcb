//! llama-quantize's options ([`QuantizeParams`]) and its `--tensor-type` patterns.

use regex::bytes::Regex;

use crate::container::IfExists;
use crate::error::{Error, QuantizeError, Result};
use crate::format::{GgmlType, GgufStr};
use crate::ops::file_type::LlamaFileType;
use crate::ops::imatrix::Imatrix;
use crate::ops::kv_override::KvOverride;
// Named in the docs.
#[cfg(doc)]
use crate::ops::PatternProblem;

use super::ecmascript::{compile, translate};
// Named in the docs.
#[cfg(doc)]
use crate::ops::globs::NameGlobs;

/// A `--tensor-type PATTERN=TYPE` option: tensors whose name contains a match of `pattern`
/// (a regular expression, searched anywhere in the name) get `dtype`.
///
/// The pattern is an ECMAScript regular expression read and matched as llama-quantize's
/// `std::regex` (GCC's libstdc++, `char`, the "C" locale) reads and matches it, over the name's
/// bytes: `.` is one byte other than `\n` and `\r`, a class (`[^a]`) and `\w`, `\d`, `\s` are
/// of single bytes (ASCII classes: no byte above 127 is in them), so a non-ASCII character of n
/// bytes is n items (`é` is `..`, `^.{9}$` counts bytes), and a byte that is not UTF-8 is one
/// item like any other. A pattern's bytes above 127 (as given, UTF-8 or not) stand for
/// themselves, one byte each. libstdc++'s readings are followed where they are not the `regex`
/// crate's (checked by tests against `llama-quantize --dry-run` and a program built with
/// libstdc++): `\uHHHH` is the byte of its low 8 bits (`\u00ff` is the byte FF), `\xHH` takes
/// exactly two digits (`\x{ff}` is refused), `\0` is NUL, `\cX` is X itself, any other escaped
/// character is itself (`\q`), in a class `\b` is backspace and ranges compare signed bytes
/// (`[\x80-\xff]`; `[a-\xff]` is refused as reversed), `[[:alpha:]]`, `[[.space.]]` and
/// `[[=a=]]` are taken, `[]` matches nothing and `[^]` any byte, `]` and `}` alone are
/// ordinary, quantifiers may follow one another (`a**`), and a pattern of more than 100,000
/// automaton states (libstdc++'s limit: `a{100000}`) is refused. Since the whole pattern is
/// lower-cased first, `\W`, `\D`, `\S`, `\B` and `\U` are `\w`, `\d`, `\s`, `\b`, `\u`.
/// What `std::regex` refuses is refused ([`QuantizeError::TensorTypePattern`], with its
/// `error_type`: [`PatternProblem`]); so are look-aheads (`(?=…)`, `(?!…)`) and
/// back-references (`(a)\1`), which `std::regex` takes but the `regex` crate has not.
#[derive(Clone, Debug)]
pub struct TensorTypeOverride {
    /// The pattern, lower-cased as llama-quantize lower-cases it (ASCII letters only, as C's
    /// `tolower`; tensor names are not), shown as [`GgufStr`](crate::GgufStr) shows bytes (a
    /// byte that is not UTF-8 as `\xNN`).
    pub pattern: String,
    regex: Regex,
    /// The type chosen for matching tensors.
    pub dtype: GgmlType,
    /// Where the rule was read when it came from a file (llama-quantize's `--tensor-type-file`):
    /// the file, as [`shown_path`](crate::format::shown_path) shows it, and the line, from 1
    /// ([`TensorTypeOverride::read_from`]); `None` for a `--tensor-type` option. The plan's rule
    /// names it ([`Override::TensorTypeFile`](super::Override::TensorTypeFile)).
    pub file: Option<(String, usize)>,
}

impl TensorTypeOverride {
    /// An override of tensors matching `pattern` (its bytes: a `&str`, or bytes that are not
    /// UTF-8; lower-cased first) to `dtype`.
    ///
    /// # Errors
    /// [`QuantizeError::TensorTypePattern`] if `std::regex` refuses the pattern, or it has a
    /// look-ahead or back-reference.
    pub fn new(pattern: impl AsRef<[u8]>, dtype: GgmlType) -> Result<Self> {
        let lower = pattern.as_ref().to_ascii_lowercase();
        let pattern = GgufStr::from_bytes(&lower).to_string();
        let syntax = translate(&lower).map_err(|e| QuantizeError::TensorTypePattern {
            pattern: pattern.clone(),
            offset: e.offset,
            problem: e.problem,
        })?;
        let regex = compile(&syntax)
            .map_err(|e| Error::from(QuantizeError::refused(format!("tensor type pattern \"{pattern}\": {e}"))))?;
        Ok(TensorTypeOverride { pattern, regex, dtype, file: None })
    }

    /// The rule, read from line `line` (from 1) of the file `file` (shown as
    /// [`shown_path`](crate::format::shown_path) shows it), so that the plan names them.
    #[must_use]
    pub fn read_from(self, file: impl Into<String>, line: usize) -> Self {
        TensorTypeOverride { file: Some((file.into(), line)), ..self }
    }

    /// Parses `PATTERN=TYPE` (`attn_v=q8_0`, `blk\.[0-3]\.ffn_down=Q6_K`; a `&str`, or bytes
    /// that are not UTF-8): TYPE is a ggml type name, case-insensitive; PATTERN ends at the first
    /// `=`, as llama-quantize splits it.
    ///
    /// # Errors
    /// [`QuantizeError`] for a missing `=`, an empty pattern or type, an unknown type or a bad
    /// pattern.
    pub fn parse(s: impl AsRef<[u8]>) -> Result<Self> {
        let raw = s.as_ref();
        let bad = |reason: String| Err(Error::from(QuantizeError::refused(reason)));
        let shown = GgufStr::from_bytes(raw);
        let Some(eq) = raw.iter().position(|&b| b == b'=') else {
            return bad(format!("malformed tensor type \"{shown}\" (expected PATTERN=TYPE)"));
        };
        let (pattern, ty) = (raw.get(..eq).unwrap_or_default(), raw.get(eq + 1..).unwrap_or_default());
        if pattern.is_empty() {
            return bad(format!("missing tensor name in \"{shown}\""));
        }
        if ty.is_empty() {
            return bad(format!("missing quantization type in \"{shown}\""));
        }
        let Some(dtype) = std::str::from_utf8(ty).ok().and_then(|t| t.parse::<GgmlType>().ok()) else {
            return bad(format!("invalid quantization type \"{}\" in \"{shown}\"", GgufStr::from_bytes(ty)));
        };
        Self::new(pattern, dtype)
    }

    /// Whether the pattern matches somewhere in `name` (its bytes: a `&str`, or the bytes of a
    /// name that is not UTF-8).
    pub fn matches(&self, name: impl AsRef<[u8]>) -> bool {
        self.regex.is_match(name.as_ref())
    }
}

/// What [`plan_file_type`](super::plan_file_type) and [`requantize`](crate::ops::requant::requantize) do: llama-quantize's options.
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
    /// kept; each the bytes of a pattern (UTF-8 text, or bytes that are not UTF-8).
    pub exclude: Vec<Vec<u8>>,
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
    /// [`requantize_sharded`](crate::ops::requant::requantize_sharded) for the files written.
    pub keep_split: bool,
    /// What becomes of a file at an output path (the output, or with
    /// [`keep_split`](Self::keep_split) a shard): replaced (the default) or kept, the write
    /// failing ([`IfExists`]).
    pub if_exists: IfExists,
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
            if_exists: IfExists::Replace,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_type_overrides_parse_as_llama_cpp() {
        let t = TensorTypeOverride::parse("ATTN_V=q8_0").unwrap();
        assert_eq!((t.pattern.as_str(), t.dtype), ("attn_v", GgmlType::Q8_0));
        assert!(t.matches("blk.0.attn_v.weight"));
        assert!(TensorTypeOverride::parse("attn_v").is_err());
        assert!(TensorTypeOverride::parse("attn_v=q9").is_err());
        assert!(TensorTypeOverride::parse("(=q8_0").is_err());
    }

    /// Bytes, as llama-quantize's `std::regex` matches them (checked against llama-quantize
    /// --dry-run in the CLI tests): `.` is one byte, a non-ASCII character of two bytes is two.
    #[test]
    fn patterns_match_bytes() {
        let t = TensorTypeOverride::parse("x.\\.weight=q8_0").unwrap();
        assert!(t.matches(b"x\xff.weight"));
        assert!(!t.matches("x\u{e9}.weight"));
        assert!(!t.matches(b"x\xe2\x82.weight"));
        assert!(TensorTypeOverride::parse("x..\\.weight=q8_0").unwrap().matches("x\u{e9}.weight"));
        let (nine, ten) =
            (TensorTypeOverride::parse("^.{9}$=q8_0").unwrap(), TensorTypeOverride::parse("^.{10}$=q8_0").unwrap());
        assert!(nine.matches(b"x\xff.weight") && !nine.matches("x\u{e9}.weight"));
        assert!(ten.matches("x\u{e9}.weight") && ten.matches(b"x\xe2\x82.weight"));
        // A pattern's own bytes above 127, UTF-8 or not, escaped or not.
        assert!(TensorTypeOverride::parse(b"x\xff=q8_0").unwrap().matches(b"ax\xff."));
        assert!(TensorTypeOverride::parse(b"x\\\xff=q8_0").unwrap().matches(b"ax\xff."));
        assert!(TensorTypeOverride::parse(b"x[\xfe\xff]=q8_0").unwrap().matches(b"ax\xfe."));
        assert_eq!(TensorTypeOverride::parse(b"X\xff=q8_0").unwrap().pattern, "x\\xff");
        // `.` is not a line end, as in ECMAScript.
        assert!(!TensorTypeOverride::parse("a.b=q8_0").unwrap().matches("a\rb"));
        // Only ASCII letters are lower-cased, as C's `tolower`.
        assert_eq!(TensorTypeOverride::parse("\u{c9}A=q8_0").unwrap().pattern, "\u{c9}a");
    }
}
