set    | intel-lnc
title  | Intel Lion Cove (Lunar Lake and Arrow Lake P-cores) and Cougar Cove (Panther Lake), 8-wide, PERF_METRICS with level 2
pmu    | core
mask   | 0xff13ffa4ffff
source | intel/perfmon LNL/metrics/lunarlake_metrics_lioncove_core.json (not in perf 6.12): every node X/SUM4, no UOP_DROPPING term
record | perf record -e '{slots,cycles,topdown-retiring,topdown-bad-spec,topdown-fe-bound,topdown-be-bound,topdown-heavy-ops,topdown-br-mispredict,topdown-fetch-lat,topdown-mem-bound}:S' -g -- CMD

const  | width | 8 | pipeline width
event  | slots            | raw 0x400  | required | TOPDOWN.SLOTS (fixed counter 3)
event  | td_retiring      | raw 0x8000 | required | topdown-retiring (PERF_METRICS byte 0, in slots)
event  | td_bad_spec      | raw 0x8100 | required | topdown-bad-spec (byte 1)
event  | td_fe_bound      | raw 0x8200 | required | topdown-fe-bound (byte 2)
event  | td_be_bound      | raw 0x8300 | required | topdown-be-bound (byte 3)
event  | td_heavy_ops     | raw 0x8400 | required | topdown-heavy-ops (byte 4)
event  | td_br_mispredict | raw 0x8500 | required | topdown-br-mispredict (byte 5)
event  | td_fetch_lat     | raw 0x8600 | required | topdown-fetch-lat (byte 6)
event  | td_mem_bound     | raw 0x8700 | required | topdown-mem-bound (byte 7)

let    | sum4 | td_fe_bound + td_bad_spec + td_retiring + td_be_bound

node   | frontend_bound     | -               | Frontend_Bound     | frontend_bound > 0.15 | td_fe_bound / sum4
node   | backend_bound      | -               | Backend_Bound      | backend_bound > 0.2 | td_be_bound / sum4
node   | retiring           | -               | Retiring           | retiring > 0.7 or heavy_operations > 0.1 | td_retiring / sum4
node   | bad_speculation    | -               | Bad_Speculation    | bad_speculation > 0.15 | td_bad_spec / sum4
node   | fetch_latency      | frontend_bound  | Fetch_Latency      | fetch_latency > 0.1 | td_fetch_lat / sum4
node   | fetch_bandwidth    | frontend_bound  | Fetch_Bandwidth    | fetch_bandwidth > 0.2 | max(0, frontend_bound - fetch_latency)
node   | branch_mispredicts | bad_speculation | Branch_Mispredicts | branch_mispredicts > 0.1 | td_br_mispredict / sum4
node   | machine_clears     | bad_speculation | Machine_Clears     | machine_clears > 0.1 | max(0, bad_speculation - branch_mispredicts)
node   | memory_bound       | backend_bound   | Memory_Bound       | memory_bound > 0.2 | td_mem_bound / sum4
node   | core_bound         | backend_bound   | Core_Bound         | core_bound > 0.1 | max(0, backend_bound - memory_bound)
node   | heavy_operations   | retiring        | Heavy_Operations   | heavy_operations > 0.1 | td_heavy_ops / sum4
node   | light_operations   | retiring        | Light_Operations   | light_operations > 0.6 | max(0, retiring - heavy_operations)
