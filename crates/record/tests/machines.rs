//! The fixture machines (`machines/*.tree`: Intel from Skylake-SP to
//! Lunar Lake, hybrid and E-core only, AMD Zen 4 and 5, Neoverse N2 and
//! V2, a virtual machine without a PMU, and settings that refuse), each
//! with perf 6.1, 6.8, 6.12 and 6.13 and at levels 1 and 2: what `perfq
//! record --print` says (or why it refuses) equals the machine's golden
//! file `golden/<machine>.txt`. `PERFQ_BLESS=1` rewrites the golden files
//! from what the code says now.

use std::path::Path;

mod common;

use common::{here, machines};
use perfq_record::{explain, plan, Machine, Perf, Privilege, Version};

const PERFS: [Version; 4] = [
    Version::new(6, 1, 0),
    Version::new(6, 8, 0),
    Version::new(6, 12, 0),
    Version::new(6, 13, 0),
];

/// The root of fixture machine `name` among `all`.
fn root_of<'a>(all: &'a [(String, tempfile::TempDir)], name: &str) -> &'a Path {
    all.iter().find(|(m, _)| m == name).expect(name).1.path()
}

/// perf of version `v`.
fn perf(v: Version) -> Perf {
    Perf {
        path: "perf".into(),
        version: Some(v),
        says: format!("perf version {v}"),
    }
}

/// What `--print` says on `root` with `perf`.
fn said(root: &Path, perf: Version, level: u8) -> String {
    let machine = Machine::read(root);
    let perf = self::perf(perf);
    let privilege = Privilege::read(root);
    match plan(
        &machine,
        &perf,
        privilege,
        &common::request(level, &["./workload", "--size", "10"], "perf.data".as_ref()),
    ) {
        Ok(p) => explain(&machine, &perf, &p),
        Err(e) => format!("error: {e}\n"),
    }
}

/// The golden file's text for one machine: a section per perf version
/// and level, headed `## perf N.N, level L`.
pub fn golden_text(root: &Path) -> String {
    let mut out = String::new();
    for perf in PERFS {
        for level in [1, 2] {
            out.push_str(&format!(
                "## perf {}.{}, level {level}\n",
                perf.major, perf.minor
            ));
            out.push_str(&said(root, perf, level));
            out.push('\n');
        }
    }
    out
}

#[test]
fn each_machine_and_perf_gets_its_golden_command_line() {
    let bless = std::env::var_os("PERFQ_BLESS").is_some();
    let mut differ = Vec::new();
    let all = machines();
    for (name, root) in &all {
        let text = golden_text(root.path());
        let golden = here().join("golden").join(format!("{name}.txt"));
        if bless {
            std::fs::write(&golden, &text).expect("bless");
            continue;
        }
        let want = std::fs::read_to_string(&golden).unwrap_or_default();
        if want != text {
            differ.push(format!("{}:\n{text}", golden.display()));
        }
    }
    assert!(all.len() >= 14, "{} machines", all.len());
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[test]
fn the_machine_is_read_as_perf_would_describe_it() {
    let all = machines();
    let root = |n: &str| {
        all.iter()
            .find(|(m, _)| m == n)
            .expect(n)
            .1
            .path()
            .to_path_buf()
    };
    let spr = Machine::read(&root("sapphirerapids-smt"));
    assert_eq!(spr.cpuid.as_deref(), Some("GenuineIntel,6,143,8"));
    assert_eq!(spr.arch.as_deref(), Some("x86_64"));
    assert_eq!(spr.smt, Some(true));
    assert_eq!(spr.kernel, Some(Version::new(6, 8, 0)));
    assert_eq!(spr.paranoid, Some(2));
    assert!(spr.pmu("cpu").expect("cpu").has_event("topdown-mem-bound"));
    let n2 = Machine::read(&root("neoverse-n2"));
    assert_eq!(n2.cpuid.as_deref(), Some("0x00000000410fd490"));
    assert_eq!(
        n2.pmu("armv8_pmuv3_0").and_then(|p| p.cap("slots")),
        Some("5")
    );
    let model = perfq_topdown::detect(&n2.cpu_info()).expect("N2 detected");
    assert_eq!(model.name, "neoverse-n2");
    let vm = Machine::read(&root("vm-no-pmu"));
    assert_eq!(vm.core_pmus().count(), 0);
    assert_eq!(Privilege::read(&root("vm-no-pmu")).euid, Some(1000));
}

/// docs/topdown.md's method table is `methods.td` as `method_table`
/// writes it (`PERFQ_BLESS=1` rewrites it).
#[test]
fn the_docs_method_table_is_made_from_the_data() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/topdown.md");
    let text = std::fs::read_to_string(&docs).expect("docs/topdown.md");
    let (begin, end) = ("<!-- methods:begin -->\n", "<!-- methods:end -->");
    let start = text.find(begin).expect("begin marker") + begin.len();
    let stop = text.find(end).expect("end marker");
    let table = perfq_record::method_table().expect("methods.td");
    if std::env::var_os("PERFQ_BLESS").is_some() {
        let new = format!("{}{table}{}", &text[..start], &text[stop..]);
        std::fs::write(&docs, new).expect("bless docs/topdown.md");
        return;
    }
    assert_eq!(&text[start..stop], table, "docs/topdown.md's method table");
}

