//! Tensor infos: each one read and checked, then all of them against each other and the file
//! (names, alignment, bounds, overlaps).

use super::*;

pub(super) fn tensor_info(c: &mut Cursor<'_>) -> Res<TensorEntry> {
    let info_offset = c.pos as u64;
    let name_len_at = c.pos;
    let name_len = c.length(Item::TensorName, None)?;
    if name_len > MAX_TENSOR_NAME {
        // The name itself (its first 256 bytes).
        let shown = c.take(name_len.min(256), Item::TensorName, None)?;
        return Err(FormatError::TensorNameTooLong {
            name: GgufStr::from_bytes(shown).to_string(),
            len: name_len,
            max: MAX_TENSOR_NAME,
            offset: name_len_at as u64,
        }
        .into());
    }
    c.pos = name_len_at;
    let name = c.string(Item::TensorName, None)?;
    // Errors name the tensor as `Display` shows it (escaped: bad bytes as `\xNN`).
    let name_shown = c.str_at(&name).escaped();
    let name_str: &str = &name_shown;
    let dims_at = c.pos as u64;
    let n_dims = c.u32(Item::Dims, Some(name_str))?;
    if n_dims as usize > MAX_DIMS {
        return Err(FormatError::TooManyDims { name: name_str.to_owned(), n_dims, offset: dims_at }.into());
    }
    let mut ne = [1u64; MAX_DIMS];
    for (i, d) in ne.iter_mut().enumerate().take(n_dims as usize) {
        let at = c.pos as u64;
        *d = c.u64(Item::Dims, Some(name_str))?;
        if *d > i64::MAX as u64 {
            return Err(FormatError::BadDim { name: name_str.to_owned(), index: i, value: *d, offset: at }.into());
        }
    }
    let type_at = c.pos as u64;
    let type_id = c.u32(Item::Dims, Some(name_str))?;
    let dtype = GgmlType::from_id(type_id).ok_or_else(|| {
        if REMOVED_TYPE_IDS.contains(&type_id) {
            FormatError::RemovedTensorType { name: name_str.to_owned(), id: type_id, offset: type_at }
        } else {
            FormatError::UnknownTensorType { name: name_str.to_owned(), id: type_id, offset: type_at }
        }
    })?;
    let offset = c.u64(Item::Dims, Some(name_str))?;
    let dims = ne.get(..n_dims as usize).unwrap_or_default();
    let n_elements = dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d)).filter(|&n| n <= i64::MAX as u64);
    let Some(n_elements) = n_elements else {
        return Err(FormatError::SizeOverflow { name: name_str.to_owned(), ne: dims.to_vec() }.into());
    };
    if !ggml_new_tensor_accepts(&ne) {
        return Err(FormatError::SizeOverflow { name: name_str.to_owned(), ne: dims.to_vec() }.into());
    }
    let ne0 = ne[0];
    if ne0.checked_rem(dtype.block_size()) != Some(0) {
        return Err(FormatError::NotBlockMultiple {
            name: name_str.to_owned(),
            dtype,
            ne0,
            block_size: dtype.block_size(),
        }
        .into());
    }
    let nbytes = dtype.nbytes(dims).filter(|&n| n <= i64::MAX as u64);
    let Some(nbytes) = nbytes else {
        return Err(FormatError::SizeOverflow { name: name_str.to_owned(), ne: dims.to_vec() }.into());
    };
    Ok(TensorEntry { name, dtype, ne, n_dims: n_dims as u8, offset, nbytes, n_elements, info_offset })
}

