"""Reads `cargo metadata --format-version 1` on stdin and fails if a package's licence is not
compatible with MIT OR Apache-2.0: an SPDX expression passes when every AND-term has at least one
OR-alternative in ALLOWED (`/` is the old spelling of OR)."""
import json
import re
import sys

ALLOWED = {
    "MIT", "Apache-2.0", "Apache-2.0 WITH LLVM-exception", "BSD-2-Clause", "BSD-3-Clause", "ISC",
    "Zlib", "Unicode-3.0", "Unicode-DFS-2016", "Unlicense", "CC0-1.0", "BSL-1.0", "MPL-2.0", "0BSD",
    # webpki-roots (through ureq, feature `remote`): Mozilla's root certificates as data.
    "CDLA-Permissive-2.0",
}


def compatible(expr: str) -> bool:
    expr = expr.replace("/", " OR ").replace("(", " ").replace(")", " ")
    terms = re.split(r"\s+AND\s+", expr.strip())
    return all(any(alt.strip() in ALLOWED for alt in term.split(" OR ")) for term in terms)


bad = []
packages = json.load(sys.stdin)["packages"]
for p in packages:
    lic = p.get("license")
    if not lic or not compatible(lic):
        bad.append(f"{p['name']} {p['version']}: {lic or 'no licence field'}")
if bad:
    print("licences not compatible with MIT OR Apache-2.0:", *bad, sep="\n  ", file=sys.stderr)
    sys.exit(1)
print(f"licences: all {len(packages)} packages are compatible with MIT OR Apache-2.0")
