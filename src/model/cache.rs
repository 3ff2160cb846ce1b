//! The drive's own volatile write cache as the drive reports it, the kernel's flush policy
//! (`queue/write_cache`), and how the two compare.
//!
//! Two different things share the words "write cache": the drive's setting (ATA SET FEATURES,
//! the SCSI caching mode page's WCE bit, NVMe feature 0x06, virtio's `cache_type`) decides
//! whether the drive acknowledges writes before they reach the media; the kernel's flag only
//! decides whether the kernel sends FLUSH/FUA. They are kept apart here and compared.
//!
//! This module also owns the words for the drive's cache: "on" / "off" / "none" (`on_off`,
//! `cache_word`). The kernel's policy (`KernelWriteCache`) belongs to the device's queue and
//! lives in `device`, which needs nothing from here.

use std::fmt;

use serde::Serialize;

use super::device::{KernelWriteCache, Transport};

/// "on" or "off": the drive's write cache, switched on or off.
pub fn on_off(enabled: bool) -> &'static str {
    if enabled { "on" } else { "off" }
}

/// "on", "off", or "none" when the drive reports no volatile write cache.
pub fn cache_word(enabled: Option<bool>) -> &'static str {
    enabled.map(on_off).unwrap_or("none")
}

/// The cache word of a device without a drive (loop, zram, md, dm, nbd, ram).
pub const NO_DRIVE_CACHE: &str = "n/a";

/// The drive's cache as a record keeps it, in the one spelling of every screen, export and the
/// history: "on", "off", "n/a" (none, or no way to ask); None when not known. Older records'
/// "-", "?" and "" read as None, so a spelling is never a change.
pub fn recorded_drive_cache(word: Option<&str>) -> Option<String> {
    match word.map(str::trim) {
        Some(w @ ("on" | "off")) => Some(w.to_string()),
        Some("n/a" | "none") => Some(NO_DRIVE_CACHE.to_string()),
        _ => None,
    }
}

/// A recorded drive cache as shown: the word, or "?".
pub fn drive_cache_shown(recorded: Option<&str>) -> &str {
    recorded.unwrap_or("?")
}

/// What the drive says about its volatile write cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DriveCache {
    /// On, off, or `None`: no volatile cache (per transport: `sys::drives`).
    pub enabled: Option<bool>,
    /// Whether the host may switch it (`sys::drives` asks).
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
            Some(enabled) => on_off(enabled),
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
    /// Needless flushes: cost a little, lose nothing.
    HarmlessMismatch,
    /// Cached writes and no flushes: a power cut loses data.
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
                cache_word(drive)
            )),
            CacheAgreement::DangerousMismatch => Some(format!(
                "the kernel's flush policy ({kernel}) disagrees with the drive (cache {}): the \
                 kernel sends no cache flushes, so recently written data can be lost on power \
                 failure",
                on_off(true)
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
    /// Why the drive's cache cannot be switched here.
    pub fn switch_unavailable(&self) -> Option<String> {
        match &self.drive {
            None => Some(self.drive_unavailable.clone().unwrap_or_else(|| {
                format!("the drive write cache of {} cannot be read", self.device)
            })),
            Some(d) if d.enabled.is_none() => Some(format!(
                "{} reports no volatile write cache: nothing to switch",
                self.device
            )),
            Some(_) => None,
        }
    }

    /// The drive's cache in one word (see `recorded_drive_cache`).
    pub fn drive_word(&self) -> &'static str {
        self.drive
            .as_ref()
            .and_then(|d| d.enabled)
            .map_or(NO_DRIVE_CACHE, on_off)
    }

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
    fn kernel_write_cache_words() {
        assert_eq!(
            "write back\n".parse::<KernelWriteCache>().unwrap(),
            KernelWriteCache::WriteBack
        );
        assert_eq!(
            "write through".parse::<KernelWriteCache>().unwrap(),
            KernelWriteCache::WriteThrough
        );
        assert!("none".parse::<KernelWriteCache>().is_err());
        assert!("back".parse::<KernelWriteCache>().is_err());
        for k in KernelWriteCache::ALL {
            assert_eq!(k.to_string().parse::<KernelWriteCache>().unwrap(), k);
            assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{k}\""));
        }
        assert_eq!(KernelWriteCache::WriteBack.short(), "back");
        assert_eq!(KernelWriteCache::WriteThrough.short(), "thru");
        assert_eq!(
            KernelWriteCache::from_enabled(true),
            KernelWriteCache::WriteBack
        );
        assert_eq!(
            KernelWriteCache::from_enabled(false),
            KernelWriteCache::WriteThrough
        );
    }

    #[test]
    fn a_recorded_drive_cache_has_one_spelling() {
        for (old, now) in [
            (Some("on"), Some("on")),
            (Some("off"), Some("off")),
            (Some("n/a"), Some("n/a")),
            (Some("none"), Some("n/a")),
            (Some("-"), None),
            (Some("?"), None),
            (Some(""), None),
            (None, None),
        ] {
            assert_eq!(recorded_drive_cache(old).as_deref(), now, "{old:?}");
        }
        assert_eq!(drive_cache_shown(None), "?");
        assert_eq!(drive_cache_shown(Some("n/a")), "n/a");
    }

    #[test]
    fn drive_cache_words() {
        assert_eq!((on_off(true), on_off(false)), ("on", "off"));
        assert_eq!(
            (
                cache_word(Some(true)),
                cache_word(Some(false)),
                cache_word(None)
            ),
            ("on", "off", "none")
        );
        let mut cache = DriveCache {
            enabled: Some(false),
            changeable: true,
            fixed_reason: None,
            source: "test".into(),
        };
        assert_eq!(cache.to_string(), "off");
        cache.enabled = None;
        assert_eq!(
            cache.to_string(),
            "none (the drive reports no volatile write cache)"
        );
    }

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
