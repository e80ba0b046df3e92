//! CPU detection on the headers of every corpus capture: each recorded
//! CPU id finds the model perf's own mapfile gives it (the expected names
//! below are perf's table names for those CPUs), and no capture is given
//! a model of another vendor or architecture.

mod common;

use std::collections::BTreeMap;

use perfq_reader::Capture;
use perfq_topdown::{detect, CpuInfo, DetectError, PmuInfo};

/// HEADER_CPUID → perf's table (pmu-events/arch/x86/mapfile.csv,
/// arm64/mapfile.csv) for the CPUs the corpus was recorded on.
const EXPECTED: &[(&str, &str)] = &[
    ("GenuineIntel,6,42,7", "sandybridge"), // i5-2467M
    ("GenuineIntel,6,78,3", "skylake"),     // m7-6Y75
    ("GenuineIntel,6,63,0", "haswellx"),    // Xeon @ 2.30GHz (Haswell-EP)
    ("GenuineIntel,6,63,2", "haswellx"),    // i7-5820K
    ("GenuineIntel,6,61,4", "broadwell"),   // i7-5600U
    ("GenuineIntel,6,165,5", "skylake"),    // i7-10700K (Comet Lake)
    ("GenuineIntel,6,151,2", "alderlake"),  // i9-12900K
    ("GenuineIntel,6,154,3", "alderlake"),  // i7-1260P
    ("GenuineIntel,6,186,3", "alderlake"),  // i7-1365U (Raptor Lake)
    ("GenuineIntel,6,45,7", "jaketown"),    // Xeon E5-2690
    ("GenuineIntel,6,85,4", "skylakex"),    // Xeon W-2135, Platinum 8173M, Gold 6154/6148
    ("GenuineIntel,6,85,3", "skylakex"),    // Platinum 8124M
    ("GenuineIntel,6,79,0", "broadwellx"),  // Xeon @ 2.20GHz
    ("GenuineIntel,6,69,1", "haswell"),     // Celeron 2955U
    ("GenuineIntel,6,62,4", "ivytown"),     // Xeon E5-2680 v2
    ("GenuineIntel,6,58,9", "ivybridge"),   // i7-3770
    ("GenuineIntel,6,44,2", "westmere"),    // Xeon X5660
    ("GenuineIntel,6,30,5", "nehalem"),     // Xeon X3430
    ("GenuineIntel,6,28,10", "bonnell"),    // Atom N570
    ("GenuineIntel,6,158,13", "skylake"),   // i7-9700 (Coffee Lake)
    ("AuthenticAMD,23,113,0", "amdzen2"),   // Ryzen 9 3900X
    ("AuthenticAMD,23,49,0", "amdzen2"),    // Threadripper 3960X
    ("AuthenticAMD,25,17,0", "amdzen4"),    // EPYC 9004 engineering sample
    ("0x00000000410fd080", "arm-generic"),  // Cortex-A72: no per-core table
];

#[test]
fn corpus_cpu_ids_find_perfs_model() {
    let Some(corpus) = common::corpus() else {
        common::skip("../shared/corpus not found; CPU detection not checked on it");
        return;
    };
    let mut seen: BTreeMap<String, (String, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut no_cpuid = 0;
    for entry in common::catalog(&corpus) {
        let rel = entry["path"].as_str().unwrap_or_default().to_string();
        let Ok(c) = Capture::open(corpus.join(&rel)) else {
            continue;
        };
        let m = c.meta();
        let pmus = m
            .pmu_mappings
            .iter()
            .map(|p| PmuInfo {
                type_: Some(p.type_),
                name: p.name.clone(),
                caps: m
                    .pmu_caps
                    .iter()
                    .filter(|c| c.pmu == p.name)
                    .flat_map(|c| c.caps.clone())
                    .collect(),
            })
            .collect();
        let info = CpuInfo {
            arch: m.arch.clone(),
            cpuid: m.cpuid.clone(),
            pmus,
        };
        match (detect(&info), m.cpuid.as_deref()) {
            (Ok(model), Some(id)) => {
                let e = seen
                    .entry(id.to_string())
                    .or_insert((model.name.clone(), 0));
                e.1 += 1;
                match EXPECTED.iter().find(|x| x.0 == id) {
                    Some((_, want)) if *want == model.name => {}
                    Some((_, want)) => {
                        failures.push(format!("{rel}: {id} → {} (perf: {want})", model.name))
                    }
                    None => failures.push(format!("{rel}: {id} → {}: not in EXPECTED", model.name)),
                }
                // Vendor and architecture agree with the description.
                let desc = m.cpu_desc.as_deref().unwrap_or("");
                let intel = model.sets.iter().any(|s| s.set.name.starts_with("intel"));
                let amd = model.sets.iter().any(|s| s.set.name.starts_with("amd"));
                if (intel && !id.starts_with("GenuineIntel"))
                    || (amd && !id.starts_with("AuthenticAMD"))
                {
                    failures.push(format!("{rel}: {id} ({desc}) given {}", model.name));
                }
            }
            (Err(DetectError::NoCpuid { .. }), None) => no_cpuid += 1,
            (r, id) => failures.push(format!("{rel}: cpuid {id:?}: {r:?}")),
        }
    }
    eprintln!(
        "corpus: {} distinct CPU ids detected, {no_cpuid} captures without a CPU id",
        seen.len()
    );
    for (id, (model, n)) in &seen {
        eprintln!("  {id} → {model} ({n} captures)");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(seen.len() >= 20, "only {} CPU ids seen", seen.len());
}
