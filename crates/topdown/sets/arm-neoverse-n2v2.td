set    | arm-neoverse-n2v2
title  | Arm Neoverse N2 and V2
pmu    | arm
mask   | 0xffff
source | perf tools/perf/pmu-events/arch/arm64/arm/neoverse-n2-v2/metrics.json (Linux 6.12.117); Arm Telemetry Solution. perf publishes no thresholds for Arm: perfq flags with the Intel P-core ones (docs/topdown.md)
record | perf record -e '{cpu_cycles,stall_slot_frontend,stall_slot_backend,stall_slot,op_retired,op_spec,br_mis_pred}:S' -g -- CMD

const  | width       | 8 | slots per cycle: the recorded `slots` capability replaces it (N2: 5, V2: 8)
const  | cycles_bias | 0 | 1 on N2 r0p0-r0p2, whose STALL_SLOT counts include one slot per cycle (perf's strcmp_cpuid_str(0x410fd493) test)
event  | cycles              | hw 0, raw 0x11 | required | CPU_CYCLES
event  | stall_slot_frontend | raw 0x3e       | required | STALL_SLOT_FRONTEND
event  | stall_slot_backend  | raw 0x3d       | required | STALL_SLOT_BACKEND
event  | stall_slot          | raw 0x3f       | required | STALL_SLOT
event  | op_retired          | raw 0x3a       | required | OP_RETIRED
event  | op_spec             | raw 0x3b       | required | OP_SPEC
event  | br_mis_pred         | raw 0x10       | required | BR_MIS_PRED

let    | slots   | width * cycles
let    | x_front | stall_slot_frontend - cycles_bias * cycles
let    | x_stall | stall_slot - cycles_bias * cycles

node   | frontend_bound  | - | frontend_bound  | frontend_bound > 0.15  | x_front / slots - br_mis_pred / cycles
node   | bad_speculation | - | bad_speculation | bad_speculation > 0.15 | (1 - op_retired / op_spec) * (1 - x_stall / slots) + br_mis_pred * 4 / cycles
node   | retiring        | - | retiring        | retiring > 0.7         | op_retired / op_spec * (1 - x_stall / slots)
node   | backend_bound   | - | backend_bound   | backend_bound > 0.2    | stall_slot_backend / slots - br_mis_pred * 3 / cycles
