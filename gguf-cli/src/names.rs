//! How the commands take a key or tensor name: in the escaped form the text outputs show
//! (`GgufStr::escaped`: `\xNN` for a byte that is not UTF-8, `\\` for a backslash, `\n`, `\u{…}`
//! for control characters), read back with `GgufStr::unescape`; or, on Unix, an argument that
//! is not UTF-8 as its bytes. Also how the commands show the bytes of an option's value or a
//! path in a message ([`shown_bytes`]), and refuse a value that is not UTF-8
//! where text is wanted ([`Text`]).

use std::ffi::OsStr;

use gguf_serde::GgufStr;

/// The bytes of the name in the argument `arg` (shown as `what` in errors): an argument that is
/// text is read in the escaped form ([`GgufStr::unescape`]); one that is not UTF-8 (Unix) is
/// taken as its bytes, unchanged.
///
/// # Errors
/// A usage error (exit status 2) for text with a bad escape (`\q`, `\x4`).
pub(crate) fn name_arg(arg: &OsStr, what: &str) -> anyhow::Result<Vec<u8>> {
    match arg.to_str() {
        Some(text) => GgufStr::unescape(text).map_err(|e| crate::out::usage(format!("{what} {e}"))),
        None => Ok(arg.as_encoded_bytes().to_vec()),
    }
}

/// A value parser whose refusal shows the value in the escaped form `inspect` shows names in
/// ([`shown_bytes`]: `\xNN` for each byte that is not UTF-8, `\\`, `\n`, `\u{1b}`), not clap's
/// lossy form (U+FFFD) or the raw text.
#[derive(Clone)]
pub(crate) struct Escaped<P>(pub(crate) P);

impl<P: clap::builder::TypedValueParser> clap::builder::TypedValueParser for Escaped<P> {
    type Value = P::Value;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<P::Value, clap::Error> {
        use clap::error::{ContextKind, ContextValue};
        self.0.parse_ref(cmd, arg, value).map_err(|mut e| {
            let shown = shown_bytes(value.as_encoded_bytes());
            if value.to_str() != Some(shown.as_str()) {
                e.insert(ContextKind::InvalidValue, ContextValue::String(shown));
            }
            e
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        self.0.possible_values()
    }
}

/// A value parser for an option whose value is text (a number, a type name): a value that is
/// not UTF-8 (Unix) is refused as clap refuses a bad value, naming the option and showing the
/// value escaped ([`shown_bytes`]), with the possible values when there is a list to show,
/// where clap's own text parsers give "invalid UTF-8 was detected in one or more arguments",
/// naming neither. A value that is UTF-8 is parsed by the inner parser, its refusal showing the
/// value escaped ([`Escaped`]).
#[derive(Clone)]
pub(crate) struct Text<P>(pub(crate) P);

impl<P: clap::builder::TypedValueParser> clap::builder::TypedValueParser for Text<P> {
    type Value = P::Value;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &OsStr) -> Result<P::Value, clap::Error> {
        use clap::builder::OsStringValueParser;
        use clap::error::{ContextKind, ContextValue, ErrorKind};
        if value.to_str().is_some() {
            return Escaped(self.0.clone()).parse_ref(cmd, arg, value);
        }
        let shown_list = !arg.is_some_and(clap::Arg::is_hide_possible_values_set);
        let values: Vec<String> = match self.0.possible_values() {
            Some(v) if shown_list => v.filter(|v| !v.is_hide_set()).map(|v| v.get_name().to_owned()).collect(),
            _ => Vec::new(),
        };
        if values.is_empty() {
            // clap's "invalid value 'V' for 'OPTION': REASON", V shown escaped.
            let refuse = OsStringValueParser::new().try_map(|_| Err::<P::Value, _>("not UTF-8 text"));
            return Escaped(refuse).parse_ref(cmd, arg, value);
        }
        let mut e = clap::Error::new(ErrorKind::InvalidValue).with_cmd(cmd);
        let name = arg.map_or_else(|| "...".to_owned(), ToString::to_string);
        e.insert(ContextKind::InvalidArg, ContextValue::String(name));
        e.insert(ContextKind::InvalidValue, ContextValue::String(shown_bytes(value.as_encoded_bytes())));
        e.insert(ContextKind::ValidValue, ContextValue::Strings(values));
        Err(e)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        self.0.possible_values()
    }
}

/// Bytes (a path or an option's value) in the escaped form `inspect` shows names in
/// (`GgufStr::escaped`, as `gguf_serde::format::shown_path` shows a path): printable UTF-8
/// without a backslash as it is, else `\\` for a backslash, `\xNN` for each byte that is not
/// UTF-8 and `\n`, `\u{1b}` for control characters, so that no two values show alike and nothing
/// goes raw to the terminal.
pub(crate) fn shown_bytes(bytes: &[u8]) -> String {
    GgufStr::from_bytes(bytes).escaped().into_owned()
}
