//! `--override-kv KEY=TYPE:VALUE` ([`KvOverride`]): keys set in the output, shared by the plan's
//! model facts, the writer and the importance matrix's `quantize.imatrix.*` keys.

use super::c_num::{c_atof, c_atol};
use crate::container::Value;
use crate::error::{Error, QuantizeError, Result};

/// The value of a `--override-kv KEY=TYPE:VALUE` option, as llama-quantize writes it.
#[derive(Clone, Debug, PartialEq)]
pub enum KvOverrideValue {
    /// `int:N`: written as UINT32 of |N| (truncated to 32 bits), as llama-quantize does.
    Int(i64),
    /// `float:X`: written as FLOAT32.
    Float(f64),
    /// `bool:true` or `bool:false`.
    Bool(bool),
    /// `str:TEXT`, at most 127 bytes, as bytes (UTF-8 or not: llama-quantize copies them).
    Str(Vec<u8>),
}

/// A `--override-kv` option: `key` is set (replacing any earlier value and moving to the end).
#[derive(Clone, Debug, PartialEq)]
pub struct KvOverride {
    /// The key (1 to 127 bytes, UTF-8 or not: llama-quantize copies them).
    pub key: Vec<u8>,
    /// The value.
    pub value: KvOverrideValue,
}

impl KvOverride {
    /// Parses `KEY=TYPE:VALUE` as llama.cpp's `string_parse_kv_override` (common/common.cpp)
    /// parses it: TYPE is `int`, `float`, `bool` or `str`; an `int` or `float` value is read as
    /// C's `atol`/`atof` read it, the longest leading number and 0 without one, as llama-quantize
    /// writes it: `int:` and `int:abc` are 0, `int:7x` is 7, `float:1.5e` is 1.5, `float:0x1p3`
    /// (a C hexadecimal float) is 8, `float:nan` and `float:inf` are NaN and infinity (the
    /// reference's behaviour, kept so that the output is llama-quantize's).
    ///
    /// # Errors
    /// [`QuantizeError`] for what the reference refuses: a missing `=`, a key of 128 bytes or more,
    /// an unknown TYPE, a bool other than `true`/`false`, a string over 127 bytes; and an empty
    /// key (the reference's parser takes it, then ggml aborts on it: `GGML_ASSERT(!key.empty())`).
    pub fn parse(s: &str) -> Result<Self> {
        KvOverride::parse_bytes(s.as_bytes())
    }

    /// [`KvOverride::parse`] of any bytes (a command-line argument that is not UTF-8): the key
    /// and a `str` value are taken as bytes, as llama-quantize takes them; an `int` or `float`
    /// value is read up to its first byte that is not part of a number, as `atol`/`atof` read it
    /// (`int:\xff` is 0, `float:1\xff` is 1.0).
    ///
    /// # Errors
    /// As [`KvOverride::parse`] (a `bool` value that is not UTF-8 is neither `true` nor
    /// `false`); an unknown TYPE is named in the escaped form of names (`blob\xff`).
    pub fn parse_bytes(s: &[u8]) -> Result<Self> {
        let shown = crate::format::GgufStr::from_bytes(s);
        let bad =
            |why: &str| Err(Error::from(QuantizeError::refused(format!("malformed KV override {shown:?}: {why}"))));
        let Some(eq) = s.iter().position(|&b| b == b'=') else { return bad("expected KEY=TYPE:VALUE") };
        let (key, rest) = s.split_at(eq);
        let rest = rest.get(1..).unwrap_or_default();
        if key.is_empty() || key.len() >= 128 {
            return bad("the key must be 1 to 127 bytes");
        }
        // The type as llama.cpp's parser tells it, by the prefix `TYPE:` of the bytes after `=`
        // (without a colon, the whole rest is an unknown type).
        let unknown = |ty: &[u8]| {
            let ty = crate::format::GgufStr::from_bytes(ty);
            bad(&format!("unknown type {ty:?} (int, float, bool or str)"))
        };
        let Some(colon) = rest.iter().position(|&b| b == b':') else { return unknown(rest) };
        let (ty, v) = (rest.split_at(colon).0, rest.get(colon + 1..).unwrap_or_default());
        let text = std::str::from_utf8(v).ok();
        // C's `atol`/`atof` read a number from the start and stop at the first byte that is not
        // part of one: the longest UTF-8 prefix holds every such number.
        let leading = match std::str::from_utf8(v) {
            Ok(t) => t,
            Err(e) => std::str::from_utf8(v.get(..e.valid_up_to()).unwrap_or_default()).unwrap_or_default(),
        };
        let value = match ty {
            b"str" if v.len() > 127 => return bad("value cannot exceed 127 chars"),
            b"str" => KvOverrideValue::Str(v.to_vec()),
            b"int" => KvOverrideValue::Int(c_atol(leading)),
            b"float" => KvOverrideValue::Float(c_atof(leading)),
            b"bool" => match text {
                Some("true") => KvOverrideValue::Bool(true),
                Some("false") => KvOverrideValue::Bool(false),
                _ => return bad("invalid boolean value (true or false)"),
            },
            _ => return unknown(ty),
        };
        Ok(KvOverride { key: key.to_vec(), value })
    }

