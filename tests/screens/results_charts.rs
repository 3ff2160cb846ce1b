//! The results, the full report and the sweep charts at 80x25 and 132x43: figures never cut, typed values checked, repeats, low counts and knees.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use common::tui::*;
use disktriage::app::{App, Overlay, Screen};
use disktriage::bench::TestName;
use disktriage::event::{Cmd, Msg};
use disktriage::report::ExportFormat;
use ratatui::crossterm::event::KeyCode;

use crate::devices_run::{CDM_MBPS, span};
use crate::{SIZES, snap};

#[test]
fn numbers_are_never_cut_at_80_columns() {
    use disktriage::bench::LatencyPoint;
    use disktriage::bench::RunEvent;
    let mut app = app_with("host-loop-zram", true);
    app.values.repeats = 3;
    keys(&mut app, "2");
    app.picker_test = disktriage::app::index_of(TestName::Cdm);
    keys(&mut app, "r");
    let plan = plan(TestName::Cdm);
    app.update(Msg::RunStarted {
        target: Box::new(target("loop0", "mq-deadline")),
        plan: Box::new(plan.clone()),
        notes: vec![],
    });
    app.update(Msg::Run(Box::new(RunEvent::PhaseStarted {
        index: 7,
        count: 8,
        label: "RND4K Q1T1 write".into(),
        job: Box::new(plan.phases[7].job.clone()),
        probing: false,
    })));
    app.update(Msg::Run(Box::new(RunEvent::Measuring {
        index: 7,
        engine: Box::new(qd1_choice()),
    })));
    // A fast device: 8.5 GB/s at 16,7xx I/Os per 0.25 s; slow tails in milliseconds.
    for i in 0..8 {
        let mut p = span(i as f64 * 0.25, (i + 1) as f64 * 0.25, 2127);
        p.read.ops = 4186;
        p.read.latency = Some(LatencyPoint {
            p50_ns: 12_345_000,
            p99_ns: 123_456_000,
            p999_ns: 1_234_567_000,
            max_ns: 2_345_678_000,
        });
        app.update(Msg::Run(Box::new(RunEvent::Point { index: 7, point: p })));
    }
    app.update(Msg::Temperature {
        device: "loop0".into(),
        at: 1.0,
        celsius: 52,
    });
    let s = screen(&app, 80, 25);
    for whole in [
        "mean 8508.0",
        "IOPS now 16.7k mean 16.7k",
        "p99 123.5",
        "p99.9 1235",
        "max 2346",
        "52 C",
        "ph 8/8",
        "rep 1/3",
    ] {
        assert!(s.contains(whole), "{whole:?} cut or missing:\n{s}");
    }
    snap("running_big_numbers", &app);

    // Results: ten repeats of ten.
    for _ in 0..3 {
        app.update(Msg::RunFinished(Box::new(Ok(report(
            TestName::RandRead,
            "loop0",
            "none",
            500.0,
            1234.5,
        )))));
    }
    app.results.records[0].repeats_wanted = 10;
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    // p99 1234.5 ms in a 6-wide column: whole milliseconds, not "1234.5" cut to "1234.".
    assert!(s.contains(" 1234   3/10 "), "{s}");
}

