//! How every command treats what a capture's read had to say: each
//! warning on stderr, and what could not be read said once, after which
//! the command uses what could be read and exits 0; with `--strict`, what
//! could not be read is the command's error instead (exit 1, once its
//! output is written).

use perfq_stream::Notes;

/// Whether a damaged capture fails the command.
#[derive(Clone, Copy, Debug, Default)]
pub struct Policy {
    /// Fail it.
    pub strict: bool,
}

impl Policy {
    /// Says the notes of `input` (a file's path, an archive member); gives
    /// the problem that fails the command, if any.
    pub fn say(self, input: &str, notes: &Notes) -> Option<String> {
        for w in &notes.warnings {
            crate::say::warning(format_args!("{input}: {w}"));
        }
        self.damage(input, notes.damage.as_deref())
    }

    /// Says what could not be read of `input`, if anything; gives the
    /// problem that fails the command, if any.
    pub fn damage(self, input: &str, damage: Option<&str>) -> Option<String> {
        let damage = damage?;
        if self.strict {
            return Some(format!("{input}: {damage}"));
        }
        crate::say::warning(format_args!("{input}: {damage}"));
        None
    }
}
