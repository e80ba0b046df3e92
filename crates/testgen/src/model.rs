//! The counting model: what each top-down event counts over an interval
//! of `cycles` with a given top-down mix, per CPU family.
//!
//! The counts are made so that the family's own formulas (perf's metric
//! JSON, pmu-tools, Arm's; `crates/topdown/sets/` names each) give the mix
//! back:
//! Intel PERF_METRICS through the kernel's 8-bit quantisation
//! `floor(slots * byte / 255)`, the others exactly up to integer rounding.

/// A top-down breakdown. Level 1 fractions sum to 1 (with `smt`, which
/// only AMD reports); each level-2 field is the share of its parent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mix {
    /// Retiring.
    pub retiring: f64,
    /// Bad speculation.
    pub bad_speculation: f64,
    /// Frontend bound.
    pub frontend: f64,
    /// Backend bound.
    pub backend: f64,
    /// SMT contention (AMD's fifth category; 0 elsewhere).
    pub smt: f64,
    /// Heavy operations (microcode on AMD) as a share of retiring.
    pub heavy: f64,
    /// Branch mispredicts as a share of bad speculation.
    pub mispredict: f64,
    /// Fetch latency as a share of frontend bound.
    pub fetch_latency: f64,
    /// Memory bound as a share of backend bound (resource bound on E-cores).
    pub memory: f64,
}

impl Mix {
    /// A level-1 mix (retiring, bad speculation, frontend, backend),
    /// normalised to sum to 1, with even level-2 splits.
    pub fn l1(retiring: f64, bad_speculation: f64, frontend: f64, backend: f64) -> Mix {
        Mix {
            retiring,
            bad_speculation,
            frontend,
            backend,
            smt: 0.0,
            heavy: 0.5,
            mispredict: 0.5,
            fetch_latency: 0.5,
            memory: 0.5,
        }
        .normalized()
    }

    /// The same mix with level-2 shares (heavy, mispredict, fetch latency,
    /// memory), each clamped to 0..=1.
    pub fn with_l2(mut self, heavy: f64, mispredict: f64, fetch_latency: f64, memory: f64) -> Mix {
        self.heavy = heavy.clamp(0.0, 1.0);
        self.mispredict = mispredict.clamp(0.0, 1.0);
        self.fetch_latency = fetch_latency.clamp(0.0, 1.0);
        self.memory = memory.clamp(0.0, 1.0);
        self
    }

    /// The same mix with an SMT contention share (the others shrink).
    pub fn with_smt(mut self, smt: f64) -> Mix {
        self.smt = smt.clamp(0.0, 1.0);
        self.normalized()
    }

    /// Negative fractions become 0 and level 1 is scaled to sum to 1 (all
    /// retiring if nothing is left).
    pub fn normalized(mut self) -> Mix {
        let f = [
            &mut self.retiring,
            &mut self.bad_speculation,
            &mut self.frontend,
            &mut self.backend,
            &mut self.smt,
        ];
        let mut sum = 0.0;
        for v in f {
            if !v.is_finite() || *v < 0.0 {
                *v = 0.0;
            }
            sum += *v;
        }
        if sum <= 0.0 {
            return Mix {
                retiring: 1.0,
                ..Mix::l1_raw()
            };
        }
        self.retiring /= sum;
        self.bad_speculation /= sum;
        self.frontend /= sum;
        self.backend /= sum;
        self.smt /= sum;
        self
    }

    fn l1_raw() -> Mix {
        Mix {
            retiring: 0.0,
            bad_speculation: 0.0,
            frontend: 0.0,
            backend: 0.0,
            smt: 0.0,
            heavy: 0.5,
            mispredict: 0.5,
            fetch_latency: 0.5,
            memory: 0.5,
        }
    }

    /// Level 1 without SMT, rescaled to 1: what a family without an SMT
    /// category sees.
    fn without_smt(&self) -> Mix {
        Mix { smt: 0.0, ..*self }.normalized()
    }
}

