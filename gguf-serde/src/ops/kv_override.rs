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
    /// Parses `KEY=TYPE:VALUE` as llama.cpp's `string_parse_kv_override`: TYPE is `int`, `float`,
    /// `bool` or `str`; `int` and `float` values are read as C's `atol`/`atof` read them. Unlike
    /// llama-quantize, which reads text that is not a number as its longest leading number (0 if
    /// none: `int:abc` writes 0), a value that is not wholly a number is refused.
    ///
    /// # Errors
    /// [`QuantizeError`] for a missing `=`, an empty key or one of 128 bytes
    /// or more, an unknown TYPE, an `int` value that is not an integer or a `float` value that is
    /// not a number, a bool other than `true`/`false`, or a string over 127 bytes.
    pub fn parse(s: &str) -> Result<Self> {
        KvOverride::parse_bytes(s.as_bytes())
    }

    /// [`KvOverride::parse`] of any bytes (a command-line argument that is not UTF-8): the key
    /// and a `str` value are taken as bytes, as llama-quantize takes them.
    ///
    /// # Errors
    /// As [`KvOverride::parse`] (a value that is not UTF-8 is not an `int`, `float` or `bool`
    /// value); an unknown TYPE is named in the escaped form of names (`blob\xff`).
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
        // llama-quantize reads `int:abc` as 0 and `int:12abc` as 12 without a word (C's `atol`);
        // text that is not a whole number is refused here instead. A number reads the same.
        let value = match ty {
            b"str" if v.len() > 127 => return bad("value cannot exceed 127 chars"),
            b"str" => KvOverrideValue::Str(v.to_vec()),
            b"int" => match text.filter(|v| v.trim().parse::<i64>().is_ok()) {
                Some(v) => KvOverrideValue::Int(c_atol(v)),
                None => return bad("the value is not an integer"),
            },
            b"float" => match text.filter(|v| v.trim().parse::<f64>().is_ok()) {
                Some(v) => KvOverrideValue::Float(c_atof(v)),
                None => return bad("the value is not a number"),
            },
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
            KvOverrideValue::Float(x) => Value::F32(*x as f32),
            KvOverrideValue::Bool(b) => Value::Bool(*b),
            KvOverrideValue::Str(s) => Value::String(String::from_utf8_lossy(s).into_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kv_override_values_must_be_numbers() {
        let v = |s: &str| KvOverride::parse(s).map(|o| o.to_value());
        assert_eq!(v("a=int:-7").unwrap(), Value::U32(7));
        assert_eq!(v("a=int: 42").unwrap(), Value::U32(42));
        assert_eq!(v("a=float:1.5e3").unwrap(), Value::F32(1500.0));
        for bad in ["a=int:abc", "a=int:12abc", "a=int:", "a=float:x", "a=float:2e"] {
            let e = v(bad).unwrap_err();
            assert!(e.as_quantize().is_some(), "{bad}: {e:?}");
            assert!(e.to_string().contains("is not a"), "{bad}: {e}");
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
        let e = KvOverride::parse_bytes(b"k=int:1\xff").unwrap_err().to_string();
        assert!(e.contains("the value is not an integer"), "{e}");
        let o = KvOverride::parse_bytes(b"k=str:a:\xff").unwrap();
        assert_eq!(o.value, KvOverrideValue::Str(b"a:\xff".to_vec()));
    }
}
