//! Turning the TARGET of `disktriage run` into an open descriptor, the facts a plan needs and
//! a description for the report, the write guard applied first. A block device is written
//! only after `safety` agrees; a missing file is created and filled (`test_file`), and nothing
//! else is touched.
//!
//! `check` makes every refusal that needs no file without opening anything for writing;
//! `prepare` then opens (or lays out) the target and checks again. The guard always reads the
//! live system, never the `--root` tree.

mod opening;

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};

use anyhow::{Context, bail};

use crate::bench::catalog::resolve;
use crate::bench::exec::run_input::StatSource;
use crate::bench::exec::safety;
use crate::bench::exec::test_file::{
    CreatedFile, DEFAULT_FILE_SIZE, create_test_file, refuse_new_file_path, test_file_size,
};
use crate::bench::plan::TargetFacts;
use crate::bench::plan::params::TestParams;
use crate::bench::plan::test_name::{TestName, Writes};
use crate::bench::results::guards;
use crate::bench::results::outcome::{TargetClass, TargetInfo};
use crate::model::{BlockDevice, Bytes, FileId, Inventory};
use crate::sys::SysRoot;
use crate::sys::direct::{self, OpenSpec, Opened, PathKind, SyncMode};
use crate::sys::dirops::{self, DirTarget, ScratchDir};
use opening::Pinned;

/// An opened target, ready for the runner.
pub struct PreparedTarget {
    pub info: TargetInfo,
    pub fd: Arc<OwnedFd>,
    pub facts: TargetFacts,
    pub writes_allowed: bool,
    pub stat: Option<StatSource>,
    pub no_stat_reason: Option<String>,
    /// Notes for the report (why writes were left out, say).
    pub notes: Vec<String>,
    /// The test file this run created, removed again unless the run starts.
    pub created_file: Option<CreatedFile>,
}

/// What to open and how.
pub struct TargetRequest<'a> {
    pub path: &'a Path,
    pub root: &'a SysRoot,
    pub test: TestName,
    pub params: &'a TestParams,
    /// What the admin typed after --destroy-data.
    pub confirmation: Option<&'a str>,
    /// Set by a signal or the admin's stop: stops laying out a new test file (then removed) and
    /// waiting for a busy device.
    pub stop: Option<&'a AtomicBool>,
    /// Bytes of a new test file laid out so far, for a progress display.
    pub laid_out: Option<&'a AtomicU64>,
    /// The device as the admin chose it (the TUI's inventory): an opened block device that is no
    /// longer it is refused (`refuse_unless_chosen`).
    pub chosen: Option<&'a crate::model::ChosenDevice>,
}

/// Whether the test must write, may write, or never writes.
fn write_need(test: TestName, params: &TestParams) -> Writes {
    test.writes_with(params)
}

/// The disk (and partition) an inventory name refers to.
fn inventory_device<'a>(inv: &'a Inventory, name: &str) -> Option<&'a BlockDevice> {
    inv.find(name).or_else(|| {
        inv.devices
            .iter()
            .find(|d| d.partitions.iter().any(|p| p.name == name))
    })
}

/// The inventory every write check reads: the live `/proc` and `/sys`, whatever `--root` says.
/// The object a test writes is always a live one, so only the live mount table, swaps and
/// holders say whether it is in use; a captured tree must never make a mounted device look free.
fn live_inventory() -> anyhow::Result<Inventory> {
    SysRoot::host()
        .inventory()
        .context("cannot read the running system's devices to check that the target is unused")
}

/// The inventory that describes targets in the report: the `--root` tree (the live one when
/// that is `/`, read once).
fn view_inventory(root: &SysRoot, live: &Inventory) -> Option<Inventory> {
    if root.root() == Path::new("/") {
        Some(live.clone())
    } else {
        root.inventory().ok()
    }
}

/// What a target is, for finding two names of one object among several targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetObject {
    /// A block device or partition, by kernel name.
    Block { name: String },
    /// An existing regular file: its identity and its real path.
    File { id: FileId, path: String },
    /// A file this run would create: the directory it goes in (its identity when it exists)
    /// and its name there.
    New {
        dir: Option<FileId>,
        path: PathBuf,
        name: String,
    },
}

/// A target that passed every check made before anything is opened for writing (in use,
/// confirmation, read-only), with the facts its plan is built from.
#[derive(Debug, Clone)]
pub struct Checked {
    pub object: TargetObject,
    pub facts: TargetFacts,
    pub writes_allowed: bool,
}

