//! Which CPU a capture was recorded on, and so which formula sets apply:
//! HEADER_CPUID matched as perf matches its mapfiles (`../cpus.td`), the
//! PMU mappings and caps for hybrid parts and Arm's slot width.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

use crate::set::{fields, parse_u64, set, strip_comment, FormulaSet, PmuClass};

/// What a capture's header says about its CPU and PMUs.
#[derive(Clone, Debug, Default)]
pub struct CpuInfo {
    /// HEADER_ARCH (`x86_64`, `aarch64`).
    pub arch: Option<String>,
    /// HEADER_CPUID: `GenuineIntel,6,143,8` on x86, a MIDR such as
    /// `0x00000000410fd4f0` on arm64.
    pub cpuid: Option<String>,
    /// PMUs from PMU_MAPPINGS, PMU_CAPS, CPU_PMU_CAPS.
    pub pmus: Vec<PmuInfo>,
}

/// One PMU of the capture.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PmuInfo {
    /// Its type (`perf_event_attr.type`), when PMU_MAPPINGS gives it.
    pub type_: Option<u32>,
    /// `cpu`, `cpu_core`, `cpu_atom`, `armv8_pmuv3_0`, ...
    pub name: String,
    /// Capabilities (`slots`, `pmu_name`, ...).
    pub caps: Vec<(String, String)>,
}

/// A formula set as a model uses it.
#[derive(Clone, Debug)]
pub struct SetUse {
    /// The set.
    pub set: &'static FormulaSet,
    /// The PMU its events are on (hybrid parts: one set per core type).
    pub pmu: PmuClass,
    /// Constants the model gives (`width`, `cycles_bias`).
    pub consts: BTreeMap<String, f64>,
}

/// A CPU model and its formula sets.
#[derive(Clone, Debug)]
pub struct Model {
    /// perf's name for its tables (`sapphirerapids`, `amdzen4`,
    /// `neoverse-v2`).
    pub name: String,
    /// The cores it covers, or why it has no sets.
    pub note: String,
    /// How it was found (`cpuid GenuineIntel,6,143,8 → key
    /// GenuineIntel-6-8F-8`), or `--cpu-model`.
    pub found_by: String,
    /// Its formula sets: none when the CPU has no top-down events.
    pub sets: Vec<SetUse>,
}

/// Why no model was found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DetectError {
    /// The header has no CPUID.
    #[error("the capture's header has no CPU id (HEADER_CPUID){}; name the CPU with --cpu-model ({})", arch.as_deref().map(|a| format!(" (arch {a})")).unwrap_or_default(), known_models())]
    NoCpuid {
        /// HEADER_ARCH.
        arch: Option<String>,
    },
    /// The CPUID matches no row.
    #[error("CPU id `{cpuid}`{} matches no CPU perfq has top-down formulas for; name one with --cpu-model ({})", key.as_deref().map(|k| format!(" (perf's key {k})")).unwrap_or_default(), known_models())]
    Unknown {
        /// HEADER_CPUID.
        cpuid: String,
        /// The lookup key made of it.
        key: Option<String>,
    },
    /// `--cpu-model` names nothing known.
    #[error("unknown CPU model `{name}`; known: {}", known_models())]
    UnknownName {
        /// The name given.
        name: String,
    },
    /// perfq's own tables are damaged (a defect, caught by its tests).
    #[error("perfq's CPU tables: {0}")]
    Tables(String),
}

/// One row of `cpus.td`.
#[derive(Clone, Debug)]
struct Row {
    kind: Kind,
    model: String,
    sets: String,
    note: String,
}

#[derive(Clone, Debug)]
enum Kind {
    /// A perf mapfile regular expression, and whether it includes the
    /// stepping (three dashes).
    X86(regex::Regex, bool),
    /// A MIDR (variant and revision the least matched).
    Arm(u64),
    /// Any Arm core.
    ArmAny,
}

const CPUS: &str = include_str!("../cpus.td");

