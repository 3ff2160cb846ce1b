//! The triage: one verdict per disk (healthy, suspect, failing or unknown) with the findings
//! behind it, from facts gathered read-only within a time bound.
//!
//! - `facts`: what was gathered about one disk (identity, SMART, logs, link, measurements) as
//!   plain data; the JSON report's `disks[]` entries are built from it.
//! - `rules`: the one table of stated rules and `judge`, pure functions over `facts`.
//! - `saved`: a saved smartctl report as a disk's facts (`triage --report`).
//! - `gather`: reads the facts of the chosen disks (through `sys`) and measures them, in
//!   parallel and within the bound, reporting progress per disk.
//! - `measure`: the reads themselves over a `BlockReader` (surface samples, sequential, QD1
//!   random), each stopping at its limit; `plan`: their pure arithmetic (strata, aligned
//!   offsets, percentiles, MB/s); `link`: the negotiated link against the best both ends
//!   support.
//!
//! The JSON schema, the Prometheus series and the exit status are `report::triage`'s.

pub mod changes;
pub mod counters;
pub mod facts;
pub mod gather;
pub mod link;
pub mod measure;
pub mod plan;
pub mod rules;
pub mod saved;

pub use changes::Change;
pub use facts::{
    DiskFacts, DiskIdentityFacts, FlushFact, LinkState, Measurements, SeqPosition, SeqRead,
    SurfaceSample, TriageVerdict, Unreadable,
};
pub use gather::{GatherOptions, Progress, every_disk, gather, gather_until};
pub use rules::{Finding, Judgement, RULES, Rule, judge, judge_all};
pub use saved::facts_of_report;
