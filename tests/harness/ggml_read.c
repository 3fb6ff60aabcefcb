// ggml_read: what ggml's own GGUF reader (`gguf_init_from_file`, ggml/src/gguf.cpp of the llama.cpp
// that scripts/build-llama.sh builds) sees in a file, as lines a test can parse and compare with
// gguf-serde's reader. Built by scripts/build-harness.sh against the cached libggml-base.
//
// Usage:
//   ggml_read FILE                     dump (below); exit 0, or 1 if ggml refuses the file (ggml's
//                                      own message is on stderr, and "ggml_read: refused" last)
//   ggml_read --bench-tokens FILE N    N times: gguf_init_from_file with no_alloc = true, then every
//                                      string of tokenizer.ggml.tokens through gguf_get_arr_str,
//                                      summing their lengths (strlen), then gguf_free; after one
//                                      untimed warm-up, prints one line:
//                                      "ggml median <ms> ms min <ms> ms peak RSS <MiB> MiB tokens
//                                      <n> bytes <sum> cpu median <ms> ms" (peak RSS: VmHWM of
//                                      the process; cpu: the median of the process's CPU time,
//                                      user and system, per iteration, CLOCK_PROCESS_CPUTIME_ID)
//
// Dump format: one record per line, fields separated by one space, in this order:
//   version <u32>
//   alignment <u64>
//   data_offset <u64>                  absolute byte offset of the tensor data section
//                                      (gguf_get_data_offset: padded to the alignment only if
//                                      the file has tensors; else the end of the metadata)
//   n_kv <i64>
//   n_tensors <i64>
//   kv <key> <type> <value>            one per key, in file order; <type> is ggml's gguf_type_name:
//                                      u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str
//   kv <key> arr <elem type> <count> <hash>
//                                      an array (ggml refuses arrays of arrays)
//   tensor <name> <ggml type> <n_dims> <ne> <offset> <size> <hash>
//                                      one per tensor, in file order; <ggml type> is ggml_type_name
//                                      (f32 f16 q4_0 ... q4_K q6_K bf16 ...); <ne> is ne[0],...,
//                                      ne[n_dims-1] comma-separated, fastest-varying first as stored;
//                                      <offset> is relative to data_offset; <size> is ggml_nbytes
// Values:
//   integers in decimal; bool as true/false (ggml reads any non-zero byte as true); f32 and f64 as
//   the hexadecimal bit pattern of the value, 0x%08x and 0x%016llx (exact, NaN payloads included);
//   str as the escaped bytes (below).
// Escaping (keys, tensor names, string values): bytes 0x21..0x7e other than '\' and '"' are
//   written as they are, '\' as "\\", every other byte as "\xNN" (two lower-case hex digits); so
//   no field holds a space, and the empty string is written as "" (two double quotes, which no
//   non-empty string gives since '"' is always "\x22").
//   ggml keeps strings NUL-terminated and has no length accessor, so a string is seen up to its
//   first NUL byte.
// Hashes: "fnv1a64:%016llx", FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3) over
//   - numeric and bool arrays: the elements as little-endian bytes, count * element size (bool:
//     one byte, 0 or 1);
//   - string arrays: for each element its length as a little-endian u64, then its bytes, i.e. the
//     GGUF encoding of the elements (for strings without NUL);
//   - tensors: the <size> bytes of the tensor's data (read with no_alloc = false).
// n_dims: ggml does not keep the stored dimension count; <n_dims> is ggml_n_dims, the count without
//   trailing dimensions of 1 (at least 1), so a tensor stored as [640, 1] is written "1 640".
//
// Runs on little-endian hosts only (as ggml; the bytes hashed are host order).
#include "ggml.h"
#include "gguf.h"
#include "gguf_scalar_size.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FNV_BASIS 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= FNV_PRIME;
    }
    return h;
}

static void put_escaped(const char *s) {
    if (*s == '\0') {
        fputs("\"\"", stdout);
        return;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\\') {
            fputs("\\\\", stdout);
        } else if (*p >= 0x21 && *p <= 0x7e && *p != '"') {
            putchar(*p);
        } else {
            printf("\\x%02x", *p);
        }
    }
}

