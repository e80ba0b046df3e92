#!/bin/sh
# Two perfq builds on the same captures, measured in one run, one build
# after the other for each command (hyperfine medians of RUNS runs after a warm-up, default 5,
# and peak RSS): whether a change kept perfq's speed.
#   sh benches/before-after.sh OLD_PERFQ NEW_PERFQ CAPTURE [TOPDOWN_CAPTURE]
# CAPTURE is timed with convert, report, report --children and the
# inclusive query over its dataset; TOPDOWN_CAPTURE (default
# testdata/topdown-spr.data) with topdown --total. Prints a markdown table.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
old=$1 new=$2 capture=$3
td=${4:-$here/../testdata/topdown-spr.data}
dir=${PERFQ_BENCH_DIR:-/tmp/perfq-bench}/before-after
rm -rf "$dir"
mkdir -p "$dir"
runs=${RUNS:-5}
bench=before-after
. "$here/measure.sh"

# Each build its own dataset (and conversion cache: @CACHE@).
for b in old new; do
    eval "perfq=\$$b"
    "$perfq" convert -o "$dir/$b.dataset" "$capture" > /dev/null 2>&1
done

echo "| command | before | after | after / before |"
echo "|---|---|---|---|"
compare() {
    what=$1 line=$2
    prepare_line=${3:-}
    for b in old new; do
        eval "perfq=\$$b"
        cmd=$(echo "$line" | sed "s|@PERFQ@|$perfq|g; s|@DS@|$dir/$b.dataset|g; s|@CACHE@|$dir/$b.cache|g")
        prepare=$(echo "$prepare_line" | sed "s|@DS@|$dir/$b.dataset|g; s|@CACHE@|$dir/$b.cache|g")
        [ -n "$prepare" ] || prepare=true
        eval "m_$b=\"\$(measure $b \"\$cmd\")\""
    done
    python3 - "$what" $m_old $m_new <<'PY'
import sys
what, ow, oc, orss, nw, nc, nrss = sys.argv[1], *map(float, sys.argv[2:])
print(f"| {what} | {ow:.2f} s wall, {oc:.2f} s CPU, {orss:.0f} MiB | {nw:.2f} s wall, {nc:.2f} s CPU, {nrss:.0f} MiB | {nw/ow:.2f}× wall, {nc/oc:.2f}× CPU, {nrss/orss:.2f}× memory |")
PY
}
compare "convert" "@PERFQ@ convert --force -o $dir/out $capture"
compare "report" "@PERFQ@ report $capture"
compare "report --children" "@PERFQ@ report --children $capture"
compare "query: top 20 of function_total" \
    "@PERFQ@ query @DS@ 'SELECT symbol, dso, samples FROM function_total ORDER BY samples DESC LIMIT 20'"
compare "topdown --total (topdown-spr.data, cached)" \
    "PERFQ_CACHE_DIR=@CACHE@ @PERFQ@ topdown --total $td"
