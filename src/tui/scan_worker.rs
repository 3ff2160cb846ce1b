//! The TUI's surface scan worker: opens the device read-only (`sys::scan::ScanDevice`: never
//! for writing, never exclusively, so a mounted or held device is scanned too), checks it is
//! still the device the admin chose (`ChosenDevice`, as a test run does), then steps the
//! engine (`scan::engine`) and sends what it found once per interval (`Msg::Scan`), never
//! per read, and once more at the end with why it ended. The stop flag is read between reads.
//! While a read hangs, a watcher thread sends the scan as it stood with the read in flight,
//! once per interval (`scan::live`).

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::event::{Msg, ScanUpdate, ZONE_POINTS};
use crate::model::ChosenDevice;
use crate::scan::Span;
use crate::scan::blockmap::DEFAULT_CELLS;
use crate::scan::engine::{BlockReader, Scan, ScanConfig, Step};
use crate::scan::live::LiveScan;
use crate::scan::mapfile::Mapfile;
use crate::sys::scan::ScanDevice;

/// How often the screen hears from the scan.
pub const INTERVAL: Duration = Duration::from_millis(250);

/// The CLI's defaults: slow at 150 ms, TIME at 3 s.
const SLOW: Duration = Duration::from_millis(150);
const TIMEOUT: Duration = Duration::from_secs(3);

/// Starts the surface scan on a thread of its own, after stopping and joining the one in
/// `running` (the app asks for a second only once the first has ended); a scan that cannot
/// start is said (`Msg::ScanRefused`).
pub fn start(
    running: &mut Option<(Arc<AtomicBool>, JoinHandle<()>)>,
    device: String,
    path: &Path,
    chosen: Option<ChosenDevice>,
    tx: &Sender<Msg>,
) {
    if let Some((stop, worker)) = running.take() {
        stop.store(true, Ordering::Relaxed);
        let _ = worker.join();
    }
    let stop = Arc::new(AtomicBool::new(false));
    match spawn(device, path, chosen, Arc::clone(&stop), tx.clone()) {
        Ok(worker) => *running = Some((stop, worker)),
        Err(e) => {
            let _ = tx.send(Msg::ScanRefused(format!("cannot start the scan: {e}")));
        }
    }
}

/// Starts the scan of `path` (kernel name `device`) on a thread of its own.
pub fn spawn(
    device: String,
    path: &Path,
    chosen: Option<ChosenDevice>,
    stop: std::sync::Arc<AtomicBool>,
    tx: Sender<Msg>,
) -> std::io::Result<JoinHandle<()>> {
    let path = path.to_path_buf();
    std::thread::Builder::new()
        .name("scan".into())
        .spawn(move || {
            let mut reader = match open(&path, chosen.as_ref()) {
                Ok(r) => r,
                Err(why) => {
                    let _ = tx.send(Msg::ScanRefused(why));
                    return;
                }
            };
            let sector = u64::from(reader.logical.max(512));
            let block = crate::commands::scan::block_size(None, sector).unwrap_or(sector);
            if let Err(e) = reader.set_block(block) {
                let _ = tx.send(Msg::ScanRefused(format!("cannot allocate the buffer: {e}")));
                return;
            }
            // As the CLI does: on an sd disk (SATA, SAS, USB) a weak sector is abandoned at the
            // command timeout instead of stalling the screen through the kernel's retries;
            // elsewhere it is waited for and still counted TIME.
            let _ = reader.enforce_timeout(TIMEOUT);
            let scan = Scan::new(
                ScanConfig {
                    domain: Span::new(0, reader.size),
                    block,
                    sector,
                    slow: SLOW,
                    timeout: TIMEOUT,
                    retry: false,
                    map_cells: DEFAULT_CELLS,
                },
                Mapfile::new(reader.size),
            );
            let started = Instant::now();
            drive_watched(
                device,
                scan,
                &mut reader,
                &stop,
                &tx,
                INTERVAL,
                &mut || started.elapsed(),
                Some(INTERVAL),
            );
        })
}

/// Opens the device for the scan, refused when the name holds another device than `chosen`.
fn open(path: &Path, chosen: Option<&ChosenDevice>) -> Result<ScanDevice, String> {
    let shown = crate::model::text::neutralize_controls(&path.display().to_string());
    let device = ScanDevice::open(path).map_err(|e| format!("cannot open {shown}: {e}"))?;
    if let Some(chosen) = chosen {
        match device.refuse_unless_chosen(chosen) {
            Ok(Ok(())) => {}
            Ok(Err(why)) => return Err(why),
            Err(e) => {
                return Err(format!(
                    "cannot check that {shown} is the device chosen: {e}"
                ));
            }
        }
    }
    Ok(device)
}

/// Steps `scan` on `reader` until it ends or `stop` is set, sending an update every `every`
/// of `clock` (the time since the scan started: the wall clock, a fake one in tests) and a
/// last one at the end. The scan's memory does not grow with the device, nor does an
/// update's (`ScanUpdate`).
pub fn drive(
    device: String,
    scan: Scan,
    reader: &mut dyn BlockReader,
    stop: &AtomicBool,
    tx: &Sender<Msg>,
    every: Duration,
    clock: &mut dyn FnMut() -> Duration,
) {
    drive_watched(device, scan, reader, stop, tx, every, clock, None);
}

