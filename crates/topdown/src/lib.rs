/*!
Top-down microarchitecture analysis (TMA) as data.

Each CPU family's formulas are a table (in `sets/`, read into a
[`FormulaSet`]); which family a capture was recorded on is found from its
header as perf finds its own tables ([`detect`], `cpus.td`); which of its
events plays which part is decided by PMU type and masked config
([`role_of`]); and a set made ready for a capture ([`SetUse::compile`])
gives each node's formula as an [`Expr`] over event sums, which the query
layer writes out as SQL ([`Expr::to_sql`]) and differentiates for standard
errors ([`Expr::derivative`]).

```
use perfq_topdown::{detect, CpuInfo};

let info = CpuInfo {
    arch: Some("x86_64".into()),
    cpuid: Some("GenuineIntel,6,143,8".into()),
    pmus: Vec::new(),
};
let model = detect(&info)?;
assert_eq!(model.name, "sapphirerapids");
let l1 = model.sets[0].compile(&|role| !role.starts_with("td_") || role <= "td_retiring");
// Level 1 needs only slots and the four PERF_METRICS level-1 events.
let sums = |role: &str| match role {
    "td_retiring" => Some(2_980_392.0),
    "td_bad_spec" => Some(980_392.0),
    "td_fe_bound" => Some(2_509_803.0),
    "td_be_bound" => Some(3_529_411.0),
    _ => Some(0.0),
};
let values = l1.evaluate(&sums);
let retiring = values.iter().find(|v| v.0 == "retiring").and_then(|v| v.1);
assert!((retiring.unwrap() - 0.298039).abs() < 1e-6);
# Ok::<(), Box<dyn std::error::Error>>(())
```
*/
#![deny(missing_docs)]

mod compile;
mod cpu;
pub mod expr;
mod layers;
mod method;
mod recognize;
mod set;

pub use crate::compile::{Compiled, CompiledNode};
pub use crate::cpu::{
    by_name, cpuid_key, detect, is_arm_core_pmu, known_models, parse_midr, CpuInfo, DetectError,
    Model, PmuInfo, SetUse,
};
pub use crate::expr::{Cond, Expr};
pub use crate::layers::{layer, Layers};
pub use crate::method::{methods, methods_for, Budget, Method, TooFew, GENERIC};
pub use crate::recognize::{pmu_types, role_of, EventKey, TYPE_HARDWARE, TYPE_RAW};
pub use crate::set::{
    set, sets, Const, EventRole, FormulaSet, Matcher, Node, PmuClass, SetError, LEVEL1,
};
