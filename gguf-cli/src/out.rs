//! Standard output: one buffered writer whose errors are [`OutputError`]s.
//!
//! Every command writes through [`Out`], never `println!` (which panics when the write fails).
//! `main` turns an [`OutputError`] into the exit status: a closed pipe (`gguf ... | head -1`)
//! ends quietly with success, as ripgrep does; any other write error (`> /dev/full`) is reported
//! with exit status 2.

use gguf_serde::format::shown_path;
use std::io::{BufWriter, Stdout, Write};

/// `writeln!` to an [`Out`], returning an [`OutputError`] from the enclosing function on failure.
macro_rules! outln {
    ($out:expr, $($arg:tt)*) => {
        ::std::io::Write::write_fmt(&mut $out, format_args!("{}\n", format_args!($($arg)*)))
            .map_err($crate::out::OutputError)?
    };
}
pub(crate) use outln;

/// A failed write to standard output.
#[derive(Debug)]
pub struct OutputError(pub std::io::Error);

impl OutputError {
    /// The reader closed the pipe: not an error, the output is simply not wanted any more.
    pub fn is_closed_pipe(&self) -> bool {
        self.0.kind() == std::io::ErrorKind::BrokenPipe
    }
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "writing to standard output: {}", self.0)
    }
}

impl std::error::Error for OutputError {}

impl From<std::io::Error> for OutputError {
    fn from(e: std::io::Error) -> Self {
        OutputError(e)
    }
}

/// Buffered standard output. Write with `writeln!` (its `io::Error` becomes an
/// [`OutputError`] through `?` in functions returning `Result<_, OutputError>`) or [`Out::json`];
/// call [`Out::finish`] at the end, so that the last buffered bytes' error is not lost.
pub struct Out(BufWriter<Stdout>);

impl Out {
    /// Standard output, buffered.
    pub fn stdout() -> Out {
        Out(BufWriter::with_capacity(1 << 16, std::io::stdout()))
    }

    /// Writes `value` as one line of JSON.
    pub fn json<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> Result<(), OutputError> {
        serde_json::to_writer(&mut self.0, value).map_err(|e| OutputError(e.into()))?;
        writeln!(self.0)?;
        Ok(())
    }

    /// Writes `bytes` as they are.
    pub fn bytes(&mut self, bytes: &[u8]) -> Result<(), OutputError> {
        self.0.write_all(bytes)?;
        Ok(())
    }

    /// Flushes what is buffered.
    pub fn finish(mut self) -> Result<(), OutputError> {
        self.0.flush()?;
        Ok(())
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Writes to standard error, ignoring a failure (there is nowhere left to report it).
pub fn warn(args: std::fmt::Arguments<'_>) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_fmt(args);
    let _ = e.write_all(b"\n");
}

/// A usage error found after clap parsed the arguments (a file type or thread count given as a
/// positional argument, options that exclude each other): exit status 2, as clap's own.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// `anyhow::Error` of a [`Usage`] error.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Usage(message.into()))
}

/// `e` with `context` before it unless its text already names one of `names` (an I/O error that
/// names its file), so that each path appears once.
///
/// A file that appeared at an output while the command ran (the library refuses to replace it
/// at the end without `--force`: [`crate::outputs::Outputs::if_exists`]) gives the same error as
/// one that was there before: "OUT exists (use --force to replace it)".
pub fn unless_named(e: impl Into<anyhow::Error>, context: String, names: &[&std::path::Path]) -> anyhow::Error {
    let e = e.into();
    let text = format!("{e:#}");
    let exists = e
        .chain()
        .filter_map(gguf_error)
        .filter_map(gguf_serde::Error::as_io)
        .any(|io| io.kind() == std::io::ErrorKind::AlreadyExists);
    if exists {
        // the output named, else the shard being written (one the command did not list), else
        // the last output
        let shard = e.chain().filter_map(gguf_error).find_map(gguf_serde::Error::shard);
        let named = names.iter().copied().find(|n| text.contains(&shown_path(&n).to_string()));
        if let Some(n) = named.or(shard).or(names.last().copied()) {
            return anyhow::anyhow!("{} exists (use --force to replace it)", shown_path(&n));
        }
    }
    if names.iter().any(|n| text.contains(&shown_path(&n).to_string())) {
        e
    } else {
        e.context(context)
    }
}

/// The library's own error in `c`: a [`gguf_serde::Error`], or one wrapped by a conversion or an
/// export (their `Gguf` variants, which pass it on as it is).
fn gguf_error<'a>(c: &'a (dyn std::error::Error + 'static)) -> Option<&'a gguf_serde::Error> {
    if let Some(g) = c.downcast_ref::<gguf_serde::Error>() {
        return Some(g);
    }
    if let Some(gguf_serde::convert::ConvertError::Gguf(g)) = c.downcast_ref() {
        return Some(g);
    }
    match c.downcast_ref() {
        Some(gguf_serde::ops::export::ExportError::Gguf(g)) => Some(g),
        _ => None,
    }
}

/// The error of writing `outputs` (one file, or the shards of one output), with "writing
/// FIRST" (or "writing FIRST … LAST") before it unless the error already names one of them (an
/// I/O error that names its file, an error naming the shard being written), so that each path
/// appears once.
pub fn writing(e: anyhow::Error, outputs: &[std::path::PathBuf]) -> anyhow::Error {
    let what = match outputs {
        [first, .., last] => format!("writing {} … {}", shown_path(&first), shown_path(&last)),
        [one] => format!("writing {}", shown_path(&one)),
        [] => return e,
    };
    let names: Vec<&std::path::Path> = outputs.iter().map(|o| o.as_path()).collect();
    unless_named(e, what, &names)
}

/// `n` and the noun `one`, plural but for 1: `1 tensor`, `0 tensors`, `2 tensors`.
pub fn count<N: Copy + std::fmt::Display + TryInto<u64>>(n: N, one: &str) -> String {
    format!("{n} {one}{}", if n.try_into().ok() == Some(1) { "" } else { "s" })
}
