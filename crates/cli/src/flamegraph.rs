//! `perfq flamegraph`: folded stacks (`perfq_query::flamegraph`), or an
//! interactive SVG drawn by inferno from them, optionally coloured by each
//! function's dominant level-1 top-down category.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use inferno::flamegraph::color::{Color as Rgb, PaletteMap};
use perfq_query::flamegraph::{self as fg, Folded, Shading, Weight};

use crate::input::{Conversion, Input};
use crate::output;
use crate::progress::Spinner;
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
    pub samples: bool,
    /// Off-CPU time instead of an event's samples.
    pub off_cpu: bool,
    pub conversion: Conversion,
}

pub fn run(opt: &Options, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    if opt.folded && opt.color == Color::Topdown {
        anyhow::bail!("--color topdown colours the SVG; --folded writes no colours");
    }
    if opt.off_cpu && opt.color == Color::Topdown {
        anyhow::bail!("--color topdown colours sampled time; --off-cpu draws time off CPU");
    }
    let input = Input::open(&opt.input, &opt.conversion)?;
    let (session, capture) = input.session_for(&opt.input, opt.capture.as_deref())?;
    let weight = if opt.samples {
        Weight::Samples
    } else {
        Weight::Period
    };
    let spinner = Spinner::start("folding stacks");
    let folded = fg::folded(
        &session,
        &fg::Options {
            event: opt.event.clone(),
            weight,
            off_cpu: opt.off_cpu,
        },
    )
    .with_context(|| opt.input.display().to_string());
    drop(spinner);
    let folded = folded?;
    if opt.event.is_none() && !folded.other_events.is_empty() {
        crate::say::note(format_args!(
            "showing {} (the first event sampled); also sampled: {} (choose with --event)",
            folded.event,
            folded.other_events.join(", ")
        ));
    }
    if opt.folded {
        emit(opt.output.as_deref(), out, |w| Ok(folded.write(w)?))?;
        return Ok(input.outcome());
    }
    let shading = match opt.color {
        Color::Default => None,
        Color::Topdown => {
            let spinner = Spinner::start("computing top-down shares");
            let s = fg::topdown_shading(&session, &folded, capture.as_deref());
            drop(spinner);
            let s = s.map_err(|e| match e {
                // A file's message names the file rather than its id
                // in the cache.
                perfq_query::Error::NoTopdown(why) => anyhow::anyhow!(
                    "--color topdown: {} has no top-down events ({})",
                    opt.input.display(),
                    match (&input.capture, &opt.capture) {
                        (Some(id), None) => why.replace(&format!("capture {id} "), ""),
                        _ => why,
                    }
                ),
                e => anyhow::Error::new(e).context(opt.input.display().to_string()),
            })?;
            for w in &s.warnings {
                crate::say::warning(format_args!("{w}"));
            }
            Some(s)
        }
    };
    let source = match (&input.capture, &opt.capture) {
        (Some(_), None) if opt.input.is_file() => file_name(&opt.input),
        (_, Some(id)) => format!("{} capture {id}", file_name(&opt.input)),
        _ => file_name(&opt.input),
    };
    let svg = render(&folded, shading.as_ref(), &source, weight)?;
    emit(opt.output.as_deref(), out, |w| Ok(w.write_all(&svg)?))?;
    Ok(input.outcome())
}

/// A path's file name, for titles.
pub(crate) fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Writes to `output` atomically, or to `out`.
fn emit(
    output: Option<&Path>,
    out: &mut dyn Write,
    f: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    match output {
        Some(path) => output::write_atomically(path, |w| f(w)),
        None => f(out),
    }
}

/// A frame's colour: its function's dominant category's
/// (`perfq_view::palette`, the HTML page's too), grey without numbers.
fn category_color(node: &str) -> Rgb {
    rgb(perfq_view::palette::category(node).unwrap_or(perfq_view::palette::NO_TOPDOWN))
}

fn rgb((r, g, b): (u8, u8, u8)) -> Rgb {
    Rgb { r, g, b }
}

