# Sourced by the benchmark scripts: the dist build (release + fat LTO) of perfq and the
# large captures they measure, recorded on first use into $PERFQ_BENCH_DIR
# (default /tmp/perfq-bench; not committed). Needs perf.
#   perfq                       the dist binary (fat LTO, Cargo.toml)
#   dir                         where the captures are
#   fp-large.data               system-wide, frame-pointer callchains, 40 kHz per CPU, 20 s
#   fp-large-4x.data            the same for 80 s
#   dwarf-large.data            system-wide DWARF callchains, 8 KiB stack dumps, 4 kHz, 8 s
# Record on an otherwise idle machine: other work during the recording
# changes what the captures hold.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PERFQ_BENCH_DIR:-/tmp/perfq-bench}
mkdir -p "$dir"
cd "$root"
. "$root/benches/binaries.sh"
perfq=${PERFQ:-$(built dist perfq perfq)}

loop="$dir/loop.sh"
cat > "$loop" <<LOOP
#!/bin/sh
end=\$(( \$(date +%s) + \$1 ))
while [ "\$(date +%s)" -lt "\$end" ]; do "$root/testdata/work.sh"; done
LOOP
[ -f "$dir/fp-large.data" ] || perf record -q -a -g -F 40000 -e cpu-clock -o "$dir/fp-large.data" -- sh "$loop" 20
[ -f "$dir/fp-large-4x.data" ] || perf record -q -a -g -F 40000 -e cpu-clock -o "$dir/fp-large-4x.data" -- sh "$loop" 80
[ -f "$dir/dwarf-large.data" ] || perf record -q -a --call-graph dwarf,8192 -F 4000 -e cpu-clock -o "$dir/dwarf-large.data" -- sh "$loop" 8
