#!/bin/sh
# Fuzz the perf.data reader (read_capture, the default), a whole
# conversion without symbols (convert_capture), seeded with testdata/ and,
# when present, the shared corpus; or the archive reader (unpack_archive),
# seeded with small archives of every kind made here.
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
else
    cp ../testdata/*.data "corpus/$target/"
fi
if [ "$target" != unpack_archive ] && [ -d ../../shared/corpus ]; then
    find ../../shared/corpus -type f ! -name '*.json' ! -name '*.md' ! -name '*.txt' \
        -size -2M -exec sh -c 'cp "$1" "corpus/$2/$(echo "$1" | md5sum | cut -c1-16)"' _ {} "$target" \;
fi
# A conversion frees what it held on a thread it does not wait for, which
# LeakSanitizer, checking after each input, takes for a leak.
leaks=1
[ "$target" = convert_capture ] && leaks=0
RUSTC_BOOTSTRAP=1 cargo fuzz run "$target" "corpus/$target" -- \
    -max_total_time="$secs" -max_len=4194304 -rss_limit_mb=2048 -timeout=20 \
    -detect_leaks="$leaks"
