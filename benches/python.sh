#!/bin/sh
# perfq from Python against the perfq binary, in one run, both built with
# the same profile (PERFQ_PROFILE, default release) from this checkout, on
# a converted generated Sapphire Rapids capture (SAMPLES, default
# 1,000,000):
#   topdown  level 1 per function: `perfq topdown DATASET --format json`
#            against `perfq.topdown(DATASET)`
#   query    the 20 largest rows of function_total: `perfq query ...
#            --format json` against `perfq.query(...)`
# First as a notebook calls them, in a running interpreter with pyarrow
# imported (benches/python-calls.py, RUNS runs, default 10), then as whole
# processes (the interpreter's start and `import perfq` included) with
# hyperfine; then `python -c 'import perfq'` against `python -c pass`,
# the wheel's size and the module's.
# Usage: sh benches/python.sh [samples]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PERFQ_BENCH_DIR:-/tmp/perfq-bench}
samples=${1:-1000000}
runs=${RUNS:-10}
profile=${PERFQ_PROFILE:-release}
mkdir -p "$dir"
cd "$root"
. "$root/benches/binaries.sh"
perfq=${PERFQ:-$(built "$profile" perfq perfq)}
gen=${PERFQ_GEN:-$(built "$profile" perfq-testgen perfq-gen)}
oracles=${PERFQ_VENV:-$HOME/.cache/perfq-venv}
file=$(spr_capture "$gen" "$samples")

work=$(mktemp -d -p "$dir")
trap 'rm -rf "$work"' EXIT
"$oracles/bin/maturin" build --profile "$profile" --quiet -o "$work/wheels" >&2
wheel=$(ls "$work"/wheels/perfq-*.whl)
python3 -m venv "$work/venv"
py="$work/venv/bin/python"
site=$("$py" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
"$oracles/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > "$site/oracles.pth"
"$py" -m pip install --quiet --no-index --no-deps "$wheel"

export PERFQ_CACHE_DIR="$work/cache"
"$perfq" convert "$file" -o "$work/ds" >/dev/null
ds="$work/ds"
sql='SELECT * FROM function_total ORDER BY samples DESC, symbol LIMIT 20'

"$py" "$root/benches/python-calls.py" "$ds" "$perfq" "$sql" "$runs"
hyperfine -N --warmup 2 --runs "$runs" \
    -n "perfq topdown" "$perfq topdown $ds --format json" \
    -n "perfq.topdown" "$py -c \"import perfq; perfq.topdown('$ds')\""
hyperfine -N --warmup 2 --runs "$runs" \
    -n "perfq query" "$perfq query $ds \"$sql\" --format json" \
    -n "perfq.query" "$py -c \"import perfq; perfq.query('$ds', '$sql')\""
hyperfine -N --warmup 2 --runs "$runs" \
    -n "python -c pass" "$py -c pass" \
    -n "import perfq" "$py -c 'import perfq'"
echo "wheel: $(stat -c %s "$wheel") bytes ($(basename "$wheel"))"
echo "module: $(stat -c %s "$site/perfq/_native.abi3.so") bytes installed"
echo "binary: $(stat -c %s "$perfq") bytes"
