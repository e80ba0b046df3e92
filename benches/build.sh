#!/bin/sh
# perfq next to perf on the system-wide build captures of
# benches/build-capture.sh (recorded first if missing): wall and CPU time
# (hyperfine medians, RUNS runs after a warm-up, default 3) and peak RSS
# (/usr/bin/time) of
#   perfq convert               vs  perf script > /dev/null
#   perfq report                vs  perf report --stdio --no-children --sort dso,sym
#   perfq report --children     vs  perf report --stdio --children --sort dso,sym -g none
#   perfq query DATASET "top 20 of function_total"   (no perf equivalent)
#   perfq html DATASET          vs  perfq report (the page within 2x of
#                                   the report, in one run)
# and, with STACK_MEMORY=SIZE (e.g. 16M), also
#   perfq convert --stack-memory SIZE   vs  perf script > /dev/null
# (memory bounded in capture length: docs/schema.md).
# Prints a markdown table for docs/benchmarks.md.
#   sh benches/build.sh         # PERFQ names perfq (default: the dist build;
#                               # PERFQ_PROFILE=release for the release one)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${PERFQ_BENCH_DIR:-/tmp/perfq-bench}
# The benchmarks measure the dist build (fat LTO, Cargo.toml), as
# captures.sh and topdown.sh do.
profile=${PERFQ_PROFILE:-dist}
root=$(cd "$here/.." && pwd)
. "$here/binaries.sh"
PERFQ=${PERFQ:-$(built "$profile" perfq perfq)}
export PERFQ
sh "$here/build-capture.sh" > /dev/null
runs=${RUNS:-3}
out="$dir/build-convert-out"

bench=build
prepare="rm -rf $out"
. "$here/measure.sh"

echo "| command | perf | perfq | ratio |"
echo "|---|---|---|---|"
for f in build-fp build-dwarf build-fp-4x; do
    data="$dir/$f.data"
    [ -f "$data" ] || continue
    ds="$dir/$f.dataset"
    # On DWARF captures perf's default inline expansion runs addr2line for
    # every unwound address (over 45 minutes on build-dwarf.data): perf is
    # timed without it, perfq with its inlined frames.
    noinline=""
    case $f in *dwarf*) noinline=--no-inline ;; esac
    echo "| **$f.data** | | | |"
    row "convert vs perf script $noinline" "$PERFQ convert --force -o $out $data" \
        "perf script $noinline -i $data > /dev/null"
    if [ -n "${STACK_MEMORY:-}" ]; then
        row "convert --stack-memory $STACK_MEMORY vs perf script $noinline" \
            "$PERFQ convert --force --stack-memory $STACK_MEMORY -o $out $data" \
            "perf script $noinline -i $data > /dev/null"
    fi
    row "report vs perf report --no-children $noinline" "$PERFQ report $data > /dev/null" \
        "perf report $noinline -i $data --stdio --no-children --sort dso,sym > /dev/null"
    row "report --children vs perf report --children -g none $noinline" "$PERFQ report --children $data > /dev/null" \
        "perf report $noinline -i $data --stdio --children --sort dso,sym -g none > /dev/null"
    q=$(measure t "$PERFQ query $ds 'SELECT symbol, dso, samples FROM function_total ORDER BY samples DESC LIMIT 20' > /dev/null")
    set -- $q
    echo "| function_total top 20 over the dataset | | $1 s wall, $2 s CPU, $3 MiB | |"
    h=$(measure h "$PERFQ html $ds -o $dir/$f.html")
    r=$(measure r "$PERFQ report $data > /dev/null")
    python3 - $h $r <<'PY'
import sys
hw, hc, hr, rw, rc, rr = map(float, sys.argv[1:])
print(f"| html over the dataset vs perfq report | report {rw:.2f} s wall, {rc:.2f} s CPU, {rr:.0f} MiB | {hw:.2f} s wall, {hc:.2f} s CPU, {hr:.0f} MiB | {hw/rw:.2f}× the report's wall time |")
PY
done
