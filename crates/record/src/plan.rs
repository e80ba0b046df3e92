//! The choice `perfq record` makes on a machine: which formula sets its
//! CPU uses (the same detection as for a capture's header), for each the
//! first method of `methods.td` that this perf can open, this kernel
//! offers and this core's counters hold, and the `perf record` command
//! line that records them. Every refusal says what to do.

use std::path::PathBuf;

use perfq_topdown::{DetectError, Matcher, Method, Model, PmuClass, SetUse, TooFew};

use crate::machine::{Machine, Pmu};
use crate::perf::Perf;
use crate::privilege::Privilege;
use crate::version::Version;

/// What is recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A command perf starts; with `all_cpus`, every CPU is recorded while
    /// it runs (`-a -- CMD`).
    Command { argv: Vec<String>, all_cpus: bool },
    /// Every CPU (`-a`).
    SystemWide,
    /// Running processes (`-p`).
    Pids(Vec<u32>),
}

/// How often samples are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rate {
    /// `-F HZ`.
    Frequency(u32),
    /// `-c PERIOD`.
    Period(u64),
}

/// What the user asked for.
#[derive(Clone, Debug)]
pub struct Request {
    pub target: Target,
    /// Stop after this many seconds.
    pub duration: Option<f64>,
    /// perf's `--call-graph` value (`fp`, `dwarf,16384`, `lbr`).
    pub call_graph: Option<String>,
    pub rate: Option<Rate>,
    /// 1 or 2.
    pub level: u8,
    /// A group to record instead of the top-down events.
    pub events: Option<String>,
    /// `--cpu-model`: the CPU to record for, instead of the one detected.
    pub cpu_model: Option<String>,
    /// Where perf writes the capture.
    pub output: PathBuf,
    /// Sample every thread and process a command starts, also where perf
    /// cannot inherit a sampled read group (≤ 6.12): then every CPU is
    /// recorded while the command runs and the answer keeps its
    /// processes.
    pub all_threads: bool,
    /// Record where threads wait too (`crate::off_cpu`).
    pub off_cpu: bool,
}

/// One formula set's group, as chosen.
#[derive(Clone, Debug)]
pub struct Chosen {
    pub method: &'static Method,
    /// The PMU its events are opened on.
    pub pmu: String,
    /// Its groups as recorded here (the method's, cut to fit the
    /// counters there are), each the set's roles and generic events.
    pub groups: Vec<Vec<String>>,
    /// The groups as perf's `-e` takes them.
    pub spelled: String,
    /// Why this method: the conditions it met.
    pub why: String,
}

/// What `perfq record` will run.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The CPU model (none with `--events`).
    pub model: Option<Model>,
    /// One group per core type.
    pub chosen: Vec<Chosen>,
    /// Caveats the user should know before recording.
    pub notes: Vec<String>,
    /// The perf command line, `perf` first.
    pub argv: Vec<String>,
    /// Every CPU is recorded for the command's sake (`all_threads` with a
    /// perf that cannot inherit the group): only the samples of the
    /// processes the command started answer.
    pub only_command: bool,
}

/// Why nothing can be recorded, with what to do.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    #[error(
        "no `perf` on PATH: install it (Debian: `apt install linux-perf`; Ubuntu: `apt install \
         linux-tools-common linux-tools-$(uname -r)`; Fedora, RHEL: `dnf install perf`)"
    )]
    NoPerf,
    #[error(
        "kernel.perf_event_paranoid is {value}: {what} needs it at most {needed} \
         (`sudo sysctl kernel.perf_event_paranoid={needed}`), or run perfq as root"
    )]
    Paranoid {
        value: i32,
        needed: i32,
        what: &'static str,
    },
    #[error(
        "no hardware PMU: /sys/bus/event_source/devices holds only {found} (a virtual machine \
         without PMU passthrough?); record other events with --events, e.g. --events \
         '{{task-clock,page-faults}}'"
    )]
    NoPmu { found: String },
    #[error("{0}")]
    Cpu(DetectError),
    #[error(
        "{model} ({note}): no top-down formula set; if this CPU is like another, name it with \
         --cpu-model ({known})"
    )]
    NoSets {
        model: String,
        note: String,
        known: String,
    },
    #[error("no {pmu} PMU on this machine for {set}; the machine has {found}")]
    MissingPmu {
        pmu: String,
        set: String,
        found: String,
    },
    #[error("{set}: cannot be recorded here: {}", reasons.join("; "))]
    NoMethod { set: String, reasons: Vec<String> },
    #[error(
        "off-CPU time cannot be recorded with this perf: it needs sched:sched_switch (tracefs \
         under /sys/kernel/tracing, and root or kernel.perf_event_paranoid -1) or \
         --switch-events (perf 4.3 or later)"
    )]
    NoOffCpu,
}

