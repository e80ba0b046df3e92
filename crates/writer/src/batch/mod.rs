//! Many captures into one dataset: what `perfq batch` does, and `perfq
//! convert` (a batch of files, one at a time).
//!
//! The inputs are expanded into captures and archives
//! ([`perfq_source::inputs`]); the calling thread walks them in order,
//! streaming archive members into spool files beside the dataset
//! ([`perfq_source::archive`]), and `jobs` workers
//! convert them with [`convert::convert`]. Each capture is written into a
//! hidden folder and renamed into place when complete, under its content
//! hash: a query never sees part of a capture, a capture already in the
//! dataset is skipped, and a batch that was stopped resumes where it
//! stopped. A capture that fails is reported and the others go on.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use perfq_symbolize::BinaryCache;

use crate::convert::{self, Conversion};
use crate::publish::{Bucket, Published};
use crate::{Error, Notes};
use perfq_source::archive::{ArchiveAt, ArchiveKind};
use perfq_source::{archive, inputs, store, Item, ObjectUrl, SpoolDir, SpoolFile};

/// How to run a batch.
#[derive(Clone, Debug)]
pub struct Options {
    /// Conversions at once (at least one).
    pub jobs: usize,
    /// How each capture is converted.
    pub convert: convert::Options,
    /// A dataset in object storage the captures go to: each is converted
    /// into the local dataset folder, published there, and removed here.
    pub publish: Option<Arc<Bucket>>,
}

/// What became of one capture, or of an input that gave none.
#[derive(Debug)]
pub enum Status {
    /// Converted into the dataset.
    Converted {
        /// Rows of its samples table.
        samples: u64,
        /// What its conversion said of it.
        notes: Notes,
    },
    /// The dataset held it already (the same bytes): what its conversion
    /// said of it then.
    Present(Notes),
    /// Nothing of it could be converted.
    Failed(String),
}

/// One capture's outcome.
#[derive(Debug)]
pub struct Outcome {
    /// Its place among the batch's captures, in the order they were found.
    pub index: usize,
    /// Where it came from: a file's path, or `archive!member`.
    pub input: String,
    /// Its id in the dataset (`capture=<id>`), when it is there.
    pub capture: Option<String>,
    /// Its size in bytes (0 when unknown).
    pub bytes: u64,
    /// Seconds its conversion took.
    pub seconds: f64,
    /// What happened.
    pub status: Status,
}

impl Outcome {
    /// Whether nothing of the input could be converted.
    pub fn is_failure(&self) -> bool {
        matches!(self.status, Status::Failed(_))
    }

    /// What was said of the capture: its conversion's notes, now or when
    /// the dataset got it.
    pub fn notes(&self) -> Option<&Notes> {
        match &self.status {
            Status::Converted { notes, .. } | Status::Present(notes) => Some(notes),
            Status::Failed(_) => None,
        }
    }
}

/// Told what a batch does as it goes (a progress bar, a log). Called from
/// the batch's threads.
pub trait Observer: Sync {
    /// A capture was found (its size; more may follow).
    fn found(&self, _index: usize, _input: &str, _bytes: u64) {}
    /// Bytes of capture `index` read so far, of `total`.
    fn progress(&self, _index: usize, _done: u64, _total: u64) {}
    /// A capture (or an input that gave none) is done.
    fn finished(&self, _outcome: &Outcome) {}
}

/// An observer that is told nothing.
pub struct Quiet;
impl Observer for Quiet {}

/// Spool folders are `.batch-<pid>` in the dataset: hidden from queries,
/// on the dataset's file system (a capture's folder is renamed there),
/// and removed by a later batch when their process is gone.
pub(crate) const SPOOL_PREFIX: &str = ".batch-";

/// Symbol tables and DWARF a batch keeps for the captures still to come:
/// enough for the largest binaries seen (`librustc_driver`'s symbols and
/// a debug libc's DWARF are a few hundred MB), bounded so that a batch of
/// many different programs does not grow without end.
const SHARED_BINARY_BYTES: u64 = 1 << 30;

/// A capture to convert.
struct Job {
    index: usize,
    input: String,
    path: PathBuf,
    bytes: u64,
    /// The spool copy of an archive member, removed when converted.
    _spooled: Option<SpoolFile>,
    /// An archive member's name in the capture table.
    source: Option<String>,
    /// A build-id cache that came with it.
    symbols: Option<Arc<SpoolDir>>,
}

