// codec_vectors: writes the codec reference vectors of gguf-serde/tests/data/codec/ (see its
// README for what every file holds) by calling ggml's own quantizers and dequantizers, from the
// libggml-base of the llama.cpp build of scripts/build-llama.sh. Built and run by
// scripts/codec-vectors.sh, which compares the output with the committed files.
//
// Usage:
//   codec_vectors [--no-exhaustive] OUT_DIR
//       writes every vector file into OUT_DIR (which must exist), and exhaustive.txt: the FNV-1a 64
//       hashes of ggml's f16/bf16 conversions over every f16 and every f32 bit pattern (8.6
//       billion conversions, about 45 s of one core), one "name hash" line each; with
//       --no-exhaustive, not exhaustive.txt
//
// The inputs come from splitmix64 generators with fixed seeds; nothing depends on the time or the
// libc's random functions (libm's pow and powf give the powers of ten). The functions called are ggml's public ones (ggml.h and
// ggml-quants.h): quantize_row_*_ref, dequantize_row_*, ggml_fp32_to_fp16_row and friends, and
// ggml_quantize_chunk (which calls quantize_* with the importance weights).

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-quants.h"
#include "ggml.h"

// ---------------------------------------------------------------------------------------------
// Random numbers: splitmix64.

typedef struct {
    uint64_t s;
} rng;

static uint64_t next(rng * r) {
    r->s += 0x9E3779B97F4A7C15ull;
    uint64_t z = r->s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Uniform in [-1, 1): the top 24 bits / 2^23 - 1 (exact in float).
static float unit(rng * r) {
    return (float) ((double) (next(r) >> 40) / 8388608.0 - 1.0);
}

// Uniform in [0, 1): the top 24 bits / 2^24.
static float unit01(rng * r) {
    return (float) ((double) (next(r) >> 40) / 16777216.0);
}

// ---------------------------------------------------------------------------------------------
// Output.

static const char * out_dir;

static void write_file(const char * name, const void * data, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", out_dir, name);
    FILE * f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "codec_vectors: writing %s: %s\n", path, strerror(errno));
        exit(1);
    }
}

static void write_named(const char * type, const char * suffix, const void * data, size_t n) {
    char name[256];
    snprintf(name, sizeof name, "%s.%s", type, suffix);
    write_file(name, data, n);
}

static void * zalloc(size_t n) {
    void * p = calloc(n ? n : 1, 1);
    if (!p) {
        fprintf(stderr, "codec_vectors: out of memory\n");
        exit(1);
    }
    return p;
}

// ---------------------------------------------------------------------------------------------
// Set 1: F16, BF16, the legacy and k-quants (files T.in.f32, T.q, T.deq.f32, T.rand.bin,
// T.rand.f32, and T.imat.*).

typedef void (*quant_fn)(const float * x, void * y, int64_t k);
typedef void (*dequant_fn)(const void * x, float * y, int64_t k);

static void q_f16(const float * x, void * y, int64_t k) { ggml_fp32_to_fp16_row(x, (ggml_fp16_t *) y, k); }
static void d_f16(const void * x, float * y, int64_t k) { ggml_fp16_to_fp32_row((const ggml_fp16_t *) x, y, k); }
static void q_bf16(const float * x, void * y, int64_t k) { ggml_fp32_to_bf16_row_ref(x, (ggml_bf16_t *) y, k); }
static void d_bf16(const void * x, float * y, int64_t k) { ggml_bf16_to_fp32_row((const ggml_bf16_t *) x, y, k); }

#define Q(name) (quant_fn) quantize_row_##name##_ref
#define D(name) (dequant_fn) dequantize_row_##name

typedef struct {
    const char * name;
    enum ggml_type type;
    int block;     // elements per block; 32 for F16/BF16 (the input's block structure)
    size_t bytes;  // bytes per block
    quant_fn quant;
    dequant_fn dequant;  // NULL for Q8_1: ggml has none
} type1;

