"""perfq's answers from a running interpreter against the perfq binary's.

Usage: python python-calls.py DATASET PERFQ SQL [RUNS]

A notebook calls perfq in an interpreter that is already running, with
pyarrow already imported: this times that call, and the table's hand-over
to pyarrow, against a whole run of the binary (its start, the answer and
its JSON), alternately in one loop, and prints the medians and their
ratio. The hand-over reads the Arrow stream with
`pyarrow.RecordBatchReader.from_stream`: `pyarrow.table(x)` does the same
but first imports pandas, once per process, to ask whether x is a
DataFrame.
"""

import statistics
import subprocess
import sys
import time

import pyarrow
import perfq

def timed(f):
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def compare(name, call, argv, runs):
    def python():
        pyarrow.RecordBatchReader.from_stream(call()).read_all()

    def binary():
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)

    python(), binary()  # warm the page cache and perfq's caches
    py, cli = [], []
    for _ in range(runs):
        py.append(timed(python))
        cli.append(timed(binary))
    p, c = statistics.median(py), statistics.median(cli)
    print(
        f"{name}: Python call {p * 1000:.1f} ms (min {min(py) * 1000:.1f}),"
        f" binary {c * 1000:.1f} ms (min {min(cli) * 1000:.1f}): {p / c:.2f}x"
    )


def main():
    dataset, perfq_binary, sql = sys.argv[1:4]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    compare(
        "perfq.topdown",
        lambda: perfq.topdown(dataset),
        [perfq_binary, "topdown", dataset, "--format", "json"],
        runs,
    )
    compare(
        "perfq.query",
        lambda: perfq.query(dataset, sql),
        [perfq_binary, "query", dataset, sql, "--format", "json"],
        runs,
    )


main()
