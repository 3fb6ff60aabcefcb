// What ggml's own GGUF reader sees in a buffer, for the `differential` fuzz target (see
// fuzz/README.md): `ggml_diff_parse` runs `gguf_init_from_buffer` (ggml/src/gguf.cpp of the
// llama.cpp build in GGUF_LLAMA_CPP_DIR) with the tensor data loaded (`no_alloc = false` and a
// ggml context, as `gguf_init_from_file` loads it for a tool that reads the data) and describes
// the result in a little-endian record that `src/differential.rs` decodes:
//
//   u32 version | u64 alignment | u64 data_offset | u64 n_kv | u64 n_tensors
//   per pair:   str key | i32 type
//               scalar: the value (numbers: their bytes as stored, 1/2/4/8 bytes; bool: one byte,
//                       0 or 1 as ggml normalizes it; string: str)
//               array:  i32 element type | u64 count | the elements as above
//   per tensor: str name | i32 ggml type | i64 ne[4] (fastest first, 1 past the stored dims) |
//               u64 offset (relative to the data section) | u64 size (ggml_nbytes) |
//               u64 FNV-1a 64 of the tensor's loaded data
//   str:        u32 length | bytes. ggml's C API hands strings out NUL-terminated with no length,
//               so a string is seen up to its first NUL byte.
//
// ggml stops the process on some inputs (GGML_ABORT, GGML_ASSERT): `ggml_diff_worker_init`
// installs an abort callback that reports the message to the parent and ends the worker process
// (the fuzz target runs this code in a child process of its own, never in the fuzzer).
#include "ggml.h"
#include "gguf.h"
#include "../../tests/harness/gguf_scalar_size.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct buf {
    uint8_t *data;
    size_t len, cap;
    int failed;
};

static void put(struct buf *b, const void *p, size_t n) {
    if (b->failed) {
        return;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) {
            cap *= 2;
        }
        uint8_t *d = realloc(b->data, cap);
        if (!d) {
            b->failed = 1;
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void put_u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void put_i32(struct buf *b, int32_t v) { put(b, &v, 4); }
static void put_i64(struct buf *b, int64_t v) { put(b, &v, 8); }

static void put_str(struct buf *b, const char *s) {
    size_t n = strlen(s);
    put_u32(b, (uint32_t)n);
    put(b, s, n);
}

static uint64_t fnv1a(const void *data, size_t n) {
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static void describe(struct buf *b, const struct gguf_context *ctx, struct ggml_context *gctx) {
    put_u32(b, gguf_get_version(ctx));
    put_u64(b, gguf_get_alignment(ctx));
    put_u64(b, gguf_get_data_offset(ctx));
    int64_t n_kv = gguf_get_n_kv(ctx), n_tensors = gguf_get_n_tensors(ctx);
    put_u64(b, (uint64_t)n_kv);
    put_u64(b, (uint64_t)n_tensors);
    for (int64_t i = 0; i < n_kv; i++) {
        enum gguf_type t = gguf_get_kv_type(ctx, i);
        put_str(b, gguf_get_key(ctx, i));
        put_i32(b, (int32_t)t);
        if (t == GGUF_TYPE_ARRAY) {
            enum gguf_type et = gguf_get_arr_type(ctx, i);
            size_t n = gguf_get_arr_n(ctx, i);
            put_i32(b, (int32_t)et);
            put_u64(b, n);
            if (et == GGUF_TYPE_STRING) {
                for (size_t j = 0; j < n; j++) {
                    put_str(b, gguf_get_arr_str(ctx, i, j));
                }
            } else if (n > 0) {
                put(b, gguf_get_arr_data(ctx, i), n * scalar_size(et));
            }
        } else if (t == GGUF_TYPE_STRING) {
            put_str(b, gguf_get_val_str(ctx, i));
        } else {
            put(b, gguf_get_val_data(ctx, i), scalar_size(t));
        }
    }
    for (int64_t i = 0; i < n_tensors; i++) {
        const char *name = gguf_get_tensor_name(ctx, i);
        size_t size = gguf_get_tensor_size(ctx, i);
        put_str(b, name);
        put_i32(b, (int32_t)gguf_get_tensor_type(ctx, i));
        const int64_t *ne = gguf_get_tensor_ne(ctx, i);
        for (int d = 0; d < GGML_MAX_DIMS; d++) {
            put_i64(b, ne[d]);
        }
        put_u64(b, gguf_get_tensor_offset(ctx, i));
        put_u64(b, size);
        // The data ggml loaded: the blob starts at the first tensor (offset 0).
        struct ggml_tensor *first = ggml_get_first_tensor(gctx);
        const uint8_t *blob = first ? (const uint8_t *)first->data : NULL;
        put_u64(b, blob && size ? fnv1a(blob + gguf_get_tensor_offset(ctx, i), size) : fnv1a(NULL, 0));
    }
}

// Parses `data` with ggml. Returns 1 and sets *out/*out_len (malloc'ed, freed with free) to the
// record above if ggml accepts it, 0 if ggml refuses it, -1 if the record could not be allocated.
int ggml_diff_parse(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len) {
    struct ggml_context *gctx = NULL;
    struct gguf_init_params params = { .no_alloc = false, .ctx = &gctx };
    struct gguf_context *ctx = gguf_init_from_buffer(data, len, params);
    if (!ctx) {
        return 0;
    }
    struct buf b = { 0 };
    describe(&b, ctx, gctx);
    gguf_free(ctx);
    ggml_free(gctx);
    if (b.failed) {
        free(b.data);
        return -1;
    }
    *out = b.data;
    *out_len = b.len;
    return 1;
}

static void quiet_log(enum ggml_log_level level, const char *text, void *user_data) {
    (void)level;
    (void)text;
    (void)user_data;
}

// The worker's answer when ggml aborts: the byte 2, u32 length, the message; written straight to
// fd 1 (the parent's pipe), then the worker ends without running ggml's abort().
static void on_abort(const char *message) {
    uint8_t status = 2;
    uint32_t n = (uint32_t)strlen(message);
    if (write(1, &status, 1) == 1 && write(1, &n, 4) == 4) {
        ssize_t w = write(1, message, n);
        (void)w;
    }
    _exit(0);
}

// Silences ggml's log (its refusals are logged as errors) and installs the abort callback.
void ggml_diff_worker_init(void) {
    ggml_log_set(quiet_log, NULL);
    ggml_set_abort_callback(on_abort);
}