static const type1 SET1[] = {
    { "F16", GGML_TYPE_F16, 32, 64, q_f16, d_f16 },
    { "BF16", GGML_TYPE_BF16, 32, 64, q_bf16, d_bf16 },
    { "Q4_0", GGML_TYPE_Q4_0, 32, sizeof(block_q4_0), Q(q4_0), D(q4_0) },
    { "Q4_1", GGML_TYPE_Q4_1, 32, sizeof(block_q4_1), Q(q4_1), D(q4_1) },
    { "Q5_0", GGML_TYPE_Q5_0, 32, sizeof(block_q5_0), Q(q5_0), D(q5_0) },
    { "Q5_1", GGML_TYPE_Q5_1, 32, sizeof(block_q5_1), Q(q5_1), D(q5_1) },
    { "Q8_0", GGML_TYPE_Q8_0, 32, sizeof(block_q8_0), Q(q8_0), D(q8_0) },
    { "Q8_1", GGML_TYPE_Q8_1, 32, sizeof(block_q8_1), Q(q8_1), NULL },
    { "Q2_K", GGML_TYPE_Q2_K, 256, sizeof(block_q2_K), Q(q2_K), D(q2_K) },
    { "Q3_K", GGML_TYPE_Q3_K, 256, sizeof(block_q3_K), Q(q3_K), D(q3_K) },
    { "Q4_K", GGML_TYPE_Q4_K, 256, sizeof(block_q4_K), Q(q4_K), D(q4_K) },
    { "Q5_K", GGML_TYPE_Q5_K, 256, sizeof(block_q5_K), Q(q5_K), D(q5_K) },
    { "Q6_K", GGML_TYPE_Q6_K, 256, sizeof(block_q6_K), Q(q6_K), D(q6_K) },
    { "Q8_K", GGML_TYPE_Q8_K, 256, sizeof(block_q8_K), Q(q8_K), D(q8_K) },
};
#define N_SET1 (sizeof SET1 / sizeof SET1[0])

#define N_EDGE 12

// The 12 edge blocks, then `nrand` random ones (README, "Files, per type").
static void set1_input(rng * r, float * x, int bs, int nrand) {
    float * b;
    int j;
    b = x + 0 * bs;  // 0: zeros
    for (j = 0; j < bs; j++) b[j] = 0.0f;
    b = x + 1 * bs;  // 1: small values and one 1e30
    for (j = 0; j < bs; j++) b[j] = unit(r) * 0.01f;
    b[3] = 1e30f;
    b = x + 2 * bs;  // 2: -3e38 last
    for (j = 0; j < bs; j++) b[j] = unit(r);
    b[bs - 1] = -3e38f;
    b = x + 3 * bs;  // 3: constant
    for (j = 0; j < bs; j++) b[j] = 0.7f;
    b = x + 4 * bs;  // 4: one NaN
    for (j = 0; j < bs; j++) b[j] = unit(r);
    b[5] = NAN;
    b = x + 5 * bs;  // 5: one +Inf
    for (j = 0; j < bs; j++) b[j] = unit(r);
    b[7] = INFINITY;
    b = x + 6 * bs;  // 6: one -Inf
    for (j = 0; j < bs; j++) b[j] = unit(r);
    b[0] = -INFINITY;
    b = x + 7 * bs;  // 7: subnormals
    for (j = 0; j < bs; j++) b[j] = unit(r) * 1e-39f;
    b = x + 8 * bs;  // 8: tiny
    for (j = 0; j < bs; j++) b[j] = unit(r) * 1e-20f;
    b = x + 9 * bs;  // 9: scales overflow f16
    for (j = 0; j < bs; j++) b[j] = unit(r) * 1e7f;
    b = x + 10 * bs;  // 10: all negative
    for (j = 0; j < bs; j++) b[j] = -fabsf(unit(r)) - 0.5f;
    b = x + 11 * bs;  // 11: all NaN
    for (j = 0; j < bs; j++) b[j] = NAN;
    for (int k = 0; k < nrand; k++) {
        b = x + (N_EDGE + k) * bs;
        float scale = (float) pow(10.0, (double) (k % 11 - 6));
        for (j = 0; j < bs; j++) b[j] = unit(r) * scale;
        if (k % 3 == 1) {
            int i = (int) (next(r) % (uint64_t) bs);
            b[i] *= 50.0f;
        }
    }
}

