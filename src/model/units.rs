//! Unit newtypes so that bytes, sectors and rates can never be mixed up.
//!
//! Capacities are shown in IEC binary units (KiB, MiB, GiB: powers of 1024) as `lsblk` does;
//! throughput is shown in decimal MB/s (10^6 bytes per second) as dd, fio's `bw_bytes` and
//! CrystalDiskMark do, or explicitly as MiB/s. The suffix always says which.

use std::fmt;

use serde::Serialize;

/// The kernel's unit for `/sys/block/X/size` and `stat`: always 512 bytes, whatever the
/// device's logical block size (see `Documentation/ABI/stable/sysfs-block`).
pub const KERNEL_SECTOR_BYTES: u64 = 512;

/// A byte count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
#[serde(transparent)]
pub struct Bytes(pub u64);

impl Bytes {
    /// Converts a count of the kernel's 512-byte sectors into bytes, saturating on overflow.
    pub fn from_kernel_sectors(sectors: u64) -> Self {
        Bytes(sectors.saturating_mul(KERNEL_SECTOR_BYTES))
    }

    /// Formats with IEC binary units and one decimal ("465.8 GiB"); plain bytes below 1 KiB.
    pub fn iec(self) -> String {
        const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
        if self.0 < 1024 {
            return format!("{} B", self.0);
        }
        let mut value = self.0 as f64 / 1024.0;
        let mut unit = 0;
        while value >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        format!("{value:.1} {}", UNITS[unit])
    }

    /// A compact request-size label as benchmarks write it: "512", "4k", "1M" (powers of 1024).
    pub fn short(self) -> String {
        let b = self.0;
        if b >= 1 << 30 && b.is_multiple_of(1 << 30) {
            format!("{}G", b >> 30)
        } else if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
            format!("{}M", b >> 20)
        } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
            format!("{}k", b >> 10)
        } else {
            b.to_string()
        }
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.iec())
    }
}

/// A transfer rate in bytes per second. Shown as MB/s (10^6) or MiB/s (2^20), never both
/// under one label.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize)]
#[serde(transparent)]
pub struct BytesPerSec(pub f64);

impl BytesPerSec {
    /// Rate from a byte count over a duration; zero for an empty duration.
    pub fn from_bytes(bytes: u64, seconds: f64) -> Self {
        if seconds > 0.0 {
            BytesPerSec(bytes as f64 / seconds)
        } else {
            BytesPerSec(0.0)
        }
    }

    /// Decimal megabytes per second (10^6 bytes).
    pub fn mb_per_sec(self) -> f64 {
        self.0 / 1e6
    }

    /// Binary mebibytes per second (2^20 bytes).
    pub fn mib_per_sec(self) -> f64 {
        self.0 / 1_048_576.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iec_formatting_uses_binary_units() {
        assert_eq!(Bytes(0).iec(), "0 B");
        assert_eq!(Bytes(1023).iec(), "1023 B");
        assert_eq!(Bytes(1024).iec(), "1.0 KiB");
        assert_eq!(Bytes(536_870_912 * 512).iec(), "256.0 GiB");
        assert_eq!(Bytes(u64::MAX).iec(), "16.0 EiB");
    }

    #[test]
    fn kernel_sectors_are_512_bytes_and_saturate() {
        assert_eq!(Bytes::from_kernel_sectors(8), Bytes(4096));
        assert_eq!(Bytes::from_kernel_sectors(u64::MAX), Bytes(u64::MAX));
    }

    #[test]
    fn short_labels() {
        assert_eq!(Bytes(512).short(), "512");
        assert_eq!(Bytes(4096).short(), "4k");
        assert_eq!(Bytes(1 << 20).short(), "1M");
        assert_eq!(Bytes(3 << 30).short(), "3G");
        assert_eq!(Bytes(1536).short(), "1536");
    }

    #[test]
    fn rates_keep_decimal_and_binary_apart() {
        let r = BytesPerSec::from_bytes(209_715_200, 1.7003);
        assert!((r.mb_per_sec() - 123.34).abs() < 0.01, "{}", r.mb_per_sec());
        assert!(
            (r.mib_per_sec() - 117.63).abs() < 0.01,
            "{}",
            r.mib_per_sec()
        );
        assert_eq!(BytesPerSec::from_bytes(10, 0.0).0, 0.0);
    }
}
