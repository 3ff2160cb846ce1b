//! Drive temperature during a run, for the TUI to draw on the run's time axis.
//!
//! `read_temperature` is one cheap read (a 512-byte SMART page or health log).
//! `TempPoller` repeats it on its own thread (`temp-<device>`) at a set interval and hands
//! each sample to a callback (the TUI wraps it into its message type). Polling is off by
//! default for USB bridges (some choke on ATA commands under load) and for transports with no
//! sensor disktriage reads; `PollConfig::default_for` says so.

use std::io;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::model::{BlockDevice, Transport};
use crate::sys::{DriveControl, DriveError};

/// Reads the current temperature in degrees Celsius; `Ok(None)` when there is no sensor.
pub fn read_temperature(
    drives: &dyn DriveControl,
    dev: &BlockDevice,
) -> Result<Option<i64>, DriveError> {
    drives.temperature(dev)
}

/// One reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TempSample {
    pub device: String,
    /// Time since the `start` the poller was given (the run's start).
    pub at: Duration,
    pub celsius: Option<i64>,
    /// Why the read failed, if it did (the poller keeps going).
    pub error: Option<String>,
}

/// How often to poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollConfig {
    pub interval: Duration,
}

impl PollConfig {
    /// Faster than this gains nothing (drives update the value every few seconds) and costs
    /// commands interleaved with the test's I/O.
    pub const MIN_INTERVAL: Duration = Duration::from_secs(1);
    pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(5);

    /// An interval, clamped to `MIN_INTERVAL`.
    pub fn every(interval: Duration) -> Self {
        PollConfig {
            interval: interval.max(Self::MIN_INTERVAL),
        }
    }

    /// The default for a transport: on for SATA and NVMe, off (`None`) for USB bridges and
    /// for transports without a sensor disktriage reads. The admin may still turn it on.
    pub fn default_for(transport: Transport) -> Option<Self> {
        match transport {
            Transport::Sata | Transport::Nvme => Some(PollConfig::every(Self::DEFAULT_INTERVAL)),
            _ => None,
        }
    }
}

/// A background temperature reader; stops (and joins) on `stop` or drop.
pub struct TempPoller {
    stop: Option<Sender<()>>,
    handle: Option<JoinHandle<()>>,
}

impl TempPoller {
    /// Starts polling `dev` every `config.interval`, first at once. `sink` gets each sample
    /// and returns false to stop (its receiver is gone). `start` is the run's time origin.
    pub fn spawn<F>(
        drives: Arc<dyn DriveControl>,
        dev: BlockDevice,
        config: PollConfig,
        start: Instant,
        sink: F,
    ) -> io::Result<TempPoller>
    where
        F: FnMut(TempSample) -> bool + Send + 'static,
    {
        Self::spawn_raw(drives, dev, config.interval, start, sink)
    }

    /// As `spawn`, without the minimum interval (tests).
    fn spawn_raw<F>(
        drives: Arc<dyn DriveControl>,
        dev: BlockDevice,
        interval: Duration,
        start: Instant,
        mut sink: F,
    ) -> io::Result<TempPoller>
    where
        F: FnMut(TempSample) -> bool + Send + 'static,
    {
        let (stop, stopped) = mpsc::channel::<()>();
        let handle = std::thread::Builder::new()
            .name(format!("temp-{}", dev.name))
            .spawn(move || {
                loop {
                    let (celsius, error) = match read_temperature(drives.as_ref(), &dev) {
                        Ok(t) => (t, None),
                        Err(e) => (None, Some(e.to_string())),
                    };
                    let sample = TempSample {
                        device: dev.name.clone(),
                        at: start.elapsed(),
                        celsius,
                        error,
                    };
                    if !sink(sample) {
                        return;
                    }
                    // The stop channel doubles as the sleep: a stop wakes it at once.
                    match stopped.recv_timeout(interval) {
                        Err(RecvTimeoutError::Timeout) => {}
                        _ => return,
                    }
                }
            })?;
        Ok(TempPoller {
            stop: Some(stop),
            handle: Some(handle),
        })
    }

    /// Stops and waits for the thread.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        drop(self.stop.take());
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for TempPoller {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::{FakeDevice, FakeDrives};

    fn fake(temp: Result<Option<i64>, DriveError>) -> (Arc<FakeDrives>, BlockDevice) {
        let mut d = FakeDevice::new("sda", Transport::Sata);
        d.temperature = temp;
        let drives = Arc::new(FakeDrives::new().with(d));
        let dev = drives.device("sda").unwrap();
        (drives, dev)
    }

    #[test]
    fn polls_until_stopped() {
        let (drives, dev) = fake(Ok(Some(41)));
        let (tx, rx) = mpsc::channel();
        let start = Instant::now();
        let poller = TempPoller::spawn_raw(
            drives.clone(),
            dev,
            Duration::from_millis(5),
            start,
            move |s| tx.send(s).is_ok(),
        )
        .unwrap();
        let first = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        let second = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        poller.stop();
        assert_eq!((first.celsius, first.error.as_deref()), (Some(41), None));
        assert!(second.at >= first.at);
        assert_eq!(first.device, "sda");
        let polled = drives
            .calls()
            .iter()
            .filter(|c| *c == "temperature sda")
            .count();
        // Nothing more arrives after stop.
        while rx.try_recv().is_ok() {}
        std::thread::sleep(Duration::from_millis(30));
        assert!(rx.try_recv().is_err());
        assert!(polled >= 2);
    }

    #[test]
    fn errors_are_samples_and_stop_is_immediate() {
        let (drives, dev) = fake(Err(DriveError::NoDevice("gone".into())));
        let (tx, rx) = mpsc::channel();
        let poller = TempPoller::spawn(
            drives,
            dev,
            PollConfig::every(Duration::from_secs(3600)),
            Instant::now(),
            move |s| tx.send(s).is_ok(),
        )
        .unwrap();
        let s = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(s.celsius, None);
        assert_eq!(s.error.as_deref(), Some("gone"));
        // An hour's interval, yet stopping does not wait for it.
        let t = Instant::now();
        drop(poller);
        assert!(t.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_closed_sink_ends_the_thread() {
        let (drives, dev) = fake(Ok(None));
        let poller = TempPoller::spawn_raw(
            drives.clone(),
            dev,
            Duration::from_millis(1),
            Instant::now(),
            |_| false,
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(drives.calls().len(), 1, "one read, then the sink said stop");
        poller.stop();
    }

    #[test]
    fn defaults_per_transport() {
        assert!(PollConfig::default_for(Transport::Usb).is_none());
        assert!(PollConfig::default_for(Transport::Virtio).is_none());
        assert_eq!(
            PollConfig::default_for(Transport::Nvme).unwrap().interval,
            PollConfig::DEFAULT_INTERVAL
        );
        assert_eq!(
            PollConfig::every(Duration::from_millis(10)).interval,
            PollConfig::MIN_INTERVAL
        );
    }
}
