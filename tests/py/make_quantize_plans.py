"""Record llama-quantize's per-tensor type choices for small synthetic models, as the reference of
gguf-serde's hermetic quantize-rule test (gguf-serde/src/ops/quantize/reference_tests.rs).

Usage: python make_quantize_plans.py LLAMA_QUANTIZE OUT_JSON

For each model of MODELS (metadata and tensor shapes chosen so that llama-quantize's mix rules,
layer positions, grouped-query factor, experts, falcon, the 70B shape, tied embeddings, kept
tensors, row-length fallbacks and the rules of glm5-next, jais2 and bailingmoe3 all come into
play), this script writes the model as a GGUF with gguf-py (F32 tensors unless a tensor says F16;
zero data: the rules read only names, shapes and metadata), runs
`llama-quantize --dry-run MODEL FTYPE` for every file type (and `--pure` for the models listed in
PURE, and the options of OPTIONS: type options, `--override-kv`, and `--imatrix` with an
importance matrix written with gguf-py, one entry of ones per 2-D weight) and records, in
llama-quantize's output order, the type it reports for each tensor.

It also records the `general.file_type` of `llama-quantize MODEL OUT COPY` (what llama.cpp's
loader makes of the model: its `general.file_type`, or the file type of its most common tensor
type with bit 1024 set), plain and with the `--override-kv` options of COPY_OPTIONS; and, for
the models of SPLITS, the plans of the model split by `llama-gguf-split --split-max-tensors N`
(the program beside LLAMA_QUANTIZE), planned from its first shard, plain and with `--keep-split`.

Output: {"models": [{"name", "arch", "metadata": {KEY: [TYPE, VALUE]},
                     "tensors": [[NAME, NE] or [NAME, NE, "F16"]],  # ne fastest first, file order
                     "options": {NAME: [ARG...]},      # llama-quantize options of FTYPE/NAME plans
                     "imatrix": {NAME: NE0},           # the entries of the importance matrix
                     "order": [NAME...],               # llama-quantize's output order
                     "plans": {FTYPE or FTYPE+"/pure": "TYPE TYPE ..." or null},  # null: it failed
                     "requires_imatrix": {FTYPE...: bool},  # its warning that a real run needs one
                     "fallbacks": {FTYPE...: N},            # its count of tensors that fell back
                     "copy_options": {NAME: [ARG...]},      # llama-quantize options of COPY
                     "copy_file_type": {"" or NAME: N},     # general.file_type after COPY
                     "split": {"max_tensors": N,            # only for the models of SPLITS
                               "order": [NAME...], "keep_split_order": [NAME...],
                               "plans": {FTYPE or FTYPE+"/keep-split": "TYPE ..." or null}}}]}
TYPE in metadata is "u32", "f32" or "str".
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import gguf

# llama-quantize's file type names (tools/quantize/quantize.cpp, QUANT_OPTIONS).
FTYPES = ["F32", "F16", "Q4_0", "Q4_1", "Q8_0", "Q5_0", "Q5_1", "Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L",
          "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "IQ2_XXS", "IQ2_XS", "Q2_K_S", "IQ3_XS",
          "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ3_M", "IQ2_S", "IQ2_M", "IQ4_XS", "IQ1_M", "BF16",
          "TQ1_0", "TQ2_0", "MXFP4_MOE", "Q1_0", "Q2_0"]

E = 256  # row length of most weights: a whole number of blocks of every type


def llama_meta(arch, layers, head, head_kv, experts=0, eps_key="layer_norm_rms_epsilon"):
    m = {
        f"{arch}.context_length": ["u32", 128],
        f"{arch}.embedding_length": ["u32", E],
        f"{arch}.feed_forward_length": ["u32", 320],
        f"{arch}.block_count": ["u32", layers],
        f"{arch}.attention.head_count": ["u32", head],
        f"{arch}.attention.head_count_kv": ["u32", head_kv],
        f"{arch}.attention.{eps_key}": ["f32", 1e-5],
    }
    if experts:
        m[f"{arch}.expert_count"] = ["u32", experts]
        m[f"{arch}.expert_used_count"] = ["u32", 2]
    return m


def dense_layers(n, names, down_cols=E, norm=True):
    t = []
    for i in range(n):
        for part in names:
            cols = down_cols if part == "ffn_down" else E
            t.append([f"blk.{i}.{part}.weight", [cols, 2]])
        if norm:
            t.append([f"blk.{i}.attn_norm.weight", [E]])
    return t


LLAMA_PARTS = ["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"]


def models():
    out = []
    # 16 layers, no grouped-query attention; ffn_down rows of 320 (not a whole 256-block: the
    # K-quant fallbacks); a non-weight 2-D tensor, a never-quantized one, a 1-D one.
    t = [["token_embd.weight", [E, 2]], ["output_norm.weight", [E]], ["output.weight", [E, 2]]]
    t += dense_layers(16, LLAMA_PARTS, down_cols=320)
    t += [["blk.0.attn_q.bias", [E, 2]], ["blk.0.ffn_gate_inp.weight", [E, 2]], ["rope_freqs.weight", [E, 1]]]
    out.append({"name": "llama16", "arch": "llama", "metadata": llama_meta("llama", 16, 8, 8), "tensors": t})
    # 8 layers, grouped-query factor 4, tied embeddings (no output.weight), a per-layer token
    # embedding, rows of 96 for the output rule's Q8_0 case.
    t = [["token_embd.weight", [E, 2]], ["per_layer_token_embd.weight", [96, 2]], ["output_norm.weight", [E]]]
    t += dense_layers(8, LLAMA_PARTS)
    out.append({"name": "llama8-gqa4-tied", "arch": "llama", "metadata": llama_meta("llama", 8, 8, 2), "tensors": t})
    # 8 experts.
    t = [["token_embd.weight", [E, 2]], ["output.weight", [E, 2]]]
    for i in range(8):
        for p in ["attn_q", "attn_k", "attn_v", "attn_output"]:
            t.append([f"blk.{i}.{p}.weight", [E, 2]])
        t.append([f"blk.{i}.ffn_gate_inp.weight", [E, 8]])
        for p in ["ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"]:
            t.append([f"blk.{i}.{p}.weight", [E, 2, 8]])
    out.append({"name": "llama8-moe8", "arch": "llama", "metadata": llama_meta("llama", 8, 8, 8, experts=8), "tensors": t})
    # No experts, no ffn_down in layer 0: llama-quantize counts the ffn_down tensors it has seen
    # (the layer number in the name matters only with experts).
    t = [["token_embd.weight", [E, 2]], ["output.weight", [E, 2]]]
    t += [x for x in dense_layers(16, ["attn_v", "ffn_down"], norm=False) if x[0] != "blk.0.ffn_down.weight"]
    out.append({"name": "llama16-ffn_down-from-1", "arch": "llama", "metadata": llama_meta("llama", 16, 8, 8),
                "tensors": t})
    # 8 experts, an expert tensor of layer 4 in a model of 4 layers: llama-quantize fails where a
    # mix rule needs the layer ("bad layer").
    t = [["token_embd.weight", [E, 2]], ["output.weight", [E, 2]]]
    for i in range(5):
        t.append([f"blk.{i}.attn_v.weight", [E, 2]])
        t.append([f"blk.{i}.ffn_down_exps.weight", [E, 2, 8]])
    out.append({"name": "llama4-moe8-layer4", "arch": "llama", "metadata": llama_meta("llama", 4, 8, 8, experts=8),
                "tensors": t})
    # 4 experts, grouped-query factor 2.
    t = [["token_embd.weight", [E, 2]], ["output.weight", [E, 2]]]
    for i in range(8):
        for p in ["attn_q", "attn_k", "attn_v", "attn_output"]:
            t.append([f"blk.{i}.{p}.weight", [E, 2]])
        for p in ["ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"]:
            t.append([f"blk.{i}.{p}.weight", [E, 2, 4]])
    out.append({"name": "llama8-moe4", "arch": "llama", "metadata": llama_meta("llama", 8, 8, 4, experts=4), "tensors": t})
    # falcon: fused attn_qkv.
    t = [["token_embd.weight", [E, 2]], ["output.weight", [E, 2]]]
    t += dense_layers(16, ["attn_qkv", "attn_output", "ffn_up", "ffn_down"])
    # (with llama's keys too, for the plans with the architecture overridden to llama)
    meta = llama_meta("falcon", 16, 8, 8, eps_key="layer_norm_epsilon") | llama_meta("llama", 16, 8, 8)
    out.append({"name": "falcon16", "arch": "falcon", "metadata": meta, "tensors": t})
    # The 70B shapes: llama of 80 layers with grouped-query attention, qwen2 of 80 layers.
    t = [["token_embd.weight", [E, 2]], ["output.weight", [E, 2]]]
    t += dense_layers(80, ["attn_v", "ffn_down"], norm=False)
    out.append({"name": "llama80-gqa2", "arch": "llama", "metadata": llama_meta("llama", 80, 8, 4), "tensors": t})
    t = [["token_embd.weight", [E, 2]], ["output.weight", [E, 2]]]
    t += dense_layers(80, ["attn_v"], norm=False)
    out.append({"name": "qwen2-80", "arch": "qwen2", "metadata": llama_meta("qwen2", 80, 8, 8), "tensors": t})
    # F16 weights, F32 norms (sources that are not F32; COPY guesses MOSTLY_F16).
    t = [["token_embd.weight", [E, 2], "F16"], ["output_norm.weight", [E]], ["output.weight", [E, 2], "F16"]]
    t += [x + ["F16"] if len(x[1]) == 2 else x for x in dense_layers(8, LLAMA_PARTS)]
    out.append({"name": "llama8-f16", "arch": "llama", "metadata": llama_meta("llama", 8, 8, 8), "tensors": t})
    # As many F16 as F32 tensors: COPY's guess takes the type that first reached the largest count
    # in llama-quantize's order (here by name: attn_k, attn_q, attn_v, ffn_up), F32 ...
    parts = ["attn_k", "attn_q", "attn_v", "ffn_up"]
    for name, types in [("tie-f32", ["F16", "F32", "F32", "F16"]), ("tie-f16", ["F32", "F16", "F16", "F32"])]:
        t = [[f"blk.0.{p}.weight", [E, 2], ty] for p, ty in zip(parts, types)]
        out.append({"name": name, "arch": "llama", "metadata": llama_meta("llama", 1, 8, 8), "tensors": t})
    # ... and a general.file_type of its own, which COPY keeps.
    t = [["token_embd.weight", [E, 2]], ["output.weight", [E, 2], "F16"]] + dense_layers(2, ["attn_v", "ffn_down"])
    meta = llama_meta("llama", 2, 8, 8) | {"general.file_type": ["u32", 7]}
    out.append({"name": "llama2-file-type7", "arch": "llama", "metadata": meta, "tensors": t})
    # glm5-next: 2 layers and a NextN layer, 4 experts (its load_hparams needs the MLA, KDA,
    # indexer and hyper-connection keys). attn_q_a, attn_q_b (one F16: the rule looks at the file
    # type's default type, not the source's) and nextn.eh_proj go to Q8_0; the tensors it never
    # quantizes (hc_, indexer.attn_q_b, attn_kv_a_mqa, attn_k_b) are kept.
    a = "glm5-next"
    meta = llama_meta(a, 3, 8, 8, experts=4) | {
        f"{a}.nextn_predict_layers": ["u32", 1],
        f"{a}.attention.key_length_mla": ["u32", 32], f"{a}.attention.value_length_mla": ["u32", 32],
        f"{a}.attention.q_lora_rank": ["u32", 64], f"{a}.attention.kv_lora_rank": ["u32", 64],
        f"{a}.ssm.conv_kernel": ["u32", 4], f"{a}.kda.head_dim": ["u32", 32],
        f"{a}.expert_feed_forward_length": ["u32", 64], f"{a}.expert_shared_count": ["u32", 1],
        f"{a}.attention.indexer.head_count": ["u32", 4], f"{a}.attention.indexer.key_length": ["u32", 32],
        f"{a}.attention.indexer.top_k": ["u32", 8], f"{a}.attention.indexer.kpool": ["u32", 4],
        f"{a}.hyper_connection.count": ["u32", 4], f"{a}.hyper_connection.sinkhorn_iterations": ["u32", 2],
        f"{a}.hyper_connection.epsilon": ["f32", 1e-6],
    }
    t = [["token_embd.weight", [E, 2]], ["output_norm.weight", [E]], ["output.weight", [E, 2]]]
    for i in range(3):
        parts = ["attn_q_a", "attn_q_b", "attn_kv_a_mqa", "attn_output"]
        parts += ["nextn.eh_proj"] if i == 2 else ["hc_attn_fn", "indexer.attn_q_b"]
        t += [[f"blk.{i}.{p}.weight", [E, 2]] + (["F16"] if (i, p) == (0, "attn_q_b") else []) for p in parts]
        t.append([f"blk.{i}.attn_k_b.weight", [E, 2, 8]])
        t += [[f"blk.{i}.{p}.weight", [E, 2, 4]] for p in ["ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"]]
    out.append({"name": "glm5-next3-nextn1", "arch": a, "metadata": meta, "tensors": t})
    # jais2: the 70B shape is 68 layers (llama.cpp's n_layer, without the NextN layers); 68
    # layers of which one is a NextN layer is not.
    for name, nextn in [("jais2-68", 0), ("jais2-68-nextn1", 1)]:
        meta = llama_meta("jais2", 68, 8, 8, eps_key="layer_norm_epsilon")
        if nextn:
            meta["jais2.nextn_predict_layers"] = ["u32", nextn]
        t = [["token_embd.weight", [E, 2]], ["output.weight", [E, 2]]] + dense_layers(68, ["attn_v"], norm=False)
        out.append({"name": name, "arch": "jais2", "metadata": meta, "tensors": t})
    # bailingmoe3: with MXFP4_MOE only its expert tensors (ffn_*_exps) go to MXFP4, not its other
    # 3-D tensors (attn_k_b); a dense first layer (2-D ffn tensors).
    a = "bailingmoe3"
    meta = llama_meta(a, 2, 8, 8, experts=4) | {
        f"{a}.attention.key_length_mla": ["u32", 32], f"{a}.attention.value_length_mla": ["u32", 32],
        f"{a}.attention.kv_lora_rank": ["u32", 64],
        f"{a}.ssm.conv_kernel": ["u32", 4], f"{a}.kda.head_dim": ["u32", 32], f"{a}.kda.gate_lower_bound": ["f32", -5.0],
        f"{a}.expert_feed_forward_length": ["u32", 64], f"{a}.expert_shared_count": ["u32", 1],
        f"{a}.leading_dense_block_count": ["u32", 1], f"{a}.expert_gating_func": ["u32", 2],
    }
    t = [["token_embd.weight", [E, 2]], ["output_norm.weight", [E]], ["output.weight", [E, 2]]]
    t += dense_layers(1, ["attn_q", "ffn_gate", "ffn_up", "ffn_down"])
    t += [["blk.1.attn_q.weight", [E, 2]], ["blk.1.attn_k_b.weight", [E, 2, 8]], ["blk.1.ffn_gate_inp.weight", [E, 4]]]
    t += [[f"blk.1.{p}.weight", [E, 2, 4]] for p in ["ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"]]
    out.append({"name": "bailingmoe3-moe4", "arch": a, "metadata": meta, "tensors": t})
    return out


PURE = {"llama16"}

# llama-quantize's type options and metadata overrides, planned for every file type as FTYPE/NAME.
OPTIONS = {
    "llama16": {
        "types": ["--output-tensor-type", "f16", "--token-embedding-type", "q4_0",
                  "--tensor-type", "blk\\.1[0-5]\\.ffn_down=iq4_nl", "--tensor-type", "ATTN_K=q8_0"],
        "leave-output": ["--leave-output-tensor"],
        "kv-int": ["--override-kv", "llama.attention.head_count_kv=int:2"],
        "imatrix": ["--imatrix", "IMATRIX"],
    },
    "falcon16": {
        "as-llama": ["--override-kv", "general.architecture=str:llama"],
    },
    "llama8-gqa4-tied": {
        "types": ["--token-embedding-type", "q8_0", "--tensor-type", "per_layer_token_embd=q5_0",
                  "--tensor-type", "attn_v=q6_k"],
        "embd": ["--token-embedding-type", "q5_1"],
        "imatrix": ["--imatrix", "IMATRIX"],
    },
}

# COPY with metadata overrides: of general.file_type itself, and of another integer key.
COPY_OPTIONS = {
    "llama16": {
        "file-type": ["--override-kv", "general.file_type=int:2"],
        "kv-int": ["--override-kv", "llama.attention.head_count_kv=int:2"],
    },
}

# Models also planned split into shards of at most N tensors.
SPLITS = {"llama16": 40}


def write(model, path):
    w = gguf.GGUFWriter(path, model["arch"])
    for k, (ty, v) in model["metadata"].items():
        if ty == "u32":
            w.add_uint32(k, v)
        elif ty == "f32":
            w.add_float32(k, v)
        else:
            w.add_string(k, v)
    for name, ne, *ty in model["tensors"]:
        w.add_tensor(name, np.zeros(list(reversed(ne)), dtype=np.float16 if ty == ["F16"] else np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def imatrix_entries(model):
    """The importance matrix's entries: every 2-D weight, by name, with its row length."""
    return {name: ne[0] for name, ne, *_ in model["tensors"] if len(ne) == 2 and name.endswith(".weight")}


