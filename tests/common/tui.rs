//! Builds TUI states for tests without a terminal or devices: a fixture inventory, a scripted
//! series of interval samples, synthetic run reports, and rendering through ratatui's
//! TestBackend.

use std::path::PathBuf;
use std::time::Duration;

use disktriage::app::App;
use disktriage::bench::RunEvent;
use disktriage::bench::TargetFacts;
use disktriage::bench::TestName;
use disktriage::bench::build_plan;
use disktriage::bench::{
    BoundedSeries, DirPoint, IntervalPoint, LATENCY_DEFINITION, LatencyPoint, LatencySummary,
};
use disktriage::bench::{
    DirTotals, PhaseResult, RUN_JSON_SCHEMA, RunOutcome, RunReport, TargetClass, TargetInfo,
};
use disktriage::bench::{EngineChoice, EngineProbe, ProbeFigures};
use disktriage::bench::{Phase, PhaseTag, Plan};
use disktriage::bench::{SYNC, TestParams};
use disktriage::event::{Cmd, Msg};
use disktriage::model::{KernelWriteCache, Transport};
use disktriage::sys::HostInfo;
use disktriage::sys::SysRoot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sysfs")
        .join(name)
}

/// Reads a captured page (hex text) from tests/fixtures/pages.
pub fn page(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pages")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let hex: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
    hex.chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).expect("ASCII"), 16).expect("hex"))
        .collect()
}

/// An app with the inventory of a fixture scenario.
pub fn app_with(scenario: &str, root: bool) -> App {
    let mut app = App::new(root, false);
    let inv = SysRoot::new(fixture(scenario))
        .inventory()
        .expect("fixture");
    app.update(Msg::Inventory(Ok(inv)));
    app
}