/// The PMU a set's events go on, on this machine.
fn pmu_for(machine: &Machine, class: PmuClass) -> String {
    match class {
        PmuClass::Core if machine.pmu("cpu_core").is_some() => "cpu_core".into(),
        PmuClass::Core => "cpu".into(),
        PmuClass::Atom => "cpu_atom".into(),
        PmuClass::Arm => machine
            .core_pmus()
            .find(|p| perfq_topdown::is_arm_core_pmu(&p.name))
            .map_or_else(|| "armv8_pmuv3_0".into(), |p| p.name.clone()),
    }
}

/// The kernel's name for an Intel topdown pseudo-event (`0x8000` is
/// topdown-retiring), and `slots`.
fn kernel_name(config: u64) -> Option<&'static str> {
    const METRICS: [&str; 8] = [
        "topdown-retiring",
        "topdown-bad-spec",
        "topdown-fe-bound",
        "topdown-be-bound",
        "topdown-heavy-ops",
        "topdown-br-mispredict",
        "topdown-fetch-lat",
        "topdown-mem-bound",
    ];
    match config {
        0x400 => Some("slots"),
        c if c & 0xff == 0 && (0x8000..=0x8700).contains(&c) => {
            METRICS.get(((c - 0x8000) >> 8) as usize).copied()
        }
        _ => None,
    }
}

/// How an item of a method's group is spelled inside `pmu/.../`, and
/// whether it is a kernel-named event (which the PMU must list).
fn spelling(method: &Method, item: &str) -> (String, bool) {
    let Some(role) = method.set.role(item) else {
        return (item.to_string(), false);
    };
    // perf's generic `cycles` and `instructions` on x86 (a fixed counter
    // each); on Arm the PMU's own CPU_CYCLES, so that every member of the
    // group is on the same PMU whichever core type perf maps generic
    // events to.
    if method.set.pmu != PmuClass::Arm {
        if role.matchers.contains(&Matcher::Hw(0)) {
            return ("cycles".into(), false);
        }
        if role.matchers.contains(&Matcher::Hw(1)) {
            return ("instructions".into(), false);
        }
    }
    for m in &role.matchers {
        if let Matcher::Raw(c) = m {
            if let Some(name) = kernel_name(*c) {
                return (name.into(), true);
            }
        }
    }
    match role.matchers.iter().find_map(|m| match m {
        Matcher::Raw(c) => Some(*c),
        Matcher::Hw(_) => None,
    }) {
        Some(c) => (format!("config={c:#x}"), false),
        None => (item.to_string(), false),
    }
}

/// A method's groups as perf's `-e` takes them: generic events bare on a
/// PMU that is the only core PMU, everything else as `pmu/term/`.
fn spell_groups(method: &Method, groups: &[Vec<&str>], pmu: &str, sole: bool) -> String {
    let spelled: Vec<String> = groups
        .iter()
        .map(|group| {
            let items: Vec<String> = group
                .iter()
                .map(|item| match spelling(method, item).0 {
                    s if sole && !s.contains('=') => s,
                    s => format!("{pmu}/{s}/"),
                })
                .collect();
            format!("{{{}}}:S", items.join(","))
        })
        .collect();
    spelled.join(",")
}

/// The kernel-named events (`slots`, `topdown-*`) a method's groups use,
/// which the PMU must list, once each.
fn kernel_events(method: &Method) -> Vec<String> {
    let mut named = Vec::new();
    for item in method.items() {
        let (s, kernel) = spelling(method, item);
        if kernel && !named.contains(&s) {
            named.push(s);
        }
    }
    named
}

/// The method's groups as its table row gives them.
fn as_written(method: &Method) -> Vec<Vec<&str>> {
    method
        .groups
        .iter()
        .map(|g| g.iter().map(String::as_str).collect())
        .collect()
}