fn rows() -> Result<&'static [Row], DetectError> {
    static ROWS: OnceLock<Result<Vec<Row>, String>> = OnceLock::new();
    ROWS.get_or_init(|| parse_rows(CPUS))
        .as_deref()
        .map_err(|e| DetectError::Tables(e.clone()))
}

fn parse_rows(text: &str) -> Result<Vec<Row>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = strip_comment(line).trim();
        if line.is_empty() {
            continue;
        }
        let f = fields(line);
        if f.len() != 5 {
            return Err(format!("cpus.td:{}: want 5 fields", n + 1));
        }
        let kind = match (f[0], f[1]) {
            ("x86", p) => {
                let re = regex::Regex::new(&format!("^(?:{p})$"))
                    .map_err(|e| format!("cpus.td:{}: {e}", n + 1))?;
                Kind::X86(re, p.matches('-').count() == 3)
            }
            ("arm", "any") => Kind::ArmAny,
            ("arm", m) => Kind::Arm(parse_u64(m).ok_or(format!("cpus.td:{}: bad MIDR", n + 1))?),
            (k, _) => return Err(format!("cpus.td:{}: unknown kind `{k}`", n + 1)),
        };
        out.push(Row {
            kind,
            model: f[2].into(),
            sets: f[3].into(),
            note: f[4].into(),
        });
    }
    Ok(out)
}

/// perf's lookup key for an x86 HEADER_CPUID: `GenuineIntel,6,143,8` →
/// `GenuineIntel-6-8F-8` (decimal family, upper-case hex model and
/// stepping).
pub fn cpuid_key(cpuid: &str) -> Option<String> {
    let mut p = cpuid.trim().split(',');
    let vendor = p.next()?.trim();
    let family: u32 = p.next()?.trim().parse().ok()?;
    let model: u32 = p.next()?.trim().parse().ok()?;
    let stepping: u32 = p.next()?.trim().parse().ok()?;
    if vendor.is_empty() || p.next().is_some() {
        return None;
    }
    Some(format!("{vendor}-{family}-{model:X}-{stepping:X}"))
}

/// An arm64 HEADER_CPUID: the MIDR (`0x00000000410fd4f0`).
pub fn parse_midr(cpuid: &str) -> Option<u64> {
    let s = cpuid.trim();
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    u64::from_str_radix(h, 16).ok()
}

/// MIDR fields: implementer [31:24], variant [23:20], architecture
/// [19:16], part [15:4], revision [3:0].
fn midr_matches(id: u64, row: u64) -> bool {
    const CPU_MASK: u64 = 0xff0f_fff0; // implementer, architecture, part
    let variant_rev = |m: u64| ((m >> 20) & 0xf, m & 0xf);
    (id & CPU_MASK) == (row & CPU_MASK) && variant_rev(id) >= variant_rev(row)
}

fn is_arm(info: &CpuInfo) -> bool {
    info.arch
        .as_deref()
        .is_some_and(|a| a == "aarch64" || a == "arm64" || a.starts_with("arm"))
        || info
            .cpuid
            .as_deref()
            .is_some_and(|c| c.trim().starts_with("0x"))
}

/// Finds the model of the CPU a capture was recorded on.
pub fn detect(info: &CpuInfo) -> Result<Model, DetectError> {
    let rows = rows()?;
    let Some(cpuid) = info.cpuid.as_deref().filter(|c| !c.trim().is_empty()) else {
        return Err(DetectError::NoCpuid {
            arch: info.arch.clone(),
        });
    };
    let unknown = |key: Option<String>| DetectError::Unknown {
        cpuid: cpuid.into(),
        key,
    };
    if is_arm(info) {
        let midr = parse_midr(cpuid).ok_or_else(|| unknown(None))?;
        let row = rows
            .iter()
            .find(|r| match r.kind {
                Kind::Arm(m) => midr_matches(midr, m),
                Kind::ArmAny => true,
                Kind::X86(..) => false,
            })
            .ok_or_else(|| unknown(None))?;
        return model(row, info, format!("MIDR {cpuid}"));
    }
    let key = cpuid_key(cpuid).ok_or_else(|| unknown(None))?;
    // Rows without a stepping match the key without it.
    let short = key.rsplit_once('-').map_or(key.as_str(), |k| k.0);
    let row = rows
        .iter()
        .find(|r| match &r.kind {
            Kind::X86(re, full) => re.is_match(if *full { &key } else { short }),
            _ => false,
        })
        .ok_or_else(|| unknown(Some(key.clone())))?;
    model(row, info, format!("cpuid {cpuid} → {key}"))
}

