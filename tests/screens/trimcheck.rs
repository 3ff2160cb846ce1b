//! The TRIM check screen (`T` on Devices): the typed-name dialog (it says what is written,
//! discarded and put back and where the saved bytes go; a wrong name starts nothing; Tab
//! edits the journal), snapshots at 80x25 and 132x43 of a check running, of each verdict and
//! of a refusal, nothing cut; the kept journal and its command when the put-back did not
//! finish; stop and leave.

use std::time::Duration;

use crate::common::tui::*;
use crate::snap;
use disktriage::app::{App, Overlay, Screen};
use disktriage::capacity::PutBack;
use disktriage::event::{Cmd, Msg};
use disktriage::flow::{TRIM_JOB, TrimMsg, TrimOrder, TrimRun, TrimStep};
use disktriage::trim::{Claim, DiscardLimits, Readback, Scratch, TrimEnd, judge};
use ratatui::crossterm::event::KeyCode;

const JOURNAL: &str = "/var/lib/disktriage/trimcheck-loop0.journal";

/// The app on Devices with loop0 selected, `T` pressed and `loop0` typed: the check asked
/// for, with its journal beside the history.
fn app_checking_loop0() -> App {
    let mut app = app_with("host-loop-zram", true);
    assert!(key(&mut app, KeyCode::Char('T')).is_empty());
    assert!(
        matches!(&app.overlay, Some(Overlay::ConfirmTrim(c)) if c.order.device == "loop0"),
        "{:?}",
        app.overlay
    );
    assert!(keys(&mut app, "loop0").is_empty());
    let cmds: Vec<Cmd> = key(&mut app, KeyCode::Enter)
        .into_iter()
        .map(|c| app.stamp(c))
        .collect();
    let [Cmd::StartJob(order)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    let Some(o) = order.get::<TrimOrder>() else {
        panic!("{order:?}")
    };
    assert_eq!(
        (o.device.as_str(), o.confirmation.as_str()),
        ("loop0", "loop0")
    );
    assert_eq!(o.journal.to_str(), Some(JOURNAL));
    assert_eq!(
        o.chosen.as_ref().map(|c| c.name.as_str()),
        Some("loop0"),
        "the device as chosen goes with the command"
    );
    assert_eq!(app.screen, Screen::Trim);
    app
}

fn news(m: TrimMsg) -> Msg {
    Msg::job(TRIM_JOB, m)
}

/// A check of loop0 that ended with `end` under `claim`; 4 MiB put back whole unless
/// `cut_short`; no range or put-back where nothing was written.
fn done(claim: Claim, end: TrimEnd, cut_short: bool) -> Msg {
    let wrote = !matches!(end, TrimEnd::NoDiscard);
    let limits = if wrote {
        DiscardLimits {
            max_bytes: 4 << 30,
            granularity: 4096,
            alignment: 0,
            write_zeroes_max: 0,
        }
    } else {
        DiscardLimits::default()
    };
    news(TrimMsg::Done(Box::new(TrimRun {
        device: "/dev/loop0".into(),
        name: "loop0".into(),
        model: None,
        sector: 512,
        limits,
        claim,
        scratch: wrote.then_some(Scratch {
            offset: 512 << 20,
            len: 4 << 20,
        }),
        discard_time: matches!(end, TrimEnd::Judged { .. }).then(|| Duration::from_micros(830)),
        end,
        put_back: wrote.then(|| PutBack {
            sectors: 8192,
            as_saved: if cut_short { 2048 } else { 8192 },
            shared: 0,
            not_back: Vec::new(),
            error: cut_short.then(|| "cannot write LBA 1050624: Input/output error".into()),
        }),
        elapsed: Duration::from_millis(1_200),
        journal_kept: cut_short.then(|| JOURNAL.into()),
        warnings: Vec::new(),
    })))
}

fn judged(claim: &Claim, seen: Readback) -> TrimEnd {
    let (verdict, sentence) = judge(claim, seen);
    TrimEnd::Judged {
        seen,
        verdict,
        sentence,
    }
}

fn loop_claim() -> Claim {
    Claim::none("no drive to ask: a loop device")
}

/// Drawn at both sizes, nothing was cut by the fitting helpers.
fn nothing_cut(app: &App) {
    for (w, h) in [(80, 25), (132, 43)] {
        let (_, cuts) = draw_checked(app, w, h);
        assert!(cuts.is_empty(), "{w}x{h}: {cuts:?}");
    }
}

#[test]
fn the_dialog_says_what_is_written_and_where_and_a_wrong_name_starts_nothing() {
    let mut app = app_with("host-loop-zram", true);
    key(&mut app, KeyCode::Char('T'));
    keys(&mut app, "loop1");
    assert!(key(&mut app, KeyCode::Enter).is_empty());
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("\"loop1\" is not loop0: nothing was written"),
        "{s}"
    );
    for said in [
        "OVERWRITES 4 MiB near the middle of loop0",
        "DISCARDS that range",
        "DISCARDS that range and reads it back, then puts back what",
        JOURNAL,
        "another disk (the check refuses it",
        "Journal (Tab edits):",
    ] {
        assert!(s.contains(said), "{said}: {s}");
    }
    snap("trim_confirm", &app);
    assert!(key(&mut app, KeyCode::Esc).is_empty());
    assert!(app.overlay.is_none());
    assert_eq!(app.screen, Screen::Devices);
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("TRIM check cancelled: nothing was written"),
        "{s}"
    );
}