static void set1(void) {
    for (size_t t = 0; t < N_SET1; t++) {
        const type1 * T = &SET1[t];
        rng r = { 0x5EED0000ull + t };
        const int bs = T->block;
        const int nrand = bs == 32 ? 40 : 12;
        const int nblocks = N_EDGE + nrand;
        const int64_t n = (int64_t) nblocks * bs;
        const size_t qbytes = T->type == GGML_TYPE_F16 || T->type == GGML_TYPE_BF16 ? 2 * (size_t) n
                                                                                     : (size_t) nblocks * T->bytes;
        float * x = zalloc(n * sizeof(float));
        set1_input(&r, x, bs, nrand);
        void * q = zalloc(qbytes);
        T->quant(x, q, n);
        write_named(T->name, "in.f32", x, n * sizeof(float));
        write_named(T->name, "q", q, qbytes);
        if (T->dequant) {
            float * y = zalloc(n * sizeof(float));
            T->dequant(q, y, n);
            write_named(T->name, "deq.f32", y, n * sizeof(float));
            free(y);
            // Random block bytes, from the same generator.
            const int64_t rn = bs == 32 ? (T->bytes == 64 ? 4096 : 64 * 32) : 16 * 256;
            const size_t rbytes = T->bytes == 64 ? 2 * (size_t) rn : (size_t) (rn / bs) * T->bytes;
            uint8_t * rb = zalloc(rbytes);
            for (size_t i = 0; i < rbytes; i++) rb[i] = (uint8_t) next(&r);
            float * ry = zalloc(rn * sizeof(float));
            T->dequant(rb, ry, rn);
            write_named(T->name, "rand.bin", rb, rbytes);
            write_named(T->name, "rand.f32", ry, rn * sizeof(float));
            free(rb);
            free(ry);
        }
        free(x);
        free(q);
    }
}

// With importance weights, through ggml_quantize_chunk (README, "With importance weights").
typedef struct {
    const char * name;
    enum ggml_type type;
    int n_per_row;
    int nrows;
} type_imat;

static const type_imat IMAT[] = {
    { "Q4_0", GGML_TYPE_Q4_0, 64, 24 },   { "Q4_1", GGML_TYPE_Q4_1, 64, 24 },
    { "Q5_0", GGML_TYPE_Q5_0, 64, 24 },   { "Q5_1", GGML_TYPE_Q5_1, 64, 24 },
    { "Q2_K", GGML_TYPE_Q2_K, 512, 8 },   { "Q3_K", GGML_TYPE_Q3_K, 512, 8 },
    { "Q4_K", GGML_TYPE_Q4_K, 512, 8 },   { "Q5_K", GGML_TYPE_Q5_K, 512, 8 },
    { "Q6_K", GGML_TYPE_Q6_K, 512, 8 },   { "IQ4_NL", GGML_TYPE_IQ4_NL, 64, 24 },
    { "IQ4_XS", GGML_TYPE_IQ4_XS, 512, 8 },
};
#define N_IMAT (sizeof IMAT / sizeof IMAT[0])

