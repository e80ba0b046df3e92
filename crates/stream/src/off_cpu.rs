//! Off-CPU intervals: for each thread, from the moment it is switched out
//! to the moment it runs again, with why it left (its state), where it was
//! (the stack of the switch-out), and who woke it.
//!
//! Two kinds of record say when threads leave and return:
//! - `sched:sched_switch` tracepoint samples: `prev_pid` leaves in
//!   `prev_state`, `next_pid` arrives; the sample's callchain is the
//!   leaving thread's stack. The raw fields are found by the format in the
//!   capture's tracing data.
//! - context-switch records (`--switch-events`): a thread's `SWITCH` out
//!   (preempted or not) and in; they carry no stack, so an interval takes
//!   the stack of the thread's last sample before it, as hotspot does.
//!
//! When a capture has the tracepoint, its switch-outs open the intervals
//! and switch records only close them. A recording of one command
//! (without `-a`) sees its threads leave but not always return: the
//! tracepoint fires in the context of the thread leaving, so a return
//! from another process's thread is not recorded. Such an interval ends
//! at the thread's next event of any kind, and says so ([`End::NextEvent`]).
//! `sched:sched_wakeup` (or `sched_waking`, preferred when both are there,
//! as `perf sched timehist` does) names the waker.

use rustc_hash::FxHashMap;

use perfq_reader::{
    event_type, AttrFlags, Capture, Endian, EventIndex, RecordData, Sample, SampleId, TraceField,
    TracingData, Warning,
};

/// Why a thread was off CPU: its state at the switch-out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Still runnable (preempted, or yielded): waiting for a CPU (`R`).
    Runnable,
    /// Sleeping, interruptibly (`S`): a lock, a sleep, a read, a poll.
    Sleeping,
    /// Uninterruptible (`D`): mostly waiting for I/O.
    Blocked,
    /// Stopped by a signal (`T`) or a tracer (`t`).
    Stopped,
    /// A kernel thread parked (`P`) or idle (`I`).
    Idle,
    /// Leaving as it exits (`X`, `Z`): it does not come back, and the
    /// interval has no length.
    Dead,
    /// Another state the kernel reports, by its letter.
    Other(char),
    /// Not preempted, by a switch record: sleeping or blocked, which the
    /// record does not say.
    Waiting,
    /// Off CPU since before the capture began: its switch-out was not
    /// recorded, so the interval starts at the capture's first record,
    /// with no stack.
    Unknown,
}

impl State {
    /// Every state's name as the dataset stores it, in [`State::index`]'s
    /// order.
    pub const NAMES: [&'static str; 9] = [
        "runnable", "sleeping", "blocked", "stopped", "idle", "dead", "other", "waiting", "unknown",
    ];

    /// Its place in [`State::NAMES`] (every [`State::Other`] letter is one
    /// place).
    pub fn index(self) -> usize {
        match self {
            State::Runnable => 0,
            State::Sleeping => 1,
            State::Blocked => 2,
            State::Stopped => 3,
            State::Idle => 4,
            State::Dead => 5,
            State::Other(_) => 6,
            State::Waiting => 7,
            State::Unknown => 8,
        }
    }

    /// The name stored in the dataset.
    pub fn name(self) -> &'static str {
        Self::NAMES[self.index()]
    }

    /// The state of a perf state letter.
    fn of_letter(letter: char) -> State {
        match letter {
            'R' => State::Runnable,
            'S' => State::Sleeping,
            'D' => State::Blocked,
            'T' | 't' => State::Stopped,
            'P' | 'I' => State::Idle,
            'X' | 'Z' => State::Dead,
            other => State::Other(other),
        }
    }
}

/// How an interval's end was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The thread was switched in: the end is exact.
    SwitchIn,
    /// No switch-in was recorded (a recording of one command): the end is
    /// the thread's next event of any kind, at or after its return.
    NextEvent,
    /// The thread was still off CPU when the capture ended.
    CaptureEnd,
    /// The thread left as it exited: the interval ends where it starts.
    Exit,
    /// Not one interval: perf's `--off-cpu` (its BPF program, event
    /// `offcpu-time`) summed the thread's waits with this stack, and
    /// wrote the sum as the sample's period, at the end of the recording
    /// with no time of its own ([`Interval::times`] is `false`).
    Summed,
    /// No switch-in was recorded where every thread's switches are (a
    /// system-wide recording): the kernel left out the switch to it, as
    /// it does for most of the idle task's switch-outs when callchains are
    /// recorded. The end is the later of its wakeup and the last switch
    /// recorded on the CPU it ran on next: the earliest it can have run
    /// there (`perf sched timehist` takes that last switch).
    Estimated,
}

