//! C's number parsing as llama.cpp reads its arguments and tensor names (`strtol`, `atol`,
//! `atof`): the leading number of a string, 0 without one.

/// C's `isspace` in the "C" locale: space, `\t`, `\n`, `\v`, `\f`, `\r` (Rust's
/// `char::is_ascii_whitespace` leaves out `\v`).
fn c_isspace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// The integer C's `strtol` reads at the start of `s` (leading white space, an optional sign,
/// digits; saturating), or `None` without digits.
pub(super) fn leading_int(s: &str) -> Option<i64> {
    let t = s.trim_start_matches(c_isspace);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let n = digits.bytes().take_while(u8::is_ascii_digit).count();
    let v = digits.get(..n).filter(|d| !d.is_empty())?.bytes().fold(0i64, |a, b| {
        let d = i64::from(b - b'0');
        a.saturating_mul(10).saturating_add(if neg { -d } else { d })
    });
    Some(v)
}

/// C's `atol`: [`leading_int`], 0 without digits.
pub(super) fn c_atol(s: &str) -> i64 {
    leading_int(s).unwrap_or(0)
}

/// C's `atof` (`strtod`, C11 7.22.1.3, in the "C" locale): the longest leading prefix that is a
/// number, 0 without one: after white space ([`c_isspace`]) and an optional sign, a decimal
/// number (`1.5e3`; an exponent without digits, `2e`, is not part of it), a hexadecimal one
/// ([`hex_float`]: `0x1p3` is 8, `0X.8p1` 1), `inf`, `infinity` or `nan` (any case; `nan(CHARS)`
/// with a payload, [`nan_payload`]).
pub(super) fn c_atof(s: &str) -> f64 {
    let t = s.trim_start_matches(c_isspace);
    let b = t.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let lower = t.get(i..).unwrap_or_default().to_ascii_lowercase();
    for word in ["infinity", "inf", "nan"] {
        if lower.starts_with(word) {
            let x: f64 = t.get(..i + word.len()).and_then(|p| p.parse().ok()).unwrap_or(0.0);
            let payload = lower.get(word.len()..).filter(|_| word == "nan").map_or(0, nan_payload);
            // The payload's bits below the quiet bit, as glibc masks them.
            return f64::from_bits(x.to_bits() | (payload & ((1 << 51) - 1)));
        }
    }
    if let Some(x) = lower.strip_prefix("0x").and_then(hex_float) {
        return if b.first() == Some(&b'-') { -x } else { x };
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > start
    };
    let mut any = digits(&mut i);
    if b.get(i) == Some(&b'.') {
        i += 1;
        any |= digits(&mut i);
    }
    if !any {
        return 0.0;
    }
    let mantissa_end = i;
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        i = if digits(&mut j) { j } else { mantissa_end };
    }
    t.get(..i).and_then(|p| p.parse().ok()).unwrap_or(0.0)
}

/// The payload of a NaN written `nan(CHARS)`, given what follows `nan` (lower-case): as glibc's
/// `strtod` reads it, CHARS (letters, digits, `_`) read whole by `strtoull` in base 0 (`0x` hex,
/// a leading `0` octal, else decimal), saturating; 0 if there are no parentheses, or CHARS is not
/// such a number (`nan(abc)`).
fn nan_payload(rest: &str) -> u64 {
    let Some(inner) = rest.strip_prefix('(') else { return 0 };
    let n = inner.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
    if inner.as_bytes().get(n) != Some(&b')') {
        return 0;
    }
    let chars = &inner[..n];
    let (digits, radix) = match chars.strip_prefix("0x") {
        Some(hex) => (hex, 16),
        None if chars.len() > 1 && chars.starts_with('0') => (&chars[1..], 8),
        None => (chars, 10),
    };
    let mut v: u64 = 0;
    for c in digits.chars() {
        let Some(d) = c.to_digit(radix) else { return 0 };
        v = v.saturating_mul(u64::from(radix)).saturating_add(u64::from(d));
    }
    v
}

