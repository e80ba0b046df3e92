//! Each thread's previous callchain as location ids: the part of a
//! callchain equal to the thread's previous one (same addresses, looked up
//! the same way, in unchanged mappings) reuses its locations without
//! looking them up again. Deep stacks then cost only their changed frames.

use rustc_hash::FxHashMap;

use crate::tracker::{FrameLookup, Tracker};

/// Threads remembered at most; past it they are forgotten (a cache).
const RECENT_LIMIT: usize = 1 << 16;

/// The last callchain seen on one thread.
#[derive(Default)]
struct Recent {
    pid: u32,
    /// The process's and the kernel's mappings stamps: other mappings,
    /// other locations.
    stamps: (u64, u64),
    /// Root first: each frame's address and lookup flags...
    keys: Vec<(u64, u8)>,
    /// ...and its location id.
    locations: Vec<u32>,
}

/// Turns callchains into location ids, per thread reusing the root-side
/// frames shared with the thread's previous callchain.
#[derive(Default)]
pub struct RecentChains {
    /// By thread id.
    recent: FxHashMap<u32, Recent>,
}

impl RecentChains {
    /// The location ids of `lookups` (a sample's frames, leaf first, of
    /// process `pid`, thread `tid`), root first. A frame not shared with
    /// the thread's previous chain gets its id from `locate`; `flags` are
    /// the frame's lookup bits as `locate` uses them (frames with equal
    /// address and flags in the same mappings are the same location).
    #[inline]
    pub fn locate(
        &mut self,
        tracker: &Tracker,
        pid: u32,
        tid: u32,
        lookups: &[FrameLookup],
        flags: impl Fn(&FrameLookup) -> u8,
        locate: impl FnMut(&FrameLookup) -> u32,
    ) -> &[u32] {
        self.start(tracker, pid, tid, lookups, &flags)
            .finish(flags, locate)
    }

    /// [`RecentChains::locate`] in two steps: the chain's frames not shared
    /// with the thread's previous chain are known
    /// ([`ChainStart::unshared`]) before any is located.
    #[inline]
    pub fn start<'a, 'l>(
        &'a mut self,
        tracker: &Tracker,
        pid: u32,
        tid: u32,
        lookups: &'l [FrameLookup],
        flags: impl Fn(&FrameLookup) -> u8,
    ) -> ChainStart<'a, 'l> {
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
        let shared = r
            .keys
            .iter()
            .zip(lookups.iter().rev())
            .take_while(|(k, f)| **k == (f.addr, flags(f)))
            .count();
        r.keys.truncate(shared);
        r.locations.truncate(shared);
        ChainStart {
            recent: r,
            unshared: lookups.get(..lookups.len() - shared).unwrap_or_default(),
        }
    }
}

/// A callchain whose frames shared with its thread's previous chain are
/// known, the others not yet located.
pub struct ChainStart<'a, 'l> {
    recent: &'a mut Recent,
    /// Leaf first.
    unshared: &'l [FrameLookup],
}

impl<'a> ChainStart<'a, '_> {
    /// The frames to locate, leaf first (to prefetch what locating them
    /// will read).
    pub fn unshared(&self) -> &[FrameLookup] {
        self.unshared
    }

    /// The chain's location ids, root first: those shared with the
    /// previous chain, then `locate` of each unshared frame.
    #[inline]
    pub fn finish(
        self,
        flags: impl Fn(&FrameLookup) -> u8,
        mut locate: impl FnMut(&FrameLookup) -> u32,
    ) -> &'a [u32] {
        let r = self.recent;
        for f in self.unshared.iter().rev() {
            r.keys.push((f.addr, flags(f)));
            r.locations.push(locate(f));
        }
        &r.locations
    }
}
