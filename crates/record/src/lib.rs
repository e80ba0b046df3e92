//! What `perfq record` needs before perf runs: the machine it records on
//! ([`Machine`], read under a root folder so that tests can hand it any
//! machine), the perf it has ([`Perf`]), what the user may record
//! ([`Privilege`]), and the choice of how to record top-down events there
//! ([`plan()`]): the formula sets the CPU uses, for each the method of
//! `perfq-topdown`'s `methods.td` that this perf, kernel and core can
//! take, and the `perf record` command line.

mod explain;
pub mod fixture;
mod machine;
mod off_cpu;
mod perf;
mod plan;
mod privilege;
mod version;

pub use explain::{explain, shell_line};
pub use machine::{Machine, Pmu};
pub use perf::Perf;
pub use plan::{method_table, plan, Chosen, Plan, Rate, Refusal, Request, Target};
pub use privilege::Privilege;
pub use version::Version;
