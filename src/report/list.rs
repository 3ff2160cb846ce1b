//! `disktriage list`: the inventory as an 80-column table or as JSON with every field.

use serde::Serialize;

use super::table::{self, Column};
use crate::model::{BlockDevice, InUse, Inventory, KernelWriteCache, LoopLink, Partition};

/// Version of the JSON layout; bumped only when a key changes meaning or disappears.
pub const LIST_JSON_SCHEMA: u32 = 1;

const COLUMNS: [Column; 8] = [
    Column::left("DEVICE"),
    Column::left("MODEL").shrink_to(8, 0),
    Column::right("SIZE"),
    Column::left("TRAN"),
    Column::left("TYPE"),
    Column::left("SCHED"),
    Column::left("WCACHE"),
    Column::left("IN USE").shrink_to(8, 1),
];

fn or_unknown(v: Option<String>) -> String {
    v.unwrap_or_else(|| "?".to_string())
}

/// The short in-use cell: the first reason in few words, "+N" when there are more.
fn usage_cell(owner: &str, reasons: &[InUse]) -> String {
    let Some(first) = reasons.first() else {
        return String::new();
    };
    let text = match first {
        InUse::Mounted {
            device,
            mount_point,
            ..
        } if device == owner => format!("mounted {mount_point}"),
        InUse::Swap { device } if device == owner => "swap".to_string(),
        InUse::Held { device, holder } if device == owner => {
            format!("held {}", holder.label.as_deref().unwrap_or(&holder.name))
        }
        InUse::Loop {
            device,
            link,
            other,
            ..
        } if device == owner => match link {
            LoopLink::BackedBy => format!("on {other}"),
            LoopLink::Backs => format!("backs {other}"),
            LoopLink::SharesFile => format!("shares {other}"),
            _ => format!("via {other}"),
        },
        other => format!("via {}", other.device()),
    };
    if reasons.len() > 1 {
        format!("{text} +{}", reasons.len() - 1)
    } else {
        text
    }
}

fn device_row(d: &BlockDevice) -> Vec<String> {
    let sched = match &d.scheduler {
        Some(s) => s.active.clone().unwrap_or_else(|| "-".to_string()),
        None => "?".to_string(),
    };
    vec![
        d.name.clone(),
        d.description().unwrap_or_default(),
        or_unknown(d.size_bytes.map(|b| b.iec())),
        d.transport.to_string(),
        d.media_label().to_string(),
        sched,
        KernelWriteCache::short_or_unknown(d.kernel_write_cache).to_string(),
        usage_cell(&d.name, &d.in_use),
    ]
}

fn partition_row(parent: &BlockDevice, p: &Partition, last: bool) -> Vec<String> {
    let own: Vec<InUse> = parent
        .in_use
        .iter()
        .filter(|u| u.device() == p.name)
        .cloned()
        .collect();
    vec![
        format!("{}{}", if last { "`-" } else { "|-" }, p.name),
        String::new(),
        or_unknown(p.size_bytes.map(|b| b.iec())),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        usage_cell(&p.name, &own),
    ]
}

/// The table `list` prints, fitted to `width`, with footnotes for hidden devices and what the
/// inventory could not check.
pub fn render_table(inv: &Inventory, show_all: bool, width: usize) -> String {
    let mut rows = Vec::new();
    for d in inv.visible(show_all) {
        rows.push(device_row(d));
        for (i, p) in d.partitions.iter().enumerate() {
            rows.push(partition_row(d, p, i + 1 == d.partitions.len()));
        }
    }
    let mut out = if rows.is_empty() {
        "No block devices found.\n".to_string()
    } else {
        table::render(&COLUMNS, &rows, width)
    };

    // Zoned or shingled media, one line each: the table has no room for a column.
    for d in inv.visible(show_all) {
        if let Some((label, words)) = d.zoning.words() {
            out.push_str(&format!("{}: {label}: {words}\n", d.name));
        }
    }
    let hidden = inv.devices.len() - inv.visible(show_all).count();
    if hidden > 0 {
        out.push_str(&format!(
            "{hidden} unused loop/zram device{} hidden (--all shows them).\n",
            if hidden == 1 { "" } else { "s" }
        ));
    }
    let needs_root = inv
        .visible(show_all)
        .any(|d| d.notes.iter().any(|n| n.contains("needs root")));
    if needs_root {
        out.push_str("Some fields could not be read without root: run as root to see them.\n");
    }
    for note in &inv.notes {
        out.push_str(&format!("Note: {note}\n"));
    }
    out
}

#[derive(Serialize)]
struct ListJson<'a> {
    schema: u32,
    usage_complete: bool,
    notes: &'a [String],
    hidden: usize,
    devices: Vec<DeviceJson<'a>>,
}

#[derive(Serialize)]
struct DeviceJson<'a> {
    #[serde(flatten)]
    device: &'a BlockDevice,
    in_use_summary: String,
    placeholder: bool,
}

/// Every field of every visible device, sizes in bytes, keys stable (see `LIST_JSON_SCHEMA`).
pub fn render_json(inv: &Inventory, show_all: bool) -> anyhow::Result<String> {
    let devices: Vec<DeviceJson> = inv
        .visible(show_all)
        .map(|d| DeviceJson {
            device: d,
            in_use_summary: d.usage_summary(),
            placeholder: d.is_placeholder(),
        })
        .collect();
    let doc = ListJson {
        schema: LIST_JSON_SCHEMA,
        usage_complete: inv.usage_complete,
        notes: &inv.notes,
        hidden: inv.devices.len() - devices.len(),
        devices,
    };
    let mut text = serde_json::to_string_pretty(&doc)?;
    text.push('\n');
    Ok(text)
}
