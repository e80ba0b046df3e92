#!/bin/sh
# Whether two perfq builds give the same answers: every testdata/ capture
# and every capture of ../shared/corpus (when present) through both —
# the dataset table by table (pyarrow; also under `--stack-memory 4K`),
# `report` (csv and json, self and --children), `topdown --format json`
# (L1, L2, --total) where it answers, `flamegraph --folded`,
# `diff A A --format json`, `dump` (jsonl with --symbols, every record,
# csv), `info --format json`, the HTML page and both exports — and every
# difference listed. For a change meant to keep output as it is.
#   sh benches/same-output.sh OLD_PERFQ NEW_PERFQ
# PERFQ_SAME_OUTPUT=read compares only what reads a capture itself
# (the datasets, report, dump, info): for a change that leaves the
# query and view code as it is, whose answers follow from the dataset.
# Needs python3 with pyarrow (PERFQ_VENV, as .ci/setup.sh makes it).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
old=$1 new=$2
dir=${PERFQ_BENCH_DIR:-/tmp/perfq-bench}/same-output
rm -rf "$dir"
mkdir -p "$dir"
py=${PERFQ_VENV:-$HOME/.cache/perfq-venv}/bin/python3
list="$dir/captures"
ls "$here"/../testdata/*.data > "$list"
corpus="$here/../../shared/corpus"
# PERFQ_SAME_OUTPUT_EVERY=N takes every Nth corpus capture (all by default).
[ -d "$corpus" ] && find "$corpus" -type f \( -name '*.data*' -o -name 'perf.data*' \) | sort |
    awk -v n="${PERFQ_SAME_OUTPUT_EVERY:-1}" '(NR - 1) % n == 0' >> "$list"
n=0 differ=0
while read -r f; do
    n=$((n + 1))
    for b in old new; do
        eval "perfq=\$$b"
        out="$dir/$b/$n"
        mkdir -p "$out"
        export PERFQ_CACHE_DIR="$dir/$b.cache"
        "$perfq" convert -o "$out/ds" "$f" > /dev/null 2>&1 || true
        "$perfq" report --format csv "$f" > "$out/report.csv" 2>/dev/null || true
        "$perfq" report --children --format csv "$f" > "$out/children.csv" 2>/dev/null || true
        "$perfq" report --children --format json "$f" > "$out/children.json" 2>/dev/null || true
        "$perfq" convert --stack-memory 4K -o "$out/ds4k" "$f" > /dev/null 2>&1 || true
        "$perfq" dump --symbols "$f" > "$out/dump.jsonl" 2>&1 || true
        "$perfq" dump --records all "$f" > "$out/all.jsonl" 2>&1 || true
        "$perfq" dump --format csv "$f" > "$out/dump.csv" 2>&1 || true
        "$perfq" info --format json "$f" > "$out/info.json" 2>&1 || true
        [ "${PERFQ_SAME_OUTPUT:-}" = read ] && continue
        "$perfq" topdown --format json "$f" > "$out/td1.json" 2>/dev/null || true
        "$perfq" topdown --level 2 --format json "$f" > "$out/td2.json" 2>/dev/null || true
        "$perfq" topdown --total --format json "$f" > "$out/tdt.json" 2>/dev/null || true
        "$perfq" flamegraph --folded "$f" > "$out/folded" 2>/dev/null || true
        "$perfq" diff "$f" "$f" --format json > "$out/diff.json" 2>/dev/null || true
        "$perfq" html -o "$out/page.html" "$f" > /dev/null 2>&1 || true
        "$perfq" export --to pprof -o "$out/pb.gz" "$f" > /dev/null 2>&1 || true
        "$perfq" export --to speedscope -o "$out/speedscope.json" "$f" > /dev/null 2>&1 || true
    done
    for t in report.csv children.csv children.json td1.json td2.json tdt.json folded diff.json \
        dump.jsonl all.jsonl dump.csv info.json page.html pb.gz speedscope.json; do
        [ -e "$dir/old/$n/$t" ] || [ -e "$dir/new/$n/$t" ] || continue
        if ! cmp -s "$dir/old/$n/$t" "$dir/new/$n/$t"; then
            echo "differs: $f: $t"
            differ=$((differ + 1))
        fi
    done
    for ds in ds ds4k; do
    if ! "$py" - "$dir/old/$n/$ds" "$dir/new/$n/$ds" <<'PY'
import sys, pathlib
import pyarrow.parquet as pq
a, b = (pathlib.Path(p) for p in sys.argv[1:])
tables = lambda d: sorted(p.relative_to(d).as_posix().split("/", 1)[1] for p in d.glob("capture=*/*.parquet"))
ta, tb = tables(a), tables(b)
if ta != tb:
    print("tables differ:", ta, tb)
    sys.exit(1)
bad = False
for t in ta:
    x = pq.read_table(next(a.glob("capture=*/" + t)))
    y = pq.read_table(next(b.glob("capture=*/" + t)))
    if t == "capture.parquet":
        x, y = (z.drop_columns(["source_path"]) for z in (x, y))
    if not x.equals(y):
        print("table differs:", t)
        bad = True
sys.exit(1 if bad else 0)
PY
    then
        echo "differs: $f: $ds"
        differ=$((differ + 1))
    fi
    done
done < "$list"
echo "$n captures, $differ differences"