/// Converts what `inputs` name into `dataset`, `opt.jobs` at a time.
/// Outcomes come back in the order the captures were found. Fails only
/// when the dataset folder cannot be made; every other problem is an
/// [`Outcome`].
pub fn run(
    inputs: &[PathBuf],
    dataset: &Path,
    opt: &Options,
    observer: &dyn Observer,
) -> Result<Vec<Outcome>, Error> {
    std::fs::create_dir_all(dataset).map_err(|e| Error::io(dataset, e))?;
    // What an earlier batch, killed, left: half-written captures and
    // spooled members.
    crate::remove_stale(dataset, &[SPOOL_PREFIX]);
    let spool = SpoolDir(dataset.join(format!("{SPOOL_PREFIX}{}", std::process::id())));
    // Captures of the same programs share their binaries: each symbol
    // table and DWARF read once for the whole batch.
    let mut opt = opt.clone();
    if let Some(symbols) = opt.convert.symbols.as_mut() {
        symbols
            .binaries
            .get_or_insert_with(|| Arc::new(BinaryCache::new(SHARED_BINARY_BYTES)));
    }
    let opt = &opt;
    let items = inputs::expand(inputs, dataset);
    let outcomes = Mutex::new(Vec::new());
    let record = |o: Outcome| {
        observer.finished(&o);
        if let Ok(mut v) = outcomes.lock() {
            v.push(o);
        }
    };
    let jobs = opt.jobs.max(1);
    // As many captures wait spooled as there are workers: an archive is
    // read ahead of the conversions by that much, not to its end.
    let (tx, rx) = sync_channel::<Job>(jobs);
    let rx = Mutex::new(rx);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let job = match rx.lock() {
                    Ok(rx) => rx.recv(),
                    Err(_) => return,
                };
                let Ok(job) = job else { return };
                record(convert_one(job, dataset, opt, observer));
            });
        }
        let mut feeder = Feeder {
            tx,
            spool: &spool,
            observer,
            record: &record,
            index: 0,
        };
        for item in items {
            if !feeder.feed(item) {
                break;
            }
        }
        // Closing the channel ends the workers' loops.
        drop(feeder);
    });
    drop(spool);
    let mut outcomes = outcomes.into_inner().unwrap_or_default();
    outcomes.sort_by_key(|o| o.index);
    Ok(outcomes)
}

/// The batch's reading side: each item found numbered, announced and
/// sent to the workers as jobs, or recorded as a failure.
struct Feeder<'a, R: Fn(Outcome)> {
    tx: SyncSender<Job>,
    spool: &'a SpoolDir,
    observer: &'a dyn Observer,
    record: &'a R,
    /// The index the next input found gets.
    index: usize,
}

