/*!
Writes perf.data captures for tests and benchmarks, with the exact attr,
group and read layouts real top-down recordings have, on machines this
project has no access to (Ice Lake, Sapphire Rapids, Skylake, Zen 4/5,
Neoverse V2, Alder Lake hybrid).

Three layers:

* [`Writer`]: a file-mode, little-endian perf.data writer. A
  [`CaptureSpec`] gives the header features and the events (attrs, names,
  groups, cpus); records are streamed through a buffer ([`Writer::comm`],
  [`Writer::mmap2`], [`Writer::sample`], ...), and [`Writer::finish`]
  writes the feature sections and the header.
* [`presets`]: recording machines with their event lists as `perf record`
  writes them, and what each event counts ([`model`]).
* [`Workload`]: a real ELF program ([`Binary`]) whose functions form a
  [`CallTree`] with a top-down [`Mix`] per node; it writes the process
  records and samples with realistic callchains and the per-member counts
  the kernel would report, or values a test gives ([`ExplicitSample`]).

```no_run
use perfq_testgen::{presets, Binary, CallTree, Workload};

let preset = presets::get("sapphirerapids").expect("known preset");
let binary = Binary::open("testdata/td-demo")?;
let workload = Workload::new(&binary, "testdata/td-demo");
let summary = workload.write("/tmp/spr.data", &preset, &CallTree::td_demo(), 5000)?;
assert_eq!(summary.samples, 5000);
# Ok::<(), std::io::Error>(())
```
*/
#![deny(missing_docs)]

pub mod attr;
mod binary;
mod calltree;
pub mod features;
pub mod model;
pub mod off_cpu;
pub mod oracle;
pub mod presets;
pub mod records;
mod rng;
mod spec;
mod workload;
mod writer;

pub use crate::attr::{Attr, AttrSize, Sampling};
pub use crate::binary::{Binary, ExecSegment, Function};
pub use crate::calltree::{demo_mix, CallTree, Node};
pub use crate::features::BuildId;
pub use crate::model::{Family, Mix, Quantity};
pub use crate::presets::{Preset, Sampler};
pub use crate::rng::Rng;
pub use crate::spec::{CaptureSpec, EventSpec, GroupSpec};
pub use crate::workload::{Emitted, ExplicitSample, Values, Workload};
pub use crate::writer::{
    Callchain, Comm, KernelMmap, Mmap2, MmapFile, SampleSpec, Summary, Task, Writer,
};
