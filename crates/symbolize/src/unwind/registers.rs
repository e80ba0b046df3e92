//! Stacks framehop cannot unwind, unwound again with every register
//! tracked. framehop turns a frame's call-frame information into a rule of
//! its own only where the CFA is rsp or rbp plus an offset; a CFA kept in
//! another register (rbx in ld.so's lazy-binding trampoline
//! `_dl_runtime_resolve_xsavec`, or in any code that realigns its stack
//! that way) it cannot follow, and it then unwinds the frame by the frame
//! pointer: a wrong caller, and everything above it lost, where the code
//! keeps no frame pointer. perf's unwinders (libdw, libunwind) track every
//! register, and a `--call-graph dwarf` sample holds them all. So the
//! stacks that meet such a frame are unwound here instead, with gimli, as
//! perf does.

use std::ops::Range;
use std::sync::Arc;

use gimli::{
    BaseAddresses, CfaRule, EhFrame, EhFrameHdr, EvaluationResult, LittleEndian, Register,
    RegisterRule, UnwindContext, UnwindSection, UnwindTableRow, Value, X86_64,
};

use crate::binary::{SectionBytes, UnwindSections};
use crate::dso::DsoId;

type Reader<'a> = gimli::EndianSlice<'a, LittleEndian>;

/// DWARF's x86_64 registers (0–15, and 16 the return address) as perf's
/// register dump numbers them (`perf_regs.h`): rax, rdx, rcx, rbx, rsi,
/// rdi, rbp, rsp, r8–r15, rip.
const PERF_NUMBER: [u32; 17] = [0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8];

/// Registers a call preserves (System V x86_64): rbx, rbp, r12–r15. The
/// others are unknown in a caller's frame unless its rules say.
const PRESERVED: [u16; 6] = [3, 6, 12, 13, 14, 15];

/// A sample's registers by DWARF number (`None`: unknown).
pub(super) type Registers = [Option<u64>; 17];

/// The registers of a perf register dump, by DWARF number.
pub(super) fn from_dump(reg: impl Fn(u32) -> Option<u64>) -> Registers {
    PERF_NUMBER.map(reg)
}

/// One mapping of a binary's call-frame information (`.eh_frame`).
pub(super) struct CfiModule {
    pub(super) dso: DsoId,
    /// Where it is mapped.
    pub(super) avma: Range<u64>,
    /// Runtime address minus linked address.
    bias: u64,
    text_svma: Option<u64>,
    eh_frame: SectionBytes,
    eh_frame_hdr: Option<SectionBytes>,
}

impl CfiModule {
    /// The module of a mapping at `avma` with load bias `bias`, if its
    /// binary has `.eh_frame`.
    pub(super) fn new(dso: DsoId, avma: Range<u64>, bias: u64, u: &UnwindSections) -> Option<Self> {
        Some(CfiModule {
            dso,
            avma,
            bias,
            text_svma: u.text.as_ref().map(|t| t.svma.start),
            eh_frame: u.eh_frame.clone()?,
            eh_frame_hdr: u.eh_frame_hdr.clone(),
        })
    }