impl<R: Fn(Outcome)> Feeder<'_, R> {
    /// Feeds `item`'s captures to the workers; false once they are gone.
    fn feed(&mut self, item: Item) -> bool {
        match item {
            Item::Problem { input, reason } => {
                let index = self.next(&input, 0);
                (self.record)(failed(index, input, reason));
                true
            }
            Item::Capture { path, symbols } => self.capture(path, symbols),
            Item::Archive { path, kind } => {
                let absolute = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
                let name = absolute.display().to_string();
                self.archive(
                    ArchiveAt::File(&path),
                    &path.display().to_string(),
                    &name,
                    kind,
                );
                true
            }
            Item::ObjectCapture { url, symbols } => self.object(&url, symbols.as_ref()),
            Item::ObjectArchive { url, kind } => {
                let name = url.to_string();
                self.archive(ArchiveAt::Object(&url), &name, &name, kind);
                true
            }
        }
    }

    /// The index of `input` (of `bytes`), announced to the observer.
    fn next(&mut self, input: &str, bytes: u64) -> usize {
        self.observer.found(self.index, input, bytes);
        self.index += 1;
        self.index - 1
    }

    /// A capture file, with the build-id cache archived beside it.
    fn capture(&mut self, path: PathBuf, symbols: Option<PathBuf>) -> bool {
        let input = path.display().to_string();
        let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
        let index = self.next(&input, bytes);
        let shown = symbols.as_ref().map(|a| a.display().to_string());
        let symbols = symbols.as_deref().map(ArchiveAt::File);
        let Some(symbols) = self.symbols(index, &input, &path, symbols, shown) else {
            return true;
        };
        let job = self.job(index, input, path, bytes, None, symbols);
        self.tx.send(job).is_ok()
    }

    /// A capture in object storage, copied into the spool folder (a
    /// capture is read through a memory map), with its build-id cache.
    fn object(&mut self, url: &ObjectUrl, symbols: Option<&ObjectUrl>) -> bool {
        let input = url.to_string();
        let copied = spooled(self.spool, || {
            let file = SpoolFile(archive::spool_name(&self.spool.0, "object"));
            store::download(url, &file.0).map_err(|e| e.to_string())?;
            Ok(file)
        });
        let file = match copied {
            Ok(file) => file,
            Err(e) => {
                let index = self.next(&input, 0);
                (self.record)(failed(index, input, e));
                return true;
            }
        };
        let bytes = std::fs::metadata(&file.0).map_or(0, |m| m.len());
        let index = self.next(&input, bytes);
        let path = file.0.clone();
        let shown = symbols.map(ToString::to_string);
        let symbols = symbols.map(ArchiveAt::Object);
        let Some(symbols) = self.symbols(index, &input, &path, symbols, shown) else {
            return true;
        };
        let job = Job {
            _spooled: Some(file),
            ..self.job(index, input.clone(), path, bytes, Some(input), symbols)
        };
        self.tx.send(job).is_ok()
    }

    /// The build-id cache of capture `path` (input `index`), unpacked
    /// from the `perf archive` tarball `at` (`shown` so): `Some(None)`
    /// without one, `None` when it cannot be read (recorded as the
    /// input's failure).
    fn symbols(
        &mut self,
        index: usize,
        input: &str,
        path: &Path,
        at: Option<ArchiveAt<'_>>,
        shown: Option<String>,
    ) -> Option<Option<Arc<SpoolDir>>> {
        let (Some(at), Some(shown)) = (at, shown) else {
            return Some(None);
        };
        let unpacked = spooled(self.spool, || {
            // Only the binaries of the build ids this capture names.
            let wanted = archive::BuildIds::of_captures(&[path]);
            archive::extract_symbols(at, ArchiveKind::TarBz2, &self.spool.0, wanted.as_ref())
        });
        match unpacked {
            Ok((dir, refused)) => {
                self.refused(&shown, refused);
                Some(Some(dir))
            }
            Err(e) => {
                (self.record)(failed(index, input.to_string(), format!("{shown}: {e}")));
                None
            }
        }
    }

    fn job(
        &self,
        index: usize,
        input: String,
        path: PathBuf,
        bytes: u64,
        source: Option<String>,
        symbols: Option<Arc<SpoolDir>>,
    ) -> Job {
        Job {
            index,
            input,
            path,
            bytes,
            _spooled: None,
            source,
            symbols,
        }
    }

    /// An archive's captures, each spooled and sent as it is read; the
    /// archive is `shown` in messages and `name`d in the capture table.
    fn archive(&mut self, at: ArchiveAt<'_>, shown: &str, name: &str, kind: ArchiveKind) {
        let mut sent = 0usize;
        let spool = self.spool;
        let streamed = spooled(spool, || {
            archive::stream(at, kind, &spool.0, None, &mut |m| {
                let input = format!("{shown}!{}", m.name);
                let bytes = std::fs::metadata(&m.file.0).map_or(0, |m| m.len());
                let job = Job {
                    index: self.next(&input, bytes),
                    input,
                    path: m.file.0.clone(),
                    bytes,
                    _spooled: Some(m.file),
                    source: Some(format!("{name}!{}", m.name)),
                    symbols: m.symbols,
                };
                if self.tx.send(job).is_ok() {
                    sent += 1;
                }
            })
        });
        let problem = match streamed {
            Ok(s) => {
                self.refused(shown, s.refused);
                if s.captures > 0 {
                    return;
                }
                "holds no perf.data capture".to_string()
            }
            Err(e) if sent > 0 => format!("{e} ({sent} captures before it were read)"),
            Err(e) => e,
        };
        let index = self.next(shown, 0);
        (self.record)(failed(index, shown.to_string(), problem));
    }

    /// An archive's members refused, each an input that gave nothing.
    fn refused(&mut self, archive: &str, lines: Vec<String>) {
        for line in lines {
            let index = self.next(archive, 0);
            (self.record)(failed(index, archive.to_string(), line));
        }
    }
}

/// Runs `f` once the spool folder exists.
fn spooled<T>(spool: &SpoolDir, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    std::fs::create_dir_all(&spool.0).map_err(|e| format!("{}: {e}", spool.0.display()))?;
    f()
}

fn failed(index: usize, input: String, reason: String) -> Outcome {
    Outcome {
        index,
        input,
        capture: None,
        bytes: 0,
        seconds: 0.0,
        status: Status::Failed(reason),
    }
}

