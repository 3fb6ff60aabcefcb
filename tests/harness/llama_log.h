// The log callback of the harnesses that link libllama (llama_run.c, llama_tokenize.c): libllama's
// log lines of level WARN and ERROR (and their continuation lines) go to stderr; INFO and DEBUG are
// dropped. Install with `llama_log_set(on_log, NULL)`.
#ifndef GGUF_HARNESS_LLAMA_LOG_H
#define GGUF_HARNESS_LLAMA_LOG_H

#include <stdio.h>

#include "llama.h"

static enum ggml_log_level last_level = GGML_LOG_LEVEL_NONE;

static void on_log(enum ggml_log_level level, const char *text, void *user) {
  (void)user;
  if (level != GGML_LOG_LEVEL_CONT) {
    last_level = level;
  }
  if (last_level == GGML_LOG_LEVEL_WARN || last_level == GGML_LOG_LEVEL_ERROR) {
    fputs(text, stderr);
  }
}

#endif
