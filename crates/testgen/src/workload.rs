//! Samples of a program running on a preset's machine: the process and
//! its threads, the program's mapping, and samples whose stacks walk a
//! call tree and whose read values follow each node's top-down mix, or
//! values a test gives sample by sample.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Seek, Write};
use std::path::Path;

use crate::attr::Sampling;
use crate::binary::{Binary, Function};
use crate::calltree::CallTree;
use crate::features::BuildId;
use crate::model::{interval_counts, Mix, Quantity};
use crate::presets::{Preset, Sampler};
use crate::records::misc;
use crate::rng::Rng;
use crate::spec::CaptureSpec;
use crate::writer::{
    Callchain, Comm, KernelMmap, Mmap2, MmapFile, SampleSpec, Summary, Task, Writer,
};

/// The kernel's default multiplexing interval (`perf_event_mux_interval_ms`):
/// groups sharing a cpu take turns this often.
const MUX_NS: u64 = 4_000_000;

/// Records between two FINISHED_ROUNDs (perf writes one per ring-buffer
/// flush; any spacing is valid for records already in time order).
const ROUND: u64 = 1000;

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// The process being sampled and how it runs.
#[derive(Clone, Debug)]
pub struct Workload<'a> {
    /// The program.
    pub binary: &'a Binary,
    /// The path MMAP2 gives it (`testdata/td-demo`: relative paths are
    /// resolved from where perf or perfq runs).
    pub mapping: String,
    /// Process id; threads are `pid`, `pid + 1`, ...
    pub pid: u32,
    /// Number of threads; thread `i` runs on one cpu throughout, spread
    /// over the cpus the preset samples.
    pub threads: u32,
    /// Seed of every random choice.
    pub seed: u64,
    /// Relative jitter of each sample's level-1 mix (0 = exact).
    pub noise: f64,
    /// Clock rate: turns cycles into time.
    pub ghz: f64,
    /// Time of the first record (ns).
    pub start_ns: u64,
    /// Load address of a position-independent binary.
    pub base: u64,
}

/// What a test gives for one sample instead of a mix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Values {
    /// Per read member (the group in read order, or just the event), the
    /// count since the previous sample of the same stream.
    Deltas(Vec<u64>),
    /// Per read member, the cumulative value itself.
    Cumulative(Vec<u64>),
}

/// One sample given by a test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExplicitSample {
    /// Index in [`Preset::samplers`].
    pub sampler: usize,
    /// Function names, leaf first (`["checksum", "parse_input", "run",
    /// "main"]`); the ip falls in the leaf.
    pub stack: Vec<String>,
    /// Thread index (`0..threads`).
    pub thread: u32,
    /// The read values.
    pub values: Values,
}

/// A sample as written, handed to the caller's observer.
#[derive(Clone, Copy, Debug)]
pub struct Emitted<'a> {
    /// The record.
    pub sample: &'a SampleSpec<'a>,
    /// Index in [`Preset::samplers`].
    pub sampler: usize,
    /// Per read member (or the event alone), its delta: what perf
    /// attributes to this sample.
    pub deltas: &'a [u64],
    /// The leaf function.
    pub leaf: &'a str,
}

/// One thread of the process.
#[derive(Clone, Debug)]
pub(crate) struct Thread {
    pub(crate) tid: u32,
    pub(crate) cpu: u32,
    /// Index of its cpu among the sampled cpus.
    pub(crate) cpu_slot: usize,
    /// Samplers that sample on its cpu.
    pub(crate) samplers: Vec<usize>,
}

/// Cumulative counter values, kept as the kernel keeps them: per thread
/// for per-thread read events, else per cpu.
struct Counters {
    events: usize,
    per_thread: Vec<bool>,
    by_thread: Vec<u64>,
    by_cpu: Vec<u64>,
}