    fn section(&self) -> EhFrame<Reader<'_>> {
        let mut s = EhFrame::new(&self.eh_frame.data, LittleEndian);
        s.set_address_size(8);
        s
    }

    fn bases(&self) -> BaseAddresses {
        let mut b = BaseAddresses::default().set_eh_frame(self.eh_frame.svma.start);
        if let Some(h) = &self.eh_frame_hdr {
            b = b.set_eh_frame_hdr(h.svma.start);
        }
        if let Some(t) = self.text_svma {
            b = b.set_text(t);
        }
        b
    }

    /// The binary's address (its linked address) of runtime address
    /// `avma`.
    pub(super) fn svma(&self, avma: u64) -> u64 {
        avma.wrapping_sub(self.bias)
    }

    /// Whether framehop cannot follow the CFA at runtime address `avma`:
    /// a register other than rsp or rbp plus an offset (what its
    /// conversion refuses, and its slow path, knowing only rsp, rbp and
    /// rip, cannot evaluate).
    pub(super) fn is_odd(&self, avma: u64, ctx: &mut UnwindContext<usize>) -> bool {
        self.row(avma, ctx).is_some_and(is_odd)
    }

    /// Where in `.eh_frame` the FDE that covers runtime address `avma`
    /// starts, through `.eh_frame_hdr`'s table (a binary search; `None`
    /// without one).
    pub(super) fn fde_offset(&self, avma: u64) -> Option<usize> {
        let hdr = self.eh_frame_hdr.as_ref()?;
        let bases = self.bases();
        let hdr = EhFrameHdr::new(&hdr.data, LittleEndian)
            .parse(&bases, 8)
            .ok()?;
        let table = hdr.table()?;
        let pointer = table.lookup(self.svma(avma), &bases).ok()?;
        Some(table.pointer_to_offset(pointer).ok()?.0)
    }

    /// The linked-address ranges of the rows of the FDE at `offset` whose
    /// CFA framehop cannot follow (as [`CfiModule::is_odd`]); most FDEs
    /// have none.
    pub(super) fn odd_rows(
        &self,
        offset: usize,
        ctx: &mut UnwindContext<usize>,
    ) -> Vec<Range<u64>> {
        let (section, bases) = (self.section(), self.bases());
        let Ok(fde) = section.fde_from_offset(
            &bases,
            gimli::EhFrameOffset(offset),
            EhFrame::cie_from_offset,
        ) else {
            return Vec::new();
        };
        let Ok(mut rows) = fde.rows(&section, &bases, ctx) else {
            return Vec::new();
        };
        let mut odd = Vec::new();
        while let Ok(Some(row)) = rows.next_row() {
            if is_odd(row) {
                odd.push(row.start_address()..row.end_address());
            }
        }
        odd
    }

    /// The unwind row of runtime address `avma`.
    fn row<'c>(
        &self,
        avma: u64,
        ctx: &'c mut UnwindContext<usize>,
    ) -> Option<&'c UnwindTableRow<usize>> {
        let svma = self.svma(avma);
        let (section, bases) = (self.section(), self.bases());
        // `.eh_frame_hdr`'s table (a binary search) where there is one,
        // `.eh_frame` read from its start otherwise.
        let hdr = match &self.eh_frame_hdr {
            Some(h) => Some(
                EhFrameHdr::new(&h.data, LittleEndian)
                    .parse(&bases, 8)
                    .ok()?,
            ),
            None => None,
        };
        let fde = match hdr.as_ref().and_then(|h| h.table()) {
            Some(table) => table.fde_for_address(&section, &bases, svma, EhFrame::cie_from_offset),
            None => section.fde_for_address(&bases, svma, EhFrame::cie_from_offset),
        }
        .ok()?;
        fde.unwind_info_for_address(&section, &bases, ctx, svma)
            .ok()
    }
}

/// Whether a row's CFA is a register other than rsp or rbp plus an offset.
fn is_odd(row: &UnwindTableRow<usize>) -> bool {
    matches!(row.cfa(), CfaRule::RegisterAndOffset { register, .. }
        if *register != X86_64::RSP && *register != X86_64::RBP)
}

/// Unwinds a stack from `regs` through `modules` (sorted by address),
/// appending each frame's address as framehop gives it (the ip, then each
/// return address minus 1) to `out`, up to `max` frames.
pub(super) fn unwind(
    modules: &[Arc<CfiModule>],
    mut regs: Registers,
    read_stack: &mut impl FnMut(u64) -> Result<u64, ()>,
    out: &mut Vec<u64>,
    max: usize,
) {
    let mut ctx = UnwindContext::new();
    let mut first = true;
    while out.len() < max {
        let Some(ip) = regs[16] else { break };
        let lookup = if first { ip } else { ip.wrapping_sub(1) };
        out.push(lookup);
        let Some(module) = find(modules, lookup) else {
            break;
        };
        let Some(row) = module.row(lookup, &mut ctx) else {
            break;
        };
        let Some(next) = step(module, row, &regs, read_stack) else {
            break;
        };
        // A caller's frame is above its callee's: a stack that does not
        // move up is done (or corrupt).
        if !first && next[7] <= regs[7] {
            break;
        }
        regs = next;
        first = false;
    }
}

