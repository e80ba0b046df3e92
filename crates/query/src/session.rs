//! A DataFusion session over a dataset: every table of every capture
//! registered under its name, with the `capture` partition column.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use perfq_source::{Location, ObjectUrl};

use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{ListingOptions, ListingTableUrl};
use datafusion::physical_plan::SendableRecordBatchStream;
use datafusion::prelude::{SQLOptions, SessionConfig, SessionContext};
use futures::FutureExt;

use crate::Error;

/// The stack of each of the session's threads. Every query is planned
/// and run on them, and DataFusion's expression trees are copied,
/// compared and dropped by recursion: [`crate::nesting::MAX_LEVELS`] says
/// how deep a statement may be for that to fit. Only the pages a query
/// touches are ever mapped.
const STACK: usize = 256 << 20;

/// The tables a dataset's captures hold (docs/schema.md).
pub const TABLES: &[&str] = &[
    "capture",
    "events",
    "samples",
    "read_values",
    "stacks",
    "frames",
    "dsos",
    "branches",
    "raw",
    "data_src",
    "threads",
    "mappings",
    "quality",
    "off_cpu",
    "pmus",
];

/// A query session over one dataset.
pub struct Session {
    ctx: SessionContext,
    /// Always there; taken only when the session is dropped (`Drop`).
    runtime: Option<tokio::runtime::Runtime>,
    /// Where the dataset is.
    place: Location,
    /// Its name in messages: the folder, or the URL.
    dataset: PathBuf,
    tables: Vec<&'static str>,
    /// The one capture registered, if only one is.
    only: Option<String>,
    /// Captures with tables but no capture table: not committed yet (a
    /// bucket's capture is copied in table by table, its capture table
    /// last), so left out of every table.
    uncommitted: Vec<String>,
    /// The standard views perfq defined (`crate::views`), as against a
    /// caller's of the same name.
    standard: std::sync::Mutex<Vec<&'static str>>,
    /// The sampled stacks the stack tables read, where perfq made them.
    sampled: std::sync::Mutex<Option<std::sync::Arc<crate::stack_tables::SampledStacks>>>,
}

impl Session {
    /// Opens the dataset at `dataset` (a folder of `capture=<id>/`
    /// folders) and registers every table its captures have.
    pub fn open(dataset: &Path) -> Result<Session, Error> {
        Session::open_at(&Location::Local(dataset.into()))
    }

    /// Opens one capture of a dataset: the tables hold its rows only, and
    /// only its files are read (a cache dataset of many captures costs
    /// nothing more than one).
    pub fn open_capture(dataset: &Path, capture: &str) -> Result<Session, Error> {
        Session::open_capture_at(&Location::Local(dataset.into()), capture)
    }

    /// [`Session::open`] of a dataset in a folder or under a URL
    /// (`s3://bucket/prefix`).
    pub fn open_at(dataset: &Location) -> Result<Session, Error> {
        Session::open_with(dataset, None)
    }