/// Checks the target as `prepare` will, without creating it or opening it for writing, so
/// every refusal that needs no file comes before any target is touched. A missing file is
/// checked as the test file it would become.
pub fn check(req: &TargetRequest) -> anyhow::Result<Checked> {
    let path = req.path;
    let need = write_need(req.test, req.params);
    let mut notes = Vec::new();
    let pinned = match direct::pin(path) {
        Ok(fd) => fd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            refuse_new_file_path(path)?;
            if req.params.size == Some(0) {
                bail!("--size must be larger than 0 to create {}", path.display());
            }
            let live = live_inventory()?;
            let view = view_inventory(req.root, &live);
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let dir_id = direct::file_identity(parent).map(|(id, _)| id);
            let fs_dev = dirops::filesystem_dev(parent).ok();
            let backing = fs_dev.and_then(|d| {
                if d.major != 0 {
                    Some(d)
                } else {
                    mount_source(d)
                }
            });
            let disk = disk_of(view.as_ref(), backing);
            let lbs = disk.and_then(|d| d.logical_block_size).unwrap_or(4096);
            return Ok(Checked {
                object: TargetObject::New {
                    dir: dir_id,
                    path: path.to_path_buf(),
                    name: path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                },
                facts: facts_of(test_file_size(req.params), lbs, disk, true),
                writes_allowed: need != Writes::Never,
            });
        }
        Err(e) => return Err(open_failure(e, path)),
    };
    let opened = direct::describe_fd(&pinned)
        .with_context(|| format!("{} cannot be tested", path.display()))?;
    let live = live_inventory()?;
    let view = view_inventory(req.root, &live);
    match opened {
        Opened::Block { dev, name } => {
            let writes_allowed =
                device_writes(req, need, &live, path, dev, name.as_deref(), &mut notes)?;
            let reading = OpenSpec {
                write: false,
                direct: false,
                exclusive: false,
                sync: SyncMode::None,
            };
            let fd = direct::reopen(&pinned, reading)
                .map_err(|e| crate::sys::error::open_error(e, path, reading))?;
            refuse_unless_chosen(&fd, req.chosen, None)?;
            let name = name.unwrap_or_else(|| dev.to_string());
            if writes_allowed {
                refuse_read_only(&fd, &name)?;
            }
            let (size, lbs, _) = direct::block_geometry(&fd)
                .with_context(|| format!("cannot read the size of {}", path.display()))?;
            let disk = view.as_ref().and_then(|i| inventory_device(i, &name));
            Ok(Checked {
                object: TargetObject::Block { name },
                facts: facts_of(size, lbs, disk, false),
                writes_allowed,
            })
        }
        Opened::File {
            id,
            backing,
            real_path,
        } => {
            let real_path = real_path.unwrap_or_else(|| path.to_path_buf());
            let writes_allowed = file_writes(req, need, false, &real_path, id, &mut notes)?;
            let size = direct::file_len(&pinned)?;
            let backing = backing.or_else(|| mount_source(id.dev));
            let disk = disk_of(view.as_ref(), backing);
            let lbs = disk.and_then(|d| d.logical_block_size).unwrap_or(4096);
            Ok(Checked {
                object: TargetObject::File {
                    id,
                    path: real_path.to_string_lossy().into_owned(),
                },
                facts: facts_of(size, lbs, disk, true),
                writes_allowed,
            })
        }
    }
}

/// Refuses the opened block device `fd` unless it is the device the admin chose (`chosen`)
/// and the one the write guard checked (`checked`, the live inventory's entry).
fn refuse_unless_chosen(
    fd: &OwnedFd,
    chosen: Option<&crate::model::ChosenDevice>,
    checked: Option<&crate::model::ChosenDevice>,
) -> anyhow::Result<()> {
    for expected in [chosen, checked].into_iter().flatten() {
        match direct::refuse_unless_chosen(fd, expected) {
            Ok(Ok(())) => {}
            Ok(Err(why)) => bail!(why),
            Err(e) => {
                return Err(anyhow::Error::new(e).context(format!(
                    "cannot check that {} is the device chosen",
                    expected.name
                )));
            }
        }
    }
    Ok(())
}

/// btrfs gives its files an anonymous device (0:N): the mount's source is the disk whose
/// counters witness the run.
fn mount_source(dev: crate::model::DevNum) -> Option<crate::model::DevNum> {
    crate::sys::links::mount_source_device(dev)
}

/// The inventory's disk behind a file system's block device.
fn disk_of(inv: Option<&Inventory>, backing: Option<crate::model::DevNum>) -> Option<&BlockDevice> {
    let name = backing.and_then(direct::block_name)?;
    inventory_device(inv?, &name)
}