/// What an event counts, in the model's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// Unhalted core cycles (the sampler on every family).
    Cycles,
    /// Intel `TOPDOWN.SLOTS` (fixed counter 3): width × cycles.
    Slots,
    /// Intel PERF_METRICS byte `n` (0 retiring, 1 bad-spec, 2 fe-bound,
    /// 3 be-bound, 4 heavy-ops, 5 br-mispredict, 6 fetch-lat, 7 mem-bound),
    /// as the kernel reports it: `floor(slots * byte / 255)`.
    PerfMetric(u8),
    /// ICL `INT_MISC.UOP_DROPPING`: slots the frontend dropped; perf
    /// subtracts them from frontend bound.
    UopDropping,
    /// ICL `INT_MISC.CLEARS_COUNT`: perf adds 5 slots each to backend bound.
    ClearsCount,
    /// Slots the frontend left empty (SKL `IDQ_UOPS_NOT_DELIVERED.CORE`,
    /// AMD `no_ops_from_frontend`, Arm `STALL_SLOT_FRONTEND`, E-core
    /// `TOPDOWN_FE_BOUND.ALL`).
    FrontendSlots,
    /// Slots the backend stalled (AMD `backend_stalls`, Arm
    /// `STALL_SLOT_BACKEND`, E-core `TOPDOWN_BE_BOUND.ALL`).
    BackendSlots,
    /// Slots of retired operations (SKL `UOPS_RETIRED.RETIRE_SLOTS`, AMD
    /// `ex_ret_ops`, Arm `OP_RETIRED`, E-core `TOPDOWN_RETIRING.ALL`).
    RetiredSlots,
    /// AMD `de_src_op_disp.all`: ops dispatched (retired + bad speculation).
    DispatchedOps,
    /// AMD `smt_contention` slots.
    SmtSlots,
    /// SKL `UOPS_ISSUED.ANY`.
    IssuedUops,
    /// SKL `INT_MISC.RECOVERY_CYCLES`.
    RecoveryCycles,
    /// Cycles the frontend delivered nothing (SKL `..CYCLES_0_UOPS_DELIV.CORE`,
    /// AMD `no_ops_from_frontend` with cmask = width).
    FetchLatencyCycles,
    /// Retired mispredicted branches (SKL/AMD `BR_MISP_RETIRED`,
    /// `ex_ret_brn_misp`; Arm `BR_MIS_PRED`).
    BranchMisses,
    /// Machine clears (SKL `MACHINE_CLEARS.COUNT`) or AMD resyncs.
    MachineClears,
    /// AMD `ex_no_retire.not_complete` cycles.
    NotCompleteCycles,
    /// AMD `ex_no_retire.load_not_complete` cycles.
    LoadNotCompleteCycles,
    /// AMD `ex_ret_ucode_ops`.
    MicrocodeOps,
    /// Arm `STALL_SLOT`: frontend + backend stall slots.
    StallSlots,
    /// Arm `OP_SPEC`: speculatively executed operations.
    SpecOps,
    /// E-core `TOPDOWN_BAD_SPECULATION.ALL_P` (Crestmont, Skymont).
    BadSpeculationSlots,
    /// E-core `TOPDOWN_FE_BOUND.FRONTEND_LATENCY`.
    FetchLatencySlots,
    /// E-core `TOPDOWN_FE_BOUND.FRONTEND_BANDWIDTH`.
    FetchBandwidthSlots,
    /// E-core `TOPDOWN_BAD_SPECULATION.MISPREDICT`.
    MispredictSlots,
    /// E-core `TOPDOWN_BAD_SPECULATION.MACHINE_CLEARS`.
    MachineClearSlots,
    /// E-core `TOPDOWN_BE_BOUND.ALLOC_RESTRICTIONS` (core bound).
    CoreBoundSlots,
    /// SKL `INST_RETIRED.ANY`.
    InstRetired,
    /// SKL `UOPS_RETIRED.MACRO_FUSED`.
    MacroFused,
    /// SKL `CYCLE_ACTIVITY.STALLS_MEM_ANY`.
    StallsMemAny,
    /// SKL `CYCLE_ACTIVITY.STALLS_TOTAL`.
    StallsTotal,
    /// SKL `EXE_ACTIVITY.BOUND_ON_STORES`.
    BoundOnStores,
    /// SKL `EXE_ACTIVITY.1_PORTS_UTIL`.
    PortsUtil1,
    /// SKL `EXE_ACTIVITY.2_PORTS_UTIL`.
    PortsUtil2,
}

