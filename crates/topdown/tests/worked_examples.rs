//! Worked examples, through the formula tables: per family, counts chosen
//! so that its published formulas (the sources `crates/topdown/sets/`
//! names) give the shares written out below
//! (the query layer's SQL is checked against the same numbers end to end
//! in crates/cli/tests/topdown.rs).

use perfq_topdown::{by_name, CpuInfo, Model};

fn model(name: &str, caps_slots: Option<&str>) -> Model {
    let pmus = caps_slots
        .map(|s| perfq_topdown::PmuInfo {
            type_: Some(10),
            name: "armv8_pmuv3_0".into(),
            caps: vec![("slots".into(), s.into())],
        })
        .into_iter()
        .collect();
    by_name(
        name,
        &CpuInfo {
            pmus,
            ..CpuInfo::default()
        },
    )
    .unwrap()
}

/// Node values in percent, rounded to 4 decimals, for the given sums
/// (roles not given are absent from the capture).
fn percents(m: &Model, sums: &[(&str, f64)]) -> Vec<(String, f64)> {
    let present = |r: &str| sums.iter().any(|s| s.0 == r);
    let c = m.sets[0].compile(&present);
    let get = |r: &str| sums.iter().find(|s| s.0 == r).map(|s| s.1);
    c.evaluate(&get)
        .into_iter()
        .map(|(n, v)| (n, (v.unwrap() * 100.0 * 10_000.0).round() / 10_000.0))
        .collect()
}

fn assert_nodes(got: &[(String, f64)], want: &[(&str, f64)]) {
    for (n, v) in want {
        let g = got
            .iter()
            .find(|x| x.0 == *n)
            .unwrap_or_else(|| panic!("no {n} in {got:?}"));
        assert_eq!(g.1, *v, "{n}: {got:?}");
    }
}

const ICL_L1: [(&str, f64); 5] = [
    ("slots", 10_000_000.0),
    ("td_retiring", 2_980_392.0),
    ("td_bad_spec", 980_392.0),
    ("td_fe_bound", 2_509_803.0),
    ("td_be_bound", 3_529_411.0),
];

#[test]
fn icelake_l1_without_and_with_corrections() {
    let m = model("icelake", None);
    let want = [
        ("retiring", 29.8039),
        ("frontend_bound", 25.0980),
        ("backend_bound", 35.2941),
        ("bad_speculation", 9.8039),
    ];
    assert_nodes(&percents(&m, &ICL_L1), &want);
    let mut sums = ICL_L1.to_vec();
    sums.extend([("uop_dropping", 50_000.0), ("clears_count", 20_000.0)]);
    let want = [
        ("frontend_bound", 24.5980),
        ("backend_bound", 36.2941),
        ("retiring", 29.8039),
        ("bad_speculation", 9.3039),
    ];
    assert_nodes(&percents(&m, &sums), &want);
}

#[test]
fn sapphire_rapids_l2_and_flags() {
    let m = model("sapphirerapids", None);
    let mut sums = ICL_L1.to_vec();
    sums.extend([
        ("td_heavy_ops", 588_235.0),
        ("td_br_mispredict", 784_313.0),
        ("td_fetch_lat", 1_568_627.0),
        ("td_mem_bound", 2_352_941.0),
    ]);
    let got = percents(&m, &sums);
    assert_nodes(
        &got,
        &[
            ("heavy_operations", 5.8824),
            ("light_operations", 23.9216),
            ("branch_mispredicts", 7.8431),
            ("machine_clears", 1.9608),
            ("fetch_latency", 15.6863),
            ("fetch_bandwidth", 9.4118),
            ("memory_bound", 23.5294),
            ("core_bound", 11.7647),
        ],
    );
    let c = m.sets[0].compile(&|r| sums.iter().any(|s| s.0 == r));
    let get = |r: &str| sums.iter().find(|s| s.0 == r).map(|s| s.1);
    let flags = c.flags(&c.evaluate(&get));
    assert!(flags["backend_bound"] && flags["memory_bound"]);
    assert!(flags["frontend_bound"] && flags["fetch_latency"]);
    assert!(!flags["bad_speculation"] && !flags["branch_mispredicts"] && !flags["machine_clears"]);
    // 11.8% > 10% under a flagged Backend_Bound.
    assert!(flags["core_bound"]);
}

#[test]
fn skylake_l1_l2() {
    let m = model("skylake", None);
    let got = percents(
        &m,
        &[
            ("cycles", 1_000_000.0),
            ("idq_not_delivered", 1_000_000.0),
            ("uops_issued", 1_600_000.0),
            ("uops_retired_slots", 1_400_000.0),
            ("recovery_cycles", 25_000.0),
            ("idq_0_uops", 150_000.0),
            ("br_misp", 8_000.0),
            ("clears", 2_000.0),
        ],
    );
    assert_nodes(
        &got,
        &[
            ("frontend_bound", 25.0),
            ("bad_speculation", 7.5),
            ("retiring", 35.0),
            ("backend_bound", 32.5),
            ("fetch_latency", 15.0),
            ("fetch_bandwidth", 10.0),
            ("branch_mispredicts", 6.0),
            ("machine_clears", 1.5),
        ],
    );
}

const ZEN: [(&str, f64); 12] = [
    ("cycles", 1_000_000.0),
    ("fe_slots", 1_500_000.0),
    ("be_slots", 2_400_000.0),
    ("dispatched", 2_000_000.0),
    ("retired", 1_800_000.0),
    ("smt_slots", 100_000.0),
    ("fe_cycles", 150_000.0),
    ("br_misp", 9_000.0),
    ("resyncs", 1_000.0),
    ("load_not_complete", 300_000.0),
    ("not_complete", 500_000.0),
    ("ucode", 90_000.0),
];

