//! The default output file name of a conversion (`convert::default_file_name`, cargo feature
//! `convert`): gguf-py's `naming_convention` (`gguf-py/gguf/utility.py` of the llama.cpp the
//! converter follows), and the refusals of a name that would not be one file name.
#![cfg(feature = "convert")]

use gguf_serde::convert::{default_file_name, naming_convention, ConvertError, NameParts, OutType, FILE_NAME_MAX};

fn parts(
    name: Option<&str>,
    basename: Option<&str>,
    size: Option<&str>,
    fine: Option<&str>,
    ver: Option<&str>,
) -> NameParts {
    let s = |v: Option<&str>| v.map(str::to_owned);
    NameParts { name: s(name), basename: s(basename), finetune: s(fine), version: s(ver), size_label: s(size) }
}

#[test]
fn names_as_gguf_py_naming_convention() {
    // naming_convention("Mixtral 8x7B Instruct v0.1", "Mixtral", "Instruct", "v0.1", "8x7B", "F16")
    let p = parts(Some("Mixtral 8x7B Instruct v0.1"), Some("Mixtral"), Some("8x7B"), Some("Instruct"), Some("v0.1"));
    assert_eq!(default_file_name(&p, OutType::F16).unwrap(), "Mixtral-8x7B-Instruct-v0.1-F16.gguf");
    // no basename: the name, its spaces and '/' as '-'; the size label as it is (not stripped)
    let p = parts(Some(" org/My Model "), None, Some("1 B"), Some(" chat hf "), None);
    assert_eq!(naming_convention(&p, OutType::Q8_0), "org-My-Model-1 B-chat-hf-Q8_0");
    assert_eq!(default_file_name(&p, OutType::Q8_0).unwrap(), "org-My-Model-1 B-chat-hf-Q8_0.gguf");
    // nothing: ggml-model; empty parts still count, as in the reference
    assert_eq!(default_file_name(&NameParts::default(), OutType::BF16).unwrap(), "ggml-model-BF16.gguf");
    let p = parts(Some("m"), None, None, Some(""), None);
    assert_eq!(default_file_name(&p, OutType::F32).unwrap(), "m--F32.gguf");
}

#[test]
fn a_path_separator_in_a_part_is_refused_naming_the_key() {
    // The reference writes `{dir}/{name}-…-a/b-F16.gguf`: a folder `…-a` that does not exist.
    for (p, key, value) in [
        (parts(Some("m"), None, None, Some("a/b"), None), "general.finetune", "a/b"),
        (parts(Some("m"), None, None, None, Some("v1/2")), "general.version", "v1/2"),
        (parts(Some("m"), None, Some("7B/"), None, None), "general.size_label", "7B/"),
        (parts(Some("m\0x"), None, None, None, None), "general.name", "m\0x"),
        (parts(Some("m"), Some("b\0"), None, None, None), "general.basename", "b\0"),
    ] {
        let err = default_file_name(&p, OutType::F16).unwrap_err();
        match &err {
            ConvertError::FileNameNotPlain { key: k, value: v } => assert_eq!((*k, v.as_str()), (key, value)),
            other => panic!("{other:?}"),
        }
        let text = err.to_string();
        assert!(text.contains(key) && text.contains(&format!("{value:?}")), "{text}");
    }
    // '/' in the name or basename becomes '-', as in the reference: a plain name
    let p = parts(Some("org/name"), Some("base/x"), None, None, None);
    assert_eq!(default_file_name(&p, OutType::F16).unwrap(), "base-x-F16.gguf");
}

#[test]
fn a_name_over_name_max_is_refused_with_its_length() {
    // "{name}-F16.gguf": 9 bytes besides the name
    let fits = "n".repeat(FILE_NAME_MAX - 9);
    let name = default_file_name(&parts(Some(&fits), None, None, None, None), OutType::F16).unwrap();
    assert_eq!(name.len(), FILE_NAME_MAX);
    let long = format!("{fits}é"); // two bytes more
    let err = default_file_name(&parts(Some(&long), None, None, None, None), OutType::F16).unwrap_err();
    let ConvertError::FileNameTooLong { name, len } = &err else { panic!("{err:?}") };
    assert_eq!((*len, name.len()), (FILE_NAME_MAX + 2, FILE_NAME_MAX + 2));
    assert!(err.to_string().contains("257 bytes, more than the 255"), "{err}");
}
