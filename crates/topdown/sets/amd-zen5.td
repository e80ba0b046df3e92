set    | amd-zen5
title  | AMD Zen 5 (family 0x1a, 8-wide dispatch)
pmu    | core
mask   | 0xfff84ffff
source | perf tools/perf/pmu-events/arch/x86/amdzen5/pipeline.json (torvalds/linux a9fe4ac7a3a2). perf publishes no thresholds for AMD: perfq flags with the Intel P-core ones (docs/topdown.md)
record | perf record -e '{cycles,r1000001a0,r100001ea0,r7aa,rc1,r1000060a0}:S' -g -- CMD

const  | width | 8 | dispatch width
event  | cycles            | hw 0, raw 0x76   | required | ls_not_halted_cyc
event  | fe_slots          | raw 0x1000001a0  | required | de_no_dispatch_per_slot.no_ops_from_frontend
event  | be_slots          | raw 0x100001ea0  | required | de_no_dispatch_per_slot.backend_stalls
event  | smt_slots         | raw 0x1000060a0  | required | de_no_dispatch_per_slot.smt_contention
event  | dispatched        | raw 0x7aa        | required | de_src_op_disp.all
event  | retired           | raw 0xc1         | required | ex_ret_ops
event  | fe_cycles         | raw 0x1080001a0  | required | de_no_dispatch_per_slot.no_ops_from_frontend, cmask=8
event  | br_misp           | raw 0xc3         | required | ex_ret_brn_misp
event  | resyncs           | raw 0x19f        | required | bp_redirects.resync
event  | not_complete      | raw 0x2d6        | required | ex_no_retire.not_complete
event  | load_not_complete | raw 0xa2d6       | required | ex_no_retire.load_not_complete
event  | ucode             | raw 0x1000000c2  | required | ex_ret_ucode_ops

let    | slots | width * cycles

node   | frontend_bound     | -               | Frontend Bound     | frontend_bound > 0.15  | d_ratio(fe_slots, slots)
node   | bad_speculation    | -               | Bad Speculation    | bad_speculation > 0.15 | d_ratio(dispatched - retired, slots)
node   | backend_bound      | -               | Backend Bound      | backend_bound > 0.2    | d_ratio(be_slots, slots)
node   | smt_contention     | -               | SMT Contention     | -                      | d_ratio(smt_slots, slots)
node   | retiring           | -               | Retiring           | retiring > 0.7         | d_ratio(retired, slots)
node   | fetch_latency      | frontend_bound  | Frontend Latency   | fetch_latency > 0.1    | d_ratio(width * fe_cycles, slots)
node   | fetch_bandwidth    | frontend_bound  | Frontend Bandwidth | fetch_bandwidth > 0.2  | d_ratio(fe_slots - width * fe_cycles, slots)
node   | branch_mispredicts | bad_speculation | Mispredicts        | branch_mispredicts > 0.1 | d_ratio(bad_speculation * br_misp, br_misp + resyncs)
node   | machine_clears     | bad_speculation | Pipeline Restarts  | machine_clears > 0.1   | d_ratio(bad_speculation * resyncs, br_misp + resyncs)
node   | memory_bound       | backend_bound   | Memory             | memory_bound > 0.2     | backend_bound * d_ratio(load_not_complete, not_complete)
node   | core_bound         | backend_bound   | CPU                | core_bound > 0.1       | backend_bound * (1 - d_ratio(load_not_complete, not_complete))
node   | heavy_operations   | retiring        | Microcode          | heavy_operations > 0.1 | retiring * d_ratio(ucode, retired)
node   | light_operations   | retiring        | Fastpath           | light_operations > 0.6 | retiring * (1 - d_ratio(ucode, retired))