#[test]
fn tab_edits_the_journal_the_check_is_ordered_with() {
    let mut app = app_with("host-loop-zram", true);
    key(&mut app, KeyCode::Char('T'));
    key(&mut app, KeyCode::Tab);
    for _ in 0.."trimcheck-loop0.journal".len() {
        key(&mut app, KeyCode::Backspace);
    }
    keys(&mut app, "elsewhere.journal");
    let s = screen(&app, 80, 25);
    assert!(s.contains("Journal (Enter or Tab ends the edit):"), "{s}");
    assert!(key(&mut app, KeyCode::Tab).is_empty());
    assert!(app.overlay.is_some(), "Tab ends the edit, not the dialog");
    keys(&mut app, "loop0");
    let cmds = key(&mut app, KeyCode::Enter);
    let [Cmd::StartJob(order)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    let Some(o) = order.get::<TrimOrder>() else {
        panic!("{order:?}")
    };
    assert_eq!(
        o.journal.to_str(),
        Some("/var/lib/disktriage/elsewhere.journal")
    );
}

#[test]
fn running_lists_the_steps_with_the_one_under_way_and_the_clock() {
    let mut app = app_checking_loop0();
    tick(&mut app, 1.5);
    let s = screen(&app, 80, 25);
    assert!(s.contains("checking the device"), "{s}");
    app.update(news(TrimMsg::Step(TrimStep::SaveAndWrite {
        done: 1 << 20,
        of: 4 << 20,
    })));
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("saving and writing the pattern, 1.0 of 4.0 MiB"),
        "{s}"
    );
    assert!(s.contains("now   save the range in the journal"), "{s}");
    assert!(s.contains("now   write the pattern"), "{s}");
    app.update(news(TrimMsg::Step(TrimStep::ReadPattern)));
    app.update(news(TrimMsg::Step(TrimStep::Discard)));
    // Past the start's message on the status line: its keys show.
    tick(&mut app, 12.0);
    let s = screen(&app, 80, 25);
    for said in [
        "TRIM check of loop0: 0:12 elapsed, writes",
        "done  save the range in the journal",
        "done  write the pattern",
        "done  read the pattern back",
        "now   discard the range",
        "      read the range back",
        "      put back what was saved",
        "discarding the range",
        &format!("journal: {JOURNAL}"),
        "x stop",
    ] {
        assert!(s.contains(said), "{said}: {s}");
    }
    nothing_cut(&app);
    snap("trim_running", &app);
}

#[test]
fn each_verdict_is_the_clis_report_with_its_word() {
    let nvme = Claim::from_nvme_dlfeat(1);
    let cases = [
        (
            "trim_works",
            loop_claim(),
            judged(&loop_claim(), Readback::Zeros),
            "Verdict: discard works, reads zeros",
        ),
        (
            "trim_kept",
            loop_claim(),
            judged(&loop_claim(), Readback::Unchanged),
            "Verdict: discard accepted, data still there",
        ),
        (
            "trim_broken",
            nvme.clone(),
            judged(&nvme, Readback::Unchanged),
            "Verdict: claims zeros (NVMe DLFEAT 1), returns old data",
        ),
        (
            "trim_discard_refused",
            loop_claim(),
            TrimEnd::Refused("Operation not supported".into()),
            "Verdict: discard refused (Operation not supported)",
        ),
        (
            "trim_no_discard",
            loop_claim(),
            TrimEnd::NoDiscard,
            "Verdict: does not discard",
        ),
    ];
    for (name, claim, end, verdict) in cases {
        let mut app = app_checking_loop0();
        let wrote = !matches!(end, TrimEnd::NoDiscard);
        app.update(done(claim, end, false));
        assert!(!app.screens.trim.running(), "{name}");
        tick(&mut app, 12.0);
        let s = screen(&app, 80, 25);
        assert!(s.contains(verdict), "{name}: {verdict}: {s}");
        // The report's own lines, as the CLI prints them.
        assert!(s.contains("Device     /dev/loop0 (loop0)"), "{name}: {s}");
        if wrote {
            assert!(
                s.contains("8,192 sectors written back, 8,192 read back as saved"),
                "{name}: {s}"
            );
        } else {
            assert!(!s.contains("written back"), "{name}: {s}");
        }
        assert!(!s.contains("did not finish"), "{name}: {s}");
        nothing_cut(&app);
        snap(name, &app);
    }
}

