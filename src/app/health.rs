//! The health view (`h` on Devices): one drive's SMART verdict and attributes, its logs and
//! its self-tests. A self-test started here or found running is polled every `SELF_TEST_POLL`;
//! when it ends the health and logs are read again, so the verdict takes its result in. Keys
//! and drawing: `screens/health.rs`.

use std::time::Duration;

use super::{App, Overlay, Screen};
use crate::event::{Cmd, TaskError};
use crate::model::{DriveLogs, SelfTestKind, SelfTestStatus};

/// How often a running self-test's state is read (one 512-byte page); ATA progress moves in
/// 10 % steps anyway.
pub const SELF_TEST_POLL: Duration = Duration::from_secs(5);

/// Which drive the health view shows and how far it is scrolled.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HealthView {
    pub device: Option<String>,
    pub scroll: u16,
}

/// A self-test the session follows until the drive says it no longer runs.
#[derive(Debug, Clone, PartialEq)]
pub struct SelfTestWatch {
    /// What was started, when this session started it.
    pub kind: Option<SelfTestKind>,
    /// When the last poll was asked for.
    pub last_poll: Duration,
    /// A poll is under way: no second one until it answers.
    pub in_flight: bool,
}

impl App {
    /// The Health view of the device a scan, triage or flush check ran on: refused if its
    /// name holds another device now, so a neighbour's SMART is never shown as its.
    pub(super) fn open_health_of(
        &mut self,
        device: String,
        chosen: Option<&crate::model::ChosenDevice>,
    ) -> Vec<Cmd> {
        if let Some(chosen) = chosen {
            let now = self.devices.chosen(&device);
            if let Some(why) = chosen.refusal(now.as_ref()) {
                self.error(why);
                return Vec::new();
            }
        }
        self.open_health(device)
    }

    /// Opens the health view of `device` and reads its cache, health and logs again.
    pub(super) fn open_health(&mut self, device: String) -> Vec<Cmd> {
        self.screen = Screen::Health;
        if self.health.device.as_deref() != Some(device.as_str()) {
            self.health.scroll = 0;
        }
        self.health.device = Some(device.clone());
        self.read_health(device)
    }

    pub(super) fn read_health(&mut self, device: String) -> Vec<Cmd> {
        let Some(dev) = self.devices.find(&device) else {
            return Vec::new();
        };
        if dev.transport.is_virtual() {
            return Vec::new();
        }
        self.devices
            .drives
            .entry(device.clone())
            .or_default()
            .reading = true;
        self.info(format!(
            "{device}: reading SMART health and the drive's logs"
        ));
        vec![Cmd::ReadDriveStatus {
            device,
            health: true,
        }]
    }

    /// Why a self-test cannot be started on `device` from here, if it cannot.
    pub(super) fn self_test_refusal(&self, device: &str) -> Option<String> {
        if self
            .devices
            .find(device)
            .is_some_and(|d| d.transport.is_virtual())
        {
            return Some(format!("{device} has no drive behind it: no self-tests"));
        }
        if !self.is_root {
            return Some("self-tests need root (sudo disktriage)".into());
        }
        match self
            .devices
            .drives
            .get(device)
            .and_then(|s| s.self_test.as_ref())
        {
            None => Some(format!(
                "{device}: its self-test state is not read yet (r reads it)"
            )),
            Some(Err(e)) => Some(format!("{device}: {e}")),
            Some(Ok(st)) if !st.supported => Some(format!(
                "{device}: cannot start a self-test: {}",
                st.unsupported_reason.as_deref().unwrap_or("not supported")
            )),
            Some(Ok(_)) => None,
        }
    }

    /// Asks before a self-test starts, saying what it costs; or says why it cannot.
    pub(super) fn ask_self_test(&mut self, device: String, kind: SelfTestKind) {
        if let Some(why) = self.self_test_refusal(&device) {
            self.info(why);
            return;
        }
        self.overlay = Some(Overlay::SelfTest(super::dialogs::self_test::SelfTest {
            device,
            kind,
        }));
    }

    /// The drive's logs arrived.
    pub(super) fn drive_logs(
        &mut self,
        device: String,
        result: Result<Box<DriveLogs>, TaskError>,
    ) -> Vec<Cmd> {
        let now = self.now;
        let st = self.devices.drives.entry(device).or_default();
        if let Ok(logs) = &result {
            st.self_test = Some(Ok(logs.self_test.clone()));
            // A test found running (smartctl, the drive's own schedule) is followed too.
            if logs.self_test.is_running() && st.watch.is_none() {
                st.watch = Some(SelfTestWatch {
                    kind: None,
                    last_poll: now,
                    in_flight: false,
                });
            }
        }
        st.logs = Some(result);
        st.judge();
        Vec::new()
    }

    pub(super) fn self_test_started(
        &mut self,
        device: String,
        kind: SelfTestKind,
        result: Result<(), TaskError>,
    ) -> Vec<Cmd> {
        if let Err(e) = result {
            let what = match kind {
                SelfTestKind::Abort => "abort the self-test".to_string(),
                k => format!("start a {k} self-test"),
            };
            self.error(format!("{device}: cannot {what}: {e}"));
            return Vec::new();
        }
        self.info(match kind {
            SelfTestKind::Abort => format!("{device}: self-test abort sent"),
            k => format!("{device}: {k} self-test started; progress is read every 5 s"),
        });
        let now = self.now;
        let st = self.devices.drives.entry(device.clone()).or_default();
        st.watch = Some(SelfTestWatch {
            kind: Some(kind),
            last_poll: now,
            in_flight: true,
        });
        vec![Cmd::PollSelfTest { device }]
    }

    pub(super) fn self_test_status(
        &mut self,
        device: String,
        result: Result<SelfTestStatus, TaskError>,
    ) -> Vec<Cmd> {
        let st = self.devices.drives.entry(device.clone()).or_default();
        let ended = match (&result, &mut st.watch) {
            (Ok(status), Some(_)) if !status.is_running() => {
                st.watch = None;
                Some(status.last.clone())
            }
            (_, Some(w)) => {
                w.in_flight = false;
                None
            }
            (_, None) => None,
        };
        st.self_test = Some(result);
        let Some(last) = ended else {
            return Vec::new();
        };
        self.info(format!(
            "{device}: self-test ended: {}; reading health and logs",
            last.as_deref().unwrap_or("see the self-test log")
        ));
        self.devices
            .drives
            .entry(device.clone())
            .or_default()
            .reading = true;
        vec![Cmd::ReadDriveStatus {
            device,
            health: true,
        }]
    }

    /// Polls every followed self-test whose time has come.
    pub(super) fn poll_self_tests(&mut self) -> Vec<Cmd> {
        let now = self.now;
        let mut cmds = Vec::new();
        for (device, st) in &mut self.devices.drives {
            if let Some(w) = &mut st.watch
                && !w.in_flight
                && now.saturating_sub(w.last_poll) >= SELF_TEST_POLL
            {
                w.in_flight = true;
                w.last_poll = now;
                cmds.push(Cmd::PollSelfTest {
                    device: device.clone(),
                });
            }
        }
        cmds
    }
}
