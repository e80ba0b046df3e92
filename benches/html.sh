#!/bin/sh
# perfq html on the build captures (benches/build-capture.sh writes them to
# $PERFQ_BENCH_DIR, default /tmp/perfq-bench): the page's size, the time to
# write it (from the converted dataset, and from the file with a cold
# cache), its peak RSS, and the time the page takes to open in headless
# Chromium (navigation start to the page drawn: window.perfqReport.readyMs,
# best of 3), plus a generated top-down capture of 600 K samples.
#   sh benches/html.sh
# Needs hyperfine, Chromium, chromedriver and a Python with selenium
# (bash .ci/setup.sh).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PERFQ_BENCH_DIR:-/tmp/perfq-bench}
cd "$root"
. "$root/benches/binaries.sh"
perfq=${PERFQ:-$(built release perfq perfq)}
gen=${PERFQ_GEN:-$(built release perfq-testgen perfq-gen)}
python=${PERFQ_PYTHON:-${PERFQ_VENV:-$HOME/.cache/perfq-venv}/bin/python}
mkdir -p "$dir"
td=$(spr_capture "$gen" 600000)
export PERFQ_CACHE_DIR="$dir/cache"

for f in "$dir/build-fp.data" "$dir/build-dwarf.data" "$td"; do
    [ -f "$f" ] || { echo "$f is missing (sh benches/build-capture.sh)"; continue; }
    name=$(basename "$f" .data)
    ds="$dir/$name.dataset"
    [ -d "$ds" ] || "$perfq" convert "$f" -o "$ds" >/dev/null
    page="$dir/$name.html"
    echo "== $name"
    hyperfine -w 1 -r 3 "$perfq html $ds -o $page"
    echo "peak RSS: $(/usr/bin/time -f %M "$perfq" html "$ds" -o "$page" 2>&1 >/dev/null | tail -1 | awk '{printf "%.0f MB", $1/1024}')"
    echo "size: $(wc -c < "$page" | awk '{printf "%.1f MB", $1/1e6}')"
    "$python" - "$page" <<'PY'
import os, sys, tempfile
sys.path.insert(0, os.path.join(os.getcwd(), "crates/cli/tests/browser"))
from chrome import chrome
driver = chrome(tempfile.mkdtemp(), "bench")
best = None
for _ in range(3):
    driver.get("file://" + os.path.abspath(sys.argv[1]))
    ms = driver.execute_script("return window.perfqReport.readyMs")
    best = ms if best is None else min(best, ms)
errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
driver.quit()
print(f"opens in {best:.0f} ms (navigation start to drawn, best of 3); console errors: {len(errors)}")
PY
done
