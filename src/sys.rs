//! The OS boundary: the only module that touches `/sys`, `/proc`, `/dev`, ioctls and `unsafe`.
//! Everything above it works on the plain data it returns.

pub mod parse;
pub mod privilege;
pub mod sysfs;

pub use sysfs::SysRoot;
