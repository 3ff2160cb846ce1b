//! A rewrite of existing data (`--preserve`) reads each block and writes the same bytes back,
//! so a write another program makes to that block in between is undone, unnoticed. A target
//! another process has open for writing (or, a file, mapped shared and writable) is refused
//! before any I/O, naming the processes (`safety::check_no_other_writers`).
//!
//! What this cannot cover (the report and the README say it too): a process that opens the
//! target after the check (O_EXCL on a block device keeps out mounts and exclusive openers,
//! not a plain `open(O_RDWR)`; a file has no such lock), I/O through descriptors already
//! closed (an io_uring with registered files), writers in the kernel (nfsd, a loop device
//! attached later), and processes in another PID namespace.

use crate::bench::exec::safety::{self, WriteRefusal};
use crate::model::{DevNum, FileId};
use crate::sys::SysRoot;
use crate::sys::activity::{self, Written};

/// Refuses a rewrite of block device `name` (`dev`) while another process has it, one of its
/// partitions or a device stacked on it open for writing. Read from the live `/sys`, whatever
/// `--root` says.
pub fn refuse_other_writers_of_device(dev: DevNum, name: &str) -> Result<(), WriteRefusal> {
    let family = activity::device_family(&SysRoot::new("/"), dev);
    safety::check_no_other_writers(name, &activity::writers(Written::Devices(&family)))
}

/// Refuses a rewrite of the regular file `id` (at `real_path`) while another process has it
/// open for writing under any of its names, or mapped shared and writable.
pub fn refuse_other_writers_of_file(id: FileId, real_path: &str) -> Result<(), WriteRefusal> {
    safety::check_no_other_writers(
        real_path,
        &activity::writers(Written::File {
            id,
            path: real_path,
        }),
    )
}
