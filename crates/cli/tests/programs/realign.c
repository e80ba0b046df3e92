/* main -> outer -> tramp -> spin, where tramp keeps its CFA in rbx, as
 * ld.so's lazy-binding trampoline (_dl_runtime_resolve_xsavec) does: it
 * saves rbx, keeps the entry stack pointer in it and realigns the stack.
 * Built without frame pointers, a stack through it unwinds only by
 * following rbx through the call-frame information. */
#include <stdio.h>
#include <stdlib.h>

volatile unsigned long sink;

__attribute__((noinline)) void spin(unsigned long n) {
    for (unsigned long i = 0; i < n; i++)
        sink += i * 3;
}

void tramp(unsigned long n);
__asm__(".globl tramp\n"
        ".type tramp, @function\n"
        "tramp:\n"
        ".cfi_startproc\n"
        "push %rbx\n"
        ".cfi_adjust_cfa_offset 8\n"
        ".cfi_rel_offset %rbx, 0\n"
        "mov %rsp, %rbx\n"
        ".cfi_def_cfa_register %rbx\n"
        "and $-64, %rsp\n"
        "sub $192, %rsp\n"
        "call spin\n"
        "mov %rbx, %rsp\n"
        ".cfi_def_cfa_register %rsp\n"
        "pop %rbx\n"
        ".cfi_adjust_cfa_offset -8\n"
        ".cfi_restore %rbx\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size tramp, .-tramp\n");

__attribute__((noinline)) void outer(unsigned long n) {
    tramp(n);
    sink++;
}

int main(int argc, char **argv) {
    outer(argc > 1 ? strtoul(argv[1], 0, 10) : 100000000UL);
    printf("%lu\n", sink);
    return 0;
}
