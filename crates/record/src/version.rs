//! Kernel and perf versions as the machine spells them: `6.1.0-18-amd64`
//! (`/proc/sys/kernel/osrelease`), `perf version 6.12.12` or
//! `perf version 6.8.12-dirty` (`perf --version`).

use std::fmt;

/// A version's first three numbers; missing ones are 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Version {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Version {
        Version {
            major,
            minor,
            patch,
        }
    }

    /// The first `N.N[.N]` in `text` (after any words before it): `None`
    /// when there is none.
    pub fn find(text: &str) -> Option<Version> {
        text.split_whitespace().find_map(Version::parse)
    }

    /// `6.1.0-18-amd64`, `6.12`, `v6.13-rc2`: the numbers before anything
    /// else; at least a major and a minor.
    pub fn parse(word: &str) -> Option<Version> {
        let word = word.strip_prefix('v').unwrap_or(word);
        let end = word
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(word.len());
        let mut nums = word[..end].split('.').map(str::parse::<u32>);
        let major = nums.next()?.ok()?;
        let minor = nums.next()?.ok()?;
        let patch = nums.next().and_then(Result::ok).unwrap_or(0);
        Some(Version::new(major, minor, patch))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_as_machines_print_them() {
        let v = |a, b, c| Some(Version::new(a, b, c));
        assert_eq!(Version::find("perf version 6.12.12"), v(6, 12, 12));
        assert_eq!(Version::find("perf version 6.8.12-dirty"), v(6, 8, 12));
        assert_eq!(Version::find("6.1.0-18-amd64"), v(6, 1, 0));
        assert_eq!(Version::find("v6.13-rc2"), v(6, 13, 0));
        assert_eq!(Version::find("perf version unknown"), None);
        assert!(Version::new(6, 12, 99) < Version::new(6, 13, 0));
    }
}
