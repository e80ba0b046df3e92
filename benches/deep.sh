#!/bin/sh
# perfq next to perf on a capture of deep, repeating stacks: perfq-gen's
# Sapphire Rapids layout (ten group members a sample, so perf and perfq
# deliver ten samples per record) with random call paths 40-100 frames
# deep through testdata/td-demo, SAMPLES records (default 1,000,000; the
# file is ~750 MB in $PERFQ_BENCH_DIR, default /tmp/perfq-bench). Wall and
# CPU time (hyperfine medians, RUNS runs after a warm-up, default 1: perf
# takes over a minute) and peak RSS of
#   perfq report --children     vs  perf report --stdio --children -g none
#   perfq report                vs  perf report --stdio --no-children
# Prints a markdown table for docs/benchmarks.md.
#   sh benches/deep.sh [SAMPLES]    # PERFQ names perfq (default: the dist
#                                   # build; PERFQ_PROFILE=release for release)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PERFQ_BENCH_DIR:-/tmp/perfq-bench}
samples=${1:-1000000}
runs=${RUNS:-1}
mkdir -p "$dir"
# The capture names testdata/td-demo as its program, relative: perf and
# perfq find it from the checkout.
cd "$root"
. "$root/benches/binaries.sh"
PERFQ_GEN=${PERFQ_GEN:-$(built release perfq-testgen perfq-gen)}
PERFQ=${PERFQ:-$(built "${PERFQ_PROFILE:-dist}" perfq perfq)}
data="$dir/deep-$samples.data"
[ -f "$data" ] || "$PERFQ_GEN" --preset sapphirerapids \
    --samples "$samples" --depth 60 -o "$data" > /dev/null

bench=deep
. "$root/benches/measure.sh"

echo "| command | perf | perfq | ratio |"
echo "|---|---|---|---|"
echo "| **deep-$samples.data** | | | |"
row "report --children vs perf report --children -g none" "$PERFQ report --children $data > /dev/null" \
    "perf report -i $data --stdio --children --sort dso,sym -g none > /dev/null"
row "report vs perf report --no-children" "$PERFQ report $data > /dev/null" \
    "perf report -i $data --stdio --no-children --sort dso,sym > /dev/null"
