/*!
Turn the addresses of a perf.data capture into what a person reads.

[`Tracker`] follows the capture's sideband (MMAP/MMAP2, FORK, exec) in time
order and tells, for each sample address, its [`Location`]: a DSO and file
offset, a kernel address, or nothing mapped. [`Symbolizer`] resolves
locations to symbols: ELF `.symtab`/`.dynsym` through `object`, inline
chains and file:line through `addr2line`, kernel symbols from kallsyms,
Rust and C++ names demangled. Binaries are found by path (under a
`--symfs` root), in perf's build-id cache or `/usr/lib/debug`, and a
build-id mismatch is reported, never symbolized.

```no_run
use perfq_reader::{Capture, RecordData};
use perfq_symbolize::{Config, Symbolizer, Tracker};

let capture = Capture::open("perf.data")?;
let mut tracker = Tracker::new(&capture);
let mut locations = Vec::new();
let mut records = capture.records_by_time();
while let Some(r) = records.next_record()? {
    match capture.parse(&r)? {
        (RecordData::Sample(s), _) => {
            if let (Some(pid), Some(ip)) = (s.pid, s.ip) {
                locations.push(tracker.locate(pid, ip, None));
            }
        }
        (other, _) => tracker.observe(&other),
    }
}
let symbolizer = Symbolizer::new(&Config::default(), tracker.kernel_build_id(), capture.meta().os_release.as_deref());
for r in &symbolizer.resolve_all(&tracker, &locations) {
    println!("{} {:?}", r.dso, r.symbol);
}
# Ok::<(), perfq_reader::Error>(())
```
*/
#![deny(missing_docs)]

mod binary;
mod binary_cache;
mod demangle;
mod dso;
mod kallsyms;
mod locate;
mod location_cache;
mod maps;
mod recent_chains;
mod symbol_disk;
mod symbolizer;
mod symtab;
mod tracker;
mod unwind;

pub use crate::binary::{Binary, BinaryError, FileBytes, SectionBytes, UnwindSections};
pub use crate::binary_cache::BinaryCache;
pub use crate::demangle::{demangle, display_name};
pub use crate::dso::{Dso, DsoId, DsoKind, Dsos};
pub use crate::kallsyms::{running_kernel_build_id, Kallsyms};
pub use crate::locate::{same_build_id, LocateError, Locator};
pub use crate::location_cache::LocationCache;
pub use crate::maps::{AddressSpaces, Mapping, Maps};
pub use crate::recent_chains::{ChainStart, RecentChains};
pub use crate::symbol_disk::SymbolDisk;
pub use crate::symbolizer::{
    Config, InlineFrame, Placed, Resolutions, Resolved, Symbolizer, Unresolved,
};
pub use crate::symtab::{Rank, RawSymbol, Symbol, SymbolTable};
pub use crate::tracker::{
    chain_lookups, leaf_lookup, push_chain_lookups, unwound_lookups, FrameLookup, Location,
    ProcessSpace, Tracker, TrackerAt,
};
pub use crate::unwind::StackUnwinder;
