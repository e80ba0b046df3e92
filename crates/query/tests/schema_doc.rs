//! docs/schema.md against the code: its tables are `perfq_query::TABLES`,
//! in order, and its view reference is the comment headers of the
//! public views' SQL files (`perfq_query::views::VIEWS`), rendered as
//! [`reference`] renders them. Helpers (`sql/_*.sql`) are not in it.
//! docs/distributed.md's scripts, which set a dataset up in other
//! engines, name the same tables, views and kept stack tables.

use std::path::PathBuf;

use perfq_query::views::{STACK_TABLES, VIEWS};
use perfq_query::TABLES;

/// The workspace root. The manifest folder is read when the test runs
/// (cargo sets it): the one compiled in goes stale when a warm target
/// folder serves a checkout at another path.
fn root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("../..")
}

fn schema_md() -> String {
    std::fs::read_to_string(root().join("docs/schema.md")).expect("docs/schema.md")
}

/// The text between two marker lines.
fn between<'a>(doc: &'a str, start: &str, end: &str) -> &'a str {
    doc.split_once(start)
        .and_then(|(_, rest)| rest.split_once(end))
        .map(|(t, _)| t)
        .unwrap_or_else(|| panic!("docs/schema.md has no {start} … {end}"))
}

const START: &str = "<!-- view reference -->\n";
const END: &str = "<!-- end view reference -->";

/// One column entry of a header: the columns and what they hold.
struct Entry {
    names: String,
    meaning: String,
}

/// A view's header: what it is (its first paragraph) and its columns
/// (its second). A header is the file's leading `--` lines: `-- <name>:
/// <what it is>`, an empty comment line, then the columns, one entry a
/// line indented by three spaces (names, two spaces or more, the
/// meaning), a meaning going on on lines indented further and a list of
/// names on the next entry's line when it ends with a comma.
fn header(name: &str, sql: &str) -> (String, Vec<Entry>) {
    let lines: Vec<&str> = sql
        .lines()
        .take_while(|l| l.starts_with("--"))
        .map(|l| l.trim_start_matches("--"))
        .collect();
    let mut paragraphs = lines.split(|l| l.trim().is_empty());
    let what = paragraphs
        .next()
        .unwrap_or_default()
        .iter()
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join(" ");
    let what = what
        .strip_prefix(&format!("{name}: "))
        .unwrap_or_else(|| panic!("{name}.sql starts `-- {name}: `"))
        .to_string();
    let mut entries: Vec<Entry> = Vec::new();
    let mut names_go_on = false;
    for line in paragraphs.next().unwrap_or_default() {
        let indent = line.len() - line.trim_start().len();
        let text = line.trim();
        if indent == 3 {
            let (names, meaning) = match text.split_once("  ") {
                Some((n, m)) => (n.trim(), m.trim()),
                None => (text, ""),
            };
            match entries.last_mut() {
                Some(e) if names_go_on => {
                    e.names = format!("{} {names}", e.names);
                    e.meaning = meaning.to_string();
                }
                _ => entries.push(Entry {
                    names: names.to_string(),
                    meaning: meaning.to_string(),
                }),
            }
            names_go_on = names.ends_with(',');
        } else {
            let e = entries
                .last_mut()
                .unwrap_or_else(|| panic!("{name}.sql: a column line indented by 3: {line:?}"));
            assert!(indent > 3, "{name}.sql: {line:?}");
            e.meaning = format!("{} {text}", e.meaning);
        }
    }
    assert!(!entries.is_empty(), "{name}.sql lists no columns");
    (what, entries)
}

/// The view reference as docs/schema.md holds it: per view, in
/// [`VIEWS`]' order, a heading, what it is and a table of its columns.
fn reference() -> String {
    let mut out = String::new();
    for v in VIEWS {
        let (what, entries) = header(v.name, v.sql);
        let mut chars = what.chars();
        let what: String = chars
            .next()
            .map(|c| c.to_uppercase().chain(chars).collect())
            .unwrap_or_default();
        out.push_str(&format!(
            "\n#### `{}`\n\n{what}\n\n| column | meaning |\n|---|---|\n",
            v.name
        ));
        for e in entries {
            let names: Vec<String> = e
                .names
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(|n| format!("`{n}`"))
                .collect();
            out.push_str(&format!("| {} | {} |\n", names.join(", "), e.meaning));
        }
    }
    out.push('\n');
    out
}

