//! What the user may record: `kernel.perf_event_paranoid` against the
//! process's effective uid and capabilities (root, CAP_PERFMON or
//! CAP_SYS_ADMIN bypass it), read from `/proc/self/status` under the
//! machine's root so that tests can give any user.

use std::path::Path;

/// CAP_SYS_ADMIN's bit.
const CAP_SYS_ADMIN: u32 = 21;
/// CAP_PERFMON's bit (Linux 5.8 and later).
const CAP_PERFMON: u32 = 38;

/// The recording user's standing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Privilege {
    /// The effective uid.
    pub euid: Option<u32>,
    /// Whether it holds CAP_PERFMON or CAP_SYS_ADMIN.
    pub perfmon: bool,
}

impl Privilege {
    /// Read from `<root>/proc/self/status`.
    pub fn read(root: &Path) -> Privilege {
        let status = std::fs::read_to_string(root.join("proc/self/status")).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(str::trim)
        };
        let euid = field("Uid:")
            .and_then(|v| v.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok());
        let caps = field("CapEff:").and_then(|v| u64::from_str_radix(v, 16).ok());
        let perfmon =
            caps.is_some_and(|c| c & (1 << CAP_PERFMON) != 0 || c & (1 << CAP_SYS_ADMIN) != 0);
        Privilege { euid, perfmon }
    }

    /// Whether perf_event_paranoid does not apply.
    pub fn bypasses_paranoid(&self) -> bool {
        self.euid == Some(0) || self.perfmon
    }
}
