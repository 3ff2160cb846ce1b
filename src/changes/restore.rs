//! Putting originals back: `Changer::restore` (a session's changes on exit, everything for
//! `disktriage restore`, a killed session's orphans) and `Changer::orphans`, by the rule in
//! the parent module's docs. One pass over the journal under its lock. `All` reads each device
//! once and writes each setting at most once; a session's restore reads the setting before
//! each of its entries and writes only where the value is still its own.

use std::collections::{HashMap, HashSet};

use super::{ChangeError, Changer, RestoreOutcome, RestoreResult, RestoreScope};
use crate::model::{
    BlockDevice, DeviceId, JournalEntry, Lifetime, Owner, Setting, SettingKind, is_kernel_name,
};
use crate::sys::{DriveError, process};

impl Changer {
    /// Session entries of a disktriage that is gone.
    pub fn orphans(&self) -> Result<Vec<JournalEntry>, ChangeError> {
        let me = self.journal.owner();
        let j = self.journal.lock()?;
        let mut alive = Liveness::default();
        Ok(j.entries()
            .iter()
            .filter(|e| e.lifetime == Lifetime::Session && e.owner != me && !alive.of(&e.owner))
            .cloned()
            .collect())
    }

    /// Puts back the recorded originals in `scope` (the rule: module docs), reading each back,
    /// in one pass under the journal's lock. Restored, already original or gone entries leave
    /// the journal; failed and skipped ones stay. Newest settings first.
    pub fn restore(&self, scope: RestoreScope) -> Result<Vec<RestoreOutcome>, ChangeError> {
        let mut j = self.journal.lock()?;
        let me = self.journal.owner();
        let mut alive = Liveness::default();
        let mut index: HashMap<(&str, SettingKind), usize> = HashMap::new();
        let mut groups: Vec<Vec<JournalEntry>> = Vec::new();
        for e in j.entries() {
            let key = (e.device.name.as_str(), e.original.kind());
            let i = *index.entry(key).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[i].push(e.clone());
        }
        drop(index);
        groups.sort_by_key(|g| std::cmp::Reverse(g.iter().map(|e| e.id).max()));

        let mut run = RestoreRun::default();
        for group in &groups {
            let selected: Vec<&JournalEntry> = group
                .iter()
                .filter(|e| match scope {
                    RestoreScope::Mine => {
                        e.owner == me
                            && e.lifetime == Lifetime::Session
                            && self.only.as_ref().is_none_or(|(name, kind)| {
                                e.device.name == *name && e.original.kind() == *kind
                            })
                    }
                    RestoreScope::All { .. } => true,
                    RestoreScope::Orphans => {
                        e.lifetime == Lifetime::Session && e.owner != me && !alive.of(&e.owner)
                    }
                })
                .collect();
            if selected.is_empty() {
                continue;
            }
            self.restore_group(group, &selected, scope, me, &mut alive, &mut run);
        }
        // One pass over the journal for every removal and hand-over, one write.
        j.remove_where(|e| run.gone.contains(&e.id));
        j.hand_over(&run.handed);
        if (!run.gone.is_empty() || !run.handed.is_empty())
            && let Err(e) = j.save()
        {
            for (o, removed) in run.outcomes.iter_mut().zip(&run.removes) {
                if *removed {
                    o.result = RestoreResult::Failed {
                        error: format!("done on the device, but the journal still lists it: {e}"),
                    };
                }
            }
        }
        Ok(run.outcomes)
    }

    /// One device's setting: the checks, then the scope's rule.
    fn restore_group(
        &self,
        group: &[JournalEntry],
        selected: &[&JournalEntry],
        scope: RestoreScope,
        me: Owner,
        alive: &mut Liveness,
        run: &mut RestoreRun,
    ) {
        let Some(dev) = self.group_device(selected, run) else {
            return;
        };
        let current_id = self.identify(&dev);
        let selected_ids: HashSet<u64> = selected.iter().map(|e| e.id).collect();
        let Some(chain) = Chain::of(&dev, group, &selected_ids, &current_id, run) else {
            return;
        };
        match scope {
            RestoreScope::All { force } => self.restore_all(chain, force, me, alive, run),
            RestoreScope::Mine | RestoreScope::Orphans => {
                self.restore_sessions(&chain, &selected_ids, scope, run);
            }
        }
    }

