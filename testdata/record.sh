#!/bin/sh
# Re-records the captures in testdata/ on this machine (perf 6.1, x86_64,
# software events only: no hardware PMU here). Run from anywhere:
#   sh testdata/record.sh
# Every file it writes is listed in testdata/README.md; a test checks that.
set -eu
cd "$(dirname "$0")"
r() { perf record -q "$@" 2>/dev/null; }

# Frame-pointer callchains, cpu and period in every sample.
r -o fp.data -g -F 4000 --sample-cpu -e cpu-clock -- ./work.sh
# DWARF callchains: user registers and 2 KiB stack dumps.
r -o dwarf.data --call-graph dwarf,2048 -F 1000 -e cpu-clock -- ./work.sh
# Group read, leader sampling: one sample carries all three counters. perf
# 6.1 turns inherit off for a sampled group, so the workload is one process.
r -o group.data -e '{task-clock,page-faults,context-switches}:S' -c 250000 -g -- sh -c 'exec seq 1 4000000 > /dev/null'
# Two independent events: samples carry IDENTIFIER.
r -o multi.data -e cpu-clock,page-faults -c 100000 -g --sample-cpu -- ./work.sh
# zstd-compressed records.
r -o compressed.data -z -g -F 4000 --sample-cpu -e cpu-clock -- ./work.sh
# Pipe mode saved to a file.
r -o - -g -F 4000 --sample-cpu -e cpu-clock -- ./work.sh > pipe.data
# Pipe mode, compressed, with a group read.
r -o - -z -e '{task-clock,page-faults}:S' -c 250000 -g -- sh -c 'exec seq 1 2000000 > /dev/null' > group-pipe.data
# Off-CPU: waits (waits.c) sleeping, on a mutex, on a pipe, and preempted,
# recorded four ways. System-wide, with wakeups (perf sched timehist reads
# it):
r -o off-cpu-all.data -a -g -e sched:sched_switch -e sched:sched_wakeup -- ./waits
# The one command: switch-outs of other processes' threads are not seen.
r -o off-cpu-task.data -g -e sched:sched_switch -- ./waits
# Context-switch records with cpu-clock samples, no tracepoint.
r -o off-cpu-switches.data -g -F 4000 -e cpu-clock --switch-events -- ./waits
# Both: the tracepoint's switch-outs, ended by switch records. (No -F:
# given, it would sample the tracepoint too, a switch in every few.)
r -o off-cpu-both.data -g -e sched:sched_switch -e cpu-clock --switch-events -- ./waits
# Generated, not recorded (this machine has no PMU): a Sapphire Rapids
# top-down group over td-demo, written by crates/testgen.
(cd .. && cargo run -q -p perfq-testgen --release --bin perfq-gen -- --preset sapphirerapids --samples 2600 -o testdata/topdown-spr.data)
# perf keeps the previous file of each name as NAME.old: not test data.
rm -f ./*.data.old
chmod 644 ./*.data