/// How a family turns counts into top-down fractions, which fixes what
/// the counts must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Intel Ice Lake and later P-cores: slots + PERF_METRICS.
    IntelPerfMetrics,
    /// Intel before Ice Lake: raw events over 4 × cycles.
    IntelSkylake,
    /// Intel Ice Lake and later P-cores counted on general-purpose
    /// counters: `TOPDOWN.SLOTS_P` and raw slot events (the `-gp` sets).
    IntelGeneral,
    /// Intel E-core (Gracemont and later): `TOPDOWN_*` events over width × cycles.
    IntelAtom,
    /// AMD Zen 4 and later.
    AmdZen,
    /// Arm Neoverse with `STALL_SLOT*` and `OP_*` events.
    ArmNeoverse,
}

/// One interval's counts for `quantities`, over `cycles` cycles of a core
/// `width` slots wide with `mix`.
pub fn interval_counts(
    family: Family,
    width: u32,
    cycles: u64,
    mix: &Mix,
    quantities: &[Quantity],
    out: &mut Vec<u64>,
) {
    out.clear();
    let w = width as f64;
    let c = cycles as f64;
    let iv = Interval {
        width,
        cycles,
        w,
        c,
        slots: w * c,
        mix: if family == Family::AmdZen {
            *mix
        } else {
            mix.without_smt()
        },
    };
    let mut push =
        |count: &dyn Fn(Quantity) -> u64| out.extend(quantities.iter().map(|&q| count(q)));
    match family {
        Family::IntelPerfMetrics => push(&perf_metrics_counts(&iv, quantities)),
        Family::IntelSkylake => push(&skylake_counts(&iv)),
        Family::IntelGeneral => push(&general_counts(&iv, quantities)),
        Family::IntelAtom => push(&atom_counts(&iv)),
        Family::AmdZen => push(&zen_counts(&iv)),
        Family::ArmNeoverse => push(&neoverse_counts(&iv)),
    }
}

/// An interval as the counting model sees it.
struct Interval {
    width: u32,
    cycles: u64,
    /// `width` as a float.
    w: f64,
    /// `cycles` as a float.
    c: f64,
    /// `w * c`.
    slots: f64,
    /// The mix, without SMT contention on families that have no such
    /// category.
    mix: Mix,
}

/// A non-negative amount rounded to a count.
fn r(x: f64) -> u64 {
    x.max(0.0).round() as u64
}

/// The shares of slots `INT_MISC.UOP_DROPPING` and `INT_MISC.CLEARS_COUNT`
/// count when the group has them (0 otherwise): small, so that the
/// corrected formulas move little; `width` slots are charged per clear.
fn corrections(mix: &Mix, width: f64, quantities: &[Quantity]) -> (f64, f64) {
    let has = |q| quantities.contains(&q);
    let drop = match has(Quantity::UopDropping) {
        true => (0.02 * mix.frontend).min(0.005),
        false => 0.0,
    };
    let clears = match has(Quantity::ClearsCount) {
        true => (0.01 * mix.backend / width).min(0.0004),
        false => 0.0,
    };
    (drop, clears)
}

/// Ice Lake and later: slots and PERF_METRICS, with ICL's corrections
/// when `quantities` holds them.
fn perf_metrics_counts<'a>(
    iv: &'a Interval,
    quantities: &[Quantity],
) -> impl Fn(Quantity) -> u64 + 'a {
    let mix = iv.mix;
    // Corrections in the group change what perf computes: move the
    // PERF_METRICS fractions so that perf's corrected FE and BE are the
    // mix's.
    let (drop, clears) = corrections(&mix, 5.0, quantities);
    let bytes = perf_metrics_bytes(&Mix {
        frontend: mix.frontend + drop,
        backend: mix.backend - 5.0 * clears,
        ..mix
    });
    let s = iv.width as u64 * iv.cycles;
    move |q| match q {
        Quantity::Cycles => iv.cycles,
        Quantity::Slots => s,
        Quantity::PerfMetric(n) => metric_count(s, bytes.get(n as usize).copied().unwrap_or(0)),
        Quantity::UopDropping => r(drop * iv.slots),
        Quantity::ClearsCount => r(clears * iv.slots),
        _ => 0,
    }
}

