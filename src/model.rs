//! Plain data shared by every layer: devices, units, usage, the drive's cache, SMART health,
//! recorded setting changes and a drive's fitness for an array (`fitness`). No I/O happens
//! here. `variants` is the `with_all!` macro that gives a name enum its list of every variant.

pub mod activity;
pub mod cache;
pub mod change;
pub mod device;
pub mod drivelog;
pub mod exit;
pub mod fitness;
pub mod identity;
pub mod smart;
pub mod text;
pub mod units;
pub mod usage;
pub mod variants;

// The library's surface (docs/development.md): `disktriage::model::Item`.
pub use device::{ParseValueError, SwapEntry, SwapKind};
pub use text::{clean_text, neutralize_controls, unescape_octal};
pub use usage::MountEntry;

pub use cache::{CacheAgreement, CacheStatus, DriveCache};
pub use change::{
    DeviceId, DeviceIdentity, JournalEntry, Lifetime, Owner, Setting, SettingKind, is_kernel_name,
};
pub use device::{
    BlockDevice, ChosenDevice, DevNum, FileId, Holder, HolderKind, InUse, Inventory,
    KernelWriteCache, LoopBacking, LoopLink, Partition, SchedulerSet, Transport,
};
pub use drivelog::{
    DriveLogs, ErrorEntry, ErrorLog, LogRead, SelfTestEntry, SelfTestKind, SelfTestLog,
    SelfTestOutcome, SelfTestProgress, SelfTestStatus,
};
pub use exit::{TABLE as EXIT_STATUSES, UsageError};
pub use fitness::{DriveFitness, Erc, WriteCache, ZoneModel, Zoning};
pub use identity::DiskIdentity;
pub use smart::{
    AtaAttribute, AtaDrive, AtaSmart, AtaSmartStatus, AttributeState, Finding, NvmeHealth,
    SavedFormat, SavedReport, SmartHealth, SmartReading, SmartctlIdentity, SmartctlReport, Verdict,
};
pub use units::{Bytes, BytesPerSec, TimeSpan, clock};
