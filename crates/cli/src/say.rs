//! What a command says beside its answer: warnings (a damaged capture,
//! a symbol source that could not be read) and notes (which event was
//! chosen). The command line prints them on standard error as
//! `perfq: warning: …` and `perfq: note: …`; a caller of [`crate::answer`]
//! gets them back with the answer instead (the Python module raises each
//! warning as a Python warning).

use std::cell::RefCell;
use std::fmt::Display;
use std::sync::mpsc::{channel, Receiver, Sender};

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

/// What a streamed answer says after it was returned: a read of the
/// capture on a thread of its own knows its warnings only when it ends.
/// The thread sends them before its last batch, so a reader that has seen
/// the end finds them here.
pub struct Later(Option<Receiver<Vec<Said>>>);

impl Later {
    /// An answer that says nothing after it is returned.
    pub fn nothing() -> Later {
        Later(None)
    }

    /// What was said and not taken yet.
    pub fn take(&mut self) -> Vec<Said> {
        self.0
            .as_ref()
            .and_then(|rx| rx.try_recv().ok())
            .unwrap_or_default()
    }
}

/// The end a thread says its remarks into ([`later`]).
pub(crate) struct Teller(Sender<Vec<Said>>);

impl Teller {
    /// Runs `f`, collecting what it says on this thread, and hands that
    /// to the answer's [`Later`].
    pub(crate) fn collecting<T>(self, f: impl FnOnce() -> T) -> T {
        let (answer, said) = collecting(f);
        // Nobody listens any more only if the answer was dropped.
        let _ = self.0.send(said);
        answer
    }
}

/// A [`Teller`] for a thread, and the [`Later`] that hears it.
pub(crate) fn later() -> (Teller, Later) {
    let (tx, rx) = channel();
    (Teller(tx), Later(Some(rx)))
}
