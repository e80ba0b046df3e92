"""Ctrl-C stops a long conversion or query within a second, and leaves
no half-written capture behind. Each runs in a Python process of its
own, which the test sends SIGINT as a terminal's Ctrl-C does."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time

import perfq

# A generated capture large enough to take seconds
# (crates/cli/tests/python.rs makes it).
LARGE = pathlib.Path(os.environ["PERFQ_LARGE_CAPTURE"])

SCRIPT = """
import perfq, sys, time
print("started", flush=True)
try:
    {call}
except KeyboardInterrupt:
    print(time.monotonic(), flush=True)
    sys.exit(130)
print("finished", flush=True)
"""


def interrupted_after(seconds: float, call: str) -> float:
    """Runs `call` in a Python process of its own and sends it SIGINT
    after `seconds`; returns how long after the signal `call` raised
    KeyboardInterrupt there."""
    child = subprocess.Popen(
        [sys.executable, "-c", SCRIPT.format(call=call)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "started"
    time.sleep(seconds)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=60)
    assert child.returncode == 130, f"the call ended before the signal: {out}"
    return float(out.split()[-1]) - sent


def test_ctrl_c_stops_a_conversion(tmp_path: pathlib.Path) -> None:
    dataset = tmp_path / "dataset"
    took = interrupted_after(1.0, f"perfq.convert({str(LARGE)!r}, {str(dataset)!r})")
    assert took < 1.0
    # No capture folder, temporary folder or lock file is left.
    left = sorted(p.name for p in dataset.iterdir()) if dataset.exists() else []
    assert left == []
    # The next conversion into it works.
    perfq.convert(LARGE, dataset)
    assert [p.name for p in dataset.iterdir() if p.name.startswith("capture=")]


def test_ctrl_c_stops_a_query(tmp_path: pathlib.Path) -> None:
    dataset = perfq.convert(LARGE, tmp_path / "dataset")
    # A join of every sample with every other of its thread: hours.
    endless = "SELECT count(*) FROM samples a JOIN samples b ON a.tid = b.tid"
    took = interrupted_after(1.0, f"perfq.query({dataset!r}, {endless!r})")
    assert took < 1.0
    # The dataset is as it was.
    assert perfq.query(dataset, "SELECT count(*) AS n FROM samples").to_pylist() == [
        {"n": int(os.environ["PERFQ_LARGE_SAMPLES"])}
    ]
