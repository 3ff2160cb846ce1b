//! The `disktriage` binary: parse arguments, run, turn an error chain into a message and an
//! exit code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = disktriage::cli::Cli::parse();
    match disktriage::run(cli) {
        Ok(code) => code,
        Err(err) => {
            // Control characters (a file name, a journal value) would drive the terminal. Not
            // eprintln!: it panics when stderr is a terminal that hung up.
            let text = disktriage::model::text::neutralize_controls(&format!("{err:#}"));
            disktriage::report::output::write_stderr(&format!("disktriage: {text}\n"));
            // A usage error found after parsing exits as clap's own do.
            ExitCode::from(disktriage::commands::exit_status_of(&err))
        }
    }
}
