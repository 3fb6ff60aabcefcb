//! The errors of the whole-file operations: a quantization that cannot be made as asked
//! ([`QuantizeError`], with [`ImatrixProblem`] for an importance matrix) and a metadata edit that
//! cannot be applied ([`EditError`]).

use crate::format::{GgmlType, Quoted};

/// A quantization that cannot be made as asked ([`crate::ops::quantize`]): one that needs an
/// importance matrix, a bad `--tensor-type` or `--override-kv`, rows no type fits.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QuantizeError {
    /// Why, in llama-quantize's terms.
    #[error("cannot quantize: {reason}")]
    #[non_exhaustive]
    Refused {
        /// Why.
        reason: String,
    },

    /// A tensor whose target type llama-quantize quantizes only with an importance matrix
    /// (its `tensor_requires_imatrix`: IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, and Q2_K in
    /// the Q2_K_S mix), and none was given or none is left after `--include-weights` /
    /// `--exclude-weights`: llama-quantize's refusal, with its message content.
    #[error("this quantization requires an importance matrix (offending tensor: {tensor}, target type: {target})")]
    #[non_exhaustive]
    ImatrixRequired {
        /// The first such tensor, in the file's order.
        tensor: String,
        /// Its target type.
        target: GgmlType,
    },

    /// A `--tensor-type` pattern ([`TensorTypeOverride`](crate::ops::quantize::TensorTypeOverride))
    /// that llama-quantize's `std::regex` refuses, or that uses what `std::regex` takes but this
    /// crate cannot match (a look-ahead, a back-reference): [`PatternProblem`] says which.
    #[error("tensor type pattern \"{pattern}\": {problem}, at byte {offset}")]
    #[non_exhaustive]
    TensorTypePattern {
        /// The pattern (lower-cased, as llama-quantize lower-cases it), shown as
        /// [`GgufStr`](crate::GgufStr) shows bytes.
        pattern: String,
        /// The byte offset in the pattern where the problem was found.
        offset: usize,
        /// What is wrong.
        problem: PatternProblem,
    },

    /// An importance matrix file ([`crate::ops::imatrix`]) that llama-quantize would refuse,
    /// crash on or misread, or one that does not fit a tensor it is used for.
    #[error("importance matrix: {problem}")]
    #[non_exhaustive]
    Imatrix {
        /// What is wrong.
        problem: ImatrixProblem,
    },
}

