//! Runtime support for the code `#[derive(GgufModel)]` generates. Not a public API.

pub use super::{Dim, FieldSpec, GgufModel, ModelField, ReadCx, TensorStorage, Unbound, WriteCx};
use crate::error::ModelError;
pub use crate::error::{Error, Result};
pub use crate::format::GgmlType;
#[cfg(feature = "derive")]
pub use gguf_derive::__ggml_type_names;
pub use serde::de::DeserializeOwned;
pub use serde::{Deserialize, Serialize};
pub use std::default::Default;
pub use std::option::Option::{self, None, Some};
pub use std::result::Result::{Err, Ok};
pub use std::string::String;
pub use std::vec::Vec;

use std::collections::BTreeSet;

/// `prefix.name`, or `name` at the top.
pub fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else if name.is_empty() {
        prefix.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Checks at compile time that a field with `dtype`/`shape` constraints is a tensor.
pub fn assert_tensor<'a, T: TensorStorage<'a>>() {}

/// A value of the metadata used as a dimension.
pub trait AsDim {
    /// The dimension it gives.
    fn as_dim(&self) -> Dim;
}

macro_rules! as_dim_int {
    ($($t:ty),*) => {$(
        impl AsDim for $t {
            #[allow(unused_comparisons)]
            fn as_dim(&self) -> Dim {
                match u64::try_from(*self) {
                    Ok(v) => Dim::Known(v),
                    Err(_) => Dim::Invalid(format!("metadata value {} is not a dimension", self)),
                }
            }
        }
    )*};
}
as_dim_int!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, u128, i128);

impl<T: AsDim> AsDim for Option<T> {
    fn as_dim(&self) -> Dim {
        self.as_ref().map_or(Dim::Any, AsDim::as_dim)
    }
}
impl<T> AsDim for [T] {
    fn as_dim(&self) -> Dim {
        Dim::Known(self.len() as u64)
    }
}
impl<T> AsDim for Vec<T> {
    fn as_dim(&self) -> Dim {
        Dim::Known(self.len() as u64)
    }
}
impl<T: AsDim + ?Sized> AsDim for &T {
    fn as_dim(&self) -> Dim {
        (**self).as_dim()
    }
}

/// `d.as_dim()`.
pub fn dim<D: AsDim + ?Sized>(d: &D) -> Dim {
    d.as_dim()
}

/// A literal dimension.
pub fn lit(v: u64) -> Dim {
    Dim::Known(v)
}

/// Applies an arithmetic operator (`+ - * /`) to two dimensions, checked.
pub fn op(a: Dim, op: char, b: Dim) -> Dim {
    match (a, b) {
        (Dim::Invalid(r), _) | (_, Dim::Invalid(r)) => Dim::Invalid(r),
        (Dim::Known(a), Dim::Known(b)) => {
            let r = match op {
                '+' => a.checked_add(b),
                '-' => a.checked_sub(b),
                '*' => a.checked_mul(b),
                _ => a.checked_div(b),
            };
            r.map_or_else(|| Dim::Invalid(format!("{a} {op} {b} overflows or divides by zero")), Dim::Known)
        }
        _ => Dim::Any,
    }
}

/// Reads an optional field: `None` when absent.
pub fn read_optional<'a, X: ModelField<'a>>(cx: &mut ReadCx<'a>, spec: &FieldSpec<'_>) -> Result<Option<X>> {
    if X::is_present(cx, spec.name) {
        X::read_field(cx, spec).map(Some)
    } else {
        Ok(None)
    }
}

/// Writes an optional field (nothing for `None`).
pub fn write_optional<'a, 's, X: ModelField<'a>>(
    x: &'s Option<X>,
    cx: &mut WriteCx<'s>,
    spec: &FieldSpec<'_>,
) -> Result<()> {
    match x {
        Some(x) => x.write_field(cx, spec),
        None => Ok(()),
    }
}

fn split_template(template: &str) -> (&str, &str) {
    template.split_once("{}").unwrap_or((template, ""))
}

/// The element name of number `i`.
pub fn numbered(prefix: &str, template: &str, i: u64) -> String {
    let (before, after) = split_template(template);
    super::__private::join(prefix, &format!("{before}{i}{after}"))
}