/// Ice Lake and later on general-purpose counters: FE = (IDQ not
/// delivered − UOP_DROPPING)/SLOTS_P, BE = (BACKEND_BOUND_SLOTS + width ×
/// CLEARS_COUNT)/SLOTS_P (ICL; Golden Cove has no CLEARS_COUNT term),
/// Retiring = UOPS_RETIRED.SLOTS/SLOTS_P: the corrections, when in the
/// group, are taken out of the raw counts so that the formulas give the
/// mix back.
fn general_counts<'a>(iv: &'a Interval, quantities: &[Quantity]) -> impl Fn(Quantity) -> u64 + 'a {
    let mix = iv.mix;
    let (drop, clears) = corrections(&mix, iv.w, quantities);
    let slots = iv.slots;
    move |q| match q {
        Quantity::Cycles => iv.cycles,
        Quantity::Slots => iv.width as u64 * iv.cycles,
        Quantity::FrontendSlots => r((mix.frontend + drop) * slots),
        Quantity::BackendSlots => r((mix.backend - iv.w * clears) * slots),
        Quantity::RetiredSlots => r(mix.retiring * slots),
        Quantity::UopDropping => r(drop * slots),
        Quantity::ClearsCount => r(clears * slots),
        _ => 0,
    }
}

/// Before Ice Lake: raw events over 4 × cycles.
fn skylake_counts(iv: &Interval) -> impl Fn(Quantity) -> u64 + '_ {
    let (mix, slots, w) = (&iv.mix, iv.slots, iv.w);
    // tma_bad_speculation = (ISSUED - RETIRED + 4*RECOVERY) / SLOTS:
    // a tenth of it comes from recovery cycles.
    let retired = r(mix.retiring * slots);
    let recovery = r(mix.bad_speculation * slots / 10.0 / w);
    let issued = r(mix.retiring * slots + mix.bad_speculation * slots)
        .saturating_sub(iv.width as u64 * recovery);
    let bad_events = r(mix.bad_speculation * slots / 50.0);
    // Heavy operations = (RETIRE_SLOTS + MACRO_FUSED - INST_RETIRED)/SLOTS:
    // a tenth of the retired slots are macro-fused, and instructions are
    // what is left once the heavy share is taken out.
    let macro_fused = r(mix.retiring * slots / 10.0);
    let instructions = r(mix.retiring * slots * (1.0 - mix.heavy)) + macro_fused;
    // Memory bound = (STALLS_MEM_ANY + BOUND_ON_STORES) / (STALLS_TOTAL +
    // 1_PORTS_UTIL + Retiring × 2_PORTS_UTIL + BOUND_ON_STORES) × Backend:
    // the stalled cycles are the backend's share of cycles, a twentieth of
    // them bound on stores, with port-utilisation cycles on top.
    let stalls = mix.backend * iv.c;
    let (ports1, ports2, stores) = (stalls / 10.0, stalls / 10.0, stalls / 20.0);
    let whole = stalls + ports1 + mix.retiring * ports2 + stores;
    let mem_any = (mix.memory * whole - stores).max(0.0);
    move |q| match q {
        Quantity::Cycles => iv.cycles,
        Quantity::FrontendSlots => r(mix.frontend * slots),
        Quantity::RetiredSlots => retired,
        Quantity::IssuedUops => issued,
        Quantity::RecoveryCycles => recovery,
        Quantity::FetchLatencyCycles => r(mix.frontend * mix.fetch_latency * slots / w),
        Quantity::BranchMisses => r(bad_events as f64 * mix.mispredict),
        Quantity::MachineClears => r(bad_events as f64 * (1.0 - mix.mispredict)),
        Quantity::MacroFused => macro_fused,
        Quantity::InstRetired => instructions,
        Quantity::StallsTotal => r(stalls),
        Quantity::StallsMemAny => r(mem_any),
        Quantity::BoundOnStores => r(stores),
        Quantity::PortsUtil1 => r(ports1),
        Quantity::PortsUtil2 => r(ports2),
        _ => 0,
    }
}

