set    | intel-hsw
title  | Intel Sandy Bridge, Ivy Bridge, Haswell, Broadwell (4-wide)
pmu    | core
mask   | 0xff13ffa4ffff
source | perf tools/perf/pmu-events/arch/x86/{snb,ivb,hsw,bdw}-metrics.json (Linux 6.12.117). Memory_Bound and Heavy_Operations use events perfq has no encodings of for these cores: not computed
record | perf record -e '{cycles,cpu/event=0x9c,umask=0x1/,cpu/event=0xe,umask=0x1/,cpu/event=0xc2,umask=0x2/,cpu/event=0xd,umask=0x3,cmask=1/}:S' -g -- CMD

const  | width | 4 | pipeline width
event  | cycles             | hw 0, raw 0x3c   | required | CPU_CLK_UNHALTED.THREAD
event  | one_thread_active  | raw 0x23c        | optional | CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE
event  | ref_xclk           | raw 0x13c        | optional | CPU_CLK_UNHALTED.REF_XCLK
event  | idq_not_delivered  | raw 0x19c        | required | IDQ_UOPS_NOT_DELIVERED.CORE
event  | uops_issued        | raw 0x10e        | required | UOPS_ISSUED.ANY
event  | uops_retired_slots | raw 0x2c2        | required | UOPS_RETIRED.RETIRE_SLOTS
event  | recovery_cycles    | raw 0x100030d    | required | INT_MISC.RECOVERY_CYCLES
event  | idq_0_uops         | raw 0x400019c    | required | IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE
event  | br_misp            | raw 0xc5         | required | BR_MISP_RETIRED.ALL_BRANCHES
event  | clears             | raw 0x10401c3    | required | MACHINE_CLEARS.COUNT

let    | core_clks | if(ref_xclk > 0, cycles / 2 * (1 + one_thread_active / ref_xclk), cycles)
let    | slots     | width * core_clks

node   | frontend_bound     | -               | Frontend_Bound     | frontend_bound > 0.15 | idq_not_delivered / slots
node   | bad_speculation    | -               | Bad_Speculation    | bad_speculation > 0.15 | (uops_issued - uops_retired_slots + width * recovery_cycles) / slots
node   | retiring           | -               | Retiring           | retiring > 0.7 | uops_retired_slots / slots
node   | backend_bound      | -               | Backend_Bound      | backend_bound > 0.2 | 1 - (frontend_bound + bad_speculation + retiring)
node   | fetch_latency      | frontend_bound  | Fetch_Latency      | fetch_latency > 0.1 | width * min(cycles, idq_0_uops) / slots
node   | fetch_bandwidth    | frontend_bound  | Fetch_Bandwidth    | fetch_bandwidth > 0.2 | frontend_bound - fetch_latency
node   | branch_mispredicts | bad_speculation | Branch_Mispredicts | branch_mispredicts > 0.1 | br_misp / (br_misp + clears) * bad_speculation
node   | machine_clears     | bad_speculation | Machine_Clears     | machine_clears > 0.1 | bad_speculation - branch_mispredicts