fn perf_version_ok(method: &Method, perf: Option<Version>) -> Result<(), String> {
    match (method.perf_min, perf) {
        (None, _) => Ok(()),
        (Some((a, b)), Some(v)) if (v.major, v.minor) >= (a, b) => Ok(()),
        (Some((a, b)), Some(v)) => Err(format!(
            "{} needs perf {a}.{b} or later (perf {v} reorders a group with topdown metrics so \
             that the kernel refuses it)",
            method.name
        )),
        (Some((a, b)), None) => Err(format!(
            "{} needs perf {a}.{b} or later, and this perf's version is unknown",
            method.name
        )),
    }
}

/// The methods of a set (shallowest first) in the order they are tried.
fn method_order(methods: &[&'static Method], level: u8) -> Vec<&'static Method> {
    // The shallowest method that reaches the level asked for, then the
    // deeper ones, then the shallower ones.
    let mut order: Vec<&Method> = methods
        .iter()
        .copied()
        .filter(|m| m.level >= level)
        .collect();
    order.extend(methods.iter().rev().copied().filter(|m| m.level < level));
    order
}

/// Where a formula set's methods are tried: this machine and perf, the
/// PMU the set's events go on, and what the user asked for.
struct Trial<'a> {
    machine: &'a Machine,
    perf: Option<Version>,
    /// The PMU the set's events go on, and its name.
    pmu: &'a Pmu,
    pmu_name: &'a str,
    /// The set's name, for notes.
    set_name: &'a str,
    /// The level asked for.
    level: u8,
    /// The PMU is the only core PMU the model uses.
    sole: bool,
    /// SMT is on (or unknown).
    smt: bool,
    /// The NMI watchdog holds a counter.
    watchdog: bool,
}

impl Trial<'_> {
    /// The method `m` as chosen here, with its notes; else why it cannot
    /// be recorded here.
    fn choose(&self, m: &'static Method) -> Result<(Chosen, Vec<String>), String> {
        perf_version_ok(m, self.perf)?;
        self.kernel_offers(m)?;
        let counters = self.counters(m);
        let groups = match m.layout(counters, !self.watchdog) {
            Ok(groups) => groups,
            Err(TooFew { needed }) => return Err(self.too_few(m, needed, counters)),
        };
        let notes = self.notes(m, groups.len());
        let spelled = spell_groups(m, &groups, self.pmu_name, self.sole);
        let why = self.why(m, &groups, counters);
        let groups = groups
            .iter()
            .map(|g| g.iter().map(|i| i.to_string()).collect())
            .collect();
        Ok((
            Chosen {
                method: m,
                pmu: self.pmu_name.to_string(),
                groups,
                spelled,
                why,
            },
            notes,
        ))
    }

    /// Whether the PMU lists every kernel-named event `m` uses; else why
    /// `m` cannot be recorded.
    fn kernel_offers(&self, m: &Method) -> Result<(), String> {
        let pmu_name = self.pmu_name;
        let named = kernel_events(m);
        let missing: Vec<&String> = named.iter().filter(|n| !self.pmu.has_event(n)).collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(format!(
            "{} needs the kernel's {} events on {pmu_name}, which this kernel{} does not offer",
            m.name,
            missing
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            self.machine
                .kernel
                .map(|k| format!(" ({k})"))
                .unwrap_or_default()
        ))
    }

    /// The general-purpose counters `m`'s groups have here: fewer with
    /// SMT on, and one fewer when the NMI watchdog holds one that `m`
    /// does not leave free.
    fn counters(&self, m: &Method) -> u32 {
        let cycles_free = m.budget.free.iter().any(|f| f == "cycles");
        let mut counters = if self.smt {
            m.budget.gp_smt
        } else {
            m.budget.gp
        };
        if self.watchdog && !cycles_free {
            counters = counters.saturating_sub(1);
        }
        counters
    }

    /// Why `m`, which takes `needed` counters, does not fit on the
    /// `counters` there are, with what holds counters back.
    fn too_few(&self, m: &Method, needed: u32, counters: u32) -> String {
        let pmu_name = self.pmu_name;
        let cause = match (self.watchdog, self.smt && m.budget.gp_smt < m.budget.gp) {
            (true, _) => " (the NMI watchdog holds a counter: `sudo sysctl kernel.nmi_watchdog=0`)",
            (false, true) => " (SMT is on: the threads of a core share its counters)",
            _ => "",
        };
        format!(
            "{} takes {needed} general-purpose counters and {pmu_name} has {counters} here{cause}",
            m.name
        )
    }

    /// The caveats of recording `m` here as `group_count` groups: a level
    /// below the one asked for, groups that take turns.
    fn notes(&self, m: &Method, group_count: usize) -> Vec<String> {
        let (level, pmu_name) = (self.level, self.pmu_name);
        let mut notes = Vec::new();
        if m.level < level {
            notes.push(format!(
                "{}: no method records level {level} here; recording level {}",
                self.set_name, m.level
            ));
        }
        if group_count > m.groups.len() {
            notes.push(format!(
                "{}: {} needs more counters than {pmu_name} has here, so it is recorded as {} \
                 groups that take turns on the counters, each led by cycles, by which perfq \
                 scales them to the whole run",
                self.set_name, m.name, group_count
            ));
        }
        notes
    }

    /// Why `m` was chosen: its level, the counters its groups take of the
    /// `counters` there are, and the perf it needs.
    fn why(&self, m: &Method, groups: &[Vec<&str>], counters: u32) -> String {
        let needed = groups
            .iter()
            .map(|g| m.gp_of_group(g, !self.watchdog))
            .max()
            .unwrap_or(0);
        format!(
            "{}: level {}, {}{}",
            m.name,
            m.level,
            match groups.len() {
                1 => format!("{needed} of {counters} general-purpose counters"),
                n => format!(
                    "{n} groups, at most {needed} of {counters} general-purpose counters each"
                ),
            },
            match m.perf_min {
                Some((a, b)) => format!(", perf ≥ {a}.{b}"),
                None => String::new(),
            }
        )
    }
}