    /// The device now under the group's name. `None`, its outcome pushed, when the name is not
    /// a kernel name, the device is gone (the selected entries leave) or cannot be read.
    fn group_device(
        &self,
        selected: &[&JournalEntry],
        run: &mut RestoreRun,
    ) -> Option<BlockDevice> {
        let first = selected[0];
        let name = &first.device.name;
        if !is_kernel_name(name) {
            run.push(
                first,
                RestoreResult::Failed {
                    error: format!(
                        "refused: {name:?} is not a kernel device name (no '/', no '..', no \
                         control characters); remove the entry from the journal by hand"
                    ),
                },
                None,
            );
            return None;
        }
        match self.drives.device(name) {
            Ok(dev) => Some(dev),
            Err(DriveError::NoDevice(_)) => {
                run.gone.extend(selected.iter().map(|e| e.id));
                run.push_removed(
                    first,
                    RestoreResult::Dropped {
                        reason: format!(
                            "{name} is gone (a device that comes back starts with its defaults)"
                        ),
                    },
                );
                None
            }
            Err(e) => {
                run.push(
                    first,
                    RestoreResult::Failed {
                        error: e.to_string(),
                    },
                    None,
                );
                None
            }
        }
    }

    /// `RestoreScope::All`: the chain's first original written once for every entry, unless
    /// a running disktriage's entry is in it and not `force`.
    fn restore_all(
        &self,
        chain: Chain,
        force: bool,
        me: Owner,
        alive: &mut Liveness,
        run: &mut RestoreRun,
    ) {
        if !force
            && let Some(live) = chain
                .entries
                .iter()
                .find(|e| e.lifetime == Lifetime::Session && e.owner != me && alive.of(&e.owner))
        {
            run.push(
                chain.entries[0],
                RestoreResult::Skipped {
                    reason: format!(
                        "disktriage (pid {}) is still running and restores it when it \
                         exits (--force to restore now)",
                        live.owner.pid
                    ),
                },
                None,
            );
            return;
        }
        let result = self.put_back(chain.dev, chain.kind, &chain.entries[0].original);
        if leaves(&result) {
            run.gone.extend(chain.entries.iter().map(|e| e.id));
            let note = matches!(result, RestoreResult::Restored { .. })
                .then_some(chain.unknown_identity)
                .flatten();
            run.push_removed_with(chain.entries[0], result, note);
        } else {
            run.push(chain.entries[0], result, None);
        }
    }

    /// `RestoreScope::Mine` and `Orphans`: the selected entries newest first, each put back to
    /// what it found (the first one: the original), or handed to `disktriage restore` when the
    /// setting was changed after it by someone else.
    fn restore_sessions(
        &self,
        chain: &Chain,
        selected_ids: &HashSet<u64>,
        scope: RestoreScope,
        run: &mut RestoreRun,
    ) {
        let (dev, kind) = (chain.dev, chain.kind);
        let entries = &chain.entries;
        let mut removed: HashSet<u64> = HashSet::new();
        for pos in (0..entries.len()).rev() {
            let mine = entries[pos];
            if !selected_ids.contains(&mine.id) {
                continue;
            }
            let later = entries[pos + 1..].iter().any(|e| !removed.contains(&e.id));
            let target = if pos > 0 {
                mine.found()
            } else {
                &mine.original
            };
            let current = match self.current(dev, kind) {
                Ok(current) => current,
                Err(e) => {
                    run.push(
                        mine,
                        RestoreResult::Failed {
                            error: e.to_string(),
                        },
                        None,
                    );
                    continue;
                }
            };
            let changed_since = mine.set_to.as_ref().is_some_and(|s| *s != current);
            if current != *target && (later || changed_since) {
                // Changed after this session: leave it, hand it to `restore`.
                run.handed.insert(mine.id);
                run.push(
                    mine,
                    RestoreResult::Skipped {
                        reason: changed_after(scope, mine, &current),
                    },
                    None,
                );
                continue;
            }
            let result = if current == *target {
                RestoreResult::AlreadyOriginal
            } else {
                self.put_back(dev, kind, target)
            };
            if leaves(&result) {
                run.gone.insert(mine.id);
                removed.insert(mine.id);
                let note = matches!(result, RestoreResult::Restored { .. })
                    .then(|| chain.unknown_identity.clone())
                    .flatten();
                run.push_removed_with(mine, result, note);
            } else {
                run.push(mine, result, None);
            }
        }
    }

