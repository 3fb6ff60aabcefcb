// llama_run: what llama.cpp (libllama of the llama.cpp that scripts/build-llama.sh builds) computes
// from a model file, as lines a test can parse: whether it loads, the logits after a fixed prompt,
// and the tokens of a greedy generation. Built by scripts/build-harness.sh against the cached
// libllama. The oracle of tests/tests/interop/llama_run.rs: the original model's output, compared
// with that of the files gguf-serde writes from it; with --logits-out, of
// tests/tests/interop/convert_runs.rs, whose float logits are compared with tests/py/hf_forward.py's.
//
// Usage:
//   llama_run [--threads N] [--n-ctx N] [--gen N] [--top K] [--logits-out FILE] [--lora FILE]
//             MODEL TOKEN...
//     MODEL      a .gguf file; for a split model its first shard (<name>-00001-of-0000N.gguf),
//                from which libllama finds the others
//     TOKEN...   the prompt, token ids in decimal (at least one, each below the vocabulary size)
//     --threads  CPU threads for every decode (default 2)
//     --n-ctx    context size in tokens (default 64); prompt + generated tokens must fit
//     --gen      greedy-generated tokens (default 8)
//     --top      how many of the largest logits to print (default 5)
//     --logits-out
//                write the float logits to FILE, and compute them as exactly as libllama allows:
//                F32 K and V caches (type_k, type_v; the default is F16), flash attention off (its
//                CPU kernel rounds Q to the cache's type), logits for every prompt position (each
//                one's output flag set in the batch). FILE gets raw little-endian f32, n_vocab per
//                row, n_prompt + gen rows: the prompt positions' logits after step 0, then the
//                last position's after each step 1..gen, i.e. row r holds the logits after the
//                token at position r of prompt + generated (what a forward pass of those ids
//                gives at every position). The lines on stdout are the same as without it.
//     --lora     a LoRA adapter GGUF to apply to MODEL at scale 1 (llama_adapter_lora_init, then
//                llama_set_adapters_lora on the context): the logits are those of the model with
//                the adapter, as `llama-cli --lora FILE` computes them
// CPU only (no GPU layers), mmap as libllama's default, one sequence, and the same settings on
// every run, so that the same tensor data gives bit-identical logits.
//
// Output, one record per line, fields separated by one space:
//   n_vocab <n>
//   logits <step> <fnv1a64> <argmax>
//                   one line per decode: step 0 after the whole prompt (the last position's
//                   logits), step i after the i-th generated token; <fnv1a64> is the 64-bit FNV-1a
//                   hash (16 lower-case hex digits) of the n_vocab little-endian f32 logits as bytes,
//                   so equal hashes mean bit-identical logits; <argmax> the token chosen next
//   top <id>:<bits> ...
//                   the --top largest logits of step 0, largest first (ties: lower id first), each
//                   with the hexadecimal bit pattern of its f32 value (0x%08x, exact)
//   generated <id> ...
//                   the greedy tokens in order: each the argmax of the logits before it (the lowest
//                   id among equal maxima); end-of-generation tokens do not stop the run
// Exit status 0; 1 if the model (or the adapter) does not load (libllama's error messages on stderr, then
// "llama_run: load failed: MODEL" last), 2 for bad arguments, 3 if a context or a decode fails.
// libllama's log lines of level WARN and ERROR go to stderr; INFO and DEBUG are dropped.

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"
#include "llama_log.h"

static int usage(const char *why) {
  fprintf(stderr,
          "llama_run: %s\nusage: llama_run [--threads N] [--n-ctx N] [--gen N] [--top K] [--logits-out FILE] [--lora FILE] MODEL "
          "TOKEN...\n",
          why);
  return 2;
}

// A non-negative decimal integer below `limit`, or -1.
static long parse_count(const char *s, long limit) {
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 0 || v >= limit) {
    return -1;
  }
  return v;
}

