//! The fleet recipes of `docs/fleet.md` on this host: the Ansible playbooks
//! `contrib/ansible/triage.yml` and `contrib/ansible/smartctl-collect.yml` run by ansible-core
//! against localhost (local connection), and the `--prom` file read by the Prometheus client
//! library's text parser, also while triage rewrites it. ansible-core and prometheus_client
//! come from PyPI into a venv under the target directory
//! (`tests/fixtures/fleet/requirements.txt`), made once and reused.
//!
//! The tests on real loop devices need root; the playbook's table logic is also tested on
//! fake `disktriage` scripts (no root), the collecting playbook on fake `smartctl` scripts
//! (no root; as root also on this host's own smartctl, which may find no disk at all), and
//! the half-file detector on a writer that is not atomic, so that neither check can pass by
//! seeing nothing.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{HISTORY_ENV, LoopDev, history_dir, root_or_skip, scratch, skip};
use disktriage::history::{DEFAULT_HISTORY_DIR, FILE};
use nix::fcntl::{Flock, FlockArg};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> PathBuf {
    repo().join("tests/fixtures/fleet").join(name)
}

/// The venv with the packages of `tests/fixtures/fleet/requirements.txt`: made once under the
/// target directory, remade when the requirements change; a file lock keeps two tests (or two
/// test runs) from building it at once. None (the reason printed, or a failure under
/// `DISKTRIAGE_REQUIRE_ROOT=1`) when python3 or pip cannot make it.
fn python_venv(test: &str) -> Option<PathBuf> {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    fs::create_dir_all(base).unwrap();
    let lock_file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(base.join("py-venv.lock"))
        .unwrap();
    let _lock = Flock::lock(lock_file, FlockArg::LockExclusive).expect("flock the venv lock");
    let venv = base.join("py-venv");
    let wanted = fs::read_to_string(fixture("requirements.txt")).unwrap();
    let stamp = venv.join("disktriage-requirements.txt");
    if fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Some(venv);
    }
    let _ = fs::remove_dir_all(&venv);
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output();
    match made {
        Ok(out) if out.status.success() => {}
        Ok(out) => {
            skip(
                test,
                &format!(
                    "python3 -m venv failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                ),
            );
            return None;
        }
        Err(e) => {
            skip(test, &format!("no python3: {e}"));
            return None;
        }
    }
    let out = Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check", "-r"])
        .arg(fixture("requirements.txt"))
        .output()
        .unwrap();
    if !out.status.success() {
        skip(
            test,
            &format!(
                "pip could not install the fleet tests' packages: {}",
                String::from_utf8_lossy(&out.stderr)
            ),
        );
        return None;
    }
    fs::write(&stamp, wanted).unwrap();
    Some(venv)
}

/// `ansible-playbook contrib/ansible/triage.yml ARGS` from the venv, started in `cwd` (so no
/// ansible.cfg of the caller's is read), with Ansible's own files under the target directory
/// and the default output format (the table is the `msg` list of the last task).
fn playbook(venv: &Path, cwd: &Path, args: &[&str]) -> Output {
    run_playbook(venv, cwd, "triage.yml", args)
}

/// `ansible-playbook contrib/ansible/NAME ARGS`, as `playbook` runs triage.yml.
fn run_playbook(venv: &Path, cwd: &Path, name: &str, args: &[&str]) -> Output {
    Command::new(venv.join("bin/ansible-playbook"))
        .arg(repo().join("contrib/ansible").join(name))
        .args(args)
        .arg("-e")
        .arg(format!(
            "ansible_python_interpreter={}",
            venv.join("bin/python").display()
        ))
        .current_dir(cwd)
        .env_remove("ANSIBLE_CONFIG")
        .env(
            "ANSIBLE_HOME",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("ansible-home"),
        )
        .env("ANSIBLE_STDOUT_CALLBACK", "default")
        .env("ANSIBLE_NOCOLOR", "1")
        .env(HISTORY_ENV, history_dir())
        .output()
        .unwrap()
}

