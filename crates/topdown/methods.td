# How each formula set's events are recorded: the event groups `perfq
# record` gives perf, what the machine must have for them, and the
# counters they take. `perfq record --print` shows the choice it makes
# from these rows on a machine; docs/topdown.md's method table is made
# from them.
#
# budget | set | general-purpose counters, SMT off | SMT on | items that take no general-purpose counter
#   The counters one hardware thread has (CPUID leaf 0xA on Intel; AMD's
#   core PMU; Arm's PMCR_EL0.N): Intel cores before Ice Lake share 8
#   between two threads, Ice Lake to Redwood Cove have 8 per thread and
#   Lion Cove 10 (Intel perfmon's counter lists). `cycles`,
#   `instructions` and `slots` go on fixed counters, the topdown metrics
#   on PERF_METRICS; an NMI watchdog takes the cycles counter (and on AMD,
#   which has no fixed counters, a general-purpose one).
budget | intel-hsw     | 8 | 4 | cycles inst_retired
budget | intel-skl     | 8 | 4 | cycles inst_retired
budget | intel-icl     | 8 | 8 | cycles slots td_retiring td_bad_spec td_fe_bound td_be_bound
budget | intel-icl-gp  | 8 | 8 | cycles
budget | intel-glc-gp  | 8 | 8 | cycles
budget | intel-glc     | 8 | 8 | cycles slots td_retiring td_bad_spec td_fe_bound td_be_bound td_heavy_ops td_br_mispredict td_fetch_lat td_mem_bound
budget | intel-lnc     | 10 | 10 | cycles slots td_retiring td_bad_spec td_fe_bound td_be_bound td_heavy_ops td_br_mispredict td_fetch_lat td_mem_bound
budget | intel-lnc-gp  | 10 | 10 | cycles
budget | intel-tremont | 4 | 4 | cycles
budget | intel-grt     | 6 | 6 | cycles
budget | intel-cmt     | 8 | 8 | cycles
budget | intel-skt     | 8 | 8 | cycles
budget | amd-zen4      | 6 | 6 | -
budget | amd-zen5      | 6 | 6 | -
budget | arm-sbsa          | 6 | 6 | cycles
budget | arm-neoverse-v1   | 6 | 6 | cycles
budget | arm-neoverse-n2v2 | 6 | 6 | cycles

