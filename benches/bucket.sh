#!/bin/sh
# perfq on a bucket against perfq on local files, in one run, with a real
# S3 server on this machine (SeaweedFS on 127.0.0.1, started as the tests
# start it: crates/cli/tests/common/s3-server.sh):
#   convert  a generated Sapphire Rapids capture (~1 GB at the default
#            2,400,000 samples): file -> folder, and object -> bucket
#   batch    the testdata captures (-j 2): files -> folder, and objects
#            -> bucket
#   query    the 20 largest rows of function_total over the converted
#            capture: folder, and bucket
# Each is run RUNS times (default 3), alternating; the median wall time
# and the largest peak RSS are printed, with the bucket's ratio to the
# folder's. The server's own CPU shares the machine's cores.
# Usage: PERFQ_PROFILE=release sh benches/bucket.sh [samples]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PERFQ_BENCH_DIR:-/tmp/perfq-bench}
samples=${1:-2400000}
runs=${RUNS:-3}
profile=${PERFQ_PROFILE:-dist}
mkdir -p "$dir"
cd "$root"
. "$root/benches/binaries.sh"
perfq=${PERFQ:-$(built "$profile" perfq perfq)}
gen=${PERFQ_GEN:-$(built "$profile" perfq-testgen perfq-gen)}
venv=${PERFQ_VENV:-$HOME/.cache/perfq-venv}
file=$(spr_capture "$gen" "$samples")
ls -l "$file"

server=$(mktemp -d)
work=$(mktemp -d -p "$dir")
trap 'sh "$root/crates/cli/tests/common/s3-server.sh" stop "$server"; rm -rf "$server" "$work"' EXIT
WEED="$venv/bin/weed"
export WEED
# shellcheck disable=SC2046
set -- $(sh "$root/crates/cli/tests/common/s3-server.sh" start "$server" bench)
export AWS_ACCESS_KEY_ID="$2" AWS_SECRET_ACCESS_KEY="$3" AWS_REGION=us-east-1
export AWS_ENDPOINT_URL="http://127.0.0.1:$1" AWS_EC2_METADATA_DISABLED=true
export AWS_METADATA_ENDPOINT=http://127.0.0.1:9 PERFQ_CACHE_DIR="$work/cache"

# The inputs, uploaded once with boto3.
mkdir -p "$work/batch"
for c in fp.data multi.data dwarf.data group.data pipe.data compressed.data topdown-spr.data; do
    cp "testdata/$c" "$work/batch/$c"
done
"$venv/bin/python" - "$file" "$work/batch" <<'PY'
import boto3, pathlib, sys
s3 = boto3.client('s3')
s3.upload_file(sys.argv[1], 'bench', 'big/capture.data')
for p in sorted(pathlib.Path(sys.argv[2]).iterdir()):
    s3.upload_file(str(p), 'bench', 'batch/' + p.name)
PY

# once NAME CMD...: one run, its "wall-seconds peak-KB" appended to NAME.
once() {
    name=$1
    shift
    /usr/bin/time -f "%e %M" -o "$work/t" "$@" >/dev/null 2>"$work/err" ||
        { cat "$work/err" >&2; exit 1; }
    cat "$work/t" >> "$work/$name"
}

sql="SELECT symbol, samples, period FROM function_total ORDER BY period DESC LIMIT 20"
i=0
while [ $i -lt "$runs" ]; do
    i=$((i + 1))
    once convert-local "$perfq" convert --force "$file" -o "$work/ds"
    once convert-bucket "$perfq" convert --force s3://bench/big/capture.data -o s3://bench/ds
    once batch-local "$perfq" batch --force -j 2 "$work/batch" -o "$work/batch-ds"
    once batch-bucket "$perfq" batch --force -j 2 s3://bench/batch/ -o s3://bench/batch-ds
    once query-local "$perfq" query "$work/ds" "$sql"
    once query-bucket "$perfq" query s3://bench/ds "$sql"
done

python3 - "$work" <<'PY'
import statistics, sys
work = sys.argv[1]
def read(name):
    rows = [l.split() for l in open(f"{work}/{name}") if l.strip()]
    return statistics.median(float(r[0]) for r in rows), max(int(r[1]) for r in rows) / 1024
print("| step | folder: median s, peak MiB | bucket: median s, peak MiB | bucket / folder |")
print("|---|---|---|---|")
for step in ["convert", "batch", "query"]:
    (lt, lm), (bt, bm) = read(f"{step}-local"), read(f"{step}-bucket")
    print(f"| {step} | {lt:.2f} s, {lm:.0f} MiB | {bt:.2f} s, {bm:.0f} MiB | "
          f"{bt / lt:.2f}x the time, {bm / lm:.2f}x the memory |")
PY
