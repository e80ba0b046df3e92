//! Following a capture's sideband in time order to know, at each sample,
//! which DSO every address belongs to.

use rustc_hash::FxHashMap;

use perfq_reader::{
    misc, CallchainContext, Capture, MmapFileId, RecordData, Sample, PERF_CONTEXT_MAX,
};

use crate::dso::{kind_of, Dso, DsoId, DsoKind, Dsos};
use crate::maps::{AddressSpaces, Mapping, Maps};

/// Where an address lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Location {
    /// In a mapped DSO, at this file offset (perf's `map_ip`).
    Dso {
        /// The DSO.
        dso: DsoId,
        /// File offset of the address.
        offset: u64,
    },
    /// A kernel address (resolved through kallsyms).
    Kernel {
        /// The address.
        addr: u64,
        /// The kernel module mapping containing it, if one does: without
        /// kernel symbols the module still names the frame, as in perf.
        module: Option<DsoId>,
    },
    /// No mapping contains it.
    Unmapped {
        /// The address.
        addr: u64,
    },
}

/// The kernel's address space in [`space_of`]'s answers.
pub(crate) const KERNEL_SPACE: u32 = u32::MAX;

/// The address space frame `f` of process `pid` is looked up in: the pid,
/// or [`KERNEL_SPACE`], which every process shares. Decided as
/// [`Tracker::locate`] decides it; with the address and lookup bits, and
/// that space's mappings stamp, a cache key for the frame's location.
pub(crate) fn space_of(pid: u32, f: &FrameLookup) -> u32 {
    if in_kernel_space(f.lookup, f.kernel) {
        KERNEL_SPACE
    } else {
        pid
    }
}

/// Lowest kernel address on the 64-bit architectures perf supports; used
/// when neither the cpu mode nor a callchain marker says.
const KERNEL_START: u64 = 0xffff_0000_0000_0000;

/// Whether `addr` is looked up in the kernel's space: as `kernel` says
/// (from the cpu mode or callchain context), else by which half it lies in.
pub(crate) fn in_kernel_space(addr: u64, kernel: Option<bool>) -> bool {
    kernel.unwrap_or(addr >= KERNEL_START)
}

/// Address spaces and DSOs as of the last record observed.
#[derive(Debug, Default)]
pub struct Tracker {
    spaces: AddressSpaces,
    dsos: Dsos,
    /// Build ids from the BUILD_ID feature, by path.
    feature_build_ids: FxHashMap<String, Vec<u8>>,
    /// The kernel's reference symbol as recorded: perf names the kernel
    /// mapping `[kernel.kallsyms]_text` and puts the address `_text` had
    /// (after KASLR) in its pgoff.
    kernel_ref: Option<(String, u64)>,
}

impl Tracker {
    /// A tracker for `capture`, knowing the build ids its header recorded.
    pub fn new(capture: &Capture) -> Tracker {
        let mut feature_build_ids = FxHashMap::default();
        for b in &capture.meta().build_ids {
            feature_build_ids
                .entry(b.filename.clone())
                .or_insert_with(|| b.build_id.clone());
        }
        Tracker {
            feature_build_ids,
            ..Tracker::default()
        }
    }

    /// The address spaces as of the last record observed.
    pub fn spaces(&self) -> &AddressSpaces {
        &self.spaces
    }

    /// The DSOs seen so far.
    pub fn dsos(&self) -> &Dsos {
        &self.dsos
    }

    /// The kernel's build id as the capture recorded it.
    pub fn kernel_build_id(&self) -> Option<&[u8]> {
        self.feature_build_ids
            .get("[kernel.kallsyms]")
            .map(Vec::as_slice)
    }

    /// The kernel's reference symbol (`_text` or `_stext`) and the address
    /// it had when recorded, if the capture says.
    pub fn kernel_ref(&self) -> Option<(&str, u64)> {
        self.kernel_ref.as_ref().map(|(n, a)| (n.as_str(), *a))
    }

    /// What resolving locations needs of the tracker, as of now.
    pub fn at(&self) -> TrackerAt {
        TrackerAt {
            dsos: self.dsos.clone(),
            kernel_ref: self.kernel_ref.clone(),
        }
    }