#[test]
fn typed_values_are_checked_against_the_device_and_the_eta_counts_repeats() {
    use disktriage::app::{Field, fields_for};
    let mut app = app_with("host-loop-zram", true); // loop0: 64 MiB
    keys(&mut app, "2");
    app.picker_test = disktriage::app::index_of(TestName::RandRead);
    key(&mut app, KeyCode::Enter);
    let fields = fields_for(TestName::RandRead);
    let type_into = |app: &mut App, field: Field, text: &str| {
        app.picker_field = fields.iter().position(|f| *f == field).unwrap();
        key(app, KeyCode::Enter);
        keys(app, text);
        key(app, KeyCode::Enter);
    };
    type_into(&mut app, Field::Qd, "0");
    let Some(Overlay::Edit(edit)) = &app.overlay else {
        panic!("QD 0 accepted: {:?}", app.overlay)
    };
    let e = edit.error.as_deref().unwrap_or_default();
    assert!(e.contains("queue depth"), "{e}");
    assert_eq!(app.values.params.qd, None, "the bad value is not kept");
    snap("typed_value_refused", &app);
    key(&mut app, KeyCode::Esc);
    type_into(&mut app, Field::Size, "1G");
    let Some(Overlay::Edit(edit)) = &app.overlay else {
        panic!("a region past the end accepted: {:?}", app.overlay)
    };
    let e = edit.error.as_deref().unwrap_or_default();
    assert!(e.contains("past the end"), "{e}");
    key(&mut app, KeyCode::Esc);
    type_into(&mut app, Field::Size, "32M");
    assert_eq!(app.overlay, None);
    assert_eq!(app.values.params.size, Some(32 << 20));
    // Stepping skips what the device cannot take: 64 MiB is the whole device, not more.
    app.picker_field = fields.iter().position(|f| *f == Field::Size).unwrap();
    for _ in 0..3 {
        key(&mut app, KeyCode::Right);
        assert!(
            app.values.params.size.is_none_or(|s| s <= 64 << 20),
            "{:?}",
            app.values.params.size
        );
    }

    // The ETA counts the repeats still to come.
    type_into(&mut app, Field::Time, "2s");
    type_into(&mut app, Field::Warmup, "0");
    type_into(&mut app, Field::Repeats, "3");
    let cmds = keys(&mut app, "r");
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    let plan = disktriage::bench::build_plan(
        TestName::RandRead,
        &req.params,
        &disktriage::bench::TargetFacts {
            size: 64 << 20,
            logical_block_size: 512,
            max_request: None,
            is_file: false,
        },
        false,
    )
    .unwrap();
    tick(&mut app, 10.0);
    app.update(Msg::RunStarted {
        target: Box::new(target("loop0", "none")),
        plan: Box::new(plan.clone()),
        notes: vec![],
    });
    app.update(Msg::Run(Box::new(
        disktriage::bench::RunEvent::PhaseStarted {
            index: 0,
            count: 1,
            label: "rand-read".into(),
            job: Box::new(plan.phases[0].job.clone()),
            probing: false,
        },
    )));
    tick(&mut app, 10.5);
    let s = screen(&app, 80, 25);
    // 1.5 s of this repeat, then two more of 2 s each.
    assert!(s.contains("ETA 0:06"), "{s}");
    // 4.5 s to go is not 4 s: an ETA rounds up.
    tick(&mut app, 11.5);
    let s = screen(&app, 80, 25);
    assert!(s.contains("ETA 0:05"), "{s}");
}

#[test]
fn quit_asks_before_discarding_unexported_results() {
    let ctrl_c = || {
        Msg::Key(ratatui::crossterm::event::KeyEvent::new(
            KeyCode::Char('c'),
            ratatui::crossterm::event::KeyModifiers::CONTROL,
        ))
    };
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060);
    complete_run(&mut app, "none", 500.0, 0.060);
    assert!(
        keys(&mut app, "q").is_empty(),
        "q does not drop two results"
    );
    let s = screen(&app, 80, 25);
    assert!(s.contains("quit and discard 2 results?"), "{s}");
    assert!(s.contains("e exports"), "{s}");
    snap("quit_discard", &app);
    // Anything else stays.
    assert!(keys(&mut app, "n").is_empty());
    assert_eq!(app.overlay, None);
    assert!(!app.quitting);
    // e from the question goes to the export of an unsaved run.
    keys(&mut app, "q");
    keys(&mut app, "e");
    assert_eq!(app.screen, Screen::Results);
    assert!(matches!(&app.overlay, Some(Overlay::Export(e)) if e.record == 0));
    let cmds = keys(&mut app, "j");
    assert!(matches!(cmds.as_slice(), [Cmd::Export { .. }]), "{cmds:?}");
    app.update(Msg::Exported(Ok("/tmp/x.json".into())));
    // One left unsaved: q asks about one; a second q confirms.
    assert!(keys(&mut app, "q").is_empty());
    assert!(screen(&app, 80, 25).contains("quit and discard 1 result?"));
    assert_eq!(keys(&mut app, "q"), [Cmd::Quit]);
    // Ctrl-C never asks (it restores and exits, like SIGTERM).
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060);
    assert_eq!(app.update(ctrl_c()), [Cmd::Quit]);
    // y confirms too; with everything exported q quits at once.
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060);
    keys(&mut app, "q");
    assert_eq!(keys(&mut app, "y"), [Cmd::Quit]);
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060);
    keys(&mut app, "4");
    keys(&mut app, "e");
    keys(&mut app, "c");
    app.update(Msg::Exported(Ok("/tmp/x.csv".into())));
    assert_eq!(keys(&mut app, "q"), [Cmd::Quit]);
}

