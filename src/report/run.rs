//! Headless output of a test run: the summary, JSON (summary and per-interval series), CSV
//! (the series) and the equivalent fio command lines. Results are laid out by the kind of
//! their phases (`PhaseTag`, `results_text`), not by the test that planned them.
//!
//! Units: MB/s (10^6 B/s), with MiB/s beside it where both help; latency in ms in text, ns in
//! JSON. A buffered run says BUFFERED in every format.
//!
//! One file per format over `shared`: `text` (with the tables `metadata`, `size_scaling`,
//! `qd_scaling`, `cdm`), `json`, `csv`, `fio`. They never point up at this file, which only
//! names what the crate uses.

mod cdm;
mod csv;
mod fio;
mod json;
mod metadata;
mod qd_scaling;
mod shared;
mod size_scaling;
mod text;

pub use cdm::{cdm_grid, cdm_iops, cdm_mbps, cdm_ms};
pub use csv::render_csv;
pub use fio::{fio_commands, report_fio_commands};
pub use json::{REPEATS_JSON_SCHEMA, json_safe, render_json, render_repeats_json};
pub use metadata::metadata_table;
pub use qd_scaling::qd_table;
pub use shared::{
    CPU_BOUND_NOTE, chart_time_base, others_line, phase_engine_label, rewrite_rates_note,
    rewrite_time_base, scaling_curves,
};
pub use size_scaling::size_table;
pub use text::{render_repeats_text, render_text};

