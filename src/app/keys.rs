//! The one table of key bindings. Dispatch (`action_for`), the status line (`status_keys`) and
//! the help screen (`help_rows`) all read `BINDINGS`, so the three cannot disagree. Dialogs
//! list their own keys in their own text.

use ratatui::crossterm::event::KeyCode;

use super::{PickerFocus, Screen};

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// On every screen.
    Global,
    /// On every screen but Test (whose letters edit the form).
    NotOnTest,
    /// On one screen (on Test, whichever half has the focus).
    On(Screen),
    /// On Test, with the focus on the list of tests.
    TestList,
    /// On Test, with the focus on the parameters.
    TestForm,
}

impl Scope {
    fn applies(self, screen: Screen, focus: PickerFocus) -> bool {
        match self {
            Scope::Global => true,
            Scope::NotOnTest => screen != Screen::Tests,
            Scope::On(s) => s == screen,
            Scope::TestList => screen == Screen::Tests && focus == PickerFocus::Tests,
            Scope::TestForm => screen == Screen::Tests && focus == PickerFocus::Params,
        }
    }

    /// Does it apply on this screen with either focus?
    fn applies_somewhere_on(self, screen: Screen) -> bool {
        self.applies(screen, PickerFocus::Tests) || self.applies(screen, PickerFocus::Params)
    }

    /// The screen whose help group lists it; `None` for keys that work everywhere.
    fn screen(self) -> Option<Screen> {
        match self {
            Scope::Global | Scope::NotOnTest => None,
            Scope::On(s) => Some(s),
            Scope::TestList | Scope::TestForm => Some(Screen::Tests),
        }
    }
}

/// What a key does. Keys with a direction (Up/Down, Left/Right, PageUp/PageDown) share one
/// action; `direction` tells which way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Help,
    Quit,
    /// `1`-`5`: the screen of that number.
    GoTo,
    /// Tab/Shift-Tab: the next or the previous screen.
    NextScreen,
    Scheduler,
    DriveCache,
    /// Make the scheduler permanent (a udev rule).
    Persist,
    ReadSmart,
    Retest,
    /// Up/Down in a list or a scrolled view.
    Move,
    /// PageUp/PageDown.
    Page,
    /// Home/End: the first or the last row.
    Ends,
    Refresh,
    ShowAll,
    /// Devices: test the selected device.
    TestDevice,
    /// Devices: test a file on the selected device's mounted file system.
    TestFile,
    /// Test: start the chosen test.
    RunTest,
    /// Test: from the list of tests to its parameters.
    ToParams,
    /// Test: from the parameters back to the list.
    ToTests,
    /// Test: the field's previous/next choice.
    Step,
    Default,
    /// Test: type a value (or step a field that cannot be typed).
    Edit,
    Stop,
    Rerun,
    Compare,
    /// Results: the selected run against the latest earlier run of its test on its disk.
    Before,
    Temperature,
    Mark,
    /// Devices: mark an md array and each of its members.
    Members,
    Export,
    Report,
    Back,
    /// Test: sweep the test over every scheduler (`S`) or the write cache (`W`).
    Sweep,
    /// Results: the last sweep's table and bars.
    SweepResult,
    /// Health: start a short self-test (asks first).
    SelfTestShort,
    /// Health: start a long self-test (asks first).
    SelfTestLong,
    /// Health: abort the running self-test.
    SelfTestAbort,
    /// Devices: the surface scan of the selected device.
    SurfaceScan,
    /// Devices: triage the marked disks, else the selected one.
    Triage,
    /// Devices: the flush check's timing on the selected device (after its name is typed).
    FlushCheck,
    /// The capacity probe of the selected device (Devices).
    Capacity,
    /// The TRIM check of the selected device (Devices).
    TrimCheck,
}

/// One key (or a few keys doing one thing) in one place.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub scope: Scope,
    pub keys: &'static [KeyCode],
    /// The keys as the user reads them ("Up/Down", "x or Esc").
    pub names: &'static str,
    /// The word on the status line; `None` keeps it off the (80-column) status line.
    pub label: Option<&'static str>,
    /// What the help screen says it does.
    pub help: &'static str,
    pub action: Action,
}

