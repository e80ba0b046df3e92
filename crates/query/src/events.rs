//! The events a session's samples are delivered as (`delivered_samples`):
//! the one order the flame graph and diff choose their default event by.

use crate::{columns, helpers, views, Error, Session};

/// The events with delivered samples, the first delivered first and a
/// group's members in group order where they tie (`_sampled_events.sql`).
pub fn sampled_events(session: &Session) -> Result<Vec<String>, Error> {
    views::ensure(session, "delivered_samples")?;
    let rows = session.sql(helpers::SAMPLED_EVENTS)?;
    let mut out = Vec::new();
    for b in &rows {
        out.extend(columns::strings(b, "name")?.into_iter().flatten());
    }
    Ok(out)
}
