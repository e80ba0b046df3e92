//! Captures as `perf record --off-cpu` writes them (perf built with BPF
//! skeletons; `tools/perf/util/bpf_off_cpu.c`): an event named
//! `offcpu-time` (a software `bpf-output` event) whose samples perf
//! writes when the recording ends, one per thread, stack and state its BPF
//! program summed, the sum of the waits (ns) as the period and
//! `OFF_CPU_TIMESTAMP` as the time, so that they sort after every other
//! record.

use std::io;
use std::path::Path;

use crate::attr::{event_type, flags, sample_type as st, Attr, Sampling};
use crate::presets::Preset;
use crate::rng::Rng;
use crate::spec::{CaptureSpec, EventSpec};
use crate::workload::{Thread, Workload};
use crate::writer::{Callchain, SampleSpec, Summary, Writer};

/// perf's `OFF_CPU_TIMESTAMP`.
pub const OFF_CPU_TIMESTAMP: u64 = !0 << 32;

/// `PERF_COUNT_SW_BPF_OUTPUT`: the event perf names `offcpu-time`.
const BPF_OUTPUT: u64 = 10;

/// The kernel frames of a wait (in the kernel map the prologue writes):
/// `__schedule`, `schedule` and a syscall's entry, as addresses only.
const KERNEL_CHAIN: [u64; 3] = [
    0xffff_ffff_8120_0100,
    0xffff_ffff_8120_0200,
    0xffff_ffff_8100_0130,
];

/// One summed wait: a thread (its index: 0 is the process's first), its
/// user stack (function names of the program, leaf first) and the time.
#[derive(Clone, Debug)]
pub struct OffCpuWait {
    /// The thread's index.
    pub thread: usize,
    /// The stack, leaf first.
    pub stack: Vec<String>,
    /// The time off CPU (ns).
    pub ns: u64,
}

/// The capture spec of `preset`'s machine with one event, `offcpu-time`,
/// sampled as perf samples it.
pub fn spec(preset: &Preset) -> CaptureSpec {
    let mut spec = preset.spec.clone();
    let mut attr = Attr::new(event_type::SOFTWARE, BPF_OUTPUT);
    attr.sampling = Sampling::Period(1);
    attr.sample_type = st::IDENTIFIER
        | st::IP
        | st::TID
        | st::TIME
        | st::ID
        | st::CPU
        | st::PERIOD
        | st::CALLCHAIN;
    attr.flags |= flags::DISABLED;
    spec.events = vec![EventSpec {
        name: "offcpu-time".into(),
        attr,
        cpus: vec![0],
    }];
    spec.groups = Vec::new();
    spec.cmdline = ["perf", "record", "--off-cpu", "-g", "--"]
        .into_iter()
        .map(str::to_string)
        .chain(spec.cmdline.last().cloned())
        .collect();
    spec
}

impl Workload<'_> {
    /// Writes an `offcpu-time` capture of `waits` to `path`: the process's
    /// records, their exits, then one sample per wait.
    pub fn write_off_cpu(
        &self,
        path: impl AsRef<Path>,
        preset: &Preset,
        waits: &[OffCpuWait],
    ) -> io::Result<Summary> {
        let mut spec = spec(preset);
        spec.build_ids = self.spec(preset).build_ids;
        let mut w = Writer::create(path, &spec)?;
        let threads: Vec<Thread> = (0..self.threads.max(1))
            .map(|i| Thread {
                tid: self.pid + i,
                cpu: 0,
                cpu_slot: 0,
                samplers: Vec::new(),
            })
            .collect();
        self.prologue(&mut w, &threads)?;
        self.epilogue(&mut w, &threads, self.start_ns + 1_000_000_000)?;
        let mut rng = Rng::new(self.seed);
        let mut chain = Vec::new();
        for x in waits {
            let t = threads
                .get(x.thread)
                .ok_or_else(|| io::Error::other(format!("no thread {}", x.thread)))?;
            let names: Vec<&str> = x.stack.iter().map(String::as_str).collect();
            let fr = self.resolve(&names)?;
            // The ip is the stack's innermost kernel frame, as perf's BPF
            // program records it.
            self.user_chain(&fr, &mut rng, &mut chain);
            w.sample(&SampleSpec {
                event: 0,
                ip: KERNEL_CHAIN[0],
                pid: self.pid,
                tid: t.tid,
                time: OFF_CPU_TIMESTAMP,
                cpu: 0,
                period: x.ns,
                callchain: Callchain {
                    kernel: &KERNEL_CHAIN,
                    user: &chain,
                },
                reads: &[],
            })?;
        }
        w.finish()
    }
}
