"""perfq: Linux perf.data captures as Arrow tables.

Each function is a perfq command: its keyword arguments are the command's
options (``cpu_model="icelake"`` is ``--cpu-model icelake``), with the
command line's names, defaults and checks, and its answer is what the
command prints with ``--format json``, as a table. Tables hand their
columns over through the Arrow PyCapsule interface, without copies::

    import perfq, pyarrow as pa, polars as pl, duckdb

    t = perfq.topdown("perf.data")          # a perfq.Table
    t.to_pandas()                           # pandas (through pyarrow)
    pa.table(t); pl.from_arrow(t)           # pyarrow, Polars
    duckdb.sql("SELECT * FROM t")           # DuckDB reads it by name

A source is a perf.data file (converted once into perfq's cache, as the
command line does), a dataset folder written by ``convert``, or either as
an ``s3://`` URL; or a list of captures, answered as a dataset holding
them all (converted into a temporary folder for the call). Warnings
about a capture (damage, missing symbols) are Python warnings of
category ``PerfqWarning``; with ``strict=True`` a damaged capture
raises ``DamagedCaptureError`` instead. Notes (which event was chosen)
go to the ``perfq`` logger. Errors are ``PerfqError`` with the command
line's message. The work runs without holding the interpreter's lock,
and Ctrl-C stops it within a second, leaving no half-written output.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import warnings
from typing import Any, Iterable, Iterator, Sequence, Union

from . import _native
from ._native import (
    DamagedCaptureError,
    InternalError,
    PerfqError,
    UsageError,
)

__version__: str = _native.__version__

__all__ = [
    "BatchReader",
    "DamagedCaptureError",
    "InternalError",
    "PerfqError",
    "PerfqWarning",
    "Table",
    "UsageError",
    "convert",
    "diff",
    "export",
    "flamegraph",
    "html",
    "info",
    "query",
    "query_batches",
    "report",
    "samples",
    "topdown",
]

Path = Union[str, "os.PathLike[str]"]
Source = Union[Path, Sequence[Path]]

_log = logging.getLogger("perfq")


class PerfqWarning(UserWarning):
    """What perfq found odd or missing in what it read (the command line's
    ``perfq: warning:`` lines)."""


class Table:
    """A result table. It is read without copies by anything that takes
    the Arrow PyCapsule interface: ``pyarrow.table(t)``,
    ``polars.from_arrow(t)``, DuckDB (``duckdb.sql("FROM t")``)."""

    def __init__(self, native: _native.Table) -> None:
        self._native = native

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self._native.__arrow_c_stream__(requested_schema)

    @property
    def num_rows(self) -> int:
        """The number of rows."""
        return self._native.num_rows

    @property
    def column_names(self) -> list[str]:
        """The column names, in order."""
        return self._native.column_names

    def __len__(self) -> int:
        return self._native.num_rows

    def to_arrow(self) -> Any:
        """A ``pyarrow.Table`` over the same buffers."""
        import pyarrow as pa

        return pa.table(self)

    def to_pandas(self, **kwargs: Any) -> Any:
        """A pandas DataFrame (made by pyarrow; ``kwargs`` go to its
        ``to_pandas``)."""
        return self.to_arrow().to_pandas(**kwargs)

    def to_polars(self) -> Any:
        """A Polars DataFrame over the same buffers where Polars' types
        allow. (``polars.from_arrow(t)`` makes a Series of structs of any
        Arrow stream: ``polars.DataFrame(t)`` is the table.)"""
        import polars as pl

        return pl.DataFrame(self)

    def to_pylist(self) -> list[dict[str, Any]]:
        """The rows as dicts (made by pyarrow)."""
        return self.to_arrow().to_pylist()

    def __repr__(self) -> str:
        return f"perfq.Table({self.num_rows} rows: {', '.join(self.column_names)})"


class BatchReader:
    """A result read a batch at a time as it is computed, for results
    larger than memory. It can be read once: iterate over it (pyarrow
    ``RecordBatch`` objects), or hand it to ``pyarrow.RecordBatchReader.
    from_stream``, Polars or DuckDB."""

    def __init__(self, native: _native.BatchReader) -> None:
        self._native = native

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self._native.__arrow_c_stream__(requested_schema)

    def __iter__(self) -> Iterator[Any]:
        import pyarrow as pa

        reader = pa.RecordBatchReader.from_stream(self)
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                return
            except pa.ArrowException as e:
                raise PerfqError(_arrow_message(e)) from None
            yield batch

    def read_all(self) -> Any:
        """Every remaining batch, as one ``pyarrow.Table``."""
        import pyarrow as pa

        try:
            return pa.RecordBatchReader.from_stream(self).read_all()
        except pa.ArrowException as e:
            raise PerfqError(_arrow_message(e)) from None


def _arrow_message(e: Exception) -> str:
    """perfq's message inside the error pyarrow made of it."""
    return str(e).split("External error: ", 1)[-1]