/// The error for a target that cannot be looked at.
fn open_failure(e: io::Error, path: &Path) -> anyhow::Error {
    let spec = OpenSpec {
        write: false,
        direct: false,
        exclusive: false,
        sync: SyncMode::None,
    };
    crate::sys::error::open_error(e, path, spec)
}

/// A kernel read-only device is refused before a write test starts: its exclusive read-write
/// open succeeds, and only the first write would fail.
fn refuse_read_only(fd: &OwnedFd, name: &str) -> anyhow::Result<()> {
    if direct::read_only_fd(fd).unwrap_or(false) {
        return Err(safety::WriteRefusal::ReadOnly { name: name.into() }.into());
    }
    Ok(())
}

/// Whether the test writes to block device `dev`: the write guard on the live inventory, for a
/// test that must write, or may write and was confirmed; a note when an optional write is left out.
fn device_writes(
    req: &TargetRequest,
    need: Writes,
    live: &Inventory,
    path: &Path,
    dev: crate::model::DevNum,
    name: Option<&str>,
    notes: &mut Vec<String>,
) -> anyhow::Result<bool> {
    let guard = || -> anyhow::Result<()> {
        let name = name.ok_or_else(|| safety::WriteRefusal::Unknown {
            name: format!("{} (device {dev})", path.display()),
        })?;
        safety::check_device_write(live, name, req.confirmation)
            .map_err(|e| e.for_rewrite(req.params.preserve))?;
        Ok(())
    };
    match need {
        // A read test needs no confirmation, but naming another device is a mistake the
        // admin must hear of.
        Writes::Never => match (req.confirmation, name) {
            (Some(given), Some(name)) => safety::check_confirmation(name, Some(given))
                .map(|()| false)
                .map_err(Into::into),
            _ => Ok(false),
        },
        Writes::Always => guard().map(|()| true),
        // Optional writes (CrystalDiskMark) must pass the guard when confirmed; else the
        // reads run alone.
        Writes::Optional => match req.confirmation {
            Some(_) => guard().map(|()| true),
            None => {
                let n = name.map_or_else(|| dev.to_string(), str::to_string);
                notes.push(format!(
                    "write tests skipped: writing to {n} needs --destroy-data {n}"
                ));
                Ok(false)
            }
        },
    }
}

/// Whether the test writes to the regular file at `real_path`: a file this run created is its
/// own; overwriting an existing one destroys its contents, so it must not be in use (a loop
/// image, a swap file: on the live inventory) and the admin must confirm.
fn file_writes(
    req: &TargetRequest,
    need: Writes,
    created: bool,
    real_path: &Path,
    id: FileId,
    notes: &mut Vec<String>,
) -> anyhow::Result<bool> {
    let real = real_path.to_string_lossy().into_owned();
    let file_name = real_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let guard = |confirmation| -> anyhow::Result<()> {
        let live = live_inventory()?;
        safety::check_file_write(&live, &real, id, &file_name, confirmation)?;
        Ok(())
    };
    match need {
        Writes::Never => match req.confirmation {
            Some(given) if given != file_name && given != real => {
                Err(safety::WriteRefusal::WrongFileName {
                    given: given.to_string(),
                    path: real,
                    name: file_name,
                }
                .into())
            }
            _ => Ok(false),
        },
        _ if created => Ok(true),
        Writes::Always => guard(req.confirmation).map(|()| true),
        Writes::Optional => match req.confirmation {
            Some(_) => guard(req.confirmation).map(|()| true),
            None => {
                notes.push(format!(
                    "write tests skipped: overwriting the existing file needs \
                     --destroy-data {file_name}"
                ));
                Ok(false)
            }
        },
    }
}

/// Opens (and if needed creates) the target after checking that the test may write to it.
///
/// The one-open rule: the path is resolved once (`direct::pin`); the in-use check, the
/// confirmation and the report use what that descriptor is (`st_rdev`, or `st_dev`/`st_ino`),
/// and the test's descriptor is opened from it, never by name again, so a symlink or device
/// node swapped in meanwhile cannot redirect the writes. Callers run `check` first, so a
/// run refused for its plan or memory lays out no file.
pub fn prepare(req: &TargetRequest) -> anyhow::Result<PreparedTarget> {
    let path = req.path;
    let need = write_need(req.test, req.params);
    let direct = !req.params.buffered;
    // The test's own default (sync-latency's O_DSYNC) unless --sync says otherwise.
    let sync = resolve(req.test, req.params).sync;
    let notes = Vec::new();
    let (pinned, created) = match direct::pin(path) {
        Ok(fd) => (fd, None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            refuse_new_file_path(path)?;
            let created = create_test_file(path, req.params, req.stop, req.laid_out)?;
            let fd = created
                .fd
                .try_clone()
                .context("cannot hold the new test file")?;
            (fd, Some(created))
        }
        Err(e) => return Err(open_failure(e, path)),
    };
    let opened = direct::describe_fd(&pinned)
        .with_context(|| format!("{} cannot be tested", path.display()))?;

    let pinned = Pinned {
        req,
        need,
        direct,
        sync,
        pinned,
        notes,
    };
    match opened {
        Opened::Block { dev, name } => pinned.block_device(dev, name),
        Opened::File {
            id,
            backing,
            real_path,
        } => pinned.file(created, id, backing, real_path),
    }
}

