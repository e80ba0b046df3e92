set    | intel-icl-gp
title  | Intel Ice Lake, Tiger Lake, Rocket Lake, Ice Lake-SP, counted on general-purpose counters (no PERF_METRICS: recordable with any perf)
pmu    | core
mask   | 0xff13ffa4ffff
source | pmu-tools icl_client_ratios.py with topdown_use_fixed False, with perf's icl-metrics.json corrections (INT_MISC.UOP_DROPPING, 5 × INT_MISC.CLEARS_COUNT)
record | perf record -e '{cycles,cpu/config=0x1a4/,cpu/config=0x19c/,cpu/config=0x2a4/,cpu/config=0x2c2/,cpu/config=0x100d/,cpu/config=0x104010d/}:S' -g -- CMD

# Every event samples on its own general-purpose counter, so perf ≤ 6.12
# opens the group as given (the slots + PERF_METRICS group it re-sorts).
const  | width | 5 | pipeline width
event  | slots_p           | raw 0x1a4     | required | TOPDOWN.SLOTS_P (slots on a general-purpose counter)
event  | idq_not_delivered | raw 0x19c     | required | IDQ_UOPS_NOT_DELIVERED.CORE
event  | be_slots          | raw 0x2a4     | required | TOPDOWN.BACKEND_BOUND_SLOTS
event  | retired_slots     | raw 0x2c2     | required | UOPS_RETIRED.SLOTS
event  | uop_dropping      | raw 0x100d    | optional | INT_MISC.UOP_DROPPING (correction; 0 when not recorded)
event  | clears_count      | raw 0x104010d | optional | INT_MISC.CLEARS_COUNT (correction; 0 when not recorded)

let    | slots | slots_p

node   | frontend_bound  | - | Frontend_Bound  | frontend_bound > 0.15 | (idq_not_delivered - uop_dropping) / slots_p
node   | backend_bound   | - | Backend_Bound   | backend_bound > 0.2 | (be_slots + width * clears_count) / slots_p
node   | retiring        | - | Retiring        | retiring > 0.7 | retired_slots / slots_p
node   | bad_speculation | - | Bad_Speculation | bad_speculation > 0.15 | max(1 - (frontend_bound + backend_bound + retiring), 0)
