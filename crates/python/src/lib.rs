//! `perfq._native`: perfq's Rust side for Python. The Python package
//! (`python/perfq`) turns each function's keywords into the words of a
//! command line and calls `answer`, which runs that command through
//! `perfq::answer`: one definition of every option, the command line's.
//! Tables leave as Arrow C streams (`arrow.rs`); the work runs off the
//! interpreter's lock, stoppable by Ctrl-C (`wait.rs`).

mod arrow;
mod wait;

use std::ffi::OsString;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use perfq::{Answer, Failure, FailureKind, Rows};

create_exception!(
    _native,
    PerfqError,
    PyException,
    "A perfq command failed; the message is the command line's `perfq: error:` line."
);
create_exception!(
    _native,
    UsageError,
    PerfqError,
    "The arguments are wrong: an unknown option or a value it does not take."
);
create_exception!(
    _native,
    DamagedCaptureError,
    PerfqError,
    "A capture is damaged and strict=True made that an error."
);
create_exception!(
    _native,
    InternalError,
    PerfqError,
    "A defect of perfq: please report it with the message."
);

/// Runs the perfq command `args` (the words after `perfq`) and returns
/// `(kind, answer, said)`: kind is "table" (a `Table`), "batches" (a
/// `BatchReader`), "json" or "text" (a str); `said` lists the warnings and
/// notes as `(kind, text)`. With `streamed`, a query's rows come as
/// batches. Raises `PerfqError` (or a subclass) with the command line's
/// message, its `said` attribute holding what was said before;
/// `KeyboardInterrupt` on Ctrl-C, once the work has stopped.
#[pyfunction]
#[pyo3(signature = (args, streamed = false))]
fn answer(py: Python<'_>, args: Vec<String>, streamed: bool) -> PyResult<Bound<'_, PyTuple>> {
    let args: Vec<OsString> = args.into_iter().map(OsString::from).collect();
    let rows = if streamed {
        Rows::Streamed
    } else {
        Rows::Whole
    };
    let answered = wait::off_the_lock(py, move || perfq::answer(&args, rows))?;
    let answered = answered.map_err(|f| raise(py, f))?;
    let said = pairs(answered.said);
    let (kind, value): (&str, Py<PyAny>) = match answered.answer {
        Answer::Table(t) => (
            "table",
            arrow::Table::from(t).into_pyobject(py)?.into_any().unbind(),
        ),
        Answer::Batches(b) => (
            "batches",
            arrow::BatchReader::new(b)
                .into_pyobject(py)?
                .into_any()
                .unbind(),
        ),
        Answer::Json(text) => ("json", text.into_pyobject(py)?.into_any().unbind()),
        Answer::Printed(text) => ("text", text.into_pyobject(py)?.into_any().unbind()),
    };
    (kind, value, said).into_pyobject(py)
}

/// The command line itself, for the `perfq` console script: `argv` as
/// `sys.argv` (the program's name first). Returns the exit status.
#[pyfunction]
fn run_cli(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(move || perfq::main_with(argv))
}

/// The options of the perfq command `command` that have a default, as
/// `{long name: default}`: the Python functions' defaults are checked
/// against them.
#[pyfunction]
fn option_defaults(command: &str) -> PyResult<std::collections::BTreeMap<String, String>> {
    let options = perfq::defaults(command)
        .ok_or_else(|| UsageError::new_err(format!("no command {command:?}")))?;
    Ok(options.into_iter().collect())
}

/// Remarks as Python gets them: `(kind, text)`.
fn pairs(said: Vec<perfq::say::Said>) -> Vec<(&'static str, String)> {
    let kind_name = |kind| match kind {
        perfq::say::Kind::Warning => "warning",
        perfq::say::Kind::Note => "note",
    };
    said.into_iter()
        .map(|s| (kind_name(s.kind), s.text))
        .collect()
}

/// Says `said` the Python way, through the package's `_say`: warnings as
/// `PerfqWarning`, notes to the `perfq` logger.
fn say(py: Python<'_>, said: Vec<perfq::say::Said>) -> PyResult<()> {
    py.import("perfq")?.getattr("_say")?.call1((pairs(said),))?;
    Ok(())
}

/// The Python exception for a failure, with what was said before it.
fn raise(py: Python<'_>, f: Failure) -> PyErr {
    let err = match f.kind {
        FailureKind::Usage => UsageError::new_err(f.message),
        FailureKind::Failed => PerfqError::new_err(f.message),
        FailureKind::Damaged => DamagedCaptureError::new_err(f.message),
        FailureKind::Internal => InternalError::new_err(f.message),
        FailureKind::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err(f.message),
    };
    let said = pairs(f.said);
    // An exception without the attribute is still the exception.
    let _ = err.value(py).setattr("said", said);
    err
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(answer, m)?)?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(option_defaults, m)?)?;
    m.add_class::<arrow::Table>()?;
    m.add_class::<arrow::BatchReader>()?;
    m.add("PerfqError", py.get_type::<PerfqError>())?;
    m.add("UsageError", py.get_type::<UsageError>())?;
    m.add("DamagedCaptureError", py.get_type::<DamagedCaptureError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
