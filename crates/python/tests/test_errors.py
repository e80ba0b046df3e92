"""Failures raise PerfqError with the command line's message; a damaged
capture warns, and raises with strict=True as `--strict` fails."""

from __future__ import annotations

import pathlib
import warnings

import perfq
import pytest

from conftest import TESTDATA, cli, cli_error, damage


def test_a_missing_file_is_the_command_lines_error(tmp_path: pathlib.Path) -> None:
    missing = tmp_path / "missing.data"
    with pytest.raises(perfq.PerfqError) as raised:
        perfq.topdown(missing)
    assert str(raised.value) == cli_error(cli("topdown", missing))


def test_bad_sql_is_the_command_lines_error() -> None:
    capture = TESTDATA / "fp.data"
    for sql in ["SELEC 1", "SELECT nope FROM samples", "DROP TABLE samples"]:
        with pytest.raises(perfq.PerfqError) as raised:
            perfq.query(capture, sql)
        assert str(raised.value) == cli_error(cli("query", capture, sql))


def test_a_bad_option_value_is_a_usage_error() -> None:
    with pytest.raises(perfq.UsageError, match="--level"):
        perfq.topdown(TESTDATA / "topdown-spr.data", level=3)
    with pytest.raises(perfq.UsageError, match="--no-such-option"):
        perfq.report(TESTDATA / "fp.data", no_such_option=1)


@pytest.fixture
def damaged(tmp_path: pathlib.Path) -> pathlib.Path:
    return damage(TESTDATA / "fp.data", tmp_path / "damaged.data")


def test_a_damaged_capture_warns_and_answers(damaged: pathlib.Path) -> None:
    out = cli("report", damaged, "--format", "json")
    assert out.returncode == 0, out.stderr
    said = [l.removeprefix("perfq: warning: ") for l in out.stderr.splitlines() if l.startswith("perfq: warning: ")]
    assert said
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = perfq.report(damaged)
    assert [str(w.message) for w in caught if w.category is perfq.PerfqWarning] == said
    assert table.num_rows > 0


def test_strict_makes_damage_an_error(damaged: pathlib.Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", perfq.PerfqWarning)
        with pytest.raises(perfq.DamagedCaptureError) as raised:
            perfq.report(damaged, strict=True)
    assert str(raised.value) == cli_error(cli("--strict", "report", damaged))


def test_a_table_answer_is_never_a_panic() -> None:
    # An empty statement result still has its columns.
    t = perfq.query(TESTDATA / "fp.data", "SELECT tid FROM samples WHERE false")
    assert (t.num_rows, t.column_names) == (0, ["tid"])
