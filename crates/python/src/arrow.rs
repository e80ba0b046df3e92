//! Tables and batch readers as Python objects that hand their rows over
//! through the Arrow PyCapsule interface (`__arrow_c_stream__`): pyarrow,
//! Polars, DuckDB and pandas (through pyarrow) read the buffers perfq
//! computed, with no copy.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use perfq::arrow::datatypes::SchemaRef;
use perfq::arrow::error::ArrowError;
use perfq::arrow::record_batch::RecordBatch;
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
pub struct BatchReader {
    schema: SchemaRef,
    batches: Shared,
}

/// The batches, until a stream takes them.
type Shared = Arc<Mutex<Option<perfq::Batches>>>;

impl BatchReader {
    pub fn new(batches: perfq::Batches) -> Self {
        BatchReader {
            schema: batches.reader.schema(),
            batches: Arc::new(Mutex::new(Some(batches))),
        }
    }
}

#[pymethods]
impl BatchReader {
    /// The batches as an Arrow C stream in a capsule. The stream takes
    /// them when its first batch is asked for: a consumer that only reads
    /// the schema (DuckDB does so before it scans) leaves them for the
    /// next stream. Once taken, another stream fails.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let stream = Deferred {
            schema: self.schema.clone(),
            shared: self.batches.clone(),
            taken: None,
        };
        capsule(py, perfq::c_stream(Box::new(stream)))
    }
}

/// A stream of the shared batches, taken at its first batch. At their
/// end, it says what their reading said: warnings as Python warnings
/// (`perfq._say`, as for every other answer); a warning the filters make
/// an error ends the batches with it.
struct Deferred {
    schema: SchemaRef,
    shared: Shared,
    taken: Option<perfq::Batches>,
}

impl Iterator for Deferred {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.taken.is_none() {
            let mut shared = self.shared.lock().unwrap_or_else(|e| e.into_inner());
            match shared.take() {
                Some(batches) => self.taken = Some(batches),
                None => {
                    let read = "the batches were read already".to_string();
                    return Some(Err(ArrowError::ExternalError(read.into())));
                }
            }
        }
        let batches = self.taken.as_mut()?;
        let next = batches.reader.next();
        if matches!(next, None | Some(Err(_))) {
            let said = batches.later.take();
            if !said.is_empty() {
                if let Err(e) = Python::attach(|py| crate::say(py, said)) {
                    return Some(Err(ArrowError::ExternalError(e.into())));
                }
            }
        }
        next
    }
}

impl perfq::RecordBatchReader for Deferred {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

fn capsule(py: Python<'_>, stream: FFI_ArrowArrayStream) -> PyResult<Bound<'_, PyCapsule>> {
    // The consumer moves the stream out of the capsule (leaving a
    // released one); dropping the capsule drops what is left.
    PyCapsule::new_with_value(py, stream, STREAM)
}
