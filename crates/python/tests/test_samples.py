"""perfq.samples: every sample record with `perfq dump --format csv`'s
fields, typed, streamed with bounded memory."""

from __future__ import annotations

import csv
import io
import json
import os
import pathlib
import subprocess
import sys
import warnings

import duckdb
import perfq
import polars as pl
import pyarrow as pa
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
    # Without strict, what came before the damage, with a warning.
    with pytest.warns(perfq.PerfqWarning, match="bad record size"):
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


def from_json_frame(frame: dict) -> dict:
    """A frame of `dump --symbols --format jsonl` as the table's."""
    hex_ = lambda key: int(frame[key], 16) if key in frame else None  # noqa: E731
    return {
        "addr": hex_("addr"),
        "context": frame.get("context"),
        "dso": frame["dso"],
        "symbol": frame["symbol"],
        "raw_symbol": frame.get("raw_symbol"),
        "dso_offset": hex_("dso_offset"),
        "binary": frame.get("binary"),
        "vaddr": hex_("vaddr"),
        "unresolved": frame.get("unresolved"),
        "inlined": frame.get("inlined"),
    }


def test_symbolized_frames_are_dumps(capture: pathlib.Path) -> None:
    lines = cli("dump", capture, "--symbols", "--format", "jsonl", check=True).stdout.splitlines()
    theirs = []
    for line in map(json.loads, lines):
        frames = line.get("frames")
        theirs.append(None if frames is None else [from_json_frame(f) for f in frames])
    mine = [f for batch in perfq.samples(capture, symbols=True) for f in batch.column("frames").to_pylist()]
    assert len(mine) == len(theirs)
    assert mine == theirs
    # The other columns are those of the samples without symbols.
    plain = perfq.samples(capture).read_all()
    assert perfq.samples(capture, symbols=True).read_all().drop_columns(["frames"]).equals(plain)


def test_symbols_name_functions() -> None:
    # The hottest function of fp.data (`perfq report`'s first symbolized row).
    table = perfq.samples(TESTDATA / "fp.data", symbols=True).read_all()
    leaves = [frames[0] for frames in table.column("frames").to_pylist() if frames]
    assert len(leaves) == table.num_rows
    assert sum(f["symbol"] == "__memcmp_evex_movbe" and f["dso"] == "libc.so.6" for f in leaves) == 83


def test_damage_warns_when_the_samples_end(tmp_path: pathlib.Path) -> None:
    path = damage(TESTDATA / "fp.data", tmp_path / "damaged.data")
    said = warned(cli("dump", path, "--format", "csv"))
    assert said
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        batches = iter(perfq.samples(path))
        rows = next(batches).num_rows
        assert not caught, "warned before the end"
        rows += sum(b.num_rows for b in batches)
    assert rows > 0
    assert [str(w.message) for w in caught if w.category is perfq.PerfqWarning] == said


@pytest.mark.parametrize("reader", ["pyarrow", "polars", "duckdb"])
def test_every_reader_hears_the_warnings(tmp_path: pathlib.Path, reader: str) -> None:
    # Each engine reads the stream its own way (Polars and DuckDB from
    # threads of their own); the warnings come through each.
    path = damage(TESTDATA / "fp.data", tmp_path / "damaged.data")
    said = warned(cli("dump", path, "--format", "csv"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        samples = perfq.samples(path)
        if reader == "pyarrow":
            rows = pa.table(samples).num_rows
        elif reader == "polars":
            rows = pl.DataFrame(samples).height
        else:
            rows = duckdb.sql("SELECT count(*) FROM samples").fetchall()[0][0]
    assert rows == len(cli("dump", path, "--format", "csv").stdout.splitlines()) - 1
    assert [str(w.message) for w in caught if w.category is perfq.PerfqWarning] == said


def test_a_warning_made_an_error_ends_the_samples(tmp_path: pathlib.Path) -> None:
    path = damage(TESTDATA / "fp.data", tmp_path / "damaged.data")
    with warnings.catch_warnings():
        warnings.simplefilter("error", perfq.PerfqWarning)
        with pytest.raises(perfq.PerfqError) as raised:
            for _ in perfq.samples(path):
                pass
    assert warned(cli("dump", path, "--format", "csv"))[0] in str(raised.value)


def warned(out: subprocess.CompletedProcess[str]) -> list[str]:
    """The command's warnings, without their prefix."""
    prefix = "perfq: warning: "
    return [line.removeprefix(prefix) for line in out.stderr.splitlines() if line.startswith(prefix)]