impl End {
    /// The name stored in the dataset.
    pub fn name(self) -> &'static str {
        match self {
            End::SwitchIn => "switch_in",
            End::NextEvent => "next_event",
            End::CaptureEnd => "capture_end",
            End::Exit => "exit",
            End::Summed => "offcpu_time",
            End::Estimated => "estimated",
        }
    }
}

/// Where an interval's stack comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackFrom {
    /// The switch-out sample's own callchain.
    Switch,
    /// The thread's last sample before the switch-out (switch records
    /// carry no stack).
    LastSample,
}

/// Who woke a thread, and when (`sched_wakeup` or `sched_waking`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wake {
    /// When.
    pub time: u64,
    /// The waker's process and thread (the thread running the wakeup).
    pub pid: Option<u32>,
    /// The waker's thread.
    pub tid: Option<u32>,
    /// The wakeup sample's number: its stack is the waker's.
    pub sample: u64,
}

/// One off-CPU interval of a thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interval {
    /// The thread's process.
    pub pid: Option<u32>,
    /// The thread.
    pub tid: u32,
    /// When it was switched out.
    pub start: u64,
    /// When it ran again (see [`Interval::end_from`]).
    pub end: u64,
    /// The CPU it left.
    pub cpu: Option<u32>,
    /// The CPU it came back on, when switched in.
    pub cpu_in: Option<u32>,
    /// Its state as it left.
    pub state: State,
    /// How the end was found.
    pub end_from: End,
    /// Records were lost while it was off CPU: the interval may be longer
    /// or shorter than it was, or stand for several.
    pub uncertain: bool,
    /// The number of the sample whose stack is the interval's, and how.
    pub stack: Option<(u64, StackFrom)>,
    /// The first wakeup after it left, when recorded.
    pub wake: Option<Wake>,
    /// How long it had run since its previous switch-in, when that was
    /// recorded (`perf sched timehist`'s run time).
    pub run_ns: Option<u64>,
}

impl Interval {
    /// Its length (for [`End::Summed`], the sum perf wrote).
    pub fn duration_ns(&self) -> u64 {
        match self.end_from {
            End::Summed => self.end,
            _ => self.end.saturating_sub(self.start),
        }
    }

    /// Whether `start` and `end` are times (not for [`End::Summed`],
    /// whose `end` holds the sum and `start` is 0).
    pub fn times(&self) -> bool {
        self.end_from != End::Summed
    }
}

/// Why a capture that recorded `sched:sched_switch` gives no intervals
/// from it: its tracing data (`tracing`, which holds the tracepoint's
/// format) is missing or unreadable, or the format lacks a field read.
/// `None` when it recorded no such event.
fn unread_switches(
    capture: &Capture,
    tracing: Option<&perfq_reader::Result<TracingData>>,
) -> Option<Warning> {
    let events = capture.events();
    let recorded = (0..events.len()).any(|i| {
        events.get(EventIndex(i)).is_some_and(|e| {
            e.attr.type_ == event_type::TRACEPOINT && e.name == "sched:sched_switch"
        })
    });
    if !recorded {
        return None;
    }
    let lost = "sched:sched_switch gives no off-CPU intervals";
    Some(match tracing {
        Some(Err(e)) => Warning::at(e.offset.0, format!("{lost}: {}", e.kind)),
        None => Warning::general(format!(
            "{lost}: the capture has no tracing data (the tracepoints' formats)"
        )),
        Some(Ok(_)) => Warning::general(format!(
            "{lost}: its format in the tracing data lacks prev_pid, prev_state or next_pid"
        )),
    })
}

/// The time perf gives the samples of `offcpu-time` it writes at the end
/// of a recording (`OFF_CPU_TIMESTAMP` in perf's `bpf_off_cpu.c`): not a
/// time, a place after every other record.
const OFF_CPU_TIMESTAMP: u64 = !0 << 32;

/// A thread's switch-out not yet followed by its return.
#[derive(Clone, Debug)]
struct Out {
    pid: Option<u32>,
    start: u64,
    cpu: Option<u32>,
    state: State,
    uncertain: bool,
    stack: Option<(u64, StackFrom)>,
    wake: Option<Wake>,
    run_ns: Option<u64>,
}

