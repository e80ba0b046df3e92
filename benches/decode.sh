#!/bin/sh
# Decode throughput of perfq next to perf on the same large captures.
#   sh benches/decode.sh            # records the captures if missing, then measures
# Captures go to $PERFQ_BENCH_DIR (default /tmp/perfq-bench); they are not
# committed. Needs perf, hyperfine and a release build of perfq.
# Prints a markdown table for docs/benchmarks.md.
. "$(dirname "$0")/captures.sh"

echo "| capture | size | samples | perfq info | perfq dump | perf script | perf report -D | perfq info MB/s | perfq info samples/s | info vs perf script | info vs perf report -D | dump vs perf script |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for f in fp-large dwarf-large; do
    data="$dir/$f.data"
    size=$(stat -c %s "$data")
    samples=$("$perfq" info --json "$data" | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])')
    hyperfine -N --warmup 1 --runs 5 --export-json "$dir/$f.perfq.json" "$perfq info $data" >/dev/null
    hyperfine --runs 3 --export-json "$dir/$f.dump.json" "$perfq dump $data > /dev/null 2>&1" >/dev/null
    hyperfine --runs 2 --export-json "$dir/$f.script.json" "perf script -i $data > /dev/null 2>&1" >/dev/null
    hyperfine --runs 2 --export-json "$dir/$f.reportd.json" "perf report -D -i $data > /dev/null 2>&1" >/dev/null
    python3 - "$dir/$f" "$size" "$samples" <<'PY'
import json, sys
base, size, samples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t = {k: json.load(open(f"{base}.{k}.json"))["results"][0]["median"] for k in ("perfq", "dump", "script", "reportd")}
name = base.rsplit("/", 1)[1]
print(f"| {name} | {size/1e6:.0f} MB | {samples:,} | {t['perfq']:.3f} s | {t['dump']:.2f} s | {t['script']:.2f} s | {t['reportd']:.2f} s "
      f"| {size/1e6/t['perfq']:,.0f} | {samples/t['perfq']/1e6:.2f} M | {t['script']/t['perfq']:.0f}x | {t['reportd']/t['perfq']:.0f}x "
      f"| {t['script']/t['dump']:.1f}x |")
PY
done
