//! perfq's own queries: the helpers of `crates/query/sql/`, each a file
//! whose name starts with `_` (`_flamegraph_stacks.sql`), documented by
//! its comment header as the public views are (`crate::views`) but not
//! part of perfq's SQL interface: no session defines them as views, and
//! docs/schema.md does not list them.
//!
//! A helper is a fixed query, run as it is, or a template: a query with
//! named placeholders (`{event}`, `{keys}`) that [`fill`] replaces — a
//! string as an SQL string literal, SQL text (a column list, a relation,
//! another helper's query) as it is. Only a helper's query is filled, not
//! its comment header, so that no value can end a comment early.

use crate::columns::quote;

macro_rules! helpers {
    ($($(#[$doc:meta])* $konst:ident = $file:literal;)*) => {
        $($(#[$doc])* pub(crate) const $konst: &str =
            include_str!(concat!("../sql/", $file, ".sql"));)*
        /// Every helper: its file's name and its text.
        #[cfg(test)]
        pub(crate) const ALL: &[(&str, &str)] = &[$(($file, $konst)),*];
    };
}

helpers! {
    /// `stack_frames` as DataFusion writes it (`views::keep_stack_tables`).
    UNNESTED_STACK_FRAMES = "_unnested_stack_frames";
    /// The sampled stacks' frame lists (`crate::stack_tables`).
    SAMPLED_STACKS = "_sampled_stacks";
    /// Each frame's function id, over a caller's tables.
    FRAME_FUNCTION_IDS = "_frame_function_ids";
    /// `stack_functions` over the kept stack tables.
    STACK_FUNCTIONS_OF_SETS = "_stack_functions_of_sets";
    /// The frames functions are named from.
    FUNCTION_FRAMES = "_function_frames";
    /// The same, from a caller's `frame_functions`.
    FUNCTION_FRAMES_OF_VIEW = "_function_frames_of_view";
    /// The ids a caller's `functions` names.
    NAMED_FUNCTION_IDS = "_named_function_ids";
    /// The samples perfq's own `function_total` sums.
    STACK_SET_SAMPLES = "_stack_set_samples";
    /// The delivered samples a flame graph folds (`crate::flamegraph`).
    FLAMEGRAPH_DELIVERED = "_flamegraph_delivered";
    /// The delivered samples with their process names.
    NAMED_DELIVERED = "_named_delivered";
    /// The delivered samples per thread in time order (`crate::profile`).
    PROFILE_SAMPLES = "_profile_samples";
    /// Those samples as they are read (`crate::stack_counts`).
    EVENT_SAMPLES = "_event_samples";
    /// One event's samples per capture, comm and stack.
    FLAMEGRAPH_STACKS = "_flamegraph_stacks";
    /// The off-CPU intervals per capture, comm and stack.
    FLAMEGRAPH_OFF_CPU = "_flamegraph_off_cpu";
    /// Every frame's rows and function.
    FLAMEGRAPH_FRAMES = "_flamegraph_frames";
    /// The thread records comms are worked out from.
    FLAMEGRAPH_THREADS = "_flamegraph_threads";
    /// The events with delivered samples, the first first
    /// (`crate::events`).
    SAMPLED_EVENTS = "_sampled_events";
    /// One event's samples and periods per key.
    DIFF_COUNTS = "_diff_counts";
    /// One event's samples with their interval (`crate::function_sums`).
    INTERVAL_SAMPLES = "_interval_samples";
    /// Each thread's off-CPU time per interval (`crate::off_cpu`).
    OFF_CPU_BY_INTERVAL = "_off_cpu_by_interval";
    /// Inclusive sums per function (`crate::inclusive`).
    INCLUSIVE_SUMS = "_inclusive_sums";
    /// One capture's rows of `stack_sets`.
    STACK_SETS_OF_CAPTURE = "_stack_sets_of_capture";
    /// One formula set's topdown rows (`crate::topdown`).
    TOPDOWN = "_topdown";
    /// One capture's part of `topdown_samples`.
    TOPDOWN_SAMPLES = "_topdown_samples";
    /// Topdown sums per function (self) or DSO.
    TOPDOWN_BY_LEAF = "_topdown_by_leaf";
    /// Topdown sums per thread.
    TOPDOWN_BY_THREAD = "_topdown_by_thread";
    /// Topdown sums per process.
    TOPDOWN_BY_PROCESS = "_topdown_by_process";
    /// Topdown sums per time interval.
    TOPDOWN_BY_INTERVAL = "_topdown_by_interval";
    /// Each thread's last comm.
    TOPDOWN_COMMS = "_topdown_comms";
    /// Each capture's CPU.
    TOPDOWN_CPUS = "_topdown_cpus";
    /// Each capture's PMUs.
    TOPDOWN_PMUS = "_topdown_pmus";
    /// Each capture's events.
    TOPDOWN_EVENTS = "_topdown_events";
    /// Per event of a capture, its samples and member values.
    TOPDOWN_MEMBER_COUNTS = "_topdown_member_counts";
}

/// A placeholder's value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Param<'a> {
    /// A string, written as an SQL string literal.
    Text(&'a str),
    /// SQL text written as it is: an identifier, a number, a column
    /// list, a relation or a query, all of them perfq's own.
    Sql(&'a str),
}

/// A helper's query: its text after the comment header (the leading
/// comment and blank lines), without the line break that ends it.
pub(crate) fn query(text: &str) -> &str {
    let mut rest = text;
    while let Some(line) = rest.lines().next() {
        let trimmed = line.trim_start();
        if !(trimmed.is_empty() || trimmed.starts_with("--")) {
            break;
        }
        rest = rest[line.len()..]
            .strip_prefix("\r\n")
            .or_else(|| rest[line.len()..].strip_prefix('\n'))
            .unwrap_or("");
    }
    rest.trim_end()
}

/// Template `text`'s query with each placeholder `{name}` replaced by the
/// value `params` gives `name` (a value the query does not name is left
/// unused: one list of values can serve several templates).
///
/// # Panics
///
/// When the query names a placeholder `params` has no value for: a
/// defect of perfq, which a test that runs the template finds.
pub(crate) fn fill(text: &str, params: &[(&str, Param<'_>)]) -> String {
    let template = query(text);
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(after.len());
        if name_len == 0 || !after[name_len..].starts_with('}') {
            // Not a placeholder: a brace of the SQL itself.
            out.push('{');
            rest = after;
            continue;
        }
        let name = &after[..name_len];
        match params.iter().find(|(n, _)| *n == name) {
            Some((_, Param::Text(s))) => out.push_str(&quote(s)),
            Some((_, Param::Sql(s))) => out.push_str(s),
            None => panic!("no value for placeholder {{{name}}} of a query template"),
        }
        rest = &after[name_len + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::{fill, query, Param, ALL};

    #[test]
    fn placeholders_filled_and_strings_quoted() {
        let text = "-- _x: a template.\n--\n--   {event}  the event\n\
                    SELECT {keys} FROM t\nWHERE name = {event} AND x = '{'\n";
        let got = fill(
            text,
            &[
                ("keys", Param::Sql("symbol, dso")),
                ("event", Param::Text("it's {keys}\n--")),
            ],
        );
        assert_eq!(
            got,
            "SELECT symbol, dso FROM t\nWHERE name = 'it''s {keys}\n--' AND x = '{'"
        );
    }

    #[test]
    #[should_panic(expected = "{event}")]
    fn a_placeholder_without_a_value_is_a_defect() {
        fill("SELECT {event}", &[]);
    }

    /// The placeholders `{name}` of a text, sorted, once each.
    fn placeholders(text: &str) -> Vec<String> {
        let mut out: Vec<String> = text
            .split('{')
            .skip(1)
            .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
            .filter(|name| {
                !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            })
            .map(str::to_string)
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// A template's header documents each of its placeholders, and only
    /// those: a fixed query has none.
    #[test]
    fn every_placeholder_documented() {
        for (name, text) in ALL {
            let header: String = text
                .lines()
                .take_while(|l| l.starts_with("--"))
                .collect::<Vec<_>>()
                .join("\n");
            let used = placeholders(query(text));
            let documented = placeholders(&header);
            assert_eq!(used, documented, "{name}.sql");
            let template = text.starts_with(&format!("-- {name} (template):"));
            assert_eq!(
                template,
                !used.is_empty(),
                "{name}.sql: `(template)` or not"
            );
        }
    }

    /// Every helper file is listed, documented, named for a helper and
    /// comment-free below its header (a value filled into a comment could
    /// end it early).
    #[test]
    fn every_helper_listed_and_documented() {
        // The manifest folder as cargo gives it when the test runs: the one
        // compiled in goes stale when a warm target folder serves a
        // checkout at another path.
        let dir = std::env::var_os("CARGO_MANIFEST_DIR")
            .map_or_else(
                || std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")),
                std::path::PathBuf::from,
            )
            .join("sql");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter_map(|n| n.strip_suffix(".sql").map(str::to_string))
            .filter(|n| n.starts_with('_'))
            .collect();
        files.sort();
        let mut listed: Vec<String> = ALL.iter().map(|(n, _)| n.to_string()).collect();
        listed.sort();
        assert_eq!(files, listed, "sql/_*.sql and helpers::ALL");
        for (name, text) in ALL {
            assert!(
                text.starts_with(&format!("-- {name}")),
                "{name}.sql starts with `-- {name}`"
            );
            assert!(!query(text).is_empty(), "{name}.sql has a query");
            assert!(
                !query(text).contains("--"),
                "{name}.sql: a comment below the header"
            );
        }
    }
}