static void set1_imat(void) {
    for (size_t t = 0; t < N_IMAT; t++) {
        const type_imat * T = &IMAT[t];
        rng r = { 0x1A7A0000ull + t };
        const int npr = T->n_per_row;
        const int64_t n = (int64_t) npr * T->nrows;
        float * x = zalloc(n * sizeof(float));
        for (int row = 0; row < T->nrows; row++) {
            float * xr = x + (int64_t) row * npr;
            float scale = (float) pow(10.0, (double) (row % 9 - 5));
            for (int j = 0; j < npr; j++) xr[j] = unit(&r) * scale;
            if (row % 3 == 1) {
                int i = (int) (next(&r) % (uint64_t) npr);
                xr[i] *= 40.0f;
            }
        }
        const int bs = (int) ggml_blck_size(T->type);
        for (int j = 0; j < bs; j++) x[j] = 0.0f;
        float * w = zalloc(npr * sizeof(float));
        for (int j = 0; j < npr; j++) w[j] = j % 7 == 3 ? 0.0f : fabsf(unit(&r)) * 2.0f;
        const size_t qbytes = ggml_row_size(T->type, npr) * T->nrows;
        void * q = zalloc(qbytes);
        size_t got = ggml_quantize_chunk(T->type, x, q, 0, T->nrows, npr, w);
        if (got != qbytes) {
            fprintf(stderr, "codec_vectors: ggml_quantize_chunk %s: %zu bytes, expected %zu\n", T->name, got, qbytes);
            exit(1);
        }
        write_named(T->name, "imat.in.f32", x, n * sizeof(float));
        write_named(T->name, "imat.w.f32", w, npr * sizeof(float));
        write_named(T->name, "imat.q", q, qbytes);
        free(x);
        free(w);
        free(q);
    }
}

// ---------------------------------------------------------------------------------------------
// Set 2: i-quants, ternary, FP4 and the 1/2-bit types (files T.deq.in, T.deq.out, T.q.in,
// T.q.out, T.qw.w, T.qw.out).

typedef struct {
    const char * name;
    enum ggml_type type;
    int dequant_blocks;
    int f16_scale_at;  // byte offset of the f16 scale `d`, or -1
} type_deq;

static const type_deq DEQ[] = {
    { "IQ2_XXS", GGML_TYPE_IQ2_XXS, 16, 0 }, { "IQ2_XS", GGML_TYPE_IQ2_XS, 16, 0 },
    { "IQ2_S", GGML_TYPE_IQ2_S, 16, 0 },     { "IQ3_XXS", GGML_TYPE_IQ3_XXS, 16, 0 },
    { "IQ3_S", GGML_TYPE_IQ3_S, 16, 0 },     { "IQ1_S", GGML_TYPE_IQ1_S, 16, 0 },
    { "IQ1_M", GGML_TYPE_IQ1_M, 16, -1 },    { "IQ4_NL", GGML_TYPE_IQ4_NL, 64, 0 },
    { "IQ4_XS", GGML_TYPE_IQ4_XS, 16, 0 },   { "TQ1_0", GGML_TYPE_TQ1_0, 16, 52 },
    { "TQ2_0", GGML_TYPE_TQ2_0, 16, 64 },    { "MXFP4", GGML_TYPE_MXFP4, 64, -1 },
    { "NVFP4", GGML_TYPE_NVFP4, 64, -1 },    { "Q1_0", GGML_TYPE_Q1_0, 64, 0 },
    { "Q2_0", GGML_TYPE_Q2_0, 64, 0 },
};
#define N_DEQ (sizeof DEQ / sizeof DEQ[0])

static dequant_fn set2_dequant(enum ggml_type t) {
    switch (t) {
        case GGML_TYPE_IQ2_XXS: return D(iq2_xxs);
        case GGML_TYPE_IQ2_XS: return D(iq2_xs);
        case GGML_TYPE_IQ2_S: return D(iq2_s);
        case GGML_TYPE_IQ3_XXS: return D(iq3_xxs);
        case GGML_TYPE_IQ3_S: return D(iq3_s);
        case GGML_TYPE_IQ1_S: return D(iq1_s);
        case GGML_TYPE_IQ1_M: return D(iq1_m);
        case GGML_TYPE_IQ4_NL: return D(iq4_nl);
        case GGML_TYPE_IQ4_XS: return D(iq4_xs);
        case GGML_TYPE_TQ1_0: return D(tq1_0);
        case GGML_TYPE_TQ2_0: return D(tq2_0);
        case GGML_TYPE_MXFP4: return D(mxfp4);
        case GGML_TYPE_NVFP4: return D(nvfp4);
        case GGML_TYPE_Q1_0: return D(q1_0);
        case GGML_TYPE_Q2_0: return D(q2_0);
        default: fprintf(stderr, "codec_vectors: no dequantizer for %s\n", ggml_type_name(t)); exit(1);
    }
}