def _words(command: str, positional: Iterable[Any], options: dict[str, Any]) -> list[str]:
    """The command line of ``command``: each option ``name=value`` as
    ``--name value`` (``_`` becomes ``-``); ``True`` is the bare flag,
    ``False`` and ``None`` leave it out, a list repeats it."""
    words = [command, *(os.fspath(p) for p in positional)]
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        if value is True:
            words.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                words += [flag, os.fspath(v) if isinstance(v, os.PathLike) else str(v)]
        else:
            words += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return words


def _say(said: Sequence[tuple[str, str]]) -> None:
    for kind, text in said:
        if kind == "warning":
            warnings.warn(text, PerfqWarning, stacklevel=4)
        else:
            _log.info(text)


def _run(words: list[str], strict: bool, streamed: bool = False) -> tuple[str, Any]:
    if strict:
        words = ["--strict", *words]
    try:
        kind, value, said = _native.answer(words, streamed)
    except PerfqError as e:
        _say(getattr(e, "said", ()))
        raise
    _say(said)
    if kind == "table":
        return kind, Table(value)
    if kind == "batches":
        return kind, BatchReader(value)
    return kind, value


def _sources(paths: Union[Path, Sequence[Path]]) -> list[Path]:
    if isinstance(paths, (str, os.PathLike)):
        return [paths]
    return list(paths)


# The options of a source that say where symbols come from: a list's
# conversion takes them (the answer's command then reads a dataset).
_SYMBOL_OPTIONS = ("symfs", "kallsyms", "buildid_dir", "archive")

# The temporary datasets of streamed answers over lists: a stream may be
# read after its reader object is gone (pyarrow takes the stream itself),
# so they are removed when the interpreter exits.
_streamed_datasets: list[tempfile.TemporaryDirectory] = []


def _dataset(
    source: Source, options: dict[str, Any], strict: bool
) -> tuple[Path, tempfile.TemporaryDirectory | None]:
    """The source a command reads: a path as it is; a list of captures
    converted into a temporary dataset (returned, to remove once the
    answer no longer reads it), its symbol options taken out of
    ``options`` for the conversion."""
    if isinstance(source, (str, os.PathLike)):
        return source, None
    symbols = {k: options.pop(k) for k in _SYMBOL_OPTIONS if k in options}
    options.pop("no_cache", None)
    folder = tempfile.TemporaryDirectory(prefix="perfq-")
    try:
        dataset = os.path.join(folder.name, "dataset")
        convert(_sources(source), dataset, strict=strict, **symbols)
    except BaseException:
        folder.cleanup()
        raise
    return dataset, folder


