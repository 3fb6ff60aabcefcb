//! The row model of the converter's tensor transforms: a tensor is a sequence of rows of its last
//! dimension, and a row-choosing transform ([`Transform::Permute`], [`Transform::KeepRows`],
//! [`Transform::Slice`]) is a map from output rows to source rows, so that every transform, a
//! split and a join stream a chunk of rows at a time (see [`Transform`] for the rules).
//!
//! [`Transform::Transpose`] moves values across rows: as the last row-choosing transform it
//! converts whole matrices at a time ([`RowMap::transpose`]). A [`Transform::Stride`] (with or
//! without transpositions) makes an element view instead ([`ElemView`]): a strided view of the
//! source, as numpy's `transpose` and `x[..., a::b]` are, whose output rows are gathered value by
//! value.

use super::arch::{Join, Transform};
use super::ConvertError;

type Result<T, E = ConvertError> = std::result::Result<T, E>;

/// The row view of a canonical `shape`: the dimensions that index rows (all but the last; a 1-D
/// tensor's one dimension, its rows being single values; none for a scalar) and the row width.
pub(crate) fn row_view(shape: &[u64]) -> (&[u64], u64) {
    match shape.len() {
        0 => (&[], 1),
        1 => (shape, 1),
        n => (&shape[..n - 1], shape[n - 1]),
    }
}

/// Rows of a canonical `shape` (the product of its row dimensions).
pub(crate) fn row_count(shape: &[u64]) -> u64 {
    row_view(shape).0.iter().product()
}

/// One row-choosing step, with the shape it applies to.
#[derive(Clone, Debug)]
enum Step {
    /// `LlamaModel.permute` over the first dimension of `dim0` entries of `inner` rows each.
    Permute { dim0: u64, inner: u64, heads: u64 },
    /// Keep `len` of the `size` entries of a row dimension from `start`; `inner` rows per entry.
    Slice { size: u64, start: u64, len: u64, inner: u64 },
}

/// A composed row-choosing map: output row → source row; with a final
/// [`Transform::Transpose`], the map is of the rows before it (see [`RowMap::transpose`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct RowMap {
    steps: Vec<Step>,
    /// `(a, b)` when the rows are then transposed: each `[a, b]` matrix (`a` rows of `b`) becomes
    /// `b` output rows of `a`.
    transpose: Option<(u64, u64)>,
}

impl RowMap {
    /// The source row of output row `row`.
    pub(crate) fn source_row(&self, mut row: u64) -> u64 {
        for step in self.steps.iter().rev() {
            row = match *step {
                Step::Permute { dim0, inner, heads } => {
                    let (q, rem) = (row / inner, row % inner);
                    super::permuted_row(q, dim0, heads) * inner + rem
                }
                Step::Slice { size, start, len, inner } => {
                    let block = len * inner;
                    let (o, rest) = (row / block, row % block);
                    (o * size + start) * inner + rest
                }
            };
        }
        row
    }

    /// `(a, b)` when the chosen rows are transposed at the end ([`Transform::Transpose`]): each
    /// `[a, b]` matrix of `a` consecutive chosen rows (numbered as [`source_row`](Self::source_row)
    /// takes them) gives `b` output rows of `a` values.
    pub(crate) fn transpose(&self) -> Option<(u64, u64)> {
        self.transpose
    }

    /// Whether output rows follow source rows in order (no [`Transform::Permute`]), so that the
    /// source pages of a chunk are done with once it is converted.
    pub(crate) fn is_monotonic(&self) -> bool {
        !self.steps.iter().any(|s| matches!(s, Step::Permute { .. }))
    }
}

fn bad(name: &str, reason: String) -> ConvertError {
    ConvertError::BadShape { name: name.to_owned(), reason }
}

