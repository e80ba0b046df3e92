#!/bin/sh
# What `perfq convert --stack-memory SIZE` trades, on the system-wide build
# captures of benches/build-capture.sh (recorded first if missing): each
# capture converted without a limit, at 64M and at 16M, in alternating
# rounds (ROUNDS, default 3: none, 64M, 16M, none, ...) so that the
# machine's drift over minutes moves the three alike, then
#   - wall time, CPU time (user + system) and peak RSS, medians of the rounds
#     (/usr/bin/time, one process a run);
#   - the rows of `stacks` and `frames` at each limit: past a cut a stack
#     or an address met again is written again (docs/schema.md), which is
#     what the limit costs;
#   - whether the answers are the same: `function_self` and
#     `function_total` as sorted CSV and `perfq flamegraph --folded`, each
#     limit against no limit.
# Prints a markdown table for docs/benchmarks.md, then the row counts and
# any difference.
#   sh benches/stack-memory.sh     # PERFQ names perfq (default: the release
#                                  # build; PERFQ_PROFILE=dist for dist)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${PERFQ_BENCH_DIR:-/tmp/perfq-bench}
# Release by default: docs/benchmarks.md's figures are the release
# build's, whose cold build is much shorter than dist's.
profile=${PERFQ_PROFILE:-release}
root=$(cd "$here/.." && pwd)
. "$here/binaries.sh"
PERFQ=${PERFQ:-$(built "$profile" perfq perfq)}
export PERFQ
LONG=${LONG-1} sh "$here/build-capture.sh" > /dev/null
rounds=${ROUNDS:-3}
limits="none 64M 16M"
work="$dir/stack-memory"
mkdir -p "$work"

# convert_once CAPTURE LIMIT: one conversion into its own folder (kept for
# the row counts and the answers), its "wall user sys rss_kib" appended to
# the limit's list.
convert_once() {
    out="$work/$(basename "$1" .data).$2"
    opt=""
    [ "$2" = none ] || opt="--stack-memory $2"
    /usr/bin/time -o "$work/time" -f "%e %U %S %M" \
        "$PERFQ" convert --force $opt -o "$out" "$1" > /dev/null
    cat "$work/time" >> "$work/$(basename "$1" .data).$2.runs"
}

# medians RUNS-FILE: "wall, CPU, peak RSS" of the runs, medians each.
medians() {
    python3 - "$1" <<'PY'
import statistics, sys
runs = [list(map(float, line.split())) for line in open(sys.argv[1])]
wall = statistics.median(r[0] for r in runs)
cpu = statistics.median(r[1] + r[2] for r in runs)
rss = statistics.median(r[3] for r in runs) / 1024
print(f"{wall:.2f} s, {cpu:.2f} s CPU, {rss:.0f} MB")
PY
}

# count DATASET TABLE: the table's rows.
count() {
    "$PERFQ" query "$1" "SELECT COUNT(*) AS n FROM $2" --format csv | tail -1
}

# answers DATASET PREFIX: what a user reads off the dataset, written
# where two limits can be compared byte for byte.
answers() {
    "$PERFQ" query "$1" "SELECT * FROM function_self" --format csv | sort > "$2.self.csv"
    "$PERFQ" query "$1" "SELECT * FROM function_total" --format csv | sort > "$2.total.csv"
    "$PERFQ" flamegraph --folded "$1" > "$2.folded"
}

echo "| capture | no limit | \`--stack-memory 64M\` | \`16M\` |"
echo "|---|---|---|---|"
report=""
for f in build-fp build-fp-4x build-dwarf; do
    data="$dir/$f.data"
    [ -f "$data" ] || continue
    for l in $limits; do rm -f "$work/$f.$l.runs"; done
    # A warm-up conversion: the capture and the binaries it names in the
    # page cache, the symbol tables on disk.
    "$PERFQ" convert --force -o "$work/$f.none" "$data" > /dev/null
    r=0
    while [ $r -lt "$rounds" ]; do
        for l in $limits; do convert_once "$data" "$l"; done
        r=$((r + 1))
    done
    cells=""
    for l in $limits; do
        cells="$cells $(medians "$work/$f.$l.runs") |"
    done
    echo "| $f |$cells"
    answers "$work/$f.none" "$work/$f.none"
    for l in $limits; do
        ds="$work/$f.$l"
        report="$report
$f $l: $(count "$ds" stacks) stacks, $(count "$ds" frames) frames rows"
        [ "$l" = none ] && continue
        answers "$ds" "$ds"
        for a in self.csv total.csv folded; do
            cmp -s "$work/$f.none.$a" "$ds.$a" || report="$report
$f $l: $a differs from no limit"
        done
    done
done
echo "$report"
