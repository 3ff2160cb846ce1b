//! The screens, registered in one table. A screen is a component (as in ratatui's component
//! template): its state, key rows, key handlers and drawing in one file under `app/screens/`,
//! and one line in `screens!` below, which declares the `Screen` variant, puts its state into
//! `App::screens` and hands the app its `ScreenDef`.
//!
//! A component draws only from `&App` with `crate::theme`, which lies below `app`, so the
//! layers still point down (`shape`).

pub mod capacity;
pub mod compare;
pub mod devices;
pub mod flush;
pub mod health;
pub mod results;
pub mod run;
pub mod scan;
pub mod test;
pub mod triage;
pub mod trimcheck;

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::Rect;

use super::App;
use super::keys::{Action, Binding};
use crate::event::{Cmd, JobMsg};

/// Everything the app needs to know about one screen.
#[derive(Clone, Copy)]
pub struct ScreenDef {
    /// Its name on the top bar and in the help.
    pub title: &'static str,
    /// Its rows of the key table (scoped to it), after `keys::BINDINGS`' rows; the status
    /// line, the help and `docs/screen.md` read them (`keys::all`).
    pub keys: &'static [Binding],
    /// Carries out one of its keys' actions (the key, for the keys with a direction).
    pub act: fn(&mut App, Action, KeyCode) -> Vec<Cmd>,
    /// Does the key bound to this action do something now? The status line lists only these.
    pub works_now: fn(&App, Action) -> bool,
    /// Draws it into the body of the screen.
    pub draw: fn(&App, &mut Frame, Rect),
    /// The app left the screen, however (`App::update` calls it): what that ends here.
    pub leave: fn(&mut App) -> Vec<Cmd>,
    /// The job it runs, if any: `App::update` routes its `Msg::Job` here by name.
    pub job: Option<JobHook>,
}

/// A screen's job: its name (`Job::name`) and what the screen does with its messages
/// (`JobMsg::take` gives them back as the job's own type).
#[derive(Clone, Copy)]
pub struct JobHook {
    pub name: &'static str,
    pub on_msg: fn(&mut App, JobMsg) -> Vec<Cmd>,
}

/// Declares the screens: each line `Variant [{ field: State }] => its ScreenDef,` makes the
/// `Screen` variant, the `App::screens.field` state of a component, and the registry entry.
macro_rules! screens {
    ($( $(#[$doc:meta])* $variant:ident $({ $field:ident : $state:ty })? => $def:expr, )*) => {
        /// The screens, in the help's order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Screen {
            $( $(#[$doc])* $variant, )*
        }

        impl Screen {
            /// Every registered screen, in the order of the registry.
            pub const REGISTERED: &'static [Screen] = &[$(Screen::$variant),*];

            /// The screen's registry entry.
            pub fn def(self) -> &'static ScreenDef {
                match self {
                    $( Screen::$variant => &$def, )*
                }
            }
        }

        /// The state of the screens that keep their own (the components).
        #[derive(Debug, Clone, PartialEq, Default)]
        pub struct ScreenStates {
            $($( pub $field: $state, )?)*
        }
    };
}

screens! {
    Devices => devices::SCREEN,
    Tests => test::SCREEN,
    Run => run::SCREEN,
    Results => results::SCREEN,
    Compare => compare::SCREEN,
    /// One drive's health: SMART, its logs, its self-tests (`h` on Devices; not a tab).
    Health => health::SCREEN,
    /// The surface scan of one device (`b` on Devices; not a tab).
    Scan { scan: scan::ScanScreen } => scan::SCREEN,
    /// One verdict per disk for the marked or the selected disks (`v` on Devices; not a tab).
    Triage { triage: triage::TriageScreen } => triage::SCREEN,
    /// The flush check's timing on one device (`F` on Devices; not a tab).
    Flush { flush: flush::FlushScreen } => flush::SCREEN,
    /// The capacity probe of one device (`c` on Devices; not a tab).
    Capacity { capacity: capacity::CapacityScreen } => capacity::SCREEN,
    /// The TRIM check of one device (`T` on Devices; not a tab).
    Trim { trim: trimcheck::TrimScreen } => trimcheck::SCREEN,
}

impl Screen {
    /// The tabs: the screens `1`-`5` and Tab go to, in the top bar's order.
    pub const ALL: [Screen; 5] = [
        Screen::Devices,
        Screen::Tests,
        Screen::Run,
        Screen::Results,
        Screen::Compare,
    ];

    /// Every screen with keys of its own: the tabs, then the views opened from them.
    pub const WITH_KEYS: &'static [Screen] = Screen::REGISTERED;

    pub fn title(self) -> &'static str {
        self.def().title
    }

    /// A tab (on the top bar with its number), rather than a view opened from one.
    pub fn is_tab(self) -> bool {
        Screen::ALL.contains(&self)
    }
}

fn nothing(_: &mut App) -> Vec<Cmd> {
    Vec::new()
}
