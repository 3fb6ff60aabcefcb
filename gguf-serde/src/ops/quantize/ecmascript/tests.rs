//! Tests of the ECMAScript translation: the expected matches and refusals are those of libstdc++'s
//! `std::regex` (g++ 12, the compiler of the llama.cpp build), as llama-quantize compiles them.

use super::{compile, translate, PatternProblem};

/// Whether `pattern` is found in `name`, by our translation.
fn search(pattern: &[u8], name: &[u8]) -> bool {
    compile(&translate(pattern).expect("a pattern std::regex takes")).expect("compiles").is_match(name)
}

/// Patterns and names with whether `std::regex_search` finds the pattern in the name, as a
/// program built with g++ 12.2 (libstdc++ 12, the compiler of the llama.cpp build the tests
/// use) answered: `std::regex(pattern)` (ECMAScript), `std::regex_search(std::string(name))`
/// (`tests/harness/std_regex.cpp` asks it so).
#[test]
fn matches_as_std_regex() {
    type Case = (&'static [u8], &'static [(&'static [u8], bool)]);
    let cases: &[Case] = &[
        (b"\\u00ff", &[(b"\xff", true), (b"\xc3\xbf", false)]),
        (b"^\\u0141$", &[(b"A", true), (b"\x01A", false)]),
        (b"a\\0b", &[(b"a\x00b", true), (b"a0b", false)]),
        (b"\\ca", &[(b"a", true), (b"\x01", false)]),
        (b"\\c\\x", &[(b"\\x", true), (b"x", false)]),
        (b"\\d", &[(b"\xb2", false), (b"7", true)]),
        (b"[^\\d]", &[(b"\xb2", true), (b"7", false)]),
        (b"\\w", &[(b"\xe9", false), (b"_", true)]),
        (b"\\s", &[(b"\xa0", false), (b"\x0b", true)]),
        (b"[\\xff]", &[(b"\xff", true), (b"\x7f", false)]),
        (b"[\\x80-\\xff]", &[(b"\xc3", true), (b"\x7f", false)]),
        (b"[\xe9\xff]", &[(b"\xff", true), (b"\xc3", false)]),
        (b"[\\b]", &[(b"\x08", true), (b"b", false)]),
        (b"a\\b", &[(b"a\xff", true), (b"ab", false)]),
        (b"^.$", &[(b"\x0d", false), (b"\x0a", false), (b"\x00", true), (b"\xff", true)]),
        (b"x[]", &[(b"x", false), (b"x]", false)]),
        (b"x[^]", &[(b"x\x0a", true), (b"x", false)]),
        (b"a]}", &[(b"a]}", true), (b"a", false)]),
        (b"^a**$", &[(b"", true), (b"aaa", true), (b"b", false)]),
        (b"^[a-z-0]$", &[(b"-", true), (b"0", true), (b"5", false)]),
        (b"^[[.space.]]$", &[(b" ", true), (b".", false)]),
        (b"^[[=a=]]$", &[(b"A", true), (b"b", false)]),
        (b"^[[:punct:]]$", &[(b"_", true), (b"\xa1", false)]),
        (b"^\\q\\e$", &[(b"qe", true), (b"\x1b", false)]),
        (b"^x{2147483648}$", &[(b"", true), (b"x", false)]),
        (b"^x{4294967297}$", &[(b"x", true), (b"xx", false)]),
        (b"^(?:a|)b*?c??$", &[(b"a", true), (b"bb", true), (b"ac", true)]),
        (b"^[\\w-]$", &[(b"-", true), (b"a", true), (b"\xff", false)]),
        (b"^[--/]$", &[(b".", true), (b"0", false)]),
        (b"[^a]{99993}", &[(b"a", false)]),
        (b"(?:[\\w\\d.]|x){14283}", &[(b"a", false)]),
        (b"^[[.one.][.nine.][.five.]]$", &[(b"1", true), (b"9", true), (b"5", true), (b"0", false), (b"'", false)]),
        (b"^[[.DEL.]]$", &[(b"\x7f", true), (b"D", false)]),
        (b"^[[.a.]]$", &[(b"a", true), (b"A", false)]),
        (b"^[a-c-e]$", &[(b"-", true), (b"d", false), (b"e", true), (b"b", true)]),
    ];
    for (pattern, names) in cases {
        for (name, want) in *names {
            assert_eq!(
                search(pattern, name),
                *want,
                "{:?} in {:?}",
                pattern.escape_ascii().to_string(),
                name.escape_ascii().to_string()
            );
        }
    }
}

/// Patterns `std::regex` refuses, with the `error_type` it throws (the same program), and the
/// two constructs it takes that we refuse.
#[test]
fn refusals_as_std_regex() {
    let cases: &[(&[u8], Option<&str>)] = &[
        (b"\\x{ff}", Some("error_escape")),
        (b"\\u00f", Some("error_escape")),
        (b"a\\", Some("error_escape")),
        (b"\\c", Some("error_escape")),
        (b"[a-\\xff]", Some("error_range")),
        (b"[\\x00-\\xff]", Some("error_range")),
        (b"[\\w-a]", Some("error_range")),
        (b"[a-\\w]", Some("error_range")),
        (b"(?<n>a)", Some("error_paren")),
        (b"(a", Some("error_paren")),
        (b"a)", Some("error_paren")),
        (b"*a", Some("error_paren")),
        (b"^*", Some("error_paren")),
        (b"a|+", Some("error_paren")),
        (b"a{", Some("error_badbrace")),
        (b"a{2", Some("error_brace")),
        (b"a{2,1}", Some("error_badbrace")),
        (b"a{,2}", Some("error_badbrace")),
        (b"[a", Some("error_brack")),
        (b"[\\B]", Some("error_brack")),
        (b"[[:foo:]]", Some("error_collate")),
        (b"[[.foo.]]", Some("error_collate")),
        (b"[[.NUL", Some("error_collate")),
        (b"[[:alpha]", Some("error_ctype")),
        (b"\\1", Some("error_backref")),
        (b"(a\\1)", Some("error_backref")),
        (b"(a)\\2", Some("error_backref")),
        (b"(a)\\10", Some("error_backref")),
        (b"(a)\\12", Some("error_backref")),
        // A number is read as a C `int` (wrapping), as a count is.
        (b"(a)\\4294967296", Some("error_backref")),
        (b"(a)\\2147483648", Some("error_backref")),
        (b"[[.1.]]", Some("error_collate")),
        (b"[[.-.]]", Some("error_collate")),
        (b"a{100000}", Some("error_space")),
        (b"(a{50000}){2}", Some("error_space")),
        (b"[^a]{99994}", Some("error_space")),
        (b"(?:[\\w\\d.]|x){14284}", Some("error_space")),
        (b"(a)\\1", None),
        (b"(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\\10", None),
        (b"(?=a)", None),
        (b"(?!a)b", None),
    ];
    for (pattern, want) in cases {
        let e = translate(pattern).expect_err(&pattern.escape_ascii().to_string());
        assert_eq!(e.problem.std_regex_error(), *want, "{}", pattern.escape_ascii());
    }
    assert_eq!(translate(b"(?=a)").unwrap_err().problem, PatternProblem::LookAhead);
    assert_eq!(translate(b"(a)\\1").unwrap_err().problem, PatternProblem::BackReference);
    assert_eq!(translate(b"(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\\10").unwrap_err().problem, PatternProblem::BackReference);
    // 4294967297 wraps to 1: `\1`, which `std::regex` takes (and finds in "aa").
    assert_eq!(translate(b"(a)\\4294967297").unwrap_err().problem, PatternProblem::BackReference);
    // The offset is where the problem was found.
    assert_eq!(translate(b"ab\\x{ff}").unwrap_err().offset, 4);
}

/// A set of bytes is written as `regex` syntax with its runs as ranges, single bytes alone, and
/// the empty set as a class that matches nothing.
#[test]
fn byte_sets_are_classes_of_ranges() {
    use super::ByteSet;
    assert_eq!(ByteSet::of(|c| c.is_ascii_digit()).to_class(), "[\\x30-\\x39]");
    assert_eq!(ByteSet::of(|c| c == b'a' || c == b'c' || c >= 0xfe).to_class(), "[\\x61\\x63\\xfe-\\xff]");
    assert_eq!(ByteSet::of(|c| c != b'\n').to_class(), "[\\x00-\\x09\\x0b-\\xff]");
    assert_eq!(ByteSet::of(|_| false).to_class(), "[^\\x00-\\xff]");
}

/// The largest patterns within the state limit compile within our size limit.
#[test]
fn patterns_at_the_state_limit_compile() {
    for p in [&b"[^a]{99993}"[..], b"(?:[\\w\\d.]|x){14283}"] {
        let syntax = translate(p).expect("within the limit");
        compile(&syntax).expect("compiles");
    }
}

/// `tests/data/std-regex-cases.json`, made by `tests/py/make_std_regex_cases.py` with libstdc++'s
/// `std::regex` (`tests/harness/std_regex.cpp`, built with g++ 12, the compiler of the llama.cpp
/// build): 2,400 patterns drawn from a grammar of every construct the scanner and compiler read
/// (a share of them damaged), each with whether `std::regex` refuses it (its `error_type`) or,
/// if not, whether `std::regex_search` finds it in each of up to 8 names; and the state limit's
/// edge for 55 pieces (`X{n}` taken, `X{n+1}` refused with `error_space`), some followed by an
/// error of their own (`a{n})`: `error_paren` below the limit, `error_space` above it).
const STD_REGEX_CASES: &str = include_str!("../../../../tests/data/std-regex-cases.json");

fn unhex(h: &str) -> Vec<u8> {
    (0..h.len() / 2).map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).expect("hex")).collect()
}

/// Every recorded case: the same refusal (the same `error_type`), or the same answer for every
/// name.
#[test]
fn matches_std_regex_on_the_recorded_cases() {
    let data: serde_json::Value = serde_json::from_str(STD_REGEX_CASES).expect("JSON");
    let cases = data["cases"].as_array().expect("cases");
    assert!(cases.len() >= 2400, "{}", cases.len());
    let mut refused = 0;
    for case in cases {
        let pattern = unhex(case[0].as_str().expect("pattern"));
        let shown = pattern.escape_ascii().to_string();
        let want = case[2].as_str().expect("answer");
        if want.starts_with("error_") {
            refused += 1;
            let e = translate(&pattern).expect_err(&shown);
            assert_eq!(e.problem.std_regex_error(), Some(want), "{shown}");
            assert!(e.offset <= pattern.len(), "{shown}: {e:?}");
            continue;
        }
        let syntax = translate(&pattern).unwrap_or_else(|e| panic!("{shown}: {e:?}"));
        let re = compile(&syntax).unwrap_or_else(|e| panic!("{shown}: {e}"));
        let names = case[1].as_array().expect("names");
        assert_eq!(names.len(), want.len(), "{shown}");
        for (name, bit) in names.iter().zip(want.bytes()) {
            let name = unhex(name.as_str().expect("name"));
            assert_eq!(
                re.is_match(&name),
                bit == b'1',
                "{shown} in {:?} (as {syntax})",
                name.escape_ascii().to_string()
            );
        }
    }
    // Both kinds are well represented.
    assert!(refused > 300 && cases.len() - refused > 1500, "{refused}");
    let limits = data["limits"].as_array().expect("limits");
    assert!(limits.len() >= 100, "{}", limits.len());
    for case in limits {
        let pattern = unhex(case[0].as_str().expect("pattern"));
        let shown = pattern.escape_ascii().to_string();
        match case[1].as_str().expect("answer") {
            // A look-ahead std::regex takes is refused here on purpose (the module docs).
            "ok" if pattern.windows(3).any(|w| w == b"(?=") => {
                assert_eq!(translate(&pattern).map_err(|e| e.problem), Err(PatternProblem::LookAhead), "{shown}")
            }
            "ok" => assert!(translate(&pattern).is_ok(), "{shown}"),
            want => {
                assert_eq!(translate(&pattern).map_err(|e| e.problem.std_regex_error()), Err(Some(want)), "{shown}")
            }
        }
    }
}

/// Nesting: as deep as the `regex` crate compiles, translated and matched as `std::regex`
/// matches it; deeper, refused as [`PatternProblem::TooDeep`] (which `std::regex` takes), not
/// an error of the `regex` crate, and without recursing further (100,000 open groups).
#[test]
fn deep_nesting_is_translated_or_refused_as_too_deep() {
    let stars = |n: usize| [&b"a"[..], &vec![b'*'; n]].concat();
    let groups = |n: usize| [vec![b'('; n], b"a".to_vec(), vec![b')'; n]].concat();
    // std::regex: `a` and 120 `*` is found in "" and "aaa"; 100 nested groups around `a` in
    // "a", not "b".
    assert!(search(&stars(120), b"") && search(&stars(120), b"aaa"));
    assert!(search(&groups(100), b"a") && !search(&groups(100), b"b"));
    let alts = [b"(a|".repeat(60), b"b".to_vec(), vec![b')'; 60]].concat();
    assert!(search(&alts, b"b") && search(&alts, b"a") && !search(&alts, b"c"));
    for p in [
        stars(126),
        [&b"a"[..], &b"{1}".repeat(126)].concat(),
        groups(250),
        [b"(a|".repeat(90), b"b".to_vec(), vec![b')'; 90]].concat(),
        b"(".repeat(100_000),
        b"(?=".repeat(100_000),
    ] {
        let shown = String::from_utf8_lossy(&p[..p.len().min(12)]).into_owned();
        assert_eq!(translate(&p).map_err(|e| e.problem), Err(PatternProblem::TooDeep), "{shown}…");
    }
}

/// Whatever its depth, a pattern is either refused as [`PatternProblem::TooDeep`] or translated
/// to syntax the `regex` crate compiles (its nesting limit counts each group, repetition,
/// alternation, concatenation and bracketed class): families of nested groups, concatenations,
/// alternations, classes and quantifiers, at every depth from 1 to past the limit. Groups one
/// after another do not nest (300 of them are taken).
#[test]
fn every_translation_compiles_at_any_depth() {
    let families: [fn(usize) -> Vec<u8>; 6] = [
        |n| [b"(?:ab".repeat(n), vec![b')'; n]].concat(),
        |n| [b"(a|b".repeat(n), vec![b')'; n]].concat(),
        |n| [b"(?:[ab]c".repeat(n), b")*".repeat(n)].concat(),
        |n| [&b"a"[..], &b"*".repeat(n)].concat(),
        |n| [b"(?:a(?:b|".repeat(n), b"c))".repeat(n)].concat(),
        |n| [b"(?:x".repeat(n), b"[yz])+".repeat(n)].concat(),
    ];
    for (i, f) in families.iter().enumerate() {
        let mut taken = 0;
        for n in 1..=260 {
            let p = f(n);
            match translate(&p) {
                Ok(syntax) => {
                    compile(&syntax).unwrap_or_else(|e| panic!("family {i} at {n}: {e}"));
                    taken = n;
                }
                Err(e) => assert_eq!(e.problem, PatternProblem::TooDeep, "family {i} at {n}"),
            }
        }
        // Every family is taken to some depth, and refused past it.
        assert!((40..260).contains(&taken), "family {i}: taken to {taken}");
        assert!(translate(&f(taken + 1)).is_err(), "family {i}");
    }
    let after = b"(?:a)".repeat(300);
    assert!(search(&after, &[b'a'; 300]) && !search(&after, &[b'a'; 299]));
}