/// The module mapped at `avma`.
pub(super) fn find(modules: &[Arc<CfiModule>], avma: u64) -> Option<&CfiModule> {
    let i = modules.partition_point(|m| m.avma.end <= avma);
    modules
        .get(i)
        .filter(|m| m.avma.contains(&avma))
        .map(|m| &**m)
}

/// The caller's registers from a frame's row; `None` at the stack's end
/// (no return address) or where a rule cannot be followed.
fn step(
    module: &CfiModule,
    row: &UnwindTableRow<usize>,
    regs: &Registers,
    read_stack: &mut impl FnMut(u64) -> Result<u64, ()>,
) -> Option<Registers> {
    let section = module.section();
    let cfa = match row.cfa() {
        CfaRule::RegisterAndOffset { register, offset } => {
            value(regs, *register)?.wrapping_add_signed(*offset)
        }
        CfaRule::Expression(e) => evaluate(&section, e, regs, None, read_stack)?,
    };
    let mut next: Registers = [None; 17];
    for &r in &PRESERVED {
        next[r as usize] = regs[r as usize];
    }
    for r in 0..17u16 {
        let Some(rule) = row.register(Register(r)) else {
            continue;
        };
        next[r as usize] = match rule {
            RegisterRule::Undefined => None,
            RegisterRule::SameValue => regs[r as usize],
            RegisterRule::Offset(n) => read_stack(cfa.wrapping_add_signed(n)).ok(),
            RegisterRule::ValOffset(n) => Some(cfa.wrapping_add_signed(n)),
            RegisterRule::Register(o) => value(regs, o),
            RegisterRule::Expression(e) => {
                let at = evaluate(&section, &e, regs, Some(cfa), read_stack)?;
                read_stack(at).ok()
            }
            RegisterRule::ValExpression(e) => evaluate(&section, &e, regs, Some(cfa), read_stack),
            RegisterRule::Constant(c) => Some(c),
            _ => None,
        };
    }
    // The return address is the caller's ip; its stack pointer is the CFA.
    next[16] = match row.register(X86_64::RA) {
        // No rule for it: the CIE's, [CFA - 8] on x86_64.
        None => read_stack(cfa.wrapping_sub(8)).ok(),
        Some(_) => next[16],
    };
    next[7] = Some(cfa);
    next[16].filter(|&ra| ra != 0)?;
    Some(next)
}

fn value(regs: &Registers, r: Register) -> Option<u64> {
    *regs.get(r.0 as usize)?
}

/// The value of a DWARF expression of the section (with `initial` pushed
/// first: the CFA, for a register's rule).
fn evaluate(
    section: &EhFrame<Reader<'_>>,
    e: &gimli::UnwindExpression<usize>,
    regs: &Registers,
    initial: Option<u64>,
    read_stack: &mut impl FnMut(u64) -> Result<u64, ()>,
) -> Option<u64> {
    let expression = e.get(section).ok()?;
    let encoding = gimli::Encoding {
        address_size: 8,
        format: gimli::Format::Dwarf32,
        version: 4,
    };
    let mut eval = expression.evaluation(encoding);
    if let Some(v) = initial {
        eval.set_initial_value(v);
    }
    let mut result = eval.evaluate().ok()?;
    // Each step needs a register or memory at most: a bound on a loop that
    // corrupt input could make long.
    for _ in 0..64 {
        result = match result {
            EvaluationResult::Complete => {
                let pieces = eval.result();
                return match pieces.first()?.location {
                    gimli::Location::Address { address } => Some(address),
                    _ => None,
                };
            }
            EvaluationResult::RequiresRegister { register, .. } => eval
                .resume_with_register(Value::Generic(value(regs, register)?))
                .ok()?,
            EvaluationResult::RequiresMemory { address, .. } => eval
                .resume_with_memory(Value::Generic(read_stack(address).ok()?))
                .ok()?,
            _ => return None,
        };
    }
    None
}
