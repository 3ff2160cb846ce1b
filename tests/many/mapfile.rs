//! A scan resumed from a dying disk's mapfile of millions of regions (root): read a line at a
//! time and saved as written, not held as text beside its map.

use std::fs;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::{self, LoopDev, root_or_skip};

/// The peak resident memory (VmHWM, KiB) a running process reached, read from /proc until it
/// exits; the last reading.
fn peak_rss_kib(child: &mut std::process::Child) -> u64 {
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        if let Ok(text) = fs::read_to_string(&status)
            && let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kib);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    peak
}

#[test]
fn a_mapfile_of_millions_of_regions_is_read_and_saved_without_a_copy_of_its_text() {
    if !root_or_skip(
        "a_mapfile_of_millions_of_regions_is_read_and_saved_without_a_copy_of_its_text",
    ) {
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("disktriage-map.")
        .tempdir_in("/dev/shm")
        .unwrap();
    let size: u64 = 2 << 30;
    let dev = LoopDev::new(dir.path(), size, 512);
    // A dying disk's mapfile: every other sector bad, 4.2 million regions, 109 MB of text.
    let map = dir.path().join("dying.map");
    let mut text = String::with_capacity(110 << 20);
    text += &format!("# Mapfile\n0x{size:X} +\n");
    for i in 0..size / 512 {
        text += &format!(
            "0x{:08X}  0x00000200  {}\n",
            i * 512,
            if i % 2 == 0 { '+' } else { '-' }
        );
    }
    fs::write(&map, &text).unwrap();
    drop(text);
    let mut child = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(common::HISTORY_ENV, common::history_dir())
        .args([
            "scan",
            dev.path_str(),
            "--json",
            "--mapfile",
            map.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let peak = peak_rss_kib(&mut child);
    let out = child.wait_with_output().unwrap();
    eprintln!("peak RSS {} MiB for a 109 MB mapfile", peak >> 10);
    // Nothing left to read; the sectors marked bad stay bad (exit 4), the map saved again.
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["bytes_read"], 0);
    assert!(
        fs::read_to_string(&map).unwrap().lines().count() > 4_000_000,
        "the mapfile was not saved whole"
    );
    // The map itself (about 130 MiB of regions), not the text beside it and a rendered copy:
    // 417 MiB before.
    assert!(peak < 300 << 10, "peak RSS {} MiB", peak >> 10);
}