#[test]
fn the_test_screen_at_80_columns_shows_every_name_value_and_mark_whole() {
    use disktriage::app::fields_for;
    use disktriage::bench::CATALOG;
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("W writes: destroys") && s.contains("w writes if asked"),
        "{s}"
    );
    for (i, t) in CATALOG.iter().enumerate() {
        let s = screen(&app, 80, 25);
        assert!(s.contains(&format!(" {} ", t.id)), "{}:\n{s}", t.id);
        // A long form scrolls: every row it shows has its value whole.
        let fields = fields_for(t.name);
        let shown: Vec<_> = fields
            .iter()
            .copied()
            .filter(|f| s.contains(&format!("{}  ", f.label())))
            .collect();
        assert!(shown.len() >= fields.len().min(5), "{}:\n{s}", t.id);
        for field in shown {
            let (value, _) = app.values.show(t.name, field);
            assert!(
                s.contains(&value),
                "{} {field:?} {value:?} is cut:\n{s}",
                t.id
            );
        }
        if i + 1 < CATALOG.len() {
            key(&mut app, KeyCode::Down);
        }
    }
}

#[test]
fn quit_says_the_history_keeps_what_it_recorded() {
    // Each finished test asks the loop to record it; the loop says when the history took it.
    let finish = |app: &mut App| {
        let device = app.selected_device().expect("a device").name.clone();
        feed(app, TestName::RandRead, &device, "none", 40, 512.0);
        let cmds = app.update(Msg::RunFinished(Box::new(Ok(report(
            TestName::RandRead,
            &device,
            "none",
            512.0,
            0.060,
        )))));
        cmds.iter()
            .find_map(|c| match c {
                Cmd::RecordHistory { record, runs, .. } => Some((*record, runs.len())),
                _ => None,
            })
            .expect("the finished test is recorded")
    };
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    keys(&mut app, "r");
    let (record, runs) = finish(&mut app);
    assert_eq!((record, runs), (0, 1));
    app.update(Msg::HistoryRecorded { record, runs });
    keys(&mut app, "q");
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("quit? 1 result not exported: the history keeps the figures, not")
            && s.contains("the per-interval series"),
        "{s}"
    );
    assert!(!s.contains("discard"), "{s}");
    // A second test the history did not take (it failed to write): that one is discarded.
    keys(&mut app, "n");
    assert_eq!(app.overlay, None);
    keys(&mut app, "R");
    finish(&mut app);
    keys(&mut app, "q");
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("quit? 2 results not exported: 1 in the history (figures only), 1"),
        "{s}"
    );
    assert!(s.contains("discarded"), "{s}");
}

#[test]
fn a_one_io_run_shows_its_rate_marked_as_a_low_count() {
    // dd prints a rate for one block: so does every screen, and says how thin it is.
    let mut app = app_with("host-loop-zram", true);
    let one = one_io_report();
    finish_with(&mut app, TestName::RandRead, false, &one);
    let run = screen(&app, 80, 25);
    keys(&mut app, "4");
    let results = screen(&app, 80, 25);
    key(&mut app, KeyCode::Enter);
    let full = screen(&app, 132, 43);
    key(&mut app, KeyCode::Esc);
    // 4096 B in 0.896 ms: 4.6 MB/s, 1116 IOPS.
    for s in [&run, &results, &full] {
        assert!(s.contains("4.6"), "no MB/s:\n{s}");
        assert!(s.contains("1 I/O in 0.90 ms: low count"), "no mark:\n{s}");
        assert!(!s.contains("too few"), "{s}");
    }
    assert!(
        run.contains("IOPS mean 1116") && results.contains("1116*"),
        "{run}\n{results}"
    );
    assert!(full.contains("1116 IOPS"), "{full}");
    snap("one_io_results", &app);
    // Compare shows the rates of two thin runs, marked, and judges them as any other.
    finish_with(&mut app, TestName::RandRead, true, &one);
    keys(&mut app, "c");
    let s = screen(&app, 80, 25);
    assert!(s.contains("MB/s") && s.contains("4.6"), "{s}");
    assert!(s.contains("low count"), "{s}");
    assert!(!s.contains("too few"), "{s}");
}

/// rand-read that did one I/O of 4 KiB in 0.896 ms.
fn one_io_report() -> disktriage::bench::RunReport {
    let mut one = report(TestName::RandRead, "loop0", "none", 4.571, 0.002);
    let p = &mut one.outcome.phases[0];
    p.seconds = 0.000896;
    p.rate_seconds = p.seconds;
    let d = if p.read.ops > 0 {
        &mut p.read
    } else {
        &mut p.write
    };
    d.bytes = 4096;
    d.ops = 1;
    d.bytes_per_sec = 4096.0 / 0.000896;
    d.iops = 1.0 / 0.000896;
    if let Some(l) = &mut d.latency {
        l.count = 1;
        l.mean_ns = 2_000.0;
    }
    one
}

