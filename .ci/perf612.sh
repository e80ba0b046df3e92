#!/usr/bin/env bash
# Unpacks perf 6.12 (Debian bookworm-backports) into ~/.cache/perfq-perf612
# for the tests that compare with it: the corpus catalog was counted with it,
# and it reads perf >= 6.3 captures (attr size 136) that the installed perf
# 6.1 refuses. The system's apt sources are not changed: the backports
# suite is fetched from the mirror the system's Debian source names, into
# private apt state. Tests skip what needs it when it is absent.
set -euo pipefail
dest=${PERFQ_PERF612_DIR:-$HOME/.cache/perfq-perf612}
if [ -x "$dest/root/usr/bin/perf" ]; then
    exit 0
fi
uri=$(awk '/^URIs:/{u=$2} /^Suites:/ && / bookworm( |$)/{print u; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
if [ -z "$uri" ]; then
    echo "perf612: no Debian bookworm source found; skipping" >&2
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/archives/partial"
for suite in bookworm bookworm-backports; do
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main"
done > "$work/sources.list"
opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=-"
      -o "Dir::State::Lists=$work/lists" -o "Dir::Cache::Archives=$work/archives" -o "APT::Sandbox::User=root")
apt-get "${opts[@]}" -qq update
mkdir -p "$dest"
(cd "$work" && apt-get "${opts[@]}" -qq download linux-perf/bookworm-backports libtraceevent1)
for deb in "$work"/*.deb; do dpkg -x "$deb" "$dest/root"; done
"$dest/root/usr/bin/perf" --version >/dev/null 2>&1 || LD_LIBRARY_PATH="$dest/root/usr/lib/x86_64-linux-gnu" "$dest/root/usr/bin/perf" --version
