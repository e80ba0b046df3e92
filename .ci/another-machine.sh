#!/usr/bin/env bash
# Runs a command as if on a machine that did not record testdata/: in a
# mount namespace of its own, every user-space binary the committed
# captures recorded is replaced by a copy that differs only in its build
# id, and /usr/lib/debug is empty (no debug file of a recorded build id).
# perf and perfq then leave those binaries' frames unnamed, as on another
# machine, and a test that needs them named must say why it skips.
#
#   bash .ci/another-machine.sh cargo test --workspace
#
# Needs root (unshare -m, mount) and perf.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${PERFQ_ANOTHER_MACHINE:-}" != 1 ]; then
    export PERFQ_ANOTHER_MACHINE=1
    exec unshare -m --propagation private bash "$0" "$@"
fi
copies=$(mktemp -d)
# The copies stay until the command ends: a program started here maps
# them, and a removed file would show in its mmap events as
# "libc.so.6 (deleted)", which no other machine records.
trap 'rm -rf "$copies"' EXIT
for capture in testdata/*.data; do
    perf buildid-list -i "$capture" 2>/dev/null || true
done | awk '$1 ~ /^[0-9a-f]+$/ && $2 ~ /^\// {print $2}' | sort -u | while read -r path; do
    [ -f "$path" ] || continue
    copy="$copies/$(echo "$path" | tr / _)"
    python3 - "$path" "$copy" <<'PY'
import sys
path, copy = sys.argv[1], sys.argv[2]
data = bytearray(open(path, "rb").read())
# The GNU build-id note: namesz 4, type 3 (NT_GNU_BUILD_ID), "GNU\0".
at = data.find(b"\x04\x00\x00\x00\x14\x00\x00\x00\x03\x00\x00\x00GNU\x00")
if at < 0:
    sys.exit(f"{path}: no 20-byte build id note")
data[at + 16 + 19] ^= 0xFF
open(copy, "wb").write(data)
PY
    chmod --reference="$path" "$copy"
    mount --bind "$copy" "$path"
    echo "another-machine: $path has another build id" >&2
done
mount -t tmpfs none /usr/lib/debug
"$@"