/// Reads a numbered list (`blk.{}`): `count` elements, or, for an unknown count, as many as
/// the tensors present number (with an error for a hole).
pub fn read_numbered<'a, X: ModelField<'a>>(
    cx: &mut ReadCx<'a>,
    prefix: &str,
    template: &str,
    count: Dim,
    spec: &FieldSpec<'_>,
) -> Result<Vec<X>> {
    let full = join(prefix, template);
    let count = match count {
        // Each element binds at least one tensor in any real model: a larger count is a
        // hostile or broken value, refused before reading (or allocating) anything.
        Dim::Known(n) if n > cx.src.tensor_count() as u64 => {
            return Err(ModelError::Constraint {
                name: full,
                reason: format!(
                    "count {n} is more than the {} of the model",
                    crate::format::count(cx.src.tensor_count(), "tensor")
                ),
            }
            .into())
        }
        Dim::Known(n) => n,
        Dim::Invalid(reason) => return Err(ModelError::Constraint { name: full, reason }.into()),
        Dim::Any => {
            let (before, after) = split_template(&full);
            let mut present = BTreeSet::new();
            for t in cx.src.tensor_infos() {
                // A name that is not UTF-8 matches no template (templates are text).
                let Some(rest) = t.name.to_str().ok().and_then(|n| n.strip_prefix(before)) else { continue };
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                let (num, tail) = rest.split_at(digits);
                if num.is_empty() || (num.len() > 1 && num.starts_with('0')) {
                    continue;
                }
                let Some(tail) = tail.strip_prefix(after) else { continue };
                if !(tail.is_empty() || tail.starts_with('.')) {
                    continue;
                }
                if let Ok(i) = num.parse::<u64>() {
                    if present.contains(&i) {
                        continue;
                    }
                    let name = numbered("", &full, i);
                    if X::is_present(cx, &name) {
                        present.insert(i);
                    }
                }
            }
            let max = match present.last() {
                Some(&m) => m,
                None => return Ok(Vec::new()),
            };
            if let Some(missing) = (0..=max).zip(present.iter()).find(|(i, p)| i != *p).map(|(i, _)| i) {
                return Err(ModelError::NumberingHole { template: full, missing, max }.into());
            }
            // `max` is a number parsed from a tensor name: u64::MAX would number more elements
            // than any source has tensors.
            max.checked_add(1).ok_or_else(|| ModelError::Constraint {
                name: full.clone(),
                reason: format!(
                    "number {max} is more than the {} of the model",
                    crate::format::count(cx.src.tensor_count(), "tensor")
                ),
            })?
        }
    };
    let mut out = Vec::new();
    for i in 0..count {
        let name = numbered("", &full, i);
        let field = format!("{}[{i}]", spec.field);
        out.push(X::read_field(cx, &FieldSpec { name: &name, field: &field, ..*spec })?);
    }
    Ok(out)
}

/// Writes a numbered list, checking its length against the metadata count.
pub fn write_numbered<'a, 's, X: ModelField<'a>>(
    xs: &'s [X],
    cx: &mut WriteCx<'s>,
    prefix: &str,
    template: &str,
    count: Dim,
    spec: &FieldSpec<'_>,
) -> Result<()> {
    let full = join(prefix, template);
    match count {
        Dim::Known(n) if n != xs.len() as u64 => {
            return Err(ModelError::CountMismatch { template: full, expected: n, found: xs.len() as u64 }.into())
        }
        Dim::Invalid(reason) => return Err(ModelError::Constraint { name: full, reason }.into()),
        _ => {}
    }
    for (i, x) in xs.iter().enumerate() {
        let name = numbered("", &full, i as u64);
        x.write_field(cx, &FieldSpec { name: &name, ..*spec })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names `dtype = "..."` accepts (a list the proc-macro crate keeps, since it cannot
    /// depend on this one) are exactly the ggml types' names.
    #[test]
    fn the_derive_knows_every_ggml_type_by_name() {
        let derive: &[&str] = &__ggml_type_names!();
        let ours: Vec<&str> = GgmlType::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(derive, ours.as_slice());
    }
}