#[test]
fn a_repeated_run_shows_figures_over_all_its_repeats() {
    // Two repeats: the first at about 100 MB/s with every I/O at 1 ms, the second at about
    // 300 MB/s with 4 % of its I/Os at 10 ms. Over both: 2 % of the I/Os took 10 ms (p99
    // 10 ms, not the mean 5.5 of the repeats' p99s), and the intervals ran from 95 MB/s (the
    // first repeat's slowest) to 318 MB/s.
    let mut app = app_with("host-loop-zram", true);
    app.values.repeats = 2;
    pick_rand_read(&mut app);
    let cmds = keys(&mut app, "r");
    assert!(matches!(cmds.as_slice(), [Cmd::StartRun(_)]), "{cmds:?}");
    for (mbps, slow) in [(100.0, 0), (300.0, 40)] {
        feed(&mut app, TestName::RandRead, "loop0", "none", 40, mbps);
        let mut r = report(TestName::RandRead, "loop0", "none", mbps, 1.0);
        let p = &mut r.outcome.phases[0];
        let mut d = disktriage::bench::DirStats::default();
        for i in 0..1000 {
            d.record(4096, if i < slow { 10_000_000 } else { 1_000_000 });
        }
        let bytes_per_sec = p.read.bytes_per_sec;
        p.read = disktriage::bench::DirTotals {
            bytes_per_sec,
            iops: bytes_per_sec / 4096.0,
            ..disktriage::bench::DirTotals::over(&d, p.rate_seconds)
        };
        app.update(Msg::RunFinished(Box::new(Ok(r))));
    }
    assert!(!app.running());
    let run = screen(&app, 80, 25);
    assert!(
        run.contains("MB/s mean 200.0 min 95.0 max 318.0"),
        "min/max not over both repeats:\n{run}"
    );
    assert!(
        run.contains("p99 10.00"),
        "p99 not over both repeats:\n{run}"
    );
    let f = app.results.records[0].headline().unwrap();
    assert!((f.p99_ms.unwrap().mean - 10.0).abs() < 0.01, "{f:?}");
    let (lo, hi) = f.mbps_min_max.unwrap();
    assert!(
        (lo - 95.0).abs() < 0.01 && (hi - 318.0).abs() < 0.01,
        "{f:?}"
    );
    keys(&mut app, "4");
    let results = screen(&app, 80, 25);
    assert!(
        results.contains("200.0") && results.contains("10.00"),
        "{results}"
    );
}

#[test]
fn c_on_the_run_screen_compares_the_last_two_runs_even_with_marks() {
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 500.0, 0.060);
    complete_run(&mut app, "none", 510.0, 0.060);
    // Runs 1 and 2 marked A and B on Results.
    keys(&mut app, "4");
    key(&mut app, KeyCode::Up);
    keys(&mut app, " ");
    key(&mut app, KeyCode::Down);
    keys(&mut app, " ");
    assert_eq!(app.results.marks, vec![0, 1]);
    complete_run(&mut app, "none", 520.0, 0.060);
    assert_eq!(app.screen, Screen::Run);
    // The help says what c does here.
    keys(&mut app, "c");
    assert_eq!(app.screen, Screen::Compare);
    assert_eq!(app.comparison(), Some((1, 2)));
    let s = screen(&app, 80, 25);
    assert!(s.contains("A #2") && s.contains("B #3"), "{s}");
    // c on Results still compares the marked runs.
    keys(&mut app, "4");
    keys(&mut app, "c");
    assert_eq!(app.comparison(), Some((0, 1)));
    let s = screen(&app, 80, 25);
    assert!(s.contains("A #1") && s.contains("B #2"), "{s}");
    assert_eq!(app.results.marks, vec![0, 1]);
}

#[test]
fn a_cdm_cell_with_few_ios_keeps_its_figure_as_the_cli_grid_does() {
    // A throttled disk's first CrystalDiskMark cell: 10 requests of 1 MiB in 85 ms. The CLI's
    // grid prints its 123.36 MB/s; the TUI's grid shows the same, marked.
    let mut app = app_with("host-loop-zram", true);
    let mut r = report_phases(TestName::Cdm, "loop0", "none", |i| (100.0 + i as f64, 0.5));
    {
        let p = &mut r.outcome.phases[0];
        p.seconds = 0.085;
        p.rate_seconds = 0.085;
        let d = if p.read.ops > 0 {
            &mut p.read
        } else {
            &mut p.write
        };
        d.ops = 10;
        d.bytes = 10 * p.job.bs;
        d.bytes_per_sec = d.bytes as f64 / 0.085;
        d.iops = 10.0 / 0.085;
    }
    let cell = disktriage::report::cdm_mbps(r.outcome.phases[0].bytes_per_sec() / 1e6);
    assert!(disktriage::report::cdm_grid(&r).contains(&cell));
    finish_with(&mut app, TestName::Cdm, false, &r);
    let run = screen(&app, 132, 43);
    keys(&mut app, "4");
    let results = screen(&app, 132, 43);
    for s in [&run, &results] {
        assert!(s.contains(&format!("{cell}*")), "{cell} missing:\n{s}");
    }
}

