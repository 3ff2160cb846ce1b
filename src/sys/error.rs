//! The typed error of the OS boundary, for callers that branch on it: no permission ("needs
//! root"), not supported on this transport (said, never guessed), or an I/O error with its path
//! or ioctl and errno.
//!
//! Also the one place that puts errnos into words and advice: `describe_errno`/`describe_io`,
//! `describe_io_brief`, `permission_hint`, `open_error`, `create_reason` and `errno_hint`.

use std::io;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use serde::Serialize;

use super::privilege::NEEDS_ROOT;
use crate::model::Transport;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DriveError {
    /// EPERM or EACCES.
    #[error("{op} on {}: {NEEDS_ROOT}", path.display())]
    PermissionDenied { op: String, path: PathBuf },

    /// No such control on the transport or drive (loop, zram, a USB bridge that refuses the
    /// command, a SCSI disk without a caching page).
    #[error("{what} not supported on {transport}{}", detail.as_ref().map(|d| format!(" ({d})")).unwrap_or_default())]
    NotSupported {
        what: String,
        transport: Transport,
        detail: Option<String>,
    },

    /// A system call failed.
    #[error("{op} on {}: {errno} ({})", path.display(), errno.desc())]
    Io {
        op: String,
        path: PathBuf,
        errno: Errno,
    },

    /// The device refused or failed the command (sense data, ATA error register, NVMe status).
    #[error("{op} on {}: {detail}", path.display())]
    Device {
        op: String,
        path: PathBuf,
        detail: String,
    },

    /// The device's answer did not have the expected shape.
    #[error("{op} on {}: unexpected answer: {detail}", path.display())]
    BadAnswer {
        op: String,
        path: PathBuf,
        detail: String,
    },

    /// No such block device.
    #[error("{0}")]
    NoDevice(String),

    /// The device under the name is not the one asked for (detached, or another attached):
    /// the sentence says what changed and that nothing was done.
    #[error("{0}")]
    NotChosen(String),

    /// The request itself is wrong (an unknown scheduler name); the text says what is valid.
    #[error("{0}")]
    Invalid(String),
}

impl DriveError {
    /// An error from a system call on `path`; EPERM/EACCES become `PermissionDenied`.
    pub fn io(op: impl Into<String>, path: &Path, errno: Errno) -> Self {
        let op = op.into();
        let path = path.to_path_buf();
        match errno {
            Errno::EPERM | Errno::EACCES => DriveError::PermissionDenied { op, path },
            errno => DriveError::Io { op, path, errno },
        }
    }

    /// The same from a `std::io::Error`.
    pub fn from_io(op: impl Into<String>, path: &Path, e: &io::Error) -> Self {
        if e.kind() == io::ErrorKind::PermissionDenied {
            return DriveError::PermissionDenied {
                op: op.into(),
                path: path.to_path_buf(),
            };
        }
        match e.raw_os_error() {
            Some(code) => DriveError::io(op, path, Errno::from_raw(code)),
            // Not a system call's errno (a FIFO where an attribute belongs): its own words.
            None => DriveError::BadAnswer {
                op: op.into(),
                path: path.to_path_buf(),
                detail: e.to_string(),
            },
        }
    }

    pub fn not_supported(what: impl Into<String>, transport: Transport) -> Self {
        DriveError::NotSupported {
            what: what.into(),
            transport,
            detail: None,
        }
    }

    pub fn not_supported_because(
        what: impl Into<String>,
        transport: Transport,
        detail: impl Into<String>,
    ) -> Self {
        DriveError::NotSupported {
            what: what.into(),
            transport,
            detail: Some(detail.into()),
        }
    }

    pub fn is_not_supported(&self) -> bool {
        matches!(self, DriveError::NotSupported { .. })
    }

    pub fn is_permission(&self) -> bool {
        matches!(self, DriveError::PermissionDenied { .. })
    }
}

/// An errno as a person reads it: "No space left on device (ENOSPC)".
pub fn describe_errno(errno: Errno) -> String {
    format!("{} ({errno:?})", errno.desc())
}

/// An I/O error as a person reads it: "No space left on device (ENOSPC)".
pub fn describe_io(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(code) => describe_errno(Errno::from_raw(code)),
        None => e.to_string(),
    }
}

/// A short reason for an I/O error: "needs root", or the errno's description alone.
pub fn describe_io_brief(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::PermissionDenied => "needs root".to_string(),
        _ => match e.raw_os_error() {
            Some(code) => Errno::from_raw(code).desc().to_string(),
            None => e.to_string(),
        },
    }
}