    /// [`Session::open_capture`] of a dataset in a folder or under a URL.
    pub fn open_capture_at(dataset: &Location, capture: &str) -> Result<Session, Error> {
        let none = || Error::NotDataset {
            path: name_of(dataset),
            why: format!("it holds no capture {capture}"),
        };
        if capture.is_empty() || !capture.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(none());
        }
        match Session::open_with(dataset, Some(capture)) {
            Err(Error::NotDataset { .. }) => Err(none()),
            s => s,
        }
    }

    fn open_with(dataset: &Location, only: Option<&str>) -> Result<Session, Error> {
        let name = name_of(dataset);
        if let Location::Local(folder) = dataset {
            if !folder.is_dir() {
                return Err(Error::NotDataset {
                    path: name,
                    why: "not a folder".into(),
                });
            }
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(std::thread::available_parallelism().map_or(2, |n| n.get()))
            .thread_stack_size(STACK)
            .enable_all()
            .build()
            .map_err(|e| Error::Io {
                path: name.clone(),
                err: e,
            })?;
        let ctx = SessionContext::new_with_config(config());
        // Sums of DOUBLE that do not depend on the order rows arrive in.
        ctx.register_udaf(crate::exact_sum::udaf());
        if let Location::Object(url) = dataset {
            register_store(&ctx, url)?;
        }
        let mut s = Session {
            ctx,
            runtime: Some(runtime),
            place: dataset.clone(),
            dataset: name,
            tables: Vec::new(),
            only: only.map(str::to_string),
            uncommitted: Vec::new(),
            standard: std::sync::Mutex::new(Vec::new()),
            sampled: std::sync::Mutex::new(None),
        };
        let present = s.present_tables()?;
        if !present.contains(&"capture") {
            return Err(Error::NotDataset {
                path: s.dataset.clone(),
                why: "it holds no converted capture (no capture=<id>/capture.parquet)".into(),
            });
        }
        for t in present {
            s.register(t)?;
        }
        Ok(s)
    }

    /// Which tables at least one committed capture has (a dataset
    /// written by an older perfq may lack newer ones); the captures not
    /// committed go to `uncommitted`.
    fn present_tables(&mut self) -> Result<Vec<&'static str>, Error> {
        let files = match &self.place {
            Location::Local(folder) => local_files(folder, self.only.as_deref())?,
            Location::Object(url) => self.runtime().block_on(object_files(url))?,
        };
        let wanted = |capture: &str| self.only.as_deref().is_none_or(|id| id == capture);
        let committed: std::collections::BTreeSet<&str> = files
            .iter()
            .filter(|(c, f)| f == "capture.parquet" && wanted(c))
            .map(|(c, _)| c.as_str())
            .collect();
        let mut found = Vec::new();
        let mut uncommitted = Vec::new();
        for (capture, file) in &files {
            if !wanted(capture) {
                continue;
            }
            if !committed.contains(capture.as_str()) {
                uncommitted.push(capture.clone());
                continue;
            }
            let table = file.strip_suffix(".parquet");
            if let Some(t) = TABLES.iter().find(|t| Some(**t) == table) {
                if !found.contains(t) {
                    found.push(*t);
                }
            }
        }
        found.sort_by_key(|t| TABLES.iter().position(|x| x == t));
        uncommitted.sort();
        uncommitted.dedup();
        self.uncommitted = uncommitted;
        Ok(found)
    }

    fn register(&mut self, table: &'static str) -> Result<(), Error> {
        let context = format!("registering {table}");
        let options = ListingOptions::new(Arc::new(ParquetFormat::default()))
            .with_file_extension(format!("/{table}.parquet"));
        // One capture: the dataset's table filtered to the capture below.
        // The filter on the partition column is applied by listing that
        // capture's folder alone (nothing else is read), and the schema
        // is that of the capture's own file (no other capture's file is
        // opened). A view adding the id as a literal column instead made
        // DataFusion see every grouping by capture as ordered (the column
        // is constant), and a partial aggregation in that order is never
        // skipped for too many groups, which made function_total over a
        // system-wide capture markedly slower.
        let (name, schema) = match &self.only {
            None if self.uncommitted.is_empty() => (table.to_string(), None),
            None => (format!("_listed_{table}"), None),
            Some(id) => {
                let own = ListingTableUrl::parse(format!("{}capture={id}/", self.url()))
                    .map_err(|e| Error::query(&context, e))?;
                let schema = self
                    .runtime()
                    .block_on(options.infer_schema(&self.ctx.state(), &own))
                    .map_err(|e| Error::query(&context, e))?;
                (format!("_capture_{table}"), Some(schema))
            }
        };
        let options =
            options.with_table_partition_cols(vec![("capture".to_string(), DataType::Utf8)]);
        let url = self.url();
        self.runtime()
            .block_on(
                self.ctx
                    .register_listing_table(&name, &url, options, schema, None),
            )
            .map_err(|e| Error::query(&context, e))?;
        let filter = match &self.only {
            Some(id) => Some(format!("capture = '{id}'")),
            None if self.uncommitted.is_empty() => None,
            None => {
                // Names from a listing: quoted as SQL strings.
                let quoted: Vec<String> = (self.uncommitted.iter())
                    .map(|c| format!("'{}'", c.replace('\'', "''")))
                    .collect();
                Some(format!("capture NOT IN ({})", quoted.join(", ")))
            }
        };
        if let Some(filter) = filter {
            self.sql(&format!(
                "CREATE VIEW {table} AS SELECT * FROM {name} WHERE {filter}"
            ))?;
        }
        self.tables.push(table);
        Ok(())
    }

    /// The dataset's URL for DataFusion, ending in `/`.
    fn url(&self) -> String {
        match &self.place {
            Location::Local(folder) => format!("{}/", folder.display()),
            Location::Object(url) => format!("{}/", url.to_string().trim_end_matches('/')),
        }
    }

    /// The dataset's folder, or its URL.
    pub fn dataset(&self) -> &Path {
        &self.dataset
    }

    /// Whether the dataset has `table`.
    pub fn has_table(&self, table: &str) -> bool {
        self.tables.contains(&table)
    }

    /// Runs one SQL statement and collects its result.
    pub fn sql(&self, sql: &str) -> Result<Vec<RecordBatch>, Error> {
        self.query(sql).map(|(_, rows)| rows)
    }

    /// Runs one SQL statement: its result's schema (there even when no
    /// row comes back) and rows.
    pub fn query(&self, sql: &str) -> Result<(SchemaRef, Vec<RecordBatch>), Error> {
        self.collect(sql, SQLOptions::new())
    }

    /// Runs one statement a user wrote ([`Session::query`]'s result), only
    /// if it reads: DDL (`CREATE TABLE`, `CREATE EXTERNAL TABLE`, `CREATE
    /// VIEW`, `DROP`), DML (`INSERT`, `UPDATE`, `DELETE`) and `COPY … TO`
    /// are refused before anything runs, so that a query can neither write
    /// a file nor change what later statements see.
    pub fn query_read_only(&self, sql: &str) -> Result<(SchemaRef, Vec<RecordBatch>), Error> {
        let reads_only = SQLOptions::new()
            .with_allow_ddl(false)
            .with_allow_dml(false);
        self.collect(sql, reads_only)
    }

    /// `sql` planned under `options`, run, and its result collected.
    fn collect(
        &self,
        sql: &str,
        options: SQLOptions,
    ) -> Result<(SchemaRef, Vec<RecordBatch>), Error> {
        let (ctx, sql) = (self.ctx.clone(), sql.to_owned());
        self.wait(async move {
            let df = plan_in(&ctx, &sql, options).await?;
            let schema = df.schema().inner().clone();
            let rows = df.collect().await.map_err(|e| Error::query("running", e))?;
            Ok((schema, rows))
        })
    }

    /// Runs `work` on the session's runtime to its end, or until a stop
    /// is requested ([`perfq_ids::interrupt`]): then it is aborted, which
    /// cancels what DataFusion was computing for it at its next yield, and
    /// the answer is [`Error::Interrupted`] at once.
    ///
    /// The work is a task of the runtime, and this thread waits for its
    /// answer outside the runtime, looking at the stop request every
    /// 50 ms: an operator that computes long between yields holds its
    /// worker thread, and with every worker busy the runtime's own timers
    /// would not fire.
    fn wait<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T, Error>> + Send + 'static,
    ) -> Result<T, Error> {
        use std::sync::mpsc::{channel, RecvTimeoutError};
        let (tx, rx) = channel();
        let task = self.runtime().spawn(async move {
            let answer = AssertUnwindSafe(work).catch_unwind().await;
            // The receiver is gone only after a stop: nobody waits then.
            let _ = tx.send(answer);
        });
        loop {
            match rx.recv_timeout(std::time::Duration::from_millis(50)) {
                Ok(Ok(answer)) => return answer,
                // A panic in the work is a panic here, as it was before
                // the work had a task of its own.
                Ok(Err(panic)) => std::panic::resume_unwind(panic),
                Err(RecvTimeoutError::Timeout) if perfq_ids::interrupt::requested() => {
                    task.abort();
                    return Err(Error::Interrupted);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Error::Shape(
                        "the query's task ended without an answer".into(),
                    ));
                }
            }
        }
    }

    /// The stream's next batch, computed as [`Session::wait`] runs work;
    /// the stream comes back with it.
    fn next_batch(&self, mut stream: SendableRecordBatchStream) -> Result<NextBatch, Error> {
        use futures::StreamExt;
        self.wait(async move {
            let batch = stream.next().await;
            Ok((stream, batch))
        })
    }

    /// `sql` planned under `options`, and the stream of its result.
    fn stream(&self, sql: &str, options: SQLOptions) -> Result<SendableRecordBatchStream, Error> {
        let (ctx, sql) = (self.ctx.clone(), sql.to_owned());
        self.wait(async move {
            let df = plan_in(&ctx, &sql, options).await?;
            df.execute_stream()
                .await
                .map_err(|e| Error::query("running", e))
        })
    }

    /// Runs one read-only statement ([`Session::query_read_only`]'s rule)
    /// and returns its result as it is computed, a batch at a time: for
    /// results larger than memory. The session goes with it.
    pub fn into_batches(self, sql: &str) -> Result<Batches, Error> {
        let reads_only = SQLOptions::new()
            .with_allow_ddl(false)
            .with_allow_dml(false);
        let stream = self.stream(sql, reads_only)?;
        Ok(Batches {
            schema: stream.schema(),
            session: self,
            stream: Some(stream),
        })
    }

    /// Runs one SQL statement and hands its result to `f` a batch at a
    /// time, as it is computed: for results too large to hold whole
    /// (every sampled stack's frame list of a system-wide capture).
    pub fn for_each_batch(
        &self,
        sql: &str,
        mut f: impl FnMut(RecordBatch) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut stream = self.stream(sql, SQLOptions::new())?;
        loop {
            let (rest, batch) = self.next_batch(stream)?;
            match batch {
                None => return Ok(()),
                Some(batch) => f(batch.map_err(|e| Error::query("running", e))?)?,
            }
            stream = rest;
        }
    }

    /// Defines (or replaces) a view.
    pub fn create_view(&self, name: &str, sql: &str) -> Result<(), Error> {
        self.sql(&format!("CREATE OR REPLACE VIEW {name} AS {sql}"))
            .map(|_| ())
    }

    /// Defines standard view `name` (`crate::views`) with its `sql`.
    pub(crate) fn create_standard_view(&self, name: &'static str, sql: &str) -> Result<(), Error> {
        self.create_view(name, sql)?;
        if let Ok(mut standard) = self.standard.lock() {
            standard.push(name);
        }
        Ok(())
    }

    /// Keeps the sampled stacks the stack tables read.
    pub(crate) fn keep_sampled_stacks(
        &self,
        s: std::sync::Arc<crate::stack_tables::SampledStacks>,
    ) {
        if let Ok(mut sampled) = self.sampled.lock() {
            *sampled = Some(s);
        }
    }

    /// The sampled stacks kept, if any.
    pub(crate) fn sampled_stacks(
        &self,
    ) -> Option<std::sync::Arc<crate::stack_tables::SampledStacks>> {
        self.sampled.lock().ok().and_then(|s| s.clone())
    }

    /// Whether `name` is a standard view perfq defined, not a caller's.
    pub(crate) fn is_standard_view(&self, name: &str) -> bool {
        self.standard.lock().is_ok_and(|s| s.contains(&name))
    }

    /// Computes `sql` once and keeps the rows in memory under `name`
    /// (unless `name` exists already): for small intermediate results
    /// that several queries, or several parts of one, read — DataFusion
    /// computes a view or a CTE anew at each use.
    pub fn create_table_once(&self, name: &str, sql: &str) -> Result<(), Error> {
        if !self.has_relation(name)? {
            self.sql(&format!("CREATE TABLE {name} AS {sql}"))?;
        }
        Ok(())
    }

    /// The schema of `sql`'s result, planned but not run.
    pub fn schema_of(&self, sql: &str) -> Result<SchemaRef, Error> {
        let (ctx, sql) = (self.ctx.clone(), sql.to_owned());
        self.wait(async move {
            let df = plan_in(&ctx, &sql, SQLOptions::new()).await?;
            Ok(df.schema().inner().clone())
        })
    }

    /// Whether a table or view is registered under `name`.
    pub fn has_relation(&self, name: &str) -> Result<bool, Error> {
        self.ctx
            .table_exist(name)
            .map_err(|e| Error::query("planning", e))
    }

    /// The runtime DataFusion's work runs on.
    fn runtime(&self) -> &tokio::runtime::Runtime {
        // Only `Drop` takes it.
        self.runtime.as_ref().expect("the session's runtime")
    }

    /// The DataFusion context, for callers that build plans of their own.
    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }
}

