//! A sample's frames numbered as locations: the one place where a stack,
//! the sample's own address and its branch endpoints are located and
//! given numbers, and where the leaf rule lives.
//!
//! A sink says what it wants located ([`Locate`]) and lends the numbering
//! it keeps (an interner, tickets for another thread); the stream's
//! [`Locating`] locates each sample the sink takes and hands it over as
//! [`Located`]. The order in which a sample's keys are numbered is part of
//! each sink's output (ids in order of first appearance), so it is fixed
//! here, per [`Own`] mode, once.

use std::marker::PhantomData;

use perfq_ids::Numbering;
use perfq_symbolize::{
    FrameLookup, Location, LocationCache, ProcessSpace, RecentChains, Symbolizer,
};

use crate::SampleView;

/// What a numbered location is to its sample, for sinks whose keys tell
/// them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The sample's own address (its ip, in its cpu mode's space).
    Own,
    /// A frame of its stack; `expand` when the frame's inlining levels
    /// count (a DWARF-unwound user frame, with [`Locate::expand_unwound`]).
    Stack {
        /// Whether the frame's inlining levels count.
        expand: bool,
    },
    /// A branch endpoint.
    Branch,
}

/// What a sink numbers: a location, or a location with what else tells
/// two of its numbers apart.
pub trait LocationKey: Copy {
    /// The key of `location`, found for `frame` in the sample as `role`.
    fn of(location: Location, frame: &FrameLookup, role: Role) -> Self;
}

impl LocationKey for Location {
    fn of(location: Location, _: &FrameLookup, _: Role) -> Self {
        location
    }
}

/// Where a sample's own address is numbered, if at all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Own {
    /// Not numbered.
    #[default]
    Not,
    /// Before the stack, always located on its own.
    First,
    /// After the stack (which [`Locate::stack`] must ask for): the stack
    /// leaf's number when the stack's first frame is the ip looked up the
    /// same way, else a number of its own. Self time goes to the sample's
    /// own address, as perf reports it; it is the stack's leaf except when
    /// a callchain does not start at the ip (seen on LBR call graphs).
    AfterStack,
}

/// What a sink has located of each sample it takes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Locate {
    /// The stack: the recorded callchain, or the user stack unwound with
    /// DWARF when the sink lends a symbolizer.
    pub stack: bool,
    /// The sample's own address.
    pub own: Own,
    /// Branch endpoints, as exact addresses (in no process's space when
    /// the sample has no pid).
    pub branches: bool,
    /// A frame met before in the same mappings keeps the number it was
    /// given (a [`LocationCache`] in front of the numbering); without it,
    /// every frame not shared with its thread's previous stack is numbered
    /// anew, which a sink whose numbers are positions (a tree of tickets)
    /// needs.
    pub cache: bool,
    /// DWARF-unwound user frames count their inlining levels
    /// ([`Role::Stack`]'s `expand`), and share a stack only with frames
    /// that do too.
    pub expand_unwound: bool,
}

/// In a frame's lookup flags (beside [`FrameLookup::lookup_bits`]): the
/// frame counts each of its inlining levels.
const EXPAND: u8 = 1 << 3;

/// The numbers of one sample, as [`Located`] shows them.
#[derive(Debug, Default)]
struct Numbers {
    stack: Vec<u32>,
    new_in_stack: usize,
    own: Option<u32>,
    branches: Vec<(u32, u32)>,
    unwound: bool,
    expanded: bool,
    chain_tid: u32,
}

/// Locates and numbers samples' frames for one sink over one read: keeps
/// each thread's previous stack (its shared root-side frames keep their
/// numbers) and, with [`Locate::cache`], the numbers of frames met before.
#[derive(Default)]
pub struct Locating {
    locate: Locate,
    cache: LocationCache,
    chains: RecentChains,
    numbers: Numbers,
}

impl Locating {
    /// Locating what `locate` asks for.
    pub fn new(locate: Locate) -> Self {
        Locating {
            locate,
            ..Locating::default()
        }
    }