/// The capture id a dataset folder `capture=<id>` names.
fn capture_id(dir: &Path) -> Option<String> {
    let name = dir.file_name()?.to_string_lossy();
    name.strip_prefix("capture=").map(str::to_string)
}

fn convert_one(job: Job, dataset: &Path, opt: &Options, observer: &dyn Observer) -> Outcome {
    let start = Instant::now();
    let status = match &opt.publish {
        Some(bucket) => published(&job, dataset, opt, bucket, observer),
        None => converted(&job, dataset, &opt.convert, observer),
    };
    let (capture, status) = status;
    Outcome {
        index: job.index,
        input: job.input,
        capture,
        bytes: job.bytes,
        seconds: start.elapsed().as_secs_f64(),
        status,
    }
}

/// Converts `job` into the local `dataset`: the capture's id and status.
fn converted(
    job: &Job,
    dataset: &Path,
    opt: &convert::Options,
    observer: &dyn Observer,
) -> (Option<String>, Status) {
    let mut opt = opt.clone();
    opt.source.clone_from(&job.source);
    if let (Some(symbols), Some(dir)) = (opt.symbols.as_mut(), &job.symbols) {
        // The capture's own build-id cache comes first, as perf's
        // `--buildid-dir` would.
        symbols.buildid_dirs.insert(0, dir.0.clone());
    }
    let index = job.index;
    // A capture that trips a bug must not take the batch down with it.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        convert::convert(&job.path, dataset, &opt, &mut |done, total| {
            observer.progress(index, done, total)
        })
    }));
    // A spooled member's errors name the archive member, not the spool file.
    let spool_path = job.path.display().to_string();
    let named = |e: String| {
        if job._spooled.is_some() {
            e.replace(&spool_path, &job.input)
        } else {
            e
        }
    };
    let (capture, status) = match result {
        Ok(Ok(Conversion::Written(c))) => (
            capture_id(&c.dir),
            Status::Converted {
                samples: c.samples,
                notes: Notes {
                    warnings: c.warnings,
                    damage: c.damage.map(named),
                },
            },
        ),
        Ok(Ok(Conversion::Present { dir })) | Ok(Err(Error::Exists(dir))) => {
            // A capture table that cannot be read says nothing more: the
            // queries over it will say what is wrong with it.
            let notes = crate::notes(&dir).unwrap_or_default();
            (capture_id(&dir), Status::Present(notes))
        }
        Ok(Err(e)) => (None, Status::Failed(named(e.to_string()))),
        Err(panic) => (None, Status::Failed(internal_error(panic.as_ref()))),
    };
    (capture, status)
}

/// Converts `job` into the local `dataset` (the staging folder of the
/// bucket's dataset) and publishes it to `bucket`; a capture the bucket
/// holds is not converted again (unless forced).
fn published(
    job: &Job,
    dataset: &Path,
    opt: &Options,
    bucket: &Bucket,
    observer: &dyn Observer,
) -> (Option<String>, Status) {
    let failed = |e: Error| (None, Status::Failed(e.to_string()));
    // Standard input can be read only once: by the conversion.
    // (A capture that cannot be opened is converted all the same: the
    // conversion says what is wrong with it.)
    let id = (job.path != Path::new("-"))
        .then(|| convert::capture_id(&job.path).ok())
        .flatten();
    if let Some(id) = id {
        match bucket.holds(&id) {
            Ok(true) if !opt.convert.force => {
                // A capture table that cannot be read says nothing more,
                // as for a folder's.
                let notes = bucket.notes(&id, dataset).unwrap_or_default();
                return (Some(id), Status::Present(notes));
            }
            Ok(true) => {
                if let Err(e) = bucket.remove(&id) {
                    return failed(e);
                }
            }
            Ok(false) => {}
            Err(e) => return failed(e),
        }
    }
    let (capture, status) = converted(job, dataset, &opt.convert, observer);
    let Some(id) = capture.clone() else {
        return (capture, status);
    };
    let dir = dataset.join(format!("capture={id}"));
    let outcome = bucket.publish(&id, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    match (outcome, status) {
        (Ok(Published::Committed), status) => (capture, status),
        (Ok(Published::Present), Status::Converted { notes, .. }) => {
            (capture, Status::Present(notes))
        }
        (Ok(Published::Present), status) => (capture, status),
        (Err(e), _) => failed(e),
    }
}

/// The one line a caught panic becomes: a defect of perfq, to report, with
/// the panic's message.
pub fn internal_error(panic: &(dyn std::any::Any + Send)) -> String {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    format!("internal error (please report): {what}")
}