pub use crate::bench::results::outcome::{
    MIN_RATE_OPS, MIN_RATE_SECONDS, low_count, low_count_note, rate_measured, rate_settled,
    time_base,
};

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::bench::exec::engines::{SYNC, URING};
    use crate::bench::exec::probe as engine;
    use crate::bench::plan::TimeBase;
    use crate::bench::plan::params::EngineKind;
    use crate::bench::plan::test_name::TestName;
    use crate::bench::results::engine_choice::{EngineProbe, ProbeFigures};
    use crate::bench::results::outcome::RUN_JSON_SCHEMA;
    use crate::bench::results::outcome::{
        DirTotals, PhaseResult, RunOutcome, RunReport, TargetClass, TargetInfo,
    };
    use crate::bench::results::stats::LatencySummary;
    use crate::sys::host::HostInfo;

    use crate::bench::catalog::build::build_plan;
    use crate::bench::plan::TargetFacts;
    use crate::bench::plan::params::TestParams;
    use crate::bench::results::stats::{BoundedSeries, LATENCY_DEFINITION};
    use std::path::PathBuf;

    /// A 1 GiB block device of 512-byte sectors.
    fn gib_device() -> TargetFacts {
        TargetFacts {
            size: 1 << 30,
            logical_block_size: 512,
            max_request: None,
            is_file: false,
        }
    }

    /// A finished rand-read at `qd` with `engine`, on zram0 (other modules' tests use it).
    pub(crate) fn report(qd: u32, engine: EngineKind, fixed_buffers: bool) -> RunReport {
        let facts = gib_device();
        let params = TestParams {
            qd: Some(qd),
            ..TestParams::default()
        };
        let plan = build_plan(TestName::RandRead, &params, &facts, false).unwrap();
        let phase = &plan.phases[0];
        let figures = |iops| {
            Some(ProbeFigures {
                iops,
                cpu_us_per_io: 2.0,
            })
        };
        let choice = engine::choose(EngineProbe {
            window_s: 0.2,
            total_s: 0.6,
            set_aside: 0,
            uring: figures(if engine == URING { 9e5 } else { 1e5 }),
            sync: figures(if engine == SYNC { 9e5 } else { 1e5 }),
        });
        let none = DirTotals::default();
        let result = PhaseResult {
            label: phase.label.clone(),
            tag: phase.tag.clone(),
            job: phase.job.clone(),
            engine,
            engine_choice: choice,
            io_threads: if engine == SYNC { qd } else { 1 },
            fixed_buffers,
            seconds: 10.0,
            time_base: TimeBase::Elapsed,
            rate_seconds: 10.0,
            cpu_seconds: 1.0,
            cpu_wait_seconds: 0.0,
            cpu_bound: false,
            read: none.clone(),
            write: none,
            workers: Vec::new(),
            series: BoundedSeries::new(4),
            witness: None,
            witness_note: None,
            others: Vec::new(),
            failure: None,
            setup_error: None,
            stopped: false,
        };
        RunReport {
            schema: RUN_JSON_SCHEMA,
            tool: "test".into(),
            started_unix: 0,
            host: HostInfo::default(),
            test: TestName::RandRead,
            target: TargetInfo {
                path: PathBuf::from("/dev/zram0"),
                kind: TargetClass::BlockDevice,
                device: Some("zram0".into()),
                size_bytes: 1 << 30,
                logical_block_size: 4096,
                physical_block_size: None,
                model: None,
                transport: None,
                rotational: None,
                scheduler: None,
                kernel_write_cache: None,
                created: false,
                link_ceiling: None,
            },
            plan,
            outcome: RunOutcome {
                engine,
                latency_definition: LATENCY_DEFINITION,
                notes: Vec::new(),
                background: None,
                phases: vec![result],
                stopped: false,
            },
            notes: Vec::new(),
        }
    }

    /// `report` turned into a finished rand-write with `--preserve`, with its witness.
    fn rewrite_report() -> RunReport {
        let mut r = report(4, SYNC, false);
        let params = TestParams {
            qd: Some(4),
            preserve: true,
            ..TestParams::default()
        };
        let facts = gib_device();
        r.test = TestName::RandWrite;
        r.plan = build_plan(TestName::RandWrite, &params, &facts, true).unwrap();
        let p = &mut r.outcome.phases[0];
        p.label = r.plan.phases[0].label.clone();
        p.job = r.plan.phases[0].job.clone();
        // 10 s in all, the writes in flight for 5 of them: the rates are over those 5.
        p.time_base = TimeBase::WriteBusy;
        p.rate_seconds = 5.0;
        p.write = DirTotals {
            bytes: 4096 * 1000,
            ops: 1000,
            bytes_per_sec: 819_200.0,
            iops: 200.0,
            ..DirTotals::default()
        };
        p.witness = Some(crate::bench::results::outcome::Witness {
            source: "/sys/dev/block/7:0/stat (loop0)".into(),
            read_bytes: 4096 * 1000,
            write_bytes: 4096 * 1000,
            read_ios: 1000,
            write_ios: 1000,
            read_merges: 0,
            write_merges: 0,
            read_back_bytes: 4096 * 1000,
            read_back_ios: 1000,
            bytes_diff_pct: 0.0,
            ios_diff_pct: 0.0,
            agrees: true,
        });
        r
    }

    #[test]
    fn a_rewrite_says_so_in_every_output_and_its_fio_line_only_reads() {
        let r = rewrite_report();
        let text = render_text(&r);
        assert!(
            text.contains("note:  rewrite of existing data (--preserve)"),
            "{text}"
        );
        assert!(
            text.contains("rewrite of existing data, bs 4k, QD4, 1 worker, random write"),
            "{text}"
        );
        assert!(
            text.contains(
                "(its reads include the 4096000 bytes in 1000 reads this rewrite made of the \
                 blocks it wrote back: compared, though not in the figures above)"
            ),
            "{text}"
        );
        let csv = render_csv(&r);
        assert!(
            csv.starts_with("# rewrite of existing data (--preserve)"),
            "{csv}"
        );
        let json: serde_json::Value = serde_json::from_str(&render_json(&r).unwrap()).unwrap();
        assert_eq!(json["plan"]["data"]["kind"], "rewrite");
        assert_eq!(json["plan"]["phases"][0]["job"]["rewrite"], true);
        assert_eq!(
            json["outcome"]["phases"][0]["witness"]["read_back_ios"],
            1000
        );
        // fio cannot rewrite in place: never a writing job. Under --engine auto (the second
        // command commented out) every uncommented line is the read-only job.
        let planned = fio_commands(&r.plan, &r.target.path, None);
        let commands: Vec<&str> = planned.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(commands.len(), 1, "{planned}");
        assert!(planned.contains("\n# fio --name=rand-write"), "{planned}");
        for fio in [
            fio_commands(&r.plan, &r.target.path, Some(&r.outcome)),
            planned.clone(),
            report_fio_commands(&r).join("\n"),
        ] {
            assert!(
                fio.contains(
                    "# rewrite of existing data: fio has no read-then-rewrite mode, and its \
                     write jobs destroy the data. NOT THE SAME TEST"
                ),
                "{fio}"
            );
            let cmd = fio.lines().find(|l| l.starts_with("fio ")).unwrap();
            assert!(cmd.contains("--rw=randread"), "{cmd}");
            assert!(cmd.ends_with(" --readonly"), "{cmd}");
            assert!(!cmd.contains("--sync="), "{cmd}");
        }
        // A plain write test's fio line is unchanged: it writes.
        let plain = fio_commands(
            &build_plan(
                TestName::RandWrite,
                &TestParams::default(),
                &TargetFacts {
                    size: 1 << 30,
                    logical_block_size: 512,
                    max_request: None,
                    is_file: false,
                },
                true,
            )
            .unwrap(),
            std::path::Path::new("/dev/loop0"),
            None,
        );
        assert!(
            plain.contains("--rw=randwrite") && !plain.contains("readonly"),
            "{plain}"
        );
    }

    #[test]
    fn a_rewrite_is_rated_over_its_write_time_in_every_output() {
        let mut r = rewrite_report();
        // One interval: 1 MB rewritten in 0.25 s, its writes in flight for 0.125 s.
        let p = &mut r.outcome.phases[0];
        p.series = crate::bench::results::stats::BoundedSeries::new(4);
        p.series.push(crate::bench::results::stats::IntervalPoint {
            start_s: 0.0,
            end_s: 0.25,
            read: Default::default(),
            write: crate::bench::results::stats::DirPoint {
                bytes: 1_000_000,
                ops: 250,
                latency: None,
            },
            busy_s: Some(0.125),
        });
        let text = render_text(&r);
        // 4096000 bytes over the 5 s of writes, not over the 10 s of the phase.
        assert!(
            text.contains("write         0.8 MB/s (0.8 MiB/s)         200 IOPS  3.9 MiB in 5.00 s"),
            "{text}"
        );
        assert!(
            text.contains(
                "       rewrite of existing data: only the writes are timed; rates are over the \
                 5.000 s the writes took (with its reads the phase took 5.000 s more)"
            ),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&render_json(&r).unwrap()).unwrap();
        let phase = &json["outcome"]["phases"][0];
        assert_eq!(phase["time_base"], "write-busy");
        assert_eq!(phase["rate_seconds"], 5.0);
        assert_eq!(phase["seconds"], 10.0);
        assert_eq!(phase["write"]["bytes_per_sec"], 819_200.0);
        assert_eq!(phase["series"]["points"][0]["busy_s"], 0.125);
        // The CSV's interval: 1 MB over its 0.125 s of writes, 8 MB/s, with that time base.
        let csv = render_csv(&r);
        assert!(
            csv.contains(
                "# phase 0 rand-write: rewrite of existing data: only the writes are timed; \
                 rates are over the 5.000 s"
            ),
            "{csv}"
        );
        let row = csv
            .lines()
            .find(|l| l.starts_with("0,rand-write,"))
            .unwrap();
        let cols: Vec<&str> = row.split(',').collect();
        assert_eq!(cols[13..17], ["1000000", "250", "8.000", "2000.0"], "{row}");
        assert_eq!(cols.last(), Some(&"0.125000"), "{row}");
        // Results, the history and Compare read the figures from here: the same 0.8192 MB/s.
        let f = crate::bench::analysis::figures::figures(std::slice::from_ref(&r));
        assert_eq!(f[0].mbps.mean, 0.8192);
        assert_eq!(f[0].iops.mean, 200.0);
        assert_eq!((f[0].seconds, f[0].time_base), (5.0, TimeBase::WriteBusy));
        // A plain phase says nothing of a time base.
        let plain = report(4, SYNC, false);
        assert!(!render_text(&plain).contains("only the writes are timed"));
        assert!(rewrite_time_base(&plain.outcome.phases[0]).is_none());
    }

    #[test]
    fn a_counted_rewrite_says_its_time_includes_the_reads_and_its_mean_does_not() {
        let mut r = rewrite_report();
        let p = &mut r.outcome.phases[0];
        p.job.qd = 1;
        p.job.ops_per_worker = Some(1000);
        p.write.latency = Some(LatencySummary {
            count: 1000,
            min_ns: 100_000,
            mean_ns: 4_000_000.0,
            p50_ns: 3_000_000,
            p90_ns: 5_000_000,
            p99_ns: 9_000_000,
            p999_ns: 9_500_000,
            max_ns: 10_000_000,
        });
        let text = render_text(&r);
        assert!(
            text.contains(
                "1000 rewrites of 4096 bytes: 5.000 s of writes, 4.000 ms per write on average \
                 (10.000 s with their reads)"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_short_run_shows_its_rate_and_says_the_count_is_low_in_every_output() {
        // "read 10.0 MiB: 10 I/Os in 11.12 ms (too few for MB/s or IOPS)" hid the rate.
        let mut r = report(1, SYNC, false);
        let p = &mut r.outcome.phases[0];
        p.seconds = 0.01112;
        p.rate_seconds = 0.01112;
        let mut d = crate::bench::results::stats::DirStats::default();
        for _ in 0..10 {
            d.record(1 << 20, 1_100_000);
        }
        p.read = DirTotals::over(&d, p.rate_seconds);
        p.series
            .push(crate::bench::results::stats::IntervalPoint::from_stats(
                0.0,
                0.01112,
                &crate::bench::results::stats::IoStats::default(),
                None,
            ));
        let text = render_text(&r);
        let read = text.lines().find(|l| l.starts_with("read")).unwrap();
        // 10 MiB in 11.12 ms: 943.0 MB/s, 899 IOPS.
        assert!(
            read.contains("943.0 MB/s") && read.contains("899 IOPS"),
            "{text}"
        );
        assert!(read.contains("(10 I/Os in 11.12 ms: low count)"), "{text}");
        assert!(!text.contains("too few"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&render_json(&r).unwrap()).unwrap();
        let read = &json["outcome"]["phases"][0]["read"];
        assert_eq!(read["low_count"], true, "{read}");
        assert!(read["bytes_per_sec"].as_f64().unwrap() > 9e8, "{read}");
        assert!(read.get("latency_buckets").is_none(), "{read}");
        let csv = render_csv(&r);
        assert!(
            csv.contains("# phase 0 rand-read: 10 I/Os in 11.12 ms: low count"),
            "{csv}"
        );
        // Enough I/Os: no mark anywhere.
        let mut d = crate::bench::results::stats::DirStats::default();
        for _ in 0..100 {
            d.record(1 << 20, 1_100_000);
        }
        r.outcome.phases[0].read = DirTotals::over(&d, 0.01112);
        assert!(!render_text(&r).contains("low count"));
        assert!(!render_csv(&r).contains("low count"));
        assert!(!render_json(&r).unwrap().contains("\"low_count\": true"));
    }

    #[test]
    fn the_results_table_follows_the_kind_of_phases_not_the_test() {
        // A new test that plans queue-depth phases gets the queue-depth table, with no arm.
        let mut r = report(1, SYNC, false);
        let facts = gib_device();
        let params = TestParams {
            qds: Some(vec![1, 4]),
            ..TestParams::default()
        };
        r.plan = build_plan(TestName::QdSweep, &params, &facts, false).unwrap();
        let ran = r.outcome.phases[0].clone();
        r.outcome.phases = r
            .plan
            .phases
            .iter()
            .map(|ph| PhaseResult {
                label: ph.label.clone(),
                tag: ph.tag.clone(),
                job: ph.job.clone(),
                ..ran.clone()
            })
            .collect();
        assert_eq!(r.test, TestName::RandRead);
        let text = render_text(&r);
        assert!(text.contains("Maximum Small IOPS"), "{text}");
        assert!(!text.contains("how:"), "not a phase at a time: {text}");
    }

    #[test]
    fn the_commented_out_alternative_is_commented_out_whole() {
        // seq-read at QD4 under auto: the psync alternative's note and command are both
        // commented out, or a pasted script runs both jobs.
        let plan = build_plan(
            TestName::SeqRead,
            &TestParams {
                qd: Some(4),
                ..TestParams::default()
            },
            &TargetFacts {
                size: 1 << 30,
                logical_block_size: 512,
                max_request: None,
                is_file: false,
            },
            false,
        )
        .unwrap();
        let fio = fio_commands(&plan, std::path::Path::new("/dev/loop0"), None);
        let commands: Vec<&str> = fio.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(commands.len(), 1, "{fio}");
        assert!(commands[0].contains("--ioengine=io_uring"), "{fio}");
        assert!(
            fio.contains("\n# fio --name=seq-read --filename=/dev/loop0 --ioengine=psync"),
            "{fio}"
        );
    }

    #[test]
    fn fio_export_repeats_the_engine_that_ran() {
        // Sync threads: fio's psync, one thread per outstanding I/O.
        let r = report(8, SYNC, false);
        let fio = fio_commands(&r.plan, &r.target.path, Some(&r.outcome));
        let lines: Vec<&str> = fio.lines().collect();
        assert!(
            lines[0]
                .starts_with("# rand-read: disktriage used sync (8 pread threads) - auto: sync"),
            "{fio}"
        );
        assert!(
            lines[1].starts_with(
                "fio --name=rand-read --filename=/dev/zram0 --ioengine=psync --direct=1 \
                 --rw=randread --bs=4096 --iodepth=1 --numjobs=8 --thread --group_reporting"
            ),
            "{fio}"
        );
        assert_eq!(report_fio_commands(&r), vec![lines[1].to_string()]);
        // io_uring: the same depth, --fixedbufs --registerfiles only when they were registered.
        let r = report(32, URING, false);
        let fio = report_fio_commands(&r).join("\n");
        assert!(
            fio.contains("--ioengine=io_uring --direct=1 --rw=randread --bs=4096 --iodepth=32 --numjobs=1 --iodepth_batch_complete_min=4 --group_reporting"),
            "{fio}"
        );
        assert!(!fio.contains("fixedbufs"), "{fio}");
        let r = report(32, URING, true);
        let fio = report_fio_commands(&r).join("\n");
        assert!(
            fio.contains(
                "--iodepth=32 --numjobs=1 --fixedbufs --registerfiles \
                 --iodepth_batch_complete_min=4 --group_reporting"
            ),
            "{fio}"
        );
        // Submission stays one I/O at a time.
        assert!(!fio.contains("--iodepth_batch_submit"), "{fio}");
        assert!(
            fio.contains("--time_based --runtime=10000ms --ramp_time=1000ms"),
            "{fio}"
        );
    }

    #[test]
    fn huge_page_buffers_are_named_in_every_output_and_in_the_fio_line() {
        // The default: ordinary pages, as dd's and fio's; nothing to say, fio's default memory.
        let plain = report(32, URING, true);
        assert!(!plain.plan.huge_pages);
        assert!(!render_text(&plain).contains("huge"));
        assert!(!report_fio_commands(&plain).join("\n").contains("--mem="));
        let mut r = report(32, URING, true);
        r.plan.huge_pages = true;
        let text = render_text(&r);
        assert!(
            text.contains("O_DIRECT, buffers in huge pages, io_uring (fixed buffers)"),
            "{text}"
        );
        assert!(render_csv(&r).contains("# buffers in huge pages (--huge-pages)"));
        let json: serde_json::Value = serde_json::from_str(&render_json(&r).unwrap()).unwrap();
        assert_eq!(json["plan"]["huge_pages"], true);
        // fio's huge pages: 4 KiB x QD32 + a page fits one 2 MiB page per job.
        let fio = report_fio_commands(&r).join("\n");
        assert!(
            fio.contains("--fixedbufs --registerfiles --mem=mmaphuge"),
            "{fio}"
        );
        assert!(fio.contains("--mem=mmaphuge takes 1 huge page(s)"), "{fio}");
        // 1 MiB requests on 8 pread threads: 8 jobs of 1 MiB + a page, a 2 MiB page each.
        let facts = gib_device();
        let params = TestParams {
            bs: Some(1 << 20),
            qd: Some(8),
            engine: SYNC,
            huge_pages: true,
            ..TestParams::default()
        };
        let plan = build_plan(TestName::SeqRead, &params, &facts, false).unwrap();
        assert!(
            plan.notes
                .iter()
                .any(|n| n == crate::bench::plan::HUGE_PAGES_NOTE),
            "{:?}",
            plan.notes
        );
        let fio = fio_commands(&plan, std::path::Path::new("/dev/sdx"), None);
        assert!(fio.contains("takes 8 huge page(s)"), "{fio}");
        assert!(fio.contains("--thread --mem=mmaphuge"), "{fio}");
    }

    #[test]
    fn every_output_names_the_engine_and_why() {
        let r = report(8, SYNC, false);
        let text = render_text(&r);
        assert!(
            text.contains("how:   O_DIRECT, sync (8 pread threads), bs 4k, QD8"),
            "{text}"
        );
        assert!(
            text.contains("engine auto: sync (pread/pwrite threads) 900k IOPS at 2.00 us CPU/IO vs io_uring 100k IOPS"),
            "{text}"
        );
        assert!(
            text.contains("after a 1.0 s warm-up (discarded; its first 0.60 s probed the engines)"),
            "{text}"
        );
        let csv = render_csv(&r);
        assert!(
            csv.contains("# phase 0 rand-read: engine sync (8 pread threads) - auto: sync"),
            "{csv}"
        );
        assert!(csv.contains("# latency: total: "), "{csv}");
        let json: serde_json::Value = serde_json::from_str(&render_json(&r).unwrap()).unwrap();
        let p = &json["outcome"]["phases"][0];
        assert_eq!(p["engine"], "sync");
        assert_eq!(p["engine_choice"]["asked"], "auto");
        assert_eq!(p["engine_choice"]["probe"]["sync"]["iops"], 9e5);
        assert!(
            json["outcome"]["latency_definition"]
                .as_str()
                .unwrap()
                .starts_with("total")
        );
        assert!(
            json["fio_commands"][0]
                .as_str()
                .unwrap()
                .contains("--ioengine=psync")
        );
    }
}
