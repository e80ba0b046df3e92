# Shell functions the comparison scripts (build.sh, deep.sh) source: set
# `dir` (where results go), `runs` (hyperfine runs after a warm-up) and
# `bench` (a name for the result files) first; `prepare`, if set, is run
# before each timed run.

# measure NAME COMMAND: "wall cpu rss_mb" of COMMAND (a shell line): the
# hyperfine median wall time, its mean CPU time, and the peak RSS of one
# more run (/usr/bin/time).
measure() {
    hyperfine --warmup 1 --runs "$runs" --export-json "$dir/$bench.$1.json" \
        --prepare "${prepare:-true}" "$2" > /dev/null
    ${prepare:-true}
    /usr/bin/time -o "$dir/$bench.rss" -f %M sh -c "$2" > /dev/null 2>&1 || true
    python3 - "$dir/$bench.$1.json" "$dir/$bench.rss" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
rss = int(open(sys.argv[2]).read().split()[-1]) / 1024
print("%.2f %.2f %.0f" % (r["median"], r["user"] + r["system"], rss))
PY
}

# row WHAT PERFQ-LINE PERF-LINE: a markdown table row of both, with ratios.
row() {
    q=$(measure q "$2")
    p=$(measure p "$3")
    python3 - "$1" $q $p <<'PY'
import sys
what, qw, qc, qr, pw, pc, pr = sys.argv[1], *map(float, sys.argv[2:])
print(f"| {what} | {pw:.2f} s wall, {pc:.2f} s CPU, {pr:.0f} MiB | {qw:.2f} s wall, {qc:.2f} s CPU, {qr:.0f} MiB | {pw/qw:.1f}× wall, {pc/qc:.1f}× CPU, {qr/pr:.2f}× the memory |")
PY
}
