set    | intel-glc
title  | Intel Sapphire Rapids, Emerald Rapids, Granite Rapids, Alder Lake-P, Raptor Lake-P, Meteor Lake-P (Golden/Raptor/Redwood Cove, 6-wide, level 2 from PERF_METRICS)
pmu    | core
mask   | 0xff13ffa4ffff
source | perf tools/perf/pmu-events/arch/x86/sapphirerapids/spr-metrics.json (Linux 6.12.117)
record | perf record -e '{slots,cycles,topdown-retiring,topdown-bad-spec,topdown-fe-bound,topdown-be-bound,topdown-heavy-ops,topdown-br-mispredict,topdown-fetch-lat,topdown-mem-bound}:S' -g -- CMD

const  | width | 6 | pipeline width
event  | slots            | raw 0x400  | required | TOPDOWN.SLOTS (fixed counter 3)
event  | td_retiring      | raw 0x8000 | required | topdown-retiring (PERF_METRICS byte 0, in slots)
event  | td_bad_spec      | raw 0x8100 | required | topdown-bad-spec (byte 1)
event  | td_fe_bound      | raw 0x8200 | required | topdown-fe-bound (byte 2)
event  | td_be_bound      | raw 0x8300 | required | topdown-be-bound (byte 3)
event  | td_heavy_ops     | raw 0x8400 | required | topdown-heavy-ops (byte 4)
event  | td_br_mispredict | raw 0x8500 | required | topdown-br-mispredict (byte 5)
event  | td_fetch_lat     | raw 0x8600 | required | topdown-fetch-lat (byte 6)
event  | td_mem_bound     | raw 0x8700 | required | topdown-mem-bound (byte 7)
event  | uop_dropping     | raw 0x10ad | optional | INT_MISC.UOP_DROPPING (correction; 0 when not recorded)

let    | sum4 | td_fe_bound + td_bad_spec + td_retiring + td_be_bound

node   | frontend_bound     | -               | Frontend_Bound     | frontend_bound > 0.15 | td_fe_bound / sum4 - uop_dropping / slots
node   | backend_bound      | -               | Backend_Bound      | backend_bound > 0.2 | td_be_bound / sum4
node   | retiring           | -               | Retiring           | retiring > 0.7 or heavy_operations > 0.1 | td_retiring / sum4
node   | bad_speculation    | -               | Bad_Speculation    | bad_speculation > 0.15 | max(1 - (frontend_bound + backend_bound + retiring), 0)
node   | fetch_latency      | frontend_bound  | Fetch_Latency      | fetch_latency > 0.1 | td_fetch_lat / sum4 - uop_dropping / slots
node   | fetch_bandwidth    | frontend_bound  | Fetch_Bandwidth    | fetch_bandwidth > 0.2 | max(0, frontend_bound - fetch_latency)
node   | branch_mispredicts | bad_speculation | Branch_Mispredicts | branch_mispredicts > 0.1 | td_br_mispredict / sum4
node   | machine_clears     | bad_speculation | Machine_Clears     | machine_clears > 0.1 | max(0, bad_speculation - branch_mispredicts)
node   | memory_bound       | backend_bound   | Memory_Bound       | memory_bound > 0.2 | td_mem_bound / sum4
node   | core_bound         | backend_bound   | Core_Bound         | core_bound > 0.1 | max(0, backend_bound - memory_bound)
node   | heavy_operations   | retiring        | Heavy_Operations   | heavy_operations > 0.1 | td_heavy_ops / sum4
node   | light_operations   | retiring        | Light_Operations   | light_operations > 0.6 | max(0, retiring - heavy_operations)
