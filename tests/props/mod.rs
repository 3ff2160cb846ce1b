//! Property-based robustness checks for every parser of bytes that come from outside the
//! program: sysfs and procfs text, drive pages, sense data and smartctl's JSON and text.
//!
//! The generators are not only random bytes: they mutate the pages captured from the QEMU
//! lab's drives (`tests/fixtures/pages/`), build mountinfo, swaps and `stat` lines field by
//! field with the kernel's escapes, write sysfs trees with hostile attribute text, and mutate
//! smartctl's JSON node by node (wrong types, missing keys, huge arrays, out-of-range numbers)
//! and real drives' smartctl text line by line.
//!
//! Each property says: the parser returns (no panic, no hang), a rejection is the parser's
//! typed error, and what it returns obeys the invariants a user relies on (display text holds
//! no control characters, counts fit the page, temperatures are plausible or absent,
//! well-formed input round-trips).
//!
//! The same properties serve two runners: `tests/behaviour/parser_props.rs` runs a few cases of
//! each in the normal `cargo test`, and `benches/parser_props.rs` (`cargo bench --bench
//! parser_props`) runs a long campaign with a case count per parser and its timing.

#![allow(dead_code)] // the test and the bench use different parts
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

pub mod json;
pub mod pages;
pub mod smartctl_text;
pub mod strategies;
pub mod text;
pub mod tree;

use std::cell::Cell;
use std::time::{Duration, Instant};

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseResult, TestRunner};

/// What one property run did.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    /// Generated cases that passed.
    pub cases: u32,
    /// The slowest single case (generation excluded): a parser that loops or does
    /// super-linear work shows up here long before a test times out.
    pub slowest: Duration,
    /// Cases the parser accepted (see `accepted`).
    pub accepted: u32,
}

/// One parser's property.
pub struct Property {
    pub name: &'static str,
    /// Relative cost: the long run gives this property `cases / cost` cases (the sysfs tree
    /// property writes files for every case).
    pub cost: u32,
    /// Runs `cases` generated cases; `Err` holds proptest's report with the shrunk input.
    pub check: fn(u32) -> Result<Outcome, String>,
}

/// Every property, in the order they are reported.
pub const ALL: &[Property] = &[
    Property {
        name: "unescape_octal",
        cost: 1,
        check: text::unescape_octal,
    },
    Property {
        name: "neutralize_controls",
        cost: 1,
        check: text::neutralize_controls,
    },
    Property {
        name: "clean_text",
        cost: 1,
        check: text::clean_text,
    },
    Property {
        name: "parse_mountinfo",
        cost: 1,
        check: text::mountinfo,
    },
    Property {
        name: "parse_swaps",
        cost: 1,
        check: text::swaps,
    },
    Property {
        name: "sysfs values (flag, number, dev, stat, inflight, scheduler, write_cache)",
        cost: 1,
        check: text::sysfs_values,
    },
    Property {
        name: "parse_stat_start_time",
        cost: 1,
        check: text::stat_start_time,
    },
    Property {
        name: "parse_vpd_serial",
        cost: 1,
        check: text::vpd_serial,
    },
    Property {
        name: "sysfs reader (read_device, inventory)",
        cost: 25,
        check: tree::read_device,
    },
    Property {
        name: "ATA IDENTIFY",
        cost: 1,
        check: pages::ata_identify,
    },
    Property {
        name: "ATA SMART data + thresholds + verdict",
        cost: 1,
        check: pages::ata_smart,
    },
    Property {
        name: "SCSI sense + ATA/SCSI outcome",
        cost: 1,
        check: pages::sense,
    },
    Property {
        name: "SCSI caching mode page",
        cost: 1,
        check: pages::caching_page,
    },
    Property {
        name: "NVMe Identify Controller",
        cost: 2,
        check: pages::nvme_identify,
    },
    Property {
        name: "NVMe SMART/Health log + verdict",
        cost: 1,
        check: pages::nvme_health,
    },
    Property {
        name: "smartctl JSON + verdict",
        cost: 2,
        check: json::smartctl,
    },
    Property {
        name: "ATA SMART logs (error, self-test, extended) + status byte",
        cost: 1,
        check: pages::ata_logs,
    },
    Property {
        name: "NVMe Error Information + Device Self-test logs",
        cost: 1,
        check: pages::nvme_logs,
    },
    Property {
        name: "smartctl JSON logs",
        cost: 2,
        check: json::smartctl_logs,
    },
    Property {
        name: "smartctl text + logs + verdict",
        cost: 2,
        check: smartctl_text::smartctl_text,
    },
    Property {
        name: "drive cache vs kernel flush policy",
        cost: 1,
        check: text::cache_status,
    },
];

/// Runs `cases` cases of `test` on values of `strategy`, timing each case.
pub fn run<S: Strategy>(
    cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> TestCaseResult,
) -> Result<Outcome, String> {
    let config = Config {
        cases,
        // Failures become unit tests in the parser's module; no regression files.
        failure_persistence: None,
        // Shrink far enough that the report is the minimal input, which becomes the unit
        // test of the fix.
        max_shrink_iters: 20_000,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    ACCEPTED.set(0);
    let slowest = Cell::new(Duration::ZERO);
    let passed = Cell::new(0u32);
    runner
        .run(&strategy, |value| {
            let start = Instant::now();
            let result = test(value);
            slowest.set(slowest.get().max(start.elapsed()));
            if result.is_ok() {
                passed.set(passed.get() + 1);
            }
            result
        })
        .map_err(|e| e.to_string())?;
    Ok(Outcome {
        cases: passed.get().min(cases),
        slowest: slowest.get(),
        accepted: ACCEPTED.get(),
    })
}

thread_local! {
    static ACCEPTED: Cell<u32> = const { Cell::new(0) };
}

/// Counts a case the parser accepted, so that a property whose generator stops reaching the
/// decoder behind the length and checksum tests fails instead of passing on rejections.
pub fn accepted() {
    ACCEPTED.set(ACCEPTED.get() + 1);
}

/// Fails a run in which fewer than one case in 20 was accepted.
pub fn expect_accepted(outcome: Result<Outcome, String>, what: &str) -> Result<Outcome, String> {
    let o = outcome?;
    if o.accepted * 20 < o.cases {
        return Err(format!(
            "only {} of {} generated {what} were accepted: the generator no longer reaches \
             the decoder",
            o.accepted, o.cases
        ));
    }
    Ok(o)
}

/// True when `s` holds no character that could drive a terminal.
pub fn display_safe(s: &str) -> bool {
    !s.chars().any(char::is_control)
}

/// The range of drive temperatures the program shows; anything else is a broken sensor or
/// garbage and must come out as "unknown".
pub fn plausible_celsius(t: Option<i64>) -> bool {
    t.is_none_or(|t| (-40..=125).contains(&t))
}