    /// Updates the address spaces with a sideband record.
    pub fn observe(&mut self, data: &RecordData<'_>) {
        match data {
            RecordData::Mmap(m) => {
                if m.is_data {
                    return;
                }
                let build_id = match m.file_id {
                    Some(MmapFileId::BuildId(b)) => Some(b.to_vec()),
                    _ => self.feature_build_ids.get(&m.filename).cloned(),
                };
                let kernel = m.pid == u32::MAX;
                if let Some(name) = m
                    .filename
                    .strip_prefix("[kernel.kallsyms]")
                    .filter(|n| kernel && !n.is_empty())
                {
                    self.kernel_ref = Some((name.to_string(), m.pgoff));
                }
                let mut kind = kind_of(&m.filename, kernel);
                let mut path = m.filename.clone();
                // Executable anonymous memory is JIT code: its symbols, if
                // any, are in /tmp/perf-PID.map, which perf uses as the DSO.
                let exec = m.prot.is_none_or(|p| p & 4 != 0);
                if kind == DsoKind::Anon && exec && !kernel {
                    path = format!("/tmp/perf-{}.map", m.pid);
                    kind = DsoKind::Jit;
                }
                let dso = self.dsos.intern(Dso {
                    path,
                    build_id,
                    kind,
                });
                // JIT addresses are their own offsets (perf's identity map).
                let pgoff = if kind == DsoKind::Jit {
                    m.addr
                } else {
                    m.pgoff
                };
                let end = m.addr.saturating_add(m.len);
                self.spaces.mmap(
                    m.pid,
                    Mapping {
                        start: m.addr,
                        end,
                        pgoff,
                        dso,
                    },
                );
            }
            RecordData::Fork(f) => self.spaces.fork(f.pid, f.ppid),
            RecordData::Comm(c) if c.is_exec => self.spaces.exec(c.pid),
            _ => {}
        }
    }

    /// Where `addr` of process `pid` lies; `kernel` says which address space
    /// (from the cpu mode or callchain context), `None` to guess by address.
    pub fn locate(&self, pid: u32, addr: u64, kernel: Option<bool>) -> Location {
        self.process_space(pid).locate(addr, kernel)
    }

    /// Process `pid`'s view of the address spaces as they are now, for
    /// locating many of its addresses (a sample's frames).
    pub fn process_space(&self, pid: u32) -> ProcessSpace<'_> {
        ProcessSpace {
            tracker: self,
            pid,
            user: self.spaces.user_maps(pid),
        }
    }
}

/// The address spaces as one process sees them: its own mappings, found
/// once for all of a sample's frames rather than once a frame, and the
/// kernel's.
#[derive(Clone, Copy, Debug)]
pub struct ProcessSpace<'t> {
    tracker: &'t Tracker,
    pid: u32,
    user: Option<&'t Maps>,
}

impl<'t> ProcessSpace<'t> {
    /// The tracker it is a view of.
    pub fn tracker(&self) -> &'t Tracker {
        self.tracker
    }

    /// The process.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Where `addr` lies, as [`Tracker::locate`] says.
    #[inline]
    pub fn locate(&self, addr: u64, kernel: Option<bool>) -> Location {
        if in_kernel_space(addr, kernel) {
            // Kernel and module text resolve through kallsyms, but only
            // inside a kernel mapping: like perf, an address no kernel or
            // module mapping covers (or a capture without kernel mappings)
            // is [unknown].
            let Some(m) = self.tracker.spaces.find_kernel(addr) else {
                return Location::Unmapped { addr };
            };
            let kind = self.tracker.dsos.get(m.dso).kind;
            let module = (kind == DsoKind::KernelModule).then_some(m.dso);
            return Location::Kernel { addr, module };
        }
        match self.user.and_then(|maps| maps.find(addr)) {
            Some(m) => {
                let dso = self.tracker.dsos.get(m.dso);
                if matches!(dso.kind, DsoKind::Kernel | DsoKind::KernelModule) {
                    Location::Kernel { addr, module: None }
                } else {
                    Location::Dso {
                        dso: m.dso,
                        offset: m.file_offset(addr),
                    }
                }
            }
            None => Location::Unmapped { addr },
        }
    }
}

/// What resolving locations needs of a [`Tracker`] ([`Symbolizer::resolve_in`]'s
/// DSOs and kernel reference symbol), as of one moment: for locations
/// resolved on another thread while the tracker goes on taking in records.
///
/// [`Symbolizer::resolve_in`]: crate::Symbolizer::resolve_in
#[derive(Clone, Debug)]
pub struct TrackerAt {
    dsos: Dsos,
    kernel_ref: Option<(String, u64)>,
}

impl TrackerAt {
    /// The DSOs seen until then.
    pub fn dsos(&self) -> &Dsos {
        &self.dsos
    }

