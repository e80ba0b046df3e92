//! perfq's standard views: SQL files in `crates/query/sql/`, each one
//! `SELECT` with a comment that documents its columns (docs/schema.md
//! lists them too). They name only the dataset's tables and each other,
//! so the same text runs over a dataset of one capture or of many.

use crate::{Error, Session};

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
    "stack_functions",
    "stack_sets",
    "set_functions",
    "sample_symbols",
    "function_self",
    "function_total",
    "stack_symbols",
);

/// The query of view `name`.
pub(crate) fn sql(name: &str) -> Option<&'static str> {
    VIEWS.iter().find(|v| v.name == name).map(|v| v.sql)
}

/// Registers every view the session does not have yet (a name already
/// taken, by a view or by a table kept in memory, is left as it is).
pub fn register(session: &Session) -> Result<(), Error> {
    for v in VIEWS {
        if !session.has_relation(v.name)? {
            session.create_view(v.name, v.sql)?;
        }
    }
    Ok(())
}
