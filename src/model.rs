//! Plain data shared by every layer: devices, units, usage. No I/O happens here.

pub mod device;
pub mod units;
pub mod usage;

pub use device::{
    BlockDevice, DevNum, Holder, HolderKind, InUse, Inventory, KernelWriteCache, Partition,
    SchedulerSet, Transport,
};
pub use units::{Bytes, BytesPerSec};
