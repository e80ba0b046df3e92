//! `perfq html`: one self-contained page (no request leaves it: a
//! Content-Security-Policy allows nothing but its own inline style and
//! script) with the capture's header, its top functions with their
//! top-down shares, callers and callees of a function, a time line whose
//! range selection filters the rest, and a flame graph coloured by each
//! function's dominant top-down category (of its total samples) or its
//! DSO, with a legend that says which.
//!
//! What the page holds (`data.rs`): the call tree of the profile's
//! stacks with functions named as `perf report` names them, the samples
//! of one event per (time interval, thread, call-tree node), and the
//! top-down answers per function (self and total) and per interval;
//! where the captures have off-CPU time (`off_cpu.rs`), its folded stacks
//! and each thread's running and waiting time per interval.
//! `report.js` sums the samples it shows for the selected range.

mod call_tree;
mod data;
mod functions;
mod off_cpu;

use std::io::Write;

use perfq_query::Session;

pub use data::{build, Options, Page};

use crate::Error;

const TEMPLATE: &str = include_str!("page.html");
const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");

/// Text made safe inside HTML.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Writes the page.
pub fn write(page: &Page, out: &mut dyn Write) -> Result<(), Error> {
    // Inside a script element only `</` can end it early.
    let json = page.data.replace("</", "<\\/");
    let (level2, heads) = match (page.topdown, page.level2) {
        (false, _) => ("", ""),
        (true, false) => ("", "<th>top-down (level 1)</th><th>flagged</th>"),
        (true, true) => (
            "<label class=\"note\"><input type=\"checkbox\" id=\"level2\"> level 2</label>",
            "<th>top-down (level 1)</th><th>flagged</th>",
        ),
    };
    let html = TEMPLATE
        .replace("{{TITLE}}", &escape(&page.title))
        .replace("{{STYLE}}", STYLE)
        .replace("{{LEVEL2}}", level2)
        .replace("{{TOPDOWN_HEADS}}", heads)
        .replace("{{SCRIPT}}", SCRIPT);
    // The data last, written where it goes rather than copied into the
    // page (megabytes on a system-wide capture).
    let mut parts = html.split("{{DATA}}");
    if let Some(first) = parts.next() {
        out.write_all(first.as_bytes())?;
    }
    for part in parts {
        out.write_all(json.as_bytes())?;
        out.write_all(part.as_bytes())?;
    }
    Ok(())
}

/// Builds and writes the page of a session's samples.
pub fn report(
    session: &Session,
    opt: &Options<'_>,
    out: &mut dyn Write,
) -> Result<Vec<String>, Error> {
    let page = build(session, opt)?;
    write(&page, out)?;
    Ok(page.notes)
}