static void put_scalar(const struct gguf_context *ctx, int64_t id, enum gguf_type t) {
    switch (t) {
        case GGUF_TYPE_UINT8: printf("%u", (unsigned)gguf_get_val_u8(ctx, id)); break;
        case GGUF_TYPE_INT8: printf("%d", (int)gguf_get_val_i8(ctx, id)); break;
        case GGUF_TYPE_UINT16: printf("%u", (unsigned)gguf_get_val_u16(ctx, id)); break;
        case GGUF_TYPE_INT16: printf("%d", (int)gguf_get_val_i16(ctx, id)); break;
        case GGUF_TYPE_UINT32: printf("%" PRIu32, gguf_get_val_u32(ctx, id)); break;
        case GGUF_TYPE_INT32: printf("%" PRId32, gguf_get_val_i32(ctx, id)); break;
        case GGUF_TYPE_UINT64: printf("%" PRIu64, gguf_get_val_u64(ctx, id)); break;
        case GGUF_TYPE_INT64: printf("%" PRId64, gguf_get_val_i64(ctx, id)); break;
        case GGUF_TYPE_BOOL: fputs(gguf_get_val_bool(ctx, id) ? "true" : "false", stdout); break;
        case GGUF_TYPE_FLOAT32: case GGUF_TYPE_FLOAT64: {
            // The bit pattern, as stored (ggml keeps the bytes it read).
            uint64_t bits = 0;
            memcpy(&bits, gguf_get_val_data(ctx, id), scalar_size(t));
            printf(t == GGUF_TYPE_FLOAT32 ? "0x%08" PRIx64 : "0x%016" PRIx64, bits);
            break;
        }
        case GGUF_TYPE_STRING: put_escaped(gguf_get_val_str(ctx, id)); break;
        default: printf("?%d", (int)t); break;
    }
}

static void put_array(const struct gguf_context *ctx, int64_t id) {
    enum gguf_type et = gguf_get_arr_type(ctx, id);
    size_t n = gguf_get_arr_n(ctx, id);
    uint64_t h = FNV_BASIS;
    if (et == GGUF_TYPE_STRING) {
        for (size_t i = 0; i < n; i++) {
            const char *s = gguf_get_arr_str(ctx, id, i);
            uint64_t len = strlen(s);
            h = fnv1a(h, &len, sizeof len);
            h = fnv1a(h, s, len);
        }
    } else if (n > 0) {
        h = fnv1a(h, gguf_get_arr_data(ctx, id), n * scalar_size(et));
    }
    printf("arr %s %zu fnv1a64:%016" PRIx64, gguf_type_name(et), n, h);
}

static int dump(const char *path) {
    struct ggml_context *gctx = NULL;
    struct gguf_init_params params = { .no_alloc = false, .ctx = &gctx };
    struct gguf_context *ctx = gguf_init_from_file(path, params);
    if (!ctx) {
        fprintf(stderr, "ggml_read: refused\n");
        return 1;
    }
    printf("version %" PRIu32 "\n", gguf_get_version(ctx));
    printf("alignment %zu\n", gguf_get_alignment(ctx));
    printf("data_offset %zu\n", gguf_get_data_offset(ctx));
    int64_t n_kv = gguf_get_n_kv(ctx);
    int64_t n_tensors = gguf_get_n_tensors(ctx);
    printf("n_kv %" PRId64 "\n", n_kv);
    printf("n_tensors %" PRId64 "\n", n_tensors);
    for (int64_t i = 0; i < n_kv; i++) {
        enum gguf_type t = gguf_get_kv_type(ctx, i);
        fputs("kv ", stdout);
        put_escaped(gguf_get_key(ctx, i));
        putchar(' ');
        if (t == GGUF_TYPE_ARRAY) {
            put_array(ctx, i);
        } else {
            printf("%s ", gguf_type_name(t));
            put_scalar(ctx, i, t);
        }
        putchar('\n');
    }
    for (int64_t i = 0; i < n_tensors; i++) {
        const char *name = gguf_get_tensor_name(ctx, i);
        struct ggml_tensor *t = ggml_get_tensor(gctx, name);
        if (!t) {
            fprintf(stderr, "ggml_read: tensor %s missing from the ggml context\n", name);
            return 1;
        }
        int nd = ggml_n_dims(t);
        size_t size = gguf_get_tensor_size(ctx, i);
        fputs("tensor ", stdout);
        put_escaped(name);
        printf(" %s %d ", ggml_type_name(gguf_get_tensor_type(ctx, i)), nd);
        const int64_t *ne = gguf_get_tensor_ne(ctx, i);
        for (int d = 0; d < nd; d++) {
            printf(d ? ",%" PRId64 : "%" PRId64, ne[d]);
        }
        printf(" %zu %zu fnv1a64:%016" PRIx64 "\n", gguf_get_tensor_offset(ctx, i), size,
               fnv1a(FNV_BASIS, t->data, size));
    }
    gguf_free(ctx);
    ggml_free(gctx);
    return 0;
}

