//! The triage: one verdict per disk (healthy, suspect, failing or unknown) and its findings,
//! from facts gathered read-only within a time bound.
//!
//! - `facts`: what was gathered about one disk, as plain data; the JSON `disks[]` come from it.
//! - `rules`: the one table of rules and `judge`, pure functions over `facts`.
//! - `saved`: a saved smartctl report as a disk's facts (`triage --report`).
//! - `gather`: reads and measures the chosen disks (through `sys`), in parallel, within the
//!   bound, with progress per disk.
//! - `measure`: the reads over a `BlockReader` (surface samples, sequential, QD1 random), each
//!   stopping at its limit; `plan`: their pure arithmetic; `link`: the negotiated link
//!   against the best both ends support.
//! - `counters`, `changes`: the values a triage keeps, and what changed since the last one.
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