/// A strided view of a source tensor ([`Transform::Transpose`], [`Transform::Stride`]): output
/// element `i` (a multi-index over the output shape) is source element
/// `offset + Σ i[d] × strides[d]` (in elements, row-major).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ElemView {
    /// The first source element.
    pub(crate) offset: u64,
    /// The source element stride of each output dimension, outermost first.
    pub(crate) strides: Vec<u64>,
    /// The output shape, outermost first.
    pub(crate) shape: Vec<u64>,
}

impl ElemView {
    /// The source element of the first value of output row `row`, and the source stride between
    /// the values of a row.
    pub(crate) fn row_start(&self, mut row: u64) -> (u64, u64) {
        let n = self.shape.len();
        if n == 0 {
            return (self.offset, 1);
        }
        let last = if n == 1 { 1 } else { self.strides[n - 1] };
        let row_dims = if n == 1 { n } else { n - 1 };
        let mut at = self.offset;
        for d in (0..row_dims).rev() {
            let size = self.shape[d].max(1);
            let stride = if n == 1 { self.strides[0] } else { self.strides[d] };
            at += (row % size) * stride;
            row /= size;
        }
        (at, last)
    }

    /// Source elements below this one are not read by output rows from `row` on (all strides are
    /// non-negative, so every later row starts at or beyond its outermost index's start).
    pub(crate) fn done_below(&self, row: u64) -> u64 {
        let (rd, _) = row_view(&self.shape);
        let inner: u64 = rd.get(1..).map_or(1, |x| x.iter().product::<u64>()).max(1);
        match self.strides.first() {
            Some(&s0) if self.shape.len() >= 2 => self.offset + (row / inner) * s0,
            _ => self.offset,
        }
    }
}

/// How output rows come from the source: whole rows ([`RowMap`]) or gathered values
/// ([`ElemView`]).
#[derive(Clone, Debug)]
pub(crate) enum View {
    /// Output rows are source rows.
    Rows(RowMap),
    /// Output rows are gathered from a strided view.
    Elems(ElemView),
}

/// Whether `transforms` need an element view ([`ElemView`]): a [`Transform::Stride`] does; a
/// transposition alone is converted whole matrices at a time ([`RowMap::transpose`]).
fn moves_values(transforms: &[Transform]) -> bool {
    transforms.iter().any(|t| matches!(t, Transform::Stride { .. }))
}

/// The element view of `shape` after `transforms` (see [`plan_rows`]).
fn plan_elems(name: &str, shape: &[u64], transforms: &[Transform]) -> Result<ElemView> {
    let n = shape.len();
    let mut strides = vec![1u64; n];
    for d in (0..n.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1].saturating_mul(shape[d + 1]);
    }
    let mut v = ElemView { offset: 0, strides, shape: shape.to_vec() };
    for t in transforms {
        let dims = v.shape.len();
        match *t {
            Transform::Transpose => {
                if dims < 2 {
                    return Err(bad(name, format!("a transpose of the last two dimensions of shape {:?}", v.shape)));
                }
                v.shape.swap(dims - 2, dims - 1);
                v.strides.swap(dims - 2, dims - 1);
            }
            Transform::Stride { dim, start, step } => {
                let Some(&size) = v.shape.get(dim) else {
                    return Err(bad(name, format!("a stride of dimension {dim} of shape {:?}", v.shape)));
                };
                if step == 0 || start >= size.max(1) {
                    return Err(bad(name, format!("entries {start}::{step} of a dimension of {size}")));
                }
                v.offset += start * v.strides[dim];
                v.strides[dim] *= step;
                v.shape[dim] = (size - start).div_ceil(step);
            }
            Transform::Slice { dim, start, len } => {
                let Some(&size) = v.shape.get(dim) else {
                    return Err(bad(name, format!("a slice of dimension {dim} of shape {:?}", v.shape)));
                };
                if start.checked_add(len).is_none_or(|end| end > size) {
                    return Err(bad(
                        name,
                        format!("entries {start}..{} of a dimension of {size}", start.saturating_add(len)),
                    ));
                }
                v.offset += start * v.strides[dim];
                v.shape[dim] = len;
            }
            Transform::KeepRows(k) => {
                let Some(&rows) = v.shape.first() else {
                    return Err(bad(name, "a scalar has no rows to keep".into()));
                };
                v.shape[0] = k.min(rows);
            }
            Transform::Permute { .. } => return Err(bad(name, "a head permutation together with a stride".into())),
            Transform::Reshape(_) => return Err(bad(name, "a reshape together with a stride".into())),
            Transform::Add(_) | Transform::Rows(_) => {}
        }
    }
    Ok(v)
}

