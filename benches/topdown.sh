#!/bin/sh
# perfq topdown on a generated Sapphire Rapids capture of 10 M samples with
# realistic stack depth (random call paths of depth 8-20 through
# testdata/td-demo): the targets of docs/topdown.md's benchmarks.
#   - per-function level-1 self over the converted dataset
#   - level-2 total (inclusive) over the dataset
#   - `perfq topdown FILE --no-cache` cold (conversion included), next to
#     `perf script` alone on the same file (what a text-parsing tool needs
#     before it starts)
#   - `perfq topdown FILE` into an empty cache (the cache's dataset keeps
#     every table's rows, read_values' too, for the questions after)
#   - peak RSS of each
# Usage: sh benches/topdown.sh [samples]   (default 10000000; the capture
# is ~4.3 GB, written to $PERFQ_BENCH_DIR, default /tmp/perfq-bench)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PERFQ_BENCH_DIR:-/tmp/perfq-bench}
samples=${1:-10000000}
# PERFQ_PROFILE=release measures the release build instead of dist (fat
# LTO), whose cold build with DataFusion takes much longer.
profile=${PERFQ_PROFILE:-dist}
mkdir -p "$dir"
cd "$root"
. "$root/benches/binaries.sh"
perfq=${PERFQ:-$(built "$profile" perfq perfq)}
gen=${PERFQ_GEN:-$(built "$profile" perfq-testgen perfq-gen)}
file=$(spr_capture "$gen" "$samples")
dataset="$dir/topdown-spr-$samples.dataset"
[ -d "$dataset" ] || "$perfq" convert "$file" -o "$dataset" >/dev/null
export PERFQ_CACHE_DIR="$dir/cache"
ls -l "$file"

rss() { # peak RSS in MB of a command
    /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1 | awk '{printf "%.0f MB\n", $1/1024}'
}

echo "== level 1, self, by function, over the dataset"
hyperfine -w 1 -r 5 "$perfq topdown $dataset"
echo "peak RSS: $(rss "$perfq" topdown "$dataset")"
echo "== level 2, total, by function, over the dataset"
hyperfine -w 1 -r 5 "$perfq topdown $dataset --level 2 --total"
echo "peak RSS: $(rss "$perfq" topdown "$dataset" --level 2 --total)"
echo "== cold: perfq topdown FILE --no-cache (conversion included)"
hyperfine -r 3 "$perfq topdown $file --no-cache"
echo "peak RSS: $(rss "$perfq" topdown "$file" --no-cache)"
echo "== cold: perfq topdown FILE into an empty cache"
empty="$dir/empty-cache"
hyperfine -r 3 --prepare "rm -rf $empty" "PERFQ_CACHE_DIR=$empty $perfq topdown $file"
rm -rf "$empty"
echo "peak RSS: $(rss env PERFQ_CACHE_DIR="$empty" "$perfq" topdown "$file")"
rm -rf "$empty"
echo "== perf script alone on the same file"
hyperfine -r 1 "perf script -i $file > /dev/null"
echo "peak RSS: $(rss perf script -i "$file")"