static uint64_t fnv1a64(const float *v, int32_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int32_t i = 0; i < n; i++) {
    uint32_t bits;
    memcpy(&bits, &v[i], sizeof bits);
    for (int b = 0; b < 4; b++) {  // little-endian byte order, whatever the host's
      h ^= (bits >> (8 * b)) & 0xffu;
      h *= 0x100000001b3ULL;
    }
  }
  return h;
}

// The index of the largest value, the lowest one among equal maxima (NaN never wins).
static int32_t argmax(const float *v, int32_t n) {
  int32_t best = 0;
  for (int32_t i = 1; i < n; i++) {
    if (v[i] > v[best]) {
      best = i;
    }
  }
  return best;
}

static uint32_t bits_of(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

// Prints the k largest of v, largest first, lower id first among equals (k is small: selection).
static void print_top(const float *v, int32_t n, int k) {
  int32_t chosen[64];
  if (k > 64) {
    k = 64;
  }
  if (k > n) {
    k = n;
  }
  printf("top");
  for (int j = 0; j < k; j++) {
    int32_t best = -1;
    for (int32_t i = 0; i < n; i++) {
      int taken = 0;
      for (int c = 0; c < j; c++) {
        taken |= chosen[c] == i;
      }
      if (!taken && (best < 0 || v[i] > v[best])) {
        best = i;
      }
    }
    chosen[j] = best;
    printf(" %d:0x%08x", best, bits_of(v[best]));
  }
  printf("\n");
}

int main(int argc, char **argv) {
  long threads = 2, n_ctx = 64, n_gen = 8, top = 5;
  const char *logits_out = NULL;
  const char *lora_path = NULL;
  int i = 1;
  for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
    if (i + 1 >= argc) {
      return usage("an option without its value");
    }
    if (strcmp(argv[i], "--logits-out") == 0) {
      logits_out = argv[i + 1];
      continue;
    }
    if (strcmp(argv[i], "--lora") == 0) {
      lora_path = argv[i + 1];
      continue;
    }
    long *slot = strcmp(argv[i], "--threads") == 0 ? &threads
                 : strcmp(argv[i], "--n-ctx") == 0 ? &n_ctx
                 : strcmp(argv[i], "--gen") == 0   ? &n_gen
                 : strcmp(argv[i], "--top") == 0   ? &top
                                                   : NULL;
    if (slot == NULL) {
      return usage("unknown option");
    }
    *slot = parse_count(argv[i + 1], 1L << 20);
    if (*slot < 0) {
      return usage("an option's value is not a count");
    }
  }
  if (threads < 1 || n_ctx < 1) {
    return usage("--threads and --n-ctx must be at least 1");
  }
  if (argc - i < 2) {
    return usage("no model or no prompt");
  }
  const char *path = argv[i++];
  int32_t n_prompt = argc - i;
  if (n_prompt + n_gen > n_ctx) {
    return usage("prompt and generated tokens do not fit in --n-ctx");
  }
  llama_token *tokens = calloc((size_t)(n_prompt + n_gen), sizeof *tokens);
  if (tokens == NULL) {
    return 3;
  }
  for (int32_t t = 0; t < n_prompt; t++) {
    long id = parse_count(argv[i + t], INT32_MAX);
    if (id < 0) {
      return usage("a token id is not a non-negative integer");
    }
    tokens[t] = (llama_token)id;
  }

  llama_log_set(on_log, NULL);
  llama_backend_init();

  struct llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  struct llama_model *model = llama_model_load_from_file(path, mp);
  if (model == NULL) {
    fprintf(stderr, "llama_run: load failed: %s\n", path);
    llama_backend_free();
    return 1;
  }
  const struct llama_vocab *vocab = llama_model_get_vocab(model);
  int32_t n_vocab = llama_vocab_n_tokens(vocab);
  for (int32_t t = 0; t < n_prompt; t++) {
    if (tokens[t] >= n_vocab) {
      fprintf(stderr, "llama_run: token %d is not below the vocabulary size %d\n", tokens[t], n_vocab);
      return 2;
    }
  }

  struct llama_context_params cp = llama_context_default_params();
  cp.n_ctx = (uint32_t)n_ctx;
  cp.n_batch = (uint32_t)n_ctx;
  cp.n_ubatch = (uint32_t)n_ctx;
  cp.n_seq_max = 1;
  cp.n_threads = (int32_t)threads;
  cp.n_threads_batch = (int32_t)threads;
  cp.no_perf = true;
  if (logits_out != NULL) {
    cp.type_k = GGML_TYPE_F32;
    cp.type_v = GGML_TYPE_F32;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  }
  struct llama_context *ctx = llama_init_from_model(model, cp);
  if (ctx == NULL) {
    fprintf(stderr, "llama_run: no context for %s\n", path);
    return 3;
  }
  if (lora_path != NULL) {
    struct llama_adapter_lora *adapter = llama_adapter_lora_init(model, lora_path);
    if (adapter == NULL) {
      fprintf(stderr, "llama_run: load failed: %s\n", lora_path);
      return 1;
    }
    float scale = 1.0f;
    if (llama_set_adapters_lora(ctx, &adapter, 1, &scale) != 0) {
      fprintf(stderr, "llama_run: cannot apply the adapter %s\n", lora_path);
      return 3;
    }
  }
  printf("n_vocab %d\n", n_vocab);

  FILE *dump = NULL;
  if (logits_out != NULL) {
    dump = fopen(logits_out, "wb");
    if (dump == NULL) {
      fprintf(stderr, "llama_run: cannot write %s: %s\n", logits_out, strerror(errno));
      return 3;
    }
  }
  // With --logits-out the prompt goes in a batch of its own that asks for every position's
  // logits (llama_batch_get_one asks for the last one's only).
  struct llama_batch all = llama_batch_init(n_prompt, 0, 1);
  all.n_tokens = n_prompt;
  for (int32_t t = 0; t < n_prompt; t++) {
    all.token[t] = tokens[t];
    all.pos[t] = t;
    all.n_seq_id[t] = 1;
    all.seq_id[t][0] = 0;
    all.logits[t] = 1;
  }

  // Step 0 decodes the prompt; step s > 0 decodes the token chosen at step s - 1.
  struct llama_batch batch = dump != NULL ? all : llama_batch_get_one(tokens, n_prompt);
  for (long step = 0; step <= n_gen; step++) {
    int32_t rc = llama_decode(ctx, batch);
    if (rc != 0) {
      fprintf(stderr, "llama_run: llama_decode failed (%d) at step %ld\n", rc, step);
      return 3;
    }
    if (dump != NULL) {
      for (int32_t r = step == 0 ? 0 : n_prompt - 1; r < n_prompt; r++) {
        const float *row = llama_get_logits_ith(ctx, step == 0 ? r : -1);
        if (row == NULL || fwrite(row, sizeof *row, (size_t)n_vocab, dump) != (size_t)n_vocab) {
          fprintf(stderr, "llama_run: no logits for row %d at step %ld, or a write failed\n", r, step);
          return 3;
        }
      }
    }
    const float *logits = llama_get_logits_ith(ctx, -1);
    if (logits == NULL) {
      fprintf(stderr, "llama_run: no logits at step %ld\n", step);
      return 3;
    }
    int32_t next = argmax(logits, n_vocab);
    printf("logits %ld %016llx %d\n", step, (unsigned long long)fnv1a64(logits, n_vocab), next);
    if (step == 0) {
      print_top(logits, n_vocab, (int)top);
    }
    if (step == n_gen) {
      break;
    }
    tokens[n_prompt + step] = next;
    batch = llama_batch_get_one(&tokens[n_prompt + step], 1);
  }
  printf("generated");
  for (long g = 0; g < n_gen; g++) {
    printf(" %d", tokens[n_prompt + g]);
  }
  printf("\n");
  if (dump != NULL && fclose(dump) != 0) {
    fprintf(stderr, "llama_run: writing %s failed\n", logits_out);
    return 3;
  }

  llama_batch_free(all);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  free(tokens);
  return fflush(stdout) == 0 ? 0 : 3;
}
