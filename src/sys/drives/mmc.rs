//! MMC and SD cards (`mmcblk<N>`, the card's block device; its partitions and boot areas are
//! `mmcblk<N>p<M>` and `mmcblk<N>boot<M>` below it or beside it).
//!
//! disktriage reads the card's identity (the CID register's name, serial and firmware
//! revision, as the `mmc` driver exposes them) but sends it no command: the write cache,
//! SMART and self-tests answer "not supported" (the `Unsupported` driver).

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