/// What to say after EPERM, EACCES or EROFS (with its leading " - "): "needs root" only when
/// not root; as root the usual reason is the device's read-only flag (`blockdev --setro`,
/// `losetup -r`, a write-protected card, a drive gone read-only after errors).
pub fn permission_hint(errno: Errno, root: bool, read_only: Option<bool>) -> String {
    match (read_only, root, errno) {
        (Some(true), _, _) => " - the device is read-only (ro=1 in sysfs / BLKROGET)".into(),
        (_, _, Errno::EROFS) => " - read-only file system or device".into(),
        (_, false, _) => format!(" - {NEEDS_ROOT}"),
        (_, true, _) => " - refused by the kernel although running as root (not a matter of \
                         privileges: check the device's state and dmesg)"
            .into(),
    }
}

/// Why an exclusive open is refused as busy.
const BUSY: &str =
    "it is busy (mounted, held by md/dm/LVM, or opened exclusively by another program)";

/// A failed open of a test's target in words, with what to do (permission, busy, no O_DIRECT).
pub fn open_error(e: io::Error, path: &Path, spec: super::direct::OpenSpec) -> anyhow::Error {
    let p = path.display();
    match e.raw_os_error() {
        Some(code @ (libc::EACCES | libc::EPERM | libc::EROFS)) => {
            // As root, a read-only device is the usual reason: the kernel's flag says.
            let read_only = if spec.write {
                super::direct::read_only(path)
            } else {
                None
            };
            let hint = permission_hint(
                Errno::from_raw(code),
                super::privilege::is_root(),
                read_only,
            );
            let what = if code == libc::EROFS {
                "read-only"
            } else {
                "permission denied"
            };
            anyhow::anyhow!("cannot open {p}: {what}{hint}")
        }
        Some(libc::EBUSY) if spec.exclusive => anyhow::anyhow!(
            "cannot open {p} exclusively: {BUSY} and stayed busy for {} s",
            super::direct::EXCLUSIVE_PATIENCE.as_secs()
        ),
        // `reopen_waiting_for_release` was stopped while the device was busy.
        None if spec.exclusive && e.kind() == io::ErrorKind::Interrupted => {
            anyhow::anyhow!("cannot open {p}: {BUSY}; stopped while waiting for it")
        }
        Some(libc::EINVAL) if spec.direct => anyhow::anyhow!(
            "cannot open {p} with O_DIRECT: the file system does not support direct I/O. \
             Use --buffered (results then include the page cache)"
        ),
        _ => anyhow::Error::new(e).context(format!("cannot open {p}")),
    }
}

/// Why a directory or file could not be created: a read-only file system, a permission
/// (`permission_hint`), or the OS's words.
pub fn create_reason(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EROFS) => "the file system is read-only".to_string(),
        Some(code @ (libc::EACCES | libc::EPERM)) => format!(
            "permission denied{}",
            permission_hint(Errno::from_raw(code), super::privilege::is_root(), None)
        ),
        _ => describe_io(e),
    }
}

/// What was found about the target right after an I/O failed: enough to tell a full file
/// system from a vanished device, and a read-only device from a missing privilege.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct FailureFacts {
    /// The target is a block device (not a file on a file system).
    pub block_device: bool,
    /// The device's `/sys/dev/block/M:m` no longer exists.
    pub device_gone: bool,
    /// The device's size in bytes when the run started.
    pub size_at_start: u64,
    /// Its size now, as the open descriptor reports it (BLKGETSIZE64); None if unreadable.
    pub size_now: Option<u64>,
    /// The kernel's read-only flag now (BLKROGET, `ro` in sysfs); None if unreadable.
    pub read_only: Option<bool>,
    /// The process runs with root's effective user id.
    pub root: bool,
}