    /// Forgets every number given so far (the sink's numbering started
    /// again from scratch).
    pub fn restart(&mut self) {
        self.cache = LocationCache::new();
        self.chains = RecentChains::default();
    }

    /// Clears the last sample's numbers: a sample taken as it is.
    pub(crate) fn clear(&mut self) {
        let n = &mut self.numbers;
        n.stack.clear();
        n.branches.clear();
        n.new_in_stack = 0;
        n.own = None;
        n.unwound = false;
        n.expanded = false;
        n.chain_tid = 0;
    }

    /// Locates and numbers what [`Locate`] asks for of `view`, in a fixed
    /// order: the own address when [`Own::First`], the stack, the own
    /// address when [`Own::AfterStack`], the branch endpoints.
    pub(crate) fn locate<K: LocationKey>(
        &mut self,
        view: &mut SampleView<'_, '_>,
        symbolizer: Option<&Symbolizer>,
        numbering: &mut impl Numbering<K>,
    ) {
        self.clear();
        let (pid, tid) = (view.sample().pid, view.sample().tid);
        if let (Own::First, Some(pid), Some(f)) = (self.locate.own, pid, view.leaf()) {
            let space = view.tracker().process_space(pid);
            let n = number_frame(None, space, &f, Role::Own, numbering);
            self.numbers.own = Some(n);
        }
        if self.locate.stack {
            self.numbers.unwound = view.locate_frames(symbolizer);
            if let Some(pid) = pid {
                self.numbers.chain_tid = tid.unwrap_or(pid);
                self.stack(view, pid, numbering);
            }
        }
        if let (Own::AfterStack, Some(pid), Some(f)) = (self.locate.own, pid, view.leaf()) {
            let same = view
                .frames()
                .first()
                .is_some_and(|l| l.addr == f.addr && l.lookup == f.lookup && l.kernel == f.kernel);
            self.numbers.own = match self.numbers.stack.last() {
                Some(&leaf) if same => Some(leaf),
                _ => Some(number_frame(
                    self.cache(),
                    view.tracker().process_space(pid),
                    &f,
                    Role::Own,
                    numbering,
                )),
            };
        }
        if self.locate.branches {
            self.branches(view, numbering);
        }
    }

    /// The stack's numbers, root first: those shared with the thread's
    /// previous stack, then the others', located now.
    fn stack<K: LocationKey>(
        &mut self,
        view: &SampleView<'_, '_>,
        pid: u32,
        numbering: &mut impl Numbering<K>,
    ) {
        let (tracker, frames) = (view.tracker(), view.frames());
        let expand_user = self.locate.expand_unwound && self.numbers.unwound;
        let expand_of = |f: &FrameLookup| expand_user && f.kernel == Some(false);
        let flags = |f: &FrameLookup| f.lookup_bits() | if expand_of(f) { EXPAND } else { 0 };
        let chain = self
            .chains
            .start(tracker, pid, self.numbers.chain_tid, frames, flags);
        let mut cache = self.locate.cache.then_some(&mut self.cache);
        if let Some(cache) = &cache {
            // Only the frames not shared with the thread's previous
            // stack are looked up: deep stacks mostly share theirs.
            cache.prefetch(pid, chain.unshared());
        }
        let space = tracker.process_space(pid);
        let (mut new, mut expanded) = (0, false);
        let numbers = chain.finish(flags, |f| {
            new += 1;
            let expand = expand_of(f);
            expanded |= expand;
            let role = Role::Stack { expand };
            number_frame(cache.as_deref_mut(), space, f, role, numbering)
        });
        self.numbers.stack.extend_from_slice(numbers);
        self.numbers.new_in_stack = new;
        self.numbers.expanded = expanded;
    }

