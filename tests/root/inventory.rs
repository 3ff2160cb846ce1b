//! `disktriage list` against real devices this test creates (root only): loop devices with
//! 512- and 4096-byte sectors, zram, a mounted ext4 loop device, a partitioned loop device.
//! Every device is removed again by its guard, also when an assertion fails.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;
use common::{HISTORY_ENV, history_dir};

use common::{
    LoopDev, Mounted, Zram, disktriage, json_device, list_json, root_or_skip, scratch, sh,
};

/// What `blockdev` says: size in bytes, logical and physical sector size.
fn blockdev(path: &str) -> (u64, u64, u64) {
    let out = sh("blockdev", &["--getsize64", "--getss", "--getpbsz", path]);
    let v: Vec<u64> = out
        .split_whitespace()
        .map(|s| s.parse().expect("number"))
        .collect();
    (v[0], v[1], v[2])
}

fn sysfs(name: &str, attr: &str) -> String {
    std::fs::read_to_string(format!("/sys/block/{name}/{attr}"))
        .expect("sysfs attribute")
        .trim()
        .to_string()
}

fn assert_matches_kernel(doc: &serde_json::Value, name: &str, path: &str) {
    let d = json_device(doc, name);
    let (size, logical, physical) = blockdev(path);
    assert_eq!(d["size_bytes"], size, "{name} size");
    assert_eq!(
        d["logical_block_size"], logical,
        "{name} logical block size"
    );
    assert_eq!(
        d["physical_block_size"], physical,
        "{name} physical block size"
    );
    let (major, minor) = sysfs(name, "dev")
        .split_once(':')
        .map(|(a, b)| (a.parse::<u64>().unwrap(), b.parse::<u64>().unwrap()))
        .unwrap();
    assert_eq!(
        (d["dev"]["major"].as_u64(), d["dev"]["minor"].as_u64()),
        (Some(major), Some(minor))
    );
    assert_eq!(d["rotational"], sysfs(name, "queue/rotational") == "1");
    assert_eq!(
        d["read_ahead_kb"],
        sysfs(name, "queue/read_ahead_kb").parse::<u64>().unwrap()
    );
    assert_eq!(d["kernel_write_cache"], sysfs(name, "queue/write_cache"));
}

#[test]
fn root_loop_devices_512_and_4096_match_blockdev() {
    if !root_or_skip("root_loop_devices_512_and_4096_match_blockdev") {
        return;
    }
    let dir = scratch();
    let l512 = LoopDev::new(dir.path(), 64 << 20, 512);
    let l4k = LoopDev::new(dir.path(), 32 << 20, 4096);
    let doc = list_json();
    for l in [&l512, &l4k] {
        assert_matches_kernel(&doc, &l.name, l.path_str());
        let d = json_device(&doc, &l.name);
        assert_eq!(d["transport"], "loop");
        assert_eq!(d["backing_file"], l.image.to_str().unwrap());
        assert_eq!(d["in_use_summary"], "free");
        let active = sysfs(&l.name, "queue/scheduler");
        let bracketed = active
            .split_whitespace()
            .find(|w| w.starts_with('['))
            .unwrap();
        assert_eq!(
            d["scheduler"]["active"],
            bracketed.trim_matches(|c| c == '[' || c == ']')
        );
    }
    assert_eq!(json_device(&doc, &l4k.name)["logical_block_size"], 4096);
    assert_eq!(json_device(&doc, &l512.name)["logical_block_size"], 512);

    // The table shows them, with sizes in binary units.
    let out = disktriage(&["list"]);
    let table = String::from_utf8_lossy(&out.stdout);
    let row = table
        .lines()
        .find(|l| l.starts_with(&format!("{} ", l4k.name)))
        .expect("row");
    assert!(row.contains("32.0 MiB") && row.contains(" loop "), "{row}");
}

#[test]
fn root_zram_matches_blockdev() {
    if !root_or_skip("root_zram_matches_blockdev") {
        return;
    }
    let Some(zram) = Zram::setup("root_zram_matches_blockdev", 96 << 20) else {
        return;
    };
    let doc = list_json();
    assert_matches_kernel(&doc, &zram.name, "/dev/zram0");
    let d = json_device(&doc, &zram.name);
    assert_eq!(d["transport"], "zram");
    assert_eq!(d["size_bytes"], 96u64 << 20);
    assert_eq!(d["placeholder"], false);

    // As swap it is in use.
    sh("mkswap", &["/dev/zram0"]);
    sh("swapon", &["/dev/zram0"]);
    let d2 = list_json();
    assert_eq!(json_device(&d2, "zram0")["in_use_summary"], "active swap");
}

