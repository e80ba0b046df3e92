//! `perfq completions` and `perfq man`: shell completion scripts and roff
//! manual pages, both written from the clap definitions `--help` shows,
//! so neither can describe an option that is not there.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, CommandFactory};
use clap_mangen::Man;

use crate::cli::Cli;
use crate::output::write_atomically;
use crate::Outcome;

/// The command line as the pages describe it: `help` is an option of
/// every command, not a page of its own.
fn perfq() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// Writes the completion script for `shell`.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let mut cmd = perfq();
    clap_complete::generate(shell, &mut cmd, "perfq", out);
    Ok(Outcome::Ok)
}

/// The arguments of `perfq man`.
#[derive(Args)]
pub struct ManArgs {
    /// A command whose page to print (perfq-COMMAND(1)); by default
    /// perfq(1), which lists them.
    command: Option<String>,
    /// Write every page (perfq.1, perfq-report.1, ...) into this folder
    /// instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    dir: Option<PathBuf>,
}

impl ManArgs {
    pub fn run(self, out: &mut dyn Write) -> anyhow::Result<Outcome> {
        let cmd = perfq();
        if let Some(dir) = &self.dir {
            for page in pages(&cmd) {
                let path = dir.join(page.get_filename());
                write_atomically(&path, |w| Ok(page.render(w)?))
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            return Ok(Outcome::Ok);
        }
        let page = match &self.command {
            None => Man::new(cmd),
            Some(name) => {
                let sub = cmd.find_subcommand(name).with_context(|| {
                    let names: Vec<&str> = cmd.get_subcommands().map(|s| s.get_name()).collect();
                    format!("no command {name}: perfq has {}", names.join(", "))
                })?;
                Man::new(sub.clone())
            }
        };
        page.render(out)?;
        Ok(Outcome::Ok)
    }
}

/// perfq(1) and a page for every command and subcommand under it.
fn pages(cmd: &clap::Command) -> Vec<Man> {
    let mut out = vec![Man::new(cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        out.extend(pages(sub));
    }
    out
}
