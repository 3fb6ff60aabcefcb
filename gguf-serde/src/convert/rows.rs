//! The row model of the converter's tensor transforms: a tensor is a sequence of rows of its last
//! dimension, and a row-choosing transform ([`Transform::Permute`], [`Transform::KeepRows`],
//! [`Transform::Slice`]) is a map from output rows to source rows, so that every transform, a
//! split and a join stream a chunk of rows at a time (see [`Transform`] for the rules).

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

/// The output shape of the tensor `name` of canonical `shape` after `transforms`, and the map of
/// its rows to the source's.
///
/// # Errors
/// [`ConvertError::BadShape`] naming `name`: a permutation whose rows are not `heads` heads of an
/// even width, a slice outside its dimension or of the last dimension, rows kept of a scalar.
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
                    return Err(bad(name, format!("{rows} rows are not {heads} heads of an even width")));
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
