//! Where a command's dataset comes from: a dataset folder as it is, or a
//! perf.data file converted once into the cache dataset (keyed by the
//! capture's content hash, so a second question about the same capture
//! runs only the query), or with `--no-cache` into a temporary folder.

use std::path::{Path, PathBuf};

use anyhow::Context;
use perfq_query::Session;
use perfq_source::store::{self, looks_like_url};
use perfq_source::{Location, ObjectUrl};
use perfq_symbolize::Config;
use perfq_writer::batch::{self, Status};
use perfq_writer::convert::{self, ReadValues};

use crate::cache;
use crate::damage::Policy;
use crate::scratch::{self, Scratch};
use crate::Outcome;

/// The options of every command that takes a perf.data file or a dataset:
/// how a file becomes a dataset.
#[derive(clap::Args, Default)]
pub struct InputArgs {
    /// Convert a perf.data file into a temporary dataset instead of the cache.
    #[arg(long)]
    no_cache: bool,
    #[command(flatten)]
    sources: crate::symbols::SymbolSources,
}

impl InputArgs {
    /// Checks the symbol sources given, for the command's `inputs`.
    pub fn resolve(self, policy: Policy, inputs: &[&Path]) -> anyhow::Result<Conversion> {
        let sources = self.sources.resolve(Some(inputs))?;
        Ok(Conversion {
            no_cache: self.no_cache,
            symbols: sources.config(true),
            _sources: sources,
            policy,
            scratch_reads: ReadValues::Rows,
        })
    }
}

/// How a perf.data input is converted: into the cache (or a temporary
/// dataset with `--no-cache`), symbolized with these sources.
pub struct Conversion {
    pub no_cache: bool,
    pub symbols: Config,
    /// What a damaged capture does to the command.
    pub policy: Policy,
    /// Whether a `--no-cache` dataset gets the read_values table's rows:
    /// a command that never reads them leaves them out. The cache's
    /// datasets serve every command and always have them.
    pub scratch_reads: ReadValues,
    /// Keeps the `--archive` folders `symbols` names until the command
    /// ends.
    _sources: crate::symbols::ResolvedSources,
}

/// What `perfq export` and `perfq html` are given: an input, the file to
/// write, the event and capture to take.
pub struct View {
    pub input: PathBuf,
    pub output: PathBuf,
    pub event: Option<String>,
    pub capture: Option<String>,
    pub conversion: Conversion,
}

/// A command's dataset, and the capture in it when the input was a file.
pub struct Input {
    /// The dataset: a folder, or a prefix in object storage.
    pub dataset: Location,
    /// The capture the input file became (`None` for a dataset folder).
    pub capture: Option<String>,
    /// What fails the command once it has answered: the capture's damage
    /// under `--strict`.
    pub problem: Option<String>,
    /// Removes a `--no-cache` dataset when the command ends.
    _temp: Option<Scratch>,
    /// The copy of a capture in object storage, removed when the command
    /// ends.
    _copy: Option<CaptureFile>,
}

