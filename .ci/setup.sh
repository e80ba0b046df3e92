#!/usr/bin/env bash
# Installs every oracle the tests compare perfq with, so that none of them
# has to skip: Debian's perf, gcc, binutils (objdump), LLVM (its
# addr2line reads split DWARF), util-linux's `script` (a terminal for the
# progress test), Chromium (renders the flame graph) and a Java runtime
# (Spark); perf 6.12 unpacked beside the system's (.ci/perf612.sh);
# DuckDB, pyarrow, Polars and pyspark in a virtualenv (PERFQ_VENV, by
# default ~/.cache/perfq-venv); cargo-fuzz. What is already there is kept,
# so running it again is quick. Needs root for apt-get.
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
have java || need+=(default-jre-headless)
if [ ${#need[@]} -gt 0 ]; then
    echo "setup: apt-get install ${need[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

bash .ci/perf612.sh

venv=${PERFQ_VENV:-$HOME/.cache/perfq-venv}
if ! "$venv/bin/python" -c 'import duckdb, pyarrow, polars, pyspark' 2>/dev/null; then
    echo "setup: Python engines into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r .ci/oracles-requirements.txt
fi

have cargo-fuzz || cargo install --locked -q cargo-fuzz
