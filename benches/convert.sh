#!/bin/sh
# `perfq convert` next to `perf script > /dev/null` on the same captures:
# whole-process time (hyperfine medians: perfq 10 runs after a warm-up,
# perf 3; the shared host's speed drifts by ±10% over minutes, so more
# runs than a quiet machine needs), peak RSS (/usr/bin/time), Parquet size.
#   sh benches/convert.sh            # records the captures if missing, then measures
# fp-large-4x is fp-large recorded for 4x as long, to show that peak RSS
# does not grow with the capture's length (captures: benches/captures.sh).
# Prints a markdown table for docs/benchmarks.md.
. "$(dirname "$0")/captures.sh"

out="$dir/convert-out"
echo "| capture | size | samples | perfq convert | perf script | ratio | perfq CPU | perfq peak RSS | perf script peak RSS | Parquet size | Parquet / perf.data |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for f in fp-large fp-large-4x dwarf-large; do
    data="$dir/$f.data"
    size=$(stat -c %s "$data")
    samples=$("$perfq" info --json "$data" | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])')
    hyperfine --warmup 1 --runs 10 --export-json "$dir/$f.convert.json" \
        --prepare "rm -rf $out" "$perfq convert --force -o $out $data" >/dev/null
    hyperfine --runs 3 --export-json "$dir/$f.script.json" "perf script -i $data > /dev/null 2>&1" >/dev/null
    rm -rf "$out"
    /usr/bin/time -o "$dir/rss" -f %M "$perfq" convert -o "$out" "$data" >/dev/null
    rss_q=$(tail -1 "$dir/rss")
    parquet=$(du -sb "$out" | cut -f1)
    rm -rf "$out"
    /usr/bin/time -o "$dir/rss" -f %M perf script -i "$data" >/dev/null 2>&1
    rss_p=$(tail -1 "$dir/rss")
    python3 - "$dir/$f" "$size" "$samples" "$rss_q" "$rss_p" "$parquet" <<'PY'
import json, sys
base, size, samples, rss_q, rss_p, parquet = sys.argv[1], *map(int, sys.argv[2:])
res = {k: json.load(open(f"{base}.{k}.json"))["results"][0] for k in ("convert", "script")}
t = {k: r["median"] for k, r in res.items()}
# CPU time (user + system, mean of the runs): steadier than wall time
# when the host's other load comes and goes.
cpu = res["convert"]["user"] + res["convert"]["system"]
name = base.rsplit("/", 1)[1]
print(f"| {name} | {size/1e6:.0f} MB | {samples:,} | {t['convert']:.2f} s | {t['script']:.2f} s | {t['script']/t['convert']:.1f}x "
      f"| {cpu:.2f} s | {rss_q/1024:.0f} MB | {rss_p/1024:.0f} MB | {parquet/1e6:.0f} MB | {parquet/size:.2f}x |")
PY
done