#[test]
fn the_view_reference_is_the_sql_headers() {
    let doc = schema_md();
    let documented = between(&doc, START, END);
    let want = reference();
    assert!(
        documented == want,
        "docs/schema.md's view reference differs from the headers of \
         crates/query/sql/<view>.sql; between the markers it should read:\n{want}"
    );
}

#[test]
fn the_tables_are_the_ones_a_session_registers() {
    let doc = schema_md();
    let tables = between(&doc, "\n## Tables\n", "\n## Example queries");
    let headings: Vec<&str> = tables
        .lines()
        .filter_map(|l| l.strip_prefix("### `"))
        .filter_map(|l| l.split_once('`').map(|(name, _)| name))
        .collect();
    assert_eq!(headings, TABLES, "docs/schema.md's tables");
    // The listing of a capture's folder.
    let listing = between(&doc, "DATASET/\n", "```");
    let files: Vec<&str> = listing
        .split_whitespace()
        .filter_map(|w| w.strip_suffix(".parquet"))
        .collect();
    assert_eq!(files, TABLES, "docs/schema.md's capture folder");
}

/// The quoted names of each `NAME = [...]` (or `{...}`) list in a
/// script, in order.
fn python_lists(doc: &str, name: &str) -> Vec<Vec<String>> {
    let start = format!("{name} = ");
    doc.match_indices(&start)
        .map(|(at, _)| {
            let rest = &doc[at + start.len()..];
            let close = if rest.starts_with('{') { '}' } else { ']' };
            let list = &rest[1..rest.find(close).expect("the list closes")];
            list.split(',')
                .map(|w| w.trim().trim_matches('"').to_string())
                .filter(|w| !w.is_empty())
                .collect()
        })
        .collect()
}

/// The words of a shell loop `for VAR in ...; do`.
fn shell_loops(doc: &str, var: &str) -> Vec<Vec<String>> {
    let start = format!("for {var} in ");
    doc.match_indices(&start)
        .filter_map(|(at, _)| {
            // The command's lines: each ending in a backslash goes on.
            let mut command = String::new();
            for line in doc[at + start.len()..].lines() {
                match line.strip_suffix('\\') {
                    Some(more) => command.push_str(more),
                    None => {
                        command.push_str(line);
                        break;
                    }
                }
            }
            let list = &command[..command.find("; do")?];
            Some(list.split_whitespace().map(str::to_string).collect())
        })
        .collect()
}

#[test]
fn the_other_engines_scripts_name_every_table_and_view() {
    let doc =
        std::fs::read_to_string(root().join("docs/distributed.md")).expect("docs/distributed.md");
    let views: Vec<&str> = VIEWS.iter().map(|v| v.name).collect();
    let mut kept = STACK_TABLES.to_vec();
    kept.sort_unstable();
    let tables = python_lists(&doc, "TABLES");
    let view_lists = python_lists(&doc, "VIEWS");
    let keep = python_lists(&doc, "KEEP");
    assert!(!tables.is_empty() && !view_lists.is_empty() && !keep.is_empty());
    for list in tables {
        assert_eq!(list, TABLES, "docs/distributed.md's TABLES");
    }
    for list in view_lists {
        assert_eq!(list, views, "docs/distributed.md's VIEWS");
    }
    for mut list in keep {
        list.sort_unstable();
        assert_eq!(list, kept, "docs/distributed.md's KEEP");
    }
    let shell_tables = shell_loops(&doc, "t");
    let shell_views = shell_loops(&doc, "v");
    assert!(!shell_tables.is_empty() && !shell_views.is_empty());
    for list in shell_tables {
        assert_eq!(list, TABLES, "docs/distributed.md's shell table loop");
    }
    for list in shell_views {
        assert_eq!(list, views, "docs/distributed.md's shell view loop");
    }
}
