//! `perfq html`: one self-contained page of a capture or dataset
//! (`perfq_view::html`), written atomically.

use std::path::Path;

use anyhow::Context;

use crate::input::{Input, View};
use crate::output;
use crate::progress::Spinner;
use crate::Outcome;

pub fn run(opt: &View, diff: Option<&Path>) -> anyhow::Result<Outcome> {
    let input = Input::open(&opt.input, &opt.conversion)?;
    let (session, capture) = input.session_for(&opt.input, opt.capture.as_deref())?;
    // The base of a comparison: one capture, as perfq diff takes it.
    let base = match diff {
        Some(path) => {
            let base = Input::open(path, &opt.conversion)?;
            let s = base.one_capture(path)?;
            Some((base, s, crate::flamegraph::file_name(path)))
        }
        None => None,
    };
    let title = match &capture {
        Some(id) if opt.capture.is_some() => {
            format!("{} capture {id}", crate::flamegraph::file_name(&opt.input))
        }
        _ => crate::flamegraph::file_name(&opt.input),
    };
    let spinner = Spinner::start("building the report");
    let page = perfq_view::html::build(
        &session,
        &perfq_view::html::Options {
            title,
            event: opt.event.clone(),
            base: base.as_ref().map(|(_, s, name)| (s, name.clone())),
            ..perfq_view::html::Options::default()
        },
    )
    .with_context(|| opt.input.display().to_string());
    drop(spinner);
    let page = page?;
    for n in &page.notes {
        crate::say::note(format_args!("{n}"));
    }
    output::write_atomically(&opt.output, |w| Ok(perfq_view::html::write(&page, w)?))?;
    Ok(Outcome::from_problems(
        input
            .problem
            .clone()
            .into_iter()
            .chain(base.and_then(|(b, _, _)| b.problem)),
    ))
}
