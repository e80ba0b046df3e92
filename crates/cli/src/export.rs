//! `perfq export`: a dataset's samples for the viewers people already use,
//! pprof (`go tool pprof`, Pyroscope, Parca) and speedscope, built by
//! `perfq_query::profile` and written by `perfq_view`.

use anyhow::Context;
use perfq_query::profile;

use crate::input::{Input, View};
use crate::output;
use crate::progress::Spinner;
use crate::Outcome;

/// The formats written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// pprof's profile.proto, gzipped: one sample type per event (its
    /// samples and its periods).
    Pprof,
    /// speedscope's JSON file: one profile per thread, of one event.
    Speedscope,
}

pub fn run(to: Format, opt: &View) -> anyhow::Result<Outcome> {
    let input = Input::open(&opt.input, &opt.conversion)?;
    let (session, _) = input.session_for(&opt.input, opt.capture.as_deref())?;
    let spinner = Spinner::start("reading the samples");
    let p = profile::profile(
        &session,
        &profile::Options {
            event: opt.event.clone(),
            // speedscope has no place for them.
            topdown: to == Format::Pprof,
            ..profile::Options::default()
        },
    )
    .with_context(|| opt.input.display().to_string());
    drop(spinner);
    let p = p?;
    for n in &p.notes {
        crate::say::warning(format_args!("{n}"));
    }
    if p.runs.is_empty() {
        anyhow::bail!("{}: no samples to export", opt.input.display());
    }
    match to {
        Format::Pprof => {
            output::write_atomically(&opt.output, |w| Ok(perfq_view::pprof::write(&p, w)?))?
        }
        Format::Speedscope => {
            // speedscope shows one event: the one asked for, else the
            // first sampled.
            if opt.event.is_none() && p.events.len() > 1 {
                crate::say::note(format_args!("exporting {} (the first event sampled); also sampled: {} (choose with --event)",
                    p.events[0].name,
                    p.events[1..].iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(", ")
                ));
            }
            let name = crate::flamegraph::file_name(&opt.input);
            output::write_atomically(&opt.output, |w| {
                Ok(perfq_view::speedscope::write(
                    &p,
                    &perfq_view::speedscope::Options { name },
                    w,
                )?)
            })?
        }
    }
    Ok(input.outcome())
}
