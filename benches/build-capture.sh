#!/bin/sh
# The captures people actually have: system-wide, with callchains, while a
# real build runs (this workspace's own `cargo build --release`, from
# scratch in a target folder of its own, so that rustc, cc1, the linker and
# cargo are all busy). Written to $PERFQ_BENCH_DIR (default
# /tmp/perfq-bench; not committed):
#   build-fp.data      perf record -a -g -F 4999, SECONDS_RECORDED (default 60) s
#   build-fp-4x.data   the same for 4 × as long (with LONG=1)
#   build-dwarf.data   perf record -a --call-graph dwarf,8192 -F 999, a third as long
# then prints each one's shape (samples, DSOs, distinct addresses, stacks,
# depth), read by perfq from its converted dataset, and that dataset's size
# on disk (and its stacks table's: the one the stack encodings change).
#   sh benches/build-capture.sh         # PERFQ names perfq (default: release build)
# Needs perf allowed to record system-wide (root, or perf_event_paranoid <= 0).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PERFQ_BENCH_DIR:-/tmp/perfq-bench}
secs=${SECONDS_RECORDED:-60}
. "$root/benches/binaries.sh"
PERFQ=${PERFQ:-$(built release perfq perfq)}
mkdir -p "$dir"

record_build build-fp.data "$secs" -g -F 4999
[ -n "${LONG:-}" ] && record_build build-fp-4x.data $((secs * 4)) -g -F 4999
record_build build-dwarf.data $((secs / 3)) --call-graph dwarf,8192 -F 999

# The shape of each capture, from its dataset.
for f in "$dir"/build-*.data; do
    ds="$dir/$(basename "$f" .data).dataset"
    [ -d "$ds" ] || "$PERFQ" convert "$f" -o "$ds" >/dev/null
    echo "== $(basename "$f") ($(du -h "$f" | cut -f1))"
    "$PERFQ" query "$ds" "SELECT
        (SELECT COUNT(*) FROM samples) AS samples,
        (SELECT COUNT(DISTINCT dso) FROM frames) AS dsos,
        (SELECT COUNT(*) FROM frames WHERE inline_depth = 0) AS addresses,
        (SELECT COUNT(*) FROM stacks) AS stacks,
        (SELECT COUNT(*) FROM stacks WHERE frame_ids IS NOT NULL) AS sampled_stacks,
        (SELECT MAX(depth) FROM stacks) AS max_depth,
        (SELECT AVG(depth) FROM samples s JOIN stacks t ON t.stack_id = s.stack_id) AS mean_depth"
    echo "dataset: $(du -sb "$ds" | cut -f1) bytes, stacks.parquet $(du -cb "$ds"/capture=*/stacks.parquet | tail -1 | cut -f1) bytes"
done