pub fn key(app: &mut App, code: KeyCode) -> Vec<Cmd> {
    app.update(Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

/// The Test screen with rand-read chosen, as the admin gets there: `2`, then down to it.
pub fn pick_rand_read(app: &mut App) {
    keys(app, "2");
    for _ in 0..7 {
        key(app, KeyCode::Down);
    }
}

pub fn keys(app: &mut App, s: &str) -> Vec<Cmd> {
    let mut cmds = Vec::new();
    for c in s.chars() {
        cmds.extend(key(app, KeyCode::Char(c)));
    }
    cmds
}

pub fn tick(app: &mut App, secs: f64) -> Vec<Cmd> {
    app.update(Msg::Tick(Duration::from_secs_f64(secs)))
}

/// Draws the app at `w` x `h`; fails when a word or a figure had to be cut to fit (a name or
/// a path may be shortened in its middle: that is not a cut).
fn draw(app: &App, w: u16, h: u16) -> Terminal<TestBackend> {
    let (t, cuts) = draw_checked(app, w, h);
    assert!(
        cuts.is_empty(),
        "cut at {w}x{h}:\n{}\n{}",
        cuts.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n"),
        t.backend()
    );
    t
}

/// Draws the app at `w` x `h` and returns what was cut to fit.
pub fn draw_checked(
    app: &App,
    w: u16,
    h: u16,
) -> (Terminal<TestBackend>, Vec<disktriage::ui::Cut>) {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    let mut cuts = Vec::new();
    t.draw(|f| cuts = disktriage::ui::render_checked(app, f))
        .expect("draw");
    (t, cuts)
}

/// Draws the app at `w` x `h` and returns the screen's cells, with their colours and
/// modifiers.
pub fn buffer(app: &App, w: u16, h: u16) -> ratatui::buffer::Buffer {
    draw(app, w, h).backend().buffer().clone()
}

/// Draws the app at `w` x `h` and returns the screen as text.
pub fn screen(app: &App, w: u16, h: u16) -> String {
    draw(app, w, h).backend().to_string()
}

/// Every symbol on the screen.
pub fn symbols(app: &App, w: u16, h: u16) -> Vec<String> {
    draw(app, w, h)
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol().to_string())
        .collect()
}

pub fn target(device: &str, sched: &str) -> TargetInfo {
    TargetInfo {
        path: PathBuf::from(format!("/dev/{device}")),
        kind: TargetClass::BlockDevice,
        device: Some(device.to_string()),
        size_bytes: 64 << 20,
        logical_block_size: 512,
        physical_block_size: Some(512),
        model: Some("a.img".into()),
        transport: Some(Transport::Loop),
        rotational: Some(true),
        scheduler: Some(sched.to_string()),
        kernel_write_cache: Some(KernelWriteCache::WriteBack),
        created: false,
        link_ceiling: None,
    }
}

pub fn plan(test: TestName) -> Plan {
    build_plan(
        test,
        &TestParams::default(),
        &TargetFacts {
            size: 64 << 20,
            logical_block_size: 512,
            max_request: Some(1280 << 10),
            is_file: false,
        },
        true,
    )
    .expect("plan")
}

/// The i-th point of a deterministic series around `mbps` at 4 KiB requests.
pub fn point(i: u64, mbps: f64) -> IntervalPoint {
    let wobble = [0.0, 0.04, -0.03, 0.06, -0.05, 0.02, -0.01, 0.03][(i % 8) as usize];
    let rate = mbps * (1.0 + wobble) * 1e6;
    let bytes = (rate * 0.25) as u64 / 4096 * 4096;
    let lat = 20_000 + (i % 5) * 1_500;
    IntervalPoint {
        start_s: i as f64 * 0.25,
        end_s: (i + 1) as f64 * 0.25,
        read: DirPoint {
            bytes,
            ops: bytes / 4096,
            latency: Some(LatencyPoint {
                p50_ns: lat,
                p99_ns: lat * 3,
                p999_ns: lat * 5,
                max_ns: lat * 9,
            }),
        },
        write: DirPoint::default(),
        busy_s: None,
    }
}

/// Feeds a started run `n` points of about `mbps`, one each 0.25 s as the runner sends them.
pub fn feed(app: &mut App, test: TestName, device: &str, sched: &str, n: u64, mbps: f64) {
    start_measuring(app, &plan(test), device, sched);
    for i in 0..n {
        tick(app, 1.0 + (i + 1) as f64 * 0.25);
        app.update(Msg::Run(Box::new(RunEvent::Point {
            index: 0,
            point: point(i, mbps),
        })));
    }
    tick(app, 2.0 + n as f64 * 0.25);
}

/// The run of `plan` (its first phase) starts on `device` and begins measuring, as the runner
/// says it, one second in.
pub fn start_measuring(app: &mut App, plan: &Plan, device: &str, sched: &str) {
    app.update(Msg::RunStarted {
        target: Box::new(target(device, sched)),
        plan: Box::new(plan.clone()),
        notes: vec![],
    });
    app.update(Msg::Run(Box::new(RunEvent::PhaseStarted {
        index: 0,
        count: 1,
        label: plan.test.id().to_string(),
        job: Box::new(plan.phases[0].job.clone()),
        probing: false,
    })));
    tick(app, 1.0);
    app.update(Msg::Run(Box::new(RunEvent::Measuring {
        index: 0,
        engine: Box::new(qd1_choice()),
    })));
}

/// What `--engine auto` chooses for the QD1 tests these screens show, on zram: pread
/// threads, several times faster than io_uring there.
pub fn qd1_choice() -> EngineChoice {
    let figures = |iops| {
        Some(ProbeFigures {
            iops,
            cpu_us_per_io: 2.0,
        })
    };
    disktriage::bench::choose_engine(EngineProbe {
        window_s: 0.2,
        total_s: 0.6,
        set_aside: 0,
        uring: figures(219_000.0),
        sync: figures(494_000.0),
    })
}

/// A finished single-phase report of `mbps` with the given p99 (ms).
pub fn report(test: TestName, device: &str, sched: &str, mbps: f64, p99_ms: f64) -> RunReport {
    report_phases(test, device, sched, |_| (mbps, p99_ms))
}

/// A finished report of every phase of `test`'s plan; phase `i` runs at `figures(i)` =
/// (MB/s, p99 ms).
pub fn report_phases(
    test: TestName,
    device: &str,
    sched: &str,
    figures: impl Fn(usize) -> (f64, f64),
) -> RunReport {
    let plan = plan(test);
    let phases = plan
        .phases
        .iter()
        .enumerate()
        .map(|(i, ph)| {
            let (mbps, p99_ms) = figures(i);
            phase_result(ph, mbps, p99_ms)
        })
        .collect();
    RunReport {
        schema: RUN_JSON_SCHEMA,
        tool: "disktriage test".into(),
        started_unix: 0,
        host: HostInfo::default(),
        test,
        target: target(device, sched),
        plan,
        outcome: RunOutcome {
            engine: SYNC,
            latency_definition: LATENCY_DEFINITION,
            notes: vec![],
            background: None,
            phases,
            stopped: false,
        },
        notes: vec![],
    }
}

/// A phase's result: 10 s at `mbps`, read or written as the phase does, with p99 `p99_ms`.
pub fn phase_result(ph: &Phase, mbps: f64, p99_ms: f64) -> PhaseResult {
    let job = ph.job.clone();
    let secs = 10.0;
    let bps = mbps * 1e6;
    let iops = bps / job.bs as f64;
    let lat = LatencySummary {
        count: (iops * secs) as u64,
        min_ns: 10_000,
        mean_ns: p99_ms * 1e6 / 3.0,
        p50_ns: (p99_ms * 1e6 / 3.5) as u64,
        p90_ns: (p99_ms * 1e6 / 2.0) as u64,
        p99_ns: (p99_ms * 1e6) as u64,
        p999_ns: (p99_ms * 1e6 * 1.8) as u64,
        max_ns: (p99_ms * 1e6 * 4.0) as u64,
    };
    let mut series = BoundedSeries::new(64);
    for i in 0..40 {
        series.push(point(i, mbps));
    }
    let used = DirTotals {
        bytes: (bps * secs) as u64,
        ops: (iops * secs) as u64,
        bytes_per_sec: bps,
        iops,
        latency: Some(lat),
        ..DirTotals::default()
    };
    let unused = DirTotals::default();
    let (read, write) = if job.writes() {
        (unused, used)
    } else {
        (used, unused)
    };
    PhaseResult {
        label: ph.label.clone(),
        tag: ph.tag.clone(),
        job,
        engine: SYNC,
        engine_choice: qd1_choice(),
        io_threads: 1,
        fixed_buffers: false,
        seconds: secs,
        time_base: ph.job.time_base(),
        rate_seconds: secs,
        cpu_seconds: 1.5,
        cpu_wait_seconds: 0.0,
        cpu_bound: false,
        read,
        write,
        workers: vec![],
        series,
        witness: None,
        witness_note: None,
        others: Vec::new(),
        failure: None,
        setup_error: None,
        stopped: false,
    }
}

/// Starts `test` on the selected device from the picker (R when `rerun`) and finishes it with
/// `report`, once per repeat.
pub fn finish_with(app: &mut App, test: TestName, rerun: bool, report: &RunReport) {
    let cmds = if rerun {
        keys(app, "R")
    } else {
        keys(app, "2");
        app.picker_test = disktriage::app::index_of(test);
        keys(app, "r")
    };
    assert!(matches!(cmds.as_slice(), [Cmd::StartRun(_)]), "{cmds:?}");
    let repeats = app.results.records.last().map_or(1, |r| r.repeats_wanted);
    for _ in 0..repeats {
        app.update(Msg::RunStarted {
            target: Box::new(report.target.clone()),
            plan: Box::new(report.plan.clone()),
            notes: vec![],
        });
        app.update(Msg::RunFinished(Box::new(Ok(report.clone()))));
    }
}

/// Starts rand-read on the selected device through the keys (R reruns after the first), feeds
/// it a series and finishes it with a report of `mbps` and `p99_ms`.
pub fn complete_run(app: &mut App, sched: &str, mbps: f64, p99_ms: f64) {
    let device = app.selected_device().expect("a device").name.clone();
    let cmds = if app.results.records.is_empty() {
        keys(app, "2");
        // rand-read is the 8th test of the catalogue.
        for _ in 0..7 {
            key(app, KeyCode::Down);
        }
        keys(app, "r")
    } else {
        keys(app, "R")
    };
    assert!(matches!(cmds.as_slice(), [Cmd::StartRun(_)]), "{cmds:?}");
    let repeats = app.results.records.last().map_or(1, |r| r.repeats_wanted);
    for _ in 0..repeats {
        feed(app, TestName::RandRead, &device, sched, 40, mbps);
        app.update(Msg::RunFinished(Box::new(Ok(report(
            TestName::RandRead,
            &device,
            sched,
            mbps,
            p99_ms,
        )))));
    }
}

/// The QEMU lab's device list with the drive states and SMART verdicts its drives report: the
/// NVMe drive with smart_critical_warning=4 (its health log as captured) fails, the SATA
/// drive's own write cache is on or off as asked, the SCSI disk has no SMART of its own.
pub fn lab_app_with_drive_states(sata_cache_on: bool) -> App {
    use disktriage::model::{DriveCache, SmartReading};
    use disktriage::sys::{DriveControl, FakeDevice, FakeDrives};

    let mut app = app_with("qemu-lab", true);
    let warn =
        disktriage::smart::parse_health_log(&page("qemu-nvme-warn-nvme-smart-log.hex")).unwrap();
    let mut nvme = FakeDevice::new("nvme0n1", Transport::Nvme);
    nvme.smart = Ok(SmartReading::Nvme(warn));
    let mut sata = FakeDevice::new("sda", Transport::Sata);
    sata.cache = Ok(DriveCache {
        enabled: Some(sata_cache_on),
        changeable: true,
        fixed_reason: None,
        source: "ATA IDENTIFY".into(),
    });
    let fake = FakeDrives::new()
        .with(nvme)
        .with(sata)
        .with(FakeDevice::new("sdb", Transport::Scsi));
    for name in ["nvme0n1", "sda", "sdb"] {
        let dev = fake.device(name).unwrap();
        app.update(Msg::DriveStatus {
            device: name.into(),
            cache: Ok(disktriage::drive_state::cache_status(&fake, &dev).unwrap()),
            health: Some(Ok(Box::new(
                disktriage::drive_state::smart_health(&fake, &dev).unwrap(),
            ))),
        });
    }
    app
}

/// A size sweep shaped like a disk's (diskperf's example): MB/s grows with the request size
/// and levels off; backward costs a little, random offsets cost most at small requests.
pub fn disk_like_size_sweep(device: &str) -> RunReport {
    let phases = plan(TestName::SizeSweep).phases;
    report_phases(TestName::SizeSweep, device, "none", |i| {
        let phase = &phases[i];
        let steps = (phase.job.bs / 4096).max(1).ilog2() as f64; // 4k = 0, 1M = 8
        let level = 2400.0 * (1.0 - (-(steps + 1.0) / 2.5).exp());
        let cost = if phase.label.contains("rnd") {
            0.35 + 0.65 * steps / 8.0
        } else if phase.label.contains("bwd") {
            0.93
        } else {
            1.0
        };
        (level * cost, 0.5)
    })
}

/// A queue-depth sweep shaped like an SSD's: the small random I/O's IOPS grow with the depth
/// until QD 8, its latency climbs once the drive is saturated, the large I/O levels off at QD 4.
pub fn ssd_like_qd_sweep(device: &str) -> RunReport {
    let phases = plan(TestName::QdSweep).phases;
    report_phases(TestName::QdSweep, device, "none", |i| {
        let (small, qd) = match phases[i].tag {
            PhaseTag::QdSweep { small, qd } => (small, f64::from(qd)),
            _ => (true, 1.0),
        };
        if small {
            // 8 KiB: IOPS = MB/s * 1e6 / 8192.
            let iops = 90_000.0 * (1.0 - (-qd / 3.0).exp());
            let mbps = iops * 8192.0 / 1e6;
            let p99 = 0.08 * qd.max(1.0) * 90_000.0 / iops.max(1.0);
            (mbps, p99)
        } else {
            (2800.0 * (1.0 - (-qd / 1.2).exp()), 0.9 * qd)
        }
    })
}
