//! The long run of the parsers' property tests (`tests/props/`): the same properties as
//! `tests/behaviour/parser_props.rs`, with many more generated cases.
//!
//!     cargo bench --bench parser_props                 # 100,000 cases per property
//!     cargo bench --bench parser_props -- 1000000      # cases per property
//!     cargo bench --bench parser_props -- 20000 smart  # only properties whose name matches
//!
//! Costly properties (the sysfs reader writes a file tree per case) run `cases / cost`
//! cases. Prints each property's case count, time and slowest single case, then the total;
//! exits with status 1 and proptest's shrunk input when a property fails.

#![allow(clippy::unwrap_used)] // a benchmark harness: a panic is the failure report

#[path = "../tests/props/mod.rs"]
mod props;

use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    // `cargo bench` passes `--bench`; everything else that is not a flag is ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let cases: u32 = match args.first() {
        Some(n) => n
            .parse()
            .unwrap_or_else(|_| panic!("not a case count: {n:?}")),
        None => 100_000,
    };
    let filter = args.get(1).map(|f| f.to_lowercase());

    println!(
        "{:<72} {:>9} {:>9} {:>10}",
        "property", "cases", "seconds", "slowest"
    );
    let start = Instant::now();
    let mut total = 0u64;
    let mut failed = 0;
    for p in props::ALL {
        if filter
            .as_ref()
            .is_some_and(|f| !p.name.to_lowercase().contains(f))
        {
            continue;
        }
        let began = Instant::now();
        match (p.check)((cases / p.cost).max(1)) {
            Ok(outcome) => {
                total += u64::from(outcome.cases);
                println!(
                    "{:<72} {:>9} {:>9.1} {:>8.2}ms",
                    p.name,
                    outcome.cases,
                    began.elapsed().as_secs_f64(),
                    outcome.slowest.as_secs_f64() * 1e3
                );
            }
            Err(report) => {
                failed += 1;
                println!(
                    "{:<72} FAILED after {:.1} s",
                    p.name,
                    began.elapsed().as_secs_f64()
                );
                println!("{report}");
            }
        }
    }
    println!(
        "{:<72} {:>9} {:>9.1}",
        "total",
        total,
        start.elapsed().as_secs_f64()
    );
    if failed > 0 {
        println!("{failed} properties failed");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