/// What is wrong with an importance matrix ([`QuantizeError::Imatrix`]). Entry and tensor
/// names are shown as [`GgufStr`](crate::GgufStr)'s `Display` shows them (escaped, so that a name
/// that is not UTF-8 is shown losslessly).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ImatrixProblem {
    /// A legacy `.dat` file ends inside an item: `needed` bytes at `offset`, fewer remain.
    #[error("file truncated: {item} at offset {offset} needs {}", crate::format::count(*.needed, "byte"))]
    #[non_exhaustive]
    Truncated {
        /// What was being read (`"entry count"`, `"name of entry 3"`, ...).
        item: String,
        /// Absolute byte offset of the item.
        offset: u64,
        /// Bytes it needs.
        needed: u64,
    },
    /// Neither format: the file does not start with `GGUF`, and as a legacy `.dat` its first
    /// four bytes give more entries than the file has bytes, and the first name's length does not
    /// fit either (a text file, for instance; a truncated `.dat` is [`Truncated`](Self::Truncated)).
    #[error(
        "in neither format: no `GGUF` magic, and as a legacy .dat its entry count {count} does not fit in its {len} bytes"
    )]
    #[non_exhaustive]
    NotImatrix {
        /// The entry count its first four bytes give (little-endian i32).
        count: i64,
        /// The file's length in bytes.
        len: u64,
    },
    /// No entries: a `.dat` entry count of 0, or a GGUF file with no tensors.
    #[error("no entries")]
    #[non_exhaustive]
    NoEntries,
    /// A length field of a `.dat` file that is negative (the entry count, a name) or below 1 (a
    /// value count).
    #[error("{item} has the invalid length {len}")]
    #[non_exhaustive]
    BadLength {
        /// The field (`"entry count"`, `"name of entry 3"`, `"values of entry 3"`).
        item: String,
        /// The stored length.
        len: i64,
    },
    /// A GGUF importance matrix without `imatrix.datasets`, `imatrix.chunk_count` and
    /// `imatrix.chunk_size` (llama-quantize: "missing imatrix metadata").
    #[error("missing imatrix metadata (imatrix.datasets, imatrix.chunk_count, imatrix.chunk_size)")]
    #[non_exhaustive]
    MissingMetadata,
    /// A metadata key of the wrong type (`imatrix.chunk_count` and `imatrix.chunk_size` are
    /// UINT32).
    #[error("{key} has type {found}, expected {expected}")]
    #[non_exhaustive]
    KeyType {
        /// The key.
        key: String,
        /// Its type.
        found: String,
        /// The type llama.cpp reads.
        expected: &'static str,
    },
    /// `NAME.in_sum2` without `NAME.counts` or the other way round.
    #[error("mismatched sums and counts for {entry}")]
    #[non_exhaustive]
    Unpaired {
        /// The entry (tensor) name.
        entry: String,
    },
    /// An `in_sum2` or `counts` tensor that is not F32.
    #[error("{tensor} is {dtype}, expected F32")]
    #[non_exhaustive]
    NotF32 {
        /// The imatrix tensor.
        tensor: String,
        /// Its type.
        dtype: GgmlType,
    },
    /// A `counts` tensor whose length does not divide the `in_sum2` length into whole slices
    /// (no counts, or more counts than sums).
    #[error("{entry}: {counts} counts for {sums} sums (the sums must be whole slices, one per count)")]
    #[non_exhaustive]
    CountsLength {
        /// The entry.
        entry: String,
        /// Elements of `in_sum2`.
        sums: u64,
        /// Elements of `counts`.
        counts: u64,
    },
    /// A count that is NaN, infinite, negative or too large for an `i64`.
    #[error("{entry}: invalid count {value} at index {index}")]
    #[non_exhaustive]
    BadCount {
        /// The entry.
        entry: String,
        /// Index in the counts.
        index: u64,
        /// The stored count.
        value: f64,
    },
    /// An entry whose counts are all zero: no activations were collected for it (llama-imatrix
    /// does not write such an entry to a `.dat` file; llama-quantize would use weights of 1).
    #[error("{entry}: every count is zero (no data)")]
    #[non_exhaustive]
    ZeroCounts {
        /// The entry.
        entry: String,
    },
    /// A NaN or infinite sum, or a weight that is not finite after dividing by its count
    /// (llama-quantize: "imatrix contains non-finite value").
    #[error("{entry}: non-finite value {value} at index {index}")]
    #[non_exhaustive]
    NonFinite {
        /// The entry.
        entry: String,
        /// Index in the entry's values.
        index: u64,
        /// The value.
        value: f32,
    },
    /// An entry whose length is not the tensor's `ne[0] × ne[2]` (llama-quantize: "imatrix size
    /// N is different from tensor size M"; for the token embeddings it only warns and quantizes
    /// without the matrix, and so does this crate).
    #[error("imatrix size {found} is different from tensor size {expected} for {tensor}")]
    #[non_exhaustive]
    SizeMismatch {
        /// The tensor.
        tensor: String,
        /// Values in the entry.
        found: u64,
        /// `ne[0] × ne[2]`.
        expected: u64,
    },
    /// No entry for a tensor whose type needs one (llama-quantize: "Missing importance matrix
    /// for tensor NAME in a very low-bit quantization").
    #[error("missing importance matrix for tensor {tensor} in a very low-bit quantization ({target})")]
    #[non_exhaustive]
    MissingEntry {
        /// The tensor.
        tensor: String,
        /// Its target type.
        target: GgmlType,
    },
}

impl QuantizeError {
    /// A refusal with this reason.
    pub(crate) fn refused(reason: impl Into<String>) -> QuantizeError {
        QuantizeError::Refused { reason: reason.into() }
    }
}