/// What is known of a thread.
#[derive(Clone, Debug, Default)]
struct Thread {
    /// Its process, from its samples and COMM and FORK records.
    pid: Option<u32>,
    /// Whether it was seen to run or leave (else it may have been off CPU
    /// since before the capture).
    seen: bool,
    out: Option<Out>,
    /// When it was last switched in.
    on_since: Option<u64>,
    /// Its last sample's number (for switch records' stacks).
    last_sample: Option<u64>,
}

/// The `sched_switch` fields read, and the names of its states.
struct Switches {
    events: Vec<EventIndex>,
    prev_pid: TraceField,
    prev_state: TraceField,
    next_pid: TraceField,
    /// `(bit, letter)` from the print format; a value with none of them
    /// set is `R`.
    states: Vec<(u64, char)>,
}

/// The wakeup events read, and their `pid` field.
struct Wakeups {
    events: Vec<(EventIndex, TraceField)>,
}

/// The off-CPU intervals of a read, found as its records go by.
pub struct OffCpu {
    switches: Option<Switches>,
    /// perf's `--off-cpu` event, `offcpu-time`: each sample's period is
    /// time off CPU.
    perf_off_cpu: Vec<EventIndex>,
    wakeups: Wakeups,
    /// Whether switch records open intervals (no tracepoint).
    records_open: bool,
    endian: Endian,
    threads: FxHashMap<u32, Thread>,
    /// Per CPU, when the tracepoint last saw a switch on it; kept only
    /// where every thread's switches are recorded (not a recording of one
    /// command), so that a thread seen running there cannot have started
    /// before.
    last_switch: FxHashMap<u32, u64>,
    every_thread: bool,
    closed: Vec<Interval>,
    first_time: Option<u64>,
    last_time: u64,
}

impl OffCpu {
    /// The tracker of `capture`'s off-CPU intervals, if it recorded
    /// `sched:sched_switch` (with its format in the tracing data) or
    /// context-switch records.
    pub fn new(capture: &Capture) -> (Option<OffCpu>, Option<Warning>) {
        let tracing = capture.tracing_data();
        let formats = tracing.as_ref().and_then(|t| t.as_ref().ok());
        let events = capture.events();
        let tracepoints = (0..events.len()).filter_map(|i| {
            let e = events.get(EventIndex(i))?;
            let f = formats?.by_id(e.attr.config)?;
            (e.attr.type_ == event_type::TRACEPOINT).then_some((EventIndex(i), f))
        });
        let (mut switches, mut wakeups, mut waking) = (None::<Switches>, Vec::new(), Vec::new());
        for (i, f) in tracepoints {
            match (f.system.as_str(), f.name.as_str()) {
                ("sched", "sched_switch") => match &mut switches {
                    Some(s) => s.events.push(i),
                    None => switches = Switches::of(i, f),
                },
                ("sched", "sched_wakeup" | "sched_wakeup_new") => {
                    wakeups.extend(f.field("pid").map(|p| (i, p.clone())))
                }
                ("sched", "sched_waking") => waking.extend(f.field("pid").map(|p| (i, p.clone()))),
                _ => {}
            }
        }
        let warning = match switches {
            None => unread_switches(capture, tracing.as_ref()),
            Some(_) => None,
        };
        let records = any_with(capture, AttrFlags::CONTEXT_SWITCH);
        let perf_off_cpu: Vec<EventIndex> = (0..events.len())
            .map(EventIndex)
            .filter(|&i| events.get(i).is_some_and(|e| e.name == "offcpu-time"))
            .collect();
        if switches.is_none() && !records && perf_off_cpu.is_empty() {
            return (None, warning);
        }
        let off_cpu = OffCpu {
            records_open: switches.is_none(),
            switches,
            perf_off_cpu,
            // `perf sched timehist` takes sched_waking when both are there.
            wakeups: Wakeups {
                events: if waking.is_empty() { wakeups } else { waking },
            },
            endian: capture.endian(),
            threads: FxHashMap::default(),
            last_switch: FxHashMap::default(),
            // perf enables the events of a recording of one command when
            // it execs; a system-wide one's, at once.
            every_thread: !any_with(capture, AttrFlags::ENABLE_ON_EXEC),
            closed: Vec::new(),
            first_time: None,
            last_time: 0,
        };
        (Some(off_cpu), warning)
    }