#[test]
fn a_cpu_bound_run_says_so_on_results_and_in_the_full_report() {
    let mut app = app_with("host-loop-zram", true);
    let mut r = report(TestName::RandRead, "loop0", "none", 512.0, 0.060);
    r.outcome.phases[0].cpu_bound = true;
    finish_with(&mut app, TestName::RandRead, false, &r);
    keys(&mut app, "4");
    let note = "CPU-bound: the figure may be the tool's, not the drive's";
    let s = screen(&app, 80, 25);
    assert!(s.contains(note), "{s}");
    key(&mut app, KeyCode::Enter);
    assert!(matches!(app.overlay, Some(Overlay::Report { .. })));
    let s = screen(&app, 132, 43);
    assert!(s.contains(&format!("       {note}")), "{s}");
    // A run that waited for the drive says nothing of the kind.
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060);
    keys(&mut app, "4");
    assert!(!screen(&app, 80, 25).contains("CPU-bound"));
}

/// ASCII, box drawing and the CP437 block elements: what the Linux console's fonts have.
fn console_glyph(c: char) -> bool {
    c.is_ascii() || ('\u{2500}'..='\u{257F}').contains(&c) || "█▀▄▌▐░▒▓".contains(c)
}

fn assert_console_glyphs(app: &App) {
    for (w, h) in SIZES {
        for sym in symbols(app, w, h) {
            assert!(
                sym.chars().all(console_glyph),
                "glyph {sym:?} is not on the Linux console"
            );
        }
    }
}