    /// [`Tracker::kernel_ref`], then.
    pub fn kernel_ref(&self) -> Option<(&str, u64)> {
        self.kernel_ref.as_ref().map(|(n, a)| (n.as_str(), *a))
    }
}

/// How one address of a sample is looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameLookup {
    /// The address as recorded.
    pub addr: u64,
    /// The address to look up: a return address minus 1 (the call).
    pub lookup: u64,
    /// Whether it is a return address.
    pub is_return: bool,
    /// Kernel (`Some(true)`) or user (`Some(false)`) address space, from the
    /// callchain context or the cpu mode.
    pub kernel: Option<bool>,
    /// The callchain context it came with.
    pub context: Option<CallchainContext>,
}

impl FrameLookup {
    /// How the address is looked up, as bits (return address, kernel, no
    /// space known): with the pid and address, a cache key for its location.
    pub fn lookup_bits(&self) -> u8 {
        u8::from(self.is_return)
            | (u8::from(self.kernel == Some(true)) << 1)
            | (u8::from(self.kernel.is_none()) << 2)
    }
}

/// The sample's own address (its ip), looked up in the space its cpu mode
/// names.
pub fn leaf_lookup(s: &Sample<'_>) -> Option<FrameLookup> {
    let ip = s.ip?;
    let kernel = matches!(s.cpu_mode(), misc::KERNEL | misc::GUEST_KERNEL);
    Some(FrameLookup {
        addr: ip,
        lookup: ip,
        is_return: false,
        kernel: Some(kernel),
        context: None,
    })
}

/// The sample's callchain as lookups, leaf first; the ip alone when there
/// is no callchain. See [`push_chain_lookups`].
pub fn chain_lookups(s: &Sample<'_>) -> impl Iterator<Item = FrameLookup> {
    let mut out = Vec::new();
    push_chain_lookups(s, &mut out);
    out.into_iter()
}

/// Appends the sample's callchain as lookups to `out`, leaf first; the ip
/// alone when there is no callchain. (A plain loop: this runs for every
/// frame of every sample.)
///
/// Return addresses point after their call, so they are looked up at pc - 1.
/// The first address of each context is an exact pc (the sample ip; the
/// user pc where the kernel was entered), and 0, which ends broken
/// frame-pointer chains, is no call: those are looked up as they are.
pub fn push_chain_lookups(s: &Sample<'_>, out: &mut Vec<FrameLookup>) {
    let kernel_mode = matches!(s.cpu_mode(), misc::KERNEL | misc::GUEST_KERNEL);
    let start = out.len();
    if let Some(c) = s.callchain {
        // The raw entries, markers told apart by one comparison, rather
        // than through `Callchain::frames`' adapters: those cost a call
        // per frame (millions on a system-wide capture, on the thread
        // every other step waits for).
        out.reserve(c.raw.len());
        let mut context = None;
        // The previous frame's context; `None` before the first frame.
        let mut prev: Option<Option<CallchainContext>> = None;
        for v in c.raw.iter() {
            if v >= PERF_CONTEXT_MAX {
                context = CallchainContext::from_marker(v);
                continue;
            }
            let first_in_chain = prev.is_none();
            let first_in_context = prev != Some(context);
            prev = Some(context);
            let is_return = !first_in_context && v != 0;
            let kernel = context
                .map(|c| matches!(c, CallchainContext::Kernel | CallchainContext::GuestKernel))
                .or(Some(kernel_mode && first_in_chain));
            out.push(FrameLookup {
                addr: v,
                lookup: if is_return { v - 1 } else { v },
                is_return,
                kernel,
                context,
            });
        }
    }
    if out.len() == start {
        out.extend(leaf_lookup(s));
    }
}

/// The lookups of a `--call-graph dwarf` sample whose user stack was
/// unwound into `unwound` (the user ip, then return addresses minus 1):
/// the kernel part of the recorded callchain, then the unwound frames, as
/// perf joins them.
pub fn unwound_lookups<'a>(
    s: &Sample<'a>,
    unwound: &'a [u64],
) -> impl Iterator<Item = FrameLookup> + 'a {
    let kernel = chain_lookups(s).filter(|f| f.kernel == Some(true) && f.context.is_some());
    let user = unwound.iter().map(|&a| FrameLookup {
        addr: a,
        lookup: a,
        is_return: false,
        kernel: Some(false),
        context: Some(CallchainContext::User),
    });
    kernel.chain(user)
}
