//! Unwinding user stacks recorded with `--call-graph dwarf`: the sample's
//! user registers and stack bytes, walked with the binaries' call-frame
//! information (`.eh_frame`, `.debug_frame`) by framehop.
//!
//! Like perf's libunwind and libdw unwinders, every frame after the first
//! is reported as its return address minus 1 (the call instruction), so
//! that it names the calling function and line. A stack with a frame whose
//! CFA framehop cannot follow is unwound again with every register
//! tracked ([`registers`]).

mod registers;

use std::sync::Arc;

use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{ExplicitModuleSectionInfo, Module, Unwinder};
use rustc_hash::FxHashMap;

use perfq_reader::{Regs, Sample, StackUser};

use crate::binary::FileBytes;
use crate::dso::{DsoId, DsoKind};
use crate::symbolizer::Symbolizer;
use crate::tracker::{push_chain_lookups, unwound_lookups, FrameLookup, Tracker};
use registers::CfiModule;

/// perf's x86_64 register numbers (`perf_regs.h`) for the registers the
/// unwinder needs.
const X86_BP: u32 = 6;
const X86_SP: u32 = 7;
const X86_IP: u32 = 8;

/// Frames at most per stack, as perf's default `max_stack`.
const MAX_FRAMES: usize = 127;

/// Unwinds user stacks of x86_64 captures.
#[derive(Default)]
pub struct StackUnwinder {
    /// Whether the capture's architecture is one this unwinder reads.
    enabled: bool,
    unwound: Vec<u64>,
    modules: FxHashMap<(DsoId, u64, u64, u64), Option<Module<FileBytes>>>,
    cfi_modules: FxHashMap<(DsoId, u64, u64, u64), Option<Arc<CfiModule>>>,
    per_pid: FxHashMap<u32, PidUnwinder>,
    odd: OddAddresses,
    cache: Option<CacheX86_64>,
}

/// The addresses met so far whose frames framehop cannot follow (see
/// [`registers`]), remembered by address and by FDE.
#[derive(Default)]
struct OddAddresses {
    /// Whether framehop cannot follow a binary's address (by the DSO and
    /// its linked address: the same in every process that maps it).
    by_address: FxHashMap<(DsoId, u64), bool>,
    /// The odd rows of each FDE met (by the DSO and its offset in
    /// `.eh_frame`): a function's addresses share one.
    rows: FxHashMap<(DsoId, usize), Vec<std::ops::Range<u64>>>,
    context: Option<Box<gimli::UnwindContext<usize>>>,
}

impl OddAddresses {
    /// Whether framehop cannot follow any of the frame addresses `frames`
    /// of a process whose modules are `cfi`.
    fn any(&mut self, cfi: &[Arc<CfiModule>], frames: &[u64]) -> bool {
        let ctx = self
            .context
            .get_or_insert_with(|| Box::new(gimli::UnwindContext::new()));
        let (by_address, rows) = (&mut self.by_address, &mut self.rows);
        frames.iter().any(|&a| {
            let Some(m) = registers::find(cfi, a) else {
                return false;
            };
            let svma = m.svma(a);
            *by_address
                .entry((m.dso, svma))
                .or_insert_with(|| match m.fde_offset(a) {
                    Some(fde) => rows
                        .entry((m.dso, fde))
                        .or_insert_with(|| m.odd_rows(fde, ctx))
                        .iter()
                        .any(|r| r.contains(&svma)),
                    None => m.is_odd(a, ctx),
                })
        })
    }
}

/// A process's unwinder as of a generation of its mappings: framehop's,
/// and its modules' call-frame information for [`registers`] (sorted by
/// address).
struct PidUnwinder {
    generation: u64,
    framehop: UnwinderX86_64<FileBytes>,
    cfi: Vec<Arc<CfiModule>>,
}

