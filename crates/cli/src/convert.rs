//! `perfq convert`: captures into a normalized Parquet dataset
//! (`docs/schema.md`), one `capture=<id>/` folder each. The work is
//! `perfq_writer::convert`; this adds the progress bar and the report.

use std::io::Write;
use std::path::PathBuf;

use perfq_symbolize::Config;
use perfq_writer::convert;

use crate::Outcome;

/// Options of `perfq convert`.
pub struct Options {
    pub files: Vec<PathBuf>,
    pub output: PathBuf,
    pub force: bool,
    pub symbols: Option<Config>,
}

pub fn run(opt: &Options, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let mut problems = Vec::new();
    let copt = convert::Options {
        force: opt.force,
        symbols: opt.symbols.clone(),
    };
    for file in &opt.files {
        // Drawn only when stderr is a terminal.
        let bar = indicatif::ProgressBar::new(0).with_style(
            indicatif::ProgressStyle::with_template("{msg} {wide_bar} {bytes}/{total_bytes} {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.set_message(file.display().to_string());
        let result = convert::convert(file, &opt.output, &copt, &mut |done, total| {
            bar.set_length(total);
            bar.set_position(done);
        });
        bar.finish_and_clear();
        match result {
            Ok(convert::Conversion::Present { dir }) => writeln!(
                out,
                "{} -> {} (already in the dataset; --force converts it again)",
                file.display(),
                dir.display()
            )?,
            Ok(convert::Conversion::Written(c)) => {
                writeln!(out, "{} -> {}", file.display(), c.dir.display())?;
                for w in c.warnings {
                    eprintln!("perfq: warning: {}: {w}", file.display());
                }
                // What came before the error is in the dataset.
                if let Some(e) = c.error {
                    problems.push(format!("{}: {e}", file.display()));
                }
            }
            Err(e) => problems.push(format!("{}: {e:#}", file.display())),
        }
    }
    Ok(Outcome::from_problems(problems))
}
