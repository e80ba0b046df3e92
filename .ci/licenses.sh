#!/bin/sh
# Writes THIRD-PARTY-LICENSES.md: every crate perfq is built from, with
# its licence text (the Python wheel's crates: the binary's and PyO3),
# generated from Cargo.lock by cargo-about (installed by
# .ci/setup.sh). crates/cli/tests/licences.rs fails when the file is not
# what this writes.
set -eu
cd "$(dirname "$0")/.."
out=THIRD-PARTY-LICENSES.md
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
cargo about generate --locked --offline --manifest-path crates/python/Cargo.toml -c about.toml about.hbs > "$tmp"
mv "$tmp" "$out"
trap - EXIT