# method | name | set | level | perf | groups
#   level: the deepest level it records (1 or 2).
#   perf: the perf versions that can open the groups (`any`, `>=6.13`).
#   groups: `;` between groups, each of the set's event roles (`cycles`
#   and `instructions` also as perf's generic events), the sampler first,
#   except that a `slots` leader is never the sampler (perf makes the next
#   member sample). Each group fits the counters with SMT off; where a
#   machine has fewer, a group led by `cycles` is cut, in order, into
#   groups that fit, each led by its own `cycles`. Groups take turns on
#   the counters, and the query scales each by its share of `cycles`.
#   Named kernel events (`slots`, `topdown-*`) must be in the PMU's
#   sysfs `events/` for the method to be chosen.
method | hsw-l1       | intel-hsw     | 1 | any    | cycles idq_not_delivered uops_issued uops_retired_slots recovery_cycles
method | hsw-l2       | intel-hsw     | 2 | any    | cycles idq_not_delivered uops_issued uops_retired_slots recovery_cycles ; cycles idq_0_uops br_misp clears
method | skl-l1       | intel-skl     | 1 | any    | cycles idq_not_delivered uops_issued uops_retired_slots recovery_cycles
method | skl-l2       | intel-skl     | 2 | any    | cycles idq_not_delivered uops_issued uops_retired_slots recovery_cycles ; cycles idq_0_uops br_misp clears macro_fused inst_retired ; cycles stalls_mem_any bound_on_stores stalls_total ports_util_1 ports_util_2
# Ice Lake and later: perf <= 6.12 re-sorts a group with topdown metrics
# so that one of them becomes the sampler, which the kernel refuses
# (perf's arch_evlist__cmp in tools/perf/arch/x86/util/evlist.c).
method | icl-metrics  | intel-icl     | 1 | >=6.13 | slots cycles td_retiring td_bad_spec td_fe_bound td_be_bound uop_dropping clears_count
method | icl-metrics2 | intel-icl     | 2 | >=6.13 | slots cycles td_retiring td_bad_spec td_fe_bound td_be_bound uop_dropping clears_count idq_0_uops br_misp clears
method | glc-metrics  | intel-glc     | 1 | >=6.13 | slots cycles td_retiring td_bad_spec td_fe_bound td_be_bound uop_dropping
method | glc-metrics2 | intel-glc     | 2 | >=6.13 | slots cycles td_retiring td_bad_spec td_fe_bound td_be_bound td_heavy_ops td_br_mispredict td_fetch_lat td_mem_bound uop_dropping
# The same cores counted on general-purpose counters: any perf opens it.
method | icl-gp       | intel-icl-gp  | 1 | any    | cycles slots_p idq_not_delivered be_slots retired_slots uop_dropping clears_count
method | glc-gp       | intel-glc-gp  | 1 | any    | cycles slots_p idq_not_delivered be_slots retired_slots uop_dropping
method | lnc-metrics  | intel-lnc     | 1 | >=6.13 | slots cycles td_retiring td_bad_spec td_fe_bound td_be_bound
method | lnc-metrics2 | intel-lnc     | 2 | >=6.13 | slots cycles td_retiring td_bad_spec td_fe_bound td_be_bound td_heavy_ops td_br_mispredict td_fetch_lat td_mem_bound
method | lnc-gp       | intel-lnc-gp  | 1 | any    | cycles slots_p idq_not_delivered be_slots retired_slots
method | tremont-l1   | intel-tremont | 1 | any    | cycles fe_slots bad_slots be_slots ret_slots
method | grt-l1       | intel-grt     | 1 | any    | cycles fe_slots be_slots ret_slots
method | grt-l2       | intel-grt     | 2 | any    | cycles fe_slots be_slots ret_slots ; cycles fe_latency fe_bandwidth mispredict machine_clear alloc_restrict
method | cmt-l1       | intel-cmt     | 1 | any    | cycles fe_slots bad_slots be_slots ret_slots
method | cmt-l2       | intel-cmt     | 2 | any    | cycles fe_slots bad_slots be_slots ret_slots ; cycles fe_latency fe_bandwidth mispredict machine_clear alloc_restrict
method | skt-l1       | intel-skt     | 1 | any    | cycles fe_slots bad_slots be_slots ret_slots
method | skt-l2       | intel-skt     | 2 | any    | cycles fe_slots bad_slots be_slots ret_slots ; cycles fe_latency fe_bandwidth mispredict machine_clear alloc_restrict
method | zen4-l1      | amd-zen4      | 1 | any    | cycles fe_slots be_slots dispatched retired smt_slots
method | zen4-l2      | amd-zen4      | 2 | any    | cycles fe_slots be_slots dispatched retired smt_slots ; cycles fe_cycles br_misp resyncs load_not_complete not_complete ; cycles retired ucode
method | zen5-l1      | amd-zen5      | 1 | any    | cycles fe_slots be_slots dispatched retired smt_slots
method | zen5-l2      | amd-zen5      | 2 | any    | cycles fe_slots be_slots dispatched retired smt_slots ; cycles fe_cycles br_misp resyncs load_not_complete not_complete ; cycles retired ucode
method | sbsa-l1      | arm-sbsa          | 1 | any | cycles stall_slot_frontend stall_slot_backend stall_slot op_retired op_spec
method | v1-l1        | arm-neoverse-v1   | 1 | any | cycles stall_slot_frontend stall_slot_backend stall_slot op_retired op_spec br_mis_pred
method | n2v2-l1      | arm-neoverse-n2v2 | 1 | any | cycles stall_slot_frontend stall_slot_backend stall_slot op_retired op_spec br_mis_pred