/// Why `sql` could not be planned: a statement the session's options
/// refuse ([`Session::query_read_only`]), in one line, or DataFusion's own
/// error.
fn planning_error(sql: &str, e: datafusion::error::DataFusionError) -> Error {
    let text = e.to_string();
    let refused = ["DDL not supported", "DML not supported"]
        .iter()
        .any(|what| text.contains(what));
    if !refused {
        return Error::query("planning", e);
    }
    let statement: String = sql.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
    Error::ReadOnly(statement)
}

/// The session's settings.
fn config() -> SessionConfig {
    let mut config = SessionConfig::new()
        .with_information_schema(true)
        // Parquet statistics prune row groups by capture and time.
        .with_collect_statistics(true);
    // A grouping whose first 100 K rows hold more than one group per
    // ten rows is not pre-aggregated per partition (DataFusion's
    // threshold is eight in ten): the inclusive sums group millions of
    // rows into millions of sets and functions on system-wide
    // captures, and the partial tables only doubled them (the
    // inclusive query's peak memory, which benches/build.sh measures).
    config
        .options_mut()
        .execution
        .skip_partial_aggregation_probe_ratio_threshold = 0.1;
    config
}

/// A dataset's name in messages.
fn name_of(dataset: &Location) -> PathBuf {
    match dataset {
        Location::Local(folder) => folder.clone(),
        Location::Object(url) => PathBuf::from(url.to_string()),
    }
}