#[test]
fn root_mounted_loop_device_is_in_use() {
    if !root_or_skip("root_mounted_loop_device_is_in_use") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 64 << 20, 512);
    let mnt = dir.path().join("mnt");
    let mounted = Mounted::ext4(l.path_str(), &mnt);
    let doc = list_json();
    let d = json_device(&doc, &l.name);
    let expect = format!("mounted at {}", mounted.dir.display());
    assert_eq!(d["in_use_summary"], expect.as_str());
    assert_eq!(d["in_use"][0]["fstype"], "ext4");

    let out = disktriage(&["list"]);
    let table = String::from_utf8_lossy(&out.stdout);
    let row = table
        .lines()
        .find(|r| r.starts_with(&format!("{} ", l.name)))
        .expect("row");
    // The mount point may be cut to fit 80 columns (marked with `~`; how much is left depends
    // on the other devices' columns, and other tests attach devices meanwhile), but what is
    // shown is how it starts.
    let path = mounted.dir.to_str().unwrap();
    let shown = row
        .split("mounted ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_default();
    match shown.strip_suffix('~') {
        Some(start) => assert!(!start.is_empty() && path.starts_with(start), "{row}"),
        None => assert_eq!(shown, path, "{row}"),
    }

    drop(mounted);
    let doc = list_json();
    assert_eq!(json_device(&doc, &l.name)["in_use_summary"], "free");
}

#[test]
fn root_partitions_show_under_parent_and_mark_it_in_use() {
    if !root_or_skip("root_partitions_show_under_parent_and_mark_it_in_use") {
        return;
    }
    let dir = scratch();
    let image = dir.path().join("parted.img");
    std::fs::File::create(&image)
        .and_then(|f| f.set_len(64 << 20))
        .unwrap();
    let table = "label: gpt\n,24M,L\n,,L\n";
    let mut child = std::process::Command::new("sfdisk")
        .args(["-q", image.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("sfdisk");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(table.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());

    let l = LoopDev::attach(&image, &["-P"]);
    let parts = l.expose_partitions();
    let p1 = format!("{}p1", l.name);
    let p2 = format!("{}p2", l.name);
    assert_eq!(parts, [p1.clone(), p2.clone()]);

    let doc = list_json();
    let d = json_device(&doc, &l.name);
    let names: Vec<&str> = d["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [p1.as_str(), p2.as_str()]);
    assert_eq!(d["partitions"][0]["size_bytes"], 24u64 << 20);
    assert_eq!(d["partitions"][0]["start_sector"], 2048);
    assert_eq!(d["in_use_summary"], "free");

    let mnt = dir.path().join("p1");
    let mounted = Mounted::ext4(&format!("/dev/{p1}"), &mnt);
    let doc = list_json();
    let d = json_device(&doc, &l.name);
    assert_eq!(
        d["in_use_summary"],
        format!("{p1} mounted at {}", mounted.dir.display()).as_str()
    );

    // In the table the partitions follow their parent, the parent says which one is in use.
    let out = disktriage(&["list"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|r| r.starts_with(&format!("{} ", l.name)))
        .expect("row");
    assert!(lines[at].ends_with(&format!("via {p1}")), "{}", lines[at]);
    assert!(
        lines[at + 1].starts_with(&format!("|-{p1} ")),
        "{}",
        lines[at + 1]
    );
    assert!(lines[at + 1].contains("mounted "), "{}", lines[at + 1]);
    assert!(
        lines[at + 2].starts_with(&format!("`-{p2} ")),
        "{}",
        lines[at + 2]
    );
    drop(mounted);
}

#[test]
fn root_list_works_as_a_normal_user() {
    if !root_or_skip("root_list_works_as_a_normal_user") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 16 << 20, 4096);
    // Drop to nobody: sysfs is world-readable, so the inventory must come out whole, the
    // same as root sees it.
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .args(["list", "--json", "--all"])
        .output()
        .expect("setpriv");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let as_user: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let as_root = list_json();
    assert_eq!(
        json_device(&as_user, &l.name),
        json_device(&as_root, &l.name)
    );
    assert_eq!(as_user["usage_complete"], true);
    assert_eq!(
        json_device(&as_user, &l.name)["notes"],
        serde_json::json!([])
    );
}
