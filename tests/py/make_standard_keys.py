"""The standard metadata keys of gguf-py and llama.cpp, and how concrete keys resolve to them, as the
reference of gguf-serde's unit tests of its key registry (gguf-serde/src/format/keys/reference_tests.rs).

Usage: python make_standard_keys.py LLAMA_CPP_SRC OUT_JSON

LLAMA_CPP_SRC is llama.cpp's source tree (the sdist the suite builds); its `src/llama-arch.cpp` gives
the architecture names (`LLM_ARCH_NAMES`) and llama.cpp's own key names (`LLM_KV_NAMES`, `%s` for
the architecture).

Output (one entry a line):
  {"keys":    [[CLASS.NAME, TEMPLATE]],            # every string of gguf.constants.Keys, in its order
   "writes":  [[TEMPLATE, TYPE, ELEMENT or null]], # what GGUFWriter's add_* methods write (standard_keys.py)
   "lookups": [[KEY, TEMPLATE or null, ARCH or null]]}

`lookups` are concrete keys, each with the gguf-py template it is an instance of (null: none) and
what `{arch}` stands for in it. The keys are every gguf-py template and every llama.cpp key name
filled in (with llama.cpp's architecture names, numbers, chat-template names, dense-layer names) and
near misses of each (a character or segment more or less, a reserved namespace or an empty text
in place of the architecture, a number that is not one, ...). A key is an instance of a template
when it equals it with each placeholder replaced by: `{arch}` one non-empty dotted segment that is
not a namespace of gguf-py's own keys (`general`, `tokenizer`, `clip`, ...: the first segments of
the templates that do not start with `{arch}`), `{id}` ASCII decimal digits, `{dense}` non-empty
text without a dot, `{name}` any non-empty text. A template without placeholders wins over the
others; otherwise the first matching template in gguf-py's order.
"""
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import standard_keys  # noqa: E402 (tests/py/standard_keys.py: gguf-py's keys and writer types)

PLACEHOLDER = {"arch": r"[^.]+", "id": r"[0-9]+", "dense": r"[^.]+", "name": r".+"}


def pattern(template):
    out, pos = "", 0
    for m in re.finditer(r"\{(\w+)\}", template):
        out += re.escape(template[pos:m.start()]) + f"(?P<{m.group(1)}>{PLACEHOLDER[m.group(1)]})"
        pos = m.end()
    return re.compile(out + re.escape(template[pos:]), re.DOTALL)


def resolver(templates):
    reserved = {t.split(".")[0] for t in templates if not t.startswith("{")}
    compiled = [(t, pattern(t)) for t in templates]

    def resolve(key):
        if key in templates and "{" not in key:
            return key, None
        for t, p in compiled:
            m = p.fullmatch(key)
            if m and (m.groupdict().get("arch") not in reserved):
                return t, m.groupdict().get("arch")
        return None, None

    return resolve, sorted(reserved)


def fill(template, arch, id_="0", name="tool_use", dense="dense_2"):
    return template.replace("{arch}", arch).replace("{id}", id_).replace("{name}", name).replace("{dense}", dense)


def llama_arch(src):
    text = open(os.path.join(src, "src", "llama-arch.cpp"), encoding="utf-8").read()
    block = lambda name: text[text.index(name):text.index("};", text.index(name))]  # noqa: E731
    archs = re.findall(r'\{\s*LLM_ARCH_\w+\s*,\s*"([^"]*)"\s*\}', block("LLM_ARCH_NAMES"))
    keys = re.findall(r'\{\s*LLM_KV_\w+\s*,\s*"([^"]*)"\s*\}', block("LLM_KV_NAMES"))
    return archs, [k.replace("%s", "{arch}") for k in keys]


def main():
    src, out_path = sys.argv[1], sys.argv[2]
    keys = standard_keys.keys()
    templates = [k["key"] for k in keys]
    with tempfile.TemporaryDirectory() as tmp:
        writes = standard_keys.writes(tmp)
    archs, llama_keys = llama_arch(src)
    resolve, reserved = resolver(templates)
    usable = [a for a in archs if a not in reserved]

    concrete = []
    for i, t in enumerate(llama_keys):
        concrete.append(fill(t, usable[-1 - i % len(usable)]))
    for i, t in enumerate(templates):
        arch = usable[i % len(usable)]
        k = fill(t, arch, id_=str(i % 13), name=["tool_use", "rag.v2", "é"][i % 3])
        concrete.append(k)
        # Near misses: longer, shorter, another first segment, other placeholder texts.
        concrete += [k + "x", k + ".x", k[:-1], k.rsplit(".", 1)[0], "x" + k, "." + k, k + "."]
        concrete += [fill(t, r) for r in (reserved[i % len(reserved)], "", "é", "a b", arch + ".x")]
        if "{id}" in t:
            concrete += [fill(t, arch, id_=v) for v in ("", "x", "1x", "-1", "\u0661", "0.1", "123456789012")]
        if "{name}" in t:
            concrete += [fill(t, arch, name=v) for v in ("", ".", "a.b.c", "default")]
        if "{dense}" in t:
            concrete += [fill(t, arch, dense=v) for v in ("", "a.b", "dense", "é")]
    # Every architecture of llama.cpp with a fixed template, a per-layer one and a dense-layer one.
    for a in archs:
        concrete += [f"{a}.context_length", f"{a}.attention.head_count", f"{a}.dense_3_feat_out"]
    concrete += ["", ".", "..", "x", "general", "general.", "split", "a..b", "tokenizer.chat_template.", "{arch}"]

    seen, lookups = set(), []
    for k in concrete:
        if k not in seen:
            seen.add(k)
            lookups.append([k, *resolve(k)])

    data = {
        "keys": [[f"{k['class']}.{k['name']}", k["key"]] for k in keys],
        "writes": sorted({(w["key"], w["type"], w["element"]) for w in writes}),
        "lookups": lookups,
    }
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("{\n")
        for n, (name, items) in enumerate(data.items()):
            f.write(f' "{name}": [\n')
            f.write(",\n".join("  " + json.dumps(list(e) if isinstance(e, tuple) else e, ensure_ascii=False)
                               for e in items))
            f.write("\n ]" + ("," if n + 1 < len(data) else "") + "\n")
        f.write("}\n")
    print(f"{len(keys)} keys, {len(data['writes'])} writes, {len(lookups)} lookups from {len(archs)} "
          f"architectures and {len(llama_keys)} llama.cpp keys "
          f"({sum(1 for e in lookups if e[1])} resolve)", file=sys.stderr)


if __name__ == "__main__":
    main()