/// The 8 bytes at address `addr` of a stack whose dump `data` starts at
/// `sp`.
fn stack_reader(data: &[u8], sp: u64) -> impl FnMut(u64) -> Result<u64, ()> + '_ {
    move |addr| {
        let off = usize::try_from(addr.checked_sub(sp).ok_or(())?).map_err(|_| ())?;
        let bytes = data.get(off..off.checked_add(8).ok_or(())?).ok_or(())?;
        Ok(u64::from_le_bytes(bytes.try_into().map_err(|_| ())?))
    }
}

/// framehop's walk of a stack from `ip` with `regs`: the frame addresses
/// appended to `out`, up to [`MAX_FRAMES`] in `out`.
fn framehop_frames(
    unwinder: &UnwinderX86_64<FileBytes>,
    ip: u64,
    regs: UnwindRegsX86_64,
    cache: &mut CacheX86_64,
    read_stack: &mut impl FnMut(u64) -> Result<u64, ()>,
    out: &mut Vec<u64>,
) {
    let mut frames = unwinder.iter_frames(ip, regs, cache, read_stack);
    while let Ok(Some(f)) = frames.next() {
        out.push(f.address_for_lookup());
        if out.len() >= MAX_FRAMES {
            break;
        }
    }
}

/// The value of register `reg` in a perf register dump.
fn reg(regs: &Regs<'_>, reg: u32) -> Option<u64> {
    if regs.mask & (1 << reg) == 0 {
        return None;
    }
    let index = (regs.mask & ((1u64 << reg) - 1)).count_ones() as usize;
    regs.values.get(index)
}

impl StackUnwinder {
    /// An unwinder for a capture of architecture `arch` (`uname -m`;
    /// `None` when the capture does not say). Only x86_64 stacks are
    /// unwound; for others [`StackUnwinder::sample_frames`] gives the
    /// recorded callchain.
    pub fn new(arch: Option<&str>) -> Self {
        StackUnwinder {
            enabled: arch.is_none_or(|a| a == "x86_64"),
            ..Self::default()
        }
    }

    /// The frames of a sample to look up, leaf first, into `out`: for a
    /// `--call-graph dwarf` sample the kernel callchain then the unwound
    /// user stack; otherwise the recorded callchain (or the ip alone).
    /// Returns whether the user stack was unwound (its frames are then the
    /// ones perf expands into inlined functions).
    pub fn sample_frames(
        &mut self,
        tracker: &Tracker,
        symbolizer: &Symbolizer,
        s: &Sample<'_>,
        out: &mut Vec<FrameLookup>,
    ) -> bool {
        out.clear();
        let mut unwound = std::mem::take(&mut self.unwound);
        unwound.clear();
        if let (true, Some(pid), Some(regs), Some(stack)) =
            (self.enabled, s.pid, &s.regs_user, &s.stack_user)
        {
            self.unwind(tracker, symbolizer, pid, regs, stack, &mut unwound);
        }
        let did = !unwound.is_empty();
        if did {
            out.extend(unwound_lookups(s, &unwound));
        } else {
            push_chain_lookups(s, out);
        }
        self.unwound = unwound;
        did
    }

    /// Unwinds the user stack of a sample of process `pid`, appending the
    /// frame addresses (the user ip, then each return address minus 1) to
    /// `out`. Returns false when the sample has no usable registers or stack.
    pub fn unwind(
        &mut self,
        tracker: &Tracker,
        symbolizer: &Symbolizer,
        pid: u32,
        regs: &Regs<'_>,
        stack: &StackUser<'_>,
        out: &mut Vec<u64>,
    ) -> bool {
        if regs.abi != 2 {
            return false;
        }
        let (Some(ip), Some(sp), Some(bp)) =
            (reg(regs, X86_IP), reg(regs, X86_SP), reg(regs, X86_BP))
        else {
            return false;
        };
        self.refresh(tracker, symbolizer, pid);
        let Some(PidUnwinder {
            framehop: unwinder,
            cfi,
            ..
        }) = self.per_pid.get(&pid)
        else {
            return false;
        };
        let mut read_stack = stack_reader(stack.valid(), sp);
        let cache = self.cache.get_or_insert_with(CacheX86_64::new);
        let start = out.len();
        let regs_at_ip = UnwindRegsX86_64::new(ip, sp, bp);
        framehop_frames(unwinder, ip, regs_at_ip, cache, &mut read_stack, out);
        // A frame framehop could not follow: its caller and everything
        // above came from the frame pointer, which such code does not
        // keep. The whole stack again, every register tracked.
        if self.odd.any(cfi, &out[start..]) {
            out.truncate(start);
            let regs = registers::from_dump(|r| reg(regs, r));
            registers::unwind(cfi, regs, &mut read_stack, out, MAX_FRAMES);
        }
        true
    }

