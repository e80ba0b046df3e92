#!/bin/sh
# How long perfq takes to build from nothing, as a newcomer or CI meets it:
#   sh benches/build-time.sh first-run   the README's first command, `cargo run
#                                        -p perfq -- topdown testdata/topdown-spr.data`,
#                                        in a fresh clone with an empty target folder
#   sh benches/build-time.sh release     `cargo build --release -p perfq` (what
#                                        `cargo install` builds) into an empty target
#                                        folder, then the binary's size, as built and
#                                        stripped of its symbols too
#   sh benches/build-time.sh dist        `cargo build --profile dist -p perfq` (fat
#                                        LTO, what the benchmarks measure), the same way
#   sh benches/build-time.sh ci          `CI=true bash .ci/run` in a fresh clone, with
#                                        ../shared beside it and the usual (warm)
#                                        target folder
# Each prints wall time, user CPU and the peak RSS of the largest process
# (/usr/bin/time). The crates are fetched first, untimed: a download's speed
# is the network's, not the build's. Run it on an otherwise idle machine: a
# second build holding a core takes a third longer.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:?first-run, release, dist or ci}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && cargo fetch --locked -q)
fmt="%e s wall, %U s user CPU, %M KiB peak RSS"

# clone: a fresh clone of this checkout's HEAD in $tmp/main (committed files
# only: what a newcomer gets), with the corpus the tests read beside it.
clone() {
    git clone -q "$root" "$tmp/main"
    [ -d "$root/../shared" ] && ln -s "$root/../shared" "$tmp/shared"
    return 0
}

case $what in
first-run)
    clone
    cd "$tmp/main"
    CARGO_TARGET_DIR="$tmp/target" /usr/bin/time -f "$fmt" \
        cargo run -q -p perfq -- topdown testdata/topdown-spr.data > /dev/null
    ;;
release | dist)
    profile=$what
    cd "$root"
    CARGO_TARGET_DIR="$tmp/target" /usr/bin/time -f "$fmt" \
        cargo build -q --profile "$profile" -p perfq
    bin="$tmp/target/$profile/perfq"
    strip -o "$tmp/perfq.stripped" "$bin"
    echo "binary: $(stat -c %s "$bin") bytes, $(stat -c %s "$tmp/perfq.stripped") bytes stripped"
    ;;
ci)
    clone
    cd "$tmp/main"
    CI=true /usr/bin/time -f "$fmt" bash .ci/run
    ;;
*)
    echo "build-time.sh: first-run, release, dist or ci, not $what" >&2
    exit 2
    ;;
esac
