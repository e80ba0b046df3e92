#!/bin/sh
# Two perfq builds on the same captures, measured in one run: whether a
# change kept perfq's speed.
#   sh benches/before-after.sh OLD_PERFQ NEW_PERFQ CAPTURE [TOPDOWN_CAPTURE]
# CAPTURE is timed with convert, report, report --children, the
# inclusive query and the HTML page over its dataset; TOPDOWN_CAPTURE (default
# testdata/topdown-spr.data) with topdown --total. Each command runs once
# per build as a warm-up, then RUNS times (default 8) alternating old, new,
# old, new…: a machine whose speed drifts over minutes (page cache, other
# load, frequency) moves both builds alike instead of whichever ran second.
# Prints a markdown table of mean wall time ± one standard deviation, the
# ratio of the means and the largest peak RSS of each.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
old=$1 new=$2 capture=$3
td=${4:-$here/../testdata/topdown-spr.data}
dir=${PERFQ_BENCH_DIR:-/tmp/perfq-bench}/before-after
rm -rf "$dir"
mkdir -p "$dir"
runs=${RUNS:-8}

# Each build its own dataset (and conversion cache: @CACHE@).
for b in old new; do
    eval "perfq=\$$b"
    "$perfq" convert -o "$dir/$b.dataset" "$capture" > /dev/null 2>&1
done

echo "| command | runs | before | after | after / before | peak RSS after / before |"
echo "|---|---|---|---|---|---|"
compare() {
    what=$1 line=$2
    for b in old new; do
        eval "perfq=\$$b"
        cmd=$(echo "$line" | sed "s|@PERFQ@|$perfq|g; s|@DS@|$dir/$b.dataset|g; s|@CACHE@|$dir/$b.cache|g")
        eval "cmd_$b=\"\$cmd\""
    done
    python3 - "$what" "$runs" "$cmd_old" "$cmd_new" <<'PY'
import os, statistics, subprocess, sys, time
what, runs, cmds = sys.argv[1], int(sys.argv[2]), sys.argv[3:5]
def run(cmd):
    start = time.monotonic()
    p = subprocess.Popen(["sh", "-c", cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"failed: {cmd}")
    return time.monotonic() - start, usage.ru_maxrss / 1024
for cmd in cmds:
    run(cmd)
walls, rss = ([], []), ([0.0], [0.0])
for _ in range(runs):
    for b, cmd in enumerate(cmds):
        wall, peak = run(cmd)
        walls[b].append(wall)
        rss[b].append(peak)
(om, nm) = (statistics.mean(w) for w in walls)
(osd, nsd) = (statistics.stdev(w) for w in walls)
print(f"| {what} | {runs} | {om:.2f} ± {osd:.2f} s | {nm:.2f} ± {nsd:.2f} s | {nm/om:.2f} | {max(rss[1])/max(rss[0]):.2f} |")
PY
}
compare "convert" "@PERFQ@ convert --force -o $dir/out $capture"
compare "report" "@PERFQ@ report $capture"
compare "report --children" "@PERFQ@ report --children $capture"
compare "query: top 20 of function_total" \
    "@PERFQ@ query @DS@ 'SELECT symbol, dso, samples FROM function_total ORDER BY samples DESC LIMIT 20'"
compare "html" "@PERFQ@ html @DS@ -o $dir/page.html"
compare "topdown --total (cached)" \
    "PERFQ_CACHE_DIR=@CACHE@ @PERFQ@ topdown --total $td"