/// A [metadata edit](crate::ops::edit) that cannot be applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// The key to remove or rename is not in the file.
    #[error("cannot edit {}: no such key to {action}", Quoted(.key))]
    #[non_exhaustive]
    NoSuchKey {
        /// The key.
        key: String,
        /// `"remove"` or `"rename"`.
        action: &'static str,
    },

    /// A rename to a key that exists.
    #[error("cannot edit {}: cannot rename to {}: that key exists", Quoted(.key), Quoted(.to))]
    #[non_exhaustive]
    KeyExists {
        /// The key renamed.
        key: String,
        /// The new name, which exists.
        to: String,
    },

    /// A text that does not parse as the value type asked (or the type of the existing value).
    #[error("cannot edit {}: {text:?} is not a valid {ty}", Quoted(.key))]
    #[non_exhaustive]
    BadValue {
        /// The key.
        key: String,
        /// The text given.
        text: String,
        /// The type's name (`u32`, `bool`, …).
        ty: &'static str,
    },

    /// A text with no type that is an integer too large for any integer type (rather than a
    /// silently rounded float).
    #[error("cannot edit {}: {text} is an integer outside u64 and i64", Quoted(.key))]
    #[non_exhaustive]
    IntegerTooLarge {
        /// The key.
        key: String,
        /// The text given.
        text: String,
    },

    /// A text that does not parse as the type the registry of standard keys gives the key
    /// ([`format::keys`](crate::format::keys): the type llama.cpp reads it as).
    #[error(
        "cannot edit {}: {text:?} is not a valid {expected}, the type of the standard key {template} \
         (llama.cpp refuses another type)",
        Quoted(.key)
    )]
    #[non_exhaustive]
    BadStandardValue {
        /// The key.
        key: String,
        /// The text given.
        text: String,
        /// The registry's template of the key (`{arch}.rope.freq_base`).
        template: &'static str,
        /// The type the registry gives it.
        expected: crate::format::keys::KeyType,
    },

    /// A key the edit would create (a new key set, the new name of a rename) that has an empty
    /// segment between dots (`a..b`, `a.`, `.x`,
    /// [`has_empty_segment`](crate::format::keys::has_empty_segment)). Existing keys of that form
    /// can still be set, removed and renamed away.
    #[error("cannot edit {}: a segment between dots is empty (a new key may not be `a..b`, `a.` or `.x`)", Quoted(.key))]
    #[non_exhaustive]
    EmptySegment {
        /// The new key.
        key: String,
    },

    /// A key the edit would create (a new key set, the new name of a rename) that is empty or
    /// longer than 65,535 bytes: ggml's reader refuses an empty key, and the spec caps a key at
    /// 2^16 - 1 bytes. Any other bytes are taken (see [`Edit`](crate::ops::edit::Edit)).
    #[error("cannot edit {}: a new key must be 1 to 65,535 bytes long, not {len}", Quoted(.key))]
    #[non_exhaustive]
    KeyLength {
        /// The new key.
        key: String,
        /// Its length in bytes.
        len: usize,
    },

    /// An array value to be set from text.
    #[error("cannot edit {}: arrays cannot be set from text", Quoted(.key))]
    #[non_exhaustive]
    ArrayFromText {
        /// The key.
        key: String,
    },

    /// A `general.alignment` the edit would write (set, or a key renamed to it) that ggml's
    /// `gguf.cpp` refuses: of a type other than u32, zero, or not a power of two. Refused before
    /// anything is written, naming the key and the value (the writer's
    /// [`WriteError::BadAlignment`](crate::WriteError::BadAlignment) would name an offset of the
    /// output instead).
    #[error("cannot edit {}: the value {problem} (ggml takes a u32 power of two)", Quoted(.key))]
    #[non_exhaustive]
    BadAlignment {
        /// The key, `general.alignment`.
        key: String,
        /// What is wrong with the value.
        problem: crate::format::AlignmentProblem,
    },
}
impl QuantizeError {
    /// The offset, in the importance matrix file, of an [`Imatrix`](Self::Imatrix) problem
    /// that names one ([`ImatrixProblem::offset`]).
    pub fn offset(&self) -> Option<u64> {
        match self {
            QuantizeError::Imatrix { problem } => problem.offset(),
            QuantizeError::Refused { .. }
            | QuantizeError::TensorTypePattern { .. }
            | QuantizeError::ImatrixRequired { .. } => None,
        }
    }

