"""Tables reach pyarrow, pandas, Polars and DuckDB through the Arrow
PyCapsule interface, without copies."""

from __future__ import annotations

import ctypes

import duckdb
import pandas as pd
import perfq
import polars as pl
import pyarrow as pa
import pytest

from conftest import TESTDATA

CAPTURE = TESTDATA / "topdown-spr.data"
SQL = "SELECT time, tid, period FROM samples ORDER BY time"


def address(column: pa.ChunkedArray) -> int:
    return column.chunk(0).buffers()[1].address


def test_the_capsule_is_an_arrow_stream() -> None:
    t = perfq.query(CAPTURE, SQL)
    capsule = t.__arrow_c_stream__()
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    assert get_name(capsule) == b"arrow_array_stream"


def test_pyarrow_reads_perfqs_buffers() -> None:
    t = perfq.query(CAPTURE, SQL)
    a, b = pa.table(t), pa.table(t)
    # Both tables point at the one buffer perfq computed: no copy.
    assert address(a.column("time")) == address(b.column("time"))
    assert a.num_rows == t.num_rows == 2600
    assert a.column_names == t.column_names == ["time", "tid", "period"]


def test_polars_reads_perfqs_buffers() -> None:
    t = perfq.query(CAPTURE, SQL)
    df = pl.DataFrame(t)
    assert df.columns == ["time", "tid", "period"]
    assert df["time"].to_numpy().__array_interface__["data"][0] == address(pa.table(t).column("time"))
    assert t.to_polars().equals(df)
    # Polars makes a Series of structs of any Arrow stream.
    assert pl.from_arrow(t).struct.unnest().equals(df)


def test_pandas_and_duckdb() -> None:
    t = perfq.topdown(CAPTURE)
    frame = t.to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == t.column_names
    top = duckdb.sql("SELECT symbol FROM t ORDER BY samples DESC LIMIT 1").fetchall()
    assert top == [(frame.sort_values("samples", ascending=False).iloc[0]["symbol"],)]


def test_batches_stream_once() -> None:
    reader = perfq.query_batches(CAPTURE, SQL)
    rows = sum(b.num_rows for b in reader)
    assert rows == 2600
    with pytest.raises(perfq.PerfqError, match="the batches were read already"):
        reader.read_all()


def test_a_schema_read_leaves_the_batches() -> None:
    # DuckDB asks for a stream to learn the schema, then for another to
    # scan: the first takes nothing.
    reader = perfq.query_batches(CAPTURE, SQL)
    assert pa.RecordBatchReader.from_stream(reader).schema.names
    assert duckdb.sql("SELECT count(*) FROM reader").fetchall() == [(2600,)]