    /// Writes `target` unless the device has it already, and reads it back.
    fn put_back(&self, dev: &BlockDevice, kind: SettingKind, target: &Setting) -> RestoreResult {
        let was = match self.current(dev, kind) {
            Ok(now) if now == *target => return RestoreResult::AlreadyOriginal,
            Ok(now) => now.value(),
            Err(e) => {
                return RestoreResult::Failed {
                    error: e.to_string(),
                };
            }
        };
        if let Err(e) = self.apply(dev, target) {
            return RestoreResult::Failed {
                error: e.to_string(),
            };
        }
        match self.current(dev, kind) {
            Ok(now) if now == *target => RestoreResult::Restored {
                was,
                now: now.value(),
            },
            Ok(now) => RestoreResult::Failed {
                error: format!(
                    "wrote {}, the device reports {}",
                    target.value(),
                    now.value()
                ),
            },
            Err(e) => RestoreResult::Failed {
                error: format!("restored, but reading back failed: {e}"),
            },
        }
    }
}

/// True when the outcome takes the entry out of the journal.
fn leaves(result: &RestoreResult) -> bool {
    matches!(
        result,
        RestoreResult::Restored { .. }
            | RestoreResult::AlreadyOriginal
            | RestoreResult::Dropped { .. }
    )
}

/// Why a session's entry is left in the journal: the setting was changed after the session
/// by someone else.
fn changed_after(scope: RestoreScope, mine: &JournalEntry, current: &Setting) -> String {
    let who = match scope {
        RestoreScope::Mine => "this session".to_string(),
        _ => format!("disktriage pid {}", mine.owner.pid),
    };
    let set = mine
        .set_to
        .as_ref()
        .map(|s| format!(" ({who} set {})", s.value()))
        .unwrap_or_default();
    format!(
        "it is {} now, set after {who} by someone else{set}; the \
         original ({}) stays recorded for `disktriage restore`",
        current.value(),
        mine.original.value()
    )
}

/// One device's setting: the group's entries made on the device now under the name, in the
/// journal's order.
struct Chain<'a> {
    dev: &'a BlockDevice,
    entries: Vec<&'a JournalEntry>,
    kind: SettingKind,
    /// The note on a restore when the first entry was recorded without a device identity.
    unknown_identity: Option<String>,
}

impl<'a> Chain<'a> {
    /// The chain of `group` on `dev`. A selected entry of another device that had this name
    /// leaves the journal (that device is gone). `None` when no entry is of this device.
    fn of(
        dev: &'a BlockDevice,
        group: &'a [JournalEntry],
        selected_ids: &HashSet<u64>,
        current_id: &DeviceId,
        run: &mut RestoreRun,
    ) -> Option<Chain<'a>> {
        // Entries of another device that had this name: it is gone.
        let mut chain: Vec<&JournalEntry> = Vec::new();
        for e in group {
            match e.device.mismatch(current_id) {
                Some(reason) if selected_ids.contains(&e.id) => {
                    run.gone.insert(e.id);
                    run.push_removed(
                        e,
                        RestoreResult::Dropped {
                            reason: format!("{reason}: not the device that was changed"),
                        },
                    );
                }
                Some(_) => {}
                None => chain.push(e),
            }
        }
        if chain.is_empty() {
            return None;
        }
        let unknown_identity = chain[0].device.identity.is_unknown().then(|| {
            "recorded without a device identity (an older journal, or a kernel without \
             diskseq): restored on the name, device number and serial alone"
                .to_string()
        });
        let kind = chain[0].original.kind();
        Some(Chain {
            dev,
            entries: chain,
            kind,
            unknown_identity,
        })
    }
}

/// Whether owners are alive, each asked once.
#[derive(Default)]
struct Liveness(HashMap<Owner, bool>);

impl Liveness {
    fn of(&mut self, owner: &Owner) -> bool {
        *self
            .0
            .entry(*owner)
            .or_insert_with(|| process::is_alive(owner))
    }
}

/// One `restore`'s outcomes, and which removed entries.
#[derive(Default)]
struct RestoreRun {
    outcomes: Vec<RestoreOutcome>,
    removes: Vec<bool>,
    /// Entries that leave the journal.
    gone: HashSet<u64>,
    /// Session entries handed to `disktriage restore`.
    handed: HashSet<u64>,
}

impl RestoreRun {
    fn push(&mut self, entry: &JournalEntry, result: RestoreResult, note: Option<String>) {
        self.outcomes.push(RestoreOutcome {
            entry: entry.clone(),
            result,
            note,
        });
        self.removes.push(false);
    }

    fn push_removed(&mut self, entry: &JournalEntry, result: RestoreResult) {
        self.push_removed_with(entry, result, None);
    }

    fn push_removed_with(
        &mut self,
        entry: &JournalEntry,
        result: RestoreResult,
        note: Option<String>,
    ) {
        self.push(entry, result, note);
        if let Some(last) = self.removes.last_mut() {
            *last = true;
        }
    }
}