/// Makes the store of `url` the one DataFusion reads its bucket with.
fn register_store(ctx: &SessionContext, url: &ObjectUrl) -> Result<(), Error> {
    let store = url.store().map_err(|e| Error::Source(e.to_string()))?;
    let key = url::Url::parse(&url.store_url()).map_err(|e| Error::NotDataset {
        path: name_of(&Location::Object(url.clone())),
        why: e.to_string(),
    })?;
    ctx.register_object_store(&key, store);
    Ok(())
}

/// (capture id, file name) of the files in a dataset folder's capture
/// folders (only capture `only`'s, if given).
fn local_files(folder: &Path, only: Option<&str>) -> Result<Vec<(String, String)>, Error> {
    let io = |e| Error::Io {
        path: folder.into(),
        err: e,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_prefix("capture=")) else {
            continue;
        };
        if only.is_some_and(|o| o != id) {
            continue;
        }
        for t in TABLES {
            if entry.path().join(format!("{t}.parquet")).is_file() {
                files.push((id.to_string(), format!("{t}.parquet")));
            }
        }
    }
    Ok(files)
}

/// (capture id, file name) of the objects `url/capture=<id>/<file>`: one
/// listing of the prefix.
async fn object_files(url: &ObjectUrl) -> Result<Vec<(String, String)>, Error> {
    use futures::TryStreamExt;
    let failed = |e: object_store::Error| {
        Error::Source(format!("{url}: {}", perfq_source::store::one_line(&e)))
    };
    let store = url.store().map_err(|e| Error::Source(e.to_string()))?;
    let prefix = url.key();
    let objects: Vec<_> = store
        .list(Some(prefix))
        .try_collect()
        .await
        .map_err(failed)?;
    let mut files = Vec::new();
    for o in objects {
        let mut parts = o.location.prefix_match(prefix).into_iter().flatten();
        let (Some(dir), Some(file), None) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if let Some(id) = dir.as_ref().strip_prefix("capture=") {
            files.push((id.to_string(), file.as_ref().to_string()));
        }
    }
    Ok(files)
}

