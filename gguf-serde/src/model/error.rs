//! The model layer's error: a file that does not fit a `#[derive(GgufModel)]` struct, or a
//! struct that cannot be written ([`ModelError`]).

use crate::format::{GgmlType, Quoted};

fn display_dtypes(d: &[GgmlType]) -> String {
    match d {
        [] => "any type".into(),
        [one] => one.to_string(),
        many => format!("one of {}", many.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")),
    }
}

fn display_dims(d: &[Option<u64>]) -> String {
    let dims: Vec<String> = d.iter().map(|x| x.map_or_else(|| "_".to_owned(), |v| v.to_string())).collect();
    format!("[{}]", dims.join(", "))
}

fn display_names(names: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut s = names.iter().take(SHOWN).map(|n| Quoted(n).to_string()).collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(" and {} more", names.len().saturating_sub(SHOWN)));
    }
    s
}

/// A file that does not fit a `#[derive(GgufModel)]` struct, or a struct that cannot be written.
/// Tensor names are full names (`blk.0.attn_q.weight`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A tensor that a field requires is not in the file.
    #[error("tensor {} is missing (required by the model field `{field}`)", Quoted(.name))]
    #[non_exhaustive]
    MissingTensor {
        /// The tensor's full name.
        name: String,
        /// The Rust field that binds it (`Struct.field`).
        field: String,
    },

    /// A tensor whose type is not one that its field accepts.
    #[error("tensor {} has type {found}, expected {}", Quoted(.name), display_dtypes(.expected))]
    #[non_exhaustive]
    WrongDtype {
        /// The tensor.
        name: String,
        /// The types the field accepts.
        expected: Vec<GgmlType>,
        /// The type stored.
        found: GgmlType,
    },

    /// A tensor whose canonical shape (outermost first) differs from its field's constraint.
    #[error("tensor {} has shape {found:?}, expected {}", Quoted(.name), display_dims(.expected))]
    #[non_exhaustive]
    WrongShape {
        /// The tensor.
        name: String,
        /// The constraint, canonical; `None` for a dimension not constrained (`_`, or a metadata
        /// value that is absent).
        expected: Vec<Option<u64>>,
        /// The canonical shape stored.
        found: Vec<u64>,
    },

    /// A shape or count constraint that cannot be evaluated (an arithmetic overflow, a negative
    /// or non-integer metadata value, a count larger than the model's tensors).
    #[error("constraint of {}: {reason}", Quoted(.name))]
    #[non_exhaustive]
    Constraint {
        /// The tensor or name template.
        name: String,
        /// What went wrong.
        reason: String,
    },

    /// A numbered list of sub-models or tensors (`blk.{}`) whose numbers have a hole: number
    /// `missing` is absent although a higher one is present.
    #[error("{}: number {missing} is missing, but numbers up to {max} are present", Quoted(.template))]
    #[non_exhaustive]
    NumberingHole {
        /// The name template.
        template: String,
        /// The first absent number.
        missing: u64,
        /// The highest number present.
        max: u64,
    },

    /// A numbered list whose length differs from its count in the metadata (on write).
    #[error("{}: {found} entries, but the count from the metadata is {expected}", Quoted(.template))]
    #[non_exhaustive]
    CountMismatch {
        /// The name template.
        template: String,
        /// The count from the metadata.
        expected: u64,
        /// The entries present.
        found: u64,
    },

    /// Tensors of the file that no field binds (when the model refuses them).
    #[error(
        "{} {} bound by no field of the model: {}",
        crate::format::count(.names.len(), "tensor"),
        if .names.len() == 1 { "is" } else { "are" },
        display_names(.names)
    )]
    #[non_exhaustive]
    UnboundTensors {
        /// Their names, in file order.
        names: Vec<String>,
    },
}
impl ModelError {
    /// The tensor refused or missing (for a constraint, the tensor or its name template); `None`
    /// for a numbered list as a whole and for unbound tensors (several).
    pub fn tensor(&self) -> Option<&str> {
        match self {
            ModelError::MissingTensor { name, .. }
            | ModelError::WrongDtype { name, .. }
            | ModelError::WrongShape { name, .. }
            | ModelError::Constraint { name, .. } => Some(name),
            ModelError::NumberingHole { .. } | ModelError::CountMismatch { .. } | ModelError::UnboundTensors { .. } => {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are quoted in their escaped form once (`"blk.\xff.weight"` for the byte FF, as
    /// inspect prints it), not as the `Debug` of the escaped text (`"blk.\\xff.weight"`).
    #[test]
    fn model_errors_quote_names_escaped_once() {
        let name = crate::GgufStr::from_bytes(b"blk.\xff.weight").to_string();
        let e = ModelError::UnboundTensors { names: vec![name.clone(), "a\"b".into()] };
        assert_eq!(e.to_string(), r#"2 tensors are bound by no field of the model: "blk.\xff.weight", "a\"b""#);
        let e = ModelError::UnboundTensors { names: vec!["x".into()] };
        assert_eq!(e.to_string(), r#"1 tensor is bound by no field of the model: "x""#);
        let e = ModelError::MissingTensor { name, field: "M.f".into() };
        assert_eq!(e.to_string(), r#"tensor "blk.\xff.weight" is missing (required by the model field `M.f`)"#);
    }

    /// Every variant that names one tensor reports it.
    #[test]
    fn model_errors_report_their_tensor() {
        use ModelError as M;
        let (t, s) = (Some("t"), || "t".to_owned());
        let cases = [
            (M::MissingTensor { name: s(), field: s() }, t),
            (M::WrongDtype { name: s(), expected: vec![], found: GgmlType::F32 }, t),
            (M::WrongShape { name: s(), expected: vec![], found: vec![] }, t),
            (M::Constraint { name: s(), reason: s() }, t),
            (M::NumberingHole { template: s(), missing: 1, max: 2 }, None),
            (M::CountMismatch { template: s(), expected: 1, found: 2 }, None),
            (M::UnboundTensors { names: vec![s()] }, None),
        ];
        for (e, tensor) in &cases {
            assert_eq!(e.tensor(), *tensor, "{e:?}");
        }
    }
}
