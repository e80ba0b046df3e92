/*!
Decode Linux `perf.data` captures.

`perfq-reader` opens a capture ([`Capture::open`]), in file or pipe mode,
either byte order, any attr size, zstd-compressed or not, and hands out its
records one at a time, in file order ([`Capture::records`]) or in time order
as perf's tools see them ([`Capture::records_by_time`]). Every record is
counted by type as `perf report -D` counts them ([`Stats`]). Sample bodies
are decoded here from `sample_type`, `read_format` and `branch_sample_type`
([`Sample`]); cumulative group-read values become per-sample deltas with
[`ReadDeltas`].

Damaged input never panics: a cut capture yields every complete record and
then a [`Warning`] naming the offset; an impossible record size ends the
stream with an [`Error`] naming the offset.

```no_run
use perfq_reader::{Capture, RecordData, ReadDeltas};

let capture = Capture::open("perf.data")?;
let mut deltas = ReadDeltas::new();
let mut out = Vec::new();
let mut records = capture.records_by_time();
while let Some(record) = records.next_record()? {
    if let (RecordData::Sample(s), _) = capture.parse(&record)? {
        if let Some(ev) = record.event.index() {
            out.clear();
            deltas.apply(capture.events(), ev, &s, &mut out);
            println!("{:?} {:?} {:?}", s.time, s.ip, out);
        }
    }
}
# Ok::<(), perfq_reader::Error>(())
```
*/
#![deny(missing_docs)]

mod attr;
mod capture;
mod deltas;
mod endian;
mod error;
mod events;
pub mod features;
mod framing;
mod header;
mod order;
mod record_type;
mod records;
mod sample;
mod tracepoint;
mod user_records;

pub use crate::attr::{
    event_type, read_format_names, sample_type_names, Attr, AttrFlags, BranchSampleType,
    ReadFormat, SampleType,
};
pub use crate::capture::{Capture, Meta, ReleaseBehind};
pub use crate::deltas::{MemberDelta, ReadDeltas};
pub use crate::endian::{Endian, U64s};
pub use crate::error::{Error, ErrorKind, FileOffset, Result, Warning};
pub use crate::events::{default_event_name, Event, EventIndex, EventRef, Events};
pub use crate::features::{PmuCaps, PmuMapping};
pub use crate::framing::{FileRecords, RawRecord, Stats, TypeCount};
pub use crate::header::{is_capture_magic, FileHeader, Mode, Section};
pub use crate::order::TimeOrdered;
pub use crate::record_type::{misc, RecordType};
pub use crate::records::{Comm, ForkExit, Mmap, MmapFileId, RecordData, SampleId};
pub use crate::sample::{
    BranchEntry, BranchFlags, BranchStack, Callchain, CallchainContext, CallchainFrame, ReadValue,
    ReadValues, Regs, Sample, StackUser, PERF_CONTEXT_MAX,
};
pub use crate::tracepoint::{TraceField, TracepointFormat, TracingData};
pub use crate::user_records::{AuxtraceError, EventUpdate, Stat, TimeConv};