    /// The key of the importance matrix file an [`Imatrix`](Self::Imatrix) problem names.
    pub fn key(&self) -> Option<&str> {
        match self {
            QuantizeError::Imatrix { problem } => problem.key(),
            QuantizeError::Refused { .. }
            | QuantizeError::TensorTypePattern { .. }
            | QuantizeError::ImatrixRequired { .. } => None,
        }
    }

    /// The tensor that needs an importance matrix, or the one an [`Imatrix`](Self::Imatrix)
    /// problem names ([`ImatrixProblem::tensor`]).
    pub fn tensor(&self) -> Option<&str> {
        match self {
            QuantizeError::ImatrixRequired { tensor, .. } => Some(tensor),
            QuantizeError::Imatrix { problem } => problem.tensor(),
            QuantizeError::Refused { .. } | QuantizeError::TensorTypePattern { .. } => None,
        }
    }
}

impl ImatrixProblem {
    /// The absolute byte offset, in the importance matrix file, of the item a legacy `.dat`
    /// file ends inside.
    pub fn offset(&self) -> Option<u64> {
        self.names().0
    }

    /// The metadata key of the importance matrix file that has the wrong type.
    pub fn key(&self) -> Option<&str> {
        self.names().1
    }

    /// The tensor involved: the model's tensor an entry is for (entries are named after their
    /// tensor), the model's tensor the matrix does not fit, or the matrix file's own tensor that
    /// is not F32.
    pub fn tensor(&self) -> Option<&str> {
        self.names().2
    }

    /// The offset, key and tensor the problem names: one exhaustive match, so that a new
    /// variant says what it names.
    fn names(&self) -> (Option<u64>, Option<&str>, Option<&str>) {
        use ImatrixProblem as P;
        match self {
            P::Truncated { offset, .. } => (Some(*offset), None, None),
            P::KeyType { key, .. } => (None, Some(key), None),
            P::Unpaired { entry }
            | P::CountsLength { entry, .. }
            | P::BadCount { entry, .. }
            | P::ZeroCounts { entry }
            | P::NonFinite { entry, .. } => (None, None, Some(entry)),
            P::NotF32 { tensor, .. } | P::SizeMismatch { tensor, .. } | P::MissingEntry { tensor, .. } => {
                (None, None, Some(tensor))
            }
            P::NotImatrix { .. } | P::NoEntries | P::BadLength { .. } | P::MissingMetadata => (None, None, None),
        }
    }
}

impl EditError {
    /// Edits name no offset: `None` for every variant.
    pub fn offset(&self) -> Option<u64> {
        match self {
            EditError::NoSuchKey { .. }
            | EditError::KeyExists { .. }
            | EditError::BadValue { .. }
            | EditError::BadStandardValue { .. }
            | EditError::IntegerTooLarge { .. }
            | EditError::ArrayFromText { .. }
            | EditError::EmptySegment { .. }
            | EditError::KeyLength { .. }
            | EditError::BadAlignment { .. } => None,
        }
    }

    /// The key edited (for a rename to an existing key, the key renamed; for an empty segment
    /// or a bad length, the new key).
    pub fn key(&self) -> Option<&str> {
        Some(match self {
            EditError::NoSuchKey { key, .. }
            | EditError::KeyExists { key, .. }
            | EditError::BadValue { key, .. }
            | EditError::BadStandardValue { key, .. }
            | EditError::IntegerTooLarge { key, .. }
            | EditError::ArrayFromText { key }
            | EditError::EmptySegment { key }
            | EditError::KeyLength { key, .. }
            | EditError::BadAlignment { key, .. } => key,
        })
    }

    /// Edits name no tensor: `None` for every variant.
    pub fn tensor(&self) -> Option<&str> {
        match self {
            EditError::NoSuchKey { .. }
            | EditError::KeyExists { .. }
            | EditError::BadValue { .. }
            | EditError::BadStandardValue { .. }
            | EditError::IntegerTooLarge { .. }
            | EditError::ArrayFromText { .. }
            | EditError::EmptySegment { .. }
            | EditError::KeyLength { .. }
            | EditError::BadAlignment { .. } => None,
        }
    }
}

