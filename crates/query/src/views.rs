//! perfq's standard views: SQL files in `crates/query/sql/`, each one
//! query with a comment that documents it and its columns (docs/schema.md's
//! view reference is those comments, a test holds them equal). They name
//! only the dataset's tables and each other, so the same text runs over a
//! dataset of one capture or of many, and only SQL that DataFusion, DuckDB
//! and Spark all read: the same text runs on each (docs/distributed.md).
//!
//! Names tell the public from the rest, as in Perfetto's standard
//! library: a view of [`VIEWS`] has a plain name (`function_self`, file
//! `sql/function_self.sql`) and is perfq's SQL interface, documented and
//! defined in every query session. A file whose name starts with `_`
//! (`sql/_flamegraph_stacks.sql`) is a helper (`crate::helpers`): a
//! query or template perfq runs for itself, documented the same way but
//! neither defined as a view nor listed as interface.

use rustc_hash::FxHashSet;

pub use crate::stack_tables::SampledStacks;
use crate::{helpers, Error, Session, TABLES};
use std::sync::Arc;

/// One view: its name and its query.
#[derive(Clone, Copy, Debug)]
pub struct View {
    /// The view's name.
    pub name: &'static str,
    /// Its `SELECT`, with the comment that documents it.
    pub sql: &'static str,
}

macro_rules! views {
    ($($name:literal),* $(,)?) => {
        &[$(View { name: $name, sql: include_str!(concat!("../sql/", $name, ".sql")) }),*]
    };
}

/// Every view, each after the ones it reads.
pub const VIEWS: &[View] = views!(
    "frame_functions",
    "functions",
    "stack_frames",
    "stack_functions",
    "stack_sets",
    "set_functions",
    "delivered_samples",
    "sample_symbols",
    "function_self",
    "function_total",
    "stack_symbols",
    "off_cpu_stacks",
    "off_cpu_thread",
    "off_cpu_process",
    "off_cpu_function_self",
    "off_cpu_function_total",
    "off_cpu_function",
    "wall_clock_function",
);

/// The query of view `name`.
pub(crate) fn sql(name: &str) -> Option<&'static str> {
    VIEWS.iter().find(|v| v.name == name).map(|v| v.sql)
}

/// The views inclusive (total) sums read, in the order they depend on
/// each other: small (a row per stack or function) and read more than
/// once, so [`keep_stack_tables`] computes them once and keeps them in
/// memory — DataFusion computes a view again at each use.
pub const STACK_TABLES: &[&str] = &[
    "functions",
    "stack_functions",
    "stack_sets",
    "set_functions",
];

/// Computes the [`STACK_TABLES`] once and keeps them in memory under
/// their names, and defines `stack_frames` as an unnest of `frame_ids`
/// unless the session has it already. Call it before [`register`].
///
/// `stack_sets` and `set_functions` are perfq's own computation (one pass
/// over each sampled stack's frames, `stack_tables.rs`), the rows of
/// their SQL definitions (a test holds them equal), and `stack_functions`
/// a view over them; when the session has any of the three already, as
/// tables or views, those are left as they are and the others are
/// computed by their SQL.
pub fn keep_stack_tables(session: &Session) -> Result<(), Error> {
    keep(session, false, false)
}

/// The sampled stacks as [`keep_stack_tables`] reads them (called first
/// if the stack tables are not kept yet), with `paths`, each one's
/// functions leaf first. `None` where perfq did not compute the stack
/// tables itself (some of them, or `functions`, are the caller's; a
/// stacks table perfq does not write), or kept them before without the
/// paths asked for.
pub fn sampled_stacks(session: &Session, paths: bool) -> Result<Option<Arc<SampledStacks>>, Error> {
    if !session.has_relation("stack_sets")? {
        keep(session, false, paths)?;
    }
    Ok(session
        .sampled_stacks()
        .filter(|s| !paths || s.is_empty() || s.path(0).is_some()))
}

/// [`keep_stack_tables`] for `statement`: when it names `function_total`,
/// that view's rows are computed from the stack tables too and kept under
/// its name (the rows of its SQL, which a test holds equal; summed
/// without DataFusion's joins, which took a large part of the query's
/// time on a system-wide capture) — unless the session has a
/// `function_total` or a `functions` of its own.
pub fn keep_stack_tables_for(session: &Session, statement: &str) -> Result<(), Error> {
    keep(
        session,
        words(statement).any(|w| w == "function_total"),
        false,
    )
}

fn keep(session: &Session, totals: bool, paths: bool) -> Result<(), Error> {
    // The standard view, defined by perfq (for a profile, say) or not yet:
    // its names are then worked out from the frames here, much faster
    // than by its SQL.
    let standard_frames =
        !session.has_relation("frame_functions")? || session.is_standard_view("frame_functions");
    ensure(session, "frame_functions")?;
    if !session.has_relation("stack_frames")? {
        session.create_view("stack_frames", helpers::UNNESTED_STACK_FRAMES)?;
    }
    // A `functions` of the caller's, perfq's own computation reads; any
    // other stack table of the caller's leaves the rest to their SQL.
    let taken = STACK_TABLES
        .iter()
        .filter(|n| **n != "functions")
        .map(|n| session.has_relation(n))
        .collect::<Result<Vec<_>, _>>()?;
    if taken.iter().any(|&t| t) {
        // Some defined by the caller: the others by their SQL, over them.
        for name in STACK_TABLES {
            session.create_table_once(name, sql(name).unwrap_or_default())?;
        }
    } else {
        let opt = crate::stack_tables::Keep {
            standard_frames,
            totals,
            paths,
        };
        crate::stack_tables::keep(session, &opt, |n| sql(n).unwrap_or_default())?;
    }
    Ok(())
}

