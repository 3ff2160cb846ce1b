//! SG_IO: one SCSI command (or an ATA command wrapped in ATA PASS-THROUGH) to a block device,
//! through `struct sg_io_hdr` (`<scsi/sg.h>`, 88 bytes on x86_64).
//!
//! This module only moves bytes and reports the transport-level outcome; what the status and
//! sense bytes mean is decided by the pure code in `crate::smart::sense`.

use std::ffi::{c_int, c_uint, c_void};
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;

use nix::errno::Errno;

use crate::sys::error::DriveError;

/// `SG_IO` from `<scsi/sg.h>`.
pub const SG_IO: libc::Ioctl = 0x2285;
/// Default command timeout (hdparm's).
pub const TIMEOUT_MS: u32 = 15_000;
/// Cache flushes may take long on a big cache.
pub const FLUSH_TIMEOUT_MS: u32 = 60_000;

const SG_DXFER_NONE: c_int = -1;
const SG_DXFER_TO_DEV: c_int = -2;
pub(super) const SG_DXFER_FROM_DEV: c_int = -3;
/// `driver_status` value that only says "sense data follows".
pub const DRIVER_SENSE: u16 = 0x08;
pub(super) const SENSE_LEN: usize = 64;

/// `struct sg_io_hdr` exactly as `<scsi/sg.h>` lays it out.
#[repr(C)]
pub(super) struct SgIoHdr {
    pub(super) interface_id: c_int,
    pub(super) dxfer_direction: c_int,
    pub(super) cmd_len: u8,
    pub(super) mx_sb_len: u8,
    pub(super) iovec_count: u16,
    pub(super) dxfer_len: c_uint,
    pub(super) dxferp: *mut c_void,
    pub(super) cmdp: *const u8,
    pub(super) sbp: *mut u8,
    pub(super) timeout: c_uint,
    pub(super) flags: c_uint,
    pub(super) pack_id: c_int,
    pub(super) usr_ptr: *mut c_void,
    pub(super) status: u8,
    pub(super) masked_status: u8,
    pub(super) msg_status: u8,
    pub(super) sb_len_wr: u8,
    pub(super) host_status: u16,
    pub(super) driver_status: u16,
    pub(super) resid: c_int,
    pub(super) duration: c_uint,
    pub(super) info: c_uint,
}

const _: () = assert!(size_of::<SgIoHdr>() == 88);

impl SgIoHdr {
    /// What came back in this header, with the sense bytes the kernel wrote.
    pub(super) fn reply(&self, sense: &[u8]) -> SgRawReply {
        let written = usize::from(self.sb_len_wr).min(SENSE_LEN).min(sense.len());
        SgRawReply {
            status: self.status,
            host_status: self.host_status,
            driver_status: self.driver_status,
            sense: sense[..written].to_vec(),
            resid: self.resid,
        }
    }

    /// One command's header; no buffer named yet, statuses zero.
    pub(super) fn for_cdb(
        cdb: &[u8],
        sense: *mut u8,
        direction: c_int,
        len: usize,
        timeout_ms: u32,
    ) -> Result<SgIoHdr, SgError> {
        let cmd_len = u8::try_from(cdb.len())
            .map_err(|_| SgError::Invalid(format!("CDB of {} bytes", cdb.len())))?;
        let dxfer_len = c_uint::try_from(len)
            .map_err(|_| SgError::Invalid(format!("transfer of {len} bytes")))?;
        Ok(SgIoHdr {
            interface_id: c_int::from(b'S'),
            dxfer_direction: direction,
            cmd_len,
            mx_sb_len: SENSE_LEN as u8,
            iovec_count: 0,
            dxfer_len,
            dxferp: std::ptr::null_mut(),
            cmdp: cdb.as_ptr(),
            sbp: sense,
            timeout: timeout_ms,
            flags: 0,
            pack_id: 0,
            usr_ptr: std::ptr::null_mut(),
            status: 0,
            masked_status: 0,
            msg_status: 0,
            sb_len_wr: 0,
            host_status: 0,
            driver_status: 0,
            resid: 0,
            duration: 0,
            info: 0,
        })
    }
}

/// The data phase of a command.
pub enum Transfer<'a> {
    None,
    FromDevice(&'a mut [u8]),
    ToDevice(&'a [u8]),
}

/// What came back at the transport level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SgReply {
    /// The SCSI status byte (0 GOOD, 2 CHECK CONDITION).
    pub status: u8,
    /// Sense bytes the device returned (may be empty).
    pub sense: Vec<u8>,
    /// Bytes requested but not transferred.
    pub resid: i32,
}

/// Every status, for callers that tell a timeout from other failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SgRawReply {
    pub status: u8,
    /// `DID_*` of the host adapter (0 OK).
    pub host_status: u16,
    pub driver_status: u16,
    pub sense: Vec<u8>,
    pub resid: i32,
}

/// `host_status` of a command aborted when its timeout expired.
pub const DID_TIME_OUT: u16 = 0x03;