    /// The events whose samples can give an interval its stack (the
    /// switch tracepoint's, perf's `offcpu-time`); `None` where any can:
    /// switch records open the intervals, and a switch-out takes the
    /// thread's last sample's stack.
    pub fn stack_events(&self) -> Option<Vec<EventIndex>> {
        if self.records_open {
            return None;
        }
        let switches = self.switches.iter().flat_map(|s| s.events.iter());
        Some(switches.chain(&self.perf_off_cpu).copied().collect())
    }

    /// The intervals that ended since the last call, in the order they
    /// ended.
    pub fn ended(&mut self) -> std::vec::Drain<'_, Interval> {
        self.closed.drain(..)
    }

    /// A decoded sample, the `number`-th of the read, of `event`.
    pub fn sample(&mut self, number: u64, event: EventIndex, s: &Sample<'_>) {
        let Some(t) = s.time else { return };
        if self.perf_off_cpu.contains(&event) {
            // (Before its placeholder time moves the capture's end.)
            self.perf_summed(number, s, t);
            return;
        }
        self.timed(t);
        if let Some(sw) = &self.switches {
            if sw.events.contains(&event) {
                let raw = s.raw.unwrap_or_default();
                let prev = sw.prev_pid.int(raw, self.endian);
                let next = sw.next_pid.int(raw, self.endian);
                let state = sw.state(raw, self.endian);
                self.switch_out(t, s, prev, state, (number, StackFrom::Switch));
                let next = next.and_then(|n| u32::try_from(n).ok());
                if let Some(next) = next {
                    self.switch_in(next, t, s.cpu);
                }
                if let Some(cpu) = s.cpu.filter(|_| self.every_thread) {
                    self.last_switch.insert(cpu, t);
                }
                return;
            }
        }
        if let Some((_, pid)) = self.wakeups.events.iter().find(|(e, _)| *e == event) {
            if let Some(woken) = pid.int(s.raw.unwrap_or_default(), self.endian) {
                self.woken(woken, t, s, number);
            }
        }
        // Any other event of a thread: it runs.
        // (Not the idle task; not an exiting thread, whose tid is -1.)
        if let Some(tid) = s.tid.filter(|&t| t != 0 && t != u32::MAX) {
            self.end_at(tid, t, End::NextEvent, s.cpu);
            let thread = self.threads.entry(tid).or_default();
            thread.seen = true;
            thread.last_sample = Some(number);
            thread.pid = s.pid.or(thread.pid);
        }
    }

    /// A record other than a sample.
    pub fn sideband(&mut self, data: &RecordData<'_>, id: Option<SampleId>) {
        let id = id.unwrap_or_default();
        if let Some(t) = id.time {
            self.timed(t);
        }
        match data {
            RecordData::Lost { .. } | RecordData::LostSamples { .. } => self.lost(),
            RecordData::Fork(f) => {
                // Born in the capture, not off CPU since before it (perf
                // writes the threads already there as forks at time 0).
                let thread = self.threads.entry(f.tid).or_default();
                thread.pid = Some(f.pid);
                thread.seen |= f.time != 0;
            }
            // A thread exiting runs: an interval it had open ends there.
            RecordData::Exit(f) => self.end_at(f.tid, f.time, End::NextEvent, id.cpu),
            // So does one naming itself or mapping memory.
            RecordData::Comm(_) | RecordData::Mmap(_) => {
                if let RecordData::Comm(c) = data {
                    self.threads.entry(c.tid).or_default().pid = Some(c.pid);
                }
                if let (Some(tid), Some(t)) = (id.tid.filter(|&t| t != 0), id.time) {
                    self.end_at(tid, t, End::NextEvent, id.cpu);
                }
            }
            RecordData::Switch { out, preempt, .. } => {
                let (Some(tid), Some(t)) = (id.tid.filter(|&t| t != 0), id.time) else {
                    return;
                };
                match (*out, self.records_open) {
                    (false, _) => self.switch_in(tid, t, id.cpu),
                    (true, true) => self.switch_out_record(tid, t, &id, *preempt),
                    (true, false) => {}
                }
            }
            _ => {}
        }
    }

    /// A record of time `t` went by.
    fn timed(&mut self, t: u64) {
        // perf writes the threads and mappings already there at time 0
        // (in a pipe, with that time in their sample_id): not a time of
        // the capture.
        if t != 0 {
            self.first_time.get_or_insert(t);
        }
        self.last_time = self.last_time.max(t);
    }

    /// `tid` is seen to run, or to be woken: if it was never seen before,
    /// it was off CPU since before the capture.
    fn seen(&mut self, tid: u32) {
        let first = self.first_time;
        let thread = self.threads.entry(tid).or_default();
        if std::mem::replace(&mut thread.seen, true) || thread.out.is_some() {
            return;
        }
        if let Some(start) = first {
            thread.out = Some(Out {
                pid: thread.pid,
                start,
                cpu: None,
                state: State::Unknown,
                uncertain: false,
                stack: None,
                wake: None,
                run_ns: None,
            });
        }
    }

    /// Records were lost (or could not be read): every open interval is
    /// uncertain.
    pub fn lost(&mut self) {
        for out in self.threads.values_mut().filter_map(|t| t.out.as_mut()) {
            out.uncertain = true;
        }
    }

    /// Ends the intervals still open at the capture's end, in the order of
    /// their start.
    pub fn finish(&mut self) {
        let end = self.last_time;
        let mut open: Vec<(u32, Out)> = self
            .threads
            .iter_mut()
            .filter_map(|(&tid, t)| Some((tid, t.out.take()?)))
            .collect();
        open.sort_by_key(|(tid, out)| (out.start, *tid));
        for (tid, out) in open {
            self.closed
                .push(interval(tid, out, end, End::CaptureEnd, None));
        }
    }

    /// A sample of perf's `offcpu-time`: time off CPU, its period. At
    /// perf's placeholder time it is a sum of waits; at another (a wait
    /// over `--off-cpu-thresh`, written as the thread returned) one wait,
    /// ending then.
    fn perf_summed(&mut self, number: u64, s: &Sample<'_>, t: u64) {
        let Some(tid) = s.tid else { return };
        let ns = s.period.unwrap_or(0);
        let (start, end, end_from) = match t {
            OFF_CPU_TIMESTAMP => (0, ns, End::Summed),
            _ => (t.saturating_sub(ns), t, End::SwitchIn),
        };
        self.closed.push(Interval {
            pid: s.pid,
            tid,
            start,
            end,
            cpu: None,
            cpu_in: s.cpu.filter(|_| end_from == End::SwitchIn),
            state: State::Waiting,
            end_from,
            uncertain: false,
            stack: Some((number, StackFrom::Switch)),
            wake: None,
            run_ns: None,
        });
    }

    /// `prev` leaves in `state` (a tracepoint's switch-out).
    fn switch_out(
        &mut self,
        t: u64,
        s: &Sample<'_>,
        prev: Option<i64>,
        state: Option<char>,
        stack: (u64, StackFrom),
    ) {
        let Some(tid) = prev.and_then(|p| u32::try_from(p).ok()).or(s.tid) else {
            return;
        };
        if tid == 0 {
            // The idle task: a CPU stops idling, no thread waits.
            return;
        }
        // An interval still open: its return was not recorded.
        self.end_at(tid, t, End::NextEvent, s.cpu);
        // Where its switch-in was not recorded, it ran since the CPU's
        // last switch at most (as `perf sched timehist` counts).
        let switched = s.cpu.and_then(|c| self.last_switch.get(&c)).copied();
        let thread = self.threads.entry(tid).or_default();
        thread.seen = true;
        let since = thread.on_since.take().or(switched);
        let run_ns = since.map(|since| t.saturating_sub(since));
        thread.last_sample = Some(stack.0);
        // An exiting thread's sample has the pid -1.
        thread.pid = s.pid.filter(|&p| p != u32::MAX).or(thread.pid);
        let out = Out {
            pid: thread.pid,
            start: t,
            cpu: s.cpu,
            state: State::of_letter(state.unwrap_or('R')),
            uncertain: false,
            stack: Some(stack),
            wake: None,
            run_ns,
        };
        match out.state {
            // It does not come back: an interval of no length keeps its
            // last run.
            State::Dead => self.closed.push(interval(tid, out, t, End::Exit, None)),
            _ => thread.out = Some(out),
        }
    }

    /// A switch record's switch-out (no tracepoint in the capture).
    fn switch_out_record(&mut self, tid: u32, t: u64, id: &SampleId, preempt: bool) {
        self.end_at(tid, t, End::NextEvent, id.cpu);
        let thread = self.threads.entry(tid).or_default();
        thread.seen = true;
        let run_ns = thread.on_since.take().map(|since| t.saturating_sub(since));
        thread.out = Some(Out {
            pid: id.pid,
            start: t,
            cpu: id.cpu,
            state: if preempt {
                State::Runnable
            } else {
                State::Waiting
            },
            uncertain: false,
            stack: thread.last_sample.map(|n| (n, StackFrom::LastSample)),
            wake: None,
            run_ns,
        });
    }

    /// `tid` runs from `t` on `cpu`.
    fn switch_in(&mut self, tid: u32, t: u64, cpu: Option<u32>) {
        if tid == 0 {
            return;
        }
        self.seen(tid);
        self.end_at(tid, t, End::SwitchIn, cpu);
        self.threads.entry(tid).or_default().on_since = Some(t);
    }

    /// `woken` is woken at `t` by the sample's thread.
    fn woken(&mut self, woken: i64, t: u64, s: &Sample<'_>, number: u64) {
        let Some(tid) = u32::try_from(woken).ok().filter(|&t| t != 0) else {
            return;
        };
        self.seen(tid);
        let Some(out) = self.threads.get_mut(&tid).and_then(|th| th.out.as_mut()) else {
            return;
        };
        // The first wakeup counts, as in `perf sched timehist`.
        out.wake.get_or_insert(Wake {
            time: t,
            pid: s.pid,
            tid: s.tid,
            sample: number,
        });
    }

    /// Ends `tid`'s open interval, if it has one, at `t`, seen on `cpu`:
    /// at a switch-in, or at the thread's next event, or as early as it
    /// can have run on `cpu` ([`End::Estimated`]).
    fn end_at(&mut self, tid: u32, t: u64, how: End, cpu: Option<u32>) {
        let Some(thread) = self.threads.get_mut(&tid) else {
            return;
        };
        let Some(out) = thread.out.take() else {
            return;
        };
        let switched = cpu.and_then(|c| self.last_switch.get(&c)).copied();
        let (end, how) = match (how, switched) {
            (End::NextEvent, Some(switched)) => {
                let woken = out.wake.map_or(switched, |w| w.time.max(switched));
                let end = woken.max(out.start).min(t);
                thread.on_since = Some(end);
                (end, End::Estimated)
            }
            _ => (t, how),
        };
        let cpu_in = matches!(how, End::SwitchIn | End::Estimated)
            .then_some(cpu)
            .flatten();
        self.closed.push(interval(tid, out, end, how, cpu_in));
    }
}

