//! The OS boundary: the only module that touches `/sys`, `/proc`, `/dev`, ioctls and `unsafe`.
//! Everything above it works on the plain data it returns.

pub mod direct;
pub mod host;
pub mod parse;
pub mod privilege;
pub mod sysfs;
pub mod uring;

pub use sysfs::SysRoot;