/// Why an errno happened, as far as `facts` tell (empty when they add nothing; the usual
/// meaning when `facts` is None). The kernel answers a write at or past a block device's end
/// with ENOSPC, and a removed device shrinks to 0 first: on a block device ENOSPC means it went
/// away or shrank, never a full file system.
pub fn errno_hint(errno: Errno, facts: Option<&FailureFacts>) -> String {
    if let Some(f) = facts.filter(|f| f.block_device) {
        let shrank = f.size_now.filter(|&now| now != f.size_at_start);
        if matches!(
            errno,
            Errno::ENOSPC | Errno::EIO | Errno::ENXIO | Errno::ENODEV | Errno::EINVAL
        ) {
            if f.device_gone {
                return " - the device is gone (removed during the run)".into();
            }
            if let Some(now) = shrank {
                return format!(
                    " - the device is gone or shrank: its size is now {now} bytes, was {}",
                    f.size_at_start
                );
            }
        }
        if errno == Errno::ENOSPC {
            return " - the request reaches past the end of the device".into();
        }
    }
    match errno {
        Errno::EPERM | Errno::EACCES | Errno::EROFS => {
            let (root, read_only) = facts.map_or((false, None), |f| (f.root, f.read_only));
            permission_hint(errno, root, read_only)
        }
        Errno::ENOSPC => " - the file system is full".into(),
        Errno::ENXIO | Errno::ENODEV => " - the device is gone".into(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_errors_say_what_the_flags_made_the_kernel_refuse() {
        use super::super::direct::{OpenSpec, SyncMode};
        let spec = |exclusive, direct| OpenSpec {
            write: false,
            direct,
            exclusive,
            sync: SyncMode::None,
        };
        let os = io::Error::from_raw_os_error;
        let path = Path::new("/dev/loop9");
        let busy = open_error(os(libc::EBUSY), path, spec(true, false)).to_string();
        assert!(
            busy.starts_with("cannot open /dev/loop9 exclusively: it is busy")
                && busy.ends_with("and stayed busy for 2 s"),
            "{busy}"
        );
        let stopped = io::Error::new(io::ErrorKind::Interrupted, "stopped");
        assert_eq!(
            open_error(stopped, path, spec(true, false)).to_string(),
            "cannot open /dev/loop9: it is busy (mounted, held by md/dm/LVM, or opened \
             exclusively by another program); stopped while waiting for it"
        );
        let no_direct = open_error(os(libc::EINVAL), path, spec(false, true)).to_string();
        assert!(no_direct.contains("Use --buffered"), "{no_direct}");
        // Without the flag that explains it, the OS's words under the path.
        let plain = format!(
            "{:#}",
            open_error(os(libc::EBUSY), path, spec(false, false))
        );
        assert!(plain.starts_with("cannot open /dev/loop9: "), "{plain}");
        assert!(!plain.contains("exclusively"), "{plain}");
        let ro = create_reason(&os(libc::EROFS));
        assert_eq!(ro, "the file system is read-only");
    }

    #[test]
    fn permission_hint_says_needs_root_only_when_not_root() {
        assert_eq!(
            permission_hint(Errno::EACCES, false, None),
            format!(" - {NEEDS_ROOT}")
        );
        let ro = permission_hint(Errno::EACCES, true, Some(true));
        assert!(ro.contains("the device is read-only (ro=1"), "{ro}");
        assert!(!ro.contains("root"), "{ro}");
        // A read-only device explains the refusal whoever asks.
        assert!(permission_hint(Errno::EPERM, false, Some(true)).contains("read-only"));
        let other = permission_hint(Errno::EPERM, true, Some(false));
        assert!(!other.contains("needs root"), "{other}");
        assert!(permission_hint(Errno::EROFS, true, None).contains("read-only"));
    }

    #[test]
    fn permission_errors_say_needs_root() {
        let e = DriveError::io("SG_IO", Path::new("/dev/sda"), Errno::EPERM);
        assert!(e.is_permission());
        assert!(e.to_string().contains("needs root"), "{e}");
        let e = DriveError::io("open", Path::new("/dev/sda"), Errno::EACCES);
        assert!(e.is_permission());
        let e = DriveError::from_io(
            "write",
            Path::new("/sys/x"),
            &io::Error::from_raw_os_error(libc::EACCES),
        );
        assert!(e.is_permission());
    }

    #[test]
    fn io_errors_carry_op_path_and_errno() {
        let e = DriveError::io(
            "NVME_IOCTL_ADMIN_CMD",
            Path::new("/dev/nvme0n1"),
            Errno::ENOTTY,
        );
        let text = e.to_string();
        assert!(
            text.contains("NVME_IOCTL_ADMIN_CMD") && text.contains("/dev/nvme0n1"),
            "{text}"
        );
        assert!(text.contains("ENOTTY"), "{text}");
    }

    #[test]
    fn not_supported_names_the_transport() {
        let e = DriveError::not_supported("drive write cache control", Transport::Loop);
        assert_eq!(
            e.to_string(),
            "drive write cache control not supported on loop"
        );
        let e = DriveError::not_supported_because("SMART", Transport::Usb, "bridge refused");
        assert_eq!(e.to_string(), "SMART not supported on usb (bridge refused)");
    }
}
