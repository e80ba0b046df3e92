#!/bin/sh
# Off-CPU time on a system-wide switch capture of a build (recorded here
# unless $PERFQ_BENCH_DIR has it: `perf record -a -g -e sched:sched_switch
# -e sched:sched_wakeup` for SECONDS_RECORDED, default 60 s, while this
# workspace builds from scratch), in one run (hyperfine medians):
#   convert                 `perfq convert` against `perf script > /dev/null`
#   report --off-cpu        from the capture (no conversion, as `perfq
#                           report`), against `perf sched timehist >
#                           /dev/null` (its per-switch lines and their sums)
# then the capture's shape: switch-outs, intervals, how their ends were
# found.
#   sh benches/off-cpu.sh          # PERFQ names perfq (default: release build)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PERFQ_BENCH_DIR:-/tmp/perfq-bench}
secs=${SECONDS_RECORDED:-60}
runs=${RUNS:-5}
. "$root/benches/binaries.sh"
PERFQ=${PERFQ:-$(built release perfq perfq)}
mkdir -p "$dir"
record_build build-sched.data "$secs" -g -e sched:sched_switch -e sched:sched_wakeup
data="$dir/build-sched.data"
out="$dir/off-cpu-out"
export PERFQ_CACHE_DIR="$dir/off-cpu-cache"
echo "capture: $(du -h "$data" | cut -f1), $("$PERFQ" info --format json "$data" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])') samples"
hyperfine -N --warmup 1 --runs "$runs" --prepare "rm -rf $out" \
    -n "perfq convert" "$PERFQ convert -o $out $data" \
    -n "perf script" "sh -c 'perf script -i $data > /dev/null 2>&1'"
hyperfine -N --warmup 1 --runs "$runs" \
    -n "perfq report --off-cpu" "$PERFQ report $data --off-cpu" \
    -n "perf sched timehist" "sh -c 'perf sched timehist -i $data > /dev/null 2>&1'"
"$PERFQ" query "$data" "SELECT end_from, state, COUNT(*) AS intervals,
    CAST(SUM(duration_ns) / 1e6 AS BIGINT) AS ms FROM off_cpu GROUP BY 1, 2 ORDER BY 3 DESC"
rm -rf "$out"
