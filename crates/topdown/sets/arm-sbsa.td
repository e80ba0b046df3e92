set    | arm-sbsa
title  | Arm cores with the architected slot events (perf's generic sbsa.json set)
pmu    | arm
mask   | 0xffff
source | perf tools/perf/pmu-events/arch/arm64/sbsa.json (Linux 6.12.117). width is the recorded `slots` capability of the core PMU (PMMIR_EL1.SLOTS). perf publishes no thresholds for Arm: perfq flags with the Intel P-core ones (docs/topdown.md)
record | perf record -e '{cpu_cycles,stall_slot_frontend,stall_slot_backend,stall_slot,op_retired,op_spec}:S' -g -- CMD

const  | width | 0 | slots per cycle: from the capture's PMU caps
event  | cycles              | hw 0, raw 0x11 | required | CPU_CYCLES
event  | stall_slot_frontend | raw 0x3e       | required | STALL_SLOT_FRONTEND
event  | stall_slot_backend  | raw 0x3d       | required | STALL_SLOT_BACKEND
event  | stall_slot          | raw 0x3f       | required | STALL_SLOT
event  | op_retired          | raw 0x3a       | required | OP_RETIRED
event  | op_spec             | raw 0x3b       | required | OP_SPEC

let    | slots | width * cycles

node   | frontend_bound  | - | frontend_bound  | frontend_bound > 0.15  | stall_slot_frontend / slots
node   | bad_speculation | - | bad_speculation | bad_speculation > 0.15 | (1 - op_retired / op_spec) * (1 - stall_slot / slots)
node   | retiring        | - | retiring        | retiring > 0.7         | op_retired / op_spec * (1 - stall_slot / slots)
node   | backend_bound   | - | backend_bound   | backend_bound > 0.2    | stall_slot_backend / slots
