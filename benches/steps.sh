#!/bin/sh
# Where `perfq convert`'s time goes, per step of the data's way: perf
# samples the conversion of CAPTURE (every thread, CPU time), and each
# sampled function is put in the step its crate or module belongs to —
#   decode     perfq-reader (framing, records, samples; zstd decompression)
#   locate     perfq-stream, the tracker, caches and unwinder of
#              perfq-symbolize, perfq-ids (numbering), framehop
#   symbolize  the symbolizer (ELF, DWARF and its compressed sections,
#              kallsyms, demangling)
#   encode     perfq-writer's tables, Arrow and Parquet
#   compress   zstd compression (Parquet's pages)
#   hash       the capture's xxh3 (its id)
#   memory     the allocator, and the kernel's page faults and copies
#   other      the rest
# The shares are of CPU time over every thread (the reading thread and
# the samples, frames, encoder and warming threads add up).
#   sh benches/steps.sh PERFQ CAPTURE
set -eu
perfq=$1 capture=$2
dir=${PERFQ_BENCH_DIR:-/tmp/perfq-bench}/steps
rm -rf "$dir"
mkdir -p "$dir"
perf record -q -F 2999 -o "$dir/perf.data" -- "$perfq" convert -o "$dir/out" "$capture" > /dev/null 2>&1
perf report -i "$dir/perf.data" --no-children --sort sym --stdio 2> /dev/null > "$dir/report.txt"
python3 - "$dir/report.txt" <<'PY'
import re, sys
steps = [
    ("decode", ["perfq_reader::", "ZSTD_decompress", "ZSTD_decode", "HUF_decompress"]),
    ("symbolize", ["perfq_symbolize::symbolizer", "perfq_symbolize::symtab", "perfq_symbolize::dwarf",
                   "perfq_symbolize::binary", "perfq_symbolize::kallsyms", "perfq_symbolize::demangle",
                   "perfq_symbolize::symbol_disk", "perfq_symbolize::locate", "gimli::", "addr2line::",
                   "object::", "rustc_demangle", "cpp_demangle", "memmap2", "zlib_rs::", "inflate"]),
    ("locate", ["perfq_stream::", "perfq_symbolize::", "perfq_ids::", "framehop::"]),
    ("encode", ["perfq_writer::", "parquet::", "arrow_", "arrow::"]),
    ("compress", ["ZSTD_", "HUF_", "FSE_", "HIST_"]),
    ("hash", ["xxh3", "xxhash"]),
    ("memory", ["malloc", "free", "realloc", "memcpy", "memmove", "memset", "_int_", "clear_page",
                "page_fault", "unlink_chunk", "malloc_consolidate", "do_anonymous", "folio",
                "mm_fault", "pte_", "memcg", "unmap_page", "alloc_pages", "alloc_frozen", "filemap",
                "lruvec", "mas_walk", "lock_vma"]),
]
share = {name: 0.0 for name, _ in steps}
share["other"] = 0.0
for line in open(sys.argv[1]):
    m = re.match(r"\s*([\d.]+)%\s+\[[.k]\]\s+(.*)", line)
    if not m:
        continue
    pct, sym = float(m.group(1)), m.group(2)
    for name, keys in steps:
        if any(k in sym for k in keys):
            share[name] += pct
            break
    else:
        share["other"] += pct
print("| step | share of CPU time |")
print("|---|---|")
for name, v in share.items():
    print(f"| {name} | {v:.0f}% |")
PY