impl Counters {
    fn add(&mut self, event: usize, t: &Thread, thread: usize, delta: u64) -> u64 {
        let v = if self.per_thread[event] {
            &mut self.by_thread[thread * self.events + event]
        } else {
            &mut self.by_cpu[t.cpu_slot * self.events + event]
        };
        *v += delta;
        *v
    }

    fn get(&self, event: usize, t: &Thread, thread: usize) -> u64 {
        if self.per_thread[event] {
            self.by_thread[thread * self.events + event]
        } else {
            self.by_cpu[t.cpu_slot * self.events + event]
        }
    }

    /// Takes in the values test sample `n` (`x`, of thread `t`) gives for
    /// what `sampler` reads (or its event alone): their deltas into
    /// `st.deltas`, and for a read of a group, the cumulative values into
    /// `st.reads`. Returns the events the values are of.
    fn take_explicit(
        &mut self,
        n: usize,
        x: &ExplicitSample,
        sampler: &Sampler,
        t: &Thread,
        st: &mut Scratch,
    ) -> io::Result<Vec<usize>> {
        let ti = x.thread as usize;
        let members: Vec<usize> = if sampler.reads.is_empty() {
            vec![sampler.event]
        } else {
            sampler.reads.clone()
        };
        let given = match &x.values {
            Values::Deltas(v) | Values::Cumulative(v) => v,
        };
        if given.len() != members.len() {
            return Err(invalid(format!(
                "sample {n}: {} values for {} members",
                given.len(),
                members.len()
            )));
        }
        st.deltas.clear();
        st.reads.clear();
        for (&e, &v) in members.iter().zip(given) {
            let d = match x.values {
                Values::Deltas(_) => v,
                Values::Cumulative(_) => v.checked_sub(self.get(e, t, ti)).ok_or_else(|| {
                    invalid(format!(
                        "sample {n}: cumulative value of event {e} goes backwards"
                    ))
                })?,
            };
            st.deltas.push(d);
            let c = self.add(e, t, ti, d);
            if !sampler.reads.is_empty() {
                st.reads.push((e, c));
            }
        }
        Ok(members)
    }
}

/// The sampler and thread of test sample `n` (`x`), which must sample on
/// the thread's cpu.
fn explicit_place<'p>(
    preset: &'p Preset,
    threads: &'p [Thread],
    n: usize,
    x: &ExplicitSample,
) -> io::Result<(&'p Sampler, &'p Thread)> {
    let sampler = preset
        .samplers
        .get(x.sampler)
        .ok_or_else(|| invalid(format!("sample {n}: no sampler {}", x.sampler)))?;
    let t = threads
        .get(x.thread as usize)
        .ok_or_else(|| invalid(format!("sample {n}: no thread {}", x.thread)))?;
    if !sampler.cpus.contains(&t.cpu) {
        return Err(invalid(format!(
            "sample {n}: thread {} runs on cpu {}, where sampler {} does not sample",
            x.thread, t.cpu, x.sampler
        )));
    }
    Ok((sampler, t))
}

/// Draws the nodes of a call tree in proportion to their weights.
struct NodePicker {
    /// Each node's weight plus those of the nodes before it.
    cumulative: Vec<f64>,
    total: f64,
}

impl NodePicker {
    fn new(tree: &CallTree) -> io::Result<NodePicker> {
        let mut cumulative = Vec::with_capacity(tree.nodes().len());
        let mut total = 0.0;
        for n in tree.nodes() {
            total += n.weight;
            cumulative.push(total);
        }
        if total <= 0.0 {
            return Err(invalid("the call tree has no weight".into()));
        }
        Ok(NodePicker { cumulative, total })
    }

    fn pick(&self, rng: &mut Rng) -> usize {
        let x = rng.unit() * self.total;
        self.cumulative
            .partition_point(|&c| c <= x)
            .min(self.cumulative.len() - 1)
    }
}

