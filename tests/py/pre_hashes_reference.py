"""The BPE pre-tokenizer table of llama.cpp's converter, read from its source with Python's `ast`.

Usage: python pre_hashes_reference.py LLAMA_CPP_SRC

Parses `conversion/base.py`, finds `TextModel.get_vocab_base_pre` and prints, as JSON,
`{"chktxt": TEXT, "table": [[CHKHSH, NAME], ...], "comparisons": N}`: the check text (the value
assigned to `chktxt`), and for every `if chkhsh == "HASH": res = "NAME"` statement of the method
body, in order, the name the method returns for that hash. The statements are a run of `if`s (not
`elif`s), so a hash listed twice returns its last name: the table has one row per hash, at its
first place, with its last name, which is what running the chain gives. `comparisons` counts the
`if` statements read, so a reader can tell a duplicate from a statement missed.

This walks the syntax tree; scripts/gen-bpe-pre-hashes.py (which writes the Rust table) reads the
text with regular expressions: the interop test `vocab::pre_tokenizer_table_is_the_references`
compares the two. Only the standard library.
"""
import ast
import json
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: pre_hashes_reference.py LLAMA_CPP_SRC")
    path = sys.argv[1] + "/conversion/base.py"
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    method = None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "TextModel":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "get_vocab_base_pre":
                    method = item
    if method is None:
        sys.exit(f"{path}: no TextModel.get_vocab_base_pre")
    chktxt = None
    names = {}
    comparisons = 0
    for stmt in method.body:
        if isinstance(stmt, ast.Assign) and [getattr(t, "id", None) for t in stmt.targets] == ["chktxt"]:
            chktxt = ast.literal_eval(stmt.value)
        if not isinstance(stmt, ast.If):
            continue
        test = stmt.test
        if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "chkhsh"):
            continue
        if not (len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq) and isinstance(test.comparators[0], ast.Constant)):
            sys.exit(f"{path}:{stmt.lineno}: a chkhsh test of another form")
        if stmt.orelse or len(stmt.body) != 1 or not isinstance(stmt.body[0], ast.Assign):
            sys.exit(f"{path}:{stmt.lineno}: a chkhsh branch of another form")
        assign = stmt.body[0]
        if [getattr(t, "id", None) for t in assign.targets] != ["res"] or not isinstance(assign.value, ast.Constant):
            sys.exit(f"{path}:{stmt.lineno}: a chkhsh branch that does not set res to a constant")
        comparisons += 1
        names[test.comparators[0].value] = assign.value.value  # dict: first place, last value
    if chktxt is None:
        sys.exit(f"{path}: no chktxt assignment in get_vocab_base_pre")
    json.dump({"chktxt": chktxt, "table": [[h, n] for h, n in names.items()], "comparisons": comparisons},
              sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