/// A directory prepared for a directory test (the metadata test): described, with the scratch
/// directory the test works in already made (removed again when dropped).
pub struct PreparedDirectory {
    pub info: TargetInfo,
    pub facts: TargetFacts,
    pub scratch: ScratchDir,
    pub notes: Vec<String>,
}

/// Checks that `path` is a directory the test may create files in, and makes its scratch
/// directory there. Only that new directory is written, so no confirmation is needed. A
/// block device, a regular file, devtmpfs, proc or sysfs, and a directory the test cannot
/// write to are refused with the reason.
pub fn prepare_directory(
    path: &Path,
    root: &SysRoot,
    test: TestName,
) -> anyhow::Result<PreparedDirectory> {
    let dir = match dirops::classify(path) {
        Ok(DirTarget::Directory(real)) => real,
        Ok(DirTarget::Other(what)) => bail!(
            "{test} runs in a directory (it creates, stats and deletes files in a scratch \
             directory of its own there): {} is {what}",
            path.display()
        ),
        Err(e) => bail!(
            "{test} runs in a directory: cannot use {}: {}",
            path.display(),
            crate::sys::error::describe_io(&e)
        ),
    };
    if let Some(t) = direct::filesystem_type(&dir)
        .filter(|t| matches!(t.as_str(), "devtmpfs" | "proc" | "sysfs" | "devpts"))
    {
        bail!(
            "{} is on a {t} file system: {test} creates files only on a real file system",
            path.display()
        );
    }
    let (free, total) = dirops::free_space(&dir)
        .with_context(|| format!("cannot read the free space of {}", path.display()))?;
    let dev = dirops::filesystem_dev(&dir).ok();
    // btrfs: an anonymous device; the mount's source is the disk (see `mount_source`).
    let backing_name = dev
        .and_then(|d| {
            if d.major != 0 {
                Some(d)
            } else {
                crate::sys::links::mount_source_device(d)
            }
        })
        .and_then(direct::block_name);
    let inv = root.inventory().ok();
    let disk = match (&inv, &backing_name) {
        (Some(i), Some(n)) => inventory_device(i, n),
        _ => None,
    };
    let lbs = disk.and_then(|d| d.logical_block_size).unwrap_or(4096);
    let scratch = ScratchDir::create(&dir).map_err(|e| {
        anyhow::anyhow!(
            "cannot create a scratch directory in {}: {}",
            path.display(),
            crate::sys::error::create_reason(&e)
        )
    })?;
    let info = describe(
        root,
        &dir,
        TargetClass::Directory,
        backing_name,
        (total, lbs, disk.and_then(|d| d.physical_block_size)),
        disk,
        false,
    );
    let mut notes = vec![format!(
        "file system: {} free of {}; the files go in {} (removed afterwards)",
        Bytes(free).iec(),
        Bytes(total).iec(),
        scratch.path().display()
    )];
    notes.extend(filesystem_guard_notes(root, &dir, info.device.as_deref()));
    Ok(PreparedDirectory {
        info,
        facts: facts_of(free.max(1), lbs, disk, true),
        scratch,
        notes,
    })
}

/// The report's description of a target; `disk` is the inventory's device behind it.
fn describe(
    root: &SysRoot,
    path: &Path,
    kind: TargetClass,
    device: Option<String>,
    (size, lbs, pbs): (u64, u32, Option<u32>),
    disk: Option<&BlockDevice>,
    created: bool,
) -> TargetInfo {
    TargetInfo {
        path: path.to_path_buf(),
        kind,
        device,
        size_bytes: size,
        logical_block_size: lbs,
        physical_block_size: pbs,
        model: disk.and_then(BlockDevice::description),
        transport: disk.map(|d| d.transport),
        rotational: disk.and_then(|d| d.rotational),
        scheduler: disk.and_then(|d| d.scheduler.as_ref()?.active.clone()),
        kernel_write_cache: disk.and_then(|d| d.kernel_write_cache),
        created,
        link_ceiling: disk.and_then(|d| {
            guards::link_ceiling(d.transport, &crate::sys::links::link_facts(root, &d.name))
        }),
    }
}