/// The table the playbook printed: the lines of the `"msg": [...]` list of its last task.
fn table_of(stdout: &str) -> Vec<String> {
    let start = stdout
        .rfind("\"msg\": [")
        .unwrap_or_else(|| panic!("no table in the playbook's output:\n{stdout}"));
    let list = &stdout[start + "\"msg\": ".len()..];
    let end = list.find("\n    ]").expect("the end of the table") + "\n    ]".len();
    serde_json::from_str(&list[..end]).unwrap()
}

/// (host, device, verdict) of each line of the table below its heading.
fn rows_of(table: &[String]) -> Vec<(String, String, String)> {
    assert!(
        table[0].starts_with("HOST") && table[0].contains("FIRST FINDING"),
        "{table:#?}"
    );
    table[1..]
        .iter()
        .map(|line| {
            let mut words = line.split_whitespace().map(String::from);
            (
                words.next().unwrap(),
                words.next().unwrap(),
                words.next().unwrap(),
            )
        })
        .collect()
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\n{}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// One disk of a contract-conforming triage JSON (TRIAGE-CONTRACT schema 1).
fn fake_disk(device: &str, verdict: &str, model: &str, finding: Option<&str>) -> serde_json::Value {
    let findings: Vec<serde_json::Value> = finding
        .map(|s| {
            serde_json::json!({"rule": "fake", "severity": verdict, "sentence": s,
                               "next_step": "none", "value": 1, "threshold": 0})
        })
        .into_iter()
        .collect();
    let problems: Vec<&str> = if verdict == "unknown" {
        vec!["SMART could not be read"]
    } else {
        vec![]
    };
    serde_json::json!({
        "device": device, "report": null, "verdict": verdict,
        "identity": {"model": model, "serial": format!("SN-{device}"), "wwn": null,
                     "firmware": null, "capacity_bytes": 1_000_000_000, "logical_block_size": 512,
                     "transport": "sata", "rotation_rpm": 0},
        "findings": findings, "problems": problems, "smart": null, "logs": null, "link": null,
        "measurements": {"surface": null, "seq_read": [], "random_read_qd1": null,
                         "temperature_c": null},
        "changes": [], "seconds": 1.0
    })
}

/// A fake `disktriage` at `dir/NAME`: prints `disks` as a triage JSON, writes its arguments
/// to `dir/NAME.args`, and exits with `status`.
fn fake_triage(dir: &Path, name: &str, status: i32, disks: Vec<serde_json::Value>) -> PathBuf {
    let doc = serde_json::json!({
        "schema": 1, "host": name, "started": "2026-11-27T18:40:00Z", "seconds": 1.0,
        "bound_seconds": 60, "verdict": "healthy", "exit_status": status, "disks": disks
    });
    let script = dir.join(name);
    let args = dir.join(format!("{name}.args"));
    let body = if status == 1 || status == 2 {
        format!("echo 'disktriage: fake error {status}' >&2\n")
    } else {
        format!("cat <<'JSON'\n{doc}\nJSON\n")
    };
    fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$@\" > '{}'\n{body}exit {status}\n",
            args.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[test]
fn the_playbook_puts_every_hosts_disks_in_one_table_worst_first() {
    let test = "the_playbook_puts_every_hosts_disks_in_one_table_worst_first";
    let Some(venv) = python_venv(test) else {
        return;
    };
    let dir = scratch();
    let d = dir.path();
    // Five hosts, all local, each with its own fake: every verdict exit status, an error and
    // a usage error.
    let hosts = [
        (
            "web01",
            fake_triage(
                d,
                "web01",
                4,
                vec![
                    fake_disk(
                        "sdb",
                        "failing",
                        "WDC WD40EFRX",
                        Some("24 sectors are pending"),
                    ),
                    fake_disk("sda", "healthy", "Samsung SSD 870", None),
                ],
            ),
        ),
        (
            "db01",
            fake_triage(
                d,
                "db01",
                5,
                vec![
                    fake_disk("sdc", "unknown", "ST4000", None),
                    fake_disk(
                        "nvme0n1",
                        "suspect",
                        "KXG60",
                        Some("the link runs at x2 of x4"),
                    ),
                ],
            ),
        ),
        (
            "app01",
            fake_triage(
                d,
                "app01",
                3,
                vec![fake_disk(
                    "sda",
                    "suspect",
                    "ST4000",
                    Some("slower than its siblings"),
                )],
            ),
        ),
        (
            "ok01",
            fake_triage(
                d,
                "ok01",
                0,
                vec![fake_disk("vda", "healthy", "QEMU", None)],
            ),
        ),
        ("bad01", fake_triage(d, "bad01", 1, vec![])),
        ("use01", fake_triage(d, "use01", 2, vec![])),
    ];
    let inventory = d.join("inventory");
    let mut inv = String::new();
    for (host, bin) in &hosts {
        inv.push_str(&format!(
            "{host} ansible_connection=local disktriage_bin={}\n",
            bin.display()
        ));
    }
    fs::write(&inventory, inv).unwrap();
    let json_dir = d.join("json");
    fs::create_dir(&json_dir).unwrap();

    let out = playbook(
        &venv,
        d,
        &[
            "-i",
            inventory.to_str().unwrap(),
            "-e",
            &format!(
                r#"{{"disktriage_devices": ["sdb", "sdc"], "disktriage_args": ["--quick"], "disktriage_json_dir": "{}"}}"#,
                json_dir.display()
            ),
        ],
    );
    let all = text(&out);
    // Hosts whose triage failed (1, 2) fail the play: ansible-playbook says so with its 2.
    assert_eq!(out.status.code(), Some(2), "{all}");
    let table = table_of(&String::from_utf8_lossy(&out.stdout));
    let rows = rows_of(&table);
    let want: Vec<(String, String, String)> = [
        ("bad01", "-", "error"),
        ("use01", "-", "error"),
        ("db01", "sdc", "unknown"),
        ("web01", "sdb", "failing"),
        ("app01", "sda", "suspect"),
        ("db01", "nvme0n1", "suspect"),
        ("ok01", "vda", "healthy"),
        ("web01", "sda", "healthy"),
    ]
    .iter()
    .map(|(h, dev, v)| (h.to_string(), dev.to_string(), v.to_string()))
    .collect();
    assert_eq!(rows, want, "{table:#?}");
    // Model, serial and the first finding (or problem) are on each disk's line; an error
    // row says the exit status and the error.
    let line = |host: &str, dev: &str| {
        table
            .iter()
            .find(|l| l.split_whitespace().take(2).eq([host, dev]))
            .unwrap()
            .clone()
    };
    let web_sdb = line("web01", "sdb");
    assert!(web_sdb.contains("WDC WD40EFRX"), "{web_sdb}");
    assert!(web_sdb.contains("SN-sdb"), "{web_sdb}");
    assert!(web_sdb.ends_with("24 sectors are pending"), "{web_sdb}");
    assert!(line("db01", "sdc").ends_with("SMART could not be read"));
    assert!(
        line("bad01", "-").ends_with("exit 1: disktriage: fake error 1"),
        "{table:#?}"
    );
    assert!(line("use01", "-").contains("exit 2: "), "{table:#?}");
    // The columns line up: every line has the verdict at the heading's VERDICT column.
    let at = table[0].find("VERDICT").unwrap();
    for l in &table[1..] {
        assert!(
            ["healthy", "suspect", "failing", "unknown", "error"]
                .iter()
                .any(|v| l[at..].starts_with(v)),
            "{table:#?}"
        );
    }
    // Each host got `triage --json`, the extra options, then the devices.
    assert_eq!(
        fs::read_to_string(d.join("web01.args")).unwrap().trim(),
        "triage --json --quick sdb sdc"
    );
    // The JSON of each host that gave one is kept on the controller.
    let kept: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(json_dir.join("db01.json")).unwrap()).unwrap();
    assert_eq!(kept["disks"][1]["device"], "nvme0n1");
    assert!(!json_dir.join("bad01.json").exists());

    // Verdicts alone (0, 3, 4, 5) never fail the play.
    let out = playbook(
        &venv,
        d,
        &[
            "-i",
            inventory.to_str().unwrap(),
            "--limit",
            "web01,db01,app01,ok01",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        fs::read_to_string(d.join("web01.args")).unwrap().trim(),
        "triage --json"
    );
    assert_eq!(
        rows_of(&table_of(&String::from_utf8_lossy(&out.stdout))).len(),
        6
    );
}

#[test]
fn root_the_playbook_triages_a_loop_device_on_localhost() {
    let test = "root_the_playbook_triages_a_loop_device_on_localhost";
    if !root_or_skip(test) {
        return;
    }
    let Some(venv) = python_venv(test) else {
        return;
    };
    let dir = scratch();
    let dev = LoopDev::new(dir.path(), 64 << 20, 512);
    let json_dir = dir.path().join("json");
    fs::create_dir(&json_dir).unwrap();
    // Always the device list: this test triages its own loop device and nothing else.
    let vars = serde_json::json!({
        "disktriage_bin": env!("CARGO_BIN_EXE_disktriage"),
        "disktriage_devices": [dev.path_str()],
        "disktriage_args": ["--quick"],
        "disktriage_json_dir": json_dir,
    });
    let real_history_before = real_history();
    let out = playbook(
        &venv,
        dir.path(),
        &["-c", "local", "-i", "localhost,", "-e", &vars.to_string()],
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let table = table_of(&String::from_utf8_lossy(&out.stdout));
    let rows = rows_of(&table);
    assert_eq!(rows.len(), 1, "{table:#?}");
    let (host, device, verdict) = &rows[0];
    assert_eq!(host, "localhost");
    assert_eq!(device, &dev.name, "{table:#?}");
    // The table's verdict is the one triage gave (the JSON the playbook kept), and triage's
    // exit status is that verdict's.
    let kept: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(json_dir.join("localhost.json")).unwrap())
            .unwrap();
    assert_eq!(kept["disks"].as_array().unwrap().len(), 1, "{kept}");
    assert_eq!(kept["disks"][0]["device"], dev.name.as_str());
    assert_eq!(kept["disks"][0]["verdict"], verdict.as_str(), "{kept}");
    let status = match verdict.as_str() {
        "healthy" => 0,
        "suspect" => 3,
        "failing" => 4,
        "unknown" => 5,
        other => panic!("not a verdict: {other}"),
    };
    assert_eq!(kept["exit_status"], status, "{kept}");
    // The module inherited the suite's history directory: the real history is untouched.
    assert_eq!(
        real_history(),
        real_history_before,
        "the real history was written"
    );
}

/// A fake `smartctl` at `dir/NAME`: `--scan-open` prints `scan` (one device a line, as
/// smartctl words them), and `-j -x [OPTS] DEV` prints a captured report of the QEMU lab with
/// the exit status smartctl gave: `/dev/sda` a clean SATA disk (0), `/dev/nvme0` an NVMe
/// drive raising a critical warning (8: bit 3, the disk is failing), `/dev/bus/0` the SATA
/// report behind a RAID controller (64: bit 6, errors in the log), anything else the virtio
/// disk smartctl cannot read (1: bit 0). Each call's arguments go to `dir/NAME.args`.
fn fake_smartctl(dir: &Path, name: &str, scan: &[&str]) -> PathBuf {
    let pages = repo().join("tests/fixtures/pages");
    let page = |f: &str| pages.join(f).display().to_string();
    let script = dir.join(name);
    let mut scan_text = scan.join("\n");
    if !scan.is_empty() {
        scan_text.push('\n');
    }
    fs::write(dir.join(format!("{name}.scan")), scan_text).unwrap();
    fs::write(
        &script,
        format!(
            "#!/bin/sh\n\
             echo \"$@\" >> '{args}'\n\
             if [ \"$1\" = --scan-open ]; then cat '{scan}'; exit 0; fi\n\
             for last; do :; done\n\
             case \"$last\" in\n\
             /dev/sda) cat '{sata}'; exit 0;;\n\
             /dev/nvme0) cat '{nvme}'; exit 8;;\n\
             /dev/bus/0) cat '{sata}'; exit 64;;\n\
             *) cat '{virtio}'; exit 1;;\n\
             esac\n",
            args = dir.join(format!("{name}.args")).display(),
            scan = dir.join(format!("{name}.scan")).display(),
            sata = page("smartctl-qemu-sata-0.json"),
            nvme = page("smartctl-qemu-nvme-warn.json"),
            virtio = page("smartctl-qemu-virtio-0.json"),
        ),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// The file names in `dir`, sorted.
fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn the_collect_playbook_keeps_each_readable_report_and_judges_them_at_once() {
    let test = "the_collect_playbook_keeps_each_readable_report_and_judges_them_at_once";
    let Some(venv) = python_venv(test) else {
        return;
    };
    let dir = scratch();
    let d = dir.path();
    // web01: a clean SATA disk, an NVMe drive that is failing, one smartctl cannot read, one
    // --scan-open could not open (commented out), a disk behind a RAID controller. db01: one
    // clean disk. empty01: nothing smartctl finds.
    let web01 = fake_smartctl(
        d,
        "web01-smartctl",
        &[
            "/dev/sda -d sat # /dev/sda [SAT], ATA device",
            "/dev/nvme0 -d nvme # /dev/nvme0, NVMe device",
            "# /dev/sdz -d scsi # /dev/sdz, SCSI device open failed: No such device",
            "/dev/vda -d auto # /dev/vda",
            "/dev/bus/0 -d megaraid,1 # /dev/bus/0 [megaraid_disk_01], SCSI device",
        ],
    );
    let db01 = fake_smartctl(
        d,
        "db01-smartctl",
        &["/dev/sda -d sat # /dev/sda, ATA device"],
    );
    let empty01 = fake_smartctl(d, "empty01-smartctl", &[]);
    let inventory = d.join("inventory");
    let mut inv = String::new();
    for (host, bin) in [("web01", &web01), ("db01", &db01), ("empty01", &empty01)] {
        inv.push_str(&format!(
            "{host} ansible_connection=local smartctl_bin={}\n",
            bin.display()
        ));
    }
    fs::write(&inventory, inv).unwrap();
    let collect = d.join("collect");
    let vars = |collect: &Path| {
        serde_json::json!({
            "disktriage_controller_bin": env!("CARGO_BIN_EXE_disktriage"),
            "smartctl_collect_dir": collect,
        })
        .to_string()
    };

    let out = run_playbook(
        &venv,
        d,
        "smartctl-collect.yml",
        &["-i", inventory.to_str().unwrap(), "-e", &vars(&collect)],
    );
    let all = text(&out);
    // A disk smartctl cannot read fails no host; verdicts fail nothing.
    assert_eq!(out.status.code(), Some(0), "{all}");
    // Each report smartctl could read, named by host and disk (a RAID disk by its -d type
    // too); not the one it could not.
    let reports = collect.join("reports");
    assert_eq!(
        file_names(&reports),
        [
            "db01__sda.json",
            "web01__bus_0__megaraid_1.json",
            "web01__nvme0.json",
            "web01__sda.json"
        ],
        "{all}"
    );
    let kept: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(reports.join("web01__sda.json")).unwrap())
            .unwrap();
    let captured: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(repo().join("tests/fixtures/pages/smartctl-qemu-sata-0.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(kept, captured, "the report is kept as smartctl printed it");
    // smartctl ran with -j -x and the disk's -d options from the scan.
    let calls = fs::read_to_string(d.join("web01-smartctl.args")).unwrap();
    assert!(
        calls.contains("-j -x -d megaraid,1 /dev/bus/0\n"),
        "{calls}"
    );
    assert!(calls.contains("-j -x -d sat /dev/sda\n"), "{calls}");
    assert!(!calls.contains("/dev/sdz"), "{calls}");
    // What was left out is named.
    assert!(
        all.contains(
            "/dev/vda: smartctl could not read it (exit 1): /dev/vda: Unable to detect device type"
        ),
        "{all}"
    );
    assert!(
        all.contains("smartctl --scan-open could not open it: /dev/sdz -d scsi"),
        "{all}"
    );
    // One triage of them all: its table printed, its JSON kept beside the reports.
    assert!(
        all.contains("Triage of 4 saved smartctl reports: failing"),
        "{all}"
    );
    let triage: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(collect.join("triage.json")).unwrap()).unwrap();
    assert_eq!(triage["source"], "saved-reports");
    assert_eq!(triage["exit_status"], 4);
    let mut judged: Vec<(String, String, String)> = triage["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|disk| {
            (
                disk["device"].as_str().unwrap().to_string(),
                disk["verdict"].as_str().unwrap().to_string(),
                disk["report"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    judged.sort();
    let want: Vec<(String, String, String)> = [
        ("db01__sda.json", "healthy"),
        ("web01__bus_0__megaraid_1.json", "healthy"),
        ("web01__nvme0.json", "failing"),
        ("web01__sda.json", "healthy"),
    ]
    .iter()
    .map(|(f, v)| {
        (
            f.to_string(),
            v.to_string(),
            reports.join(f).display().to_string(),
        )
    })
    .collect();
    assert_eq!(judged, want);

    // Again into the same directory: refused, so that no earlier report is judged as new.
    let out = run_playbook(
        &venv,
        d,
        "smartctl-collect.yml",
        &["-i", inventory.to_str().unwrap(), "-e", &vars(&collect)],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("reports is not empty"),
        "{}",
        text(&out)
    );

    // No host with a disk smartctl can read: nothing to judge, said so, and no failure.
    let nothing = d.join("nothing");
    let out = run_playbook(
        &venv,
        d,
        "smartctl-collect.yml",
        &[
            "-i",
            inventory.to_str().unwrap(),
            "--limit",
            "empty01",
            "-e",
            &vars(&nothing),
        ],
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(all.contains("No report was collected"), "{all}");
    assert!(file_names(&nothing.join("reports")).is_empty());
    assert!(!nothing.join("triage.json").exists());
}

#[test]
fn root_the_collect_playbook_runs_this_hosts_smartctl() {
    let test = "root_the_collect_playbook_runs_this_hosts_smartctl";
    if !root_or_skip(test) {
        return;
    }
    if Command::new("smartctl").arg("--version").output().is_err() {
        skip(test, "no smartctl (smartmontools) on this host");
        return;
    }
    let Some(venv) = python_venv(test) else {
        return;
    };
    let dir = scratch();
    let collect = dir.path().join("collect");
    let vars = serde_json::json!({
        "disktriage_controller_bin": env!("CARGO_BIN_EXE_disktriage"),
        "smartctl_collect_dir": collect,
    });
    let out = run_playbook(
        &venv,
        dir.path(),
        "smartctl-collect.yml",
        &["-c", "local", "-i", "localhost,", "-e", &vars.to_string()],
    );
    let all = text(&out);
    // This host's disks may have no SMART at all (a VM's virtio disks): then nothing is
    // collected and the play says so; else every report kept was judged.
    assert_eq!(out.status.code(), Some(0), "{all}");
    let kept = file_names(&collect.join("reports"));
    if kept.is_empty() {
        assert!(all.contains("No report was collected"), "{all}");
        return;
    }
    let triage: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(collect.join("triage.json")).unwrap()).unwrap();
    let mut judged: Vec<String> = triage["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|disk| disk["device"].as_str().unwrap().to_string())
        .collect();
    judged.sort();
    assert_eq!(judged, kept, "{all}");
    assert!(
        kept.iter().all(|f| f.starts_with("localhost__")),
        "{kept:?}"
    );
}

/// What /var/lib/disktriage holds now: the history file's size and time, if any.
fn real_history() -> Option<(u64, std::time::SystemTime)> {
    let m = fs::metadata(Path::new(DEFAULT_HISTORY_DIR).join(FILE)).ok()?;
    Some((m.len(), m.modified().ok()?))
}

/// The `disktriage_verdict` samples of a --prom file, by the Prometheus client's parser.
fn parse_prom(venv: &Path, file: &Path) -> Vec<serde_json::Value> {
    let out = Command::new(venv.join("bin/python"))
        .arg(fixture("scrape.py"))
        .arg("once")
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the parser refused {}: {}\n{}",
        file.display(),
        String::from_utf8_lossy(&out.stderr),
        fs::read_to_string(file).unwrap_or_default()
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["verdicts"].as_array().unwrap().clone()
}

/// Two loop devices over their own sparse images in `dir`.
fn two_loops(dir: &Path) -> Vec<LoopDev> {
    (0..2)
        .map(|i| {
            let image = common::sparse_image(dir, &format!("fleet-{i}.img"), 64 << 20);
            LoopDev::attach(&image, &[])
        })
        .collect()
}

fn triage_prom(file: &Path, loops: &[LoopDev]) -> Output {
    let mut args = vec!["triage", "--quick", "--prom", file.to_str().unwrap()];
    args.extend(loops.iter().map(LoopDev::path_str));
    common::disktriage(&args)
}

#[test]
fn root_the_prom_file_parses_with_one_verdict_per_disk() {
    let test = "root_the_prom_file_parses_with_one_verdict_per_disk";
    if !root_or_skip(test) {
        return;
    }
    let Some(venv) = python_venv(test) else {
        return;
    };
    let dir = scratch();
    let loops = two_loops(dir.path());
    let textfile_dir = dir.path().join("textfile_collector");
    fs::create_dir(&textfile_dir).unwrap();
    let file = textfile_dir.join("disktriage.prom");
    let out = triage_prom(&file, &loops);
    let status = out.status.code().unwrap();
    assert!([0, 3, 4, 5].contains(&status), "{}", text(&out));

    let verdicts = parse_prom(&venv, &file);
    let mut devices: Vec<&str> = verdicts
        .iter()
        .map(|s| s["labels"]["device"].as_str().unwrap_or("(none)"))
        .collect();
    devices.sort_unstable();
    let mut want: Vec<&str> = loops.iter().map(|l| l.name.as_str()).collect();
    want.sort_unstable();
    assert_eq!(devices, want, "one verdict per disk: {verdicts:#?}");
    for s in &verdicts {
        for label in ["device", "model", "serial"] {
            assert!(s["labels"].get(label).is_some(), "no {label}: {s}");
        }
        assert_eq!(s["type"], "gauge", "{s}");
        let v = s["value"].as_f64().unwrap();
        assert!([0.0, 1.0, 2.0, 3.0].contains(&v), "{s}");
    }
    // The exit status is the worst verdict: 0 healthy, 3 suspect, 4 failing, 5 unknown.
    let worst = verdicts
        .iter()
        .map(|s| s["value"].as_f64().unwrap() as i32)
        .max()
        .unwrap();
    assert_eq!(status, [0, 3, 4, 5][worst as usize], "{verdicts:#?}");
    // node_exporter's textfile collector runs as its own user: the file is readable by all,
    // and nothing else (no temporary file) is left in its directory.
    let mode = fs::metadata(&file).unwrap().permissions().mode();
    assert!(
        mode & 0o044 == 0o044,
        "{} has mode {mode:o}: node_exporter cannot read it",
        file.display()
    );
    let left: Vec<_> = fs::read_dir(&textfile_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, [std::ffi::OsString::from("disktriage.prom")]);
}

/// Scrapes every `*.prom` file in `dir` in a loop (as node_exporter's textfile collector
/// does) while `rewrite` runs, then returns the reader's summary: `reads`, `device_sets`
/// (each "file:devices" seen, with its count), `bad` (reads that did not parse).
fn scrape_while(venv: &Path, dir: &Path, rewrite: impl FnOnce()) -> serde_json::Value {
    let stop = dir.with_extension("stop");
    let _ = fs::remove_file(&stop);
    let _ = fs::remove_file(format!("{}.ready", stop.display()));
    let reader = Command::new(venv.join("bin/python"))
        .arg(fixture("scrape.py"))
        .arg("watch")
        .arg(dir)
        .arg(&stop)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Stop and reap the reader also when `rewrite` panics.
    struct StopReader(PathBuf);
    impl Drop for StopReader {
        fn drop(&mut self) {
            let _ = fs::write(&self.0, "");
        }
    }
    let stopper = StopReader(stop.clone());
    let ready = PathBuf::from(format!("{}.ready", stop.display()));
    assert!(
        common::poll(1500, || ready.exists().then_some(())).is_some(),
        "the reader did not start reading within 30 s"
    );
    rewrite();
    drop(stopper);
    let out = reader.wait_with_output().unwrap();
    let _ = fs::remove_file(&stop);
    let _ = fs::remove_file(&ready);
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The prom text of two disks' verdicts, as `prom_text` would write it.
const TWO_VERDICTS: &str = "\
# HELP disktriage_verdict The disk's triage verdict: 0 healthy, 1 suspect, 2 failing, 3 unknown.
# TYPE disktriage_verdict gauge
disktriage_verdict{device=\"loop1\",model=\"\",serial=\"\"} 0
disktriage_verdict{device=\"loop2\",model=\"\",serial=\"\"} 2
";

#[test]
fn the_half_file_detector_sees_a_writer_that_is_not_atomic() {
    // The check of the next test, on a writer that truncates and writes in two steps: it must
    // see half files, or the next test could pass by seeing nothing.
    let test = "the_half_file_detector_sees_a_writer_that_is_not_atomic";
    let Some(venv) = python_venv(test) else {
        return;
    };
    let dir = scratch();
    let textfile_dir = dir.path().join("textfile_collector");
    fs::create_dir(&textfile_dir).unwrap();
    let file = textfile_dir.join("disktriage.prom");
    fs::write(&file, TWO_VERDICTS).unwrap();
    let summary = scrape_while(&venv, &textfile_dir, || {
        let (first, second) = TWO_VERDICTS.split_at(TWO_VERDICTS.len() - 30);
        for _ in 0..400 {
            let mut f = fs::File::create(&file).unwrap();
            f.write_all(first.as_bytes()).unwrap();
            f.flush().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(2));
            f.write_all(second.as_bytes()).unwrap();
        }
    });
    let whole = summary["device_sets"]["disktriage.prom:loop1,loop2"]
        .as_u64()
        .unwrap_or(0);
    let reads = summary["reads"].as_u64().unwrap();
    assert!(reads > whole, "no half file seen: {summary:#}");
}

#[test]
fn root_a_scrape_during_a_rewrite_never_sees_a_half_file() {
    let test = "root_a_scrape_during_a_rewrite_never_sees_a_half_file";
    if !root_or_skip(test) {
        return;
    }
    let Some(venv) = python_venv(test) else {
        return;
    };
    let dir = scratch();
    let loops = two_loops(dir.path());
    let textfile_dir = dir.path().join("textfile_collector");
    fs::create_dir(&textfile_dir).unwrap();
    let file = textfile_dir.join("disktriage.prom");
    let out = triage_prom(&file, &loops);
    assert!(
        [0, 3, 4, 5].contains(&out.status.code().unwrap()),
        "{}",
        text(&out)
    );
    // A quick triage of two small loop devices takes a fraction of a second: many rewrites.
    let rewrites = 20;
    let summary = scrape_while(&venv, &textfile_dir, || {
        for _ in 0..rewrites {
            let out = triage_prom(&file, &loops);
            assert!(
                [0, 3, 4, 5].contains(&out.status.code().unwrap()),
                "{}",
                text(&out)
            );
        }
    });
    let mut names: Vec<&str> = loops.iter().map(|l| l.name.as_str()).collect();
    names.sort_unstable();
    let whole = format!("disktriage.prom:{}", names.join(","));
    let reads = summary["reads"].as_u64().unwrap();
    assert!(reads >= rewrites, "too few reads to judge: {summary:#}");
    // Every read of every *.prom file parsed and held both disks' verdicts: no half file, no
    // temporary *.prom beside it.
    assert_eq!(summary["bad"], serde_json::json!([]), "{summary:#}");
    assert_eq!(
        summary["device_sets"],
        serde_json::json!({ whole: reads }),
        "{summary:#}"
    );
}