/// E-cores: `TOPDOWN_*` slots over width × cycles.
fn atom_counts(iv: &Interval) -> impl Fn(Quantity) -> u64 + '_ {
    let (mix, slots) = (&iv.mix, iv.slots);
    let fe = mix.frontend * slots;
    let bad = mix.bad_speculation * slots;
    move |q| match q {
        Quantity::Cycles => iv.cycles,
        Quantity::FrontendSlots => r(fe),
        Quantity::BackendSlots => r(mix.backend * slots),
        Quantity::RetiredSlots => r(mix.retiring * slots),
        Quantity::BadSpeculationSlots => r(bad),
        Quantity::FetchLatencySlots => r(fe * mix.fetch_latency),
        Quantity::FetchBandwidthSlots => r(fe * (1.0 - mix.fetch_latency)),
        Quantity::MispredictSlots => r(bad * mix.mispredict),
        Quantity::MachineClearSlots => r(bad * (1.0 - mix.mispredict)),
        Quantity::CoreBoundSlots => r(mix.backend * slots * (1.0 - mix.memory)),
        _ => 0,
    }
}

/// AMD Zen 4 and later, SMT contention included.
fn zen_counts(iv: &Interval) -> impl Fn(Quantity) -> u64 + '_ {
    let (mix, slots, c) = (&iv.mix, iv.slots, iv.c);
    let retired = mix.retiring * slots;
    let bad = mix.bad_speculation * slots;
    // Redirect events: one per 40 slots of bad speculation.
    let redirects = bad / 40.0;
    let not_complete = mix.backend * c;
    move |q| match q {
        Quantity::Cycles => iv.cycles,
        Quantity::FrontendSlots => r(mix.frontend * slots),
        Quantity::BackendSlots => r(mix.backend * slots),
        Quantity::RetiredSlots => r(retired),
        Quantity::DispatchedOps => r(retired) + r(bad),
        Quantity::SmtSlots => r(mix.smt * slots),
        Quantity::FetchLatencyCycles => r(mix.frontend * mix.fetch_latency * c),
        Quantity::BranchMisses => r(redirects * mix.mispredict),
        Quantity::MachineClears => r(redirects * (1.0 - mix.mispredict)),
        Quantity::NotCompleteCycles => r(not_complete),
        Quantity::LoadNotCompleteCycles => r(not_complete * mix.memory),
        Quantity::MicrocodeOps => r(retired * mix.heavy),
        _ => 0,
    }
}

/// Arm Neoverse: `STALL_SLOT*` and `OP_*` events.
fn neoverse_counts(iv: &Interval) -> impl Fn(Quantity) -> u64 + '_ {
    let (mix, slots, c) = (&iv.mix, iv.slots, iv.c);
    // perf's neoverse-n2-v2 formulas (V2: no CPU_CYCLES
    // subtraction), with m = BR_MIS_PRED / CPU_CYCLES:
    //   FE  = STALL_SLOT_FRONTEND/(slots) - m
    //   BE  = STALL_SLOT_BACKEND/(slots) - 3m
    //   Bad = (1 - OP_RETIRED/OP_SPEC)(1 - STALL_SLOT/slots) + 4m
    //   Ret = OP_RETIRED/OP_SPEC (1 - STALL_SLOT/slots)
    // STALL_SLOT = FE + BE stall slots, OP_RETIRED = ret × slots,
    // OP_SPEC = (ret + bad - 4m) × slots give the mix back.
    let m = mix.bad_speculation * mix.mispredict / 4.0 * 0.25;
    let fe = (mix.frontend + m) * slots;
    let be = (mix.backend + 3.0 * m) * slots;
    let ret = mix.retiring * slots;
    let spec = (mix.retiring + mix.bad_speculation - 4.0 * m) * slots;
    move |q| match q {
        Quantity::Cycles => iv.cycles,
        Quantity::FrontendSlots => r(fe),
        Quantity::BackendSlots => r(be),
        Quantity::StallSlots => r(fe) + r(be),
        Quantity::RetiredSlots => r(ret),
        Quantity::SpecOps => r(spec).max(r(ret)),
        Quantity::BranchMisses => r(m * c),
        _ => 0,
    }
}

