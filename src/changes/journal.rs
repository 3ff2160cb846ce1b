//! The change journal: one JSON file (`journal.json`) in a directory (`/run/disktriage` by
//! default, a tmpfs, so a reboot, which resets every setting recorded here, also empties it).
//!
//! Locking: every reader and writer takes `journal.lock` with flock(2) (`Journal::lock`) for
//! the whole read-modify-write; `Changer` holds it across the device change too (see
//! `crate::changes`).
//!
//! Writing: a temporary file with an unpredictable name, created with O_EXCL|O_NOFOLLOW,
//! fsync, then renamed over `journal.json`. An empty journal is no file at all. A journal that
//! cannot be parsed is never overwritten: it may hold the only record of an original setting.
//!
//! Trust: the journal tells root what to write where, so only root (or the user, for a scratch
//! journal) may change its directory: not a symlink, not group- or world-writable. Its files
//! are opened with `sys::confined::open_regular_at`: never through a symlink, never blocking on
//! a planted FIFO.
//!
//! Claims: a second sweep (or switch) of a device during a sweep would take the first one's
//! temporary value for the original and leave it behind. So a sweep claims the device first
//! (`Journal::claim`): `claim.NAME.lock`, held with flock(2), which the kernel drops however
//! the holder ends (SIGKILL too); the file names the holder, for the refusal.
//! a claim never outlives its process; the file says who holds it, for the refusal.

use std::collections::HashSet;
use std::fs::{self, File};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg, OFlag, openat, renameat};
use nix::sys::stat::Mode;
use nix::unistd::{UnlinkatFlags, unlinkat};
use serde::{Deserialize, Serialize};

use crate::model::{DeviceId, JournalEntry, Lifetime, Owner, Setting, SettingKind};
use crate::sys::confined::{self, Access, DirError, FileError};
use crate::sys::error::describe_io_brief;
use crate::sys::process;

/// The file's format marker and version.
const FORMAT: &str = "disktriage-journal";
const VERSION: u32 = 1;
const FILE: &str = "journal.json";
const LOCK: &str = "journal.lock";
/// `claim.NAME.lock`: a device claimed by a sweep.
const CLAIM_PREFIX: &str = "claim.";
const CLAIM_SUFFIX: &str = ".lock";
/// What a claim file says about its holder is at most this long.
const MAX_CLAIM_TEXT: u64 = 4096;
/// A journal larger than this is not read (200,000 entries take 45 MiB).
const MAX_BYTES: u64 = 64 << 20;

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The message already says the io::Error's words: a field, not a source said twice.
    #[error("change journal: {op} {}: {}", path.display(), describe_io_brief(error))]
    Io {
        op: &'static str,
        path: PathBuf,
        error: io::Error,
    },
    #[error(
        "change journal {} is unreadable ({problem}); it is left as it is: move it aside \
         once you have restored by hand what it lists",
        path.display()
    )]
    Corrupt { path: PathBuf, problem: ParseError },
    /// Larger than any journal disktriage writes: not read at all.
    #[error(
        "change journal {} is {} MiB, more than the {} MiB any journal of disktriage's reaches \
         (one entry per setting changed): it was not read; look at it and move it aside",
        path.display(),
        size >> 20,
        MAX_BYTES >> 20
    )]
    TooLarge { path: PathBuf, size: u64 },
    /// The directory is writable by others than root (or the user running).
    #[error(
        "refusing the journal directory {}: {problem}; it must be owned by {owners} and not \
         group/world-writable",
        path.display()
    )]
    UnsafeDir {
        path: PathBuf,
        problem: String,
        owners: String,
    },
    /// A sweep holds this device's settings (`Journal::claim`).
    #[error(
        "{device}'s settings are held by another disktriage ({holder}), which puts them back \
         when it ends: wait for it to end or stop it, then try again. Nothing was changed"
    )]
    Claimed { device: String, holder: String },
    /// A symlink where the journal keeps a file: planted, never followed.
    #[error(
        "change journal: refusing {}: it is a symbolic link, not a file disktriage made; \
         remove it",
        path.display()
    )]
    Symlink { path: PathBuf },
}

/// Why a journal's text was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("{0}")]
    Json(String),
    #[error("format {format:?} version {version}, expected {FORMAT:?} version {VERSION}")]
    Format { format: String, version: u32 },
    #[error("{0}")]
    Inconsistent(String),
}

impl JournalError {
    fn io(op: &'static str, path: &Path, error: io::Error) -> Self {
        JournalError::Io {
            op,
            path: path.to_path_buf(),
            error,
        }
    }