def _answer(
    command: str,
    source: Source,
    rest: Sequence[Any],
    options: dict[str, Any],
    strict: bool,
    streamed: bool = False,
) -> Any:
    """``command`` over ``source`` (then the positional ``rest``)."""
    options = dict(options)
    dataset, folder = _dataset(source, options, strict)
    try:
        answer = _run(_words(command, [dataset, *rest], options), strict, streamed)[1]
    except BaseException:
        if folder is not None:
            folder.cleanup()
        raise
    if folder is not None:
        if streamed:
            _streamed_datasets.append(folder)
        else:
            folder.cleanup()
    return answer


def convert(
    paths: Union[Path, Sequence[Path]],
    dataset: Path,
    *,
    symbols: bool = True,
    stack_memory: Union[int, str, None] = None,
    force: bool = False,
    strict: bool = False,
    **options: Any,
) -> str:
    """Converts perf.data captures into the Parquet dataset ``dataset``
    (``perfq convert FILES -o DATASET``; docs/schema.md describes its
    tables). ``symbols=False`` leaves frames unsymbolized; ``stack_memory``
    (bytes, or a size such as ``"64M"``) keeps that much of each
    ``--call-graph dwarf`` user stack; ``force`` replaces captures already
    there. Other options: ``symfs``, ``kallsyms``, ``buildid_dir``,
    ``archive``. Returns the dataset's path. Ctrl-C stops it and leaves
    the dataset without the capture being written."""
    opts = dict(output=dataset, force=force, no_symbols=not symbols, stack_memory=stack_memory)
    _run(_words("convert", _sources(paths), {**opts, **options}), strict)
    return os.fspath(dataset)


def query(source: Source, sql: str, *, capture: str | None = None, strict: bool = False, **options: Any) -> Table:
    """Runs one read-only SQL statement (DataFusion's dialect) over a
    dataset or a capture, with every table and documented view registered
    (``perfq query``). ``capture`` limits a dataset to one capture."""
    return _answer("query", source, [sql], dict(capture=capture, **options), strict)


def query_batches(
    source: Source, sql: str, *, capture: str | None = None, strict: bool = False, **options: Any
) -> BatchReader:
    """As ``query``, but the result comes a batch at a time as it is
    computed: for results larger than memory. (A list's temporary dataset
    is removed when the interpreter exits.)"""
    return _answer("query", source, [sql], dict(capture=capture, **options), strict, streamed=True)


def topdown(
    source: Source,
    *,
    level: int = 1,
    by: str = "function",
    total: bool = False,
    interval_ms: int | None = None,
    cpu_model: str | None = None,
    min_samples: int = 30,
    pid: Sequence[int] | None = None,
    strict: bool = False,
    **options: Any,
) -> Table:
    """Top-down (TMA) shares of pipeline slots per function, thread,
    process or DSO (``by``), self or with ``total=True`` inclusive, or
    per interval of ``interval_ms`` (``perfq topdown``; docs/topdown.md).
    ``level`` 2 adds the level-2 nodes; ``cpu_model`` uses another CPU's
    formulas; rows with fewer than ``min_samples`` samples are marked
    (``low_samples``), not hidden; ``pid`` keeps those processes."""
    opts = dict(
        level=level,
        by=by,
        total=total,
        interval=interval_ms,
        cpu_model=cpu_model,
        min_samples=min_samples,
        pid=pid,
    )
    return _answer("topdown", source, [], {**opts, **options}, strict)


def report(
    source: Path,
    *,
    children: bool = False,
    sort: str = "dso,sym",
    event: str | None = None,
    pid: Sequence[int] | None = None,
    off_cpu: bool = False,
    strict: bool = False,
    **options: Any,
) -> Table:
    """Per-function self samples and periods of a perf.data file, as
    ``perf report --no-children`` counts them; with ``children=True`` also
    the totals of ``--children`` (``perfq report``). ``sort`` is perf's
    row key (``"dso,sym"``, ``"sym"``, ``"dso"``). With ``off_cpu=True``,
    time off CPU instead (``--off-cpu``: ``self_ns``, with ``children``
    ``total_ns``, and that time split into ``runnable_ns``,
    ``sleeping_ns`` and ``blocked_ns``), from a capture of
    ``sched:sched_switch`` or ``--switch-events``."""
    opts = dict(children=children, sort=sort, event=event, pid=pid, off_cpu=off_cpu)
    return _run(_words("report", [source], {**opts, **options}), strict)[1]


