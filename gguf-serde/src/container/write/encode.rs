//! Encoding of key/value pairs and tensor infos into header bytes (GGUF spec, "File Structure":
//! `gguf_kv_t`, `gguf_tensor_info_t`), and their encoded lengths; used by [`super::GgufWriter`]
//! and by the serde serializer's offset accounting.

use super::*;

pub(super) struct Encoder {
    pub(super) out: Vec<u8>,
    pub(super) endian: Endian,
    /// Where `out` will start in the file (for the offsets of errors).
    pub(super) base: u64,
}

macro_rules! put {
    ($self:ident, $v:expr) => {
        match $self.endian {
            Endian::Little => $self.out.extend_from_slice(&$v.to_le_bytes()),
            Endian::Big => $self.out.extend_from_slice(&$v.to_be_bytes()),
        }
    };
}

/// The bytes `v` takes when encoded as a value (after its type id): for the output offsets of
/// errors about values not written yet.
pub(crate) fn encoded_len(v: &Value) -> u64 {
    match v {
        Value::String(s) => (s.len() as u64).saturating_add(8),
        Value::Array(a) => array_len(a),
        v => v.value_type().fixed_size().unwrap_or(0) as u64,
    }
}

/// The encoded size of an array value: element type 4, count 8, then the elements.
pub(crate) fn array_len(a: &Array) -> u64 {
    elems_len(a).saturating_add(12)
}

/// The encoded size of the elements of `a` (the array value without its 12-byte head).
pub(crate) fn elems_len(a: &Array) -> u64 {
    let n = a.len() as u64;
    match a {
        Array::String(v) => v.iter().fold(0u64, |t, s| t.saturating_add(8).saturating_add(s.len() as u64)),
        Array::Array(v) => v.iter().fold(0u64, |t, x| t.saturating_add(array_len(x))),
        a => n.saturating_mul(a.elem_type().fixed_size().unwrap_or(0) as u64),
    }
}

impl Encoder {
    /// [`WriteError::TooDeep`] for an array starting here.
    #[cold]
    pub(super) fn too_deep(&self, key: &str) -> Error {
        WriteError::TooDeep {
            key: key.to_owned(),
            limit: MAX_DEPTH,
            offset: self.base.saturating_add(self.out.len() as u64),
        }
        .into()
    }

    pub(super) fn u32(&mut self, v: u32) {
        put!(self, v)
    }

    pub(super) fn u64(&mut self, v: u64) {
        put!(self, v)
    }

    pub(super) fn string(&mut self, s: &[u8]) {
        self.u64(s.len() as u64);
        self.out.extend_from_slice(s);
    }

    pub(super) fn value(&mut self, v: &Value, key: &str, depth: usize) -> Result<()> {
        match v {
            Value::U8(x) => self.out.push(*x),
            Value::I8(x) => put!(self, x),
            Value::U16(x) => put!(self, x),
            Value::I16(x) => put!(self, x),
            Value::U32(x) => put!(self, x),
            Value::I32(x) => put!(self, x),
            Value::F32(x) => put!(self, x),
            Value::Bool(x) => self.out.push(u8::from(*x)),
            Value::String(s) => self.string(s.as_bytes()),
            Value::U64(x) => put!(self, x),
            Value::I64(x) => put!(self, x),
            Value::F64(x) => put!(self, x),
            Value::Array(a) => self.array(a, key, depth)?,
        }
        Ok(())
    }

    pub(super) fn array(&mut self, a: &Array, key: &str, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(self.too_deep(key));
        }
        self.u32(a.elem_type().id());
        self.u64(a.len() as u64);
        macro_rules! each {
            ($v:expr) => {
                for x in $v {
                    put!(self, x)
                }
            };
        }
        match a {
            Array::U8(v) => self.out.extend_from_slice(v),
            Array::I8(v) => each!(v),
            Array::U16(v) => each!(v),
            Array::I16(v) => each!(v),
            Array::U32(v) => each!(v),
            Array::I32(v) => each!(v),
            Array::F32(v) => each!(v),
            Array::Bool(v) => self.out.extend(v.iter().map(|&b| u8::from(b))),
            Array::String(v) => v.iter().for_each(|s| self.string(s.as_bytes())),
            Array::Array(v) => {
                for inner in v {
                    // depth <= MAX_DEPTH here (checked above).
                    self.array(inner, key, depth.saturating_add(1))?;
                }
            }
            Array::U64(v) => each!(v),
            Array::I64(v) => each!(v),
            Array::F64(v) => each!(v),
        }
        Ok(())
    }

    pub(super) fn value_ref(&mut self, v: ValueRef<'_>, key: &str, depth: usize) -> Result<()> {
        match v {
            ValueRef::U8(x) => self.out.push(x),
            ValueRef::I8(x) => put!(self, x),
            ValueRef::U16(x) => put!(self, x),
            ValueRef::I16(x) => put!(self, x),
            ValueRef::U32(x) => put!(self, x),
            ValueRef::I32(x) => put!(self, x),
            ValueRef::F32(x) => put!(self, x),
            ValueRef::Bool(x) => self.out.push(u8::from(x)),
            ValueRef::String(s) => self.string(s.as_bytes()),
            ValueRef::U64(x) => put!(self, x),
            ValueRef::I64(x) => put!(self, x),
            ValueRef::F64(x) => put!(self, x),
            ValueRef::Array(a) => self.array_ref(a, key, depth)?,
        }
        Ok(())
    }

    pub(super) fn array_ref(&mut self, a: ArrayRef<'_>, key: &str, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(self.too_deep(key));
        }
        self.u32(a.elem_type().id());
        self.u64(a.len());
        let same_order = a.endian() == self.endian;
        match a.elem_type() {
            // Same byte order, or single bytes: the stored bytes are the encoding.
            ValueType::U8 | ValueType::I8 => self.out.extend_from_slice(a.raw_bytes()),
            // A BOOL byte other than 0 (true, as ggml reads it) is written 1, as ggml's writer
            // writes what its reader took (`gguf_writer::write(const bool &)`).
            ValueType::Bool => self.out.extend(a.raw_bytes().iter().map(|&b| u8::from(b != 0))),
            t if same_order && t != ValueType::Array && t != ValueType::String => {
                self.out.extend_from_slice(a.raw_bytes())
            }
            _ => {
                for x in a.iter() {
                    self.value_ref(x, key, depth.saturating_add(1))?;
                }
            }
        }
        Ok(())
    }
}