#[test]
fn size_sweep_chart_marks_the_knee_the_cli_reports() {
    let mut app = app_with("host-loop-zram", true);
    let sweep = disk_like_size_sweep("loop0");
    finish_with(&mut app, TestName::SizeSweep, false, &sweep);
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    // One letter per curve, the knee of each in the legend: the knee the CLI prints.
    let cli = disktriage::report::render_run_text(&sweep);
    assert!(
        cli.contains("# knee: fwd_rd 128k, bwd_rd 128k, rnd_rd still rising at 1M"),
        "{cli}"
    );
    // The JSON (and the TUI's export, which is the same text) gives the same knees.
    let json = disktriage::report::render_export(std::slice::from_ref(&sweep), ExportFormat::Json)
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let knees: Vec<(String, serde_json::Value, bool)> = json["knees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["series"].as_str().unwrap().to_string(),
                k["knee"].clone(),
                k["still_rising"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        knees,
        [
            ("fwd_rd".into(), 131072.into(), false),
            ("bwd_rd".into(), 131072.into(), false),
            ("rnd_rd".into(), serde_json::Value::Null, true),
        ]
    );
    for legend in [
        "F forward knee 128k",
        "B backward knee 128k",
        "R random still rising at 1M",
    ] {
        assert!(s.contains(legend), "{legend} missing:\n{s}");
    }
    // The axes say what they measure, the x labels are the request sizes.
    assert!(s.contains("Read MB/s by request size"), "{s}");
    assert!(s.contains("MB/s") && s.contains("size"), "{s}");
    assert!(s.contains("4k") && s.contains("1M"), "{s}");
    // Every measured point keeps its letter where the curves meet (all three level at 512k
    // and 1M): 9 sizes, 9 of each letter between the title and the axis.
    let chart: String = s
        .lines()
        .skip_while(|l| !l.contains("Read MB/s by request size"))
        .skip(1)
        .take_while(|l| !l.contains('└'))
        .collect::<String>()
        .replace("MB/s", "");
    for letter in ['F', 'B', 'R'] {
        assert_eq!(
            chart.matches(letter).count(),
            9,
            "{letter} points hidden:\n{s}"
        );
    }
    snap("sweep_chart", &app);
    // On the console: the same chart in half blocks and letters, no braille.
    app.console = true;
    assert_console_glyphs(&app);
    insta::assert_snapshot!("sweep_chart_console_80x25", screen(&app, 80, 25));
    insta::assert_snapshot!("sweep_chart_console_132x43", screen(&app, 132, 43));
}

#[test]
fn qd_sweep_charts_iops_mbps_and_latency_with_the_knees() {
    let mut app = app_with("host-loop-zram", true);
    let sweep = ssd_like_qd_sweep("loop0");
    finish_with(&mut app, TestName::QdSweep, false, &sweep);
    keys(&mut app, "4");
    let cli = disktriage::report::render_run_text(&sweep);
    let s = screen(&app, 132, 43);
    for (cli_line, legend) in [
        ("Knee Small IOPS=", "S IOPS knee QD "),
        ("Knee Large MBPS=", "L MB/s knee QD "),
    ] {
        let at = cli
            .lines()
            .find(|l| l.starts_with(cli_line))
            .and_then(|l| l.split("@ QD ").nth(1))
            .unwrap_or_else(|| panic!("{cli_line} missing:\n{cli}"));
        assert!(s.contains(&format!("{legend}{at}")), "{legend}{at}:\n{s}");
    }
    for title in [
        "Small random IOPS by QD",
        "Large sequential MB/s by QD",
        "latency ms",
    ] {
        assert!(s.contains(title), "{title} missing:\n{s}");
    }
    assert!(s.contains("M mean") && s.contains("P p99"), "{s}");
    snap("qd_sweep_chart", &app);
    app.console = true;
    assert_console_glyphs(&app);
    insta::assert_snapshot!("qd_sweep_chart_console_80x25", screen(&app, 80, 25));
}

/// Feeds a started multi-phase run its phases up to `upto` (exclusive), each with a few
/// points and its result, and starts the next one.
fn feed_phases(app: &mut App, report: &disktriage::bench::RunReport, upto: usize) {
    use disktriage::bench::RunEvent;
    app.update(Msg::RunStarted {
        target: Box::new(report.target.clone()),
        plan: Box::new(report.plan.clone()),
        notes: vec![],
    });
    let count = report.plan.phases.len();
    for (index, p) in report.outcome.phases.iter().enumerate().take(upto + 1) {
        app.update(Msg::Run(Box::new(RunEvent::PhaseStarted {
            index,
            count,
            label: p.label.clone(),
            job: Box::new(p.job.clone()),
            probing: false,
        })));
        app.update(Msg::Run(Box::new(RunEvent::Measuring {
            index,
            engine: Box::new(qd1_choice()),
        })));
        for i in 0..6 {
            // The phase under way sends its points every 0.25 s up to the screen's 30 s.
            if index == upto {
                tick(app, 30.0 - (6 - i) as f64 * 0.25);
            }
            app.update(Msg::Run(Box::new(RunEvent::Point {
                index,
                point: point(i, p.bytes_per_sec() / 1e6),
            })));
        }
        if index < upto {
            app.update(Msg::Run(Box::new(RunEvent::PhaseFinished {
                index,
                result: Box::new(p.clone()),
            })));
        }
    }
    tick(app, 30.0);
}

#[test]
fn sweeps_and_cdm_draw_their_finished_phases_live() {
    // A size sweep 2/3 through: the sizes done are charted, the rest are not yet.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    app.picker_test = disktriage::app::index_of(TestName::SizeSweep);
    keys(&mut app, "r");
    let sweep = disk_like_size_sweep("loop0");
    feed_phases(&mut app, &sweep, 18);
    let s = screen(&app, 80, 25);
    assert!(s.contains("phase 19/27"), "{s}");
    assert!(s.contains("Read MB/s by request size"), "{s}");
    assert!(
        s.contains("4k") && s.contains("128k") && !s.contains(" 1M"),
        "{s}"
    );
    snap("live_sweep_chart", &app);
    app.console = true;
    assert_console_glyphs(&app);
    insta::assert_snapshot!("live_sweep_chart_console_80x25", screen(&app, 80, 25));

    // CrystalDiskMark: the rows done have figures, the others wait.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    app.picker_test = disktriage::app::index_of(TestName::CdmNvme);
    keys(&mut app, "r");
    let cdm = report_phases(TestName::CdmNvme, "loop0", "none", |i| (CDM_MBPS[i], 0.5));
    feed_phases(&mut app, &cdm, 3);
    let s = screen(&app, 80, 25);
    assert!(s.contains("CrystalDiskMark: cdm-nvme"), "{s}");
    assert!(s.contains("3400.00") && s.contains("1800.00"), "{s}");
    assert!(s.contains("SEQ128K") && !s.contains("450.00"), "{s}");
    snap("live_cdm_grid", &app);
}

#[test]
fn a_test_of_a_known_phase_kind_gets_that_kinds_drawing_whatever_its_name() {
    // seq-read stands in for a new family whose plan is of a kind already drawn: the chart or
    // grid follows the phases' kind (as the report's tables do), not the test's name.
    let mut sweep = disk_like_size_sweep("loop0");
    sweep.test = TestName::SeqRead;
    sweep.plan.test = TestName::SeqRead;
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    app.picker_test = disktriage::app::index_of(TestName::SeqRead);
    keys(&mut app, "r");
    feed_phases(&mut app, &sweep, 18);
    let s = screen(&app, 80, 25);
    assert!(s.contains("Read MB/s by request size"), "{s}");
    app.update(Msg::RunFinished(Box::new(Ok(sweep))));
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    assert!(s.contains("seq-read"), "{s}");
    assert!(s.contains("F forward knee 128k"), "{s}");

    let mut cdm = report_phases(TestName::CdmNvme, "loop0", "none", |i| (CDM_MBPS[i], 0.5));
    cdm.test = TestName::SeqRead;
    cdm.plan.test = TestName::SeqRead;
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    app.picker_test = disktriage::app::index_of(TestName::SeqRead);
    keys(&mut app, "r");
    feed_phases(&mut app, &cdm, 3);
    let s = screen(&app, 80, 25);
    assert!(s.contains("CrystalDiskMark: seq-read"), "{s}");
    assert!(s.contains("3400.00") && s.contains("SEQ128K"), "{s}");
    app.update(Msg::RunFinished(Box::new(Ok(cdm))));
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    assert!(s.contains("CrystalDiskMark: seq-read"), "{s}");
}

#[test]
fn full_report_of_a_repeated_sweep_gives_the_knee_the_chart_marks() {
    let mut app = app_with("host-loop-zram", true);
    app.values.repeats = 2;
    finish_with(
        &mut app,
        TestName::SizeSweep,
        false,
        &disk_like_size_sweep("loop0"),
    );
    keys(&mut app, "4");
    let chart = screen(&app, 80, 25);
    assert!(chart.contains("F forward knee 128k"), "{chart}");
    let record = &app.results.records[0];
    assert_eq!(record.runs.len(), 2);
    let report = record.report_text();
    assert!(
        report.contains("knee of the means: fwd_rd 128k, bwd_rd 128k, rnd_rd still rising at 1M"),
        "{report}"
    );
}

#[test]
fn a_size_sweep_with_writes_charts_reads_and_writes_side_by_side() {
    use disktriage::bench::TargetFacts;
    use disktriage::bench::TestParams;
    use disktriage::bench::build_plan;
    let params = TestParams {
        include_writes: true,
        min_bs: Some(64 << 10),
        max_bs: Some(1 << 20),
        ..Default::default()
    };
    let facts = TargetFacts {
        size: 64 << 20,
        logical_block_size: 512,
        max_request: Some(1280 << 10),
        is_file: false,
    };
    let plan = build_plan(TestName::SizeSweep, &params, &facts, true).unwrap();
    let mut sweep = report_phases(TestName::SizeSweep, "loop0", "none", |_| (1.0, 1.0));
    // Reads level off at 512k; writes, slower, are still climbing at 1M.
    sweep.outcome.phases = plan
        .phases
        .iter()
        .map(|ph| {
            let steps = (ph.job.bs >> 16).ilog2() as f64; // 64k = 0, 1M = 4
            let mbps = if ph.label.contains("_wt") {
                300.0 * (steps + 1.0)
            } else {
                2000.0 - 1000.0 * (-(steps + 1.0)).exp2() * 2.0
            };
            phase_result(ph, mbps, 0.5)
        })
        .collect();
    sweep.plan = plan;
    let mut app = app_with("host-loop-zram", true);
    finish_with(&mut app, TestName::SizeSweep, false, &sweep);
    keys(&mut app, "4");
    let cli = disktriage::report::render_run_text(&sweep);
    assert!(
        cli.contains("# knee: fwd_rd 512k, bwd_rd 512k, rnd_rd 512k, fwd_wt still rising at 1M"),
        "{cli}"
    );
    let s = screen(&app, 132, 43);
    for text in [
        "Read MB/s by request size",
        "Write MB/s by request size",
        "F forward knee 512k",
        "F forward still rising at 1M",
    ] {
        assert!(s.contains(text), "{text} missing:\n{s}");
    }
    snap("sweep_chart_writes", &app);
}

#[test]
fn cli_sweep_tables_end_with_the_knees() {
    let size = disktriage::report::render_run_text(&disk_like_size_sweep("loop0"));
    insta::assert_snapshot!("cli_size_sweep_table", size);
    let qd = disktriage::report::render_run_text(&ssd_like_qd_sweep("loop0"));
    assert!(qd.contains("Knee Small IOPS=83746 @ QD 8"), "{qd}");
    assert!(qd.contains("Knee Large MBPS=2700.11 @ QD 4"), "{qd}");
    insta::assert_snapshot!("cli_qd_sweep_table", qd);
}

#[test]
fn a_qd_sweep_on_results_at_80x25_draws_its_charts_or_says_why_not() {
    // Three runs of the sweep: the table, the detail and the earlier runs b compares with
    // leave the charts a few rows; an admin found three empty frames there.
    let mut app = app_with("host-loop-zram", true);
    let mut sweep = ssd_like_qd_sweep("loop0");
    // A CPU-bound phase: one more note in the text above the charts.
    sweep.outcome.phases[0].cpu_bound = true;
    finish_with(&mut app, TestName::QdSweep, false, &sweep);
    for _ in 0..4 {
        finish_with(&mut app, TestName::QdSweep, true, &sweep);
    }
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    // Each chart has its scale (the plot's rows): 100.0k, 50.0k and 0 on the IOPS axis.
    for label in ["│100.0k│", "│50.0k │", "│0     │", "S IOPS knee QD 8"] {
        assert!(s.contains(label), "{label} missing:\n{s}");
    }
    // The text names what it left out for them, the list how many runs are above.
    assert!(s.contains("more lines not shown"), "{s}");
    assert!(s.contains(" 2 more above (Up/Down, Home) "), "{s}");
    snap("qd_sweep_chart_crowded", &app);
}

#[test]
fn the_full_report_keeps_a_table_row_on_one_line_at_80x25() {
    // CrystalDiskMark's table is 82 columns in the CLI: in the report box (76) each row's
    // last column wrapped onto a line of its own, read as another row.
    let mut app = app_with("host-loop-zram", true);
    let cdm = report_phases(TestName::Cdm, "loop0", "none", |_| (1000.0, 0.5));
    finish_with(&mut app, TestName::Cdm, false, &cdm);
    keys(&mut app, "4");
    key(&mut app, KeyCode::Enter);
    let mut rows = Vec::new();
    for _ in 0..40 {
        rows.extend(
            screen(&app, 80, 25)
                .lines()
                .filter(|l| l.contains("Q8T1") || l.contains("Write ms"))
                .map(String::from),
        );
        key(&mut app, KeyCode::Down);
    }
    assert!(!rows.is_empty(), "the table never showed");
    for row in &rows {
        assert!(
            row.contains("0.167")
                || row.contains("Read ms  Write ms")
                || row.contains("Read ms Write ms"),
            "a row without its last column: {row}"
        );
    }
}

#[test]
fn home_and_end_reach_the_first_and_the_last_run_on_results() {
    let mut app = app_with("host-loop-zram", true);
    let r = report(TestName::RandRead, "loop0", "none", 500.0, 0.06);
    finish_with(&mut app, TestName::RandRead, false, &r);
    for _ in 0..4 {
        finish_with(&mut app, TestName::RandRead, true, &r);
    }
    keys(&mut app, "4");
    assert_eq!(app.results.row, 4);
    key(&mut app, KeyCode::Home);
    assert_eq!(app.results.row, 0, "Home: the first run");
    key(&mut app, KeyCode::End);
    assert_eq!(app.results.row, 4, "End: the last run");
}

#[test]
fn a_finished_sweep_on_the_run_screen_names_the_phase_its_figures_are_of() {
    // The figures under the chart were the last phase's (QD 32 large), labelled "whole run".
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    app.picker_test = disktriage::app::index_of(TestName::QdSweep);
    keys(&mut app, "r");
    let sweep = ssd_like_qd_sweep("loop0");
    let last = sweep.outcome.phases.len() - 1;
    feed_phases(&mut app, &sweep, last);
    app.update(Msg::RunFinished(Box::new(Ok(sweep.clone()))));
    keys(&mut app, "3");
    let s = screen(&app, 80, 25);
    assert!(!s.contains("whole run"), "{s}");
    // The phase is named in the line above ("large sequential QD32 ... phase 12/12").
    assert!(s.contains("  last phase"), "{s}");
    // A single-phase run's figures are the whole run's.
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060);
    keys(&mut app, "3");
    assert!(screen(&app, 80, 25).contains("whole run"));
}

#[test]
fn a_sweep_before_its_first_phase_has_no_empty_field_in_its_header() {
    // "O_DIRECT, , engine auto": the job is not known before the first phase starts.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    app.picker_test = disktriage::app::index_of(TestName::QdSweep);
    keys(&mut app, "r");
    let sweep = ssd_like_qd_sweep("loop0");
    app.update(Msg::RunStarted {
        target: Box::new(sweep.target.clone()),
        plan: Box::new(sweep.plan.clone()),
        notes: vec![],
    });
    tick(&mut app, 0.5);
    let s = screen(&app, 80, 25);
    assert!(!s.contains(", ,"), "{s}");
    assert!(s.contains(" O_DIRECT, engine auto"), "{s}");
}
