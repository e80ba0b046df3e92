#!/bin/sh
# `perfq query` over one dataset, the whole process timed (session, the
# views a statement names, the query, the output): a count of the samples
# (perfq plans only the views a statement names, and this one names none),
# and the top TOP functions (default 5) of `function_self` and of
# `function_total`, the exclusive and the inclusive sums by function.
# Hyperfine means of 5 runs after a warm-up, then the peak RSS of one more
# run of each (/usr/bin/time).
#   sh benches/queries.sh DATASET        # TOP=3 for the top 3
# The datasets the figures were taken on:
#   $PERFQ_BENCH_DIR/build-fp.dataset                 benches/build-capture.sh
#   $PERFQ_BENCH_DIR/topdown-spr-10000000.dataset     benches/topdown.sh
# PERFQ names perfq (default: the release build; PERFQ_PROFILE=dist for
# dist).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
ds=$1
top=${TOP:-5}
profile=${PERFQ_PROFILE:-release}
root=$(cd "$here/.." && pwd)
. "$here/binaries.sh"
PERFQ=${PERFQ:-$(built "$profile" perfq perfq)}
count="SELECT COUNT(*) FROM samples"
self="SELECT symbol, dso, samples FROM function_self ORDER BY samples DESC LIMIT $top"
total="SELECT symbol, dso, samples FROM function_total ORDER BY samples DESC LIMIT $top"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# -N: no shell started around perfq, whose own start is part of what a
# user waits for (hyperfine splits the line itself, quotes included).
hyperfine -N -w 1 -r 5 --export-markdown "$out/query.md" \
    -n "COUNT(*) FROM samples" "$PERFQ query $ds '$count'" \
    -n "top $top of function_self" "$PERFQ query $ds '$self'" \
    -n "top $top of function_total" "$PERFQ query $ds '$total'" > /dev/null
cat "$out/query.md"
for q in "$count" "$self" "$total"; do
    /usr/bin/time -o "$out/rss" -f %M "$PERFQ" query "$ds" "$q" > /dev/null
    echo "peak RSS $(awk '{printf "%.0f MB", $1/1024}' "$out/rss"): $q"
done
