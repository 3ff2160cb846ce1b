//! The OS boundary: the only module that touches `/sys`, `/proc`, `/dev`, ioctls, signals and
//! `unsafe`. Everything above it works on the plain data it returns.
//!
//! Device commands go through the `DriveControl` trait (`drive_control`): `drives::LinuxDrives`
//! on Linux (one driver per transport under `drives/`), `fake::FakeDrives` in tests. The
//! commands themselves (SG_IO, ATA PASS-THROUGH, SCSI mode pages, NVMe admin) are in
//! `passthru`. Only modules issuing ioctls, io_uring or signal handlers use `unsafe`, each
//! block with a `SAFETY:` comment (`lib.rs` exempts this module alone).

pub mod activity;
pub mod capacity;
pub mod confined;
pub mod direct;
pub mod dirops;
pub mod discard;
pub mod dm;
pub mod drive_control;
pub mod drives;
pub mod error;
pub mod fake;
pub mod flush;
pub mod flush_log;
pub mod host;
pub mod input_file;
pub mod links;
pub mod output_file;
pub mod parse;
pub mod passthru;
pub mod privilege;
pub mod process;
pub mod rotation;
pub mod scan;
pub mod signals;
pub mod smartctl;
pub mod sysfs;
pub mod uring;

pub use drive_control::{Applied, DriveControl, ResolvedDisk};
// The library's surface (`disktriage::sys::Item`), checked by the integration tests.
pub use direct::SyncMode;
pub use drives::classify_transport;
pub use host::HostInfo;
pub use parse::{
    parse_devnum, parse_disk_stat, parse_flag, parse_inflight, parse_mountinfo, parse_number,
    parse_stat_start_time, parse_swaps, parse_vpd_serial,
};
pub use scan::ScanDevice;
pub use sysfs::{classify_holder, dev_node_path};
pub use uring::{UringQueue, WriteSource};

pub use drives::LinuxDrives;
pub use error::DriveError;
pub use fake::{FakeDevice, FakeDrives};
pub use sysfs::SysRoot;
