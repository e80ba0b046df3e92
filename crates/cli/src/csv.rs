//! CSV field quoting shared by the commands' CSV output.

use std::borrow::Cow;

/// `s` as one CSV field: quoted (with doubled quotes) when it holds a comma
/// or a quote.
pub fn field(s: &str) -> Cow<'_, str> {
    if s.contains([',', '"', '\n']) {
        Cow::Owned(format!("\"{}\"", s.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(s)
    }
}