static void set2_dequantize(void) {
    static const uint16_t scales[7] = { 0x7E01, 0xFC01, 0x7C00, 0xFC00, 0x0001, 0x8000, 0x7BFF };
    static const uint8_t mx_e[5] = { 0, 1, 2, 254, 255 };
    for (size_t t = 0; t < N_DEQ; t++) {
        const type_deq * T = &DEQ[t];
        const size_t ts = ggml_type_size(T->type);
        const int64_t bs = ggml_blck_size(T->type);
        rng r = { 0x5eed0000ull + 1000 * ts + (uint64_t) bs };
        const size_t nbytes = ts * T->dequant_blocks;
        uint8_t * src = zalloc(nbytes);
        for (size_t i = 0; i < nbytes; i++) src[i] = (uint8_t) next(&r);
        memset(src, 0x00, ts);
        memset(src + ts, 0xFF, ts);
        if (T->f16_scale_at >= 0) {
            for (int k = 0; k < 7; k++) {
                uint8_t * b = src + (2 + k) * ts + T->f16_scale_at;
                b[0] = (uint8_t) scales[k];
                b[1] = (uint8_t) (scales[k] >> 8);
            }
        } else if (T->type == GGML_TYPE_MXFP4) {
            for (int k = 0; k < 5; k++) src[(2 + k) * ts] = mx_e[k];
        } else if (T->type == GGML_TYPE_NVFP4) {
            static const uint8_t s2[4] = { 0x00, 0x7F, 0x80, 0xFF }, s3[4] = { 0x01, 0x07, 0x08, 0x7E };
            memcpy(src + 2 * ts, s2, 4);
            memcpy(src + 3 * ts, s3, 4);
        }
        const int64_t n = bs * T->dequant_blocks;
        float * y = zalloc(n * sizeof(float));
        set2_dequant(T->type)(src, y, n);
        write_named(T->name, "deq.in", src, nbytes);
        write_named(T->name, "deq.out", y, n * sizeof(float));
        free(src);
        free(y);
    }
}

typedef struct {
    const char * name;
    enum ggml_type type;
    int blocks;
} type_q;

static const type_q QUANT[] = {
    { "IQ4_NL", GGML_TYPE_IQ4_NL, 96 }, { "IQ4_XS", GGML_TYPE_IQ4_XS, 28 }, { "TQ1_0", GGML_TYPE_TQ1_0, 28 },
    { "TQ2_0", GGML_TYPE_TQ2_0, 28 },   { "MXFP4", GGML_TYPE_MXFP4, 160 },  { "NVFP4", GGML_TYPE_NVFP4, 96 },
    { "Q1_0", GGML_TYPE_Q1_0, 48 },     { "Q2_0", GGML_TYPE_Q2_0, 96 },
};
#define N_QUANT (sizeof QUANT / sizeof QUANT[0])

static quant_fn set2_quant(enum ggml_type t) {
    switch (t) {
        case GGML_TYPE_TQ1_0: return Q(tq1_0);
        case GGML_TYPE_TQ2_0: return Q(tq2_0);
        case GGML_TYPE_MXFP4: return Q(mxfp4);
        case GGML_TYPE_NVFP4: return Q(nvfp4);
        case GGML_TYPE_Q1_0: return Q(q1_0);
        case GGML_TYPE_Q2_0: return Q(q2_0);
        default: fprintf(stderr, "codec_vectors: no quantizer for %s\n", ggml_type_name(t)); exit(1);
    }
}

