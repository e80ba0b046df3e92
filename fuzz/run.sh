#!/bin/sh
# Fuzz the perf.data reader, seeded with testdata/ and, when present, the
# shared corpus. Usage: sh fuzz/run.sh [seconds]   (default 300)
# Needs cargo-fuzz (`cargo install cargo-fuzz`). On a stable toolchain,
# RUSTC_BOOTSTRAP=1 lets cargo-fuzz use the sanitizer flags it needs.
set -eu
cd "$(dirname "$0")"
secs=${1:-300}
mkdir -p corpus/read_capture
cp ../testdata/*.data corpus/read_capture/
if [ -d ../../shared/corpus ]; then
    find ../../shared/corpus -type f ! -name '*.json' ! -name '*.md' ! -name '*.txt' \
        -size -2M -exec sh -c 'cp "$1" "corpus/read_capture/$(echo "$1" | md5sum | cut -c1-16)"' _ {} \;
fi
RUSTC_BOOTSTRAP=1 cargo fuzz run read_capture corpus/read_capture -- \
    -max_total_time="$secs" -max_len=4194304 -rss_limit_mb=2048 -timeout=10
