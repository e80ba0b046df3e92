//! `perfq diff`: two captures compared per function or DSO. (Being written.)

use std::io::Write;
use std::path::PathBuf;

use perfq_symbolize::Config;

use crate::output::QueryFormat;
use crate::Outcome;

/// Row keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    /// Per function (symbol and DSO).
    Function,
    /// Per DSO.
    Dso,
}

/// Options of `perfq diff`.
pub struct Options {
    pub a: PathBuf,
    pub b: PathBuf,
    pub by: By,
    pub format: QueryFormat,
    pub output: Option<PathBuf>,
    pub no_cache: bool,
    pub symbols: Config,
}

pub fn run(_opt: &Options, _out: &mut dyn Write) -> anyhow::Result<Outcome> {
    anyhow::bail!("perfq diff is not written yet")
}