pub(super) const UP_DOWN: &[KeyCode] = &[
    KeyCode::Up,
    KeyCode::Char('k'),
    KeyCode::Down,
    KeyCode::Char('j'),
];

pub(super) const fn bind(
    scope: Scope,
    keys: &'static [KeyCode],
    names: &'static str,
    label: Option<&'static str>,
    help: &'static str,
    action: Action,
) -> Binding {
    Binding {
        scope,
        keys,
        names,
        label,
        help,
        action,
    }
}

use Action as A;
use Scope as S;

/// The keys that work on every screen (each screen's own are its `ScreenDef::keys`). Earlier
/// rows win. On the status line a screen's own keys come first.
pub const BINDINGS: &[Binding] = &[
    bind(
        S::Global,
        &[KeyCode::Char('?'), KeyCode::F(1)],
        "? or F1",
        None,
        "this help (Up/Down scroll it, any other key closes it)",
        A::Help,
    ),
    bind(
        S::Global,
        &[KeyCode::Char('q')],
        "q / Ctrl-C",
        None,
        "quit, putting changed settings back (q asks first when a test runs or results \
         were not exported; Ctrl-C never asks)",
        A::Quit,
    ),
    bind(
        S::Global,
        &[
            KeyCode::Char('1'),
            KeyCode::Char('2'),
            KeyCode::Char('3'),
            KeyCode::Char('4'),
            KeyCode::Char('5'),
        ],
        "1-5",
        None,
        "Devices, Test, Run, Results, Compare",
        A::GoTo,
    ),
    bind(
        S::Global,
        &[KeyCode::Tab, KeyCode::BackTab],
        "Tab",
        None,
        "next screen (Shift-Tab the previous)",
        A::NextScreen,
    ),
    bind(
        S::Global,
        &[KeyCode::Char('R')],
        "R",
        None,
        "retest: the last test, on the device switched last",
        A::Retest,
    ),
    bind(
        S::NotOnTest,
        &[KeyCode::Char('s')],
        "s",
        Some("sched"),
        "switch the scheduler (K in the menu keeps it after exit)",
        A::Scheduler,
    ),
    bind(
        S::NotOnTest,
        &[KeyCode::Char('w')],
        "w",
        Some("cache"),
        "the drive's own write cache: o off, n on, K keep",
        A::DriveCache,
    ),
    bind(
        S::NotOnTest,
        &[KeyCode::Char('P')],
        "P",
        Some("boot"),
        "make the scheduler permanent (udev rule, shown before writing)",
        A::Persist,
    ),
];

/// Every binding: `BINDINGS`, then each registered screen's own rows (`ScreenDef::keys`).
pub fn all() -> impl Iterator<Item = &'static Binding> {
    BINDINGS.iter().chain(
        Screen::REGISTERED
            .iter()
            .flat_map(|screen| screen.def().keys.iter()),
    )
}

/// The binding a key has on a screen, if any.
pub fn binding_for(screen: Screen, focus: PickerFocus, code: KeyCode) -> Option<&'static Binding> {
    all().find(|b| b.scope.applies(screen, focus) && b.keys.contains(&code))
}

/// -1 for the keys that go back or up (Up, k, Left, h, PageUp, Home), +1 for the others.
pub fn direction(code: KeyCode) -> i32 {
    match code {
        KeyCode::Up
        | KeyCode::Char('k')
        | KeyCode::Left
        | KeyCode::Char('h')
        | KeyCode::PageUp
        | KeyCode::Home
        | KeyCode::BackTab => -1,
        _ => 1,
    }
}

/// The status line's keys for a screen: its own keys, then the switches, as "r rerun".
pub fn status_keys(screen: Screen) -> String {
    status_keys_where(screen, |_| true)
}

/// Those of `status_keys` that do something now (no stop when nothing runs, no compare
/// without two runs, ...).
pub fn status_keys_now(app: &super::App) -> String {
    status_keys_where(app.screen, |action| app.key_works_now(action))
}

/// [`status_keys_now`] in two groups, the screen's own keys and the global switches, for a
/// status line too narrow to hold both on one row.
pub fn status_key_groups_now(app: &super::App) -> [String; 2] {
    status_key_groups(app.screen, |action| app.key_works_now(action))
}

