//! What a command says beside its answer: warnings (a damaged capture,
//! a symbol source that could not be read) and notes (which event was
//! chosen). The command line prints them on standard error as
//! `perfq: warning: …` and `perfq: note: …`; a caller of [`crate::answer`]
//! gets them back with the answer instead (the Python module raises each
//! warning as a Python warning).

use std::cell::RefCell;
use std::fmt::Display;

/// What kind of remark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Something is missing or odd in what was read.
    Warning,
    /// A choice made for the user, and how to make another.
    Note,
}

/// One remark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Said {
    /// Warning or note.
    pub kind: Kind,
    /// The text, without the `perfq: warning: ` prefix.
    pub text: String,
}

thread_local! {
    /// The remarks of the answer this thread computes, when collected.
    static HELD: RefCell<Option<Vec<Said>>> = const { RefCell::new(None) };
}

/// Says a warning.
pub fn warning(text: impl Display) {
    say(Kind::Warning, text.to_string());
}

/// Says a note.
pub fn note(text: impl Display) {
    say(Kind::Note, text.to_string());
}

fn say(kind: Kind, text: String) {
    let held = HELD.with(|h| match h.borrow_mut().as_mut() {
        Some(list) => {
            list.push(Said { kind, text });
            None
        }
        None => Some(Said { kind, text }),
    });
    if let Some(Said { kind, text }) = held {
        let kind = match kind {
            Kind::Warning => "warning",
            Kind::Note => "note",
        };
        eprintln!("perfq: {kind}: {text}");
    }
}

/// Runs `f`, keeping what it says on this thread instead of printing it.
pub(crate) fn collecting<T>(f: impl FnOnce() -> T) -> (T, Vec<Said>) {
    let outer = HELD.with(|h| h.borrow_mut().replace(Vec::new()));
    let answer = f();
    let said = HELD.with(|h| std::mem::replace(&mut *h.borrow_mut(), outer));
    (answer, said.unwrap_or_default())
}
