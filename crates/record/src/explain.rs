//! The account `perfq record --print` gives: the machine as perfq read
//! it, the method chosen for each formula set and why, the caveats, and
//! the exact perf command line.

use std::fmt::Write;

use crate::machine::Machine;
use crate::perf::Perf;
use crate::plan::Plan;

/// `argv` as a shell line: words with anything but safe characters in
/// single quotes.
pub fn shell_line(argv: &[String]) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c);
    argv.iter()
        .map(|a| {
            if !a.is_empty() && a.chars().all(safe) {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What `--print` writes for `plan`.
pub fn explain(machine: &Machine, perf: &Perf, plan: &Plan) -> String {
    let mut out = String::new();
    let unknown = || "unknown".to_string();
    let _ = writeln!(
        out,
        "machine: cpu {}{}, SMT {}, kernel {}, perf {}",
        machine.cpuid.clone().unwrap_or_else(unknown),
        machine
            .model_name
            .as_deref()
            .map(|m| format!(" ({m})"))
            .unwrap_or_default(),
        match machine.smt {
            Some(true) => "on",
            Some(false) => "off",
            None => "unknown",
        },
        machine.kernel.map_or_else(unknown, |k| k.to_string()),
        perf.version.map_or_else(unknown, |v| v.to_string()),
    );
    match &plan.model {
        Some(model) => {
            let _ = writeln!(
                out,
                "model: {} ({}; {})",
                model.name, model.note, model.found_by
            );
        }
        None => {
            let _ = writeln!(out, "events: as given (--events)");
        }
    }
    for c in &plan.chosen {
        let _ = writeln!(out, "{} on {}: {}", c.method.set.name, c.pmu, c.why);
    }
    for n in &plan.notes {
        let _ = writeln!(out, "note: {n}");
    }
    let _ = writeln!(out, "{}", shell_line(&plan.argv));
    out
}