    /// The branch endpoints' numbers, `from` then `to` of each entry.
    fn branches<K: LocationKey>(
        &mut self,
        view: &SampleView<'_, '_>,
        numbering: &mut impl Numbering<K>,
    ) {
        let s = view.sample();
        let Some(b) = &s.branch_stack else {
            return;
        };
        let space = view.tracker().process_space(s.pid.unwrap_or(u32::MAX));
        for e in b.entries() {
            let [from, to] = [e.from, e.to].map(|addr| {
                // Branch endpoints are exact addresses, not return
                // addresses.
                let f = FrameLookup {
                    addr,
                    lookup: addr,
                    is_return: false,
                    kernel: None,
                    context: None,
                };
                number_frame(self.cache(), space, &f, Role::Branch, numbering)
            });
            self.numbers.branches.push((from, to));
        }
    }

    /// The cache, when [`Locate::cache`] asks for it.
    fn cache(&mut self) -> Option<&mut LocationCache> {
        self.locate.cache.then_some(&mut self.cache)
    }

    /// `view` with the numbers found for it.
    pub(crate) fn located<'a, 's, 'r>(
        &'a self,
        view: &'a SampleView<'s, 'r>,
    ) -> Located<'a, 's, 'r> {
        Located {
            view,
            numbers: &self.numbers,
        }
    }
}

/// The number of frame `f` of the process `space` is of, as `role`: the
/// one `cache` remembers for it (a frame met before in the same
/// mappings), else that of its location, found now.
fn number_frame<K: LocationKey>(
    cache: Option<&mut LocationCache>,
    space: ProcessSpace<'_>,
    f: &FrameLookup,
    role: Role,
    numbering: &mut impl Numbering<K>,
) -> u32 {
    match cache {
        Some(cache) => {
            let mut keyed = Keyed {
                numbering,
                frame: f,
                role,
                key: PhantomData,
            };
            cache.number(space, f, &mut keyed)
        }
        None => numbering.number(K::of(space.locate(f.lookup, f.kernel), f, role)),
    }
}

/// A sink's numbering of keys, seen by the [`LocationCache`] as a
/// numbering of locations.
struct Keyed<'a, K, N> {
    numbering: &'a mut N,
    frame: &'a FrameLookup,
    role: Role,
    key: PhantomData<fn() -> K>,
}

impl<K: LocationKey, N: Numbering<K>> Numbering<Location> for Keyed<'_, K, N> {
    #[inline]
    fn number(&mut self, l: Location) -> u32 {
        self.numbering.number(K::of(l, self.frame, self.role))
    }
}

/// A sample with its frames numbered as its sink asked
/// ([`Locate`]); a sample taken as it is has none.
pub struct Located<'a, 's, 'r> {
    view: &'a SampleView<'s, 'r>,
    numbers: &'a Numbers,
}

impl<'a, 's, 'r> Located<'a, 's, 'r> {
    /// The sample.
    pub fn view(&self) -> &'a SampleView<'s, 'r> {
        self.view
    }

    /// The stack's numbers, root first (empty without a pid).
    pub fn stack(&self) -> &'a [u32] {
        &self.numbers.stack
    }

    /// How many of [`Located::stack`]'s numbers, at its leaf end, were
    /// given for this sample (the others are shared with the thread's
    /// previous stack).
    pub fn new_in_stack(&self) -> usize {
        self.numbers.new_in_stack
    }

    /// Whether a frame numbered for this sample counts its inlining
    /// levels.
    pub fn expanded(&self) -> bool {
        self.numbers.expanded
    }

    /// The number of the sample's own address.
    pub fn own(&self) -> Option<u32> {
        self.numbers.own
    }

    /// The branch endpoints' numbers, (from, to), newest branch first.
    pub fn branches(&self) -> &'a [(u32, u32)] {
        &self.numbers.branches
    }

    /// Whether the user stack was unwound with DWARF.
    pub fn unwound(&self) -> bool {
        self.numbers.unwound
    }

    /// The thread whose stack this is (the pid when the sample has no
    /// tid; 0 without pid or without a stack located).
    pub fn chain_tid(&self) -> u32 {
        self.numbers.chain_tid
    }
}

/// The numbering of a sink that numbers nothing ([`Locate::default`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Unnumbered;

impl Numbering<Location> for Unnumbered {
    fn number(&mut self, _: Location) -> u32 {
        unreachable!("a sink that locates nothing numbers nothing")
    }
}