def diff(
    base: Path, new: Path, *, by: str = "function", event: str | None = None, strict: bool = False, **options: Any
) -> Table:
    """Compares two captures per function or DSO: the change in share and
    in top-down categories, with its significance (``perfq diff``)."""
    opts = dict(by=by, event=event)
    return _run(_words("diff", [base, new], {**opts, **options}), strict)[1]


def flamegraph(
    source: Source,
    path: Path,
    *,
    folded: bool = False,
    samples: bool = False,
    event: str | None = None,
    color: str = "default",
    capture: str | None = None,
    strict: bool = False,
    **options: Any,
) -> str:
    """Writes an interactive flame graph (SVG), or with ``folded=True``
    folded stacks, to ``path`` (``perfq flamegraph``). ``color="topdown"``
    colours each function by its dominant top-down category. Returns the
    path."""
    opts = dict(output=path, folded=folded, samples=samples, event=event, color=color, capture=capture)
    _answer("flamegraph", source, [], {**opts, **options}, strict)
    return os.fspath(path)


def html(
    source: Source,
    path: Path,
    *,
    event: str | None = None,
    capture: str | None = None,
    diff: Path | None = None,
    strict: bool = False,
    **options: Any,
) -> str:
    """Writes the self-contained HTML report to ``path`` (``perfq
    html``); ``diff`` names a baseline capture to compare with. Returns
    the path."""
    opts = dict(output=path, event=event, capture=capture, diff=diff)
    _answer("html", source, [], {**opts, **options}, strict)
    return os.fspath(path)


def export(
    source: Source,
    path: Path,
    *,
    to: str,
    event: str | None = None,
    capture: str | None = None,
    strict: bool = False,
    **options: Any,
) -> str:
    """Writes the samples for another viewer, ``to="pprof"`` or
    ``to="speedscope"``, to ``path`` (``perfq export``). Returns the
    path."""
    opts = dict(to=to, output=path, event=event, capture=capture)
    _answer("export", source, [], {**opts, **options}, strict)
    return os.fspath(path)


def samples(
    path: Path, *, symbols: bool = False, strict: bool = False, **options: Any
) -> BatchReader:
    """Every sample record of a perf.data file in time order, with every
    decoded field (``perfq dump``'s, typed: offset, event, time, pid, tid,
    cpu, cpumode, ip, addr, id, stream_id, period, weight, data_src,
    phys_addr, cgroup, the callchain's addresses and contexts, and a
    group's values with their deltas), a batch of 65,536 rows at a time
    as the capture is read: memory stays a few batches' whatever the
    capture's length.

    ``symbols=True`` adds ``frames``: per sample, its frames leaf first as
    ``perfq dump --symbols`` gives them (address, context, dso, symbol,
    raw_symbol, dso_offset, binary, vaddr, why a frame is unresolved, and
    the inline chain with file and line); the locations are resolved
    first, in a read of their own. Other options: ``symfs``,
    ``kallsyms``, ``buildid_dir``, ``archive``.

    Warnings about the capture are raised as ``PerfqWarning`` when the
    last batch has been read; with ``strict=True`` damage ends the
    batches with ``PerfqError`` instead."""
    options = dict(options, symbols=symbols)
    return _run(_words("dump", [path], options), strict, streamed=True)[1]


def info(path: Path, *, strict: bool = False) -> dict[str, Any]:
    """Describes a capture: header, events, record counts, losses and
    warnings (``perfq info --format json``), as a dict."""
    return json.loads(_run(_words("info", [path], dict(format="json")), strict)[1])
