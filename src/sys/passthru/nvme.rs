//! NVMe admin commands through `NVME_IOCTL_ADMIN_CMD` and `struct nvme_passthru_cmd`
//! (`<linux/nvme_ioctl.h>`, 72 bytes). Accepted on the controller node and on namespace block
//! devices; needs CAP_SYS_ADMIN.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

use nix::errno::Errno;

use crate::smart::nvme::{AdminCommand, describe_status};
use crate::sys::error::DriveError;

/// `_IOWR('N', 0x41, struct nvme_admin_cmd)`.
pub const NVME_IOCTL_ADMIN_CMD: libc::Ioctl = 0xC048_4E41;
const TIMEOUT_MS: u32 = 15_000;

/// `struct nvme_passthru_cmd` exactly as `<linux/nvme_ioctl.h>` lays it out.
#[repr(C)]
#[derive(Default)]
struct NvmePassthruCmd {
    opcode: u8,
    flags: u8,
    rsvd1: u16,
    nsid: u32,
    cdw2: u32,
    cdw3: u32,
    metadata: u64,
    addr: u64,
    metadata_len: u32,
    data_len: u32,
    cdw10: u32,
    cdw11: u32,
    cdw12: u32,
    cdw13: u32,
    cdw14: u32,
    cdw15: u32,
    timeout_ms: u32,
    result: u32,
}

const _: () = assert!(size_of::<NvmePassthruCmd>() == 72);

/// Runs one admin command; returns dword 0, an NVMe status as `DriveError::Device`.
pub fn admin(
    file: &File,
    path: &Path,
    cmd: &AdminCommand,
    data: Option<&mut [u8]>,
) -> Result<u32, DriveError> {
    let op = format!("NVME_IOCTL_ADMIN_CMD {}", cmd.name);
    let (addr, len) = match data {
        Some(buf) => (buf.as_mut_ptr() as u64, buf.len()),
        None => (0, 0),
    };
    if len < cmd.data_len as usize {
        return Err(DriveError::Invalid(format!(
            "{op}: buffer of {len} bytes for {} bytes of data",
            cmd.data_len
        )));
    }
    let mut c = NvmePassthruCmd {
        opcode: cmd.opcode,
        nsid: cmd.nsid,
        addr: if cmd.data_len == 0 { 0 } else { addr },
        data_len: cmd.data_len,
        cdw10: cmd.cdw10,
        cdw11: cmd.cdw11,
        timeout_ms: TIMEOUT_MS,
        ..NvmePassthruCmd::default()
    };
    let rc = loop {
        // SAFETY: `c` is a valid `nvme_passthru_cmd`; `addr` points to at least `data_len`
        // bytes (checked above), mutably borrowed here; the ioctl is synchronous.
        let rc = unsafe {
            libc::ioctl(
                file.as_raw_fd(),
                NVME_IOCTL_ADMIN_CMD,
                &mut c as *mut NvmePassthruCmd,
            )
        };
        match Errno::result(rc) {
            Ok(rc) => break rc,
            Err(Errno::EINTR) => continue,
            Err(errno) => return Err(DriveError::io(op, path, errno)),
        }
    };
    if rc > 0 {
        return Err(DriveError::Device {
            op,
            path: path.to_path_buf(),
            detail: describe_status(rc.unsigned_abs()),
        });
    }
    Ok(c.result)
}

#[cfg(test)]
mod tests {
    use std::mem::offset_of;

    use super::*;

    #[test]
    fn layout_and_ioctl_number_match_nvme_ioctl_h() {
        assert_eq!(size_of::<NvmePassthruCmd>(), 72);
        assert_eq!(offset_of!(NvmePassthruCmd, nsid), 4);
        assert_eq!(offset_of!(NvmePassthruCmd, metadata), 16);
        assert_eq!(offset_of!(NvmePassthruCmd, addr), 24);
        assert_eq!(offset_of!(NvmePassthruCmd, data_len), 36);
        assert_eq!(offset_of!(NvmePassthruCmd, cdw10), 40);
        assert_eq!(offset_of!(NvmePassthruCmd, cdw15), 60);
        assert_eq!(offset_of!(NvmePassthruCmd, timeout_ms), 64);
        assert_eq!(offset_of!(NvmePassthruCmd, result), 68);
        let computed = nix::request_code_readwrite!(b'N', 0x41, size_of::<NvmePassthruCmd>());
        assert_eq!(computed as u64, 0xC048_4E41);
        // `libc::Ioctl` is c_ulong on glibc but c_int on musl, hence the cast.
        #[allow(clippy::unnecessary_cast)]
        let ours = NVME_IOCTL_ADMIN_CMD as u64;
        assert_eq!(ours, computed as u64);
    }

    #[test]
    fn short_buffer_is_refused_before_the_ioctl() {
        let f = tempfile::tempfile().unwrap();
        let mut buf = [0u8; 16];
        let e = admin(
            &f,
            Path::new("/tmp/x"),
            &AdminCommand::smart_log(),
            Some(&mut buf),
        )
        .unwrap_err();
        assert!(matches!(e, DriveError::Invalid(_)), "{e:?}");
        let e = admin(
            &f,
            Path::new("/tmp/x"),
            &AdminCommand::get_write_cache(crate::smart::nvme::Select::Current),
            None,
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
