set    | intel-lnc-gp
title  | Intel Lion Cove (Lunar Lake and Arrow Lake P-cores), counted on general-purpose counters (no PERF_METRICS: recordable with any perf)
pmu    | core
mask   | 0xff13ffa4ffff
source | pmu-tools lnl_lnc_ratios.py with topdown_use_fixed False (no frontend or backend correction on Lion Cove); encodings from Intel perfmon LNL/events/lunarlake_lioncove_core.json, the same as Golden Cove's
record | perf record -e '{cpu_core/cycles/,cpu_core/config=0x1a4/,cpu_core/config=0x19c/,cpu_core/config=0x2a4/,cpu_core/config=0x2c2/}:S' -g -- CMD

const  | width | 8 | pipeline width
event  | slots_p           | raw 0x1a4  | required | TOPDOWN.SLOTS_P (slots on a general-purpose counter)
event  | idq_not_delivered | raw 0x19c  | required | IDQ_BUBBLES.CORE
event  | be_slots          | raw 0x2a4  | required | TOPDOWN.BACKEND_BOUND_SLOTS
event  | retired_slots     | raw 0x2c2  | required | UOPS_RETIRED.SLOTS

let    | slots | slots_p

node   | frontend_bound  | - | Frontend_Bound  | frontend_bound > 0.15 | idq_not_delivered / slots_p
node   | backend_bound   | - | Backend_Bound   | backend_bound > 0.2 | be_slots / slots_p
node   | retiring        | - | Retiring        | retiring > 0.7 | retired_slots / slots_p
node   | bad_speculation | - | Bad_Speculation | bad_speculation > 0.15 | max(1 - (frontend_bound + backend_bound + retiring), 0)
