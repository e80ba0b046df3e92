/* Shared library half of the symbolization test program. */
#include <stdint.h>

static inline __attribute__((always_inline)) uint64_t step(uint64_t x, uint64_t i) {
    return (x << 7 | x >> 57) ^ (i * 0x9e3779b97f4a7c15ULL);
}

__attribute__((noinline)) uint64_t lib_inner(uint64_t n) {
    uint64_t x = n;
    for (uint64_t i = 0; i < n; i++)
        x = step(x, i);
    return x;
}

uint64_t lib_hot(uint64_t n) {
    return lib_inner(n) ^ lib_inner(n / 3);
}