/// What is wrong with a `--tensor-type` pattern: `std::regex` refuses it (the variants named after
/// its `regex_constants::error_type`), or it uses what `std::regex` takes but we cannot match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PatternProblem {
    /// `error_escape`: a `\` at the end, `\x` without two hexadecimal digits, `\u` without four,
    /// `\c` at the end.
    Escape,
    /// `error_brack`: an unclosed `[`, or a `\B` or back-reference inside one.
    Bracket,
    /// `error_paren`: an unbalanced parenthesis, `(?` not followed by `:`, `=` or `!`, or a
    /// quantifier with nothing to repeat (`*a`, `^*`, `a|+`).
    Paren,
    /// `error_brace`: an unclosed count (`a{2`).
    Brace,
    /// `error_badbrace`: a count that is not `{n}`, `{n,}` or `{n,m}` with m ≥ n.
    BadBrace,
    /// `error_range`: a reversed range (`[z-a]`, `[a-\xff]`: characters compare as signed
    /// bytes) or a class at either end of one (`[\w-a]`).
    Range,
    /// `error_ctype`: an unclosed `[[:name`.
    Ctype,
    /// `error_collate`: an unknown class name (`[[:foo:]]`) or collating name (`[[.foo.]]`), or
    /// an unclosed `[[.name` or `[[=c`.
    Collate,
    /// `error_space`: more than 100,000 automaton states (`_GLIBCXX_REGEX_STATE_LIMIT`).
    Space,
    /// `error_backref`: a back-reference to a group that does not exist or is not closed.
    Backref,
    /// A look-ahead, `(?=…)` or `(?!…)`: `std::regex` takes it, the `regex` crate cannot.
    LookAhead,
    /// A back-reference to a closed group (`(a)\1`): `std::regex` takes it, the `regex` crate
    /// cannot.
    BackReference,
    /// Nested deeper than the translation can compile (groups within groups, quantifiers on
    /// quantifiers: about 120 stacked quantifiers or 200 nested groups, the `regex` crate's
    /// nesting limit); `std::regex` may take it. Found before the end of the pattern, so an
    /// error `std::regex` would find later is not reported.
    TooDeep,
}

impl PatternProblem {
    /// The `std::regex_constants::error_type` that `std::regex` throws for this pattern
    /// (`"error_escape"`, …), or `None` if `std::regex` takes it and only we refuse it.
    pub fn std_regex_error(self) -> Option<&'static str> {
        Some(match self {
            PatternProblem::Escape => "error_escape",
            PatternProblem::Bracket => "error_brack",
            PatternProblem::Paren => "error_paren",
            PatternProblem::Brace => "error_brace",
            PatternProblem::BadBrace => "error_badbrace",
            PatternProblem::Range => "error_range",
            PatternProblem::Ctype => "error_ctype",
            PatternProblem::Collate => "error_collate",
            PatternProblem::Space => "error_space",
            PatternProblem::Backref => "error_backref",
            PatternProblem::LookAhead | PatternProblem::BackReference | PatternProblem::TooDeep => return None,
        })
    }
}

