//! The drive's own volatile write cache as the drive reports it, and how it compares with the
//! kernel's flush policy (`queue/write_cache`).
//!
//! Two different things share the words "write cache": the drive's setting (ATA SET FEATURES,
//! the SCSI caching mode page's WCE bit, NVMe feature 0x06, virtio's `cache_type`) decides
//! whether the drive acknowledges writes before they reach the media; the kernel's flag only
//! decides whether the kernel sends FLUSH/FUA. They are kept apart here and compared.

use std::fmt;

use serde::Serialize;

use super::device::{KernelWriteCache, Transport};

/// "on" or "off".
pub fn on_off(enabled: bool) -> &'static str {
    if enabled { "on" } else { "off" }
}

/// What the drive says about its volatile write cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DriveCache {
    /// `Some(true)`: on; `Some(false)`: off; `None`: the drive reports no volatile write cache
    /// (ATA IDENTIFY word 82 bit 5 clear, NVMe VWC bit 0 clear).
    pub enabled: Option<bool>,
    /// Whether the drive lets the host switch it (SCSI: WCE in the changeable mask; virtio:
    /// `cache_type` writable).
    pub changeable: bool,
    /// Why it cannot be switched, when it cannot.
    pub fixed_reason: Option<String>,
    /// Where the answer came from, for the report ("ATA IDENTIFY word 85").
    pub source: String,
}

impl DriveCache {
    /// "on", "off" or "none (no volatile cache)".
    pub fn state_label(&self) -> &'static str {
        match self.enabled {
            Some(true) => "on",
            Some(false) => "off",
            None => "none (the drive reports no volatile write cache)",
        }
    }
}

/// How the kernel's flush policy relates to the drive's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheAgreement {
    /// Both say the same (or one of them is unknown, so nothing can be said).
    Agree,
    /// The kernel sends flushes the drive does not need: costs a little, loses nothing.
    HarmlessMismatch,
    /// The drive caches writes but the kernel sends no flushes: data the kernel believes is on
    /// the media can be lost on power failure.
    DangerousMismatch,
}

/// Compares the drive's state with the kernel's flag.
pub fn compare(drive: Option<bool>, kernel: Option<KernelWriteCache>) -> CacheAgreement {
    match (drive, kernel) {
        (Some(true), Some(KernelWriteCache::WriteThrough)) => CacheAgreement::DangerousMismatch,
        (Some(false) | None, Some(KernelWriteCache::WriteBack)) => CacheAgreement::HarmlessMismatch,
        _ => CacheAgreement::Agree,
    }
}

impl CacheAgreement {
    /// The sentence a report prints when they disagree.
    pub fn explain(self, drive: Option<bool>, kernel: Option<KernelWriteCache>) -> Option<String> {
        let kernel = kernel.map(KernelWriteCache::as_str).unwrap_or("?");
        match self {
            CacheAgreement::Agree => None,
            CacheAgreement::HarmlessMismatch => Some(format!(
                "the kernel's flush policy ({kernel}) disagrees with the drive (cache {}): \
                 harmless, the kernel sends cache flushes the drive does not need",
                drive.map(on_off).unwrap_or("none")
            )),
            CacheAgreement::DangerousMismatch => Some(format!(
                "the kernel's flush policy ({kernel}) disagrees with the drive (cache on): the \
                 kernel sends no cache flushes, so recently written data can be lost on power \
                 failure"
            )),
        }
    }
}

/// The drive's cache next to the kernel's flush policy, for one device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CacheStatus {
    pub device: String,
    pub transport: Transport,
    /// What the drive reports, when it could be asked.
    pub drive: Option<DriveCache>,
    /// Why not ("drive write cache control not supported on loop").
    pub drive_unavailable: Option<String>,
    /// `queue/write_cache`: whether the kernel sends cache flushes.
    pub kernel_flush_policy: Option<KernelWriteCache>,
    pub agreement: CacheAgreement,
    /// The sentence to print when they disagree.
    pub disagreement: Option<String>,
}

impl CacheStatus {
    pub fn new(
        device: &str,
        transport: Transport,
        drive: Result<DriveCache, String>,
        kernel: Option<KernelWriteCache>,
    ) -> Self {
        let (drive, drive_unavailable) = match drive {
            Ok(d) => (Some(d), None),
            Err(why) => (None, Some(why)),
        };
        // Without the drive's answer there is nothing to compare.
        let agreement = match &drive {
            Some(d) => compare(d.enabled, kernel),
            None => CacheAgreement::Agree,
        };
        let disagreement = drive
            .as_ref()
            .and_then(|d| agreement.explain(d.enabled, kernel));
        CacheStatus {
            device: device.to_string(),
            transport,
            drive,
            drive_unavailable,
            kernel_flush_policy: kernel,
            agreement,
            disagreement,
        }
    }
}

impl fmt::Display for DriveCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.state_label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement() {
        use CacheAgreement::*;
        use KernelWriteCache::*;
        assert_eq!(compare(Some(true), Some(WriteBack)), Agree);
        assert_eq!(compare(Some(false), Some(WriteThrough)), Agree);
        assert_eq!(compare(Some(true), Some(WriteThrough)), DangerousMismatch);
        assert_eq!(compare(Some(false), Some(WriteBack)), HarmlessMismatch);
        assert_eq!(compare(None, Some(WriteBack)), HarmlessMismatch);
        assert_eq!(compare(None, Some(WriteThrough)), Agree);
        assert_eq!(compare(Some(true), None), Agree);
        assert!(Agree.explain(Some(true), Some(WriteBack)).is_none());
        let text = DangerousMismatch
            .explain(Some(true), Some(WriteThrough))
            .unwrap();
        assert!(text.contains("power failure"), "{text}");
        let text = HarmlessMismatch
            .explain(Some(false), Some(WriteBack))
            .unwrap();
        assert!(
            text.contains("harmless") && text.contains("cache off"),
            "{text}"
        );
    }
}
