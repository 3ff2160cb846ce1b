//! Zoned and shingled media on the Devices screen (issue 38): the details panel of a
//! host-managed zoned disk and of a drive-managed SMR one, at 80x25 and 132x43, with nothing
//! cut. The lab's captured tree with the zoning a real disk of each kind reads as (the sysfs
//! reading itself is tested on fixture trees in `sys::drives::inventory`).

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use common::tui::*;
use disktriage::app::App;
use disktriage::event::Msg;
use disktriage::model::{ZoneModel, Zoning};
use ratatui::crossterm::event::KeyCode;

use crate::{SIZES, snap};

/// The lab's devices with `name`'s zoning set, `name` selected.
fn lab_with(name: &str, zoning: Zoning) -> App {
    let mut inv = disktriage::sys::SysRoot::new(fixture("qemu-lab"))
        .inventory()
        .unwrap();
    let at = inv.devices.iter().position(|d| d.name == name).unwrap();
    inv.devices[at].zoning = zoning;
    let mut app = App::new(true, false);
    app.update(Msg::Inventory(Ok(inv)));
    for _ in 0..at {
        key(&mut app, KeyCode::Down);
    }
    app
}

fn nothing_cut(app: &App) {
    for (w, h) in SIZES {
        let (_, cuts) = draw_checked(app, w, h);
        assert!(cuts.is_empty(), "{w}x{h}: {cuts:?}");
    }
}

#[test]
fn a_host_managed_disk_says_its_zones_in_the_details() {
    let app = lab_with(
        "sdb",
        Zoning {
            kernel: Some(ZoneModel::HostManaged),
            nr_zones: Some(524),
            zone_bytes: Some(256 << 20),
            ..Zoning::default()
        },
    );
    let s = screen(&app, 80, 25);
    assert!(s.contains(">sdb"), "{s}");
    assert!(
        s.contains("zoned host-managed, 524 zones of 256 MiB"),
        "{s}"
    );
    nothing_cut(&app);
    snap("devices_zoned_host_managed", &app);
}

#[test]
fn a_drive_managed_smr_disk_says_so_and_the_hint_says_it_is_one() {
    let app = lab_with(
        "sda",
        Zoning {
            drive: Some(ZoneModel::DriveManaged),
            trim_rotating: true,
            ..Zoning::default()
        },
    );
    let s = screen(&app, 80, 25);
    assert!(s.contains(">sda"), "{s}");
    assert!(s.contains("SMR drive-managed (the drive says so)"), "{s}");
    nothing_cut(&app);
    snap("devices_smr_drive_managed", &app);
    // As the captured tree reads it: QEMU's IDE disk TRIMs and rotates, a hint only.
    let hint = lab_with(
        "sda",
        Zoning {
            trim_rotating: true,
            ..Zoning::default()
        },
    );
    let s = screen(&hint, 80, 25);
    assert!(
        s.contains("SMR suspected TRIM on a rotating disk (a hint, not proof)"),
        "{s}"
    );
    nothing_cut(&hint);
}
