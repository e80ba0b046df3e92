/* A tiny JIT: copies a counting loop into executable anonymous memory,
 * announces it in /tmp/perf-PID.map as perf's JIT convention asks, and
 * runs it. Built by the tests. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void) {
    /* mov rcx, 200000000; 1: dec rcx; jnz 1b; ret */
    static const unsigned char code[] = {
        0x48, 0xc7, 0xc1, 0x00, 0xc2, 0xeb, 0x0b, /* mov rcx, 0x0bebc200 */
        0x48, 0xff, 0xc9,                         /* dec rcx */
        0x75, 0xfb,                               /* jnz -5 */
        0xc3,                                     /* ret */
    };
    unsigned char *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return 1;
    memcpy(mem, code, sizeof code);
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
        return 1;
    fprintf(f, "%lx %zx jitted_countdown\n", (unsigned long)(uintptr_t)mem, sizeof code);
    fclose(f);
    void (*fn)(void) = (void (*)(void))mem;
    for (int i = 0; i < 3; i++)
        fn();
    return 0;
}