/// Sends `cdb` with SG_IO; status and sense are the caller's to judge.
pub fn execute(
    file: &File,
    path: &Path,
    op: &str,
    cdb: &[u8],
    transfer: Transfer<'_>,
    timeout_ms: u32,
) -> Result<SgReply, DriveError> {
    let raw = execute_fd(file.as_raw_fd(), cdb, transfer, timeout_ms).map_err(|e| match e {
        SgError::Invalid(what) => DriveError::Invalid(format!("{op}: {what}")),
        SgError::Errno(errno) => DriveError::io(format!("SG_IO {op}"), path, errno),
    })?;
    if raw.host_status != 0 || (raw.driver_status != 0 && raw.driver_status != DRIVER_SENSE) {
        return Err(DriveError::Device {
            op: format!("SG_IO {op}"),
            path: path.to_path_buf(),
            detail: format!(
                "transport error (host status 0x{:02x}, driver status 0x{:02x})",
                raw.host_status, raw.driver_status
            ),
        });
    }
    Ok(SgReply {
        status: raw.status,
        sense: raw.sense,
        resid: raw.resid,
    })
}

/// Why SG_IO could not be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SgError {
    /// The command or the transfer does not fit the header's fields.
    Invalid(String),
    /// The ioctl failed (ENOTTY: not a SCSI device; EPERM; ENODEV: gone).
    Errno(Errno),
}

/// Sends `cdb` with SG_IO on `fd`, aborted after its own `timeout_ms` (`DID_TIME_OUT`; on a
/// block device never sooner than `sys::scan::SG_MIN_TIMEOUT`), and judges no status.
pub fn execute_fd(
    fd: RawFd,
    cdb: &[u8],
    transfer: Transfer<'_>,
    timeout_ms: u32,
) -> Result<SgRawReply, SgError> {
    let mut sense = [0u8; SENSE_LEN];
    let (direction, data, len): (c_int, *mut c_void, usize) = match transfer {
        Transfer::None => (SG_DXFER_NONE, std::ptr::null_mut(), 0),
        Transfer::FromDevice(buf) => (SG_DXFER_FROM_DEV, buf.as_mut_ptr().cast(), buf.len()),
        // The kernel only reads a TO_DEV buffer; the field is `void *`.
        Transfer::ToDevice(buf) => (SG_DXFER_TO_DEV, buf.as_ptr().cast_mut().cast(), buf.len()),
    };
    let mut hdr = SgIoHdr::for_cdb(cdb, sense.as_mut_ptr(), direction, len, timeout_ms)?;
    hdr.dxferp = data;
    loop {
        // SAFETY: `hdr` lives across the call; its pointers name `cdb`, `sense` and the
        // transfer buffer (writable for FROM_DEV), at their lengths, all borrowed for the call;
        // SG_IO is synchronous. `fd` is only passed to the kernel, which checks it.
        let rc = unsafe { libc::ioctl(fd, SG_IO, &mut hdr as *mut SgIoHdr) };
        match Errno::result(rc) {
            Ok(_) => break,
            Err(Errno::EINTR) => continue,
            Err(errno) => return Err(SgError::Errno(errno)),
        }
    }
    Ok(hdr.reply(&sense))
}

#[cfg(test)]
mod tests {
    use std::mem::offset_of;

    use super::*;

    #[test]
    fn layout_matches_sg_h() {
        assert_eq!(size_of::<SgIoHdr>(), 88);
        assert_eq!(offset_of!(SgIoHdr, dxfer_len), 12);
        assert_eq!(offset_of!(SgIoHdr, dxferp), 16);
        assert_eq!(offset_of!(SgIoHdr, cmdp), 24);
        assert_eq!(offset_of!(SgIoHdr, sbp), 32);
        assert_eq!(offset_of!(SgIoHdr, timeout), 40);
        assert_eq!(offset_of!(SgIoHdr, usr_ptr), 56);
        assert_eq!(offset_of!(SgIoHdr, status), 64);
        assert_eq!(offset_of!(SgIoHdr, sb_len_wr), 67);
        assert_eq!(offset_of!(SgIoHdr, host_status), 68);
        assert_eq!(offset_of!(SgIoHdr, driver_status), 70);
        assert_eq!(offset_of!(SgIoHdr, resid), 72);
        assert_eq!(offset_of!(SgIoHdr, info), 80);
        assert_eq!(SG_IO, 0x2285);
    }

    #[test]
    fn sg_io_on_a_regular_file_is_an_error_not_a_panic() {
        let f = tempfile::tempfile().unwrap();
        let mut buf = [0u8; 512];
        let e = execute(
            &f,
            Path::new("/tmp/file"),
            "INQUIRY",
            &[0x12, 0, 0, 0, 36, 0],
            Transfer::FromDevice(&mut buf),
            1000,
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                DriveError::Io {
                    errno: Errno::ENOTTY,
                    ..
                }
            ),
            "{e:?}"
        );
    }
}
