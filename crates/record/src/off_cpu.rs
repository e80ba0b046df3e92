//! What `perfq record --off-cpu` adds to a recording so that the capture
//! says where threads waited (docs/off-cpu.md): the `sched:sched_switch`
//! tracepoint with callchains where this kernel, tracefs and permission
//! allow it, else context-switch records (`--switch-events`), whose waits
//! take the stacks of the threads' samples.

use crate::machine::Machine;
use crate::plan::{Refusal, Request, Target};
use crate::privilege::Privilege;
use crate::version::Version;

/// The first perf with `--switch-events`.
const SWITCH_EVENTS: Version = Version::new(4, 3, 0);

/// perf's arguments for off-CPU time, with a note on what they record;
/// a refusal, saying what to do, where neither way is allowed.
pub(crate) fn arguments(
    machine: &Machine,
    privilege: Privilege,
    perf: Option<Version>,
    request: &Request,
    notes: &mut Vec<String>,
) -> Result<Vec<String>, Refusal> {
    let every_cpu = matches!(
        request.target,
        Target::SystemWide | Target::Command { all_cpus: true, .. }
    );
    let switch_events = perf.is_none_or(|v| v >= SWITCH_EVENTS);
    // Tracepoints' raw fields are for root, CAP_PERFMON or a paranoid of -1.
    let raw = privilege.bypasses_paranoid() || machine.paranoid.is_some_and(|p| p <= -1);
    // perf's -F and -c apply to every event: the tracepoint would be
    // sampled too, a switch in every few.
    let sampled = request.rate.is_some();
    let mut args: Vec<String> = Vec::new();
    if machine.sched_switch && raw && !sampled {
        args.extend(["-e".into(), "sched:sched_switch".into()]);
        if every_cpu {
            // Who woke whom, and the scheduling delay after it.
            args.extend(["-e".into(), "sched:sched_wakeup".into()]);
        } else if switch_events {
            // One command's threads return after other processes' threads
            // too, which only their own switch records see.
            args.push("--switch-events".into());
        }
        notes.push("off-CPU: sched:sched_switch with callchains (docs/off-cpu.md)".into());
    } else if switch_events {
        args.push("--switch-events".into());
        let why = match (machine.sched_switch, raw) {
            (false, _) => "no sched:sched_switch under /sys/kernel/tracing (mount tracefs)",
            (true, false) => {
                "sched:sched_switch's fields need root or kernel.perf_event_paranoid -1"
            }
            (true, true) => "-F and -c would sample sched:sched_switch too: leave them out for it",
        };
        notes.push(format!(
            "off-CPU: context-switch records only ({why}): a wait takes the stack of its \
             thread's last sample, and says only whether it was preempted"
        ));
    } else {
        return Err(Refusal::NoOffCpu);
    }
    if request.call_graph.is_none() {
        notes.push("off-CPU: no stacks without call graphs: add -g".into());
    }
    Ok(args)
}