    /// The value as written to the output; a `str` value that is not UTF-8 is given lossily
    /// here (U+FFFD), while the quantize writer writes its bytes.
    pub fn to_value(&self) -> Value {
        match &self.value {
            KvOverrideValue::Int(n) => Value::U32(n.unsigned_abs() as u32),
            KvOverrideValue::Float(x) => Value::F32(c_float(*x)),
            KvOverrideValue::Bool(b) => Value::Bool(*b),
            KvOverrideValue::Str(s) => Value::String(String::from_utf8_lossy(s).into_owned()),
        }
    }
}

/// C's conversion of a double to float (`(float)x`, as `gguf_set_val_f32` takes llama-quantize's
/// double): rounded to nearest; a NaN keeps its sign and the top 22 bits of its payload, with the
/// quiet bit set (x86-64's `cvtsd2ss`, AArch64's `fcvt`), which Rust's `as` does not promise.
fn c_float(x: f64) -> f32 {
    if !x.is_nan() {
        return x as f32;
    }
    let b = x.to_bits();
    let sign = ((b >> 63) as u32) << 31;
    f32::from_bits(sign | 0x7fc0_0000 | ((b >> 29) as u32 & 0x003f_ffff))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `int` and `float` values read as C's `atol`/`atof` (C11 7.22.1.2, 7.22.1.4: the longest
    /// leading number, 0 without one), as llama.cpp's `string_parse_kv_override` reads them.
    #[test]
    fn kv_override_numbers_read_as_atol_and_atof() {
        let v = |s: &[u8]| KvOverride::parse_bytes(s).map(|o| o.to_value()).unwrap();
        assert_eq!(v(b"a=int:-7"), Value::U32(7));
        assert_eq!(v(b"a=int: 42"), Value::U32(42));
        assert_eq!(v(b"a=float:1.5e3"), Value::F32(1500.0));
        for (text, n) in [(&b"a=int:abc"[..], 0), (b"a=int:12abc", 12), (b"a=int:", 0), (b"a=int:7x", 7)] {
            assert_eq!(v(text), Value::U32(n), "{text:?}");
        }
        for (text, n) in [(&b"a=int:\xff"[..], 0), (b"a=int:3\xff", 3), (b"a=int:-\xff", 0)] {
            assert_eq!(v(text), Value::U32(n), "{text:?}");
        }
        for (text, x) in [(&b"a=float:x"[..], 0.0), (b"a=float:2e", 2.0), (b"a=float:1\xff", 1.0), (b"a=float:", 0.0)] {
            assert_eq!(v(text), Value::F32(x), "{text:?}");
        }
    }

    #[test]
    fn overrides_parse_as_llama_cpp() {
        let o = KvOverride::parse("general.name=str:tiny").unwrap();
        assert_eq!(o.to_value(), Value::String("tiny".into()));
        assert_eq!(KvOverride::parse("a.b=int:-5").unwrap().to_value(), Value::U32(5));
        assert_eq!(KvOverride::parse("a.b=bool:true").unwrap().to_value(), Value::Bool(true));
        assert!(KvOverride::parse("a.b=bool:yes").is_err());
        assert!(KvOverride::parse("a.b=u8:1").is_err());
        assert!(KvOverride::parse("=int:1").is_err());
        // llama.cpp's parser fails on the type: an unknown one is named, in the escaped form.
        let e = KvOverride::parse_bytes(b"k=blob\xff:1").unwrap_err().to_string();
        assert!(e.contains(r#"unknown type "blob\xff" (int, float, bool or str)"#), "{e}");
        let e = KvOverride::parse("k=strx").unwrap_err().to_string();
        assert!(e.contains(r#"unknown type "strx""#), "{e}");
        let e = KvOverride::parse("k=int").unwrap_err().to_string();
        assert!(e.contains(r#"unknown type "int""#), "{e}");
        let e = KvOverride::parse_bytes(b"k=bool:true\xff").unwrap_err().to_string();
        assert!(e.contains("invalid boolean value"), "{e}");
        let o = KvOverride::parse_bytes(b"k=str:a:\xff").unwrap();
        assert_eq!(o.value, KvOverrideValue::Str(b"a:\xff".to_vec()));
    }
}
