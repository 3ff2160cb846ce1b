//! Running a plan: preparing and checking the target (`target`, `safety`, `rewrite_guard`),
//! the data writes carry (`pattern`), the engine probe (`probe`), the workers' I/O loops
//! (`worker`) and the gate they meet at (`gate`), the runner that runs the phases
//! (`runner`), and the session that ties a request to a run (`session`).

pub mod gate;
pub mod pattern;
pub mod probe;
pub mod rewrite_guard;
pub mod runner;
pub mod safety;
pub mod session;
pub mod target;
pub mod worker;