impl Drop for Session {
    /// The runtime goes without waiting for its threads: after a stop
    /// (`Session::wait`), an operator may still be computing until its
    /// next yield, and the caller should not wait for that.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A statement's result, a batch at a time as DataFusion computes it
/// ([`Session::into_batches`]).
pub struct Batches {
    session: Session,
    schema: SchemaRef,
    /// `None` once the stream ended or failed.
    stream: Option<SendableRecordBatchStream>,
}

impl Iterator for Batches {
    type Item = Result<RecordBatch, datafusion::arrow::error::ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        use datafusion::arrow::error::ArrowError;
        let stream = self.stream.take()?;
        match self.session.next_batch(stream) {
            Ok((_, None)) => None,
            Ok((stream, Some(Ok(batch)))) => {
                self.stream = Some(stream);
                Some(Ok(batch))
            }
            Ok((_, Some(Err(e)))) => Some(Err(ArrowError::ExternalError(Box::new(Error::query(
                "running", e,
            ))))),
            Err(e) => Some(Err(ArrowError::ExternalError(Box::new(e)))),
        }
    }
}

impl datafusion::arrow::record_batch::RecordBatchReader for Batches {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// What [`Session::next_batch`] gives: the stream, and its next batch.
type NextBatch = (
    SendableRecordBatchStream,
    Option<datafusion::error::Result<RecordBatch>>,
);

/// `sql` planned in `ctx`, if `options` allow what it does.
async fn plan_in(
    ctx: &SessionContext,
    sql: &str,
    options: SQLOptions,
) -> Result<datafusion::dataframe::DataFrame, Error> {
    crate::nesting::check(sql)?;
    ctx.sql_with_options(sql, options)
        .await
        .map_err(|e| planning_error(sql, e))
}