    /// Builds the unwinder of process `pid` anew when its mappings have
    /// changed since it was built.
    fn refresh(&mut self, tracker: &Tracker, symbolizer: &Symbolizer, pid: u32) {
        let generation = tracker.spaces().generation();
        let stale = self
            .per_pid
            .get(&pid)
            .is_none_or(|u| u.generation != generation);
        if stale {
            let unwinder = self.build(tracker, symbolizer, pid, generation);
            self.per_pid.insert(pid, unwinder);
        }
    }

    fn build(
        &mut self,
        tracker: &Tracker,
        symbolizer: &Symbolizer,
        pid: u32,
        generation: u64,
    ) -> PidUnwinder {
        let mut unwinder = UnwinderX86_64::new();
        let mut cfi = Vec::new();
        let Some(maps) = tracker.spaces().user_maps(pid) else {
            return PidUnwinder {
                generation,
                framehop: unwinder,
                cfi,
            };
        };
        let dsos = tracker.dsos();
        for m in maps.iter() {
            if dsos.get(m.dso).kind != DsoKind::User {
                continue;
            }
            let key = (m.dso, m.start, m.end, m.pgoff);
            let module = self
                .modules
                .entry(key)
                .or_insert_with(|| {
                    let bin = symbolizer.binary(dsos, m.dso).ok()?;
                    let u = bin.unwind_sections();
                    let bias = bin.load_bias(m.start, m.pgoff);
                    let info = ExplicitModuleSectionInfo {
                        base_svma: u.base_svma,
                        text_svma: u.text.as_ref().map(|s| s.svma.clone()),
                        text: u.text.as_ref().map(|s| s.data.clone()),
                        eh_frame_svma: u.eh_frame.as_ref().map(|s| s.svma.clone()),
                        eh_frame: u.eh_frame.as_ref().map(|s| s.data.clone()),
                        eh_frame_hdr_svma: u.eh_frame_hdr.as_ref().map(|s| s.svma.clone()),
                        eh_frame_hdr: u.eh_frame_hdr.as_ref().map(|s| s.data.clone()),
                        debug_frame: u.debug_frame.as_ref().map(|s| s.data.clone()),
                        stubs_svma: None,
                        stub_helper_svma: None,
                        got_svma: None,
                        unwind_info: None,
                        text_segment_svma: None,
                        text_segment: None,
                    };
                    Some(Module::new(
                        dsos.get(m.dso).path.clone(),
                        m.start..m.end,
                        bias.wrapping_add(u.base_svma),
                        info,
                    ))
                })
                .clone();
            if let Some(module) = module {
                unwinder.add_module(module);
            }
            let c = self.cfi_modules.entry(key).or_insert_with(|| {
                let bin = symbolizer.binary(dsos, m.dso).ok()?;
                let bias = bin.load_bias(m.start, m.pgoff);
                CfiModule::new(m.dso, m.start..m.end, bias, bin.unwind_sections()).map(Arc::new)
            });
            if let Some(c) = c {
                cfi.push(c.clone());
            }
        }
        cfi.sort_unstable_by_key(|m| m.avma.start);
        PidUnwinder {
            generation,
            framehop: unwinder,
            cfi,
        }
    }
}
