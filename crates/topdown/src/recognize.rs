//! Which of a capture's events play which role in a formula set: by PMU
//! type and masked config, never by name (names differ between perf
//! versions and spellings: `slots`, `cpu/slots/`, `cpu_core/slots/`,
//! `r400`).

use crate::cpu::{is_arm_core_pmu, PmuInfo, SetUse};
use crate::set::{Matcher, PmuClass};

/// `PERF_TYPE_HARDWARE`.
pub const TYPE_HARDWARE: u32 = 0;
/// `PERF_TYPE_RAW`: x86 `cpu` and hybrid `cpu_core` register as it.
pub const TYPE_RAW: u32 = 4;

/// An event as the capture has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventKey {
    /// `perf_event_attr.type`.
    pub type_: u32,
    /// `perf_event_attr.config`.
    pub config: u64,
}

/// The PMU types a set's events may carry, from the capture's PMU
/// mappings: `None` when the PMU is not in the capture (a hybrid
/// `cpu_atom` set on a capture without `cpu_atom`).
pub fn pmu_types(class: PmuClass, pmus: &[PmuInfo]) -> Option<Vec<u32>> {
    match class {
        PmuClass::Core => Some(vec![TYPE_RAW]),
        PmuClass::Atom => {
            let t = pmus.iter().find(|p| p.name == "cpu_atom")?.type_?;
            Some(vec![t])
        }
        PmuClass::Arm => {
            let mut t: Vec<u32> = pmus
                .iter()
                .filter(|p| is_arm_core_pmu(&p.name))
                .filter_map(|p| p.type_)
                .collect();
            t.push(TYPE_RAW);
            Some(t)
        }
    }
}

/// The role `e` plays in the set, if any. `types` are the set's PMU
/// types (from [`pmu_types`]); `hybrid` says whether the capture has
/// `cpu_core`/`cpu_atom`, where a hardware event names its PMU in config
/// bits 63:32.
pub fn role_of<'s>(u: &'s SetUse, types: &[u32], hybrid: bool, e: EventKey) -> Option<&'s str> {
    let set = u.set;
    set.events
        .iter()
        .find(|r| {
            r.matchers
                .iter()
                .any(|&m| matches(m, set.mask, types, hybrid, u.pmu, e))
        })
        .map(|r| r.role.as_str())
}

fn matches(
    m: Matcher,
    mask: u64,
    types: &[u32],
    hybrid: bool,
    class: PmuClass,
    e: EventKey,
) -> bool {
    match m {
        Matcher::Raw(v) => types.contains(&e.type_) && (e.config & mask) == (v & mask),
        Matcher::Hw(id) => {
            if e.type_ != TYPE_HARDWARE || (e.config & 0xffff_ffff) != id {
                return false;
            }
            let pmu = (e.config >> 32) as u32;
            match (pmu, hybrid) {
                // No PMU named: the only core PMU, or on a hybrid part
                // perf's default, the big cores.
                (0, false) => true,
                (0, true) => class == PmuClass::Core,
                (t, _) => types.contains(&t),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::{by_name, CpuInfo};

    fn key(type_: u32, config: u64) -> EventKey {
        EventKey { type_, config }
    }

    #[test]
    fn intel_by_masked_config() {
        let m = by_name("sapphirerapids", &CpuInfo::default()).unwrap();
        let u = &m.sets[0];
        let t = pmu_types(u.pmu, &[]).unwrap();
        assert_eq!(role_of(u, &t, false, key(4, 0x400)), Some("slots"));
        assert_eq!(role_of(u, &t, false, key(4, 0x8300)), Some("td_be_bound"));
        assert_eq!(role_of(u, &t, false, key(4, 0x8700)), Some("td_mem_bound"));
        // USR/OS/EN bits are rebuilt by the kernel: the same event.
        assert_eq!(
            role_of(u, &t, false, key(4, 0x4310ad)),
            Some("uop_dropping")
        );
        assert_eq!(role_of(u, &t, false, key(4, 0x8800)), None);
        assert_eq!(
            role_of(u, &t, false, key(0, 0)),
            None,
            "cycles is no role here"
        );
        assert_eq!(role_of(u, &t, false, key(1, 0x400)), None, "software event");
    }

    #[test]
    fn amd_ignores_the_0x43_byte() {
        let m = by_name("amdzen4", &CpuInfo::default()).unwrap();
        let u = &m.sets[0];
        let t = pmu_types(u.pmu, &[]).unwrap();
        assert_eq!(role_of(u, &t, false, key(4, 0x4300c1)), Some("retired"));
        assert_eq!(role_of(u, &t, false, key(4, 0x1004301a0)), Some("fe_slots"));
        assert_eq!(role_of(u, &t, false, key(4, 0x430076)), Some("cycles"));
        assert_eq!(role_of(u, &t, false, key(0, 0)), Some("cycles"));
        assert_eq!(
            role_of(u, &t, false, key(4, 0x1a0)),
            None,
            "event bits 32-35 matter"
        );
    }

    #[test]
    fn hybrid_pmus() {
        let pmus = vec![
            PmuInfo {
                type_: Some(4),
                name: "cpu_core".into(),
                caps: vec![],
            },
            PmuInfo {
                type_: Some(10),
                name: "cpu_atom".into(),
                caps: vec![],
            },
        ];
        let info = CpuInfo {
            arch: Some("x86_64".into()),
            cpuid: Some("GenuineIntel,6,151,2".into()),
            pmus: pmus.clone(),
        };
        let m = crate::cpu::detect(&info).unwrap();
        let (p, e) = (&m.sets[0], &m.sets[1]);
        let (tp, te) = (
            pmu_types(p.pmu, &pmus).unwrap(),
            pmu_types(e.pmu, &pmus).unwrap(),
        );
        assert_eq!(te, vec![10]);
        assert_eq!(role_of(e, &te, true, key(10, 0x71)), Some("fe_slots"));
        assert_eq!(role_of(e, &te, true, key(4, 0x71)), None);
        assert_eq!(role_of(e, &te, true, key(0, 10 << 32)), Some("cycles"));
        assert_eq!(role_of(e, &te, true, key(0, 4 << 32)), None);
        assert_eq!(role_of(p, &tp, true, key(4, 0x8000)), Some("td_retiring"));
        assert_eq!(pmu_types(PmuClass::Atom, &[]), None);
    }

    #[test]
    fn arm_by_event_number() {
        let pmus = vec![PmuInfo {
            type_: Some(10),
            name: "armv8_pmuv3_0".into(),
            caps: vec![("slots".into(), "0x00000008".into())],
        }];
        let m = by_name("neoverse-v2", &CpuInfo::default()).unwrap();
        let u = &m.sets[0];
        let t = pmu_types(u.pmu, &pmus).unwrap();
        assert_eq!(
            role_of(u, &t, false, key(10, 0x3e)),
            Some("stall_slot_frontend")
        );
        assert_eq!(role_of(u, &t, false, key(4, 0x3a)), Some("op_retired"));
        assert_eq!(role_of(u, &t, false, key(0, 0)), Some("cycles"));
        assert_eq!(
            role_of(u, &t, false, key(10, 0x1003e)),
            Some("stall_slot_frontend")
        );
    }
}
