//! The `disktriage` binary: parse arguments, run, turn an error chain into a message and an
//! exit code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = disktriage::cli::Cli::parse();
    match disktriage::run(cli) {
        Ok(code) => code,
        Err(err) => {
            // Not eprintln!: it panics when stderr is a terminal that hung up.
            disktriage::write_stderr(&format!("disktriage: {err:#}\n"));
            ExitCode::FAILURE
        }
    }
}
