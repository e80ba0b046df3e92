//! `perfq flamegraph`: folded stacks and flame graphs. (Being written.)

use std::io::Write;
use std::path::PathBuf;

use perfq_symbolize::Config;

use crate::Outcome;

/// How frames are coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    /// inferno's default palette.
    Default,
    /// By each function's dominant level-1 top-down category (total).
    Topdown,
}

/// Options of `perfq flamegraph`.
pub struct Options {
    pub input: PathBuf,
    pub output: Option<PathBuf>,
    pub folded: bool,
    pub event: Option<String>,
    pub color: Color,
    pub capture: Option<String>,
    pub no_cache: bool,
    pub symbols: Config,
}

pub fn run(_opt: &Options, _out: &mut dyn Write) -> anyhow::Result<Outcome> {
    anyhow::bail!("perfq flamegraph is not written yet")
}
