# Sourced by the benchmark scripts: where the binaries they measure come
# from, and the generated captures they share. Set `root` (the checkout),
# and `dir` (where captures go) for `spr_capture`, first. The builds go to CARGO_TARGET_DIR
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

# spr_capture GEN SAMPLES: the generated Sapphire Rapids capture of SAMPLES
# samples (stack depth 8-20) in $dir, made with GEN unless it is there;
# prints its path.
spr_capture() {
    file="$dir/topdown-spr-$2.data"
    [ -f "$file" ] || "$1" --preset sapphirerapids --samples "$2" --depth 12 -o "$file" >&2
    echo "$file"
}

# record_build NAME SECONDS PERF-OPTIONS...: `perf record -a OPTIONS` for
# SECONDS into $dir/NAME (unless it is there) while a build of this
# workspace from scratch runs (in a target folder of its own, started 10 s
# before so that it is compiling, and stopped after): rustc, cc1, the
# linker and cargo all busy, as on the captures people have.
record_build() {
    name=$1 len=$2
    shift 2
    [ -f "$dir/$name" ] && return 0
    build="$dir/build-target"
    rm -rf "$build"
    (cd "$root" && CARGO_TARGET_DIR="$build" cargo build --release -q --workspace >/dev/null 2>&1) &
    pid=$!
    sleep 10
    perf record -q -a "$@" -o "$dir/$name.part" -- sleep "$len"
    mv "$dir/$name.part" "$dir/$name"
    # The build and every process it started.
    pkill -P "$pid" 2>/dev/null || true
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pkill -f "$build" 2>/dev/null || true
    rm -rf "$build"
}