/// Whether a statement names a view that reads the [`STACK_TABLES`]: one
/// of them, a `function_total` view (`topdown_function_total_intel_glc`
/// too), or a view that reads one of them (`off_cpu_function`). By the statement's words: a name inside a string literal counts
/// too, which only costs the time to compute them.
pub fn reads_stack_tables(statement: &str) -> bool {
    words(statement).any(|w| STACK_TABLES.contains(&w.as_str()) || w.contains("function_total"))
        || read_by(statement)
            .iter()
            .any(|v| STACK_TABLES.contains(&v.name))
}

/// The dataset's tables ([`TABLES`]) `queries` read: those they name,
/// and those the views they name read. By the words of their queries,
/// their comment headers aside.
pub(crate) fn tables_read_by(queries: &[&str]) -> Vec<&'static str> {
    let mut named: FxHashSet<String> = FxHashSet::default();
    for q in queries {
        let q = helpers::query(q);
        named.extend(words(q));
        for v in read_by(q) {
            named.extend(words(helpers::query(v.sql)));
        }
    }
    TABLES
        .iter()
        .copied()
        .filter(|t| named.contains(*t))
        .collect()
}

/// A statement's words (identifiers and keywords), lower-cased.
fn words(statement: &str) -> impl Iterator<Item = String> + '_ {
    statement
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
}

/// Registers every view the session does not have yet (a name already
/// taken, by a view or by a table kept in memory, is left as it is).
pub fn register(session: &Session) -> Result<(), Error> {
    for v in VIEWS {
        ensure(session, v.name)?;
    }
    Ok(())
}

/// Registers, as [`register`] does, only the views `statement` reads:
/// those it names and the views they read. Planning all of them took
/// most of a simple query's time (each view's plan holds the plans of
/// the views it reads). A statement that lists the catalog
/// (`information_schema`, `SHOW`) gets every view, as it would see them.
pub fn register_read_by(session: &Session, statement: &str) -> Result<(), Error> {
    for v in read_by(statement) {
        ensure(session, v.name)?;
    }
    Ok(())
}

/// The views `statement` reads, by their names among its words, each
/// after the ones it reads.
fn read_by(statement: &str) -> Vec<&'static View> {
    let named: FxHashSet<String> = words(statement).collect();
    if named.contains("information_schema") || named.contains("show") {
        return VIEWS.iter().collect();
    }
    // A view reads only views before it in VIEWS: from the last back,
    // each needed view marks those its SQL names.
    let mut needed: Vec<bool> = VIEWS.iter().map(|v| named.contains(v.name)).collect();
    for i in (0..VIEWS.len()).rev() {
        if needed[i] {
            let reads: FxHashSet<String> = words(VIEWS[i].sql).collect();
            for (j, v) in VIEWS[..i].iter().enumerate() {
                needed[j] |= reads.contains(v.name);
            }
        }
    }
    VIEWS
        .iter()
        .zip(needed)
        .filter(|(_, n)| *n)
        .map(|(v, _)| v)
        .collect()
}

/// Defines view `name`, and the views it reads before it, each unless the
/// session has a relation of that name.
pub(crate) fn ensure(session: &Session, name: &str) -> Result<(), Error> {
    for v in read_by(name) {
        if !session.has_relation(v.name)? {
            session.create_standard_view(v.name, v.sql)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{read_by, reads_stack_tables, tables_read_by, VIEWS};
    use crate::helpers;

    #[test]
    fn views_a_statement_reads() {
        let names = |s: &str| read_by(s).iter().map(|v| v.name).collect::<Vec<_>>();
        assert_eq!(
            names("SELECT * FROM Function_Self ORDER BY samples"),
            [
                "frame_functions",
                "delivered_samples",
                "sample_symbols",
                "function_self"
            ]
        );
        assert_eq!(names("SELECT COUNT(*) FROM samples"), Vec::<&str>::new());
        assert_eq!(names("SELECT 1"), Vec::<&str>::new());
        // function_total reads the stack tables, and they the frames' names.
        let total = names("SELECT * FROM function_total");
        for v in [
            "frame_functions",
            "functions",
            "stack_sets",
            "set_functions",
        ] {
            assert!(total.contains(&v), "{v} missing from {total:?}");
        }
        assert!(!total.contains(&"function_self"));
        for s in ["SHOW TABLES", "SELECT * FROM information_schema.views"] {
            assert_eq!(names(s).len(), VIEWS.len(), "{s}");
        }
    }

    #[test]
    fn tables_the_flame_graph_reads() {
        let queries = [
            helpers::FLAMEGRAPH_DELIVERED,
            helpers::FLAMEGRAPH_STACKS,
            helpers::FLAMEGRAPH_FRAMES,
        ];
        // `capture`, a column of every query, names a table too: one every
        // dataset has.
        assert_eq!(
            tables_read_by(&queries),
            [
                "capture",
                "events",
                "samples",
                "read_values",
                "stacks",
                "frames"
            ]
        );
    }

    #[test]
    fn statements_that_read_the_stack_tables() {
        for s in [
            "SELECT * FROM function_total",
            "select * from TOPDOWN_FUNCTION_TOTAL_intel_glc",
            "SELECT set_id FROM stack_sets",
            "SELECT * FROM functions",
        ] {
            assert!(reads_stack_tables(s), "{s}");
        }
        for s in [
            "SELECT COUNT(*) FROM samples",
            "SELECT * FROM function_self",
            "SELECT * FROM frame_functions",
        ] {
            assert!(!reads_stack_tables(s), "{s}");
        }
    }
}
