#!/bin/sh
# Fuzz the perf.data reader (read_capture, the default), a whole
# conversion without symbols (convert_capture), seeded with testdata/ and,
# when present, the shared corpus; the archive reader (unpack_archive),
# seeded with small archives made here; or `perfq query`'s statements over
# a small dataset (query_statement), seeded with a few statements.
# Usage: sh fuzz/run.sh [seconds] [target]   (default 300 read_capture)
# Needs cargo-fuzz (`cargo install cargo-fuzz`). On a stable toolchain,
# RUSTC_BOOTSTRAP=1 lets cargo-fuzz use the sanitizer flags it needs.
set -eu
cd "$(dirname "$0")"
secs=${1:-300}
target=${2:-read_capture}
mkdir -p "corpus/$target"
if [ "$target" = unpack_archive ]; then
    seed=$(mktemp -d)
    mkdir -p "$seed/.build-id/ab" "$seed/usr/bin/x/abababababababababababababababababababab"
    printf 'ELF' > "$seed/usr/bin/x/abababababababababababababababababababab/elf"
    ln -s ../../usr/bin/x/abababababababababababababababababababab "$seed/.build-id/ab/ababababababababababababababababababab"
    tar -cf "corpus/$target/seed.tar" -C "$seed" .build-id usr
    gzip -c "corpus/$target/seed.tar" > "corpus/$target/seed.tar.gz"
    bzip2 -c "corpus/$target/seed.tar" > "corpus/$target/seed.tar.bz2"
    rm -rf "$seed"
elif [ "$target" = query_statement ]; then
    i=0
    for sql in "SELECT symbol, samples FROM function_self ORDER BY samples DESC LIMIT 5" \
        "SELECT * FROM function_total WHERE symbol LIKE 'm%'" \
        "SELECT COUNT(*), SUM(period) FROM delivered_samples GROUP BY tid" \
        "WITH s AS (SELECT stack_id FROM samples) SELECT * FROM stacks JOIN s USING (stack_id)" \
        "COPY (SELECT 1) TO '/tmp/perfq-fuzz-copy.csv'" \
        "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '/tmp/x'" \
        "INSERT INTO samples SELECT * FROM samples" "DROP TABLE samples"; do
        printf '%s' "$sql" > "corpus/$target/seed-$i"
        i=$((i + 1))
    done
else
    cp ../testdata/*.data "corpus/$target/"
fi
if [ "$target" != unpack_archive ] && [ "$target" != query_statement ] && [ -d ../../shared/corpus ]; then
    find ../../shared/corpus -type f ! -name '*.json' ! -name '*.md' ! -name '*.txt' \
        -size -2M -exec sh -c 'cp "$1" "corpus/$2/$(echo "$1" | md5sum | cut -c1-16)"' _ {} "$target" \;
fi
# A conversion frees what it held on a thread it does not wait for, which
# LeakSanitizer, checking after each input, takes for a leak.
# (query_statement: DataFusion's runtime keeps threads and caches.)
leaks=1
[ "$target" = convert_capture ] && leaks=0
[ "$target" = query_statement ] && leaks=0
# query_statement runs DataFusion, whose build with the sanitizers takes
# most of an hour on two cores: it is built without them, unoptimized
# (under five minutes from cold), which keeps Rust's overflow and debug
# checks; libFuzzer still finds panics, hangs and runaway allocations.
case $target in
read_capture) build="" ;;
convert_capture) build="--features writer" ;;
unpack_archive) build="--features source" ;;
query_statement) build="-s none --dev --features query" ;;
*) echo "fuzz/run.sh: no target $target" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
RUSTC_BOOTSTRAP=1 cargo fuzz run $build "$target" "corpus/$target" -- \
    -max_total_time="$secs" -max_len=4194304 -rss_limit_mb=2048 -timeout=20 \
    -detect_leaks="$leaks"