impl Input {
    /// A dataset folder as it is; one capture's `capture=<id>` folder of a
    /// dataset as that capture; a file converted (unless the cache has it
    /// already).
    pub fn open(input: &Path, conversion: &Conversion) -> anyhow::Result<Input> {
        if let Some(url) = input.to_str().filter(|t| looks_like_url(t)) {
            return Input::in_store(ObjectUrl::parse(url)?, conversion);
        }
        let capture_dir = input
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("capture="));
        if let (true, Some(id), Some(dataset)) = (input.is_dir(), capture_dir, input.parent()) {
            let dataset = if dataset.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dataset
            };
            return Ok(Input {
                dataset: Location::Local(dataset.to_path_buf()),
                capture: Some(id.to_string()),
                problem: None,
                _temp: None,
                _copy: None,
            });
        }
        if input.is_dir() {
            return Ok(Input {
                dataset: Location::Local(input.to_path_buf()),
                capture: None,
                problem: None,
                _temp: None,
                _copy: None,
            });
        }
        if conversion.no_cache {
            let scratch = Scratch::new("dataset")?;
            let dataset = scratch.path().to_path_buf();
            let c = converted(input, &dataset, conversion, conversion.scratch_reads)?;
            return Ok(Input {
                dataset: Location::Local(dataset),
                capture: Some(c.id),
                problem: c.problem,
                _temp: Some(scratch),
                _copy: None,
            });
        }
        let dataset = cache::datasets()
            .context("no cache folder: set PERFQ_CACHE_DIR or HOME, or use --no-cache")?;
        let (id, problem) = cached(input, &dataset, conversion)?;
        Ok(Input {
            dataset: Location::Local(dataset),
            capture: Some(id),
            problem,
            _temp: None,
            _copy: None,
        })
    }

    /// What a URL names: a dataset's `capture=<id>` prefix as that
    /// capture; an object as a capture, copied here and converted as a
    /// file is; else a dataset under the prefix.
    fn in_store(url: ObjectUrl, conversion: &Conversion) -> anyhow::Result<Input> {
        let name = url.key().filename().unwrap_or_default().to_string();
        if let Some(id) = name.strip_prefix("capture=") {
            let parts: Vec<_> = url.key().parts().collect();
            let dataset = parts[..parts.len().saturating_sub(1)]
                .iter()
                .cloned()
                .collect();
            return Ok(Input {
                dataset: Location::Object(url.with_key(dataset)),
                capture: Some(id.to_string()),
                problem: None,
                _temp: None,
                _copy: None,
            });
        }
        if store::object_size(&url)?.is_none() {
            return Ok(Input {
                dataset: Location::Object(url),
                capture: None,
                problem: None,
                _temp: None,
                _copy: None,
            });
        }
        let file = CaptureFile::open(Path::new(&url.to_string()))?;
        let input = Input::open(&file.path, conversion)
            .map_err(|e| anyhow::anyhow!(file.named(format!("{e:#}"))))?;
        Ok(Input {
            problem: input.problem.map(|p| file.named(p)),
            _copy: Some(file),
            ..input
        })
    }

    /// How the command ends once it has answered.
    pub fn outcome(&self) -> Outcome {
        Outcome::from_problems(self.problem.clone())
    }

    /// A session over the capture a command's `--capture ID` chooses of a
    /// dataset folder, or over the input file's capture, or over the whole
    /// dataset; with the capture's id when there is one. `--capture` with
    /// a single capture's input is an error (`input` names it).
    pub fn session_for(
        &self,
        input: &Path,
        capture: Option<&str>,
    ) -> anyhow::Result<(Session, Option<String>)> {
        match (&self.capture, capture) {
            (Some(_), Some(_)) => anyhow::bail!(
                "--capture chooses a capture of a dataset folder; {} is a single capture",
                input.display()
            ),
            (Some(id), None) => Ok((
                Session::open_capture_at(&self.dataset, id)?,
                Some(id.clone()),
            )),
            (None, Some(id)) => Ok((
                Session::open_capture_at(&self.dataset, id)?,
                Some(id.into()),
            )),
            (None, None) => Ok((Session::open_at(&self.dataset)?, None)),
        }
    }

    /// The session of one capture: a file's, or a `capture=<id>` folder's;
    /// a whole dataset is refused (which capture would it be?).
    pub fn one_capture(&self, path: &Path) -> anyhow::Result<Session> {
        match &self.capture {
            Some(id) => Ok(Session::open_capture_at(&self.dataset, id)?),
            None => anyhow::bail!(
                "{} is a dataset folder: name one of its captures, {}/capture=<id>",
                path.display(),
                path.display()
            ),
        }
    }

    /// A session over the dataset: only the input file's capture when
    /// there is one (the cache holds others).
    pub fn session(&self) -> anyhow::Result<Session> {
        Ok(match &self.capture {
            Some(id) => Session::open_capture_at(&self.dataset, id)?,
            None => Session::open_at(&self.dataset)?,
        })
    }
}

/// A capture file to read, as a command was given it: a path, or a URL
/// whose object is copied here first.
pub struct CaptureFile {
    /// Where its bytes are.
    pub path: PathBuf,
    /// How messages name it: the path or the URL given.
    pub name: PathBuf,
    /// The copy's folder, removed when dropped.
    _copy: Option<Scratch>,
}

