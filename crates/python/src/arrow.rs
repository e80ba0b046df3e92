//! Tables and batch readers as Python objects that hand their rows over
//! through the Arrow PyCapsule interface (`__arrow_c_stream__`): pyarrow,
//! Polars, DuckDB and pandas (through pyarrow) read the buffers perfq
//! computed, with no copy.

use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use perfq::FFI_ArrowArrayStream;

/// The capsule name the interface requires for a stream.
const STREAM: &std::ffi::CStr = c"arrow_array_stream";

/// A result table held in memory. Read it with `pyarrow.table(t)`,
/// `polars.from_arrow(t)`, `duckdb.sql("... FROM t")`, or `t.to_pandas()`.
#[pyclass(module = "perfq._native", frozen)]
pub struct Table(perfq::Table);

impl From<perfq::Table> for Table {
    fn from(t: perfq::Table) -> Self {
        Table(t)
    }
}

#[pymethods]
impl Table {
    /// The rows as an Arrow C stream in a capsule (the Arrow PyCapsule
    /// interface). Each call streams the same buffers again; a requested
    /// schema is not applied (the consumer casts).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        capsule(py, self.0.c_stream())
    }

    /// The number of rows.
    #[getter]
    fn num_rows(&self) -> usize {
        self.0.num_rows()
    }

    /// The column names, in order.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.0
            .schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }

    fn __len__(&self) -> usize {
        self.0.num_rows()
    }
}

/// A result read a batch at a time, as it is computed; it can be read
/// once.
#[pyclass(module = "perfq._native", frozen)]
pub struct BatchReader(Mutex<Option<Box<dyn perfq::RecordBatchReader + Send>>>);

impl BatchReader {
    pub fn new(reader: Box<dyn perfq::RecordBatchReader + Send>) -> Self {
        BatchReader(Mutex::new(Some(reader)))
    }
}

#[pymethods]
impl BatchReader {
    /// The batches as an Arrow C stream in a capsule; the stream takes
    /// the reader, so this works once.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let taken = self.0.lock().map_err(|_| poisoned())?.take();
        let reader = taken.ok_or_else(|| PyValueError::new_err("the batches were read already"))?;
        capsule(py, perfq::c_stream(reader))
    }
}

fn poisoned() -> PyErr {
    crate::InternalError::new_err("internal error (please report): a reader's lock was poisoned")
}

fn capsule(py: Python<'_>, stream: FFI_ArrowArrayStream) -> PyResult<Bound<'_, PyCapsule>> {
    // The consumer moves the stream out of the capsule (leaving a
    // released one); dropping the capsule drops what is left.
    PyCapsule::new_with_value(py, stream, STREAM)
}
