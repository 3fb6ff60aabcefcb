//! The bytes of a class as the translation writes them ([`ByteSet`]), and the names libstdc++'s
//! `regex_traits` knows in the classic "C" locale: character classes (`[[:alpha:]]`, `\d`) and
//! POSIX collating names (`[[.space.]]`).

/// A set of bytes (one bit each).
#[derive(Clone, Copy)]
pub(super) struct ByteSet([bool; 256]);

impl ByteSet {
    pub(super) fn of(f: impl Fn(u8) -> bool) -> Self {
        let mut s = ByteSet([false; 256]);
        for (b, bit) in (0..=255u8).zip(s.0.iter_mut()) {
            *bit = f(b);
        }
        s
    }

    /// As a `regex` class of `\xNN` ranges (one that matches nothing if empty).
    pub(super) fn to_class(self) -> String {
        use std::fmt::Write;
        let mut out = String::from("[");
        let mut b = 0usize;
        let mut any = false;
        while b < 256 {
            if !self.0[b] {
                b += 1;
                continue;
            }
            let from = b;
            while b + 1 < 256 && self.0[b + 1] {
                b += 1;
            }
            any = true;
            let _ = if from == b { write!(out, "\\x{from:02x}") } else { write!(out, "\\x{from:02x}-\\x{b:02x}") };
            b += 1;
        }
        if !any {
            // Empty: a class that cannot match.
            return "[^\\x00-\\xff]".to_owned();
        }
        out.push(']');
        out
    }
}

/// The classes of the classic "C" locale's `ctype<char>` (bytes above 127 are in none), by the
/// names `regex_traits::lookup_classname` knows (lower-cased first, as it does).
pub(super) fn class_by_name(name: &[u8]) -> Option<fn(u8) -> bool> {
    let lower = name.to_ascii_lowercase();
    Some(match lower.as_slice() {
        b"d" | b"digit" => |c: u8| c.is_ascii_digit(),
        b"w" => |c: u8| c.is_ascii_alphanumeric() || c == b'_',
        b"s" | b"space" => |c: u8| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'),
        b"alnum" => |c: u8| c.is_ascii_alphanumeric(),
        b"alpha" => |c: u8| c.is_ascii_alphabetic(),
        b"blank" => |c: u8| c == b' ' || c == b'\t',
        b"cntrl" => |c: u8| c < 0x20 || c == 0x7f,
        b"graph" => |c: u8| c.is_ascii_graphic(),
        b"lower" => |c: u8| c.is_ascii_lowercase(),
        b"print" => |c: u8| c.is_ascii_graphic() || c == b' ',
        b"punct" => |c: u8| c.is_ascii_punctuation(),
        b"upper" => |c: u8| c.is_ascii_uppercase(),
        b"xdigit" => |c: u8| c.is_ascii_hexdigit(),
        _ => return None,
    })
}

/// The character of a POSIX collating name (`regex_traits::lookup_collatename`: the names of
/// the 128 ASCII characters, case-sensitive).
pub(super) fn collating_name(name: &[u8]) -> Option<u8> {
    const CONTROL: [&str; 32] = [
        "NUL",
        "SOH",
        "STX",
        "ETX",
        "EOT",
        "ENQ",
        "ACK",
        "alert",
        "backspace",
        "tab",
        "newline",
        "vertical-tab",
        "form-feed",
        "carriage-return",
        "SO",
        "SI",
        "DLE",
        "DC1",
        "DC2",
        "DC3",
        "DC4",
        "NAK",
        "SYN",
        "ETB",
        "CAN",
        "EM",
        "SUB",
        "ESC",
        "IS4",
        "IS3",
        "IS2",
        "IS1",
    ];
    const PRINTABLE: [(u8, &str); 33] = [
        (b' ', "space"),
        (b'!', "exclamation-mark"),
        (b'"', "quotation-mark"),
        (b'#', "number-sign"),
        (b'$', "dollar-sign"),
        (b'%', "percent-sign"),
        (b'&', "ampersand"),
        (b'\'', "apostrophe"),
        (b'(', "left-parenthesis"),
        (b')', "right-parenthesis"),
        (b'*', "asterisk"),
        (b'+', "plus-sign"),
        (b',', "comma"),
        (b'-', "hyphen"),
        (b'.', "period"),
        (b'/', "slash"),
        (b':', "colon"),
        (b';', "semicolon"),
        (b'<', "less-than-sign"),
        (b'=', "equals-sign"),
        (b'>', "greater-than-sign"),
        (b'?', "question-mark"),
        (b'@', "commercial-at"),
        (b'[', "left-square-bracket"),
        (b'\\', "backslash"),
        (b']', "right-square-bracket"),
        (b'^', "circumflex"),
        (b'_', "underscore"),
        (b'`', "grave-accent"),
        (b'{', "left-curly-bracket"),
        (b'|', "vertical-line"),
        (b'}', "right-curly-bracket"),
        (b'~', "tilde"),
    ];
    const DIGITS: [&str; 10] = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
    if let Some(i) = CONTROL.iter().position(|n| n.as_bytes() == name) {
        return u8::try_from(i).ok();
    }
    if let Some((c, _)) = PRINTABLE.iter().find(|(_, n)| n.as_bytes() == name) {
        return Some(*c);
    }
    if let Some(i) = DIGITS.iter().position(|n| n.as_bytes() == name) {
        return u8::try_from(i).ok().map(|i| b'0' + i);
    }
    match name {
        [c] if c.is_ascii_alphabetic() => Some(*c),
        b"DEL" => Some(0x7f),
        _ => None,
    }
}
