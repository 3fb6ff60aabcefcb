// llama_tokenize: the token ids libllama (of the llama.cpp that scripts/build-llama.sh builds) gives
// for many texts with one load of a vocabulary, as lines a test can parse. Built by
// scripts/build-harness.sh against the cached libllama. The oracle of the test-vector checks of
// tests/tests/interop/vocab.rs: what `llama-tokenize --ids --no-bos --no-parse-special` prints
// for each text, which is what llama.cpp's tests/test-tokenizer-0 compares with the `.out` files:
// `llama_tokenize(vocab, text, len, ..., add_special = false, parse_special = false)` on a model
// loaded with `vocab_only` (as both tools load it), one process for all the texts instead of one
// per text (each load of a 150,000-token vocabulary costs about a second).
//
// Usage:
//   llama_tokenize MODEL TEXTS
//     MODEL  a .gguf file (a vocabulary-only file is enough)
//     TEXTS  a file of texts, each as its length in bytes in decimal, a newline, then exactly
//            that many bytes (any bytes: newlines, NULs) and a newline
//
// Output: one line per text, in order: its token ids in decimal separated by one space (an empty
// line for no tokens).
// Exit status 0; 1 if the model does not load (libllama's error messages on stderr), 2 for bad
// arguments or a malformed TEXTS file (the byte offset on stderr), 3 if a tokenization fails.
// libllama's log lines of level WARN and ERROR go to stderr; INFO and DEBUG are dropped.

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"
#include "llama_log.h"

// The whole of `path` (NUL-terminated past `*len`), or NULL.
static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  while (buf != NULL) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) {
      break;
    }
    cap *= 2;
    char *bigger = realloc(buf, cap + 1);
    if (bigger == NULL) {
      free(buf);
    }
    buf = bigger;
  }
  int failed = ferror(f);
  fclose(f);
  if (buf == NULL || failed) {
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "llama_tokenize: usage: llama_tokenize MODEL TEXTS\n");
    return 2;
  }
  size_t len = 0;
  char *texts = read_all(argv[2], &len);
  if (texts == NULL) {
    fprintf(stderr, "llama_tokenize: cannot read %s: %s\n", argv[2], strerror(errno));
    return 2;
  }
  llama_log_set(on_log, NULL);
  llama_backend_init();
  struct llama_model_params mp = llama_model_default_params();
  mp.vocab_only = true;
  struct llama_model *model = llama_model_load_from_file(argv[1], mp);
  if (model == NULL) {
    fprintf(stderr, "llama_tokenize: load failed: %s\n", argv[1]);
    return 1;
  }
  const struct llama_vocab *vocab = llama_model_get_vocab(model);
  int status = 0;
  llama_token *ids = NULL;
  size_t pos = 0;
  while (pos < len) {
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(texts + pos, &end, 10);
    if (errno != 0 || end == texts + pos || *end != '\n' || n > len - (size_t)(end + 1 - texts) ||
        (size_t)(end + 1 - texts) + n >= len || end[1 + n] != '\n' || n > INT32_MAX) {
      fprintf(stderr, "llama_tokenize: %s: malformed text record at byte %zu\n", argv[2], pos);
      status = 2;
      break;
    }
    const char *text = end + 1;
    // As common_tokenize: room for one token per byte, then exactly what a negative result asks.
    size_t cap = n > 0 ? n : 1;
    int32_t got = -1;
    for (int attempt = 0; attempt < 2 && got < 0; attempt++) {
      llama_token *grown = realloc(ids, cap * sizeof *ids);
      if (grown == NULL) {
        fprintf(stderr, "llama_tokenize: out of memory for %zu tokens\n", cap);
        break;
      }
      ids = grown;
      got = llama_tokenize(vocab, text, (int32_t)n, ids, (int32_t)cap, false, false);
      if (got < 0 && got != INT32_MIN) {
        cap = (size_t)(-(int64_t)got);
      }
    }
    if (got < 0) {
      fprintf(stderr, "llama_tokenize: the text at byte %zu failed to tokenize (%d)\n", pos, got);
      status = 3;
      break;
    }
    for (int32_t i = 0; i < got; i++) {
      printf(i == 0 ? "%d" : " %d", ids[i]);
    }
    putchar('\n');
    pos = (size_t)(text - texts) + n + 1;
  }
  free(ids);
  free(texts);
  llama_model_free(model);
  llama_backend_free();
  if (fflush(stdout) != 0 && status == 0) {
    status = 3;
  }
  return status;
}
