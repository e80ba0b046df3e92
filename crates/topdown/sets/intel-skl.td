set    | intel-skl
title  | Intel Skylake, Kaby Lake, Coffee Lake, Skylake-SP, Cascade Lake (4-wide)
pmu    | core
mask   | 0xff13ffa4ffff
source | perf tools/perf/pmu-events/arch/x86/skylake/skl-metrics.json (Linux 6.12.117)
record | perf record -e '{cycles,cpu/event=0x9c,umask=0x1/,cpu/event=0xe,umask=0x1/,cpu/event=0xc2,umask=0x2/,cpu/event=0xd,umask=0x1/}:S' -g -- CMD

const  | width | 4 | pipeline width
event  | cycles             | hw 0, raw 0x3c   | required | CPU_CLK_UNHALTED.THREAD
event  | one_thread_active  | raw 0x23c        | optional | CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE
event  | ref_xclk           | raw 0x13c        | optional | CPU_CLK_UNHALTED.REF_XCLK
event  | idq_not_delivered  | raw 0x19c        | required | IDQ_UOPS_NOT_DELIVERED.CORE
event  | uops_issued        | raw 0x10e        | required | UOPS_ISSUED.ANY
event  | uops_retired_slots | raw 0x2c2        | required | UOPS_RETIRED.RETIRE_SLOTS
event  | recovery_cycles    | raw 0x10d, raw 0x100030d | required | INT_MISC.RECOVERY_CYCLES (the kernel's topdown-recovery-bubbles alias: umask 3, cmask 1)
event  | idq_0_uops         | raw 0x400019c    | required | IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE
event  | br_misp            | raw 0xc5         | required | BR_MISP_RETIRED.ALL_BRANCHES
event  | clears             | raw 0x10401c3    | required | MACHINE_CLEARS.COUNT
event  | macro_fused        | raw 0x4c2        | required | UOPS_RETIRED.MACRO_FUSED
event  | inst_retired       | hw 1, raw 0xc0   | required | INST_RETIRED.ANY
event  | stalls_mem_any     | raw 0x140014a3   | required | CYCLE_ACTIVITY.STALLS_MEM_ANY
event  | stalls_total       | raw 0x40004a3    | required | CYCLE_ACTIVITY.STALLS_TOTAL
event  | bound_on_stores    | raw 0x40a6       | required | EXE_ACTIVITY.BOUND_ON_STORES
event  | ports_util_1       | raw 0x2a6        | required | EXE_ACTIVITY.1_PORTS_UTIL
event  | ports_util_2       | raw 0x4a6        | required | EXE_ACTIVITY.2_PORTS_UTIL

# perf's per-thread estimate of core clocks when sampling (#core_wide < 1);
# with SMT off, or without the two reference events, the thread's cycles.
let    | core_clks | if(ref_xclk > 0, cycles / 2 * (1 + one_thread_active / ref_xclk), cycles)
let    | slots     | width * core_clks

node   | frontend_bound     | -               | Frontend_Bound     | frontend_bound > 0.15 | idq_not_delivered / slots
node   | bad_speculation    | -               | Bad_Speculation    | bad_speculation > 0.15 | (uops_issued - uops_retired_slots + width * recovery_cycles) / slots
node   | retiring           | -               | Retiring           | retiring > 0.7 or heavy_operations > 0.1 | uops_retired_slots / slots
node   | backend_bound      | -               | Backend_Bound      | backend_bound > 0.2 | 1 - frontend_bound - (uops_issued + width * recovery_cycles) / slots
node   | fetch_latency      | frontend_bound  | Fetch_Latency      | fetch_latency > 0.1 | width * idq_0_uops / slots
node   | fetch_bandwidth    | frontend_bound  | Fetch_Bandwidth    | fetch_bandwidth > 0.2 | frontend_bound - fetch_latency
node   | branch_mispredicts | bad_speculation | Branch_Mispredicts | branch_mispredicts > 0.1 | br_misp / (br_misp + clears) * bad_speculation
node   | machine_clears     | bad_speculation | Machine_Clears     | machine_clears > 0.1 | bad_speculation - branch_mispredicts
node   | memory_bound       | backend_bound   | Memory_Bound       | memory_bound > 0.2 | (stalls_mem_any + bound_on_stores) / (stalls_total + (ports_util_1 + retiring * ports_util_2) + bound_on_stores) * backend_bound
node   | core_bound         | backend_bound   | Core_Bound         | core_bound > 0.1 | backend_bound - memory_bound
node   | heavy_operations   | retiring        | Heavy_Operations   | heavy_operations > 0.1 | (uops_retired_slots + macro_fused - inst_retired) / slots
node   | light_operations   | retiring        | Light_Operations   | light_operations > 0.6 | retiring - heavy_operations
