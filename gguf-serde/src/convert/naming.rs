//! The reference's output file names: [`naming_convention`] and the checked
//! [`default_file_name`].

use super::{ConvertError, NameParts, OutType, Result};

/// gguf-py's `naming_convention` for a model: `{base or name}-{size}-{finetune}-{version}-{TYPE}`
/// with absent parts left out, spaces (and `/` in the name) as `-` in the name, finetune and
/// version (the size label as it is), `ggml-model` without a name. The reference's default output
/// file is this plus `.gguf`, in the model folder (`convert_hf_to_gguf.py` writes into
/// `dir_model` when no `--outfile` is given); [`default_file_name`] checks that it is one file
/// name.
pub fn naming_convention(p: &NameParts, outtype: OutType) -> String {
    naming_parts(p).iter().map(|(_, _, part)| part.as_str()).chain([outtype.label()]).collect::<Vec<_>>().join("-")
}

/// The parts [`naming_convention`] joins, but the type: (key, value, as written in the name).
fn naming_parts(p: &NameParts) -> Vec<(&'static str, &str, String)> {
    let dashes = |s: &str| s.trim().replace(' ', "-");
    let mut out = Vec::with_capacity(4);
    match (&p.basename, &p.name) {
        (Some(b), _) => out.push(("general.basename", b.as_str(), dashes(b).replace('/', "-"))),
        (None, Some(n)) => out.push(("general.name", n.as_str(), dashes(n).replace('/', "-"))),
        (None, None) => out.push(("", "", "ggml-model".to_owned())),
    }
    if let Some(s) = &p.size_label {
        out.push(("general.size_label", s.as_str(), s.clone()));
    }
    for (key, v) in [("general.finetune", &p.finetune), ("general.version", &p.version)] {
        if let Some(v) = v {
            out.push((key, v.as_str(), dashes(v)));
        }
    }
    out
}

/// The longest file name, in bytes, that [`default_file_name`] and [`write_plan`](super::write_plan) accept:
/// `NAME_MAX` of Linux, macOS and Windows file systems.
pub const FILE_NAME_MAX: usize = 255;

/// The reference's default output file name, [`naming_convention`] plus `.gguf`, checked to be
/// one plain file name, so that a conversion that would write elsewhere or fail at the end is
/// refused before it starts. (The reference would try to write it and fail, or write into a
/// folder named by a part, after converting.)
///
/// # Errors
/// [`ConvertError::FileNameNotPlain`] naming the key and value when a part holds a path separator
/// (`/`; also `\` on Windows) or a NUL, as `general.finetune = "a/b"` from a metadata override
/// would (the name's `/` becomes `-`, as in the reference); [`ConvertError::FileNameTooLong`]
/// when the name is longer than [`FILE_NAME_MAX`] bytes.
pub fn default_file_name(p: &NameParts, outtype: OutType) -> Result<String> {
    for (key, value, part) in naming_parts(p) {
        if part.chars().any(|c| std::path::is_separator(c) || c == '\0') {
            return Err(ConvertError::FileNameNotPlain { key, value: value.to_owned() });
        }
    }
    let name = format!("{}.gguf", naming_convention(p, outtype));
    check_name_length(&name)?;
    Ok(name)
}

/// [`ConvertError::FileNameTooLong`] for a file name over [`FILE_NAME_MAX`] bytes.
pub(super) fn check_name_length(name: &str) -> Result<()> {
    if name.len() > FILE_NAME_MAX {
        return Err(ConvertError::FileNameTooLong { name: name.to_owned(), len: name.len() });
    }
    Ok(())
}
