//! The change journal: one JSON file (`journal.json`) in a directory (`/run/disktriage` by
//! default, a tmpfs, so a reboot, which resets every setting recorded here, also empties it).
//!
//! Every operation locks `journal.lock` with flock(2), reads the file, changes it and writes it
//! back atomically (a temporary file, fsync, rename), so single-shot commands, a long-lived
//! session and `disktriage restore` can share it. An empty journal is no file at all. A
//! journal that cannot be parsed is never overwritten: it may hold the only record of an
//! original setting.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};

use crate::model::{DeviceId, JournalEntry, Lifetime, Owner, Setting, SettingKind};
use crate::sys::process;
use crate::sys::sysfs::describe_io_error;

/// The file's format marker and version.
const FORMAT: &str = "disktriage-journal";
const VERSION: u32 = 1;
const FILE: &str = "journal.json";
const LOCK: &str = "journal.lock";

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The message already says what the io::Error says (as "needs root" for EACCES), so the
    /// error is kept as a field, not as a source that would be printed twice.
    #[error("change journal: {op} {}: {}", path.display(), describe_io_error(error))]
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
    Corrupt { path: PathBuf, problem: String },
}

impl JournalError {
    fn io(op: &'static str, path: &Path, error: io::Error) -> Self {
        JournalError::Io {
            op,
            path: path.to_path_buf(),
            error,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct JournalFile {
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

/// An entry as `record` left it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub entry: JournalEntry,
    /// True when an earlier entry for the same setting already held the original: the first
    /// original is what gets restored, so it was kept and nothing new was written.
    pub existing: bool,
}

/// A handle on the journal directory, acting for one owner (this process).
#[derive(Debug, Clone)]
pub struct Journal {
    dir: PathBuf,
    owner: Owner,
}

impl Journal {
    /// Opens (creating, mode 0700) the journal directory, acting as this process.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Journal, JournalError> {
        Journal::open_as(dir, process::current_owner())
    }

    /// Opens the journal acting as another owner (tests simulate other processes).
    pub fn open_as(dir: impl Into<PathBuf>, owner: Owner) -> Result<Journal, JournalError> {
        let dir = dir.into();
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| JournalError::io("create", &dir, e))?;
        Ok(Journal { dir, owner })
    }

    /// Opens the journal only if its directory exists (queries must not create it).
    pub fn existing(dir: impl Into<PathBuf>) -> Option<Journal> {
        let dir = dir.into();
        dir.is_dir().then(|| Journal {
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

    fn lock(&self) -> Result<Flock<File>, JournalError> {
        let path = self.dir.join(LOCK);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| JournalError::io("open", &path, e))?;
        Flock::lock(file, FlockArg::LockExclusive)
            .map_err(|(_, errno)| JournalError::io("lock", &path, io::Error::from(errno)))
    }

    fn load(&self) -> Result<JournalFile, JournalError> {
        let path = self.file();
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(JournalFile::default()),
            Err(e) => return Err(JournalError::io("read", &path, e)),
        };
        let file: JournalFile = serde_json::from_str(&text).map_err(|e| JournalError::Corrupt {
            path: path.clone(),
            problem: e.to_string(),
        })?;
        if file.format != FORMAT || file.version != VERSION {
            return Err(JournalError::Corrupt {
                path,
                problem: format!(
                    "format {:?} version {}, expected {FORMAT:?} version {VERSION}",
                    file.format, file.version
                ),
            });
        }
        Ok(file)
    }

    /// Writes atomically: a temporary file beside it, fsync, rename. No entries, no file.
    fn save(&self, file: &JournalFile) -> Result<(), JournalError> {
        let path = self.file();
        if file.entries.is_empty() {
            return match fs::remove_file(&path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    Err(JournalError::io("remove", &path, e))
                }
                _ => Ok(()),
            };
        }
        let tmp = self.dir.join(format!("{FILE}.tmp.{}", std::process::id()));
        let mut text = serde_json::to_string_pretty(file).map_err(|e| JournalError::Corrupt {
            path: tmp.clone(),
            problem: e.to_string(),
        })?;
        text.push('\n');
        let write = || -> io::Result<()> {
            let mut f = OpenOptions::new()
                .create(true)
                .truncate(true)
                .write(true)
                .mode(0o600)
                .open(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()
        };
        write().map_err(|e| JournalError::io("write", &tmp, e))?;
        fs::rename(&tmp, &path).map_err(|e| JournalError::io("rename", &path, e))?;
        // The rename is durable only once the directory is synced; a tmpfs ignores it.
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    /// Runs `f` on the journal under the lock and saves when it says it changed something.
    fn update<T>(&self, f: impl FnOnce(&mut JournalFile) -> (T, bool)) -> Result<T, JournalError> {
        let _lock = self.lock()?;
        let mut file = self.load()?;
        let (out, changed) = f(&mut file);
        if changed {
            self.save(&file)?;
        }
        Ok(out)
    }

    /// Every entry, oldest first.
    pub fn entries(&self) -> Result<Vec<JournalEntry>, JournalError> {
        let _lock = self.lock()?;
        Ok(self.load()?.entries)
    }

    /// Records `original` as the value to put back, BEFORE the change is made. If the same
    /// setting of the same device is already recorded for this owner (a session) or as
    /// persisted (single-shot commands), that entry, holding the first original, is kept.
    pub fn record(
        &self,
        device: &DeviceId,
        original: Setting,
        lifetime: Lifetime,
    ) -> Result<Recorded, JournalError> {
        let owner = self.owner;
        self.update(|file| {
            let kind = original.kind();
            let same = file.entries.iter().find(|e| {
                e.device.name == device.name
                    && e.original.kind() == kind
                    && e.lifetime == lifetime
                    && (lifetime == Lifetime::Persisted || e.owner == owner)
            });
            if let Some(e) = same {
                return (
                    Recorded {
                        entry: e.clone(),
                        existing: true,
                    },
                    false,
                );
            }
            let entry = JournalEntry {
                id: file.next_id,
                device: device.clone(),
                original,
                lifetime,
                owner,
                recorded_at: SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0),
            };
            file.next_id += 1;
            file.entries.push(entry.clone());
            (
                Recorded {
                    entry,
                    existing: false,
                },
                true,
            )
        })
    }

    /// Removes one entry (restored, or kept by the admin). `None` when it was not there.
    pub fn remove(&self, id: u64) -> Result<Option<JournalEntry>, JournalError> {
        self.update(|file| match file.entries.iter().position(|e| e.id == id) {
            Some(i) => (Some(file.entries.remove(i)), true),
            None => (None, false),
        })
    }

    /// Removes the persisted entries for one setting of one device: `--keep` makes the new
    /// value the one to keep, so an older original must not be restored over it.
    pub fn remove_persisted(
        &self,
        device: &str,
        kind: SettingKind,
    ) -> Result<Vec<JournalEntry>, JournalError> {
        self.update(|file| {
            let (gone, stay): (Vec<_>, Vec<_>) = std::mem::take(&mut file.entries)
                .into_iter()
                .partition(|e| {
                    e.device.name == device
                        && e.original.kind() == kind
                        && e.lifetime == Lifetime::Persisted
                });
            file.entries = stay;
            let changed = !gone.is_empty();
            (gone, changed)
        })
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
        // Another process's persisted change of the same setting shares the entry too.
        let other = Journal::open_as(dir.path().join("j"), owner(2)).unwrap();
        assert!(
            other
                .record(&dev("sda"), sched("kyber"), Lifetime::Persisted)
                .unwrap()
                .existing
        );
        // A session's change of it gets its own entry (what the session found).
        let s = other
            .record(&dev("sda"), sched("bfq"), Lifetime::Session)
            .unwrap();
        assert!(!s.existing);
        assert_eq!(j.entries().unwrap().len(), 2);

        assert_eq!(j.remove(a.entry.id).unwrap().unwrap().id, a.entry.id);
        assert_eq!(j.remove(a.entry.id).unwrap(), None);
        j.remove(s.entry.id).unwrap();
        assert!(!j.file().exists());
    }

    #[test]
    fn keep_drops_persisted_originals_only() {
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
        let gone = j.remove_persisted("sda", SettingKind::Scheduler).unwrap();
        assert_eq!(gone.len(), 1);
        let left: Vec<_> = j
            .entries()
            .unwrap()
            .into_iter()
            .map(|e| e.lifetime)
            .collect();
        assert_eq!(left, [Lifetime::Session, Lifetime::Persisted]);
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
        let names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert!(
            !names.iter().any(|n| n.contains(".tmp.")),
            "no temporary file left: {names:?}"
        );
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
}
