# Sourced by the benchmark scripts: where the binaries they measure come
# from. Set `root` (the checkout) first. The builds go to CARGO_TARGET_DIR
# (default ~/.cache/perfq-target, the folder CI keeps warm).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/perfq-target}"

# built PROFILE PACKAGE BINARY: builds BINARY of PACKAGE with PROFILE
# (release, or dist: fat LTO, Cargo.toml) and prints its path. A script
# takes a binary the user names first (PERFQ=... or PERFQ_GEN=...):
#   PERFQ=${PERFQ:-$(built release perfq perfq)}
built() {
    (cd "$root" && cargo build --profile "$1" -q -p "$2" --bin "$3") >&2
    echo "$CARGO_TARGET_DIR/$1/$3"
}
