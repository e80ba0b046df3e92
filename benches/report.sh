#!/bin/sh
# perfq report next to perf report on the same system-wide capture with
# callchains (fp-large.data, recorded by benches/decode.sh).
#   sh benches/report.sh
# Prints a markdown table for docs/benchmarks.md.
. "$(dirname "$0")/captures.sh"
data="$dir/fp-large.data"
t() { # name command...
    name=$1; shift
    hyperfine --warmup 1 --runs "${RUNS:-3}" --export-json "$dir/report.$name.json" "$*" > /dev/null
    python3 -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["results"][0]["median"])' "$dir/report.$name.json"
}
pq_self=$(t pq_self "$perfq report $data > /dev/null")
pq_children=$(t pq_children "$perfq report --children $data > /dev/null")
p_self=$(t p_self "perf report -i $data --stdio --no-children --sort dso,sym > /dev/null 2>&1")
p_children=$(t p_children "perf report -i $data --stdio --children --sort dso,sym > /dev/null 2>&1")
p_children_nog=$(t p_children_nog "perf report -i $data --stdio --children --sort dso,sym -g none > /dev/null 2>&1")
echo "| mode | perfq report | perf report --stdio | ratio |"
echo "|---|---|---|---|"
echo "| self (--no-children) | $pq_self s | $p_self s | $(python3 -c "print('%.1fx' % ($p_self/$pq_self))") |"
echo "| total (--children) | $pq_children s | $p_children s | $(python3 -c "print('%.1fx' % ($p_children/$pq_children))") |"
echo "| total, perf without call graph output (-g none) | $pq_children s | $p_children_nog s | $(python3 -c "print('%.1fx' % ($p_children_nog/$pq_children))") |"