#[test]
fn a_put_back_cut_short_keeps_the_journal_and_says_the_command() {
    let mut app = app_checking_loop0();
    app.update(done(
        loop_claim(),
        judged(&loop_claim(), Readback::Zeros),
        true,
    ));
    let s = screen(&app, 132, 43);
    for said in [
        &format!("The put-back did not finish: the saved bytes are kept in {JOURNAL}; run"),
        &format!("--capacity {JOURNAL}` to put them back."),
    ] {
        assert!(s.contains(said.as_str()), "{said}: {s}");
    }
    nothing_cut(&app);
}

#[test]
fn a_refusal_is_said_and_shown_with_nothing_written() {
    let mut app = app_checking_loop0();
    app.update(news(TrimMsg::Failed(
        "/dev/loop0 is no longer the device you chose (its diskseq was 12, is 14 now): \
         nothing was written"
            .into(),
    )));
    assert!(
        matches!(&app.overlay, Some(Overlay::Error(e)) if e.contains("no longer the device")),
        "{:?}",
        app.overlay
    );
    app.overlay = None;
    tick(&mut app, 12.0);
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("not started, nothing was written: /dev/loop0 is no longer"),
        "{s}"
    );
    nothing_cut(&app);
    snap("trim_refused", &app);
}

#[test]
fn x_and_leaving_stop_it_and_t_again_shows_the_running_one() {
    let mut app = app_checking_loop0();
    assert_eq!(
        key(&mut app, KeyCode::Char('x')),
        vec![Cmd::StopJob(TRIM_JOB)]
    );
    let s = screen(&app, 80, 25);
    assert!(s.contains("stopping: what was written is put back"), "{s}");
    assert!(key(&mut app, KeyCode::Char('x')).is_empty());
    for leave in [KeyCode::Esc, KeyCode::Char('1'), KeyCode::Tab] {
        let mut app = app_checking_loop0();
        assert_eq!(
            key(&mut app, leave),
            vec![Cmd::StopJob(TRIM_JOB)],
            "{leave:?}"
        );
        assert_ne!(app.screen, Screen::Trim);
        // Until the job says it ended, T shows that check and starts no other.
        key(&mut app, KeyCode::Char('1'));
        assert!(key(&mut app, KeyCode::Char('T')).is_empty());
        assert_eq!(app.screen, Screen::Trim);
        assert!(app.overlay.is_none());
    }
}

#[test]
fn one_write_check_at_a_time_a_probe_and_a_trim_check_refuse_each_other() {
    let mut app = app_checking_loop0();
    key(&mut app, KeyCode::Char('1'));
    // Leaving stopped it, but until the job says it ended it still writes.
    assert!(app.screens.trim.running());
    assert!(key(&mut app, KeyCode::Char('c')).is_empty());
    assert!(
        matches!(&app.overlay, Some(Overlay::Error(e)) if e.contains("a TRIM check is writing")),
        "{:?}",
        app.overlay
    );
    let mut app = app_with("host-loop-zram", true);
    key(&mut app, KeyCode::Char('c'));
    keys(&mut app, "loop0");
    assert_eq!(key(&mut app, KeyCode::Enter).len(), 1);
    assert!(app.screens.capacity.running());
    key(&mut app, KeyCode::Char('1'));
    assert!(key(&mut app, KeyCode::Char('T')).is_empty());
    assert!(
        matches!(&app.overlay, Some(Overlay::Error(e)) if e.contains("no TRIM check meanwhile")),
        "{:?}",
        app.overlay
    );
}
