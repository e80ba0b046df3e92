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

/// The event a command works on: the one `wanted` names, else the first
/// sampled (`sampled`, as [`sampled_events`] gives them); `None` when
/// nothing was sampled.
pub fn chosen(wanted: Option<&str>, sampled: &[String]) -> Result<Option<String>, Error> {
    match wanted {
        Some(e) if sampled.iter().any(|s| s == e) => Ok(Some(e.to_string())),
        Some(e) => Err(Error::NoSamples(format!(
            "no samples of event {e}; the samples are of {}",
            if sampled.is_empty() {
                "no event".to_string()
            } else {
                sampled.join(", ")
            }
        ))),
        None => Ok(sampled.first().cloned()),
    }
}