/// The value of a hexadecimal float without its sign and `0x` (`strtod`'s form: hex digits with
/// an optional point, at least one digit, then an optional binary exponent `p[+-]DIGITS`, which
/// is left out when it has no digits), lower-case, followed by anything; `None` without a digit
/// (`0x` alone, `0x.p1`: `strtod` then reads the `0` before the `x`). Rounded to nearest, ties to
/// even, as glibc's `strtod` rounds it in the default rounding mode (subnormals and overflow to
/// infinity included).
fn hex_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    // The first 16 significant digits (64 bits), then whether any later digit is not 0.
    let (mut mant, mut digits, mut sticky) = (0u64, 0u32, false);
    // The binary exponent of the value `mant` stands for: -4 per digit after the point, +4 per
    // digit dropped before it (saturating: a silly number of digits only moves it further).
    let mut exp: i64 = 0;
    let (mut any, mut point, mut i) = (false, false, 0);
    while let Some(&c) = b.get(i) {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'.' if !point => {
                point = true;
                i += 1;
                continue;
            }
            _ => break,
        };
        any = true;
        if mant == 0 && d == 0 {
            // A leading zero: no significant digit yet.
        } else if digits < 16 {
            mant = (mant << 4) | u64::from(d);
            digits += 1;
        } else {
            sticky |= d != 0;
            exp = exp.saturating_add(4);
        }
        if point {
            exp = exp.saturating_sub(4);
        }
        i += 1;
    }
    if !any {
        return None;
    }
    if b.get(i) == Some(&b'p') {
        let mut j = i + 1;
        let neg = match b.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        let start = j;
        let mut e: i64 = 0;
        while let Some(&c) = b.get(j).filter(|c| c.is_ascii_digit()) {
            e = e.saturating_mul(10).saturating_add(i64::from(c - b'0'));
            j += 1;
        }
        if j > start {
            exp = exp.saturating_add(if neg { -e } else { e });
        }
    }
    if mant == 0 {
        return Some(0.0);
    }
    // `mant` with its top bit at bit 63: the value is mant * 2^(exp - 63) with the top bit worth
    // 2^top.
    let lz = mant.leading_zeros();
    let mant = mant << lz;
    let top = exp.saturating_add(63 - i64::from(lz));
    // Bits kept: 53, fewer below the smallest normal exponent (-1022), down to none.
    let drop: i64 = (-1022i64).saturating_sub(top).max(0).saturating_add(11);
    let (kept, round_up) = if drop >= 65 {
        // Below half the smallest subnormal: 0.
        (0u64, false)
    } else if drop == 64 {
        // The top bit is the rounding bit: at least half the smallest subnormal.
        let half = mant == 1 << 63 && !sticky;
        (0, !half)
    } else {
        let drop = drop as u32;
        let kept = mant >> drop;
        let rest = mant & ((1u64 << drop) - 1);
        let half = 1u64 << (drop - 1);
        let up = rest > half || (rest == half && (sticky || kept & 1 == 1));
        (kept, up)
    };
    let kept = kept + u64::from(round_up);
    // `kept` (at most 2^53, exact as f64) times 2 to the weight of its lowest bit.
    let lowest = top.saturating_sub(63).saturating_add(drop);
    Some(ldexp(kept as f64, lowest))
}

