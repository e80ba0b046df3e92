set    | intel-tremont
title  | Intel Tremont E-cores (Elkhart Lake, Snow Ridge; 4-wide)
pmu    | core
mask   | 0xff13ffa4ffff
source | pmu-tools ehl_ratios.py (Pipeline_Width 4, SLOTS = 4 * CPU_CLK_UNHALTED.CORE); encodings perf snowridgex/pipeline.json. perf 6.12 has no TMA metrics for Tremont
record | perf record -e '{cycles,cpu/event=0x71/,cpu/event=0x73,umask=0x6/,cpu/event=0x74/,cpu/event=0xc2/}:S' -g -- CMD

const  | width | 4 | pipeline width
event  | cycles      | hw 0, raw 0x3c | required | CPU_CLK_UNHALTED.CORE
event  | fe_slots    | raw 0x71       | required | TOPDOWN_FE_BOUND.ALL
event  | bad_slots   | raw 0x673      | required | TOPDOWN_BAD_SPECULATION.ALL
event  | be_slots    | raw 0x74       | required | TOPDOWN_BE_BOUND.ALL
event  | ret_slots   | raw 0xc2       | required | TOPDOWN_RETIRING.ALL

let    | slots | width * cycles

node   | frontend_bound  | - | Frontend_Bound  | frontend_bound > 0.2   | fe_slots / slots
node   | bad_speculation | - | Bad_Speculation | bad_speculation > 0.15 | bad_slots / slots
node   | backend_bound   | - | Backend_Bound   | backend_bound > 0.1    | be_slots / slots
node   | retiring        | - | Retiring        | retiring > 0.75        | ret_slots / slots