fn status_keys_where(screen: Screen, works: impl Fn(Action) -> bool) -> String {
    let [own, everywhere] = status_key_groups(screen, works);
    [own, everywhere]
        .into_iter()
        .filter(|g| !g.is_empty())
        .collect::<Vec<_>>()
        .join("  ")
}

fn status_key_groups(screen: Screen, works: impl Fn(Action) -> bool) -> [String; 2] {
    let labels = |bindings: &mut dyn Iterator<Item = &'static Binding>| {
        bindings
            .filter(|b| works(b.action))
            .filter_map(|b| b.label.map(|l| format!("{} {l}", b.names)))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut own = all().filter(|b| b.scope.screen() == Some(screen));
    let mut everywhere =
        all().filter(|b| b.scope.screen().is_none() && b.scope.applies_somewhere_on(screen));
    [labels(&mut own), labels(&mut everywhere)]
}

/// What one help entry reads: "r rerun".
pub fn help_entry(b: &Binding) -> String {
    format!("{} {}", b.names, b.help)
}

/// Width of the help's first column (the keys, or the screen's name).
pub const HELP_KEY_WIDTH: usize = 12;
/// Width of the help's text column (the box is 76 wide on an 80-column terminal).
pub const HELP_TEXT_WIDTH: usize = 62;

/// The help screen's rows (first column, text) for a text column `width` wide. Global keys
/// get a row each; a screen's keys are packed into rows under its name, no entry split.
pub fn help_rows(width: usize) -> Vec<(String, String)> {
    let width = width.max(20);
    let mut rows = Vec::new();
    for b in all().filter(|b| b.scope.screen().is_none()) {
        let mut first = b.names.to_string();
        for line in wrap_words(b.help, width) {
            rows.push((std::mem::take(&mut first), line));
        }
    }
    for &screen in Screen::WITH_KEYS {
        let mut first = screen.title().to_string();
        let mut line = String::new();
        for b in all().filter(|b| b.scope.screen() == Some(screen)) {
            let entry = help_entry(b);
            // Room for the entry and the comma that ends the row if the next one breaks.
            if !line.is_empty() && line.chars().count() + 2 + entry.chars().count() + 1 > width {
                line.push(',');
                rows.push((std::mem::take(&mut first), std::mem::take(&mut line)));
            }
            if !line.is_empty() {
                line.push_str(", ");
            }
            line.push_str(&entry);
        }
        if !line.is_empty() {
            rows.push((first, line));
        }
    }
    rows
}

/// Splits text into lines of at most `width` characters at spaces.
pub(crate) fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_key_does_two_things_in_one_place() {
        let every: Vec<&Binding> = all().collect();
        for &screen in Screen::WITH_KEYS {
            for focus in [PickerFocus::Tests, PickerFocus::Params] {
                for (i, a) in every.iter().enumerate() {
                    for b in &every[i + 1..] {
                        if a.scope.applies(screen, focus) && b.scope.applies(screen, focus) {
                            let shared: Vec<_> =
                                a.keys.iter().filter(|k| b.keys.contains(k)).collect();
                            assert!(
                                shared.is_empty(),
                                "{shared:?} is both {} and {} on {screen:?}",
                                a.names,
                                b.names
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn help_key_column_fits_every_key() {
        for b in all().filter(|b| b.scope.screen().is_none()) {
            assert!(b.names.chars().count() < HELP_KEY_WIDTH, "{}", b.names);
        }
        for (_, text) in help_rows(HELP_TEXT_WIDTH) {
            assert!(text.chars().count() <= HELP_TEXT_WIDTH, "{text}");
        }
    }

    #[test]
    fn the_surface_scan_is_on_the_devices_status_line() {
        // `b` is found without opening the help.
        let s = status_keys(Screen::Devices);
        assert!(s.contains("b scan"), "{s}");
    }

    #[test]
    fn status_lines_fit_80_columns() {
        // One row, or two on a screen with more keys (Devices): its own keys, the switches.
        for &screen in Screen::WITH_KEYS {
            let s = status_keys(screen);
            if s.chars().count() < 80 {
                continue;
            }
            for group in status_key_groups(screen, |_| true) {
                assert!(group.chars().count() < 80, "{screen:?}: {group}");
            }
        }
    }
}
