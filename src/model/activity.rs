//! Other processes' I/O on the device under test: what the kernel counted that was not ours,
//! and who did it. Background I/O skews every figure (the seeds send admins to rescue mode
//! for that reason), so a run names it instead of hiding it in its averages. Pure data.

use serde::Serialize;

use super::units::Bytes;

/// A process's I/O counters at one moment (`/proc/PID/io`, on any device).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessIo {
    pub pid: u32,
    pub name: String,
    pub read_bytes: u64,
    pub written_bytes: u64,
}

/// A process with the device open that did I/O in a window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BusyProcess {
    pub pid: u32,
    pub name: String,
    /// Bytes in the window, on any device: a likely author, not proven.
    pub read_bytes: u64,
    pub written_bytes: u64,
}

/// The processes whose counters grew between two snapshots, busiest first.
pub fn busy_between(before: &[ProcessIo], after: &[ProcessIo]) -> Vec<BusyProcess> {
    let mut busy: Vec<BusyProcess> = after
        .iter()
        .filter_map(|a| {
            let b = before.iter().find(|b| b.pid == a.pid && b.name == a.name);
            let (r0, w0) = b.map_or((0, 0), |b| (b.read_bytes, b.written_bytes));
            let read = a.read_bytes.saturating_sub(r0);
            let written = a.written_bytes.saturating_sub(w0);
            (read + written > 0).then(|| BusyProcess {
                pid: a.pid,
                name: a.name.clone(),
                read_bytes: read,
                written_bytes: written,
            })
        })
        .collect();
    busy.sort_by_key(|p| std::cmp::Reverse(p.read_bytes + p.written_bytes));
    busy
}

/// I/O on the device before the run's first phase, by others.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BackgroundIo {
    pub device: String,
    pub window_s: f64,
    pub read_bytes: u64,
    pub written_bytes: u64,
    pub processes: Vec<BusyProcess>,
}

impl BackgroundIo {
    /// "loop3 was busy before the test: 12.6 MiB read ...; the figures will be lower".
    pub fn describe(&self) -> String {
        let who = if self.processes.is_empty() {
            "by no process that has it open (kernel writeback, a journal, or a process \
             through a layer above it)"
                .to_string()
        } else {
            format!("by others ({})", describe_busy(&self.processes))
        };
        format!(
            "{} was busy before the test: {} read, {} written in {:.2} s {who}; the \
             figures will be lower than the drive's",
            self.device,
            Bytes(self.read_bytes).iec(),
            Bytes(self.written_bytes).iec(),
            self.window_s
        )
    }
}

impl BackgroundIo {
    /// The few words a screen line has room for.
    pub fn short(&self) -> String {
        if self.processes.is_empty() {
            format!(
                "busy before the test: {} read, {} written by others",
                Bytes(self.read_bytes).iec(),
                Bytes(self.written_bytes).iec()
            )
        } else {
            format!("busy before the test: {}", describe_busy(&self.processes))
        }
    }
}

/// "dd (pid 812): 12.6 MiB read", at most three named.
pub fn describe_busy(list: &[BusyProcess]) -> String {
    let mut parts: Vec<String> = list
        .iter()
        .take(3)
        .map(|p| {
            let mut what = Vec::new();
            if p.read_bytes > 0 {
                what.push(format!("{} read", Bytes(p.read_bytes).iec()));
            }
            if p.written_bytes > 0 {
                what.push(format!("{} written", Bytes(p.written_bytes).iec()));
            }
            format!(
                "{} (pid {}): {}",
                super::text::neutralize_controls(&p.name),
                p.pid,
                what.join(", ")
            )
        })
        .collect();
    if list.len() > 3 {
        parts.push(format!("{} more", list.len() - 3));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(pid: u32, name: &str, r: u64, w: u64) -> ProcessIo {
        ProcessIo {
            pid,
            name: name.into(),
            read_bytes: r,
            written_bytes: w,
        }
    }

    #[test]
    fn busy_processes_are_those_whose_counters_grew_busiest_first() {
        let before = [
            io(1, "idle", 100, 100),
            io(2, "dd", 0, 0),
            io(3, "gone", 0, 0),
        ];
        let after = [
            io(1, "idle", 100, 100),
            io(2, "dd", 4 << 20, 0),
            io(4, "rsync", 0, 8 << 20),
            // A reused pid is another process: it counts from zero.
            io(3, "new", 1 << 20, 0),
        ];
        let busy = busy_between(&before, &after);
        let names: Vec<&str> = busy.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["rsync", "dd", "new"]);
        assert_eq!(busy[1].read_bytes, 4 << 20);
        assert_eq!(
            describe_busy(&busy),
            "rsync (pid 4): 8.0 MiB written, dd (pid 2): 4.0 MiB read, new (pid 3): 1.0 MiB read"
        );
    }

    #[test]
    fn background_io_names_who_or_says_no_one_has_it_open() {
        let mut b = BackgroundIo {
            device: "loop3".into(),
            window_s: 0.2,
            read_bytes: 3 << 20,
            written_bytes: 0,
            processes: vec![BusyProcess {
                pid: 812,
                name: "dd\x1b[2J".into(),
                read_bytes: 3 << 20,
                written_bytes: 0,
            }],
        };
        let text = b.describe();
        assert!(
            text.starts_with("loop3 was busy before the test: 3.0 MiB read"),
            "{text}"
        );
        assert!(text.contains("dd"), "{text}");
        assert!(
            !text.contains('\x1b'),
            "control characters reach the screen: {text}"
        );
        b.processes.clear();
        assert!(b.describe().contains("by no process that has it open"));
    }
}
