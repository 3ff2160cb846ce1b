//! The Run screen's header for one device's run: the run's title and state, its device's
//! settings, and what it runs.

use ratatui::text::{Line, Span};

use super::super::super::{App, LiveRun};
use crate::bench::exec::probe;
use crate::model::Bytes;
use crate::theme;

/// The run's title, its device's settings and what it runs, wrapped to `width`.
pub(super) fn header_lines(app: &App, run: &LiveRun, width: u16) -> Vec<Line<'static>> {
    let mut lines = vec![title_line(app, run, width), settings_line(app, run)];
    lines.extend(what_lines(run, width));
    crate::draw::wrap(lines, width.into())
}

/// The run's number, test and device, its state, then its phase, repeat and temperature.
fn title_line(app: &App, run: &LiveRun, width: u16) -> Line<'static> {
    let state = state(run);
    // Long labels on a narrow terminal: the words shorten, the numbers stay whole.
    let number = app
        .results
        .records
        .get(run.record)
        .map(crate::app::records::RunRecord::number)
        .unwrap_or_default();
    let title = format!(" #{number} {} on {} ", run.label, run.device);
    let progress = |short: bool| {
        let mut s = String::new();
        if run.phases > 1 {
            let word = if short { "ph" } else { "phase" };
            s.push_str(&format!("  {word} {}/{}", run.phase + 1, run.phases));
        }
        if run.repeats > 1 {
            let word = if short { "rep" } else { "repeat" };
            s.push_str(&format!("  {word} {}/{}", run.repeat, run.repeats));
        }
        if let (Some((_, now)), Some(max)) = (run.temps.back(), run.temps.iter().map(|t| t.1).max())
        {
            let word = if short { "" } else { "temp " };
            s.push_str(&format!("  {word}{now} C (max {max})"));
        }
        s
    };
    let used = title.chars().count() + state.content.chars().count();
    let mut rest = progress(false);
    if used + rest.chars().count() > width as usize {
        rest = progress(true);
    }
    Line::from(vec![
        Span::styled(title, theme::title()),
        state,
        Span::raw(rest),
    ])
}

/// Where the run is, in a word: starting, warming up, measuring, finished and so on.
fn state(run: &LiveRun) -> Span<'static> {
    if run.finished {
        match &run.error {
            Some(_) => Span::styled("FAILED", theme::bad()),
            None if run.stopping => Span::styled("stopped", theme::warn()),
            None => Span::styled("finished", theme::good()),
        }
    } else if run.stopping {
        Span::styled("stopping", theme::warn())
    } else if run.starting {
        Span::styled("starting", theme::warn())
    } else if run.measuring {
        Span::styled("measuring", theme::good())
    } else if run.probing {
        Span::styled("probing engines", theme::warn())
    } else if run.job.as_ref().is_some_and(|j| j.warmup.is_zero()) {
        Span::styled("starting", theme::warn())
    } else {
        Span::styled("warming up", theme::warn())
    }
}

/// The scheduler, the drive's cache and the kernel's flush policy the run meets.
fn settings_line(app: &App, run: &LiveRun) -> Line<'static> {
    // The opened target's reading once there is one; until then the device list's for the
    // run's queue (a switch updates it at once); else "?".
    let (sched, cache) = match (&run.target, app.devices.queue_of(&run.device)) {
        (Some(t), _) => (t.scheduler.clone(), t.kernel_write_cache),
        (None, Some(d)) => (
            d.scheduler.as_ref().and_then(|s| s.active.clone()),
            d.kernel_write_cache,
        ),
        (None, None) => (Some("?".into()), None),
    };
    let sched = sched.unwrap_or_else(|| "-".into());
    let cache = cache.map_or("?", |c| c.as_str());
    let drive = crate::model::cache::drive_cache_shown(run.drive_cache.as_deref());
    Line::from(Span::styled(
        format!(" scheduler {sched}   drive cache {drive}   kernel flush policy {cache}"),
        theme::accent(),
    ))
}

/// What the run does: opening its target, nothing (it never started), the files it makes, or
/// its I/O path, job and engine (two lines when they do not fit one).
fn what_lines(run: &LiveRun, width: u16) -> Vec<Line<'static>> {
    if run.starting {
        vec![opening_line(run, width)]
    } else if run.finished && run.job.is_none() {
        vec![Line::from(Span::styled(
            " it never started: nothing was tested",
            theme::dim(),
        ))]
    } else if run.test.info().family.runs_in_directory() {
        // The metadata test moves no bytes: its rate is the IOPS chart's files/s.
        let files = run.job.as_ref().and_then(|j| j.ops_per_worker).unwrap_or(0);
        vec![Line::from(Span::styled(
            format!(" {files} files, one system call at a time: files/s is the IOPS chart"),
            theme::dim(),
        ))]
    } else {
        io_lines(run, width)
    }
}

/// What a starting run waits for: writing or flushing its new file, making its directory, or
/// opening its device.
fn opening_line(run: &LiveRun, width: u16) -> Line<'static> {
    // A path longer than a row loses its middle, never its end (the file's name).
    let path = crate::draw::elide(&run.path, usize::from(width).saturating_sub(4));
    // Opening can wait for a busy device, and a file test writes its file first. The
    // figures come before the path, which a narrow screen cuts.
    let what = if let Some(size) = run.new_file {
        if run.laid_out < size {
            format!(
                " writing the new test file ({} of {}) {}; x stops",
                Bytes(run.laid_out).iec(),
                Bytes(size).iec(),
                path
            )
        } else {
            format!(
                " flushing the new test file to the device {}; x stops",
                path
            )
        }
    } else if run.test.info().family.runs_in_directory() {
        format!(" making a scratch directory in {}; x stops", path)
    } else {
        format!(" checking and opening {}; x stops", path)
    };
    Line::from(Span::styled(what, theme::dim()))
}

/// The I/O path and the job, then the engine on the same line while it fits `width`.
fn io_lines(run: &LiveRun, width: u16) -> Vec<Line<'static>> {
    let how = run.job.as_ref().map(|j| j.describe()).unwrap_or_default();
    let direct = run.plan.as_ref().map_or("O_DIRECT", |p| p.io_path_label());
    // The engine is known once the warm-up (and auto's probe) is over.
    let engine = match (&run.engine, &run.plan) {
        (Some(c), _) => format!("{} ({})", c.used.as_str(), probe::short_reason(c)),
        (None, Some(p)) => format!("engine {}", p.engine.as_str()),
        (None, None) => String::new(),
    };
    // A full row drops the word "probe", then gives the engine and probe figures a row.
    // Before a sweep's first phase starts, `how` is not known: no empty field.
    let what = if how.is_empty() {
        format!(" {direct}")
    } else {
        format!(" {direct}, {how}")
    };
    let whole = format!("{what}, {engine}");
    let shorter = format!("{what}, {}", engine.replacen("(probe ", "(", 1));
    let fits = |s: &str| s.chars().count() <= usize::from(width);
    if engine.is_empty() {
        vec![Line::from(Span::styled(what, theme::dim()))]
    } else if fits(&whole) {
        vec![Line::from(Span::styled(whole, theme::dim()))]
    } else if fits(&shorter) {
        vec![Line::from(Span::styled(shorter, theme::dim()))]
    } else {
        let engine = Line::from(Span::styled(format!("   {engine}"), theme::dim()));
        vec![Line::from(Span::styled(what, theme::dim())), engine]
    }
}