// Edge kind 11: values (2u - 1)·2^(k-1), one of them the float just below 2^k.
static void kind11(rng * r, float * b, int n) {
    int k = (int) (next(r) % 61) - 30;
    float p = ldexpf(1.0f, k - 1);
    for (int j = 0; j < n; j++) b[j] = (2.0f * unit01(r) - 1.0f) * p;
    b[7 % n] = nextafterf(ldexpf(1.0f, k), 0.0f);
}

static void set2_input(rng * r, float * x, int nblocks, int n) {
    for (int blk = 0; blk < nblocks; blk++) {
        float * b = x + (int64_t) blk * n;
        const int k = (int) (next(r) % 9) - 4;
        float scale = powf(10.0f, (float) k);
        for (int j = 0; j < n; j++) b[j] = (2.0f * unit01(r) - 1.0f) * scale;
        int kind = blk < 12 ? blk : (blk % 4 == 0 ? 11 : -1);
        switch (kind) {
            case 0: for (int j = 0; j < n; j++) b[j] = 0.0f; break;
            case 1: for (int j = 0; j < n; j++) b[j] = -0.0f; break;
            case 2: for (int j = 0; j < n; j++) b[j] = 0.0f; b[n / 3] = 3e38f; break;
            case 3: b[n / 2] = 3e38f; b[1] = -2.5e38f; break;
            case 4: b[3] = NAN; break;
            case 5: b[n - 1] = NAN; b[0] = -NAN; break;
            case 6: b[2] = INFINITY; break;
            case 7: b[n - 2] = -INFINITY; b[5] = NAN; break;
            case 8: {
                const float f = (float) (1e-40 / (double) scale);  // subnormal when scale > 1
                for (int j = 0; j < n; j++) b[j] *= f;
            } break;
            case 9:
                for (int j = 0; j < n; j++) b[j] = (float) ((int) (next(r) % 9) - 4) * 0.5f;
                b[0] = 2.0f;
                break;
            case 10: for (int j = 0; j < n; j++) b[j] = 0.0f; b[n / 4] = 1e-30f; break;
            case 11: kind11(r, b, n); break;
            default: break;
        }
    }
}

static void set2_quantize(void) {
    for (size_t t = 0; t < N_QUANT; t++) {
        const type_q * T = &QUANT[t];
        const uint64_t seed = 0x1001 + t;
        rng r = { seed };
        const int n = (int) ggml_blck_size(T->type);
        const int64_t total = (int64_t) n * T->blocks;
        float * x = zalloc(total * sizeof(float));
        set2_input(&r, x, T->blocks, n);
        const size_t qbytes = ggml_type_size(T->type) * T->blocks;
        uint8_t * q = zalloc(qbytes);
        if (T->type == GGML_TYPE_IQ4_NL) {
            quantize_iq4_nl(x, q, 1, total, NULL);  // what ggml_quantize_chunk calls, not the _ref
        } else if (T->type == GGML_TYPE_IQ4_XS) {
            quantize_iq4_xs(x, q, 1, total, NULL);
        } else {
            set2_quant(T->type)(x, q, total);
        }
        write_named(T->name, "q.in", x, total * sizeof(float));
        write_named(T->name, "q.out", q, qbytes);
        if (T->type == GGML_TYPE_IQ4_NL || T->type == GGML_TYPE_IQ4_XS) {
            rng rw = { seed ^ 0xABCDEFull };
            float * w = zalloc(total * sizeof(float));
            for (int64_t i = 0; i < total; i++) w[i] = 4.0f * unit01(&rw);
            uint8_t * qw = zalloc(qbytes);
            // One row: the weights are one per element.
            size_t got = ggml_quantize_chunk(T->type, x, qw, 0, 1, total, w);
            if (got != qbytes) {
                fprintf(stderr, "codec_vectors: ggml_quantize_chunk %s: %zu bytes\n", T->name, got);
                exit(1);
            }
            write_named(T->name, "qw.w", w, total * sizeof(float));
            write_named(T->name, "qw.out", qw, qbytes);
            free(w);
            free(qw);
        }
        free(x);
        free(q);
    }
}