static double clock_ms(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double now_ms(void) {
    return clock_ms(CLOCK_MONOTONIC);
}

// CPU time of the process (user and system), which other processes on the machine do not add to.
static double cpu_ms(void) {
    return clock_ms(CLOCK_PROCESS_CPUTIME_ID);
}

// The process's peak resident set (VmHWM) in KiB, 0 if /proc does not say.
static long peak_rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kib = strtol(line + 6, NULL, 10);
        }
    }
    if (f) {
        fclose(f);
    }
    return kib;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// One iteration: open without tensor data, walk every token string. Returns the summed length, or
// -1 if the file is refused or has no string array tokenizer.ggml.tokens.
static long long walk_tokens(const char *path, size_t *count) {
    struct gguf_init_params params = { .no_alloc = true, .ctx = NULL };
    struct gguf_context *ctx = gguf_init_from_file(path, params);
    if (!ctx) {
        return -1;
    }
    long long bytes = -1;
    int64_t id = gguf_find_key(ctx, "tokenizer.ggml.tokens");
    if (id >= 0 && gguf_get_kv_type(ctx, id) == GGUF_TYPE_ARRAY &&
        gguf_get_arr_type(ctx, id) == GGUF_TYPE_STRING) {
        size_t n = gguf_get_arr_n(ctx, id);
        bytes = 0;
        for (size_t i = 0; i < n; i++) {
            bytes += (long long)strlen(gguf_get_arr_str(ctx, id, i));
        }
        *count = n;
    }
    gguf_free(ctx);
    return bytes;
}

static int bench_tokens(const char *path, int n) {
    size_t count = 0;
    long long check = walk_tokens(path, &count);  // warm-up
    if (check < 0) {
        fprintf(stderr, "ggml_read: %s refused or without a string array tokenizer.ggml.tokens\n", path);
        return 1;
    }
    double *ms = malloc(sizeof(double) * (size_t)n);
    double *cpu = malloc(sizeof(double) * (size_t)n);
    if (!ms || !cpu) {
        return 1;
    }
    for (int i = 0; i < n; i++) {
        double t0 = now_ms(), c0 = cpu_ms();
        long long got = walk_tokens(path, &count);
        ms[i] = now_ms() - t0;
        cpu[i] = cpu_ms() - c0;
        if (got != check) {
            fprintf(stderr, "ggml_read: iteration %d saw %lld bytes, not %lld\n", i, got, check);
            return 1;
        }
    }
    qsort(ms, (size_t)n, sizeof(double), cmp_double);
    qsort(cpu, (size_t)n, sizeof(double), cmp_double);
    printf("ggml median %.2f ms min %.2f ms peak RSS %.1f MiB tokens %zu bytes %lld cpu median %.2f ms\n", ms[n / 2],
           ms[0], peak_rss_kib() / 1024.0, count, check, cpu[n / 2]);
    free(ms);
    free(cpu);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--bench-tokens") != 0) {
        return dump(argv[1]);
    }
    if (argc == 4 && strcmp(argv[1], "--bench-tokens") == 0) {
        int n = atoi(argv[3]);
        if (n > 0) {
            return bench_tokens(argv[2], n);
        }
    }
    fprintf(stderr, "usage: ggml_read FILE | ggml_read --bench-tokens FILE N\n");
    return 2;
}