    /// For a file that `confined::open_regular_at` refused.
    fn file(op: &'static str, path: &Path, error: FileError) -> Self {
        match error {
            FileError::Symlink => JournalError::Symlink {
                path: path.to_path_buf(),
            },
            FileError::Io(e) => JournalError::io(op, path, e),
            other => JournalError::io(op, path, io::Error::other(other.to_string())),
        }
    }

    /// For an open of a file in the journal directory with O_NOFOLLOW.
    fn open(op: &'static str, path: &Path, errno: Errno) -> Self {
        if errno == Errno::ELOOP {
            JournalError::Symlink {
                path: path.to_path_buf(),
            }
        } else {
            JournalError::io(op, path, io::Error::from(errno))
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct JournalFile {
    format: String,
    version: u32,
    next_id: u64,
    entries: Vec<JournalEntry>,
}

impl Default for JournalFile {
    fn default() -> Self {
        JournalFile {
            format: FORMAT.into(),
            version: VERSION,
            next_id: 1,
            entries: Vec::new(),
        }
    }
}

/// Parses a journal's bytes: the right shape, format and version, unique ids below `next_id`
/// (a duplicate would make one removal remove another). Names are checked where used, so one
/// bad entry does not hide the others.
pub(crate) fn parse(bytes: &[u8]) -> Result<JournalFile, ParseError> {
    let file: JournalFile =
        serde_json::from_slice(bytes).map_err(|e| ParseError::Json(e.to_string()))?;
    if file.format != FORMAT || file.version != VERSION {
        return Err(ParseError::Format {
            format: file.format,
            version: file.version,
        });
    }
    let mut ids = HashSet::with_capacity(file.entries.len());
    for e in &file.entries {
        if !ids.insert(e.id) {
            return Err(ParseError::Inconsistent(format!(
                "entry id {} appears twice",
                e.id
            )));
        }
        if e.id >= file.next_id {
            return Err(ParseError::Inconsistent(format!(
                "entry id {} is not below next_id {}",
                e.id, file.next_id
            )));
        }
    }
    Ok(file)
}

/// An entry as `record` left it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub entry: JournalEntry,
    /// An earlier outstanding change held the original already: it was kept.
    pub existing: bool,
    /// This call added the entry (false: it joined the recorder's latest).
    pub created: bool,
}

/// A handle on the journal directory, acting for one owner (this process).
#[derive(Debug, Clone)]
pub struct Journal {
    dir: PathBuf,
    owner: Owner,
}

/// An unguessable temporary name: std's OS-seeded hasher over pid, time and a counter.
fn unpredictable_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    let a = h.finish();
    let mut h2 = std::collections::hash_map::RandomState::new().build_hasher();
    h2.write_u64(a);
    format!(".{FILE}.{a:016x}{:016x}.tmp", h2.finish())
}

impl Journal {
    /// Opens (creating, mode 0700) the journal directory as this process.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Journal, JournalError> {
        Journal::open_as(dir, process::current_owner())
    }