/// Checks the tensors against each other and the file: unique names; offsets aligned, inside
/// the file, not overlapping. Returns the indices sorted by name and the data section's start.
pub(super) fn check_tensors(
    tensors: &[TensorEntry],
    data: &[u8],
    infos_end: u64,
    alignment: u32,
    file_len: u64,
) -> Result<(Vec<u32>, u64)> {
    // Duplicate names: sort indices by name and compare neighbours.
    let mut by_name: Vec<u32> = (0..tensors.len() as u32).collect();
    let name_of =
        |i: u32| -> &[u8] { tensors.get(i as usize).and_then(|t| data.get(t.name.clone())).unwrap_or_default() };
    by_name.sort_unstable_by(|&a, &b| name_of(a).cmp(name_of(b)));
    for w in by_name.windows(2) {
        if let [a, b] = *w {
            if name_of(a) == name_of(b) {
                let later = a.max(b) as usize;
                let (name, offset) =
                    tensors.get(later).map(|t| (str_in(data, &t.name).to_string(), t.info_offset)).unwrap_or_default();
                return Err(FormatError::DuplicateTensor { name, offset }.into());
            }
        }
    }

    // ggml (`gguf_init_from_file_impl`) seeks to the aligned offset only when there are tensors:
    // a metadata-only file's data section starts right after its (empty) tensor infos.
    let padded = if tensors.is_empty() { Some(infos_end) } else { align_up(infos_end, alignment) };
    let data_offset = padded.ok_or(FormatError::TooLong {
        item: Item::Header,
        owner: None,
        offset: infos_end,
        count: infos_end,
        remaining: 0,
    })?;

    // Offsets aligned, inside the file, not overlapping.
    let mut by_offset: Vec<u32> = (0..tensors.len() as u32).collect();
    by_offset.sort_unstable_by_key(|&i| tensors.get(i as usize).map(|t| t.offset));
    let mut prev: Option<(&TensorEntry, u64)> = None;
    for &i in &by_offset {
        let Some(t) = tensors.get(i as usize) else { continue };
        let name = || str_in(data, &t.name).to_string();
        if t.offset.checked_rem(u64::from(alignment)) != Some(0) {
            return Err(FormatError::MisalignedTensor { name: name(), relative_offset: t.offset, alignment }.into());
        }
        let start = data_offset.checked_add(t.offset);
        let end = start.and_then(|s| s.checked_add(t.nbytes));
        match (start, end) {
            (Some(start), Some(end)) if end <= file_len => {
                if let Some((p, p_end)) = prev {
                    if start < p_end && t.nbytes > 0 {
                        return Err(FormatError::TensorsOverlap {
                            first: str_in(data, &p.name).to_string(),
                            second: name(),
                            second_start: start,
                            first_end: p_end,
                        }
                        .into());
                    }
                }
                if prev.is_none_or(|(_, p_end)| end > p_end) {
                    prev = Some((t, end));
                }
            }
            (start, end) => {
                return Err(FormatError::TensorOutOfBounds {
                    name: name(),
                    start: start.unwrap_or(u64::MAX),
                    end: end.unwrap_or(u64::MAX),
                    file_len,
                }
                .into())
            }
        }
    }
    Ok((by_name, data_offset))
}

/// Whether ggml's `ggml_new_tensor` (`ggml/src/ggml.c`, `ggml_new_tensor_impl`) accepts these
/// stored dims (fastest first, padded with 1s). Every reader of ggml that keeps a ggml context
/// (llama.cpp's model loader, and `gguf_init_from_file` with tensor data) creates each tensor
/// with it, and it aborts the process unless the product of `ne[0]` and the later dims above 1
/// stays below `i64::MAX` at every step (`INT64_MAX / ne[i] > product`). It skips dims of 0,
/// so a tensor with 0 elements whose other dims multiply past `i64::MAX` aborts ggml (found by
/// the `differential` fuzz target): such a file is refused with `SizeOverflow`.
fn ggml_new_tensor_accepts(ne: &[u64; MAX_DIMS]) -> bool {
    let Some((&first, rest)) = ne.split_first() else { return true };
    let mut product = first;
    for &d in rest.iter().filter(|&&d| d > 1) {
        // `d > 1`, so the division is defined and `product * d` stays below i64::MAX.
        if (i64::MAX as u64).checked_div(d).is_none_or(|q| q <= product) {
            return false;
        }
        product = product.saturating_mul(d);
    }
    true
}
