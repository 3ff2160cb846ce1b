//! Unit newtypes so that bytes, sectors and rates can never be mixed up.
//!
//! Capacities are shown in IEC binary units (KiB, MiB, GiB: powers of 1024) as `lsblk` does;
//! throughput is shown in decimal MB/s (10^6 bytes per second) as dd, fio's `bw_bytes` and
//! CrystalDiskMark do, or explicitly as MiB/s. The suffix always says which.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;

/// A duration as progress lines and screens show it: "2:05", "1:02:03".
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// The kernel's unit of `size` and `stat`: 512 bytes, whatever the device.
pub const KERNEL_SECTOR_BYTES: u64 = 512;

/// A byte count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
#[serde(transparent)]
pub struct Bytes(pub u64);

impl Bytes {
    /// Bytes of the kernel's 512-byte sectors, saturating.
    pub fn from_kernel_sectors(sectors: u64) -> Self {
        Bytes(sectors.saturating_mul(KERNEL_SECTOR_BYTES))
    }

    /// IEC units, one decimal ("465.8 GiB").
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

    /// Decimal units ("2.0 TB"), as a drive's box states it.
    pub fn si(self) -> String {
        const UNITS: [&str; 6] = ["kB", "MB", "GB", "TB", "PB", "EB"];
        if self.0 < 1000 {
            return format!("{} B", self.0);
        }
        let mut value = self.0 as f64 / 1000.0;
        let mut unit = 0;
        while value >= 999.95 && unit + 1 < UNITS.len() {
            value /= 1000.0;
            unit += 1;
        }
        format!("{value:.1} {}", UNITS[unit])
    }

    /// A request-size label: "512", "4k", "1M" (powers of 1024).
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

/// A rate in bytes per second, shown as MB/s or MiB/s.
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

/// Why typed size or duration was not understood, and what to type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UnitParseError(String);

impl FromStr for Bytes {
    type Err = UnitParseError;

    /// Parses "4096", "4k", "1M", "1MiB", "2G": powers of 1024.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, unit) = t.split_at(digits_end);
        let n: u64 = num
            .parse()
            .map_err(|_| UnitParseError(format!("{s:?} is not a size (try 4k, 1M, 1G)")))?;
        let shift = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 0,
            "k" | "kb" | "kib" => 10,
            "m" | "mb" | "mib" => 20,
            "g" | "gb" | "gib" => 30,
            "t" | "tb" | "tib" => 40,
            _ => {
                return Err(UnitParseError(format!(
                    "{s:?}: unknown unit (use k, M, G or T)"
                )));
            }
        };
        n.checked_mul(1u64 << shift)
            .map(Bytes)
            .ok_or_else(|| UnitParseError(format!("{s:?} is too large")))
    }
}

/// A duration the admin typed: at most 30 days.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct TimeSpan(pub Duration);

impl FromStr for TimeSpan {
    type Err = UnitParseError;

    /// Parses "10s", "500ms", "2m", "1h" or a bare number of seconds ("1.5").
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let n: f64 = num
            .parse()
            .map_err(|_| UnitParseError(format!("{s:?} is not a duration (try 500ms, 10s, 2m)")))?;
        let secs = match unit.trim() {
            "" | "s" => n,
            "ms" => n / 1000.0,
            "m" | "min" => n * 60.0,
            "h" => n * 3600.0,
            _ => {
                return Err(UnitParseError(format!(
                    "{s:?}: unknown unit (use ms, s, m or h)"
                )));
            }
        };
        if !secs.is_finite() || !(0.0..=30.0 * 86_400.0).contains(&secs) {
            return Err(UnitParseError(format!("{s:?} is out of range")));
        }
        Ok(TimeSpan(Duration::from_secs_f64(secs)))
    }
}

/// SplitMix64: counter-based, so any thread computes the k-th value without state.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_reads_as_a_clock_with_hours_from_one_hour_on() {
        let at = |s| clock(Duration::from_secs(s));
        assert_eq!(at(0), "0:00");
        assert_eq!(at(59), "0:59");
        assert_eq!(at(65), "1:05");
        assert_eq!(at(3599), "59:59");
        assert_eq!(at(3723), "1:02:03");
        assert_eq!(at(99 * 3600 + 59 * 60 + 59), "99:59:59");
        assert_eq!(clock(Duration::from_millis(125_999)), "2:05");
    }

    fn size(s: &str) -> Result<u64, String> {
        s.parse::<Bytes>().map(|b| b.0).map_err(|e| e.to_string())
    }

    fn span(s: &str) -> Result<Duration, String> {
        s.parse::<TimeSpan>()
            .map(|t| t.0)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn sizes_are_powers_of_1024_and_errors_say_what_to_type() {
        assert_eq!(size("512"), Ok(512));
        assert_eq!(size("4k"), Ok(4096));
        assert_eq!(size("4K"), Ok(4096));
        assert_eq!(size("1MiB"), Ok(1 << 20));
        assert_eq!(size("2G"), Ok(2 << 30));
        assert_eq!(
            size("1.5M"),
            Err("\"1.5M\": unknown unit (use k, M, G or T)".into())
        );
        assert_eq!(size(""), Err("\"\" is not a size (try 4k, 1M, 1G)".into()));
        assert_eq!(
            size("99999999999T"),
            Err("\"99999999999T\" is too large".into())
        );
    }

    #[test]
    fn durations_take_units_and_stay_in_range() {
        assert_eq!(span("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(span("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(span("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(span("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(
            span("-1s"),
            Err("\"-1s\" is not a duration (try 500ms, 10s, 2m)".into())
        );
        assert_eq!(
            span("10 parsecs"),
            Err("\"10 parsecs\": unknown unit (use ms, s, m or h)".into())
        );
        assert_eq!(
            span("31d"),
            Err("\"31d\": unknown unit (use ms, s, m or h)".into())
        );
        assert_eq!(span("800h"), Err("\"800h\" is out of range".into()));
    }

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
