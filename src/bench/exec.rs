//! Running a plan: the target and its checks (`target`, `safety`, `rewrite_guard`), the test
//! file a run makes (`test_file`), the memory a plan needs (`memory`), the write data
//! (`pattern`), which I/O comes next (`io_sequence`), the engine probe (`probe`,
//! `probe_rounds`), the engines' interface (`engine`) and the engines (`engines`), the common
//! worker loop (`worker`), its start (`spawn`) and gate (`gate`), a run's input and events
//! (`run_input`), the runner (`runner`, `series`) and the session that ties a request to a run
//! (`session`).

pub mod engine;
pub mod engines;
pub mod gate;
pub mod io_sequence;
pub mod memory;
pub mod pattern;
pub mod probe;
pub mod probe_rounds;
pub mod rewrite_guard;
pub mod run_input;
pub mod runner;
pub mod safety;
pub mod series;
pub mod session;
pub mod spawn;
pub mod target;
pub mod test_file;
pub mod worker;