/// Frames without top-down numbers.
const NO_TOPDOWN: Rgb = Rgb {
    r: perfq_view::palette::NO_TOPDOWN.0,
    g: perfq_view::palette::NO_TOPDOWN.1,
    b: perfq_view::palette::NO_TOPDOWN.2,
};

/// A category's label for people: `Backend_Bound` → `Backend Bound`. No
/// parentheses: inferno's script takes a frame's name from its tooltip by
/// cutting the last parenthesized group.
fn label(l: &str) -> String {
    l.replace('_', " ").replace(['(', ')'], "")
}

/// Image width: fixed, so that the legend can be laid out.
const WIDTH: usize = 1200;

fn render(
    folded: &Folded,
    shading: Option<&Shading>,
    source: &str,
    weight: Weight,
) -> anyhow::Result<Vec<u8>> {
    if folded.stacks.is_empty() {
        // inferno draws nothing without stacks: a graph that says so.
        let svg = format!(
            "<?xml version=\"1.0\" standalone=\"no\"?>\n\
             <svg version=\"1.1\" width=\"{WIDTH}\" height=\"60\" \
             xmlns=\"http://www.w3.org/2000/svg\">\
             <text x=\"{}\" y=\"35\" text-anchor=\"middle\" font-family=\"Verdana\" \
             font-size=\"17\">{}: no samples</text></svg>\n",
            WIDTH / 2,
            escape(source)
        );
        return Ok(svg.into_bytes());
    }
    let mut palette = PaletteMap::default();
    let mut o = inferno::flamegraph::Options::default();
    o.title = format!("{source}: {}", folded.event);
    let off_cpu = folded.event == fg::OFF_CPU;
    o.count_name = match (weight, off_cpu) {
        (Weight::Period, false) => "period".into(),
        (Weight::Samples, false) => "samples".into(),
        (Weight::Period, true) => "ns".into(),
        (Weight::Samples, true) => "waits".into(),
    };
    o.notes = format!(
        "perfq flamegraph: event {}, {} samples, captures {}",
        folded.event,
        folded.samples,
        folded.captures.join(" ")
    );
    // Colours from the names' hashes: the same input draws the same SVG.
    o.hash = true;
    o.image_width = Some(WIDTH);
    if let Some(s) = shading {
        o.title
            .push_str(" — colour: dominant level-1 top-down category (total)");
        // The legend is drawn on the subtitle's line.
        o.subtitle = Some(" ".into());
        let mut names: BTreeSet<&str> = BTreeSet::new();
        names.insert("");
        for (stack, _) in &folded.stacks {
            names.extend(stack.split(';'));
        }
        for name in names {
            let c = s.names.get(name).map_or(NO_TOPDOWN, |shade| {
                s.categories
                    .get(shade.dominant)
                    .map_or(NO_TOPDOWN, |c| category_color(&c.name))
            });
            palette.insert(name, c);
        }
        o.palette_map = Some(&mut palette);
    }
    let lines: Vec<String> = folded
        .stacks
        .iter()
        .map(|(stack, n)| format!("{stack} {n}"))
        .collect();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut o, lines.iter().map(String::as_str), &mut svg)
        .context("drawing the flame graph")?;
    let font_size = o.font_size;
    drop(o);
    Ok(match shading {
        Some(s) => {
            let text = String::from_utf8(svg).context("inferno wrote an SVG that is not UTF-8")?;
            let text = with_topdown_tooltips(&text, s);
            with_legend(&text, s, font_size).into_bytes()
        }
        None => svg,
    })
}