/// A model by the name `--cpu-model` gives: perf's table name
/// (`sapphirerapids`, `amdzen4`, `neoverse-v2`) or a formula set's
/// (`intel-glc`).
pub fn by_name(name: &str, info: &CpuInfo) -> Result<Model, DetectError> {
    let rows = rows()?;
    let want = name.trim().to_ascii_lowercase();
    if let Some(row) = rows.iter().find(|r| r.model == want) {
        return model(row, info, format!("--cpu-model {name}"));
    }
    let Some(s) = set(&want) else {
        return Err(DetectError::UnknownName { name: name.into() });
    };
    Ok(Model {
        name: s.name.clone(),
        note: s.title.clone(),
        found_by: format!("--cpu-model {name}"),
        sets: vec![with_caps(
            SetUse {
                set: s,
                pmu: s.pmu,
                consts: BTreeMap::new(),
            },
            info,
        )],
    })
}

fn model(row: &Row, info: &CpuInfo, found_by: String) -> Result<Model, DetectError> {
    let mut sets = Vec::new();
    if row.sets != "-" {
        for spec in row.sets.split(',') {
            let mut words = spec.split_whitespace();
            let head = words.next().unwrap_or_default();
            let (name, pmu) = match head.split_once('@') {
                Some((n, "cpu_core")) => (n, Some(PmuClass::Core)),
                Some((n, "cpu_atom")) => (n, Some(PmuClass::Atom)),
                Some((_, p)) => return Err(DetectError::Tables(format!("unknown PMU `{p}`"))),
                None => (head, None),
            };
            let s = set(name).ok_or_else(|| DetectError::Tables(format!("no set `{name}`")))?;
            let mut consts = BTreeMap::new();
            for w in words {
                let (k, v) = w
                    .split_once('=')
                    .and_then(|(k, v)| Some((k, v.parse::<f64>().ok()?)))
                    .ok_or_else(|| DetectError::Tables(format!("bad constant `{w}`")))?;
                consts.insert(k.to_string(), v);
            }
            sets.push(with_caps(
                SetUse {
                    set: s,
                    pmu: pmu.unwrap_or(s.pmu),
                    consts,
                },
                info,
            ));
        }
    }
    Ok(Model {
        name: row.model.clone(),
        note: row.note.clone(),
        found_by,
        sets,
    })
}

/// Arm's slot width is the core PMU's recorded `slots` capability
/// (PMMIR_EL1.SLOTS), as perf's `#slots`; it replaces the model's.
fn with_caps(mut u: SetUse, info: &CpuInfo) -> SetUse {
    if u.pmu == PmuClass::Arm {
        let slots = info
            .pmus
            .iter()
            .filter(|p| is_arm_core_pmu(&p.name))
            .flat_map(|p| p.caps.iter())
            .find(|c| c.0 == "slots")
            .and_then(|c| parse_u64(c.1.trim()))
            .filter(|&s| s > 0);
        if let Some(s) = slots {
            u.consts.insert("width".into(), s as f64);
        }
    }
    u
}

/// Whether a PMU name is an Arm core PMU (`armv8_pmuv3_0`,
/// `armv8_cortex_a72`, `armv9_neoverse_n2`).
pub fn is_arm_core_pmu(name: &str) -> bool {
    name.starts_with("armv8") || name.starts_with("armv9") || name.starts_with("arm_")
}