/// The output shape of the tensor `name` of canonical `shape` after `transforms`, and how its
/// rows come from the source's: a [`RowMap`] (with a final [`Transform::Transpose`], of whole
/// matrices), or an [`ElemView`] when there is a [`Transform::Stride`].
///
/// # Errors
/// [`ConvertError::BadShape`] naming `name`: a permutation whose rows are not `heads` heads of an
/// even width (or together with a stride), a slice outside its dimension or (in the row model) of
/// the last dimension, rows kept of a scalar, a transpose of fewer than two dimensions (or, in the
/// row model, followed by a row-choosing transform), a reshape that changes the count or the last
/// dimension (or together with a stride), a stride of step 0 or starting outside its dimension.
pub(crate) fn plan_view(name: &str, shape: &[u64], transforms: &[Transform]) -> Result<(Vec<u64>, View)> {
    if moves_values(transforms) {
        let v = plan_elems(name, shape, transforms)?;
        return Ok((v.shape.clone(), View::Elems(v)));
    }
    let (s, map) = plan_rows(name, shape, transforms)?;
    Ok((s, View::Rows(map)))
}

/// The output shape of the tensor `name` of canonical `shape` after the row-choosing
/// `transforms`, and the map of its rows to the source's.
///
/// # Errors
/// [`ConvertError::BadShape`] naming `name`: a permutation whose rows are not `heads` heads of an
/// even width, a slice outside its dimension or of the last dimension, rows kept of a scalar, a
/// transpose or a stride (see [`plan_view`]).
pub(crate) fn plan_rows(name: &str, shape: &[u64], transforms: &[Transform]) -> Result<(Vec<u64>, RowMap)> {
    let mut s = shape.to_vec();
    let mut map = RowMap::default();
    for t in transforms {
        if map.transpose.is_some() && !matches!(t, Transform::Add(_) | Transform::Rows(_)) {
            return Err(bad(name, format!("{t:?} after a transposition (it must be the last row-choosing transform)")));
        }
        let (rd, _) = row_view(&s);
        let rd = rd.to_vec();
        let inner_of = |d: usize| rd.get(d + 1..).map_or(1, |x| x.iter().product::<u64>());
        let slice = |dim: usize, start: u64, len: u64, s: &mut Vec<u64>, map: &mut RowMap| -> Result<()> {
            let Some(&size) = rd.get(dim) else {
                return Err(bad(
                    name,
                    format!("a slice of dimension {dim} of a tensor of shape {s:?} (the last dimension is never cut)"),
                ));
            };
            if start.checked_add(len).is_none_or(|end| end > size) {
                return Err(bad(
                    name,
                    format!("entries {start}..{} of a dimension of {size}", start.saturating_add(len)),
                ));
            }
            map.steps.push(Step::Slice { size, start, len, inner: inner_of(dim) });
            s[dim] = len;
            Ok(())
        };
        match *t {
            Transform::Permute { heads } => {
                let rows = s.first().copied().unwrap_or(0);
                if heads == 0 || rows % (heads * 2) != 0 {
                    let are = if rows == 1 { "is" } else { "are" };
                    let (rows, heads) = (crate::format::count(rows, "row"), crate::format::count(heads, "head"));
                    return Err(bad(name, format!("{rows} {are} not {heads} of an even width")));
                }
                map.steps.push(Step::Permute { dim0: rows, inner: inner_of(0), heads });
            }
            Transform::KeepRows(n) => {
                let Some(&rows) = rd.first() else {
                    return Err(bad(name, "a scalar has no rows to keep".into()));
                };
                slice(0, 0, n.min(rows), &mut s, &mut map)?;
            }
            Transform::Slice { dim, start, len } => slice(dim, start, len, &mut s, &mut map)?,
            Transform::Reshape(ref to) => {
                let count = |x: &[u64]| x.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
                if to.is_empty() || count(to) != count(&s) || to.last() != s.last() {
                    return Err(bad(
                        name,
                        format!("a view of shape {s:?} as {to:?} (the same values and the same last dimension)"),
                    ));
                }
                s = to.clone();
            }
            Transform::Transpose => {
                let n = s.len();
                if n < 2 {
                    return Err(bad(name, format!("a transposition of a tensor of shape {s:?} (at least 2-D)")));
                }
                map.transpose = Some((s[n - 2], s[n - 1]));
                s.swap(n - 2, n - 1);
            }
            Transform::Add(_) | Transform::Rows(_) => {}
            Transform::Stride { .. } => return Err(bad(name, "a stride outside an element view".into())),
        }
    }
    Ok((s, map))
}

