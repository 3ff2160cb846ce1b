//! What `disktriage cache` prints: the drive's own write cache as it reports it, the kernel's
//! flush policy on its own line, and a line when they disagree.

use std::path::Path;

use serde::Serialize;

use super::table::wrap;
use crate::changes::CacheChange;
use crate::model::cache::on_off;
use crate::model::{CacheStatus, KernelWriteCache};

/// Version of the JSON layout.
pub const CACHE_JSON_SCHEMA: u32 = 1;

fn kernel_line(k: Option<KernelWriteCache>) -> String {
    match k {
        // The label says whose policy it is: "sends" is the kernel.
        Some(k @ KernelWriteCache::WriteBack) => format!("{k} (sends flushes; queue/write_cache)"),
        Some(k @ KernelWriteCache::WriteThrough) => {
            format!("{k} (sends no flushes; queue/write_cache)")
        }
        None => "unknown (queue/write_cache unreadable)".into(),
    }
}

fn status_lines(status: &CacheStatus, read_back: bool, width: usize) -> String {
    let drive = match (&status.drive, &status.drive_unavailable) {
        (Some(d), _) => format!(
            "{} ({} the drive: {})",
            d.state_label(),
            if read_back {
                "read back from"
            } else {
                "reported by"
            },
            d.source
        ),
        (None, Some(why)) => why.clone(),
        (None, None) => "unknown".into(),
    };
    let mut out = wrap("  Drive write cache    ", &drive, width);
    out.push_str(&wrap(
        "  Kernel flush policy  ",
        &kernel_line(status.kernel_flush_policy),
        width,
    ));
    if let Some(d) = &status.drive
        && d.enabled.is_some()
        && !d.changeable
    {
        out.push_str(&wrap(
            "  Fixed: ",
            &format!(
                "the drive does not let the host switch its cache ({}).",
                d.fixed_reason.as_deref().unwrap_or("no reason given")
            ),
            width,
        ));
    }
    if let Some(text) = &status.disagreement {
        out.push_str(&wrap("  Disagreement: ", &format!("{text}."), width));
    }
    out
}

fn header(status: &CacheStatus, partition: Option<&str>) -> String {
    match partition {
        Some(p) => format!(
            "{p} is a partition: the cache belongs to its disk {}.\n",
            status.device
        ),
        None => String::new(),
    }
}

/// `disktriage cache DEV`.
pub fn render_status(status: &CacheStatus, partition: Option<&str>, width: usize) -> String {
    let mut out = header(status, partition);
    out.push_str(&format!("{} ({})\n", status.device, status.transport));
    out.push_str(&status_lines(status, false, width));
    out
}

/// `disktriage cache DEV on|off`.
pub fn render_change(
    change: &CacheChange,
    status: &CacheStatus,
    partition: Option<&str>,
    journal_dir: &Path,
    width: usize,
) -> String {
    let mut out = header(status, partition);
    let want = on_off(change.requested);
    let first = if change.before.enabled == Some(change.requested) {
        format!(
            "{}: the drive's write cache is already {want}; nothing changed.",
            change.device
        )
    } else if change.took_effect() {
        format!("{}: drive write cache turned {want}.", change.device)
    } else {
        format!(
            "{}: asked for {want}, but the drive reports {}.",
            change.device,
            change.after.state_label()
        )
    };
    out.push_str(&wrap("", &first, width));
    out.push_str(&status_lines(status, true, width));
    out.push_str(&super::change_footer(
        &change.journal,
        &change.notes,
        journal_dir,
        width,
    ));
    out
}

#[derive(Serialize)]
struct CacheJson<'a> {
    schema: u32,
    partition: Option<&'a str>,
    #[serde(flatten)]
    status: &'a CacheStatus,
    change: Option<&'a CacheChange>,
}

pub fn render_json(
    status: &CacheStatus,
    change: Option<&CacheChange>,
    partition: Option<&str>,
) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(&CacheJson {
        schema: CACHE_JSON_SCHEMA,
        partition,
        status,
        change,
    })?;
    text.push('\n');
    Ok(text)
}