// ---------------------------------------------------------------------------------------------
// Set 3: the grid i-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) through
// ggml_quantize_chunk, with and without importance weights (files T.q.in, T.q.out, T.q.abort,
// T.qw.w, T.qw.out, T.qw.abort). ggml aborts the process on some blocks (NaN, Inf, huge values:
// GGML_ASSERT / GGML_ABORT in the grid search), so every block is quantized on its own (these
// quantizers work block by block) in a forked child; a block whose child dies is listed in the
// .abort file (one block index per line) and left zero in the .out file.

typedef struct {
    const char * name;
    enum ggml_type type;
    int blocks;
} type_grid;

static const type_grid GRID[] = {
    { "IQ2_XXS", GGML_TYPE_IQ2_XXS, 48 }, { "IQ2_XS", GGML_TYPE_IQ2_XS, 48 }, { "IQ2_S", GGML_TYPE_IQ2_S, 48 },
    { "IQ3_XXS", GGML_TYPE_IQ3_XXS, 48 }, { "IQ3_S", GGML_TYPE_IQ3_S, 48 },   { "IQ1_S", GGML_TYPE_IQ1_S, 48 },
    { "IQ1_M", GGML_TYPE_IQ1_M, 48 },
};
#define N_GRID (sizeof GRID / sizeof GRID[0])

// ggml_quantize_chunk of one block in a child process: 1 and the block's bytes in `out`, or 0
// if the child did not exit normally (ggml aborted).
static int quantize_block_forked(enum ggml_type type, const float * x, const float * w, uint8_t * out, size_t ts) {
    int fd[2];
    if (pipe(fd) != 0) {
        fprintf(stderr, "codec_vectors: pipe: %s\n", strerror(errno));
        exit(1);
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "codec_vectors: fork: %s\n", strerror(errno));
        exit(1);
    }
    if (pid == 0) {
        close(fd[0]);
        // ggml's abort message goes to stderr; silence it (the parent records the abort).
        if (!freopen("/dev/null", "w", stderr) || !freopen("/dev/null", "w", stdout)) _exit(3);
        uint8_t * q = calloc(ts, 1);
        if (!q) _exit(3);
        size_t got = ggml_quantize_chunk(type, x, q, 0, 1, 256, w);
        if (got != ts || write(fd[1], q, ts) != (ssize_t) ts) _exit(3);
        _exit(0);
    }
    close(fd[1]);
    size_t have = 0;
    while (have < ts) {
        ssize_t r = read(fd[0], out + have, ts - have);
        if (r <= 0) break;
        have += (size_t) r;
    }
    close(fd[0]);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) {
        fprintf(stderr, "codec_vectors: waitpid: %s\n", strerror(errno));
        exit(1);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && have == ts) return 1;
    if (WIFEXITED(status)) {
        fprintf(stderr, "codec_vectors: child exited with %d\n", WEXITSTATUS(status));
        exit(1);
    }
    memset(out, 0, ts);
    return 0;
}

// Quantizes every block of x (with weights w, or none), writing T.<suffix>.out and T.<suffix>.abort.
static void grid_quantize(const type_grid * T, const char * suffix, const float * x, const float * w) {
    const size_t ts = ggml_type_size(T->type);
    uint8_t * q = zalloc(ts * T->blocks);
    char * aborts = zalloc(16 * (size_t) T->blocks + 1);
    size_t alen = 0;
    for (int b = 0; b < T->blocks; b++) {
        if (!quantize_block_forked(T->type, x + 256 * b, w ? w + 256 * b : NULL, q + ts * b, ts)) {
            alen += (size_t) snprintf(aborts + alen, 16, "%d\n", b);
        }
    }
    char name[64];
    snprintf(name, sizeof name, "%s.out", suffix);
    write_named(T->name, name, q, ts * T->blocks);
    snprintf(name, sizeof name, "%s.abort", suffix);
    write_named(T->name, name, aborts, alen);
    free(q);
    free(aborts);
}