/// `x * 2^k`, exactly where the result is representable (`x` an integer of at most 54 bits, the
/// product rounded already by [`hex_float`]), infinity above the range.
fn ldexp(mut x: f64, mut k: i64) -> f64 {
    let pow2 = |k: i64| f64::from_bits(((k + 1023) as u64) << 52);
    while k > 1000 {
        x *= pow2(1000);
        k -= 1000;
        if x.is_infinite() {
            return x;
        }
    }
    while k < -1000 {
        x *= pow2(-1000);
        k += 1000;
        if x == 0.0 {
            return x;
        }
    }
    x * pow2(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_number_parsing() {
        assert_eq!(c_atol(" 42abc"), 42);
        assert_eq!(c_atol("-7"), -7);
        assert_eq!(c_atol("\x0b\x0c\r\n\t 5"), 5);
        assert_eq!(c_atof("\x0b2.5"), 2.5);
        assert_eq!(c_atol("x"), 0);
        assert_eq!(c_atof("1.5e3x"), 1500.0);
        assert_eq!(c_atof("2e"), 2.0);
        assert_eq!(c_atof(".5"), 0.5);
        assert_eq!(c_atof("abc"), 0.0);
        assert!(c_atof("-inf").is_infinite());
    }

    /// NaN payloads as glibc's `strtod` reads them (`nan(CHARS)`): the bits of the double it
    /// returns, computed with Python's ctypes calling it.
    #[test]
    fn nan_payloads_read_as_strtod() {
        for (s, bits) in [
            ("nan(0x4000000000000)", 0x7ffc000000000000u64),
            ("nan(123)", 0x7ff800000000007b),
            ("nan(0xfffffffffffff)", 0x7fffffffffffffff),
            ("-nan(0x4000000000000)", 0xfffc000000000000),
            ("nan()", 0x7ff8000000000000),
            ("nan(abc)", 0x7ff8000000000000),
            ("nan(0x4000000000000", 0x7ff8000000000000),
            ("NAN(017)", 0x7ff800000000000f),
            ("nan(0x)", 0x7ff8000000000000),
            ("nan(08)", 0x7ff8000000000000),
            ("nan(_)", 0x7ff8000000000000),
            ("nan(99999999999999999999999)", 0x7fffffffffffffff),
        ] {
            assert_eq!(c_atof(s).to_bits(), bits, "{s}");
        }
    }

    /// Hexadecimal floats as glibc's `strtod` reads them: the bits of the double it returns for
    /// each string (computed with Python's ctypes calling `strtod`, and where the text is a whole
    /// number Python's `float.fromhex` of the prefix read, which agrees), a sign included.
    #[test]
    fn hex_floats_read_as_strtod() {
        let cases: [(&str, u64); 26] = [
            ("0x1p3", 0x4020000000000000),
            ("0X.8p1", 0x3ff0000000000000),
            ("0x1.8", 0x3ff8000000000000),
            ("0x1p", 0x3ff0000000000000),
            ("0x1p-x", 0x3ff0000000000000),
            ("0x1P+2", 0x4010000000000000),
            ("0x", 0x0000000000000000),
            ("0xg", 0x0000000000000000),
            ("0x.p1", 0x0000000000000000),
            ("-0x1p-1074", 0x8000000000000001),
            ("0x1p-1075", 0x0000000000000000),
            ("0x1.8p-1075", 0x0000000000000001),
            ("0x1.fffffffffffff8p1023", 0x7ff0000000000000),
            ("0x1.00000000000008p0", 0x3ff0000000000000),
            ("0x1.00000000000018p0", 0x3ff0000000000002),
            ("0x1.000000000000080000001p0", 0x3ff0000000000001),
            ("0x123456789abcdef0123p0", 0x44723456789abcdf),
            ("0x0.0000001p0", 0x3e30000000000000),
            ("0xffffffffffffffffffp-10", 0x43d0000000000000),
            ("0x1p-1022", 0x0010000000000000),
            ("0x0.fffffffffffff8p-1022", 0x0010000000000000),
            ("0x1.fffffffffffffp1023", 0x7fefffffffffffff),
            ("0x1p99999999999999999999", 0x7ff0000000000000),
            ("0x1p-99999999999999999999", 0x0000000000000000),
            ("0x000000000000000000001p0", 0x3ff0000000000000),
            ("0x.00000000000000000000001p100", 0x4070000000000000),
        ];
        for (s, bits) in cases {
            assert_eq!(c_atof(s).to_bits(), bits, "{s}: {}", c_atof(s));
            // White space and a minus sign before it, as strtod skips and applies them.
            if !s.starts_with('-') {
                assert_eq!(c_atof(&format!(" \t-{s}")).to_bits(), bits | 1 << 63, "-{s}");
            }
        }
    }
}