/// Whether an event of `capture` has attr flag `flag`.
fn any_with(capture: &Capture, flag: AttrFlags) -> bool {
    let events = capture.events();
    (0..events.len()).any(|i| {
        events
            .get(EventIndex(i))
            .is_some_and(|e| e.attr.flags.contains(flag))
    })
}

fn interval(tid: u32, out: Out, end: u64, end_from: End, cpu_in: Option<u32>) -> Interval {
    Interval {
        pid: out.pid,
        tid,
        start: out.start,
        end: end.max(out.start),
        cpu: out.cpu,
        cpu_in,
        state: out.state,
        end_from,
        uncertain: out.uncertain,
        stack: out.stack,
        wake: out.wake,
        run_ns: out.run_ns,
    }
}

impl Switches {
    /// The fields of `sched_switch`'s format `f`, if it has them.
    fn of(event: EventIndex, f: &perfq_reader::TracepointFormat) -> Option<Switches> {
        let states = f
            .print_flags()
            .into_iter()
            .filter_map(|(bit, name)| Some((bit, name.chars().next()?)))
            .collect();
        Some(Switches {
            events: vec![event],
            prev_pid: f.field("prev_pid")?.clone(),
            prev_state: f.field("prev_state")?.clone(),
            next_pid: f.field("next_pid")?.clone(),
            states,
        })
    }

    /// The letter of `prev_state`: its lowest named bit, `R` if none is
    /// set (a preempted thread, whatever bit above the states says so).
    fn state(&self, raw: &[u8], endian: Endian) -> Option<char> {
        let value = self.prev_state.int(raw, endian)? as u64;
        let named = self.states.iter().filter(|(bit, _)| value & bit != 0);
        Some(named.min_by_key(|(bit, _)| *bit).map_or('R', |(_, c)| *c))
    }
}
