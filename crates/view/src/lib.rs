/*!
perfq's samples in the formats of the viewers people already use: pprof
(`go tool pprof`, Pyroscope, Parca) and speedscope; and perfq's own
report, one self-contained HTML page (`html`). The samples, stacks,
locations and functions come from `perfq_query::profile`; this crate only
writes them.

```no_run
use perfq_query::{profile, Session};

let session = Session::open("dataset".as_ref())?;
let p = profile::profile(&session, &profile::Options::default())?;
let mut out = std::fs::File::create("profile.pb.gz")?;
perfq_view::pprof::write(&p, &mut out)?;
# Ok::<(), Box<dyn std::error::Error>>(())
```
*/
#![deny(missing_docs)]

pub mod html;
pub mod palette;
pub mod pprof;
pub mod speedscope;

/// What can go wrong writing a profile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The output could not be written.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The JSON could not be written.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// Nothing was sampled.
    #[error("no samples to write")]
    Empty,
    /// Texts beyond what 32-bit offsets reach.
    #[error("{0} take more than 4 GiB")]
    TooLarge(String),
    /// The dataset's answer.
    #[error(transparent)]
    Query(#[from] perfq_query::Error),
}
