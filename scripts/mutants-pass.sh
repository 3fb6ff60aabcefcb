#!/usr/bin/env bash
# One pass of TESTING.md's mutation runs over a list of mutants, in a scratch copy of the tree.
#
#   scripts/mutants-pass.sh SCRATCH NAMES OUT PASS FILTER
#
# SCRATCH  a scratch copy of the tree (`git archive HEAD | tar -x -C SCRATCH`) whose tests have
#          passed unmutated at opt-level 0 (the pass runs with --baseline=skip and --in-place)
# NAMES    a file of mutant names, one a line, as `cargo mutants --list` prints them (each is
#          matched whole: escaped and anchored here)
# OUT      the output folder (OUT/mutants.out) and OUT.log
# PASS     1: the library's unit tests (--lib, --timeout 30, TEST-ARGS --skip codec::);
#          2: the unit and integration tests (--lib --test suite --test regressions
#             --test fuzz_seeds, --timeout 90, TEST-ARGS --skip compile_fail
#             --skip cut_and_corrupt --skip codec::)
# FILTER   the -f glob the names are in (gguf-serde/src/ops/quantize/**)
#
# gguf-serde is built at opt-level 0 without debug info (TESTING.md, "How it was run"). Two
# scratch copies can run two passes side by side (a copy of the first, target/ included).
set -u
if [ $# -ne 5 ]; then
  sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 2
fi
S=$1; M=$(realpath "$2"); OUT=$(realpath -m "$3"); P=$4; F=$5
cd "$S" || exit 1
args=()
while read -r n; do
  [ -n "$n" ] && args+=(-F "^$(printf '%s' "$n" | sed 's/[][\\.+*?()|{}^$]/\\&/g')\$")
done < "$M"
if [ "$P" = 1 ]; then
  targs=(--timeout 30 --cargo-arg=--lib); testargs=(-- -- --skip codec::)
else
  targs=(--timeout 90 --cargo-arg=--lib --cargo-arg=--test=suite --cargo-arg=--test=regressions
    --cargo-arg=--test=fuzz_seeds)
  testargs=(-- -- --skip compile_fail --skip cut_and_corrupt --skip codec::)
fi
echo "pass $P: $(( ${#args[@]} / 2 )) names, from $(date -u +%T)"
nice -n 15 cargo mutants --in-place --no-shuffle -p gguf-serde --baseline=skip \
  --cargo-arg=--config=profile.dev.package.gguf-serde.opt-level=0 \
  --cargo-arg=--config=profile.dev.package.gguf-serde.debug=0 \
  --features remote -f "$F" "${args[@]}" "${targs[@]}" -o "$OUT" "${testargs[@]}" > "$OUT.log" 2>&1
rc=$?
n() { wc -l < "$OUT/mutants.out/$1.txt"; }
echo "pass $P: to $(date -u +%T), exit $rc (caught $(n caught), missed $(n missed), timeout $(n timeout), unviable $(n unviable))"
exit $rc
