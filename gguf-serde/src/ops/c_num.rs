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

/// C's `atof` for decimal numbers, `inf` and `nan`: the longest leading prefix that is a number.
pub(super) fn c_atof(s: &str) -> f64 {
    let t = s.trim_start_matches(c_isspace);
    let b = t.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let lower = t.get(i..).unwrap_or_default().to_ascii_lowercase();
    for word in ["infinity", "inf", "nan"] {
        if lower.starts_with(word) {
            return t.get(..i + word.len()).and_then(|p| p.parse().ok()).unwrap_or(0.0);
        }
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
}