/// The shape of a joined tensor of parts of canonical shapes `parts` (after their transforms).
///
/// # Errors
/// [`ConvertError::BadShape`] naming `name` when the parts do not join: different shapes for a
/// stack, shapes that differ beyond `dim` or a `dim` that is the last (or absent) for a concat.
pub(crate) fn joined_shape(name: &str, join: Join, parts: &[&[u64]]) -> Result<Vec<u64>> {
    let first = parts.first().ok_or_else(|| bad(name, "no parts to join".into()))?;
    match join {
        Join::Stack => {
            if let Some(p) = parts.iter().find(|p| *p != first) {
                return Err(bad(name, format!("parts of shapes {first:?} and {p:?} cannot be stacked")));
            }
            let mut s = vec![parts.len() as u64];
            s.extend_from_slice(first);
            Ok(s)
        }
        Join::Concat { dim } => {
            if dim + 1 >= first.len() && !(first.len() == 1 && dim == 0) {
                return Err(bad(name, format!("a concatenation along dimension {dim} of parts of shape {first:?}")));
            }
            let mut total = 0u64;
            for p in parts {
                let same_rank = p.len() == first.len();
                let others_equal =
                    same_rank && p.iter().zip(first.iter()).enumerate().all(|(i, (a, b))| i == dim || a == b);
                if !others_equal {
                    return Err(bad(
                        name,
                        format!("parts of shapes {first:?} and {p:?} cannot be joined along dimension {dim}"),
                    ));
                }
                total = total.saturating_add(p[dim]);
            }
            let mut s = first.to_vec();
            s[dim] = total;
            Ok(s)
        }
    }
}

