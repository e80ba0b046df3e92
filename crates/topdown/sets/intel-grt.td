set    | intel-grt
title  | Intel Gracemont E-cores (Alder Lake-N; Alder Lake and Raptor Lake cpu_atom; 5-wide)
pmu    | core
mask   | 0xff13ffa4ffff
source | perf tools/perf/pmu-events/arch/x86/alderlaken/adln-metrics.json, alderlake/adl-metrics.json cpu_atom (Linux 6.12.117)
record | perf record -e '{cpu_atom/cycles/,cpu_atom/event=0x71/,cpu_atom/event=0x74/,cpu_atom/event=0xc2/}:S' -g -- CMD

const  | width | 5 | pipeline width
event  | cycles         | hw 0, raw 0x3c | required | CPU_CLK_UNHALTED.CORE
event  | fe_slots       | raw 0x71       | required | TOPDOWN_FE_BOUND.ALL
event  | be_slots       | raw 0x74       | required | TOPDOWN_BE_BOUND.ALL
event  | ret_slots      | raw 0xc2       | required | TOPDOWN_RETIRING.ALL
event  | fe_latency     | raw 0x7271     | required | TOPDOWN_FE_BOUND.FRONTEND_LATENCY
event  | fe_bandwidth   | raw 0x8d71     | required | TOPDOWN_FE_BOUND.FRONTEND_BANDWIDTH
event  | mispredict     | raw 0x473      | required | TOPDOWN_BAD_SPECULATION.MISPREDICT
event  | machine_clear  | raw 0x373      | required | TOPDOWN_BAD_SPECULATION.MACHINE_CLEARS
event  | alloc_restrict | raw 0x174      | required | TOPDOWN_BE_BOUND.ALLOC_RESTRICTIONS

let    | slots | width * cycles

node   | frontend_bound     | -               | Frontend_Bound     | frontend_bound > 0.2   | fe_slots / slots
node   | bad_speculation    | -               | Bad_Speculation    | bad_speculation > 0.15 | (slots - (fe_slots + be_slots + ret_slots)) / slots
node   | backend_bound      | -               | Backend_Bound      | backend_bound > 0.1    | be_slots / slots
node   | retiring           | -               | Retiring           | retiring > 0.75        | ret_slots / slots
node   | fetch_latency      | frontend_bound  | IFetch_Latency     | fetch_latency > 0.15     | fe_latency / slots
node   | fetch_bandwidth    | frontend_bound  | IFetch_Bandwidth   | fetch_bandwidth > 0.1    | fe_bandwidth / slots
node   | branch_mispredicts | bad_speculation | Branch_Mispredicts | branch_mispredicts > 0.05 | mispredict / slots
node   | machine_clears     | bad_speculation | Machine_Clears     | machine_clears > 0.05    | machine_clear / slots
node   | core_bound         | backend_bound   | Core_Bound         | core_bound > 0.1         | alloc_restrict / slots
node   | resource_bound     | backend_bound   | Resource_Bound     | resource_bound > 0.2     | backend_bound - core_bound
