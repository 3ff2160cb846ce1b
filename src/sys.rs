//! The OS boundary: the only module that touches `/sys`, `/proc`, `/dev`, ioctls, signals and
//! `unsafe`. Everything above it works on the plain data it returns.
//!
//! Device commands go through the `DriveControl` trait (`drive_control`), implemented for Linux by
//! `drives::LinuxDrives` (one driver per transport under `drives/`) and faked for tests by
//! `fake::FakeDrives`. The commands themselves (SG_IO, ATA PASS-THROUGH, SCSI mode pages, NVMe
//! admin) are in `passthru`. Only the modules that issue ioctls, io_uring or signal handlers
//! use `unsafe`, each block with a `SAFETY:` comment; the crate denies `unsafe` everywhere else
//! (`lib.rs` grants this module its one exemption).

pub mod activity;
pub mod confined;
pub mod direct;
pub mod dirops;
pub mod dm;
pub mod drive_control;
pub mod drives;
pub mod error;
pub mod fake;
pub mod host;
pub mod links;
pub mod parse;
pub mod passthru;
pub mod privilege;
pub mod process;
pub mod scan;
pub mod signals;
pub mod smartctl;
pub mod sysfs;
pub mod uring;

pub use drive_control::{Applied, DriveControl, ResolvedDisk};
pub use drives::LinuxDrives;
pub use error::DriveError;
pub use fake::{FakeDevice, FakeDrives};
pub use sysfs::SysRoot;
