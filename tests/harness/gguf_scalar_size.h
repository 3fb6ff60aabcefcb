// Shared by the C harnesses that read through ggml (tests/harness/ggml_read.c and the
// differential fuzz target's fuzz/ggml/shim.c): bytes of one value of a fixed-size GGUF type.
#ifndef GGUF_SCALAR_SIZE_H
#define GGUF_SCALAR_SIZE_H

#include "gguf.h"

#include <stddef.h>

// 1, 2, 4 or 8 for the numeric types and BOOL; 0 for STRING, ARRAY and unknown ids.
static inline size_t scalar_size(enum gguf_type t) {
    switch (t) {
        case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL: return 1;
        case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16: return 2;
        case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: case GGUF_TYPE_FLOAT32: return 4;
        case GGUF_TYPE_UINT64: case GGUF_TYPE_INT64: case GGUF_TYPE_FLOAT64: return 8;
        default: return 0;
    }
}

#endif