/// What a test on a file system should say about it: copy-on-write or compressing, and the
/// dm-crypt or md layers under it (`guards::filesystem_notes`).
fn filesystem_guard_notes(root: &SysRoot, dir: &Path, device: Option<&str>) -> Vec<String> {
    let fstype = direct::filesystem_type(dir);
    let layers = device
        .map(|d| crate::sys::links::layers(root, d))
        .unwrap_or_default();
    guards::filesystem_notes(fstype.as_deref(), &layers)
}

/// What a plan needs to know of a target.
fn facts_of(size: u64, lbs: u32, disk: Option<&BlockDevice>, is_file: bool) -> TargetFacts {
    TargetFacts {
        size,
        logical_block_size: lbs,
        max_request: disk
            .and_then(|d| d.max_sectors_kb)
            .map(|kb| u64::from(kb) * 1024),
        is_file,
    }
}

/// The facts of a target for planning only (`run --fio`): opened read-only, never created; a
/// missing file is planned at `size`.
pub fn probe(path: &Path, root: &SysRoot, size: Option<u64>) -> anyhow::Result<TargetFacts> {
    if let Ok(DirTarget::Directory(dir)) = dirops::classify(path) {
        let (free, _) = dirops::free_space(&dir)
            .with_context(|| format!("cannot read the free space of {}", path.display()))?;
        return Ok(TargetFacts {
            size: free.max(1),
            logical_block_size: 4096,
            max_request: None,
            is_file: true,
        });
    }
    if direct::identify(path)? == PathKind::Missing {
        return Ok(TargetFacts {
            size: size.unwrap_or(DEFAULT_FILE_SIZE),
            logical_block_size: 4096,
            max_request: None,
            is_file: true,
        });
    }
    let read_only = TestParams::default();
    let prepared = prepare(&TargetRequest {
        path,
        root,
        test: TestName::SeqRead,
        params: &read_only,
        confirmation: None,
        stop: None,
        laid_out: None,
        chosen: None,
    })?;
    Ok(prepared.facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small_file_params() -> TestParams {
        TestParams {
            size: Some(64 << 10),
            ..TestParams::default()
        }
    }

    /// The layout's file renamed away and another file put at its path: giving up the test
    /// file (drop, or `remove`) leaves the other file alone.
    #[test]
    fn a_file_put_at_the_test_files_path_is_never_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("test.bin");
        for explicit in [false, true] {
            let created = create_test_file(&path, &small_file_params(), None, None).unwrap();
            let moved = dir.path().join("moved-away.bin");
            std::fs::rename(&path, &moved).unwrap();
            std::fs::write(&path, b"the admin's own file").unwrap();
            if explicit {
                created.remove().unwrap();
            } else {
                drop(created);
            }
            assert_eq!(std::fs::read(&path).unwrap(), b"the admin's own file");
            std::fs::remove_file(&path).unwrap();
            std::fs::remove_file(&moved).unwrap();
        }
        // Still at its path: removed, and the directory it was compared in with it.
        let created = create_test_file(&path, &small_file_params(), None, None).unwrap();
        drop(created);
        assert!(!path.exists());
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    /// `check` on a missing file plans it and creates nothing; a bare device name and a
    /// size of 0 are refused.
    #[test]
    fn check_creates_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.bin");
        let params = small_file_params();
        let root = SysRoot::new("tests/fixtures/sysfs/host-loop-zram");
        let req = TargetRequest {
            path: &path,
            root: &root,
            test: TestName::SeqWrite,
            params: &params,
            confirmation: None,
            stop: None,
            laid_out: None,
            chosen: None,
        };
        let checked = check(&req).unwrap();
        assert!(!path.exists());
        assert!(checked.writes_allowed);
        assert_eq!(checked.facts.size, 64 << 10);
        assert!(matches!(checked.object, TargetObject::New { ref name, .. } if name == "new.bin"));
        let zero = TestParams {
            size: Some(0),
            ..TestParams::default()
        };
        let e = check(&TargetRequest {
            params: &zero,
            ..req
        })
        .err()
        .unwrap();
        assert!(
            e.to_string().contains("--size must be larger than 0"),
            "{e}"
        );
        assert!(!path.exists());
    }
}
