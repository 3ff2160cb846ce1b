//! `prepare`'s second half: the pinned target, a block device or a file, opened for the test
//! once the guard agrees, and described.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;

use super::{
    PreparedTarget, TargetRequest, describe, device_writes, facts_of, file_writes,
    filesystem_guard_notes, inventory_device, live_inventory, mount_source, refuse_read_only,
    refuse_unless_chosen, view_inventory,
};
use crate::bench::exec::run_input::StatSource;
use crate::bench::exec::test_file::CreatedFile;
use crate::bench::plan::test_name::Writes;
use crate::bench::results::outcome::TargetClass;
use crate::model::{DevNum, FileId};
use crate::sys::SysRoot;
use crate::sys::direct::{self, OpenSpec, SyncMode};

/// The target resolved once (`direct::pin`) and what the test needs of it; `block_device` or
/// `file` opens it from this descriptor.
pub(super) struct Pinned<'a> {
    pub(super) req: &'a TargetRequest<'a>,
    pub(super) need: Writes,
    pub(super) direct: bool,
    pub(super) sync: SyncMode,
    pub(super) pinned: OwnedFd,
    pub(super) notes: Vec<String>,
}

impl Pinned<'_> {
    /// Opens a block device: the guard's verdict, the device checked again as it is held.
    pub(super) fn block_device(
        self,
        dev: DevNum,
        name: Option<String>,
    ) -> anyhow::Result<PreparedTarget> {
        let Pinned {
            req,
            need,
            direct,
            sync,
            pinned,
            mut notes,
        } = self;
        let path = req.path;
        let live = live_inventory()?;
        let writes_allowed =
            device_writes(req, need, &live, path, dev, name.as_deref(), &mut notes)?;
        let spec = OpenSpec {
            write: writes_allowed,
            direct,
            exclusive: writes_allowed,
            sync: if writes_allowed { sync } else { SyncMode::None },
        };
        let (fd, waited) = direct::reopen_waiting_for_release(&pinned, spec, req.stop)
            .map_err(|e| crate::sys::error::open_error(e, path, spec))?;
        // It must be the device chosen and the one the guard just checked (a loop device
        // re-attached, a disk swapped: refused before any I/O); held open, it cannot change.
        let checked = name.as_deref().and_then(|n| live.chosen(n));
        refuse_unless_chosen(&fd, req.chosen, checked.as_ref())?;
        if writes_allowed && req.params.preserve {
            let shown = name.clone().unwrap_or_else(|| dev.to_string());
            crate::bench::exec::rewrite_guard::refuse_other_writers_of_device(dev, &shown)?;
        }
        // Busy when checked, its holder may have left something that does not claim it (a
        // mounted loop over it). Held now, nothing new can claim it: check again afresh.
        let live = if waited {
            let fresh = live_inventory()?;
            device_writes(
                req,
                need,
                &fresh,
                path,
                dev,
                name.as_deref(),
                &mut Vec::new(),
            )?;
            fresh
        } else {
            live
        };
        let name = name.unwrap_or_else(|| dev.to_string());
        if writes_allowed {
            refuse_read_only(&fd, &name)?;
        }
        let (size, lbs, pbs) = direct::block_geometry(&fd)
            .with_context(|| format!("cannot read the size of {}", path.display()))?;
        let view = view_inventory(req.root, &live);
        let disk = view.as_ref().and_then(|i| inventory_device(i, &name));
        let info = describe(
            req.root,
            path,
            TargetClass::BlockDevice,
            Some(name.clone()),
            (size, lbs, Some(pbs)),
            disk,
            false,
        );
        let facts = facts_of(size, lbs, disk, false);
        Ok(PreparedTarget {
            info,
            fd: Arc::new(fd),
            facts,
            writes_allowed,
            stat: Some(StatSource {
                root: req.root.clone(),
                dev,
                name,
            }),
            no_stat_reason: None,
            notes,
            created_file: None,
        })
    }

    /// Opens a regular file, new (`created`) or existing, and names its file system's device.
    pub(super) fn file(
        self,
        created: Option<CreatedFile>,
        id: FileId,
        backing: Option<DevNum>,
        real_path: Option<PathBuf>,
    ) -> anyhow::Result<PreparedTarget> {
        let Pinned {
            req,
            need,
            direct,
            sync,
            pinned,
            mut notes,
        } = self;
        let path = req.path;
        let real_path = real_path.unwrap_or_else(|| path.to_path_buf());
        let writes_allowed = file_writes(req, need, created.is_some(), &real_path, id, &mut notes)?;
        let spec = OpenSpec {
            write: writes_allowed,
            direct,
            exclusive: false,
            sync: if writes_allowed { sync } else { SyncMode::None },
        };
        let fd = direct::reopen(&pinned, spec)
            .map_err(|e| crate::sys::error::open_error(e, path, spec))?;
        if writes_allowed && req.params.preserve {
            crate::bench::exec::rewrite_guard::refuse_other_writers_of_file(
                id,
                &real_path.to_string_lossy(),
            )?;
        }
        let size = direct::file_len(&fd)?;
        let backing = backing.or_else(|| mount_source(id.dev));
        let backing_name = backing.and_then(direct::block_name);
        let inv = req.root.inventory().ok();
        let disk = match (&inv, &backing_name) {
            (Some(i), Some(n)) => inventory_device(i, n),
            _ => None,
        };
        // O_DIRECT on a file needs the alignment of the device under the file system.
        let lbs = disk.and_then(|d| d.logical_block_size).unwrap_or(4096);
        let pbs = disk.and_then(|d| d.physical_block_size);
        let info = describe(
            req.root,
            path,
            TargetClass::File,
            backing_name.clone(),
            (size, lbs, pbs),
            disk,
            created.is_some(),
        );
        if let Some(dir) = real_path.parent() {
            notes.extend(filesystem_guard_notes(
                req.root,
                dir,
                backing_name.as_deref(),
            ));
        }
        let facts = facts_of(size, lbs, disk, true);
        let (stat, no_stat_reason) = file_stat(req.root, backing, backing_name);
        Ok(PreparedTarget {
            info,
            fd: Arc::new(fd),
            facts,
            writes_allowed,
            stat,
            no_stat_reason,
            notes,
            created_file: created,
        })
    }
}

/// Where a file's kernel counters are read (its file system's block device), or why there are
/// none.
fn file_stat(
    root: &SysRoot,
    backing: Option<DevNum>,
    backing_name: Option<String>,
) -> (Option<StatSource>, Option<String>) {
    match (backing, backing_name) {
        (Some(dev), Some(name)) => (
            Some(StatSource {
                root: root.clone(),
                dev,
                name,
            }),
            None,
        ),
        _ => (
            None,
            Some(
                "the file's file system has no block device (tmpfs?): no kernel \
                 counters to compare"
                    .to_string(),
            ),
        ),
    }
}
