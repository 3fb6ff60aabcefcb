//! Compile errors of `#[derive(GgufModel)]`: one file per mistake in `tests/ui/`, each with the
//! exact error output (`.stderr`) it must produce. Run with `TRYBUILD=overwrite` to update the
//! expected output after a deliberate change, and review the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
