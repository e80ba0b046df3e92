//! Dense ids for keys: each distinct key gets the next number, in order
//! of first appearance, and the keys are kept once, in a `Vec` indexed by
//! id.
//!
//! perfq numbers locations, stack keys and row keys this way. Numbering
//! goes through one trait, [`Numbering`], with two kinds of numberer:
//! - [`Interner`] gives each key its id on the spot;
//! - [`TicketBook`] gives each key a ticket (the order it came in) and
//!   hands the keys over in batches to a [`TicketIds`] on another thread,
//!   which interns them in ticket order and so gives each ticket the id
//!   an [`Interner`] would have given its key. A thread that is the
//!   bottleneck of a read hands over the probing of a large table that
//!   way.
//!
//! A reading thread hands keys to a worker that way through a
//! [`handoff`].
//!
//! Both rest on [`IdTable`], a hash table of ids alone, as does
//! [`TextIds`], which numbers texts looked up by `&str` and stores each
//! once, end to end.
//!
//! The threads that number keys, and those that do other work at once,
//! are joined by [`beside`], which re-raises a panic of either; what a
//! step is done with is freed by [`drop_beside`].

#![deny(missing_docs)]

mod beside;
pub mod handoff;
mod interner;
pub mod interrupt;
mod table;
mod texts;
mod tickets;

pub use beside::{beside, drop_beside};
pub use interner::{Interner, Numbering};
pub use table::{prefetch_line, IdTable, KeyHash};
pub use texts::{span, TextIds};
pub use tickets::{Numbered, TicketBook, TicketIds};