    /// Opens the journal as another owner (tests); the directory is checked first.
    pub fn open_as(dir: impl Into<PathBuf>, owner: Owner) -> Result<Journal, JournalError> {
        let dir = dir.into();
        if fs::symlink_metadata(&dir).is_err() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&dir)
                .map_err(|e| JournalError::io("create", &dir, e))?;
        }
        let journal = Journal { dir, owner };
        journal.open_dir()?;
        Ok(journal)
    }

    /// Opens the journal only if its directory exists (queries must not create it).
    pub fn existing(dir: impl Into<PathBuf>) -> Option<Journal> {
        let dir = dir.into();
        fs::symlink_metadata(&dir).is_ok().then(|| Journal {
            dir,
            owner: process::current_owner(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The journal file (absent when the journal is empty).
    pub fn file(&self) -> PathBuf {
        self.dir.join(FILE)
    }

    pub fn owner(&self) -> Owner {
        self.owner
    }

    /// The directory, opened and checked (`confined::open_checked_dir`).
    fn open_dir(&self) -> Result<File, JournalError> {
        confined::open_checked_dir(&self.dir).map_err(|e| match e {
            DirError::Unsafe(problem) => JournalError::UnsafeDir {
                path: self.dir.clone(),
                problem,
                owners: confined::allowed_owners().1,
            },
            DirError::Io(e) => JournalError::io("open", &self.dir, e),
        })
    }

    /// Locks and reads the journal; the lock goes with the returned handle.
    pub fn lock(&self) -> Result<Locked<'_>, JournalError> {
        let dir = self.open_dir()?;
        let lock_path = self.dir.join(LOCK);
        // Only a regular file: a FIFO planted as the lock would block.
        let file = confined::open_regular_at(&dir, LOCK, Access::Lock { mode: 0o600 })
            .map_err(|e| JournalError::file("open", &lock_path, e))?;
        let lock = Flock::lock(file, FlockArg::LockExclusive)
            .map_err(|(_, errno)| JournalError::io("lock", &lock_path, io::Error::from(errno)))?;
        let file = self.load(&dir)?;
        Ok(Locked {
            journal: self,
            dir,
            _lock: lock,
            file,
        })
    }

    fn load(&self, dir: &File) -> Result<JournalFile, JournalError> {
        let path = self.file();
        let file = match confined::open_regular_at(dir, FILE, Access::Read) {
            Ok(file) => file,
            Err(e) if e.is_not_found() => return Ok(JournalFile::default()),
            Err(e) => return Err(JournalError::file("open", &path, e)),
        };
        let size = file
            .metadata()
            .map_err(|e| JournalError::io("read", &path, e))?
            .len();
        if size > MAX_BYTES {
            return Err(JournalError::TooLarge { path, size });
        }
        let mut bytes = Vec::new();
        file.take(MAX_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| JournalError::io("read", &path, e))?;
        parse(&bytes).map_err(|problem| JournalError::Corrupt { path, problem })
    }

    /// Claims `device` for this process, `what` saying for what ("scheduler sweep"): until it
    /// is dropped, any other claim or `check_unclaimed` of it fails with `Claimed`, naming this
    /// process. Never waits on a holder: a short retry only rides out an instant's lock, or a
    /// claim file removed under it.
    pub fn claim(&self, device: &str, what: &str) -> Result<DeviceClaim, JournalError> {
        let mut held_by = None;
        for attempt in 0..10 {
            if attempt > 0 {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            let Some(open) = self.open_claim(device, true)? else {
                continue;
            };
            match Flock::lock(open.file, FlockArg::LockExclusiveNonblock) {
                Ok(lock) => {
                    // Removed by a holder that just let go: a lock on it claims nothing.
                    if !still_linked(&open.dir, &open.name, &lock) {
                        continue;
                    }
                    let me = process::current_owner();
                    let text = format!(
                        "pid {} start {}\n{}\n",
                        me.pid,
                        me.start_time,
                        what.replace(|c: char| c.is_control(), " ")
                    );
                    lock.set_len(0)
                        .and_then(|()| {
                            std::os::unix::fs::FileExt::write_all_at(&*lock, text.as_bytes(), 0)
                        })
                        .map_err(|e| JournalError::io("write", &open.path, e))?;
                    return Ok(DeviceClaim {
                        device: device.to_string(),
                        dir: open.dir,
                        name: open.name,
                        _lock: lock,
                    });
                }
                Err((file, Errno::EWOULDBLOCK)) => held_by = Some(claim_holder(&file)),
                Err((_, errno)) => {
                    return Err(JournalError::io("lock", &open.path, io::Error::from(errno)));
                }
            }
        }
        Err(JournalError::Claimed {
            device: device.to_string(),
            holder: held_by.unwrap_or_else(|| "a process that is just starting".into()),
        })
    }

    /// `Claimed` while another claim holds `device`; creates nothing.
    pub fn check_unclaimed(&self, device: &str) -> Result<(), JournalError> {
        for _ in 0..3 {
            let Some(open) = self.open_claim(device, false)? else {
                return Ok(());
            };
            match Flock::lock(open.file, FlockArg::LockSharedNonblock) {
                // Free, unless it is a file removed meanwhile: then look again.
                Ok(free) if still_linked(&open.dir, &open.name, &free) => return Ok(()),
                Ok(_) => continue,
                Err((file, Errno::EWOULDBLOCK)) => {
                    return Err(JournalError::Claimed {
                        device: device.to_string(),
                        holder: claim_holder(&file),
                    });
                }
                Err((_, errno)) => {
                    return Err(JournalError::io("lock", &open.path, io::Error::from(errno)));
                }
            }
        }
        Ok(())
    }

    /// The claim file of `device`, created when `create` (`open_regular_at`).
    fn open_claim(&self, device: &str, create: bool) -> Result<Option<ClaimFile>, JournalError> {
        let name = format!("{CLAIM_PREFIX}{device}{CLAIM_SUFFIX}");
        let path = self.dir.join(&name);
        if !crate::model::is_kernel_name(device) {
            return Err(JournalError::io(
                "claim",
                &path,
                io::Error::new(io::ErrorKind::InvalidInput, "not a kernel device name"),
            ));
        }
        let dir = self.open_dir()?;
        if !create
            && confined::regular_size_at(&dir, &name)
                .map_err(|e| JournalError::file("open", &path, e))?
                .is_none()
        {
            return Ok(None);
        }
        let file = confined::open_regular_at(&dir, &name, Access::Lock { mode: 0o600 })
            .map_err(|e| JournalError::file("open", &path, e))?;
        Ok(Some(ClaimFile {
            file,
            dir,
            name,
            path,
        }))
    }

    /// Every entry, oldest first.
    pub fn entries(&self) -> Result<Vec<JournalEntry>, JournalError> {
        Ok(self.lock()?.file.entries)
    }

    /// Records `found` BEFORE the change is made (see `Locked::record`).
    pub fn record(
        &self,
        device: &DeviceId,
        found: Setting,
        lifetime: Lifetime,
    ) -> Result<Recorded, JournalError> {
        let mut j = self.lock()?;
        let rec = j.record(device, found, None, lifetime);
        j.save()?;
        Ok(rec)
    }

    /// Removes one entry; `None` when it was not there.
    pub fn remove(&self, id: u64) -> Result<Option<JournalEntry>, JournalError> {
        let mut j = self.lock()?;
        let gone = j.remove(id);
        if gone.is_some() {
            j.save()?;
        }
        Ok(gone)
    }

    /// Removes every entry of one setting of one device.
    pub fn remove_setting(
        &self,
        device: &str,
        kind: SettingKind,
    ) -> Result<Vec<JournalEntry>, JournalError> {
        let mut j = self.lock()?;
        let gone = j.remove_setting(device, kind);
        if !gone.is_empty() {
            j.save()?;
        }
        Ok(gone)
    }
}

/// A claim file, open, with the directory it is in.
struct ClaimFile {
    file: File,
    dir: File,
    name: String,
    path: PathBuf,
}

/// Is `name` in `dir` still `file` (not removed or replaced)?
fn still_linked(dir: &File, name: &str, file: &File) -> bool {
    let Ok(open) = file.metadata() else {
        return false;
    };
    nix::sys::stat::fstatat(dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
        .is_ok_and(|st| st.st_dev == open.dev() && st.st_ino == open.ino())
}

/// A device claimed by this process, released on drop or by the kernel when it ends.
#[derive(Debug)]
pub struct DeviceClaim {
    device: String,
    dir: File,
    name: String,
    _lock: Flock<File>,
}

impl Drop for DeviceClaim {
    fn drop(&mut self) {
        // Removed while still locked: whoever opened it before finds it unlinked once locked,
        // and looks again (`still_linked`).
        let _ = unlinkat(&self.dir, self.name.as_str(), UnlinkatFlags::NoRemoveDir);
    }
}

impl DeviceClaim {
    pub fn device(&self) -> &str {
        &self.device
    }
}

/// Who holds a claim ("pid 812: scheduler sweep"); empty before the holder wrote it.
fn claim_holder(file: &File) -> String {
    let mut text = String::new();
    let _ = file.take(MAX_CLAIM_TEXT).read_to_string(&mut text);
    let mut lines = text.lines();
    let pid = lines
        .next()
        .and_then(|l| l.strip_prefix("pid "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|p| p.parse::<u32>().ok());
    let what = lines.next().map(str::trim).filter(|w| !w.is_empty());
    match (pid, what) {
        (Some(pid), Some(what)) => format!(
            "pid {pid}: {}",
            crate::model::text::neutralize_controls(what)
        ),
        (Some(pid), None) => format!("pid {pid}"),
        _ => "a process that is just starting".to_string(),
    }
}

/// The journal, locked and read; changes are in memory until `save`.
pub struct Locked<'a> {
    journal: &'a Journal,
    dir: File,
    _lock: Flock<File>,
    file: JournalFile,
}

impl Locked<'_> {
    pub fn journal(&self) -> &Journal {
        self.journal
    }

    /// Every entry, oldest first.
    pub fn entries(&self) -> &[JournalEntry] {
        &self.file.entries
    }

    pub fn get(&self, id: u64) -> Option<&JournalEntry> {
        self.file.entries.iter().find(|e| e.id == id)
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut JournalEntry> {
        self.file.entries.iter_mut().find(|e| e.id == id)
    }

    /// The outstanding changes of one setting of `device`, oldest first.
    pub fn chain(&self, device: &DeviceId, kind: SettingKind) -> Vec<&JournalEntry> {
        self.chain_indices(device, kind)
            .into_iter()
            .map(|i| &self.file.entries[i])
            .collect()
    }

    fn chain_indices(&self, device: &DeviceId, kind: SettingKind) -> Vec<usize> {
        self.file
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                e.device.name == device.name
                    && e.original.kind() == kind
                    && e.device.mismatch(device).is_none()
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// Records a change BEFORE it is made: `found` is the device's value, `set_to` the next.
    /// The original kept is the value before the first outstanding change of this setting
    /// (`found` when none). The recorder's own latest entry is reused (single-shot after
    /// single-shot, the same session again); else a new one keeps `found` for a session's end.
    pub fn record(
        &mut self,
        device: &DeviceId,
        found: Setting,
        set_to: Option<Setting>,
        lifetime: Lifetime,
    ) -> Recorded {
        let owner = self.journal.owner;
        let chain = self.chain_indices(device, found.kind());
        let first_original = chain
            .first()
            .map(|&i| self.file.entries[i].original.clone());
        if let Some(&last) = chain.last() {
            let e = &mut self.file.entries[last];
            if e.lifetime == lifetime && (lifetime == Lifetime::Persisted || e.owner == owner) {
                if set_to.is_some() {
                    e.set_to = set_to;
                }
                return Recorded {
                    entry: e.clone(),
                    existing: true,
                    created: false,
                };
            }
        }
        let existing = first_original.is_some();
        let entry = JournalEntry {
            id: self.file.next_id,
            device: device.clone(),
            original: first_original.unwrap_or_else(|| found.clone()),
            found: Some(found),
            set_to,
            lifetime,
            owner,
            recorded_at: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        };
        self.file.next_id += 1;
        self.file.entries.push(entry.clone());
        Recorded {
            entry,
            existing,
            created: true,
        }
    }

    /// Removes one entry. `None` when it was not there.
    pub fn remove(&mut self, id: u64) -> Option<JournalEntry> {
        let i = self.file.entries.iter().position(|e| e.id == id)?;
        Some(self.file.entries.remove(i))
    }

    /// Removes every entry `gone` picks, in one pass.
    pub fn remove_where(&mut self, gone: impl Fn(&JournalEntry) -> bool) -> Vec<JournalEntry> {
        let (out, stay): (Vec<_>, Vec<_>) = std::mem::take(&mut self.file.entries)
            .into_iter()
            .partition(|e| gone(e));
        self.file.entries = stay;
        out
    }

    /// Session entries left to `disktriage restore` become single-shot entries.
    pub fn hand_over(&mut self, ids: &HashSet<u64>) {
        if ids.is_empty() {
            return;
        }
        for e in &mut self.file.entries {
            if ids.contains(&e.id) {
                e.lifetime = Lifetime::Persisted;
            }
        }
    }

    /// Removes every entry of one setting of one device, sessions' too (a kept value).
    pub fn remove_setting(&mut self, device: &str, kind: SettingKind) -> Vec<JournalEntry> {
        self.remove_where(|e| e.device.name == device && e.original.kind() == kind)
    }

    /// Writes the journal atomically (temporary file, fsync, rename); empty: no file.
    pub fn save(&self) -> Result<(), JournalError> {
        let path = self.journal.file();
        if self.file.entries.is_empty() {
            return match unlinkat(&self.dir, FILE, UnlinkatFlags::NoRemoveDir) {
                Ok(()) | Err(Errno::ENOENT) => Ok(()),
                Err(e) => Err(JournalError::io("remove", &path, io::Error::from(e))),
            };
        }
        let mut text =
            serde_json::to_vec_pretty(&self.file).map_err(|e| JournalError::Corrupt {
                path: path.clone(),
                problem: ParseError::Json(e.to_string()),
            })?;
        text.push(b'\n');
        let (tmp_name, fd) = self.create_temporary()?;
        let tmp = self.journal.dir.join(&tmp_name);
        let written = (|| -> io::Result<()> {
            let mut f = File::from(fd);
            f.write_all(&text)?;
            f.sync_all()
        })();
        let renamed = written
            .map_err(|e| JournalError::io("write", &tmp, e))
            .and_then(|()| {
                renameat(&self.dir, tmp_name.as_str(), &self.dir, FILE)
                    .map_err(|e| JournalError::io("rename", &path, io::Error::from(e)))
            });
        if renamed.is_err() {
            let _ = unlinkat(&self.dir, tmp_name.as_str(), UnlinkatFlags::NoRemoveDir);
        }
        renamed?;
        // The rename is durable once the directory is synced.
        let _ = self.dir.sync_all();
        Ok(())
    }

    /// A new temporary file: unguessable name, O_EXCL, O_NOFOLLOW.
    fn create_temporary(&self) -> Result<(String, std::os::fd::OwnedFd), JournalError> {
        let mut last = Errno::EEXIST;
        for _ in 0..8 {
            let name = unpredictable_name();
            match openat(
                &self.dir,
                name.as_str(),
                OFlag::O_CREAT
                    | OFlag::O_EXCL
                    | OFlag::O_WRONLY
                    | OFlag::O_NOFOLLOW
                    | OFlag::O_CLOEXEC,
                Mode::from_bits_truncate(0o600),
            ) {
                Ok(fd) => return Ok((name, fd)),
                Err(Errno::EEXIST) => last = Errno::EEXIST,
                Err(e) => {
                    return Err(JournalError::open(
                        "create",
                        &self.journal.dir.join(name),
                        e,
                    ));
                }
            }
        }
        Err(JournalError::io(
            "create a temporary file in",
            &self.journal.dir,
            io::Error::from(last),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(pid: u32) -> Owner {
        Owner {
            pid,
            start_time: 100,
        }
    }

    fn dev(name: &str) -> DeviceId {
        DeviceId {
            name: name.into(),
            dev: None,
            serial: None,
            identity: Default::default(),
        }
    }

    fn sched(name: &str) -> Setting {
        Setting::Scheduler { name: name.into() }
    }

    #[test]
    fn record_keeps_the_first_original_and_remove_empties() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_as(dir.path().join("j"), owner(1)).unwrap();
        assert!(j.entries().unwrap().is_empty());
        assert!(!j.file().exists(), "no entries, no file");

        let a = j
            .record(&dev("sda"), sched("mq-deadline"), Lifetime::Persisted)
            .unwrap();
        assert!(!a.existing);
        assert!(j.file().exists());
        // A second change of the same setting keeps the first original.
        let b = j
            .record(&dev("sda"), sched("bfq"), Lifetime::Persisted)
            .unwrap();
        assert!(b.existing);
        assert_eq!(b.entry.id, a.entry.id);
        assert_eq!(b.entry.original, sched("mq-deadline"));
        // Another process's persisted change of it shares the entry too.
        let other = Journal::open_as(dir.path().join("j"), owner(2)).unwrap();
        assert!(
            other
                .record(&dev("sda"), sched("kyber"), Lifetime::Persisted)
                .unwrap()
                .existing
        );
        // A session's change gets its own entry (what it found), with the first original.
        let s = other
            .record(&dev("sda"), sched("bfq"), Lifetime::Session)
            .unwrap();
        assert!(s.created && s.existing);
        assert_eq!(s.entry.original, sched("mq-deadline"));
        assert_eq!(s.entry.found(), &sched("bfq"));
        assert_eq!(j.entries().unwrap().len(), 2);

        assert_eq!(j.remove(a.entry.id).unwrap().unwrap().id, a.entry.id);
        assert_eq!(j.remove(a.entry.id).unwrap(), None);
        j.remove(s.entry.id).unwrap();
        assert!(!j.file().exists());
    }

    #[test]
    fn keep_drops_every_entry_of_the_setting() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_as(dir.path(), owner(1)).unwrap();
        j.record(&dev("sda"), sched("mq-deadline"), Lifetime::Persisted)
            .unwrap();
        j.record(&dev("sda"), sched("none"), Lifetime::Session)
            .unwrap();
        j.record(
            &dev("sda"),
            Setting::DriveWriteCache { enabled: true },
            Lifetime::Persisted,
        )
        .unwrap();
        j.record(&dev("sdb"), sched("none"), Lifetime::Persisted)
            .unwrap();
        // A kept value is neither undone by `restore` nor handed to it.
        let gone = j.remove_setting("sda", SettingKind::Scheduler).unwrap();
        assert_eq!(gone.len(), 2);
        let left: Vec<_> = j
            .entries()
            .unwrap()
            .into_iter()
            .map(|e| (e.device.name, e.original.kind()))
            .collect();
        assert_eq!(
            left,
            [
                ("sda".to_string(), SettingKind::DriveWriteCache),
                ("sdb".to_string(), SettingKind::Scheduler)
            ]
        );
    }

    #[test]
    fn a_journal_past_the_cap_is_not_read_and_said_so() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_as(dir.path(), owner(1)).unwrap();
        // Sparse: 300 MB that would have been read whole.
        let f = fs::File::create(j.file()).unwrap();
        f.set_len(300_000_000).unwrap();
        let e = j.entries().unwrap_err();
        assert!(matches!(e, JournalError::TooLarge { .. }), "{e}");
        assert!(
            e.to_string().contains("is 286 MiB, more than the 64 MiB"),
            "{e}"
        );
        assert!(
            j.record(&dev("sda"), sched("none"), Lifetime::Persisted)
                .is_err()
        );
        assert_eq!(fs::metadata(j.file()).unwrap().len(), 300_000_000);
    }

    #[test]
    fn a_corrupt_journal_is_reported_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_as(dir.path(), owner(1)).unwrap();
        fs::write(j.file(), "{ not json").unwrap();
        let e = j.entries().unwrap_err();
        assert!(matches!(e, JournalError::Corrupt { .. }), "{e}");
        assert!(
            j.record(&dev("sda"), sched("none"), Lifetime::Persisted)
                .is_err()
        );
        assert_eq!(fs::read_to_string(j.file()).unwrap(), "{ not json");
        // A future version is not guessed at either.
        fs::write(
            j.file(),
            r#"{"format":"disktriage-journal","version":99,"next_id":1,"entries":[]}"#,
        )
        .unwrap();
        assert!(j.entries().unwrap_err().to_string().contains("version 99"));
    }

    #[test]
    fn the_file_is_written_atomically_and_readable_json() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_as(dir.path(), owner(7)).unwrap();
        j.record(
            &dev("nvme0n1"),
            Setting::DriveWriteCache { enabled: true },
            Lifetime::Session,
        )
        .unwrap();
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, [FILE, LOCK], "no temporary file left");
        let doc: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(j.file()).unwrap()).unwrap();
        assert_eq!(doc["format"], "disktriage-journal");
        assert_eq!(
            doc["entries"][0]["original"]["setting"],
            "drive_write_cache"
        );
        assert_eq!(doc["entries"][0]["original"]["enabled"], true);
        assert_eq!(doc["entries"][0]["owner"]["pid"], 7);
        assert_eq!(doc["entries"][0]["lifetime"], "session");
    }

    #[test]
    fn a_symlink_planted_at_the_temporary_name_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_as(dir.path().join("j"), owner(1)).unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        // The name the temporary file used to have: predictable from the pid.
        let planted = j.dir().join(format!("{FILE}.tmp.{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let _ = j.record(&dev("sda"), sched("none"), Lifetime::Persisted);
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert!(fs::symlink_metadata(&planted).unwrap().is_symlink());
    }

    #[test]
    fn a_dangling_lock_symlink_is_refused_and_its_target_not_created() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_as(dir.path().join("j"), owner(1)).unwrap();
        let target = dir.path().join("created-by-the-lock");
        std::os::unix::fs::symlink(&target, j.dir().join(LOCK)).unwrap();
        let e = j
            .record(&dev("sda"), sched("none"), Lifetime::Persisted)
            .unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert!(!target.exists(), "the lock's symlink target was created");
        assert!(j.entries().is_err());
    }

    /// A FIFO planted as the journal or its lock is refused at once, not waited on.
    #[test]
    fn a_fifo_planted_as_the_journal_or_its_lock_never_blocks() {
        for name in [FILE, LOCK] {
            let dir = tempfile::tempdir().unwrap();
            let j = Journal::open_as(dir.path().join("j"), owner(1)).unwrap();
            nix::unistd::mkfifo(&j.dir().join(name), Mode::from_bits_truncate(0o600)).unwrap();
            let (tx, rx) = std::sync::mpsc::channel();
            let jj = j.clone();
            std::thread::spawn(move || {
                let _ = tx.send(jj.entries().map(|e| e.len()).map_err(|e| e.to_string()));
            });
            let got = rx
                .recv_timeout(std::time::Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("{name}: blocked on the FIFO"));
            let e = got.unwrap_err();
            assert!(e.contains("FIFO"), "{name}: {e}");
        }
    }

    #[test]
    fn a_journal_file_that_is_a_symlink_is_not_read_or_replaced_through() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_as(dir.path().join("j"), owner(1)).unwrap();
        let elsewhere = dir.path().join("elsewhere.json");
        fs::write(
            &elsewhere,
            r#"{"format":"disktriage-journal","version":1,"next_id":1,"entries":[]}"#,
        )
        .unwrap();
        std::os::unix::fs::symlink(&elsewhere, j.file()).unwrap();
        let e = j.entries().unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
    }

    #[test]
    fn an_unsafe_journal_directory_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        let e = Journal::open_as(&open, owner(1)).unwrap_err();
        let owner_word = if nix::unistd::geteuid().is_root() {
            "root".to_string()
        } else {
            format!("root or uid {}", nix::unistd::geteuid())
        };
        assert_eq!(
            e.to_string(),
            format!(
                "refusing the journal directory {}: it is writable by others (mode 0777); \
                 it must be owned by {owner_word} and not group/world-writable",
                open.display()
            )
        );
        // Nothing was created in it.
        assert_eq!(fs::read_dir(&open).unwrap().count(), 0);
        // Group-writable is refused too; the existing handle refuses as well.
        fs::set_permissions(&open, fs::Permissions::from_mode(0o770)).unwrap();
        assert!(Journal::open_as(&open, owner(1)).is_err());
        let existing = Journal::existing(&open).unwrap();
        assert!(
            existing
                .entries()
                .unwrap_err()
                .to_string()
                .contains("mode 0770")
        );
        // A symlink to a good directory is refused (its target could be swapped).
        let good = dir.path().join("good");
        fs::create_dir(&good).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&good, &link).unwrap();
        let e = Journal::open_as(&link, owner(1)).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
    }

    #[test]
    fn concurrent_records_from_threads_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let j = Journal::open_as(&path, owner(100 + i)).unwrap();
                    j.record(&dev(&format!("sd{i}")), sched("none"), Lifetime::Session)
                        .unwrap();
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let j = Journal::open_as(&path, owner(1)).unwrap();
        let mut ids: Vec<u64> = j.entries().unwrap().iter().map(|e| e.id).collect();
        ids.sort_unstable();
        assert_eq!(ids, (1..=8).collect::<Vec<_>>());
    }

    mod parser_properties {
        use proptest::prelude::*;

        use super::super::{ParseError, parse};

        /// The journal's own keys and values mixed with arbitrary ones.
        fn jsonish() -> impl Strategy<Value = serde_json::Value> {
            let key = prop_oneof![
                Just("format".to_string()),
                Just("version".to_string()),
                Just("next_id".to_string()),
                Just("entries".to_string()),
                Just("id".to_string()),
                Just("device".to_string()),
                Just("name".to_string()),
                Just("original".to_string()),
                Just("setting".to_string()),
                Just("lifetime".to_string()),
                Just("owner".to_string()),
                Just("pid".to_string()),
                Just("start_time".to_string()),
                Just("recorded_at".to_string()),
                Just("identity".to_string()),
                ".{0,8}",
            ];
            let leaf = prop_oneof![
                Just(serde_json::Value::Null),
                any::<bool>().prop_map(serde_json::Value::from),
                any::<u64>().prop_map(serde_json::Value::from),
                any::<i64>().prop_map(serde_json::Value::from),
                any::<f64>().prop_map(serde_json::Value::from),
                Just(serde_json::Value::from("disktriage-journal")),
                Just(serde_json::Value::from("scheduler")),
                Just(serde_json::Value::from("drive_write_cache")),
                Just(serde_json::Value::from("session")),
                Just(serde_json::Value::from("persisted")),
                Just(serde_json::Value::from("../../tmp/x")),
                ".{0,12}".prop_map(serde_json::Value::from),
            ];
            leaf.prop_recursive(5, 64, 8, move |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
                    prop::collection::btree_map(key.clone(), inner, 0..8)
                        .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
                ]
            })
        }

        /// An entry of the right shape with arbitrary values.
        fn entry_like() -> impl Strategy<Value = serde_json::Value> {
            (
                0u64..8,
                ".{0,12}",
                ".{0,12}",
                any::<bool>(),
                any::<u32>(),
                any::<bool>(),
            )
                .prop_map(|(id, name, sched, session, pid, cache)| {
                    let original = if cache {
                        serde_json::json!({"setting": "drive_write_cache", "enabled": session})
                    } else {
                        serde_json::json!({"setting": "scheduler", "name": sched})
                    };
                    serde_json::json!({
                        "id": id,
                        "device": {"name": name, "dev": null, "serial": null,
                                   "identity": {"diskseq": pid}},
                        "original": original,
                        "lifetime": if session { "session" } else { "persisted" },
                        "owner": {"pid": pid, "start_time": 1},
                        "recorded_at": 0,
                    })
                })
        }

        /// A journal document with the right header and arbitrary entries.
        fn journal_like() -> impl Strategy<Value = serde_json::Value> {
            (
                0u64..10,
                prop::collection::vec(prop_oneof![3 => entry_like(), 1 => jsonish()], 0..4),
                any::<bool>(),
            )
                .prop_map(|(next_id, entries, v1)| {
                    serde_json::json!({
                        "format": "disktriage-journal",
                        "version": if v1 { 1 } else { 2 },
                        "next_id": next_id,
                        "entries": entries,
                    })
                })
        }

        fn typed(e: &ParseError) -> bool {
            matches!(
                e,
                ParseError::Json(_) | ParseError::Format { .. } | ParseError::Inconsistent(_)
            ) && !e.to_string().is_empty()
        }

        proptest! {
            #[test]
            fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
                if let Err(e) = parse(&bytes) {
                    prop_assert!(typed(&e));
                }
            }

            #[test]
            fn arbitrary_json_never_panics(doc in jsonish()) {
                let text = doc.to_string();
                if let Err(e) = parse(text.as_bytes()) {
                    prop_assert!(typed(&e));
                }
            }

            #[test]
            fn journal_shaped_documents_parse_or_are_rejected(doc in journal_like()) {
                let text = doc.to_string();
                match parse(text.as_bytes()) {
                    // What parses has unique ids below next_id and saves back to itself.
                    Ok(file) => {
                        let mut ids: Vec<u64> = file.entries.iter().map(|e| e.id).collect();
                        ids.sort_unstable();
                        ids.dedup();
                        prop_assert_eq!(ids.len(), file.entries.len());
                        prop_assert!(ids.iter().all(|&id| id < file.next_id));
                        let again = serde_json::to_vec(&file).unwrap();
                        prop_assert!(parse(&again).is_ok());
                    }
                    Err(e) => prop_assert!(typed(&e)),
                }
            }
        }
    }
}