/// The names `--cpu-model` takes.
pub fn known_models() -> String {
    match rows() {
        Ok(rows) => {
            let mut names: Vec<&str> = rows
                .iter()
                .filter(|r| r.sets != "-")
                .map(|r| r.model.as_str())
                .collect();
            names.dedup();
            names.join(", ")
        }
        Err(e) => e.to_string(),
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}; {})", self.name, self.note, self.found_by)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x86(cpuid: &str) -> CpuInfo {
        CpuInfo {
            arch: Some("x86_64".into()),
            cpuid: Some(cpuid.into()),
            pmus: Vec::new(),
        }
    }

    fn sets_of(m: &Model) -> Vec<String> {
        m.sets
            .iter()
            .map(|s| format!("{}@{:?}", s.set.name, s.pmu))
            .collect()
    }

    #[test]
    fn keys_as_perf_makes_them() {
        assert_eq!(
            cpuid_key("GenuineIntel,6,143,8").unwrap(),
            "GenuineIntel-6-8F-8"
        );
        assert_eq!(
            cpuid_key("AuthenticAMD,25,17,1").unwrap(),
            "AuthenticAMD-25-11-1"
        );
        assert_eq!(
            cpuid_key("GenuineIntel,6,69,1").unwrap(),
            "GenuineIntel-6-45-1"
        );
        assert_eq!(cpuid_key("GenuineIntel,6,69"), None);
        assert_eq!(cpuid_key("x,y,z,w"), None);
    }

    /// One row per x86 model detected: the cpuid, the model perf names,
    /// and its formula sets as `set@pmu`.
    const X86_MODELS: &[(&str, &str, &[&str])] = &[
        (
            "GenuineIntel,6,143,8",
            "sapphirerapids",
            &["intel-glc@Core", "intel-glc-gp@Core"],
        ),
        (
            "GenuineIntel,6,207,2",
            "emeraldrapids",
            &["intel-glc@Core", "intel-glc-gp@Core"],
        ),
        (
            "GenuineIntel,6,173,1",
            "graniterapids",
            &["intel-glc@Core", "intel-glc-gp@Core"],
        ),
        (
            "GenuineIntel,6,126,5",
            "icelake",
            &["intel-icl@Core", "intel-icl-gp@Core"],
        ),
        (
            "GenuineIntel,6,106,6",
            "icelakex",
            &["intel-icl@Core", "intel-icl-gp@Core"],
        ),
        (
            "GenuineIntel,6,140,1",
            "tigerlake",
            &["intel-icl@Core", "intel-icl-gp@Core"],
        ),
        ("GenuineIntel,6,165,5", "skylake", &["intel-skl@Core"]),
        ("GenuineIntel,6,94,3", "skylake", &["intel-skl@Core"]),
        ("GenuineIntel,6,85,4", "skylakex", &["intel-skl@Core"]),
        ("GenuineIntel,6,85,7", "cascadelakex", &["intel-skl@Core"]),
        ("GenuineIntel,6,60,3", "haswell", &["intel-hsw@Core"]),
        (
            "GenuineIntel,6,151,2",
            "alderlake",
            &["intel-glc@Core", "intel-grt@Atom", "intel-glc-gp@Core"],
        ),
        (
            "GenuineIntel,6,183,1",
            "alderlake",
            &["intel-glc@Core", "intel-grt@Atom", "intel-glc-gp@Core"],
        ),
        (
            "GenuineIntel,6,170,4",
            "meteorlake",
            &["intel-glc@Core", "intel-cmt@Atom", "intel-glc-gp@Core"],
        ),
        (
            "GenuineIntel,6,189,1",
            "lunarlake",
            &["intel-lnc@Core", "intel-skt@Atom", "intel-lnc-gp@Core"],
        ),
        (
            "GenuineIntel,6,197,2",
            "arrowlake",
            &["intel-lnc@Core", "intel-skt@Atom", "intel-lnc-gp@Core"],
        ),
        ("GenuineIntel,6,190,0", "alderlaken", &["intel-grt@Core"]),
        ("GenuineIntel,6,175,3", "sierraforest", &["intel-cmt@Core"]),
        (
            "GenuineIntel,6,134,7",
            "snowridgex",
            &["intel-tremont@Core"],
        ),
        ("GenuineIntel,6,92,9", "goldmont", &[]),
        ("AuthenticAMD,25,17,1", "amdzen4", &["amd-zen4@Core"]),
        ("AuthenticAMD,25,97,2", "amdzen4", &["amd-zen4@Core"]),
        ("AuthenticAMD,25,33,0", "amdzen3", &[]),
        ("AuthenticAMD,25,1,1", "amdzen3", &[]),
        ("AuthenticAMD,23,49,0", "amdzen2", &[]),
        ("AuthenticAMD,23,1,2", "amdzen1", &[]),
        ("AuthenticAMD,26,2,0", "amdzen5", &["amd-zen5@Core"]),
        ("AuthenticAMD,26,68,0", "amdzen5", &["amd-zen5@Core"]),
    ];

    #[test]
    fn x86_models() {
        for &(cpuid, name, sets) in X86_MODELS {
            let m = detect(&x86(cpuid)).unwrap_or_else(|e| panic!("{cpuid}: {e}"));
            assert_eq!(m.name, name, "{cpuid}");
            assert_eq!(sets_of(&m), sets, "{cpuid}");
        }
        for bad in [
            "GenuineIntel,6,255,0",
            "HygonGenuine,24,0,1",
            "GenuineIntel,15,4,1",
            "junk",
        ] {
            let e = detect(&x86(bad)).unwrap_err();
            assert!(matches!(e, DetectError::Unknown { .. }), "{bad}: {e}");
            assert!(e.to_string().contains(bad), "{e}");
        }
        assert!(matches!(
            detect(&CpuInfo::default()),
            Err(DetectError::NoCpuid { .. })
        ));
    }

    #[test]
    fn arm_models() {
        let arm = |midr: &str, caps: &[(&str, &str)]| CpuInfo {
            arch: Some("aarch64".into()),
            cpuid: Some(midr.into()),
            pmus: vec![PmuInfo {
                type_: Some(10),
                name: "armv8_pmuv3_0".into(),
                caps: caps
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            }],
        };
        let width = |m: &Model| m.sets[0].consts.get("width").copied();
        let m = detect(&arm("0x00000000410fd4f0", &[("slots", "0x00000008")])).unwrap();
        assert_eq!(
            (m.name.as_str(), m.sets[0].set.name.as_str()),
            ("neoverse-v2", "arm-neoverse-n2v2")
        );
        assert_eq!(width(&m), Some(8.0));
        let m = detect(&arm("0x00000000410fd491", &[])).unwrap();
        assert_eq!(m.name, "neoverse-n2");
        assert_eq!(m.sets[0].consts.get("cycles_bias"), Some(&1.0));
        assert_eq!(width(&m), Some(5.0));
        let m = detect(&arm("0x00000000410fd493", &[("slots", "5")])).unwrap();
        assert_eq!(m.sets[0].consts.get("cycles_bias"), None);
        let m = detect(&arm("0x00000000411fd400", &[])).unwrap();
        assert_eq!(m.name, "neoverse-v1");
        let m = detect(&arm("0x00000000410fd0c1", &[])).unwrap();
        assert!(m.sets.is_empty(), "N1 has no slot events");
        let m = detect(&arm("0x00000000410fd080", &[("slots", "3")])).unwrap();
        assert_eq!((m.name.as_str(), width(&m)), ("arm-generic", Some(3.0)));
    }

    #[test]
    fn names_override() {
        let m = by_name("Sapphirerapids", &CpuInfo::default()).unwrap();
        assert_eq!(sets_of(&m), vec!["intel-glc@Core", "intel-glc-gp@Core"]);
        let m = by_name("amd-zen5", &CpuInfo::default()).unwrap();
        assert_eq!(sets_of(&m), vec!["amd-zen5@Core"]);
        assert!(matches!(
            by_name("pentium", &CpuInfo::default()),
            Err(DetectError::UnknownName { .. })
        ));
    }
}