/// Chooses the method for one formula set.
fn choose_for(
    machine: &Machine,
    perf: Option<Version>,
    set_use: &SetUse,
    level: u8,
    sole: bool,
) -> Result<(Chosen, Vec<String>), Refusal> {
    let set = set_use.set;
    let pmu_name = pmu_for(machine, set_use.pmu);
    let Some(pmu) = machine.pmu(&pmu_name) else {
        return Err(Refusal::MissingPmu {
            pmu: pmu_name,
            set: set.name.clone(),
            found: pmu_list(machine),
        });
    };
    let methods = perfq_topdown::methods_for(&set.name)
        .map_err(|e| Refusal::Cpu(DetectError::Tables(e.to_string())))?;
    let trial = Trial {
        machine,
        perf,
        pmu,
        pmu_name: &pmu_name,
        set_name: &set.name,
        level,
        sole,
        smt: machine.smt.unwrap_or(true),
        watchdog: machine.nmi_watchdog.unwrap_or(false),
    };
    let mut reasons = Vec::new();
    for m in method_order(&methods, level) {
        match trial.choose(m) {
            Ok(chosen) => return Ok(chosen),
            Err(why) => reasons.push(why),
        }
    }
    Err(Refusal::NoMethod {
        set: set.name.clone(),
        reasons,
    })
}

/// The first of `alternatives` (sets on one PMU) with a method that fits;
/// else every reason why none does.
fn first_that_fits(
    machine: &Machine,
    perf: Option<Version>,
    alternatives: &[&SetUse],
    level: u8,
    sole: bool,
) -> Result<(Chosen, Vec<String>), Refusal> {
    let mut refusals = Vec::new();
    for u in alternatives {
        match choose_for(machine, perf, u, level, sole) {
            Ok((chosen, mut notes)) => {
                // Say why the preferred sets were passed over.
                for r in &refusals {
                    notes.insert(
                        0,
                        format!("{r}; recording {} instead", chosen.method.set.name),
                    );
                }
                return Ok((chosen, notes));
            }
            Err(e) => refusals.push(e),
        }
    }
    if refusals.len() == 1 {
        return Err(refusals.remove(0));
    }
    let mut sets = Vec::new();
    let mut reasons = Vec::new();
    for r in refusals {
        match r {
            Refusal::NoMethod {
                set,
                reasons: mut why,
            } => {
                sets.push(set);
                reasons.append(&mut why);
            }
            other => return Err(other),
        }
    }
    Err(Refusal::NoMethod {
        set: sets.join(" or "),
        reasons,
    })
}

