"""Every function answers what the command line answers with
`--format json`, on every capture of testdata/."""

from __future__ import annotations

import json
import pathlib
import tempfile
import warnings

import perfq
import pytest

from conftest import CAPTURES, assert_same, cli, cli_answer, py_answer


@pytest.mark.parametrize(
    "options, flags",
    [
        ({}, []),
        ({"level": 2}, ["--level", "2"]),
        ({"total": True}, ["--total"]),
        ({"by": "thread"}, ["--by", "thread"]),
        ({"by": "dso", "min_samples": 5}, ["--by", "dso", "--min-samples", "5"]),
        ({"interval_ms": 100}, ["--interval", "100"]),
        ({"cpu_model": "icelake"}, ["--cpu-model", "icelake"]),
    ],
)
def test_topdown(capture: pathlib.Path, options: dict, flags: list[str]) -> None:
    assert_same(
        py_answer(lambda: perfq.topdown(capture, **options)),
        cli_answer("topdown", capture, *flags, "--format", "json"),
    )


@pytest.mark.parametrize(
    "options, flags",
    [
        ({}, []),
        ({"children": True}, ["--children"]),
        ({"sort": "sym"}, ["--sort", "sym"]),
        ({"sort": "dso", "children": True}, ["--sort", "dso", "--children"]),
        ({"off_cpu": True}, ["--off-cpu"]),
        ({"off_cpu": True, "children": True}, ["--off-cpu", "--children"]),
    ],
)
def test_report(capture: pathlib.Path, options: dict, flags: list[str]) -> None:
    assert_same(
        py_answer(lambda: perfq.report(capture, **options)),
        cli_answer("report", capture, *flags, "--format", "json"),
    )


STATEMENTS = [
    "SELECT count(*) AS samples, sum(period) AS period FROM samples",
    "SELECT * FROM function_self ORDER BY event_id, samples DESC, symbol, dso LIMIT 20",
    "SELECT * FROM events ORDER BY event_id",
    "SELECT tid, comm FROM threads ORDER BY tid, comm",
]


@pytest.mark.parametrize("sql", STATEMENTS)
def test_query(capture: pathlib.Path, sql: str) -> None:
    assert_same(
        py_answer(lambda: perfq.query(capture, sql)),
        cli_answer("query", capture, sql, "--format", "json"),
    )


def test_query_batches_are_the_query(capture: pathlib.Path) -> None:
    sql = "SELECT time, tid, period FROM samples ORDER BY time, tid"
    streamed = perfq.query_batches(capture, sql).read_all().to_pylist()
    assert streamed == perfq.query(capture, sql).to_pylist()


def test_info(capture: pathlib.Path) -> None:
    assert_same(("ok", perfq.info(capture)), cli_answer("info", capture, "--format", "json"))


def test_diff() -> None:
    a, b = (c for c in CAPTURES if c.name in ("fp.data", "dwarf.data"))
    for by in ("function", "dso"):
        assert_same(
            py_answer(lambda: perfq.diff(a, b, by=by)),
            cli_answer("diff", a, b, "--by", by, "--format", "json"),
        )


def test_a_dataset_is_a_source(tmp_path: pathlib.Path) -> None:
    captures = [c for c in CAPTURES if c.name in ("fp.data", "topdown-spr.data")]
    dataset = perfq.convert(captures, tmp_path / "ds")
    assert dataset == str(tmp_path / "ds")
    sql = "SELECT capture, count(*) AS n FROM samples GROUP BY capture ORDER BY capture"
    assert_same(py_answer(lambda: perfq.query(dataset, sql)), cli_answer("query", dataset, sql, "--format", "json"))
    # fp.data has no top-down events: a warning says so.
    with pytest.warns(perfq.PerfqWarning, match="no topdown events"):
        answer = py_answer(lambda: perfq.topdown(dataset))
    assert_same(answer, cli_answer("topdown", dataset, "--format", "json"))


@pytest.mark.parametrize(
    "function, options, flags",
    [
        ("flamegraph", {}, []),
        ("flamegraph", {"folded": True}, ["--folded"]),
        ("flamegraph", {"color": "topdown"}, ["--color", "topdown"]),
        ("html", {}, []),
        ("export", {"to": "pprof"}, ["--to", "pprof"]),
        ("export", {"to": "speedscope"}, ["--to", "speedscope"]),
    ],
)
def test_files_are_the_command_lines(tmp_path: pathlib.Path, function: str, options: dict, flags: list[str]) -> None:
    capture = next(c for c in CAPTURES if c.name == "topdown-spr.data")
    mine, theirs = tmp_path / "py.out", tmp_path / "cli.out"
    assert getattr(perfq, function)(capture, mine, **options) == str(mine)
    cli(function, capture, "-o", theirs, *flags, check=True)
    assert mine.read_bytes() == theirs.read_bytes()


def test_a_list_of_captures_is_answered_as_their_dataset(tmp_path: pathlib.Path, monkeypatch) -> None:
    captures = [c for c in CAPTURES if c.name in ("fp.data", "topdown-spr.data")]
    dataset = perfq.convert(captures, tmp_path / "ds")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    sql = "SELECT capture, count(*) AS n, sum(period) AS period FROM samples GROUP BY capture ORDER BY capture"
    assert perfq.query(captures, sql).to_pylist() == perfq.query(dataset, sql).to_pylist()
    assert perfq.query_batches(captures, sql).read_all().to_pylist() == perfq.query(dataset, sql).to_pylist()
    with pytest.warns(perfq.PerfqWarning, match="no topdown events"):
        listed = perfq.topdown(captures).to_pylist()
    with pytest.warns(perfq.PerfqWarning, match="no topdown events"):
        assert listed == perfq.topdown(dataset).to_pylist()
    for function, options in [("flamegraph", {"folded": True}), ("export", {"to": "pprof"})]:
        mine, theirs = tmp_path / f"list.{function}", tmp_path / f"dataset.{function}"
        with warnings.catch_warnings():
            # The export's, as above: fp.data has no top-down events.
            warnings.simplefilter("ignore", perfq.PerfqWarning)
            getattr(perfq, function)(captures, mine, **options)
            getattr(perfq, function)(dataset, theirs, **options)
        assert mine.read_bytes() == theirs.read_bytes()
    # A table's temporary dataset is gone once it is made (a stream's
    # stays until the interpreter exits); a missing capture in the list
    # is the conversion's error, and leaves nothing either.
    assert len(list(scratch.iterdir())) == 1
    with pytest.raises(perfq.PerfqError, match="no-such.data"):
        perfq.query([captures[0], tmp_path / "no-such.data"], sql)
    assert len(list(scratch.iterdir())) == 1