/// Every group chosen on every fixture machine fits its core's counters:
/// the set's general-purpose counters for the machine's SMT setting, one
/// fewer for cycles where the NMI watchdog holds the cycles counter;
/// every group led by its sampler, `cycles` (or `slots`, then `cycles`).
#[test]
fn every_group_fits_the_machines_counters() {
    let mut checked = 0;
    for (name, root) in machines() {
        let machine = Machine::read(root.path());
        for perf in PERFS {
            for level in [1, 2] {
                let perf = Perf {
                    path: "perf".into(),
                    version: Some(perf),
                    says: format!("perf version {perf}"),
                };
                let request = common::request(level, &["./workload"], "perf.data".as_ref());
                let Ok(p) = plan(&machine, &perf, Privilege::read(root.path()), &request) else {
                    continue;
                };
                for c in &p.chosen {
                    let b = c.method.budget;
                    let watchdog = machine.nmi_watchdog == Some(true);
                    let counters = if machine.smt.unwrap_or(true) {
                        b.gp_smt
                    } else {
                        b.gp
                    };
                    for g in &c.groups {
                        let gp = g
                            .iter()
                            .filter(|i| !b.free.contains(i) || (watchdog && i.as_str() == "cycles"))
                            .count() as u32;
                        let room = match watchdog && !b.free.iter().any(|f| f == "cycles") {
                            true => counters - 1,
                            false => counters,
                        };
                        assert!(gp <= room, "{name}, {perf:?}: {g:?} takes {gp} of {room}");
                        let sampler = match g[0].as_str() {
                            "slots" => &g[1],
                            _ => &g[0],
                        };
                        assert_eq!(sampler, "cycles", "{name}: {g:?}");
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 100, "{checked} groups");
}

/// `--all-threads`: with perf ≤ 6.12 every CPU is recorded while the
/// command runs (`-a`, which perf_event_paranoid must allow) and the
/// answer keeps the command's processes; perf 6.13 inherits the group,
/// and nothing changes.
#[test]
fn all_threads_with_an_older_perf_records_every_cpu() {
    let all = machines();
    let root = |name: &str| root_of(&all, name);
    let mut request = common::request(1, &["./workload"], "perf.data".as_ref());
    request.all_threads = true;
    let icx = root("icelake-server-root");
    let machine = Machine::read(icx);
    let old = plan(&machine, &perf(PERFS[0]), Privilege::read(icx), &request).expect("plan");
    assert!(old.only_command);
    assert!(old.argv.contains(&"-a".to_string()), "{:?}", old.argv);
    assert_eq!(old.argv.last().map(String::as_str), Some("./workload"));
    assert!(
        old.notes
            .iter()
            .any(|n| n.contains("every CPU is recorded")),
        "{:?}",
        old.notes
    );
    let new = plan(&machine, &perf(PERFS[3]), Privilege::read(icx), &request).expect("plan");
    assert!(!new.only_command);
    assert!(!new.argv.contains(&"-a".to_string()), "{:?}", new.argv);
    // Without root, kernel.perf_event_paranoid 2 does not allow -a.
    let spr = root("sapphirerapids-smt");
    let refused = plan(
        &Machine::read(spr),
        &perf(PERFS[0]),
        Privilege::read(spr),
        &request,
    );
    let e = refused.expect_err("paranoid 2 refuses -a").to_string();
    assert!(e.contains("--all-threads") && e.contains("=0"), "{e}");
}

/// `--off-cpu` adds what the machine allows: the tracepoint where tracefs
/// names it and the user may read its fields, else context-switch
/// records, else a refusal that says what to do.
#[test]
fn off_cpu_takes_what_the_machine_allows() {
    let all = machines();
    let root = |name: &str| root_of(&all, name);
    let mut request = common::request(1, &["./workload"], "perf.data".as_ref());
    request.off_cpu = true;
    request.events = Some("{task-clock,page-faults}:S".into());
    let tracefs = |root: &Path| {
        let dir = root.join("sys/kernel/tracing/events/sched/sched_switch");
        std::fs::create_dir_all(&dir).expect("tracefs");
        std::fs::write(dir.join("id"), "372\n").expect("id");
    };
    let planned = |name: &str, v: Version, request: &perfq_record::Request| {
        let r = root(name);
        plan(&Machine::read(r), &perf(v), Privilege::read(r), request)
    };
    let args = |p: &perfq_record::Plan| p.argv.join(" ");
    // Root, without tracefs: switch records, and why.
    let p = planned("icelake-server-root", PERFS[3], &request).expect("plan");
    assert!(
        args(&p).contains("--switch-events") && !args(&p).contains("sched:"),
        "{}",
        args(&p)
    );
    assert!(
        p.notes.iter().any(|n| n.contains("mount tracefs")),
        "{:?}",
        p.notes
    );
    // Root, with tracefs: the tracepoint, and switch records for the
    // returns of one command's threads.
    tracefs(root("icelake-server-root"));
    let p = planned("icelake-server-root", PERFS[3], &request).expect("plan");
    assert!(
        args(&p).contains("-e sched:sched_switch --switch-events -o"),
        "{}",
        args(&p)
    );
    // A rate would sample the tracepoint too.
    request.rate = Some(perfq_record::Rate::Frequency(999));
    let p = planned("icelake-server-root", PERFS[3], &request).expect("plan");
    assert!(!args(&p).contains("sched:"), "{}", args(&p));
    assert!(
        p.notes.iter().any(|n| n.contains("-F and -c")),
        "{:?}",
        p.notes
    );
    request.rate = None;
    // A user with paranoid 2 may not read the tracepoint's fields.
    tracefs(root("icelake-server"));
    let p = planned("icelake-server", PERFS[3], &request).expect("plan");
    assert!(!args(&p).contains("sched:"), "{}", args(&p));
    assert!(
        p.notes.iter().any(|n| n.contains("paranoid -1")),
        "{:?}",
        p.notes
    );
    // Every CPU: the tracepoint with wakeups.
    request.target = perfq_record::Target::SystemWide;
    request.duration = Some(5.0);
    let p = planned("icelake-server-root", PERFS[3], &request).expect("plan");
    assert!(
        args(&p).contains("-e sched:sched_switch -e sched:sched_wakeup"),
        "{}",
        args(&p)
    );
    // A perf without --switch-events, on a user's machine: one line.
    request.target = perfq_record::Target::Command {
        argv: vec!["./workload".into()],
        all_cpus: false,
    };
    let e = planned("icelake-server", Version::new(4, 2, 0), &request).expect_err("refused");
    let e = e.to_string();
    assert!(
        e.contains("sched:sched_switch") && e.contains("--switch-events"),
        "{e}"
    );
}
