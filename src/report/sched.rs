//! What `disktriage sched` prints: the active I/O scheduler, the offered ones, and after a
//! switch what the kernel reports as active.

use std::path::Path;

use serde::Serialize;

use super::table::wrap;
use crate::changes::SchedChange;
use crate::model::SchedulerSet;
use crate::model::text::neutralize_controls;
use crate::persist::{Persisted, RuleScope};

/// Version of the JSON layout.
pub const SCHED_JSON_SCHEMA: u32 = 1;

fn offered(set: &SchedulerSet) -> String {
    set.available
        .iter()
        .map(|s| {
            if set.active.as_deref() == Some(s.as_str()) {
                format!("[{s}]")
            } else {
                s.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn partition_line(device: &str, partition: Option<&str>) -> String {
    partition
        .map(|p| format!("{p} is a partition: the scheduler belongs to its disk {device}.\n"))
        .unwrap_or_default()
}

/// `disktriage sched DEV`.
pub fn render_status(device: &str, set: &SchedulerSet, partition: Option<&str>) -> String {
    let mut out = partition_line(device, partition);
    match &set.active {
        Some(active) => out.push_str(&format!(
            "{device}: I/O scheduler {active} (offered: {})\n",
            offered(set)
        )),
        None => out.push_str(&format!("{device}: no I/O scheduler applies\n")),
    }
    out
}

/// `disktriage sched DEV NAME`.
pub fn render_change(
    change: &SchedChange,
    partition: Option<&str>,
    journal_dir: &Path,
    width: usize,
) -> String {
    let mut out = partition_line(&change.device, partition);
    let active = change.after.active.as_deref().unwrap_or("none");
    let first = if change.before.active.as_deref() == Some(change.requested.as_str()) {
        format!(
            "{}: I/O scheduler is already {}; nothing changed.",
            change.device, change.requested
        )
    } else if change.took_effect() {
        format!(
            "{}: I/O scheduler switched to {active} (read back).",
            change.device
        )
    } else {
        format!(
            "{}: asked for {}, but the kernel reports {active} active.",
            change.device, change.requested
        )
    };
    out.push_str(&wrap("", &first, width));
    out.push_str(&wrap("  Offered: ", &offered(&change.after), width));
    out.push_str(&super::change_footer(
        &change.journal,
        &change.notes,
        journal_dir,
        width,
    ));
    out
}

#[derive(Serialize)]
struct SchedJson<'a> {
    schema: u32,
    device: &'a str,
    partition: Option<&'a str>,
    scheduler: &'a SchedulerSet,
    change: Option<&'a SchedChange>,
}

pub fn render_json(
    device: &str,
    set: &SchedulerSet,
    change: Option<&SchedChange>,
    partition: Option<&str>,
) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(&SchedJson {
        schema: SCHED_JSON_SCHEMA,
        device,
        partition,
        scheduler: set,
        change,
    })?;
    text.push('\n');
    Ok(text)
}

/// Whom a rule applies to, in words: "the disk with wwid \"naa.5000...\"", "every rotational
/// disk".
pub fn rule_scope_words(scope: &RuleScope) -> String {
    match scope {
        RuleScope::Disk { identity } => format!("the disk with {identity}"),
        RuleScope::Class { rotational: true } => "every rotational disk".into(),
        RuleScope::Class { rotational: false } => "every non-rotational disk".into(),
    }
}

/// `disktriage sched DEV NAME --persist`: where the rule went (or would), the rule, and that
/// the running scheduler is unchanged.
pub fn render_persist(done: &Persisted, partition: Option<&str>, width: usize) -> String {
    let rule = &done.rule;
    let mut out = partition_line(&rule.device, partition);
    let path = neutralize_controls(&done.path.display().to_string());
    out.push_str(&if done.written {
        format!("Wrote {path}:\n")
    } else {
        format!("Would write {path} (--dry-run: nothing written):\n")
    });
    for line in rule.text.lines() {
        out.push_str(&format!("  {line}\n"));
    }
    // The identity is in the rule above, exactly; wrapped prose would squeeze its spaces.
    let whom = match &rule.scope {
        RuleScope::Disk { identity } => format!("this disk (matched by its {})", identity.kind()),
        scope => rule_scope_words(scope),
    };
    out.push_str(&wrap(
        "",
        &format!(
            "It sets {} on {whom} whenever it appears (at boot, on hotplug). The running \
             scheduler of {} is unchanged ({}); to apply the rule now: udevadm trigger \
             --action=change --sysname-match={}",
            rule.scheduler,
            rule.device,
            done.active_now.as_deref().unwrap_or("none"),
            rule.device,
        ),
        width,
    ));
    out
}

#[derive(Serialize)]
struct PersistJson<'a> {
    schema: u32,
    partition: Option<&'a str>,
    #[serde(flatten)]
    persisted: &'a Persisted,
}

pub fn render_persist_json(done: &Persisted, partition: Option<&str>) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(&PersistJson {
        schema: SCHED_JSON_SCHEMA,
        partition,
        persisted: done,
    })?;
    text.push('\n');
    Ok(text)
}
