//! Field specs: the dtype, shape and count constraints of a bound field, evaluated against the metadata.

use crate::container::Shape;
use crate::error::{ModelError, Result};
use crate::format::GgmlType;

/// A dimension of a shape constraint, or a count, as evaluated from the metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dim {
    /// Not constrained: `_`, or an absent (`None`) metadata value.
    Any,
    /// This many.
    Known(u64),
    /// The expression could not be evaluated (overflow, a negative value, division by zero).
    Invalid(String),
}

impl Dim {
    /// The value, if known.
    pub fn known(&self) -> Option<u64> {
        match self {
            Dim::Known(v) => Some(*v),
            _ => None,
        }
    }
}

/// The name and constraints of one field, as the derive passes them to [`ModelField`](crate::model::ModelField) and
/// [`TensorStorage::layout`](crate::model::TensorStorage::layout).
#[derive(Clone, Copy, Debug)]
pub struct FieldSpec<'s> {
    /// The full tensor name (or sub-model prefix).
    pub name: &'s str,
    /// The Rust field (`Struct.field`), for error messages.
    pub field: &'s str,
    /// The ggml types the tensor may have; empty for any.
    pub dtypes: &'s [GgmlType],
    /// The canonical shape constraint, if any.
    pub shape: Option<&'s [Dim]>,
}

impl FieldSpec<'_> {
    pub(super) fn check(&self, dtype: GgmlType, shape: &Shape) -> Result<()> {
        if !self.dtypes.is_empty() && !self.dtypes.contains(&dtype) {
            return Err(ModelError::WrongDtype {
                name: self.name.to_owned(),
                expected: self.dtypes.to_vec(),
                found: dtype,
            }
            .into());
        }
        if let Some(want) = self.shape {
            if let Some(Dim::Invalid(reason)) = want.iter().find(|d| matches!(d, Dim::Invalid(_))) {
                return Err(ModelError::Constraint { name: self.name.to_owned(), reason: reason.clone() }.into());
            }
            let ok = want.len() == shape.len()
                && want.iter().zip(shape.iter()).all(|(w, &s)| w.known().is_none_or(|w| w == s));
            if !ok {
                return Err(ModelError::WrongShape {
                    name: self.name.to_owned(),
                    expected: want.iter().map(Dim::known).collect(),
                    found: shape.to_vec(),
                }
                .into());
            }
        }
        Ok(())
    }
}