/// What a run of samples drawn from a call tree works with.
struct Run<'r> {
    preset: &'r Preset,
    tree: &'r CallTree,
    threads: Vec<Thread>,
    /// Every node's stack, resolved once.
    frames: Vec<Frames>,
    picker: NodePicker,
    /// Time of the first sample.
    start: u64,
    rng: Rng,
    st: Scratch,
}

/// A sample drawn: its sampler and event, thread, time, period and ip.
struct Drawn {
    sampler: usize,
    event: usize,
    tid: u32,
    cpu: u32,
    time: u64,
    period: u64,
    ip: u64,
}

/// A resolved stack: the return addresses from the leaf's caller up.
pub(crate) struct Frames {
    leaf: Function,
    returns: Vec<u64>,
}

impl<'a> Workload<'a> {
    /// A workload of `binary`, mapped as `mapping`, with four threads.
    pub fn new(binary: &'a Binary, mapping: &str) -> Workload<'a> {
        Workload {
            binary,
            mapping: mapping.to_string(),
            pid: 4242,
            threads: 4,
            seed: 1,
            noise: 0.1,
            ghz: 3.0,
            start_ns: 1_000_000_000_000,
            // Where Linux puts PIE programs without ASLR.
            base: 0x5555_5555_4000,
        }
    }

    /// The capture spec: the preset's, with this program's build id and
    /// path on the command line.
    pub fn spec(&self, preset: &Preset) -> CaptureSpec {
        let mut spec = preset.spec.clone();
        if let Some(b) = self.binary.build_id() {
            spec.build_ids.push(BuildId {
                pid: -1,
                cpumode: misc::USER,
                build_id: b.to_vec(),
                filename: self.mapping.clone(),
            });
        }
        if let Some(last) = spec.cmdline.last_mut() {
            *last = self.mapping.clone();
        }
        spec
    }

    /// Writes a capture of `samples` samples of `tree` to `path`.
    pub fn write(
        &self,
        path: impl AsRef<Path>,
        preset: &Preset,
        tree: &CallTree,
        samples: u64,
    ) -> io::Result<Summary> {
        let mut w = Writer::create(path, &self.spec(preset))?;
        self.run(preset, tree, samples, &mut w, |_| {})?;
        w.finish()
    }

    /// The load bias: where link address 0 lands.
    fn bias(&self) -> u64 {
        if self.binary.is_position_independent() {
            self.base
        } else {
            0
        }
    }

    fn comm_name(&self) -> String {
        let base = self.mapping.rsplit('/').next().unwrap_or(&self.mapping);
        // The kernel keeps 15 bytes of a command name.
        base.chars().take(15).collect()
    }

    fn threads(&self, preset: &Preset) -> io::Result<Vec<Thread>> {
        let mut cpus: Vec<u32> = preset
            .samplers
            .iter()
            .flat_map(|s| s.cpus.iter().copied())
            .collect();
        cpus.sort_unstable();
        cpus.dedup();
        if cpus.is_empty() || self.threads == 0 {
            return Err(invalid("no cpu or no thread to sample".into()));
        }
        let n = self.threads as usize;
        Ok((0..n)
            .map(|i| {
                let cpu_slot = i * cpus.len() / n;
                let cpu = cpus[cpu_slot];
                Thread {
                    tid: self.pid + i as u32,
                    cpu,
                    cpu_slot,
                    samplers: (0..preset.samplers.len())
                        .filter(|&s| preset.samplers[s].cpus.contains(&cpu))
                        .collect(),
                }
            })
            .collect())
    }

    /// COMM, MMAP2 and FORK records of the process before its samples.
    pub(crate) fn prologue<W: Write + Seek>(
        &self,
        w: &mut Writer<W>,
        threads: &[Thread],
    ) -> io::Result<()> {
        let t0 = self.start_ns;
        let cpu = threads[0].cpu;
        // perf synthesizes the kernel's map first (time 0).
        let ktext = if w.spec().arch == "aarch64" {
            0xffff_8000_8000_0000
        } else {
            0xffff_ffff_8100_0000
        };
        w.kernel_mmap(&KernelMmap {
            addr: ktext,
            len: 0x0140_0000,
            pgoff: ktext,
            filename: "[kernel.kallsyms]_text",
        })?;
        w.comm(&Comm {
            pid: self.pid,
            tid: self.pid,
            name: &self.comm_name(),
            exec: true,
            time: t0,
            cpu,
        })?;
        let seg = self.binary.exec_segment();
        let start = seg.vaddr & !0xfff;
        let len = (seg.vaddr + seg.size).div_ceil(0x1000) * 0x1000 - start;
        let file = match self.binary.build_id() {
            Some(b) => MmapFile::BuildId(b),
            None => MmapFile::Inode {
                maj: 8,
                min: 1,
                ino: 1_234_567,
                ino_generation: 0,
            },
        };
        w.mmap2(&Mmap2 {
            pid: self.pid,
            tid: self.pid,
            addr: self.bias() + start,
            len,
            pgoff: seg.offset & !0xfff,
            prot: 5,  // PROT_READ | PROT_EXEC
            flags: 2, // MAP_PRIVATE
            file,
            filename: &self.mapping,
            time: t0 + 1000,
            cpu,
        })?;
        for (i, t) in threads.iter().enumerate().skip(1) {
            w.fork(&Task {
                pid: self.pid,
                ppid: self.pid,
                tid: t.tid,
                ptid: self.pid,
                time: t0 + 2000 + i as u64,
                cpu,
            })?;
        }
        Ok(())
    }

    /// EXIT records: the threads, then the process.
    pub(crate) fn epilogue<W: Write + Seek>(
        &self,
        w: &mut Writer<W>,
        threads: &[Thread],
        end: u64,
    ) -> io::Result<()> {
        for (i, t) in threads.iter().enumerate().rev() {
            w.exit(&Task {
                pid: self.pid,
                ppid: self.pid,
                tid: t.tid,
                ptid: if i == 0 { self.pid } else { t.tid },
                time: end + 1000 + (threads.len() - i) as u64,
                cpu: t.cpu,
            })?;
        }
        w.finished_round()
    }

    /// Counters at 0 for `preset`'s events, run by `threads`.
    fn counters(&self, preset: &Preset, threads: &[Thread]) -> Counters {
        let cpus = threads.iter().map(|t| t.cpu_slot).max().unwrap_or(0) + 1;
        let threads = threads.len();
        let events = preset.spec.events.len();
        Counters {
            events,
            per_thread: preset
                .spec
                .events
                .iter()
                .map(|e| e.attr.per_thread_read())
                .collect(),
            by_thread: vec![0; threads * events],
            by_cpu: vec![0; cpus * events],
        }
    }

    pub(crate) fn resolve(&self, names: &[&str]) -> io::Result<Frames> {
        let f = |n: &str| {
            self.binary
                .function(n)
                .cloned()
                .ok_or_else(|| invalid(format!("no function {n} in the binary")))
        };
        let fs = names.iter().map(|n| f(n)).collect::<io::Result<Vec<_>>>()?;
        let leaf = fs
            .first()
            .cloned()
            .ok_or_else(|| invalid("empty stack".into()))?;
        let bias = self.bias();
        let returns = fs
            .windows(2)
            .map(|p| bias + self.binary.return_address(&p[1], &p[0]))
            .collect();
        Ok(Frames { leaf, returns })
    }

    fn cycles_per_sample(&self, preset: &Preset, sampler: usize, rng: &mut Rng) -> u64 {
        let e = &preset.spec.events[preset.samplers[sampler].event];
        match e.attr.sampling {
            Sampling::Period(p) => p,
            // The kernel steers the period to the frequency; it wobbles.
            Sampling::Freq(f) => {
                let base = self.ghz * 1e9 / f.max(1) as f64;
                (base * (1.0 + 0.05 * rng.signed_unit())).max(1.0) as u64
            }
            Sampling::None => 1_000_000,
        }
    }

    fn jitter(&self, mix: &Mix, rng: &mut Rng) -> Mix {
        if self.noise <= 0.0 {
            return *mix;
        }
        let mut j = |x: f64| x * (1.0 + self.noise * rng.signed_unit());
        Mix {
            retiring: j(mix.retiring),
            bad_speculation: j(mix.bad_speculation),
            frontend: j(mix.frontend),
            backend: j(mix.backend),
            smt: j(mix.smt),
            ..*mix
        }
        .normalized()
    }

    /// Writes the process records and `samples` samples drawn from `tree`
    /// into `w`, calling `observe` with each sample; does not finish `w`.
    pub fn run<W: Write + Seek>(
        &self,
        preset: &Preset,
        tree: &CallTree,
        samples: u64,
        w: &mut Writer<W>,
        mut observe: impl FnMut(&Emitted<'_>),
    ) -> io::Result<()> {
        let threads = self.threads(preset)?;
        self.prologue(w, &threads)?;
        let mut r = Run {
            preset,
            tree,
            frames: self.tree_frames(tree)?,
            picker: NodePicker::new(tree)?,
            threads,
            start: self.start_ns + 1_000_000,
            rng: Rng::new(self.seed),
            st: Scratch::default(),
        };
        let end = if preset.independent {
            self.run_independent(&mut r, samples, w, &mut observe)?
        } else {
            self.run_groups(&mut r, samples, w, &mut observe)?
        };
        self.epilogue(w, &r.threads, end)
    }

    /// Every node's stack of `tree`, resolved.
    fn tree_frames(&self, tree: &CallTree) -> io::Result<Vec<Frames>> {
        (0..tree.nodes().len())
            .map(|i| {
                let names: Vec<&str> = tree
                    .stack(i)
                    .into_iter()
                    .map(|n| tree.nodes()[n].function.as_str())
                    .collect();
                self.resolve(&names)
            })
            .collect()
    }

    /// Groups: threads run side by side, each sampled by the sampler whose
    /// turn it is on its cpu, every sample reading its group. Returns the
    /// last sample's time.
    fn run_groups<W: Write + Seek>(
        &self,
        r: &mut Run<'_>,
        samples: u64,
        w: &mut Writer<W>,
        observe: &mut impl FnMut(&Emitted<'_>),
    ) -> io::Result<u64> {
        let preset = r.preset;
        let mut counters = self.counters(preset, &r.threads);
        let quantities: Vec<Vec<Quantity>> = preset
            .samplers
            .iter()
            .map(|s| s.reads.iter().map(|&e| preset.counts[e]).collect())
            .collect();
        // Threads run side by side: take the one whose next sample
        // comes first. Start them a little apart.
        let mut heap: BinaryHeap<Reverse<(u64, usize)>> = (0..r.threads.len())
            .map(|i| Reverse((r.start + i as u64 * 997, i)))
            .collect();
        let mut end = r.start;
        for n in 0..samples {
            let Some(Reverse((time, ti))) = heap.pop() else {
                break;
            };
            let t = &r.threads[ti];
            if t.samplers.is_empty() {
                continue;
            }
            let s = t.samplers[((time / MUX_NS) % t.samplers.len() as u64) as usize];
            let (d, node, cycles) =
                self.draw_group_sample(r, &mut counters, &quantities[s], ti, time, s);
            self.emit(w, observe, &d, &r.st, &r.frames[node].leaf.name)?;
            end = time;
            if (n + 1) % ROUND == 0 {
                w.finished_round()?;
            }
            let ns = (cycles as f64 / self.ghz).max(1.0) as u64;
            heap.push(Reverse((time + ns, ti)));
        }
        Ok(end)
    }

    /// The sample sampler `s` takes of thread `ti` at `time`: a node, its
    /// jittered mix counted over the sampler's period (`quantities`) into
    /// `r.st.deltas`, the group's cumulative values into `r.st.reads`, and
    /// an ip in the node's leaf with its callchain into `r.st.chain`.
    /// Returns it with its node and the cycles it took.
    fn draw_group_sample(
        &self,
        r: &mut Run<'_>,
        counters: &mut Counters,
        quantities: &[Quantity],
        ti: usize,
        time: u64,
        s: usize,
    ) -> (Drawn, usize, u64) {
        let sampler = &r.preset.samplers[s];
        let t = &r.threads[ti];
        let node = r.picker.pick(&mut r.rng);
        let mix = self.jitter(&r.tree.nodes()[node].mix, &mut r.rng);
        let cycles = self.cycles_per_sample(r.preset, s, &mut r.rng);
        let st = &mut r.st;
        interval_counts(
            sampler.family,
            sampler.width,
            cycles,
            &mix,
            quantities,
            &mut st.deltas,
        );
        st.reads.clear();
        for (&e, &d) in sampler.reads.iter().zip(&st.deltas) {
            st.reads.push((e, counters.add(e, t, ti, d)));
        }
        let ip = self.user_chain(&r.frames[node], &mut r.rng, &mut st.chain);
        let period = sampler
            .reads
            .iter()
            .position(|&e| e == sampler.event)
            .map_or(cycles, |i| st.deltas[i]);
        let d = Drawn {
            sampler: s,
            event: sampler.event,
            tid: t.tid,
            cpu: t.cpu,
            time,
            period,
            ip,
        };
        (d, node, cycles)
    }

    /// Independent events: in each slice of time every event counts;
    /// an event whose count passes its period takes a sample. Returns the
    /// last sample's time.
    fn run_independent<W: Write + Seek>(
        &self,
        r: &mut Run<'_>,
        samples: u64,
        w: &mut Writer<W>,
        observe: &mut impl FnMut(&Emitted<'_>),
    ) -> io::Result<u64> {
        let preset = r.preset;
        let events: Vec<usize> = preset.samplers.iter().map(|s| s.event).collect();
        let quantities: Vec<Quantity> = events.iter().map(|&e| preset.counts[e]).collect();
        let periods: Vec<u64> = (0..preset.samplers.len())
            .map(|s| self.cycles_per_sample(preset, s, &mut r.rng).max(1))
            .collect();
        let first = &preset.samplers[0];
        // Slices well below the shortest period, so samples land near
        // where their counts overflowed.
        let slice = (periods.iter().copied().min().unwrap_or(1_000_000) / 8).max(1000);
        let slice_ns = (slice as f64 / self.ghz).max(1.0) as u64;
        let mut since = vec![0u64; r.threads.len() * events.len()];
        let mut counts = Vec::new();
        let (mut written, mut step, mut end) = (0, 0u64, r.start);
        while written < samples {
            for (ti, t) in r.threads.iter().enumerate() {
                // Threads take their slices one after another, so records
                // stay in time order.
                let time =
                    r.start + step * slice_ns + ti as u64 * (slice_ns / r.threads.len() as u64);
                let node = r.picker.pick(&mut r.rng);
                let mix = self.jitter(&r.tree.nodes()[node].mix, &mut r.rng);
                interval_counts(
                    first.family,
                    first.width,
                    slice,
                    &mix,
                    &quantities,
                    &mut counts,
                );
                let fr = &r.frames[node];
                for (k, &e) in events.iter().enumerate() {
                    if written >= samples || !preset.samplers[k].cpus.contains(&t.cpu) {
                        continue;
                    }
                    let acc = &mut since[ti * events.len() + k];
                    *acc += counts[k];
                    if *acc < periods[k] {
                        continue;
                    }
                    *acc -= periods[k];
                    let ip = self.user_chain(fr, &mut r.rng, &mut r.st.chain);
                    r.st.deltas.clear();
                    r.st.deltas.push(periods[k]);
                    let d = Drawn {
                        sampler: k,
                        event: e,
                        tid: t.tid,
                        cpu: t.cpu,
                        time: time + k as u64,
                        period: periods[k],
                        ip,
                    };
                    self.emit(w, observe, &d, &r.st, &fr.leaf.name)?;
                    written += 1;
                    end = d.time;
                    if written % ROUND == 0 {
                        w.finished_round()?;
                    }
                }
            }
            step += 1;
        }
        Ok(end)
    }

    /// Writes the process records and one sample per entry of `samples`,
    /// with the values given; `observe` sees each sample.
    pub fn run_explicit<W: Write + Seek>(
        &self,
        preset: &Preset,
        samples: &[ExplicitSample],
        w: &mut Writer<W>,
        mut observe: impl FnMut(&Emitted<'_>),
    ) -> io::Result<()> {
        let mut rng = Rng::new(self.seed);
        let threads = self.threads(preset)?;
        self.prologue(w, &threads)?;
        let mut counters = self.counters(preset, &threads);
        let mut st = Scratch::default();
        let mut time = self.start_ns + 1_000_000;
        for (n, x) in samples.iter().enumerate() {
            let (sampler, t) = explicit_place(preset, &threads, n, x)?;
            let members = counters.take_explicit(n, x, sampler, t, &mut st)?;
            let names: Vec<&str> = x.stack.iter().map(String::as_str).collect();
            let fr = self.resolve(&names)?;
            let ip = self.user_chain(&fr, &mut rng, &mut st.chain);
            let period = members
                .iter()
                .position(|&e| e == sampler.event)
                .map_or(0, |i| st.deltas[i]);
            let d = Drawn {
                sampler: x.sampler,
                event: sampler.event,
                tid: t.tid,
                cpu: t.cpu,
                time,
                period,
                ip,
            };
            self.emit(w, &mut observe, &d, &st, &fr.leaf.name)?;
            time += (period as f64 / self.ghz).max(1000.0) as u64;
        }
        self.epilogue(w, &threads, time)
    }

    /// Draws an ip in the leaf of `fr` and writes the user callchain (the
    /// ip, then the return addresses) into `chain`. Returns the ip.
    pub(crate) fn user_chain(&self, fr: &Frames, rng: &mut Rng, chain: &mut Vec<u64>) -> u64 {
        let ip = self.bias() + fr.leaf.addr + rng.below(fr.leaf.size);
        chain.clear();
        chain.push(ip);
        chain.extend_from_slice(&fr.returns);
        ip
    }

    /// Writes sample `d` (its user callchain in `st.chain`, its read values
    /// in `st.reads`) and shows it to `observe` with its deltas
    /// (`st.deltas`) and `leaf` function.
    fn emit<W: Write + Seek>(
        &self,
        w: &mut Writer<W>,
        observe: &mut impl FnMut(&Emitted<'_>),
        d: &Drawn,
        st: &Scratch,
        leaf: &str,
    ) -> io::Result<()> {
        let sample = SampleSpec {
            event: d.event,
            ip: d.ip,
            pid: self.pid,
            tid: d.tid,
            time: d.time,
            cpu: d.cpu,
            period: d.period,
            callchain: Callchain {
                kernel: &[],
                user: &st.chain,
            },
            reads: &st.reads,
        };
        w.sample(&sample)?;
        observe(&Emitted {
            sample: &sample,
            sampler: d.sampler,
            deltas: &st.deltas,
            leaf,
        });
        Ok(())
    }
}

/// Buffers reused from sample to sample.
#[derive(Default)]
struct Scratch {
    deltas: Vec<u64>,
    reads: Vec<(usize, u64)>,
    chain: Vec<u64>,
}