/// `drive`, and with `watch`, a second thread that looks at the scan every `watch` of the wall
/// clock and, while a read has been in flight that long, sends the scan as it stood when that
/// read began with the read in flight (`ScanUpdate::in_flight`): a read that hangs no longer
/// freezes the screen on the update before it.
#[allow(clippy::too_many_arguments)]
pub fn drive_watched(
    device: String,
    scan: Scan,
    reader: &mut dyn BlockReader,
    stop: &AtomicBool,
    tx: &Sender<Msg>,
    every: Duration,
    clock: &mut dyn FnMut() -> Duration,
    watch: Option<Duration>,
) {
    let live = LiveScan::new(scan);
    let zone = Mutex::new(Zone::default());
    // The clock when the read in flight began (nanoseconds), for the watcher's updates.
    let began = AtomicU64::new(0);
    let (quit, quit_rx) = mpsc::channel::<()>();
    std::thread::scope(|s| {
        if let Some(period) = watch {
            let watcher = Watcher {
                live: &live,
                zone: &zone,
                began: &began,
                tx,
                device: &device,
            };
            // Without the watcher the scan still runs, as it did before there was one.
            let _ = std::thread::Builder::new()
                .name("scan-watch".into())
                .spawn_scoped(s, move || watcher.run(period, &quit_rx));
        }
        let mut last = clock();
        began.store(nanos(last), Ordering::Relaxed);
        let mut done_then = 0u64;
        let mut position_then = live.view(|scan, _| scan.position());
        loop {
            if stop.load(Ordering::Relaxed) {
                live.with(Scan::stop);
                break;
            }
            if live.step(reader) == Step::Done {
                break;
            }
            let now = clock();
            began.store(nanos(now), Ordering::Relaxed);
            let since = now.saturating_sub(last);
            if since >= every && !since.is_zero() {
                let sent = live.view(|scan, _| {
                    let mut zone = zone.lock().unwrap_or_else(PoisonError::into_inner);
                    let bytes = scan.done.saturating_sub(done_then);
                    zone.add(
                        position_then / 2 + scan.position() / 2,
                        bytes as f64 / since.as_secs_f64() / 1e6,
                    );
                    (done_then, position_then, last) = (scan.done, scan.position(), now);
                    tx.send(Msg::Scan(Box::new(update(&device, scan, &zone, now))))
                        .is_ok()
                });
                if !sent {
                    // Nobody listens any more (the session ended): stop reading.
                    live.with(Scan::stop);
                    break;
                }
            }
        }
        drop(quit);
    });
    let zone = zone.into_inner().unwrap_or_else(PoisonError::into_inner);
    let scan = live.into_scan();
    let _ = tx.send(Msg::Scan(Box::new(update(&device, &scan, &zone, clock()))));
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// What the watcher thread shares with the reading one.
struct Watcher<'a> {
    live: &'a LiveScan,
    zone: &'a Mutex<Zone>,
    began: &'a AtomicU64,
    tx: &'a Sender<Msg>,
    device: &'a str,
}

impl Watcher<'_> {
    /// Every `period` until `quit` closes: the scan with its read in flight, when that read
    /// has waited `period` or more.
    fn run(&self, period: Duration, quit: &mpsc::Receiver<()>) {
        while let Err(mpsc::RecvTimeoutError::Timeout) = quit.recv_timeout(period) {
            self.live.view(|scan, in_flight| {
                let Some(f) = in_flight.filter(|f| f.waited >= period) else {
                    return;
                };
                let elapsed = Duration::from_nanos(self.began.load(Ordering::Relaxed))
                    .saturating_add(f.waited);
                let zone = self.zone.lock().unwrap_or_else(PoisonError::into_inner);
                let mut u = update(self.device, scan, &zone, elapsed);
                u.in_flight = Some(f);
                // Sent under the scan's lock: it arrives before the update that follows the
                // read, never after it.
                let _ = self.tx.send(Msg::Scan(Box::new(u)));
            });
        }
    }
}

/// Throughput against position, at most `ZONE_POINTS` points: when full, neighbours merge.
#[derive(Default)]
struct Zone(Vec<(u64, f64)>);

impl Zone {
    fn add(&mut self, at: u64, mbps: f64) {
        if self.0.len() >= ZONE_POINTS {
            self.0 = self
                .0
                .chunks(2)
                .map(|pair| {
                    let n = pair.len() as f64;
                    let at = pair.iter().map(|p| p.0 / pair.len() as u64).sum();
                    (at, pair.iter().map(|p| p.1).sum::<f64>() / n)
                })
                .collect();
        }
        self.0.push((at, mbps));
    }
}

fn update(device: &str, scan: &Scan, zone: &Zone, elapsed: Duration) -> ScanUpdate {
    ScanUpdate::of(device, scan, zone.0.clone(), elapsed)
}
