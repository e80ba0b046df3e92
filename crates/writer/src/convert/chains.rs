//! Each sample's frames as location ids. Per thread, the part of a
//! callchain equal to the thread's previous one (same addresses, looked up
//! the same way, in unchanged mappings) reuses its locations without
//! looking them up again.

use perfq_symbolize::{FrameLookup, LocationInterner, Tracker};
use rustc_hash::FxHashMap;

/// The last callchain seen on one thread.
#[derive(Default)]
struct Recent {
    pid: u32,
    /// The process's and the kernel's mappings stamps: other mappings,
    /// other locations.
    stamps: (u64, u64),
    /// Root first: each frame's address and lookup bits...
    keys: Vec<(u64, u8)>,
    /// ...and its location id.
    locations: Vec<u32>,
}

/// Threads remembered at most; past it they are forgotten (a cache).
const RECENT_LIMIT: usize = 1 << 16;

/// Turns callchains into location ids.
#[derive(Default)]
pub(crate) struct ChainLocations {
    /// By thread id.
    recent: FxHashMap<u32, Recent>,
}

impl ChainLocations {
    /// Appends the location ids of `lookups` (a sample's frames, leaf
    /// first, of process `pid`, thread `tid`) to `out`, root first.
    pub(crate) fn locate(
        &mut self,
        tracker: &Tracker,
        interner: &mut LocationInterner,
        pid: u32,
        tid: u32,
        lookups: &[FrameLookup],
        out: &mut Vec<u32>,
    ) {
        let spaces = tracker.spaces();
        let stamps = (spaces.stamp(pid), spaces.kernel_stamp());
        if self.recent.len() >= RECENT_LIMIT && !self.recent.contains_key(&tid) {
            self.recent.clear();
        }
        let r = self.recent.entry(tid).or_default();
        if r.pid != pid || r.stamps != stamps {
            *r = Recent {
                pid,
                stamps,
                ..Recent::default()
            };
        }
        // Equal addresses looked up the same way in the same mappings are
        // the same locations.
        let shared = r
            .keys
            .iter()
            .zip(lookups.iter().rev())
            .take_while(|(k, f)| **k == (f.addr, f.lookup_bits()))
            .count();
        r.keys.truncate(shared);
        r.locations.truncate(shared);
        for f in lookups.iter().rev().skip(shared) {
            r.keys.push((f.addr, f.lookup_bits()));
            r.locations.push(interner.intern(tracker, pid, f));
        }
        out.extend_from_slice(&r.locations);
    }
}
