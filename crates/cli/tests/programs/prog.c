/* Test program for symbolization: own functions, a forced-inline helper,
 * a shared library, and libc. Built by the tests with -O2 -g. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

uint64_t lib_hot(uint64_t n);

static inline __attribute__((always_inline)) uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

__attribute__((noinline)) uint64_t leaf_sum(uint64_t n) {
    uint64_t s = 0;
    for (uint64_t i = 0; i < n; i++)
        s += mix(i + s);
    return s;
}

__attribute__((noinline)) uint64_t middle(uint64_t n) {
    return leaf_sum(n) + leaf_sum(n / 2);
}

__attribute__((noinline)) uint64_t other_work(uint64_t n) {
    uint64_t a = 1;
    for (uint64_t i = 0; i < n; i++)
        a = a * 6364136223846793005ULL + (i ^ (a >> 7));
    return a;
}

int main(int argc, char **argv) {
    uint64_t n = argc > 1 ? strtoull(argv[1], 0, 10) : 3000000;
    uint64_t r = 0;
    for (int k = 0; k < 20; k++) {
        r += middle(n);
        r += other_work(n);
        r += lib_hot(n);
    }
    printf("%llu\n", (unsigned long long)r);
    return 0;
}