impl std::fmt::Display for PatternProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self {
            PatternProblem::Escape => "a bad escape (\\xHH takes two hexadecimal digits, \\uHHHH four)",
            PatternProblem::Bracket => "an unclosed or bad bracket expression",
            PatternProblem::Paren => "an unbalanced parenthesis, a bad (?, or a quantifier with nothing to repeat",
            PatternProblem::Brace => "an unclosed {count}",
            PatternProblem::BadBrace => "a bad {count} ({n}, {n,} or {n,m} with m >= n)",
            PatternProblem::Range => "a bad range in a bracket (reversed: characters compare as signed bytes)",
            PatternProblem::Ctype => "an unclosed [[:class:]]",
            PatternProblem::Collate => "an unknown class or collating name, or an unclosed [[.name.]] or [[=c=]]",
            PatternProblem::Space => "more than 100000 automaton states",
            PatternProblem::Backref => "a back-reference to no closed group",
            PatternProblem::LookAhead => {
                return f.write_str("a look-ahead (?= or (?!, which std::regex takes but gguf cannot match")
            }
            PatternProblem::BackReference => {
                return f.write_str("a back-reference, which std::regex takes but gguf cannot match")
            }
            PatternProblem::TooDeep => {
                return f.write_str("groups or quantifiers nested too deep for gguf to match (std::regex may take it)")
            }
        };
        write!(f, "{what}: std::regex refuses it ({})", self.std_regex_error().unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> String {
        x.to_owned()
    }

    /// Every variant with an offset, key or tensor field (or an entry, named after its tensor)
    /// reports it; the others report none.
    #[test]
    fn quantize_errors_report_their_offset_key_and_tensor() {
        use ImatrixProblem as P;
        #[allow(clippy::type_complexity)] // an error and the offset, key and tensor it must report
        let cases: Vec<(P, Option<u64>, Option<&str>, Option<&str>)> = vec![
            (P::Truncated { item: s("entry count"), offset: 3, needed: 4 }, Some(3), None, None),
            (P::NotImatrix { count: 9, len: 4 }, None, None, None),
            (P::NoEntries, None, None, None),
            (P::BadLength { item: s("entry count"), len: -1 }, None, None, None),
            (P::MissingMetadata, None, None, None),
            (
                P::KeyType { key: s("imatrix.chunk_size"), found: s("i32"), expected: "u32" },
                None,
                Some("imatrix.chunk_size"),
                None,
            ),
            (P::Unpaired { entry: s("t") }, None, None, Some("t")),
            (P::NotF32 { tensor: s("t"), dtype: GgmlType::F16 }, None, None, Some("t")),
            (P::CountsLength { entry: s("t"), sums: 3, counts: 2 }, None, None, Some("t")),
            (P::BadCount { entry: s("t"), index: 0, value: f64::NAN }, None, None, Some("t")),
            (P::ZeroCounts { entry: s("t") }, None, None, Some("t")),
            (P::NonFinite { entry: s("t"), index: 0, value: f32::NAN }, None, None, Some("t")),
            (P::SizeMismatch { tensor: s("t"), found: 1, expected: 2 }, None, None, Some("t")),
            (P::MissingEntry { tensor: s("t"), target: GgmlType::IQ2_XXS }, None, None, Some("t")),
        ];
        for (problem, offset, key, tensor) in cases {
            assert_eq!((problem.offset(), problem.key(), problem.tensor()), (offset, key, tensor), "{problem:?}");
            let e = QuantizeError::Imatrix { problem };
            assert_eq!((e.offset(), e.key(), e.tensor()), (offset, key, tensor), "{e:?}");
        }
        let e = QuantizeError::ImatrixRequired { tensor: s("t"), target: GgmlType::IQ1_S };
        assert_eq!((e.offset(), e.key(), e.tensor()), (None, None, Some("t")));
        let e = QuantizeError::refused("r");
        assert_eq!((e.offset(), e.key(), e.tensor()), (None, None, None));
    }

    #[test]
    fn edit_errors_report_their_key() {
        let cases = [
            EditError::NoSuchKey { key: s("k"), action: "remove" },
            EditError::KeyExists { key: s("k"), to: s("j") },
            EditError::BadValue { key: s("k"), text: s("x"), ty: "u32" },
            EditError::IntegerTooLarge { key: s("k"), text: s("1") },
            EditError::BadStandardValue {
                key: s("k"),
                text: s("x"),
                template: "{arch}.context_length",
                expected: crate::format::keys::KeyType::Scalar(crate::format::ValueType::U32),
            },
            EditError::EmptySegment { key: s("k") },
            EditError::KeyLength { key: s("k"), len: 1 },
            EditError::ArrayFromText { key: s("k") },
            EditError::BadAlignment { key: s("k"), problem: crate::format::AlignmentProblem::Zero },
        ];
        for e in &cases {
            assert_eq!((e.offset(), e.key(), e.tensor()), (None, Some("k"), None), "{e:?}");
        }
    }
}