/// `floor(slots * byte / 255)`: what the kernel adds to a topdown metric
/// event for one PERF_METRICS read (`icl_get_metrics_event_value`).
pub fn metric_count(slots: u64, byte: u8) -> u64 {
    ((slots as u128 * byte as u128) / 255) as u64
}

/// The eight PERF_METRICS bytes for `mix`: level 1 (retiring, bad-spec,
/// fe-bound, be-bound) summing to 255 by largest remainder, and each
/// level-2 byte its share of the parent's byte.
pub fn perf_metrics_bytes(mix: &Mix) -> [u8; 8] {
    let m = mix.without_smt();
    let l1 = [m.retiring, m.bad_speculation, m.frontend, m.backend];
    let exact = l1.map(|f| f * 255.0);
    let mut b = exact.map(|x| x.floor() as u32);
    let left = 255 - b.iter().sum::<u32>().min(255);
    // Give the missing units to the largest remainders (ties: first).
    let mut order = [0usize, 1, 2, 3];
    order.sort_by(|&i, &j| {
        let (ri, rj) = (exact[i] - exact[i].floor(), exact[j] - exact[j].floor());
        rj.total_cmp(&ri).then(i.cmp(&j))
    });
    for k in 0..left as usize {
        b[order[k % 4]] += 1;
    }
    let share = |parent: u32, f: f64| ((parent as f64 * f).round() as u32).min(parent) as u8;
    [
        b[0] as u8,
        b[1] as u8,
        b[2] as u8,
        b[3] as u8,
        share(b[0], m.heavy),
        share(b[1], m.mispredict),
        share(b[2], m.fetch_latency),
        share(b[3], m.memory),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_quantisation_matches_the_worked_example() {
        // The kernel's quantisation (icl_get_metrics_event_value in
        // arch/x86/events/intel/core.c): bytes 76/25/64/90 of 10,000,000
        // slots.
        let s = 10_000_000;
        assert_eq!(metric_count(s, 76), 2_980_392);
        assert_eq!(metric_count(s, 25), 980_392);
        assert_eq!(metric_count(s, 64), 2_509_803);
        assert_eq!(metric_count(s, 90), 3_529_411);
        assert_eq!(metric_count(s, 15), 588_235);
    }

    #[test]
    fn level_one_bytes_sum_to_255() {
        for (a, b, c, d) in [
            (0.3, 0.1, 0.25, 0.35),
            (1.0, 0.0, 0.0, 0.0),
            (0.33, 0.33, 0.33, 0.01),
        ] {
            let bytes = perf_metrics_bytes(&Mix::l1(a, b, c, d));
            assert_eq!(bytes[..4].iter().map(|&x| x as u32).sum::<u32>(), 255);
            for i in 0..4 {
                assert!(bytes[4 + i] <= bytes[i]);
            }
        }
    }

    fn l1_of(family: Family, width: u32, q: &[Quantity], mix: &Mix) -> Vec<u64> {
        let mut out = Vec::new();
        interval_counts(family, width, 1_000_000, mix, q, &mut out);
        out
    }

    /// Asserts that `a` and `b` agree to within 1e-3.
    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-3, "{a} vs {b}");
    }

    /// Skylake's counts give back `mix`'s level 1 (0.3, 0.1, 0.25, 0.35).
    fn skylake_gives(mix: &Mix) {
        use Quantity::*;
        let v = l1_of(
            Family::IntelSkylake,
            4,
            &[
                Cycles,
                FrontendSlots,
                IssuedUops,
                RetiredSlots,
                RecoveryCycles,
            ],
            mix,
        );
        let slots = 4.0 * v[0] as f64;
        close(v[1] as f64 / slots, 0.25);
        close(v[3] as f64 / slots, 0.3);
        close((v[2] as f64 - v[3] as f64 + 4.0 * v[4] as f64) / slots, 0.1);
    }

    /// Zen's counts give back `mix`'s level 1 (0.3, 0.1, 0.25, 0.35).
    fn zen_gives(mix: &Mix) {
        use Quantity::*;
        let v = l1_of(
            Family::AmdZen,
            6,
            &[
                Cycles,
                FrontendSlots,
                BackendSlots,
                DispatchedOps,
                RetiredSlots,
            ],
            mix,
        );
        let slots = 6.0 * v[0] as f64;
        close(v[1] as f64 / slots, 0.25);
        close(v[2] as f64 / slots, 0.35);
        close((v[3] - v[4]) as f64 / slots, 0.1);
    }

    /// Neoverse's counts give back `mix`'s level 1 (0.3, 0.1, 0.25, 0.35).
    fn neoverse_gives(mix: &Mix) {
        use Quantity::*;
        let v = l1_of(
            Family::ArmNeoverse,
            8,
            &[
                Cycles,
                FrontendSlots,
                BackendSlots,
                StallSlots,
                RetiredSlots,
                SpecOps,
                BranchMisses,
            ],
            mix,
        );
        let (c, slots) = (v[0] as f64, 8.0 * v[0] as f64);
        let m = v[6] as f64 / c;
        let not_stalled = 1.0 - v[3] as f64 / slots;
        close(v[1] as f64 / slots - m, 0.25);
        close(v[2] as f64 / slots - 3.0 * m, 0.35);
        close(v[4] as f64 / v[5] as f64 * not_stalled, 0.3);
        close(
            (1.0 - v[4] as f64 / v[5] as f64) * not_stalled + 4.0 * m,
            0.1,
        );
    }

    /// The Atom cores' counts give back `mix`'s bad speculation (0.1).
    fn atom_gives(mix: &Mix) {
        use Quantity::*;
        let v = l1_of(
            Family::IntelAtom,
            5,
            &[Cycles, FrontendSlots, BackendSlots, RetiredSlots],
            mix,
        );
        let slots = 5.0 * v[0] as f64;
        close(1.0 - (v[1] + v[2] + v[3]) as f64 / slots, 0.1);
    }

    /// Ice Lake's general-purpose counts give back `mix`'s frontend,
    /// backend and retiring (0.25, 0.35, 0.3).
    fn intel_general_gives(mix: &Mix) {
        use Quantity::*;
        // Ice Lake on general-purpose counters, corrections included.
        let v = l1_of(
            Family::IntelGeneral,
            5,
            &[
                Slots,
                FrontendSlots,
                BackendSlots,
                RetiredSlots,
                UopDropping,
                ClearsCount,
            ],
            mix,
        );
        let slots = v[0] as f64;
        assert!(v[4] > 0 && v[5] > 0);
        close((v[1] - v[4]) as f64 / slots, 0.25);
        close((v[2] + 5 * v[5]) as f64 / slots, 0.35);
        close(v[3] as f64 / slots, 0.3);
    }

    #[test]
    fn every_family_gives_its_mix_back() {
        let mix = Mix::l1(0.3, 0.1, 0.25, 0.35).with_l2(0.2, 0.8, 0.6, 0.5);
        skylake_gives(&mix);
        zen_gives(&mix);
        neoverse_gives(&mix);
        atom_gives(&mix);
        intel_general_gives(&mix);
    }

    #[test]
    fn icl_corrections_give_the_mix_after_perfs_formulas() {
        use Quantity::*;
        let mix = Mix::l1(0.3, 0.1, 0.25, 0.35);
        let q = [
            Slots,
            Cycles,
            PerfMetric(0),
            PerfMetric(1),
            PerfMetric(2),
            PerfMetric(3),
            UopDropping,
            ClearsCount,
        ];
        let v = l1_of(Family::IntelPerfMetrics, 5, &q, &mix);
        let sum4 = (v[2] + v[3] + v[4] + v[5]) as f64;
        let slots = v[0] as f64;
        let fe = v[4] as f64 / sum4 - v[6] as f64 / slots;
        let be = v[5] as f64 / sum4 + 5.0 * v[7] as f64 / slots;
        // 8-bit quantisation: within half a unit of 1/255.
        assert!((fe - 0.25).abs() < 0.003, "{fe}");
        assert!((be - 0.35).abs() < 0.003, "{be}");
        assert!(v[6] > 0 && v[7] > 0);
    }
}