/// The output of a joined tensor as runs of part rows, in file order: `(part, first row, rows)`.
/// A stack is each part whole, in order; a concatenation along `dim` is, for each index of the
/// dimensions before `dim`, each part's block of rows in turn.
pub(crate) fn joined_runs(join: Join, parts: &[&[u64]]) -> Vec<(usize, u64, u64)> {
    match join {
        Join::Stack => parts.iter().enumerate().map(|(i, p)| (i, 0, row_count(p))).collect(),
        Join::Concat { dim } => {
            let Some(first) = parts.first() else { return Vec::new() };
            let outer: u64 = row_view(first).0.get(..dim).map_or(1, |x| x.iter().product());
            let mut runs = Vec::new();
            for o in 0..outer {
                for (i, p) in parts.iter().enumerate() {
                    let block: u64 = row_view(p).0.get(dim..).map_or(1, |x| x.iter().product());
                    if block > 0 {
                        runs.push((i, o * block, block));
                    }
                }
            }
            runs
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference's operations on a small array, by hand: row-major values, rows of `w`.
    fn rows_of(values: &[u64], w: usize) -> Vec<Vec<u64>> {
        values.chunks(w).map(<[u64]>::to_vec).collect()
    }

    #[test]
    fn a_slice_of_a_middle_dimension_is_numpy_slicing() {
        // x = arange(2*6*3).reshape(2, 6, 3); x[:, 2:5, :]
        let x: Vec<u64> = (0..36).collect();
        let (shape, map) = plan_rows("t", &[2, 6, 3], &[Transform::Slice { dim: 1, start: 2, len: 3 }]).unwrap();
        assert_eq!(shape, [2, 3, 3]);
        let rows = rows_of(&x, 3);
        let got: Vec<u64> = (0..6).flat_map(|r| rows[map.source_row(r) as usize].clone()).collect();
        let want: Vec<u64> = [6, 7, 8, 9, 10, 11, 12, 13, 14, 24, 25, 26, 27, 28, 29, 30, 31, 32].to_vec();
        assert_eq!(got, want);
    }

    #[test]
    fn a_one_dimensional_tensor_slices_its_values() {
        let (shape, map) = plan_rows("b", &[12], &[Transform::Slice { dim: 0, start: 4, len: 4 }]).unwrap();
        assert_eq!(shape, [4]);
        assert_eq!((0..4).map(|r| map.source_row(r)).collect::<Vec<_>>(), [4, 5, 6, 7]);
    }

    #[test]
    fn the_last_dimension_is_never_cut() {
        assert!(plan_rows("t", &[4, 8], &[Transform::Slice { dim: 1, start: 0, len: 4 }]).is_err());
        assert!(plan_rows("t", &[4, 8], &[Transform::Slice { dim: 0, start: 3, len: 2 }]).is_err());
        assert!(plan_rows("t", &[], &[Transform::KeepRows(1)]).is_err());
    }

    /// The values of output rows `0..rows` of width `w` of `view`, gathered from `src`.
    fn gathered(view: &ElemView, src: &[u64], rows: u64, w: u64) -> Vec<u64> {
        let mut out = Vec::new();
        for r in 0..rows {
            let (start, stride) = view.row_start(r);
            out.extend((0..w).map(|j| src[(start + j * stride) as usize]));
        }
        out
    }

    #[test]
    fn a_transpose_then_a_stride_is_numpy_indexing() {
        // x = arange(2*3*4).reshape(2, 3, 4); y = x.transpose(0, 2, 1)[:, 1::2, :]  (shape [2, 2, 3])
        let x: Vec<u64> = (0..24).collect();
        let t = [Transform::Transpose, Transform::Stride { dim: 1, start: 1, step: 2 }];
        let (shape, view) = plan_view("g", &[2, 3, 4], &t).unwrap();
        assert_eq!(shape, [2, 2, 3]);
        let View::Elems(v) = view else { panic!("not an element view") };
        let mut want = Vec::new();
        for e in 0..2u64 {
            for c in [1u64, 3] {
                for r in 0..3u64 {
                    want.push(x[(e * 12 + r * 4 + c) as usize]);
                }
            }
        }
        assert_eq!(gathered(&v, &x, 4, 3), want);
        // the rows of expert 1 (from row 2) read x[1, r, c] for c in {1, 3}: nothing below 12 + 1
        assert_eq!(v.done_below(2), 13);
    }

    #[test]
    fn a_stride_of_the_last_dimension_picks_within_rows() {
        // b = arange(2*6).reshape(2, 6); b[..., ::2] and b[..., 1::2]
        let b: Vec<u64> = (0..12).collect();
        for (start, want) in [(0, [0, 2, 4, 6, 8, 10]), (1, [1, 3, 5, 7, 9, 11])] {
            let (shape, view) = plan_view("b", &[2, 6], &[Transform::Stride { dim: 1, start, step: 2 }]).unwrap();
            assert_eq!(shape, [2, 3]);
            let View::Elems(v) = view else { panic!("not an element view") };
            assert_eq!(gathered(&v, &b, 2, 3), want);
        }
        assert!(plan_view("b", &[2, 6], &[Transform::Stride { dim: 1, start: 6, step: 2 }]).is_err());
        assert!(plan_view("b", &[2, 6], &[Transform::Stride { dim: 1, start: 0, step: 0 }]).is_err());
        assert!(plan_view("b", &[6], &[Transform::Transpose]).is_err());
        let permuted_stride =
            [Transform::Permute { heads: 1 }, Transform::Transpose, Transform::Stride { dim: 0, start: 0, step: 1 }];
        assert!(plan_view("q", &[8, 2], &permuted_stride).is_err());
    }

    #[test]
    fn permute_then_keep_rows_compose_in_order() {
        // permute 8 rows as 1 head: [0,4,1,5,2,6,3,7]; then keep 3: [0,4,1]
        let t = [Transform::Permute { heads: 1 }, Transform::KeepRows(3)];
        let (shape, map) = plan_rows("q", &[8, 2], &t).unwrap();
        assert_eq!(shape, [3, 2]);
        assert_eq!((0..3).map(|r| map.source_row(r)).collect::<Vec<_>>(), [0, 4, 1]);
        assert!(!map.is_monotonic());
    }

    #[test]
    fn a_view_slice_and_transpose_is_torch_s() {
        // x = arange(2*5*3).reshape(10, 3).view(2, 5, 3)[:, 1:3, :].transpose(1, 2)
        let t =
            [Transform::Reshape(vec![2, 5, 3]), Transform::Slice { dim: 1, start: 1, len: 2 }, Transform::Transpose];
        let (shape, map) = plan_rows("k_b", &[10, 3], &t).unwrap();
        assert_eq!(shape, [2, 3, 2]);
        assert_eq!(map.transpose(), Some((2, 3)));
        // the chosen rows, before the transposition: rows 1, 2 of each 5
        assert_eq!((0..4).map(|r| map.source_row(r)).collect::<Vec<_>>(), [1, 2, 6, 7]);
        assert!(plan_rows("t", &[10, 3], &[Transform::Reshape(vec![5, 6])]).is_err());
        assert!(plan_rows("t", &[10, 3], &[Transform::Reshape(vec![2, 6, 3])]).is_err());
        assert!(plan_rows("t", &[10, 3], &[Transform::Transpose, Transform::KeepRows(1)]).is_err());
        assert!(plan_rows("t", &[10], &[Transform::Transpose]).is_err());
    }

    #[test]
    fn stacks_and_concatenations_as_torch_makes_them() {
        let a: &[u64] = &[2, 3, 4];
        assert_eq!(joined_shape("e", Join::Stack, &[a, a, a]).unwrap(), [3, 2, 3, 4]);
        assert_eq!(joined_runs(Join::Stack, &[a, a]), [(0, 0, 6), (1, 0, 6)]);
        let b: &[u64] = &[2, 1, 4];
        // torch.cat([a, b], dim=1): for each of the 2 outer entries, a's 3 rows then b's 1.
        assert_eq!(joined_shape("c", Join::Concat { dim: 1 }, &[a, b]).unwrap(), [2, 4, 4]);
        assert_eq!(joined_runs(Join::Concat { dim: 1 }, &[a, b]), [(0, 0, 3), (1, 0, 1), (0, 3, 3), (1, 1, 1)]);
        assert_eq!(joined_runs(Join::Concat { dim: 0 }, &[a, b]), [(0, 0, 6), (1, 0, 2)]);
        assert!(joined_shape("c", Join::Stack, &[a, b]).is_err());
        assert!(joined_shape("c", Join::Concat { dim: 2 }, &[a, a]).is_err());
        assert!(joined_shape("c", Join::Concat { dim: 0 }, &[a, &[2, 3, 5]]).is_err());
    }
}
