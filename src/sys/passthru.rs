//! Pass-through commands: the raw bytes disktriage sends to a drive and the ioctls that carry
//! them. `sgio` moves one SCSI command through `SG_IO`; `sg_queue` keeps several READs in
//! flight through a disk's sg node (the surface scan's pieces of a block); `ata` wraps ATA
//! commands in ATA PASS-THROUGH(16) on top of `sgio`; `scsi` is MODE SENSE / MODE SELECT of
//! the caching page; `nvme` is the NVMe admin ioctl.
//!
//! These modules know how to issue a command and report its transport-level outcome, not which
//! drive needs which command: that choice is made per transport in `crate::sys::drives`. The
//! command blocks and the meaning of the answers are pure code in `crate::smart`.

pub mod ata;
pub mod nvme;
pub mod scsi;
pub mod sg_queue;
pub mod sgio;
