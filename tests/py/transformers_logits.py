"""transformers' own logits on a checkpoint, summarised for tests/data/convert-refs.json.

Usage: python transformers_logits.py DIR N_GEN TOKEN...

NEEDS TORCH (scripts/make-convert-refs.sh runs it with .venv-ref); not run by CI. Loads the
checkpoint in DIR with `AutoModelForCausalLM.from_pretrained` in float32 on the CPU (eager
attention: the path transformers defines each architecture by, soft-capping included), generates
N_GEN tokens greedily after the prompt TOKEN... (each the argmax of the logits before it, lowest
id on a tie), then runs one forward pass over prompt + generated and prints, as JSON:

  {"prompt": [ids], "generated": [ids], "n_vocab": V,
   "rows": [{"top_ids": [32 ids, largest logit first, ties lower id first],
             "top_values": [their logits],
             "probe_ids": [32 ids evenly spaced: i * V // 32], "probe_values": [their logits],
             "sum": sum of the row's V logits (float64), "l2": its Euclidean norm (float64),
             "gap": the largest logit minus the second largest}]}

one row per position of prompt + generated: row r holds the logits after the token at position r,
as the `llama_run` harness's `--logits-out` rows. Logits are float32 widened to float64 (exact).
"""
import json
import sys

TOP = 32


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: transformers_logits.py DIR N_GEN TOKEN...")
    d, n_gen, prompt = sys.argv[1], int(sys.argv[2]), [int(t) for t in sys.argv[3:]]
    import numpy as np
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(d, dtype=torch.float32, attn_implementation="eager")
    model.eval()

    def logits(ids):
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids], dtype=torch.long), use_cache=False)
        return out.logits[0].to(torch.float32).numpy()

    ids = list(prompt)
    for _ in range(n_gen):
        last = logits(ids)[-1]
        ids.append(int(np.argmax(last)))  # first maximum: the lowest id on a tie
    rows = logits(ids)
    v = rows.shape[1]
    probe = [i * v // TOP for i in range(TOP)]
    out_rows = []
    for row in rows:
        order = np.lexsort((np.arange(v), -row.astype(np.float64)))[:TOP]
        r64 = row.astype(np.float64)
        out_rows.append({
            "top_ids": [int(i) for i in order],
            "top_values": [float(row[i]) for i in order],
            "probe_ids": probe,
            "probe_values": [float(row[i]) for i in probe],
            "sum": float(r64.sum()),
            "l2": float(np.sqrt((r64 * r64).sum())),
            "gap": float(row[order[0]]) - float(row[order[1]]),
        })
    json.dump({"prompt": prompt, "generated": ids[len(prompt):], "n_vocab": int(v), "rows": out_rows},
              sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
