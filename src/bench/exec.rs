//! Running a plan: preparing and checking the target (`target`, `safety`, `rewrite_guard`)
//! and the test file a run makes (`test_file`), the memory a plan needs (`memory`), the data
//! writes carry (`pattern`), which I/O comes next (`io_sequence`), the engine probe (`probe`)
//! and its rounds (`probe_rounds`), the I/O engines' interface (`engine`) and the engines, one
//! file each (`engines`, the metadata test's directory engine among them), the common worker
//! loop that drives them (`worker`), how they are started (`spawn`) and the gate they meet at
//! (`gate`), what a run is given and reports (`run_input`), the runner that runs the phases
//! (`runner`), and the session that ties a request to a run (`session`).

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
