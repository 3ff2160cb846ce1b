//! MMC and SD cards (`mmcblk<N>`; partitions and boot areas `mmcblk<N>p<M>`, `mmcblk<N>boot<M>`).
//! The card's CID identity is read (as the `mmc` driver exposes it), but no command is sent:
//! write cache, SMART and self-tests are "not supported" (`Unsupported`).

use super::{Seen, TransportRow, Unsupported};
use crate::model::{BlockDevice, Transport};
use crate::sys::sysfs::AttrReader;

/// MMC and SD cards: `mmcblk*`.
pub(super) const ROW: TransportRow = TransportRow {
    transport: Transport::Mmc,
    recognises: |seen: &Seen| seen.name_starts_with("mmcblk"),
    read_identity,
    driver: &Unsupported,
};

/// The card's product name, serial number and firmware revision.
fn read_identity(_: &Seen, attrs: &mut AttrReader, d: &mut BlockDevice) {
    d.model = attrs.clean("device/name");
    d.serial = attrs.clean("device/serial");
    d.firmware = attrs.clean("device/fwrev");
}
