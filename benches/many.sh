#!/bin/sh
# A dataset of 100 captures: generated (perfq-gen, Sapphire Rapids
# topdown groups, SAMPLES (default 20 K) samples each with its own seed),
# converted by `perfq batch -j 1` and `-j 2` (next to `perf script` over
# the same files), then queried across every capture at once: the samples
# per capture, the top functions (self and total) summed over the
# captures, and topdown by function at level 1 (self) and level 2 (total).
#   sh benches/many.sh            # PERFQ_BENCH_DIR (default /tmp/perfq-bench)/many
# PERFQ and PERFQ_GEN name the binaries (default: release builds).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PERFQ_BENCH_DIR:-/tmp/perfq-bench}/many
samples=${SAMPLES:-20000}
. "$root/benches/binaries.sh"
PERFQ_GEN=${PERFQ_GEN:-$(built release perfq-testgen perfq-gen)}
PERFQ=${PERFQ:-$(built release perfq perfq)}
mkdir -p "$dir/captures"
i=1
while [ $i -le 100 ]; do
    f="$dir/captures/spr-$i.data"
    [ -f "$f" ] || "$PERFQ_GEN" --preset sapphirerapids --samples "$samples" --depth 12 \
        --seed $i --binary "$root/testdata/td-demo" -o "$f" > /dev/null
    i=$((i + 1))
done
ds="$dir/ds"
cat > "$dir/perf-script.sh" <<SH
#!/bin/sh
for f in "$dir"/captures/*.data; do perf script -i "\$f" > /dev/null 2>&1; done
SH
hyperfine -r 1 --prepare "rm -rf $ds" -N \
    -n "perfq batch -j 1 (100 captures)" "$PERFQ batch -j 1 -o $ds --format csv $dir/captures" \
    -n "perfq batch -j 2 (100 captures)" "$PERFQ batch -j 2 -o $ds --format csv $dir/captures" \
    -n "perf script > /dev/null, each capture" "sh $dir/perf-script.sh" \
    --export-markdown "$dir/batch.md"
"$PERFQ" batch -j 2 -o "$ds" --format csv "$dir/captures" > /dev/null
hyperfine -w 1 -r 5 -N \
    -n "samples per capture" "$PERFQ query $ds 'SELECT capture, COUNT(*) FROM samples GROUP BY capture'" \
    -n "top 10 functions (self), all captures" "$PERFQ query $ds 'SELECT symbol, SUM(samples) AS n FROM function_self GROUP BY symbol ORDER BY n DESC LIMIT 10'" \
    -n "top 10 functions (total), all captures" "$PERFQ query $ds 'SELECT symbol, SUM(samples) AS n FROM function_total GROUP BY symbol ORDER BY n DESC LIMIT 10'" \
    -n "topdown level 1 by function, all captures" "$PERFQ topdown $ds" \
    -n "topdown level 2 total by function, all captures" "$PERFQ topdown $ds --level 2 --total" \
    --export-markdown "$dir/query.md"
/usr/bin/time -f "top 10 functions (total) over 100 captures: peak RSS %M KiB" \
    "$PERFQ" query "$ds" 'SELECT symbol, SUM(samples) AS n FROM function_total GROUP BY symbol ORDER BY n DESC LIMIT 10' > /dev/null
/usr/bin/time -f "topdown over 100 captures: peak RSS %M KiB" "$PERFQ" topdown "$ds" > /dev/null
cat "$dir/batch.md" "$dir/query.md"