def write_imatrix(model, path):
    """An importance matrix in llama-imatrix's GGUF format (`NAME.in_sum2`, `NAME.counts`, the
    `imatrix.*` keys), one chunk, all sums 1."""
    w = gguf.GGUFWriter(path, "")
    w.kv_data[0].clear()  # no general.architecture
    w.add_string("general.type", "imatrix")
    w.add_array("imatrix.datasets", ["synthetic"])
    w.add_uint32("imatrix.chunk_count", 1)
    w.add_uint32("imatrix.chunk_size", 512)
    for name, n in imatrix_entries(model).items():
        w.add_tensor(name + ".in_sum2", np.ones((1, n), dtype=np.float32))
        w.add_tensor(name + ".counts", np.ones((1, 1), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def copy_file_type(lq, path, out, opts):
    """general.file_type of `llama-quantize OPTS MODEL OUT COPY`."""
    o = subprocess.run([lq] + opts + [path, out, "COPY"], capture_output=True, text=True, errors="replace")
    assert o.returncode == 0, o.stdout + o.stderr
    f = gguf.GGUFReader(out).fields["general.file_type"]
    assert f.types == [gguf.GGUFValueType.UINT32], f.types
    os.remove(out)
    return int(f.parts[-1][0])


def plan(lq, path, ftype, opts):
    args = [lq, "--dry-run"] + opts + [path, ftype]
    o = subprocess.run(args, capture_output=True, text=True, errors="replace")
    if o.returncode != 0:
        return None
    # "[  12/ 272] blk.0.attn_v.weight - [ 576, 64, 1, 1], type = f32, size = ... -> ... (q5_0)"
    names, types = [], []
    for line in (o.stdout + o.stderr).splitlines():
        if not (line.startswith("[") and "] " in line and "type = " in line):
            continue
        rest = line.split("] ", 1)[1]
        src = rest.split("type = ", 1)[1].split(",")[0].strip()
        target = rest.rsplit("(", 1)[1].rstrip(")") if rest.endswith(")") else src
        names.append(rest.split()[0])
        types.append(target.upper())
    assert names, o.stdout + o.stderr
    log = o.stdout + o.stderr
    needs_imatrix = "will require an imatrix" in log
    fallbacks = 0
    for line in log.splitlines():
        if "tensor(s) required fallback quantization" in line:
            fallbacks = int(line.split("WARNING: ", 1)[1].split()[0])
    return names, types, needs_imatrix, fallbacks


def split_plans(lq, path, d, m):
    """The plans of `m` split by llama-gguf-split, from its first shard, plain and --keep-split."""
    n = SPLITS[m["name"]]
    prefix = os.path.join(d, m["name"] + "-split")
    gs = os.path.join(os.path.dirname(lq), "llama-gguf-split")
    o = subprocess.run([gs, "--split", "--split-max-tensors", str(n), path, prefix], capture_output=True, text=True)
    assert o.returncode == 0, o.stdout + o.stderr
    shards = sorted(f for f in os.listdir(d) if f.startswith(m["name"] + "-split-"))
    assert len(shards) > 1, shards
    first = os.path.join(d, shards[0])
    split = {"max_tensors": n, "order": None, "keep_split_order": None, "plans": {}}
    for ft in FTYPES:
        for suffix, opts, order in [("", [], "order"), ("/keep-split", ["--keep-split"], "keep_split_order")]:
            r = plan(lq, first, ft, opts)
            if r is None:
                split["plans"][ft + suffix] = None
                continue
            names, types = r[0], r[1]
            split[order] = split[order] or names
            assert names == split[order], (m["name"], ft + suffix)
            split["plans"][ft + suffix] = " ".join(types)
    for f in shards:
        os.remove(os.path.join(d, f))
    return split


def main():
    lq, out_path = sys.argv[1], sys.argv[2]
    result = {"models": []}
    with tempfile.TemporaryDirectory() as d:
        for m in models():
            path = os.path.join(d, m["name"] + ".gguf")
            write(m, path)
            m["order"] = None
            m["plans"] = {}
            m["requires_imatrix"] = {}
            m["fallbacks"] = {}
            m["options"] = OPTIONS.get(m["name"], {})
            if any("--imatrix" in v for v in m["options"].values()):
                m["imatrix"] = imatrix_entries(m)
                write_imatrix(m, os.path.join(d, "imatrix.gguf"))
            variants = [("", [])] + ([("/pure", ["--pure"])] if m["name"] in PURE else [])
            variants += [("/" + k, [os.path.join(d, "imatrix.gguf") if a == "IMATRIX" else a for a in v])
                         for k, v in m["options"].items()]
            for ft in FTYPES:
                for suffix, opts in variants:
                    r = plan(lq, path, ft, opts)
                    key = ft + suffix
                    if r is None:
                        m["plans"][key] = None
                        continue
                    names, types, needs_imatrix, fallbacks = r
                    m["requires_imatrix"][key] = needs_imatrix
                    m["fallbacks"][key] = fallbacks
                    if m["order"] is None:
                        m["order"] = names
                    assert names == m["order"], (m["name"], key)
                    m["plans"][key] = " ".join(types)
            out = os.path.join(d, "copy.gguf")
            m["copy_file_type"] = {"": copy_file_type(lq, path, out, [])}
            m["copy_options"] = COPY_OPTIONS.get(m["name"], {})
            for k, v in m["copy_options"].items():
                m["copy_file_type"][k] = copy_file_type(lq, path, out, v)
            if m["name"] in SPLITS:
                m["split"] = split_plans(lq, path, d, m)
            os.remove(path)
            result["models"].append(m)
            print(m["name"], sum(v is not None for v in m["plans"].values()), "plans", file=sys.stderr)
    with open(out_path, "w") as f:
        json.dump(result, f, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