impl CaptureFile {
    pub fn open(given: &Path) -> anyhow::Result<CaptureFile> {
        let (path, copy) = match given.to_str().filter(|t| looks_like_url(t)) {
            Some(url) => {
                let (copy, scratch) = fetched(&ObjectUrl::parse(url)?)?;
                (copy, Some(scratch))
            }
            None => (given.to_path_buf(), None),
        };
        Ok(CaptureFile {
            path,
            name: given.to_path_buf(),
            _copy: copy,
        })
    }

    /// `message` with the copy's path given as the name the user gave.
    pub fn named(&self, message: String) -> String {
        match self._copy {
            Some(_) => message.replace(
                &self.path.display().to_string(),
                &self.name.display().to_string(),
            ),
            None => message,
        }
    }
}

/// The object at `url` copied into a temporary folder (removed when the
/// [`Scratch`] is dropped), under its own name: a capture is read
/// through a memory map, so it must be a file.
fn fetched(url: &ObjectUrl) -> anyhow::Result<(PathBuf, Scratch)> {
    let scratch = Scratch::new("download")?;
    let name = url.key().filename().unwrap_or("perf.data");
    let copy = scratch.path().join(name);
    store::download(url, &copy)?;
    Ok((copy, scratch))
}

/// `file`'s capture in the cache `dataset`: converted unless the cache
/// holds it whole (a damaged entry is converted again, never answered
/// from), marked used, and, when it was converted now, the cache pruned to
/// its limit around it (only a conversion makes the cache larger).
fn cached(
    file: &Path,
    dataset: &Path,
    conversion: &Conversion,
) -> anyhow::Result<(String, Option<String>)> {
    let mut c = converted(file, dataset, conversion, ReadValues::Rows)?;
    let dir = dataset.join(format!("capture={}", c.id));
    if let Err(why) = cache::whole(&dir) {
        crate::say::warning(format_args!(
            "the cache's copy of {} is damaged ({why}); converting it again",
            file.display()
        ));
        perfq_writer::remove_capture(dataset, &c.id)
            .with_context(|| format!("removing {}", dir.display()))?;
        c = converted(file, dataset, conversion, ReadValues::Rows)?;
    }
    cache::used(&dir);
    if c.written {
        cache::prune(dataset, cache::limit(dataset)?, Some(&c.id))?;
    }
    Ok((c.id, c.problem))
}

/// A capture in a dataset, as [`converted`] found or wrote it.
struct Converted {
    id: String,
    /// What fails the command under the damage policy.
    problem: Option<String>,
    /// Whether it was written now (else the dataset held it).
    written: bool,
}

/// Converts `file` into `dataset` (unless it holds it already): `perfq
/// batch`'s path with this one input, so that a capture another perfq
/// converted into the cache first is found there.
fn converted(
    file: &Path,
    dataset: &Path,
    conversion: &Conversion,
    read_values: ReadValues,
) -> anyhow::Result<Converted> {
    let opt = batch::Options {
        jobs: 1,
        convert: convert::Options {
            force: false,
            symbols: Some(conversion.symbols.clone()),
            stack_memory: None,
            source: None,
            read_values,
        },
        publish: None,
    };
    let bar = crate::progress::Bar::new();
    scratch::writing_into(dataset);
    let outcomes = batch::run(&[file.to_path_buf()], dataset, &opt, &bar)
        .with_context(|| format!("converting {}", file.display()))?;
    bar.finish();
    let [o] = outcomes.as_slice() else {
        anyhow::bail!(
            "{} holds {} captures: convert them with perfq batch and name the dataset",
            file.display(),
            outcomes.len()
        );
    };
    if let Status::Failed(e) = &o.status {
        anyhow::bail!("converting {}: {e}", file.display());
    }
    let problem = o
        .notes()
        .and_then(|n| conversion.policy.say(&file.display().to_string(), n));
    let id = o
        .capture
        .clone()
        .with_context(|| format!("converting {}: no capture id", file.display()))?;
    Ok(Converted {
        id,
        problem,
        written: matches!(o.status, Status::Converted { .. }),
    })
}
