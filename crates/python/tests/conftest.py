"""What the tests of the installed wheel share: the checkout, the `perfq`
binary they compare answers with (PERFQ_BIN), and both ways of asking.

They run against the wheel installed in a virtualenv of its own
(crates/cli/tests/python.rs builds and installs it, then runs them), never
against the source folder."""

from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
from typing import Any, Callable

import pytest

ROOT = pathlib.Path(os.environ.get("PERFQ_ROOT", pathlib.Path(__file__).resolve().parents[3]))
PERFQ_BIN = os.environ.get("PERFQ_BIN", "perfq")
TESTDATA = ROOT / "testdata"
CAPTURES = sorted(TESTDATA.glob("*.data"))


def cli(*args: str | os.PathLike[str], check: bool = False) -> subprocess.CompletedProcess[str]:
    """The `perfq` binary's run with these arguments."""
    out = subprocess.run([PERFQ_BIN, *map(os.fspath, args)], capture_output=True, text=True)
    if check and out.returncode != 0:
        raise AssertionError(f"perfq {args} failed: {out.stderr}")
    return out


def cli_error(out: subprocess.CompletedProcess[str]) -> str:
    """The message of the binary's `perfq: error:` line."""
    lines = [l for l in out.stderr.splitlines() if l.startswith("perfq: error: ")]
    assert len(lines) == 1, out.stderr
    return lines[0].removeprefix("perfq: error: ")


def cli_answer(*args: str | os.PathLike[str]) -> tuple[str, Any]:
    """("ok", the JSON the binary printed) or ("error", its message)."""
    out = cli(*args)
    if out.returncode != 0:
        return "error", cli_error(out)
    return "ok", json.loads(out.stdout)


def py_answer(call: Callable[[], Any]) -> tuple[str, Any]:
    """("ok", the table's rows) or ("error", the PerfqError's message)."""
    import perfq

    try:
        answer = call()
    except perfq.PerfqError as e:
        return "error", str(e)
    return "ok", answer.to_pylist() if isinstance(answer, perfq.Table) else answer


def without_nulls(value: Any) -> Any:
    """A JSON-like value with null members of objects left out (a table
    has every column in every row; JSON leaves some out)."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value


def assert_same(py: tuple[str, Any], cli: tuple[str, Any]) -> None:
    assert py[0] == cli[0], f"python: {py[1]!r:.300}\ncli: {cli[1]!r:.300}"
    assert without_nulls(py[1]) == without_nulls(cli[1])


@pytest.fixture(params=CAPTURES, ids=[p.name for p in CAPTURES])
def capture(request: pytest.FixtureRequest) -> pathlib.Path:
    return request.param


def damage(source: pathlib.Path, target: pathlib.Path) -> pathlib.Path:
    """`source` with an impossible size (4 bytes) in the header of its
    middle record, written to `target`: the records from there on are
    lost."""
    import struct

    data = bytearray(source.read_bytes())
    start, size = struct.unpack_from("<QQ", data, 40)
    offsets, at = [], start
    while at < start + size:
        offsets.append(at)
        at += struct.unpack_from("<H", data, at + 6)[0]
    struct.pack_into("<H", data, offsets[len(offsets) // 2] + 6, 4)
    target.write_bytes(data)
    return target
