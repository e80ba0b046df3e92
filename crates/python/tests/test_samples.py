"""perfq.samples: every sample record with `perfq dump --format csv`'s
fields, typed, streamed with bounded memory."""

from __future__ import annotations

import csv
import io
import os
import pathlib
import subprocess
import sys

import perfq
import pytest

from conftest import TESTDATA, cli, cli_error, damage

CSV_NUMBERS = ["time", "pid", "tid", "cpu", "period", "weight", "cgroup"]
CSV_HEX = ["ip", "addr", "data_src", "phys_addr"]


def from_csv(row: dict[str, str]) -> dict:
    """A `dump --format csv` line as the table's row."""
    value = lambda text, base=10: int(text, base) if text else None  # noqa: E731
    out = {"offset": int(row["offset"], 16), "event": row["event"] or None, "cpumode": row["cpumode"] or None}
    out.update({k: value(row[k]) for k in CSV_NUMBERS + ["id", "stream_id"]})
    out.update({k: value(row[k], 16) for k in CSV_HEX})
    chain = []
    for entry in row["callchain"].split():
        context, _, addr = entry.rpartition(":")
        chain.append({"addr": int(addr, 16), "context": context or None})
    out["callchain"] = chain
    read = []
    for member in row["read"].split():
        event, _, numbers = member.rpartition("=")
        value_, _, delta = numbers.partition("/")
        read.append({"event": None if event == "?" else event, "value": int(value_), "delta": value(delta)})
    out["read"] = read
    return out


def test_samples_are_dumps_fields(capture: pathlib.Path) -> None:
    theirs = [from_csv(r) for r in csv.DictReader(io.StringIO(cli("dump", capture, "--format", "csv", check=True).stdout))]
    mine = []
    for batch in perfq.samples(capture):
        for row in batch.to_pylist():
            # A missing callchain or read is an empty field in the CSV.
            row["callchain"] = row["callchain"] or []
            row["read"] = row["read"] or []
            mine.append(row)
    assert len(mine) == len(theirs)
    assert mine == theirs


def test_strict_damage_ends_the_samples(tmp_path: pathlib.Path) -> None:
    path = damage(TESTDATA / "fp.data", tmp_path / "damaged.data")
    assert sum(b.num_rows for b in perfq.samples(path)) > 0
    with pytest.raises(perfq.PerfqError) as raised:
        for _ in perfq.samples(path, strict=True):
            pass
    assert str(raised.value) == cli_error(cli("--strict", "dump", path))


# The most the whole process may hold while it reads every sample of the
# large generated capture (175 MB, 500,000 samples): interpreter, pyarrow,
# perfq's module and a few batches.
MAX_RSS_MB = 300


def test_samples_stream_in_bounded_memory() -> None:
    large = os.environ["PERFQ_LARGE_CAPTURE"]
    # The process's own peak (VmHWM: since its exec; getrusage's maxrss
    # would start from its parent's size at the fork).
    code = (
        "import perfq, sys\n"
        "n = sum(b.num_rows for b in perfq.samples(sys.argv[1]))\n"
        "hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM:'))\n"
        "print(n, int(hwm.split()[1]) // 1024)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, large], capture_output=True, text=True, check=True)
    rows, peak_mb = map(int, out.stdout.split())
    assert rows == int(os.environ["PERFQ_LARGE_SAMPLES"])
    assert peak_mb < MAX_RSS_MB, f"{peak_mb} MB"
    assert os.path.getsize(large) > MAX_RSS_MB * 2**20 / 2
