#!/usr/bin/env python3
"""The mutant sets of TESTING.md's `metadata/` and `container/` runs, at the commit checked out.

The shards of those runs were drawn from cargo-mutants' list at older commits (`--shard K/N
--sharding round-robin`); the code moved since, so a mutant's name (file:line:column) changed.
This script lists the mutants at each commit the shards were drawn at (a temporary `git
worktree` each; `cargo mutants --list --json` builds nothing), matches them to the mutants at
HEAD, and writes, for each set, the names at HEAD as anchored, escaped regular expressions, one
a line, for `cargo mutants -F` (read them into an array: `while read -r r; do args+=(-F "$r");
done < FILE`).

Matching key: file, function, genre and replacement, with the text of the mutated line (stripped),
the mutated span's column from its first non-blank and its text; a mutant replacing a function's
value by file, function, replacement and return type alone (its body's first line moves). Equal
keys pair in order.

    scripts/mutation-sets.py OUT_DIR

writes OUT_DIR/container-run.txt (the mutants at HEAD whose counterparts the shards 0/32 to 22/32
ran), container-23..31.txt (shards 23/32 to 31/32 of 2060554's order), container-rest.txt (the
mutants no shard holds: the rest of the folder), metadata-<set>.txt likewise, and prints the
counts. Needs cargo-mutants (27.1.0) and git.
"""
import collections, json, os, subprocess, sys, tempfile

ROOT = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True).stdout.strip()


def listing(tree, filt):
    out = subprocess.run(["cargo", "mutants", "--list", "--json", "-p", "gguf-serde", "--features", "remote", "-f", filt],
                         cwd=tree, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def keyed(tree, data):
    files, seen, out = {}, collections.Counter(), []
    for m in data:
        f = m["file"]
        if f not in files:
            files[f] = open(os.path.join(tree, f), encoding="utf-8").read().split("\n")
        lines = files[f]
        sp = m["span"]
        l0, c0, l1, c1 = sp["start"]["line"], sp["start"]["column"], sp["end"]["line"], sp["end"]["column"]
        fn = (m.get("function") or {}).get("function_name")
        if m["genre"] == "FnValue":
            k = (f, fn, m["genre"], m["replacement"], (m.get("function") or {}).get("return_type"))
        else:
            line = lines[l0 - 1]
            indent = len(line) - len(line.lstrip())
            text = line[c0 - 1:c1 - 1] if l0 == l1 else line[c0 - 1:]
            k = (f, fn, m["genre"], m["replacement"], line.strip(), c0 - 1 - indent, l1 - l0, text)
        seen[k] += 1
        out.append((k + (seen[k],), m))
    return out


def esc(s):
    return "".join("\\" + c if c in "\\.+*?()|[]{}^$" else c for c in s)


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="mutation-sets-")
    trees = {}
    try:
        for c in ["5a44dff", "48b4385", "2060554", "0f7d668"]:
            t = os.path.join(tmp, c)
            subprocess.run(["git", "worktree", "add", "-q", "--detach", t, c], cwd=ROOT, check=True)
            trees[c] = t

        def write(name, names):
            with open(os.path.join(out_dir, name), "w") as f:
                f.writelines("^" + esc(n) + "$\n" for n in names)
            print(f"{name}: {len(names)}")

        # container/: 0/32 drawn at 5a44dff (1178 mutants), 1/32 to 9/32 at 48b4385 (1184; the list
        # of 625bf80 is the same), 13/32 to 31/32 in the order of 2060554 (1187).
        F = "gguf-serde/src/container/**"
        head = keyed(ROOT, listing(ROOT, F))
        at = {k: i for i, (k, _) in enumerate(head)}
        old = {c: keyed(trees[c], listing(trees[c], F)) for c in ["5a44dff", "48b4385", "2060554"]}
        shard = lambda lst, k, n: [x for i, x in enumerate(lst) if i % n == k]
        run = set()
        for c, ks in [("5a44dff", [0]), ("48b4385", [1, 2, 3, 5, 7, 8, 9]), ("2060554", range(13, 23))]:
            for k in ks:
                run |= {at[key] for key, _ in shard(old[c], k, 32) if key in at}
        write("container-run.txt", [head[i][1]["name"] for i in sorted(run)])
        later = set()
        for k in range(23, 32):
            s = sorted(at[key] for key, _ in shard(old["2060554"], k, 32) if key in at)
            later |= set(s)
            write(f"container-{k}.txt", [head[i][1]["name"] for i in s])
        write("container-rest.txt", [m["name"] for i, (_, m) in enumerate(head) if i not in run and i not in later])

        # metadata/: shard 0/8 drawn at 0f7d668 (599 mutants), the others in the order of 2060554
        # (661), each less the mutants that were that shard 0/8's; the rest of 2060554's 0/8 in two
        # halves (even and odd places).
        F = "gguf-serde/src/metadata/**"
        head = keyed(ROOT, listing(ROOT, F))
        at = {k: i for i, (k, _) in enumerate(head)}
        zero = {key for key, _ in shard(keyed(trees["0f7d668"], listing(trees["0f7d668"], F)), 0, 8)}
        new = keyed(trees["2060554"], listing(trees["2060554"], F))
        write("metadata-0.txt", [m["name"] for key, m in head if key in zero])
        for k in range(1, 8):
            write(f"metadata-{k}.txt", [head[at[key]][1]["name"] for key, _ in shard(new, k, 8) if key not in zero and key in at])
        rest0 = [x for x in shard(new, 0, 8) if x[0] not in zero]
        write("metadata-0-even.txt", [head[at[key]][1]["name"] for key, _ in rest0[0::2] if key in at])
        write("metadata-0-odd.txt", [head[at[key]][1]["name"] for key, _ in rest0[1::2] if key in at])
    finally:
        for t in trees.values():
            subprocess.run(["git", "worktree", "remove", "--force", t], cwd=ROOT)
        os.rmdir(tmp) if os.path.isdir(tmp) and not os.listdir(tmp) else None


if __name__ == "__main__":
    main()