#[test]
fn zen4_l1_l2_and_zen5() {
    let got = percents(&model("amdzen4", None), &ZEN);
    assert_nodes(
        &got,
        &[
            ("frontend_bound", 25.0),
            ("backend_bound", 40.0),
            ("bad_speculation", 3.3333),
            ("retiring", 30.0),
            ("smt_contention", 1.6667),
            ("fetch_latency", 15.0),
            ("fetch_bandwidth", 10.0),
            ("branch_mispredicts", 3.0),
            ("machine_clears", 0.3333),
            ("memory_bound", 24.0),
            ("core_bound", 16.0),
            ("light_operations", 28.5),
            ("heavy_operations", 1.5),
        ],
    );
    let sum: f64 = [
        "frontend_bound",
        "backend_bound",
        "bad_speculation",
        "retiring",
        "smt_contention",
    ]
    .iter()
    .map(|n| got.iter().find(|g| g.0 == *n).unwrap().1)
    .sum();
    assert!((sum - 100.0).abs() < 1e-3);
    let got = percents(&model("amdzen5", None), &ZEN);
    assert_nodes(
        &got,
        &[
            ("frontend_bound", 18.75),
            ("backend_bound", 30.0),
            ("bad_speculation", 2.5),
            ("retiring", 22.5),
        ],
    );
}

const ARM: [(&str, f64); 7] = [
    ("cycles", 1_000_000.0),
    ("stall_slot_frontend", 2_400_000.0),
    ("stall_slot_backend", 2_000_000.0),
    ("stall_slot", 4_400_000.0),
    ("op_retired", 3_000_000.0),
    ("op_spec", 3_300_000.0),
    ("br_mis_pred", 5_000.0),
];

#[test]
fn neoverse_v2_v1_and_generic() {
    let v2 = percents(&model("neoverse-v2", Some("0x00000008")), &ARM);
    assert_nodes(
        &v2,
        &[
            ("frontend_bound", 29.5),
            ("backend_bound", 23.5),
            ("bad_speculation", 6.0909),
            ("retiring", 40.9091),
        ],
    );
    let generic = percents(&model("arm-sbsa", Some("8")), &ARM[..6]);
    assert_nodes(
        &generic,
        &[
            ("frontend_bound", 30.0),
            ("backend_bound", 25.0),
            ("bad_speculation", 4.0909),
            ("retiring", 40.9091),
        ],
    );
    let v1 = percents(&model("neoverse-v1", Some("8")), &ARM);
    assert_nodes(
        &v1,
        &[("frontend_bound", 28.0), ("bad_speculation", 6.0909)],
    );
}

/// The general-purpose sets (no PERF_METRICS), one interval: SLOTS_P
/// 10,000,000; IDQ_UOPS_NOT_DELIVERED.CORE 2,500,000; UOP_DROPPING
/// 100,000; BACKEND_BOUND_SLOTS 3,000,000; CLEARS_COUNT 20,000;
/// UOPS_RETIRED.SLOTS 3,500,000.
/// Ice Lake: FE = (2.5M − 0.1M)/10M = 24 %; BE = (3M + 5 × 20k)/10M =
/// 31 %; Retiring 35 %; Bad Speculation = 1 − 0.90 = 10 %.
/// Golden Cove: no CLEARS_COUNT term, so BE = 30 % and Bad Speculation
/// 11 %. Lion Cove: no correction at all, so FE = 25 %, BE = 30 % and Bad
/// Speculation 10 %, whatever UOP_DROPPING counted.
const GP: [(&str, f64); 6] = [
    ("slots_p", 10_000_000.0),
    ("idq_not_delivered", 2_500_000.0),
    ("uop_dropping", 100_000.0),
    ("be_slots", 3_000_000.0),
    ("clears_count", 20_000.0),
    ("retired_slots", 3_500_000.0),
];

#[test]
fn general_purpose_ice_lake_golden_cove_and_lion_cove() {
    let icl = model("intel-icl-gp", None);
    let want = [
        ("frontend_bound", 24.0),
        ("backend_bound", 31.0),
        ("retiring", 35.0),
        ("bad_speculation", 10.0),
    ];
    assert_nodes(&percents(&icl, &GP), &want);
    let glc = model("intel-glc-gp", None);
    let sums: Vec<_> = GP
        .iter()
        .copied()
        .filter(|s| s.0 != "clears_count")
        .collect();
    let want = [
        ("frontend_bound", 24.0),
        ("backend_bound", 30.0),
        ("retiring", 35.0),
        ("bad_speculation", 11.0),
    ];
    assert_nodes(&percents(&glc, &sums), &want);
    // Without the optional corrections: FE 25 %, BE 30 %.
    let bare: Vec<_> = GP
        .iter()
        .copied()
        .filter(|s| s.0 != "clears_count" && s.0 != "uop_dropping")
        .collect();
    assert_nodes(
        &percents(&icl, &bare),
        &[
            ("frontend_bound", 25.0),
            ("backend_bound", 30.0),
            ("bad_speculation", 10.0),
        ],
    );
    let lnc = model("intel-lnc-gp", None);
    assert_nodes(
        &percents(&lnc, &GP),
        &[
            ("frontend_bound", 25.0),
            ("backend_bound", 30.0),
            ("retiring", 35.0),
            ("bad_speculation", 10.0),
        ],
    );
}