/// Adds each frame's level-1 shares to its tooltip (`<title>`), inside
/// inferno's last parenthesized group so that its script still finds the
/// name: `f (120 samples, 3.00%; Retiring 20.0%, ... → Backend Bound)`.
fn with_topdown_tooltips(svg: &str, s: &Shading) -> String {
    let mut out = String::with_capacity(svg.len() + svg.len() / 4);
    let mut rest = svg;
    while let Some(start) = rest.find("<title>") {
        let body = start + "<title>".len();
        let Some(len) = rest[body..].find("</title>") else {
            break;
        };
        let title = &rest[body..body + len];
        out.push_str(&rest[..body]);
        let name = unescape(title.rfind(" (").map_or(title, |i| &title[..i]));
        let extra = match (s.names.get(&name), title.ends_with(')')) {
            (_, false) => String::new(),
            (Some(shade), true) => {
                let shares: Vec<String> = s
                    .categories
                    .iter()
                    .zip(&shade.shares)
                    .map(|(c, v)| match v {
                        Some(v) => format!("{} {:.1}%", label(&c.label), v * 100.0),
                        None => format!("{} -", label(&c.label)),
                    })
                    .collect();
                let dominant = s
                    .categories
                    .get(shade.dominant)
                    .map_or(String::new(), |c| label(&c.label));
                format!("; top-down total: {} → {dominant}", shares.join(", "))
            }
            (None, true) if title.starts_with("all (") => String::new(),
            (None, true) => "; no top-down samples".into(),
        };
        match extra.is_empty() {
            true => out.push_str(title),
            false => {
                out.push_str(&title[..title.len() - 1]);
                out.push_str(&escape(&extra));
                out.push(')');
            }
        }
        rest = &rest[body + len..];
    }
    out.push_str(rest);
    out
}

/// Draws the legend (a coloured square and a label per category, and one
/// for frames without top-down numbers) on the subtitle's line, centred.
fn with_legend(svg: &str, s: &Shading, font_size: usize) -> String {
    let mut items: Vec<(String, Rgb)> = s
        .categories
        .iter()
        .map(|c| (label(&c.label), category_color(&c.name)))
        .collect();
    items.push(("no top-down data".into(), NO_TOPDOWN));
    // inferno's font is monospace at 0.59 em per character.
    let char_w = font_size as f64 * 0.59;
    let square = font_size as f64;
    let gap = 2.0 * char_w;
    let item_w = |l: &str| square + char_w / 2.0 + l.chars().count() as f64 * char_w;
    let total: f64 = items.iter().map(|(l, _)| item_w(l)).sum::<f64>()
        + gap * (items.len().saturating_sub(1)) as f64;
    let y = (font_size * 4) as f64;
    let mut x = ((WIDTH as f64 - total) / 2.0).max(10.0);
    let mut g = String::from("<g id=\"legend\">");
    for (l, c) in &items {
        g.push_str(&format!(
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{square:.1}\" height=\"{square:.1}\" fill=\"rgb({},{},{})\" stroke=\"black\" stroke-width=\"0.5\"/>",
            y - square + 2.0,
            c.r,
            c.g,
            c.b
        ));
        g.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{y:.1}\" text-anchor=\"start\">{}</text>",
            x + square + char_w / 2.0,
            escape(l)
        ));
        x += item_w(l) + gap;
    }
    g.push_str("</g>");
    // After the subtitle element (or the title's, were it missing).
    let anchor = svg
        .find("id=\"subtitle\"")
        .or_else(|| svg.find("id=\"title\""))
        .and_then(|i| svg[i..].find("</text>").map(|j| i + j + "</text>".len()));
    match anchor {
        Some(at) => format!("{}{g}{}", &svg[..at], &svg[at..]),
        None => svg.to_string(),
    }
}

/// XML text escaping (what quick-xml, inferno's writer, escapes).
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// The inverse of [`escape`], for names read back from inferno's titles
/// (numeric references too).
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let Some(end) = tail.find(';') else {
            out.push_str(tail);
            return out;
        };
        let entity = &tail[1..end];
        let c = match entity {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            e => e
                .strip_prefix("#x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| e.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match c {
            Some(c) => out.push(c),
            None => out.push_str(&tail[..=end]),
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::{escape, unescape};

    #[test]
    fn escaping_round_trips() {
        for s in ["<F as Fn<()>>::call", "a&b \"q\" 'x'", "plain"] {
            assert_eq!(unescape(&escape(s)), s);
        }
        assert_eq!(unescape("&#60;&#x3e;"), "<>");
    }
}
