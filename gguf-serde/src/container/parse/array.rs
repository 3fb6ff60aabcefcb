//! Array values, resumable at their current element: the nesting held inline ([`Walk`]), fixed-size
//! elements checked in bulk, string elements validated a run at a time.

use super::*;

/// Strings validated at once by the parser ([`ascii_length_run`]): about 100 KiB of a vocabulary,
/// walked and then validated while in the cache.
pub(super) const RUN_STRINGS: u64 = 4096;

/// An array being read: its element type and count, the elements read, where they start.
#[derive(Clone, Copy)]
pub(super) struct Frame {
    pub(super) elem: ValueType,
    pub(super) len: u64,
    pub(super) done: u64,
    pub(super) start: usize,
}

/// The arrays being read, outermost first (an array of arrays nests at most [`MAX_DEPTH`]), held
/// inline; the state that lets a value resume at its current element.
pub(super) struct Walk {
    pub(super) frames: [Frame; MAX_DEPTH],
    pub(super) depth: usize,
    /// Every string of the array read so far is UTF-8 (ggml does not require it, and neither does
    /// this parser; the flag lets a valid array's strings be handed out as `&str` unchecked).
    pub(super) utf8: bool,
}

impl Walk {
    pub(super) fn new() -> Walk {
        Walk { frames: [Frame { elem: ValueType::U8, len: 0, done: 0, start: 0 }; MAX_DEPTH], depth: 0, utf8: true }
    }

    pub(super) fn top(&self) -> Option<Frame> {
        self.frames.get(self.depth.checked_sub(1)?).copied()
    }

    pub(super) fn top_mut(&mut self) -> Option<&mut Frame> {
        self.frames.get_mut(self.depth.checked_sub(1)?)
    }

    pub(super) fn push(&mut self, f: Frame) {
        if let Some(slot) = self.frames.get_mut(self.depth) {
            *slot = f;
            // The slot exists: depth < frames.len() (at most MAX_DEPTH), so this cannot overflow.
            self.depth = self.depth.saturating_add(1);
        }
    }

    /// `key` with the index of the element being read at each level (`key[3]`, `key[1][2]`): the
    /// number of elements done so far in each open array.
    fn element_path(&self, key: &str) -> String {
        let mut path = key.to_owned();
        for f in self.frames.iter().take(self.depth) {
            path.push_str(&format!("[{}]", f.done));
        }
        path
    }

    /// Reads an array value (its header if not read yet, then its elements from the one it
    /// stopped at), committing each element to `checkpoint`; returns element type, count, the
    /// byte range of the elements and whether all its strings are UTF-8.
    pub(super) fn array(
        &mut self,
        c: &mut Cursor<'_>,
        key: &str,
        checkpoint: &mut usize,
    ) -> Res<(ValueType, u64, Range<usize>, bool)> {
        if self.depth == 0 {
            self.push(array_header(c, key, 1)?);
            self.utf8 = true;
            *checkpoint = c.pos;
        }
        while let Some(top) = self.top() {
            // A frame's `done` counts up to its `len` and never past it, and `depth` is at least
            // 1 while there is a top frame: the saturating operations below never saturate.
            if top.done == top.len {
                self.depth = self.depth.saturating_sub(1);
                match self.top_mut() {
                    None => return Ok((top.elem, top.len, top.start..c.pos, self.utf8)),
                    Some(parent) => parent.done = parent.done.saturating_add(1),
                }
            } else if top.elem == ValueType::Array {
                let inner = array_header(c, key, self.depth.saturating_add(1))?;
                self.push(inner);
            } else {
                let left = top.len.saturating_sub(top.done);
                let done = match top.elem {
                    // A string of the array that is cut or too long is named by its index.
                    ValueType::String => strings(c, key, left, &mut self.utf8).map_err(|h| match h {
                        Halt::Fail(e) => Halt::Fail(e.name_element(|k| self.element_path(k))),
                        more => more,
                    })?,
                    elem => fixed_elements(c, key, elem, left)?,
                };
                if let Some(t) = self.top_mut() {
                    t.done = t.done.saturating_add(done);
                }
            }
            *checkpoint = c.pos;
        }
        // Not reached: the loop returns when the outermost array ends.
        Ok((ValueType::U8, 0, c.pos..c.pos, self.utf8))
    }
}

/// An array's element type and count, checked against the bytes left.
pub(super) fn array_header(c: &mut Cursor<'_>, key: &str, depth: usize) -> Res<Frame> {
    let at = c.pos as u64;
    if depth > MAX_DEPTH {
        return Err(FormatError::TooDeep { key: key.to_owned(), limit: MAX_DEPTH, offset: at }.into());
    }
    let id = c.u32(Item::Array, Some(key))?;
    let elem = ValueType::from_id(id).ok_or_else(|| FormatError::UnknownValueType {
        key: key.to_owned(),
        id,
        in_array: true,
        offset: at,
    })?;
    let count_at = c.pos as u64;
    let len = c.u64(Item::Array, Some(key))?;
    if !c.has(len.saturating_mul(elem.min_size() as u64))? {
        return Err(FormatError::TooLong {
            item: Item::Array,
            owner: Some(key.to_owned()),
            offset: count_at,
            count: len,
            remaining: c.remaining(),
        }
        .into());
    }
    Ok(Frame { elem, len, done: 0, start: c.pos })
}

/// All `len` elements of a fixed-size type (their bytes fit: the count was checked); returns
/// `len`. BOOL elements are any bytes, as for a scalar (`cursor.rs`, `scalar`).
pub(super) fn fixed_elements(c: &mut Cursor<'_>, key: &str, elem: ValueType, len: u64) -> Res<u64> {
    let size = elem.fixed_size().unwrap_or(1) as u64;
    c.take(len.saturating_mul(size), Item::Array, Some(key))?;
    Ok(len)
}

/// Reads at least one of the next `max` strings of an array; returns how many, and clears `utf8`
/// if one of them is not UTF-8 (accepted, as ggml accepts it).
///
/// A run of strings whose length fields are all ASCII ([`ascii_length_run`]) is checked with one
/// SIMD UTF-8 pass over the run (262,144 calls fewer for a Gemma vocabulary): the run is valid
/// exactly when each of its strings is. A run that fails is walked again string by string for
/// the lengths only. The string that ends a run (a length with a byte ≥ 0x80, or one not wholly
/// in the bytes read so far) is read on its own, with every check.
pub(super) fn strings(c: &mut Cursor<'_>, key: &str, max: u64, utf8: &mut bool) -> Res<u64> {
    let (end, n) = ascii_length_run(c.data, c.pos, max.min(RUN_STRINGS), c.endian);
    if n == 0 {
        let r = c.string(Item::String, Some(key))?;
        if *utf8 && c.data.get(r).is_none_or(|b| simdutf8::basic::from_utf8(b).is_err()) {
            *utf8 = false;
        }
        return Ok(1);
    }
    // simdutf8: the same validation as std, several times faster on non-ASCII text. Once a
    // string of the array is known not to be UTF-8, the others are not checked.
    if !*utf8 || c.data.get(c.pos..end).is_some_and(|run| simdutf8::basic::from_utf8(run).is_ok()) {
        c.pos = end;
        return Ok(n);
    }
    *utf8 = false;
    c.pos = end;
    Ok(n)
}
