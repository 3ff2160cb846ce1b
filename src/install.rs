//! What an admin installs beside the binary: the manual page and the shell completion scripts.
//! Both are generated from the clap definition in `cli`, so they cannot disagree with the
//! options the binary takes. `assets/disktriage.1` is this module's man page, checked for
//! staleness by `tests/assets/`.

use std::io::Write;

use anyhow::Context;
use clap::CommandFactory;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, roman};

use crate::cli::{Cli, CompletionShell, DEFAULT_JOURNAL_DIR};

/// The completion script for `shell`, for `disktriage` on the PATH.
pub fn completion_script(shell: CompletionShell) -> String {
    let generator = match shell {
        CompletionShell::Bash => clap_complete::Shell::Bash,
        CompletionShell::Zsh => clap_complete::Shell::Zsh,
        CompletionShell::Fish => clap_complete::Shell::Fish,
    };
    let mut cmd = visible_command();
    let mut script = Vec::new();
    clap_complete::generate(generator, &mut cmd, "disktriage", &mut script);
    String::from_utf8_lossy(&script).into_owned()
}

/// The command without what `--help` hides (some shells' completion would offer it).
fn visible_command() -> clap::Command {
    let full = Cli::command();
    let mut cmd = clap::Command::new("disktriage").version(env!("CARGO_PKG_VERSION"));
    if let Some(about) = full.get_about() {
        cmd = cmd.about(about.clone());
    }
    cmd.args(
        full.get_arguments()
            .filter(|arg| !arg.is_hide_set())
            .cloned(),
    )
    .subcommands(
        full.get_subcommands()
            .filter(|sub| !sub.is_hide_set())
            .cloned(),
    )
}

/// disktriage(1) as roff, one page for every command; no date, so stable.
pub fn man_page() -> anyhow::Result<String> {
    render_man_page().context("cannot render the manual page")
}

fn render_man_page() -> std::io::Result<String> {
    let cmd = Cli::command();
    let top = Man::new(cmd.clone()).manual("disktriage manual");
    let mut page = Vec::new();
    top.render_title(&mut page)?;
    top.render_name_section(&mut page)?;
    top.render_synopsis_section(&mut page)?;
    page.write_all(description().render().as_bytes())?;
    top.render_options_section(&mut page)?;

    page.write_all(b".SH COMMANDS\n")?;
    for sub in cmd.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        let name = format!("disktriage {}", sub.get_name());
        // Rendered alone, so the global options are not repeated per command.
        let man = Man::new(sub.clone().bin_name(&name).disable_help_flag(true));
        page.write_all(
            Roff::new()
                .control("SS", [name.as_str()])
                .render()
                .as_bytes(),
        )?;
        page.write_all(&section_body(|w| man.render_synopsis_section(w))?)?;
        page.write_all(Roff::new().control("PP", []).render().as_bytes())?;
        page.write_all(&section_body(|w| man.render_description_section(w))?)?;
        if sub.get_arguments().any(|arg| !arg.is_hide_set()) {
            page.write_all(&section_body(|w| man.render_options_section(w))?)?;
        }
        if sub.get_after_help().is_some() {
            page.write_all(Roff::new().control("PP", []).render().as_bytes())?;
            page.write_all(&section_body(|w| man.render_extra_section(w))?)?;
        }
    }
    page.write_all(closing_sections().render().as_bytes())?;
    top.render_version_section(&mut page)?;
    Ok(once_preamble(&String::from_utf8_lossy(&page)))
}

/// Every rendered piece repeats a two-line preamble; the page needs one.
fn once_preamble(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    let mut kept: Vec<&str> = Vec::new();
    let mut body = String::with_capacity(page.len());
    for line in page.lines() {
        if is_preamble(line) {
            if !kept.contains(&line) {
                kept.push(line);
                out.push_str(line);
                out.push('\n');
            }
        } else {
            body.push_str(line);
            body.push('\n');
        }
    }
    out + &body
}

fn is_preamble(line: &str) -> bool {
    line.starts_with(".ie \\n(.g .ds Aq") || line.starts_with(".el .ds Aq")
}

/// A clap_mangen section without its `.SH` line, for under a `.SS`.
fn section_body(
    render: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    render(&mut out)?;
    let text = String::from_utf8_lossy(&out);
    let mut body = String::with_capacity(text.len());
    let mut heading_seen = false;
    for line in text.lines() {
        if !heading_seen && line.starts_with(".SH") {
            heading_seen = true;
            continue;
        }
        body.push_str(line);
        body.push('\n');
    }
    Ok(body.into_bytes())
}

/// What disktriage is, and the interactive screen clap knows nothing of.
fn description() -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["DESCRIPTION"])
        .text([roman(
            "Storage triage for the Linux console: the block devices with their I/O \
             schedulers, write-cache state, SMART health and in-use state; dd, fio, ORION, \
             diskperf and CrystalDiskMark-style tests with live charts; scheduler and drive \
             write cache switching; comparison of runs. One static binary that needs neither \
             fio, hdparm, smartctl nor a desktop.",
        )])
        .control("PP", [])
        .text([
            roman("Without a command, "),
            bold("disktriage"),
            roman(
                " opens the interactive screen (80x25 or larger, 16 colours or monochrome). \
                 The admin's loop: look at the devices (1), choose and run a test (2, r), \
                 watch it live (3), switch the scheduler (s) or the drive's write cache (w), \
                 retest (R), and compare the runs (4, c). ? lists every key. Settings changed \
                 there are put back on exit unless kept (K).",
            ),
        ])
        .control("PP", [])
        .text([roman(
            "Read tests always run. A test that writes to a block device runs only after the \
             device's own name is typed (--destroy-data NAME headless), and never on a device \
             that is mounted, active swap or held by md, dm or LVM.",
        )]);
    roff
}

/// FILES, EXIT STATUS and SEE ALSO.
fn closing_sections() -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["FILES"])
        .control("TP", [])
        .text([bold(format!("{DEFAULT_JOURNAL_DIR}/journal.json"))])
        .text([roman(
            "The original of every setting disktriage changed and has not put back yet \
             (scheduler, drive write cache). It lives on a tmpfs: a reboot resets the \
             settings and the journal together. disktriage restore puts them back.",
        )])
        .control("TP", [])
        .text([bold(format!(
            "{}/{}",
            crate::history::DEFAULT_HISTORY_DIR,
            crate::history::FILE
        ))])
        .text([roman(
            "The run history: one JSON line per finished run, with the disk's world-wide id \
             or serial, the settings and the figures (disktriage history). Rotated at 4 MiB \
             into history.jsonl.1. --history-dir or DISKTRIAGE_HISTORY_DIR put it elsewhere.",
        )])
        .control("TP", [])
        .text([bold("/etc/udev/rules.d/60-disktriage-scheduler-*.rules")])
        .text([roman(
            "Rules written by disktriage sched DEV NAME --persist: the scheduler set at \
             every boot, for one disk by its world-wide id or serial, or for every \
             rotational or non-rotational disk (--persist-class).",
        )])
        .control("SH", ["EXIT STATUS"]);
    for (status, meaning) in crate::model::exit::TABLE {
        roff.control("TP", [])
            .text([bold(*status)])
            .text([roman(*meaning)]);
    }
    roff.control("SH", ["SEE ALSO"])
        .text([roman("fio(1), hdparm(8), smartctl(8), losetup(8)")]);
    roff
}
