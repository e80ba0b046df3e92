set    | intel-glc-gp
title  | Intel Sapphire/Emerald/Granite Rapids, Alder/Raptor/Meteor Lake P-cores (Golden/Redwood Cove), counted on general-purpose counters (no PERF_METRICS: recordable with any perf)
pmu    | core
mask   | 0xff13ffa4ffff
source | pmu-tools spr_server_ratios.py with topdown_use_fixed False (the SPR/EMR/ADL-P encodings), with perf's spr-metrics.json frontend correction (INT_MISC.UOP_DROPPING; its backend has none)
record | perf record -e '{cycles,cpu/config=0x1a4/,cpu/config=0x19c/,cpu/config=0x2a4/,cpu/config=0x2c2/,cpu/config=0x10ad/}:S' -g -- CMD

const  | width | 6 | pipeline width
event  | slots_p           | raw 0x1a4  | required | TOPDOWN.SLOTS_P (slots on a general-purpose counter)
event  | idq_not_delivered | raw 0x19c  | required | IDQ_BUBBLES.CORE (IDQ_UOPS_NOT_DELIVERED.CORE)
event  | be_slots          | raw 0x2a4  | required | TOPDOWN.BACKEND_BOUND_SLOTS
event  | retired_slots     | raw 0x2c2  | required | UOPS_RETIRED.SLOTS
event  | uop_dropping      | raw 0x10ad | optional | INT_MISC.UOP_DROPPING (correction; 0 when not recorded)

let    | slots | slots_p

node   | frontend_bound  | - | Frontend_Bound  | frontend_bound > 0.15 | (idq_not_delivered - uop_dropping) / slots_p
node   | backend_bound   | - | Backend_Bound   | backend_bound > 0.2 | be_slots / slots_p
node   | retiring        | - | Retiring        | retiring > 0.7 | retired_slots / slots_p
node   | bad_speculation | - | Bad_Speculation | bad_speculation > 0.15 | max(1 - (frontend_bound + backend_bound + retiring), 0)