fn pmu_list(machine: &Machine) -> String {
    match machine.pmus.is_empty() {
        true => "no PMU at all".into(),
        false => machine
            .pmus
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The plan for `request` on `machine` with `perf` (a machine without
/// one is [`Refusal::NoPerf`] before any plan).
pub fn plan(
    machine: &Machine,
    perf: &Perf,
    privilege: Privilege,
    request: &Request,
) -> Result<Plan, Refusal> {
    // A sampled read group (`:S`): the top-down groups always are. perf
    // before 6.13 turns `inherit` off for one.
    let read_group = request.events.as_ref().is_none_or(|e| e.contains(":S"));
    let no_inherit = read_group && perf.version.is_some_and(|v| v < Version::new(6, 13, 0));
    let only_command = match &request.target {
        Target::Command {
            all_cpus: false, ..
        } => request.all_threads && no_inherit,
        _ => false,
    };
    let widened;
    let request = match (&request.target, only_command) {
        (Target::Command { argv, .. }, true) => {
            widened = Request {
                target: Target::Command {
                    argv: argv.clone(),
                    all_cpus: true,
                },
                ..request.clone()
            };
            &widened
        }
        _ => request,
    };
    check_paranoid(machine, privilege, request, only_command)?;
    let mut notes = Vec::new();
    let (model, chosen, groups) = match &request.events {
        Some(group) => (None, Vec::new(), vec![group.clone()]),
        None => {
            let (model, chosen) = choose_topdown(machine, perf.version, request, &mut notes)?;
            let groups = chosen.iter().map(|c| c.spelled.clone()).collect();
            (Some(model), chosen, groups)
        }
    };
    if let Some(note) = inherit_note(&request.target, perf.version, only_command, no_inherit) {
        notes.push(note);
    }
    if machine.paranoid == Some(2) && !privilege.bypasses_paranoid() {
        notes.push(
            "kernel.perf_event_paranoid is 2: perf records user space only (no kernel frames)"
                .into(),
        );
    }
    let extra = match request.off_cpu {
        true => crate::off_cpu::arguments(machine, privilege, perf.version, request, &mut notes)?,
        false => Vec::new(),
    };
    let argv = command_line(&groups, &extra, request);
    Ok(Plan {
        model,
        chosen,
        notes,
        argv,
        only_command,
    })
}

/// Refuses when kernel.perf_event_paranoid is higher than what is
/// recorded needs, unless the privilege perfq runs with bypasses it.
fn check_paranoid(
    machine: &Machine,
    privilege: Privilege,
    request: &Request,
    only_command: bool,
) -> Result<(), Refusal> {
    if let (Some(value), false) = (machine.paranoid, privilege.bypasses_paranoid()) {
        let (needed, what) = match request.target {
            _ if only_command => (
                0,
                "--all-threads with this perf (it records every CPU while the command runs)",
            ),
            Target::SystemWide | Target::Command { all_cpus: true, .. } => {
                (0, "recording every CPU (-a)")
            }
            _ => (2, "recording a process"),
        };
        if value > needed {
            return Err(Refusal::Paranoid {
                value,
                needed,
                what,
            });
        }
    }
    Ok(())
}

/// The CPU model (named with `--cpu-model`, else detected) and, for each
/// of its core types, the method chosen; their caveats go to `notes`.
fn choose_topdown(
    machine: &Machine,
    perf: Option<Version>,
    request: &Request,
    notes: &mut Vec<String>,
) -> Result<(Model, Vec<Chosen>), Refusal> {
    if machine.core_pmus().next().is_none() {
        return Err(Refusal::NoPmu {
            found: pmu_list(machine),
        });
    }
    let model = match &request.cpu_model {
        Some(name) => perfq_topdown::by_name(name, &machine.cpu_info()),
        None => perfq_topdown::detect(&machine.cpu_info()),
    }
    .map_err(Refusal::Cpu)?;
    if model.sets.is_empty() {
        return Err(Refusal::NoSets {
            model: model.name.clone(),
            note: model.note.clone(),
            known: perfq_topdown::known_models(),
        });
    }
    // A model's sets on one PMU are alternatives, the first
    // preferred (cpus.td); each PMU (core type) gets a group.
    let classes = sets_by_pmu(&model);
    let sole = classes.len() == 1;
    let mut chosen = Vec::new();
    for (_, alternatives) in &classes {
        let (c, mut n) = first_that_fits(machine, perf, alternatives, request.level, sole)?;
        notes.append(&mut n);
        chosen.push(c);
    }
    Ok((model, chosen))
}

/// A model's sets by the PMU they are on, in the model's order.
fn sets_by_pmu(model: &Model) -> Vec<(PmuClass, Vec<&SetUse>)> {
    let mut classes: Vec<(PmuClass, Vec<&SetUse>)> = Vec::new();
    for u in &model.sets {
        match classes.iter_mut().find(|(c, _)| *c == u.pmu) {
            Some((_, sets)) => sets.push(u),
            None => classes.push((u.pmu, vec![u])),
        }
    }
    classes
}

/// What the user should know when this perf turns `inherit` off for a
/// sampled read group: that every CPU is recorded for the command, or
/// that only its first thread is sampled.
fn inherit_note(
    target: &Target,
    perf: Option<Version>,
    only_command: bool,
    no_inherit: bool,
) -> Option<String> {
    match (target, perf) {
        (_, Some(v)) if only_command => Some(format!(
            "perf {v} turns `inherit` off for a sampled read group, so every CPU is recorded \
             while the command runs (-a) and the answer keeps the processes it started"
        )),
        (
            Target::Command {
                all_cpus: false, ..
            },
            Some(v),
        ) if no_inherit => Some(format!(
            "perf {v} turns `inherit` off for a sampled read group: only the command's first \
             thread is sampled, not the threads and processes it starts; --all-threads samples \
             them all (it records every CPU while the command runs: as root or with \
             kernel.perf_event_paranoid ≤ 0)"
        )),
        _ => None,
    }
}

/// `perf record` with the groups and the request's options.
fn command_line(groups: &[String], extra: &[String], request: &Request) -> Vec<String> {
    let mut argv: Vec<String> = vec![
        "perf".into(),
        "record".into(),
        "-e".into(),
        groups.join(","),
        // Each sample's CPU (the samples' `cpu` column), and the same
        // sample layout on every target (perf adds it on its own for -a
        // only).
        "--sample-cpu".into(),
    ];
    if let Some(cg) = &request.call_graph {
        argv.push("--call-graph".into());
        argv.push(cg.clone());
    }
    match request.rate {
        Some(Rate::Frequency(hz)) => argv.extend(["-F".into(), hz.to_string()]),
        Some(Rate::Period(p)) => argv.extend(["-c".into(), p.to_string()]),
        None => {}
    }
    match &request.target {
        Target::SystemWide | Target::Command { all_cpus: true, .. } => argv.push("-a".into()),
        Target::Pids(pids) => {
            let list: Vec<String> = pids.iter().map(u32::to_string).collect();
            argv.extend(["-p".into(), list.join(",")]);
        }
        Target::Command { .. } => {}
    }
    argv.extend(extra.iter().cloned());
    argv.extend(["-o".into(), request.output.display().to_string()]);
    match &request.target {
        Target::Command { argv: cmd, .. } => {
            argv.push("--".into());
            argv.extend(cmd.iter().cloned());
        }
        _ => {
            if let Some(secs) = request.duration {
                argv.extend(["--".into(), "sleep".into(), format!("{secs}")]);
            }
        }
    }
    argv
}

/// The method table of docs/topdown.md, made from `methods.td`: for each
/// method, the cores, the level, the perf versions, what the kernel must
/// offer, and the group as perf takes it on a machine with one core PMU.
pub fn method_table() -> Result<String, Refusal> {
    let methods =
        perfq_topdown::methods().map_err(|e| Refusal::Cpu(DetectError::Tables(e.to_string())))?;
    let mut out = String::from(
        "| cores (formula set) | level | perf | the kernel must offer | groups |\n|---|---|---|---|---|\n",
    );
    for m in methods {
        let pmu = match m.set.pmu {
            PmuClass::Core => "cpu",
            PmuClass::Atom => "cpu_atom",
            PmuClass::Arm => "armv8_pmuv3_0",
        };
        let group = spell_groups(m, &as_written(m), pmu, m.set.pmu != PmuClass::Atom);
        let named = kernel_events(m);
        let perf = match m.perf_min {
            Some((a, b)) => format!("≥ {a}.{b}"),
            None => "any".into(),
        };
        let needs = match named.is_empty() {
            true => "the core PMU".to_string(),
            false => format!("`{pmu}` events {}", named.join(", ")),
        };
        out.push_str(&format!(
            "| {} (`{}`) | {} | {perf} | {needs} | `{group}` |\n",
            m.set.title, m.set.name, m.level
        ));
    }
    Ok(out)
}
