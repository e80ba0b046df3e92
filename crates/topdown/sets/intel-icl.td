set    | intel-icl
title  | Intel Ice Lake, Tiger Lake, Rocket Lake, Ice Lake-SP (Sunny/Willow/Cypress Cove, 5-wide, slots + PERF_METRICS)
pmu    | core
mask   | 0xff13ffa4ffff
source | perf tools/perf/pmu-events/arch/x86/icelake/icl-metrics.json (Linux 6.12.117). Memory_Bound and Heavy_Operations need events perfq has no encodings of for Ice Lake: not computed
record | perf record -e '{slots,cycles,topdown-retiring,topdown-bad-spec,topdown-fe-bound,topdown-be-bound}:S' -g -- CMD

const  | width | 5 | pipeline width
event  | slots        | raw 0x400       | required | TOPDOWN.SLOTS (fixed counter 3)
event  | td_retiring  | raw 0x8000      | required | topdown-retiring (PERF_METRICS byte 0, in slots)
event  | td_bad_spec  | raw 0x8100      | required | topdown-bad-spec (byte 1)
event  | td_fe_bound  | raw 0x8200      | required | topdown-fe-bound (byte 2)
event  | td_be_bound  | raw 0x8300      | required | topdown-be-bound (byte 3)
event  | uop_dropping | raw 0x100d      | optional | INT_MISC.UOP_DROPPING (correction; 0 when not recorded)
event  | clears_count | raw 0x104010d   | optional | INT_MISC.CLEARS_COUNT (correction; 0 when not recorded)
event  | idq_0_uops   | raw 0x500019c   | required | IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE
event  | br_misp      | raw 0xc5        | required | BR_MISP_RETIRED.ALL_BRANCHES
event  | clears       | raw 0x10401c3   | required | MACHINE_CLEARS.COUNT

# perf normalizes by the sum of the four metrics, not by slots: each read
# quantizes the metrics to 1/255 and the kernel floors each count.
let    | sum4 | td_fe_bound + td_bad_spec + td_retiring + td_be_bound

node   | frontend_bound     | -               | Frontend_Bound     | frontend_bound > 0.15 | td_fe_bound / sum4 - uop_dropping / slots
node   | backend_bound      | -               | Backend_Bound      | backend_bound > 0.2 | td_be_bound / sum4 + width * clears_count / slots
node   | retiring           | -               | Retiring           | retiring > 0.7 | td_retiring / sum4
node   | bad_speculation    | -               | Bad_Speculation    | bad_speculation > 0.15 | max(1 - (frontend_bound + backend_bound + retiring), 0)
node   | fetch_latency      | frontend_bound  | Fetch_Latency      | fetch_latency > 0.1 | (width * idq_0_uops - uop_dropping) / slots
node   | fetch_bandwidth    | frontend_bound  | Fetch_Bandwidth    | fetch_bandwidth > 0.2 | max(0, frontend_bound - fetch_latency)
node   | branch_mispredicts | bad_speculation | Branch_Mispredicts | branch_mispredicts > 0.1 | br_misp / (br_misp + clears) * bad_speculation
node   | machine_clears     | bad_speculation | Machine_Clears     | machine_clears > 0.1 | max(0, bad_speculation - branch_mispredicts)
