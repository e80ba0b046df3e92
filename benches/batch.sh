#!/bin/sh
# `perfq batch` on a folder of captures of the same programs, next to one
# `perfq convert` process per capture and to `perf script > /dev/null`
# over the same files: whole-command time (hyperfine means) and peak RSS.
#   sh benches/batch.sh [FOLDER]
# Without FOLDER, records ten captures of `rustc -O` compiling a small
# program into $PERFQ_BENCH_DIR/batch (each maps librustc_driver, a
# ~150 MB binary whose symbol table is most of a conversion's symbolizing).
# PERFQ names the perfq binary (default: the release build).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PERFQ_BENCH_DIR:-/tmp/perfq-bench}/batch
. "$root/benches/binaries.sh"
PERFQ=${PERFQ:-$(built release perfq perfq)}
captures=${1:-$dir/captures}
if [ ! -d "$captures" ]; then
    mkdir -p "$captures" "$dir/src"
    cat > "$dir/src/small.rs" <<'RS'
use std::collections::HashMap;
fn main() {
    let mut m = HashMap::new();
    for i in 0..1000 { m.insert(i, format!("{i}")); }
    println!("{}", m.len());
}
RS
    for i in 0 1 2 3 4 5 6 7 8 9; do
        perf record -q -F 1999 -g -o "$captures/cap$i.data" -- \
            rustc -O "$dir/src/small.rs" -o "$dir/src/small$i" 2>/dev/null
    done
fi
files=$(find "$captures" -name '*.data' | sort)
n=$(echo "$files" | wc -l)
ds="$dir/ds"
cat > "$dir/separate.sh" <<SH
#!/bin/sh
for f in $(echo $files); do "$PERFQ" convert -o "$ds" "\$f" > /dev/null; done
SH
cat > "$dir/perf-script.sh" <<SH
#!/bin/sh
for f in $(echo $files); do perf script -i "\$f" > /dev/null 2>&1; done
SH
hyperfine -w 1 -r 5 --prepare "rm -rf $ds" -N \
    -n "perfq convert, one process per capture ($n)" "sh $dir/separate.sh" \
    -n "perfq batch -j 1" "$PERFQ batch -j 1 -o $ds --format csv $captures" \
    -n "perfq batch -j 2" "$PERFQ batch -j 2 -o $ds --format csv $captures" \
    -n "perf script > /dev/null, each capture" "sh $dir/perf-script.sh" \
    --export-markdown "$dir/batch.md"
for j in 1 2; do
    rm -rf "$ds"
    /usr/bin/time -f "perfq batch -j $j: peak RSS %M KiB" "$PERFQ" batch -j $j -o "$ds" --format csv "$captures" > /dev/null
done
rm -rf "$ds"
cat "$dir/batch.md"
