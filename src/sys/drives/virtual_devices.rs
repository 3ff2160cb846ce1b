//! Block devices the kernel makes out of other storage (`Transport::is_virtual`): loop, zram
//! and ram disks, device-mapper, md, nbd. Each is told by its kernel name alone, has no
//! identity attributes and no drive to command (`Unsupported`): only the scheduler is set.

use super::{Seen, TransportRow, Unsupported, no_identity};
use crate::model::Transport;

/// Loop devices (`loop<N>`).
pub(super) const LOOP: TransportRow = TransportRow {
    transport: Transport::Loop,
    recognises: |seen: &Seen| seen.name_starts_with("loop"),
    read_identity: no_identity,
    driver: &Unsupported,
};

/// Compressed RAM disks (`zram<N>`).
pub(super) const ZRAM: TransportRow = TransportRow {
    transport: Transport::Zram,
    recognises: |seen: &Seen| seen.name_starts_with("zram"),
    read_identity: no_identity,
    driver: &Unsupported,
};

/// Device-mapper devices (`dm-<N>`: LVM, dm-crypt, multipath).
pub(super) const DM: TransportRow = TransportRow {
    transport: Transport::Dm,
    recognises: |seen: &Seen| seen.name_starts_with("dm-"),
    read_identity: no_identity,
    driver: &Unsupported,
};

/// Software RAID (`md<N>`, `md127`).
pub(super) const MD: TransportRow = TransportRow {
    transport: Transport::Md,
    recognises: |seen: &Seen| seen.name_starts_with("md"),
    read_identity: no_identity,
    driver: &Unsupported,
};

/// Network block devices (`nbd<N>`).
pub(super) const NBD: TransportRow = TransportRow {
    transport: Transport::Nbd,
    recognises: |seen: &Seen| seen.name_starts_with("nbd"),
    read_identity: no_identity,
    driver: &Unsupported,
};

/// RAM disks of the `brd` driver (`ram<N>`).
pub(super) const RAM: TransportRow = TransportRow {
    transport: Transport::Ram,
    recognises: |seen: &Seen| seen.name_starts_with("ram"),
    read_identity: no_identity,
    driver: &Unsupported,
};
