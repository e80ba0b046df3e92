#!/bin/sh
# What `cargo install --locked --path crates/cli` costs someone installing
# perfq from this checkout: a cold build (a target folder and an install
# root of its own, both empty and removed afterwards), timed, then the
# installed binary's size as installed (the release profile keeps its
# symbols, for backtraces) and stripped of them too.
#   sh benches/install.sh
# Prints "<seconds> s, <bytes> bytes, <bytes> bytes stripped". The crates are
# fetched first, untimed: a download's speed is the network's, not the
# build's. Run it on an otherwise idle machine. PERFQ_INSTALL_KEEP=FILE
# keeps the installed binary. BLOAT=1 then shows what makes it large:
# cargo-bloat's machine code by crate and largest functions (`cargo install
# cargo-bloat`; it builds once more, untimed, as it never strips).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"
cargo fetch --locked -q
CARGO_TARGET_DIR="$tmp/target" /usr/bin/time -o "$tmp/time" -f %e \
    cargo install -q --locked --path crates/cli --root "$tmp/root"
bin="$tmp/root/bin/perfq"
strip -o "$tmp/perfq.stripped" "$bin"
[ -n "${PERFQ_INSTALL_KEEP:-}" ] && cp "$bin" "$PERFQ_INSTALL_KEEP"
echo "$(tail -1 "$tmp/time") s, $(stat -c %s "$bin") bytes, $(stat -c %s "$tmp/perfq.stripped") bytes stripped"
if [ -n "${BLOAT:-}" ]; then
    CARGO_TARGET_DIR="$tmp/target" cargo bloat -q --release -p perfq --bin perfq --crates -n 15
    CARGO_TARGET_DIR="$tmp/target" cargo bloat -q --release -p perfq --bin perfq -n 15
fi