static void set3_grid(void) {
    for (size_t t = 0; t < N_GRID; t++) {
        const type_grid * T = &GRID[t];
        const uint64_t seed = 0x2001 + t;
        rng r = { seed };
        const int64_t total = 256 * (int64_t) T->blocks;
        float * x = zalloc(total * sizeof(float));
        set2_input(&r, x, T->blocks, 256);
        // The tables are built once here, not in every child.
        ggml_quantize_init(T->type);
        write_named(T->name, "q.in", x, total * sizeof(float));
        if (!ggml_quantize_requires_imatrix(T->type)) grid_quantize(T, "q", x, NULL);
        rng rw = { seed ^ 0xABCDEFull };
        float * w = zalloc(total * sizeof(float));
        for (int64_t i = 0; i < total; i++) w[i] = i % 11 == 5 ? 0.0f : 4.0f * unit01(&rw);
        write_named(T->name, "qw.w", w, total * sizeof(float));
        grid_quantize(T, "qw", x, w);
        free(w);
        free(x);
    }
}

// ---------------------------------------------------------------------------------------------
// Exhaustive hashes.

typedef struct {
    uint64_t h;
} fnv;

static void fnv_update(fnv * f, const void * p, size_t n) {
    const uint8_t * b = p;
    uint64_t h = f->h;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    f->h = h;
}

static void hashes(FILE * f) {
    fnv h = { 0xcbf29ce484222325ull };
    for (uint32_t i = 0; i <= 0xFFFF; i++) {
        ggml_fp16_t v = (ggml_fp16_t) i;
        float y;
        ggml_fp16_to_fp32_row(&v, &y, 1);
        fnv_update(&h, &y, 4);
    }
    fprintf(f, "f16_to_f32 %016llx\n", (unsigned long long) h.h);
    fnv h16 = { 0xcbf29ce484222325ull }, hbf = { 0xcbf29ce484222325ull };
    enum { CHUNK = 1 << 20 };
    uint32_t * src = zalloc(CHUNK * sizeof(uint32_t));
    uint16_t * out = zalloc(CHUNK * sizeof(uint16_t));
    for (uint64_t c = 0; c < (1ull << 12); c++) {
        for (uint32_t i = 0; i < CHUNK; i++) src[i] = (uint32_t) (c << 20) | i;
        ggml_fp32_to_fp16_row((const float *) src, (ggml_fp16_t *) out, CHUNK);
        fnv_update(&h16, out, CHUNK * 2);
        ggml_fp32_to_bf16_row_ref((const float *) src, (ggml_bf16_t *) out, CHUNK);
        fnv_update(&hbf, out, CHUNK * 2);
    }
    fprintf(f, "f32_to_f16 %016llx\n", (unsigned long long) h16.h);
    fprintf(f, "f32_to_bf16 %016llx\n", (unsigned long long) hbf.h);
    free(src);
    free(out);
}

int main(int argc, char ** argv) {
    int exhaustive = 1;
    if (argc == 3 && strcmp(argv[1], "--no-exhaustive") == 0) {
        exhaustive = 0;
        argv++;
        argc--;
    }
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: codec_vectors [--no-exhaustive] OUT_DIR\n");
        return 2;
    }
    out_dir = argv[1];
    set1();
    set1_imat();
    set2_dequantize();
    set2_quantize();
    set3_grid();
    ggml_quantize_free();
    if (exhaustive) {
        char path[4096];
        snprintf(path, sizeof path, "%s/exhaustive.txt", out_dir);
        FILE * f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "codec_vectors: writing %s: %s\n", path, strerror(errno));
            return 1;
        }
        hashes(f);
        if (fclose(f) != 0) {
            fprintf(stderr, "codec_vectors: writing %s: %s\n", path, strerror(errno));
            return 1;
        }
    }
    return 0;
}
