//! `perfq batch`: many captures into one dataset. (Being written.)

use std::io::Write;
use std::path::PathBuf;

use perfq_symbolize::Config;

use crate::output::QueryFormat;
use crate::Outcome;

/// Options of `perfq batch`.
pub struct Options {
    pub inputs: Vec<PathBuf>,
    pub output: PathBuf,
    pub jobs: usize,
    pub force: bool,
    pub symbols: Option<Config>,
    pub format: QueryFormat,
}

pub fn run(_opt: &Options, _out: &mut dyn Write) -> anyhow::Result<Outcome> {
    anyhow::bail!("perfq batch is not written yet")
}
