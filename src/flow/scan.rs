//! The surface scan as a job, for both faces: `OpenedScan` steps a device its caller opened
//! and set up (`commands::scan`: range, read size, mapfile), and the TUI's `ScanJob` opens one
//! with the defaults defined here (the CLI's flags default to them).
//!
//! The device is opened read-only (`sys::scan::ScanDevice`); the TUI's job checks it is still
//! the device the admin chose. Updates go out once per interval, never per read, and once at
//! the end; the stop flag is read between reads. While a read hangs, a watcher thread sends
//! the scan with the read in flight (`scan::live`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::job::{Job, JobContext, JobEnv, Order};
use crate::model::ChosenDevice;
use crate::model::exit::usage_bail;
use crate::scan::Span;
use crate::scan::blockmap::DEFAULT_CELLS;
use crate::scan::engine::{BlockReader, Scan, ScanConfig, Step};
use crate::scan::live::LiveScan;
use crate::scan::mapfile::Mapfile;
use crate::scan::snapshot::ScanUpdate;
use crate::sys::scan::{MAX_BLOCK, ScanDevice};

/// The default read size.
pub const DEFAULT_BLOCK: u64 = 1 << 20;
/// A block this slow or slower is slow, and read a second time (`--slow`'s default).
pub const SLOW: Duration = Duration::from_millis(150);
/// A block is abandoned at this (`--timeout`'s default).
pub const TIMEOUT: Duration = Duration::from_secs(3);
/// How often the screen hears from the scan.
pub const INTERVAL: Duration = Duration::from_millis(250);
/// Points of a scan's zone curve, at most (neighbours merge beyond).
pub const ZONE_POINTS: usize = 256;

/// The read size: `asked` (--block), else 1 MiB, at most `MAX_BLOCK`, whatever the device's
/// largest transfer (a larger read is split: see `ScanDevice::enforce_timeout`).
pub fn block_size(asked: Option<u64>, sector: u64) -> anyhow::Result<u64> {
    let block = match asked {
        None => DEFAULT_BLOCK / sector * sector,
        Some(b) => {
            if b == 0 || !b.is_multiple_of(sector) {
                usage_bail!(
                    "--block {b} must be a multiple of the logical block size ({sector} bytes)"
                );
            }
            if b > MAX_BLOCK {
                usage_bail!(
                    "--block {b} is larger than the largest block a scan reads ({MAX_BLOCK} bytes)"
                );
            }
            b
        }
    };
    Ok(block.max(sector))
}

/// A look at the scan from a thread of its own: the thread's name, how often, and the look.
pub type Watch<'a> = (&'static str, Duration, &'a (dyn Fn(&LiveScan) + Sync));

/// Steps the scan in `live` on `reader` until it ends or `stop()` (ended as stopped), calling
/// `after_read` after each read (false: stop now); with `watch`, a thread looks every period
/// meanwhile, so a read that hangs is seen.
pub fn read_until_done(
    live: &LiveScan,
    reader: &mut dyn BlockReader,
    stop: &dyn Fn() -> bool,
    after_read: &mut dyn FnMut(&LiveScan) -> bool,
    watch: Option<Watch<'_>>,
) {
    let (quit, quit_rx) = mpsc::channel::<()>();
    std::thread::scope(|s| {
        if let Some((name, period, look)) = watch {
            // Without the watcher the scan still runs, as it did before there was one.
            let _ = std::thread::Builder::new()
                .name(name.into())
                .spawn_scoped(s, move || {
                    while let Err(mpsc::RecvTimeoutError::Timeout) = quit_rx.recv_timeout(period) {
                        look(live);
                    }
                });
        }
        loop {
            if stop() {
                live.with(Scan::stop);
                break;
            }
            if live.step(reader) == Step::Done {
                break;
            }
            if !after_read(live) {
                live.with(Scan::stop);
                break;
            }
        }
        drop(quit);
    });
}

/// The scan job's name (`Cmd::StopJob` stops it by it).
pub const NAME: &str = "scan";

/// The TUI's scan of one device, opened with the scan's defaults and run as an `OpenedScan`;
/// its own order (it needs nothing the screen does not know).
#[derive(Debug, Clone, PartialEq)]
pub struct ScanJob {
    /// Its kernel name.
    pub device: String,
    pub path: PathBuf,
    /// The device as the admin chose it: refused when the name holds another device now.
    pub chosen: Option<ChosenDevice>,
}

/// What the scan says.
#[derive(Debug, Clone)]
pub enum ScanMsg {
    /// What it found so far, and at its end the last of it with why it ended.
    Update(Box<ScanUpdate>),
    /// It did not start (cannot open, another device under the chosen name): why.
    Refused(String),
}

impl Order for ScanJob {
    type Job = ScanJob;

    fn job(self, _: &JobEnv) -> ScanJob {
        self
    }

    fn stamp(&mut self, chosen: &dyn Fn(&str) -> Option<ChosenDevice>) {
        if self.chosen.is_none() {
            self.chosen = chosen(&self.device);
        }
    }
}

impl Job for ScanJob {
    type Msg = ScanMsg;
    type Output = ();

    fn name(&self) -> &'static str {
        NAME
    }

    fn cannot_start(&self, error: &std::io::Error) -> ScanMsg {
        ScanMsg::Refused(format!("cannot start the scan: {error}"))
    }

    fn run(self, ctx: &JobContext<'_, ScanMsg>) {
        let mut reader = match open(&self.path, self.chosen.as_ref()) {
            Ok(r) => r,
            Err(why) => {
                ctx.send(ScanMsg::Refused(why));
                return;
            }
        };
        let sector = u64::from(reader.logical.max(512));
        let block = block_size(None, sector).unwrap_or(sector);
        if let Err(e) = reader.set_block(block) {
            ctx.send(ScanMsg::Refused(format!("cannot allocate the buffer: {e}")));
            return;
        }
        // As the CLI does: on an sd disk a weak sector is abandoned at the command timeout
        // (floor: `sys::scan::SG_MIN_TIMEOUT`), not waited out through the kernel's retries.
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
        let opened = OpenedScan {
            device: self.device,
            reader,
            scan,
            checkpoint: None,
        };
        let _ = opened.run(ctx);
    }
}

/// The scan of a device its caller opened and set up (`disktriage scan`, `ScanJob`). It hands
/// back the scan, its whole map, and the device (a repair writes through it next).
pub struct OpenedScan {
    /// The name its updates carry.
    pub device: String,
    pub reader: ScanDevice,
    pub scan: Scan,
    /// Called between reads with the scan as it stands, once per its period (the CLI saves
    /// its mapfile).
    pub checkpoint: Option<Checkpoint>,
}

/// A look at the scan between reads, once per `every`.
pub struct Checkpoint {
    pub every: Duration,
    pub save: Box<dyn FnMut(&Scan) + Send>,
}

impl Job for OpenedScan {
    type Msg = ScanMsg;
    type Output = (Scan, ScanDevice);

    fn name(&self) -> &'static str {
        "scan"
    }

    fn cannot_start(&self, error: &std::io::Error) -> ScanMsg {
        ScanMsg::Refused(format!("cannot start the scan: {error}"))
    }

    fn run(self, ctx: &JobContext<'_, ScanMsg>) -> (Scan, ScanDevice) {
        let OpenedScan {
            device,
            mut reader,
            scan,
            checkpoint,
        } = self;
        let started = Instant::now();
        let scan = drive_with(
            device,
            scan,
            &mut reader,
            ctx,
            &mut || started.elapsed(),
            Some(ctx.interval),
            checkpoint,
        );
        (scan, reader)
    }
}

/// Opens the device for the scan, refused when the name holds another device than `chosen`.
fn open(path: &std::path::Path, chosen: Option<&ChosenDevice>) -> Result<ScanDevice, String> {
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

/// Steps `scan` on `reader` until it ends or the job is stopped, sending an update every
/// `ctx.interval` of `clock` (fake in tests) and a last one at the end. Neither the scan's
/// memory nor an update's grows with the device.
pub fn drive(
    device: String,
    scan: Scan,
    reader: &mut dyn BlockReader,
    ctx: &JobContext<'_, ScanMsg>,
    clock: &mut dyn FnMut() -> Duration,
) -> Scan {
    drive_with(device, scan, reader, ctx, clock, None, None)
}

/// `drive`, and with `watch`, a thread that sends the scan with a read in flight that long
/// (`ScanUpdate::in_flight`): a read that hangs does not freeze the screen.
pub fn drive_watched(
    device: String,
    scan: Scan,
    reader: &mut dyn BlockReader,
    ctx: &JobContext<'_, ScanMsg>,
    clock: &mut dyn FnMut() -> Duration,
    watch: Option<Duration>,
) -> Scan {
    drive_with(device, scan, reader, ctx, clock, watch, None)
}

/// `drive_watched`, and with `checkpoint`, its look at the scan between reads.
fn drive_with(
    device: String,
    scan: Scan,
    reader: &mut dyn BlockReader,
    ctx: &JobContext<'_, ScanMsg>,
    clock: &mut dyn FnMut() -> Duration,
    watch: Option<Duration>,
    checkpoint: Option<Checkpoint>,
) -> Scan {
    let every = ctx.interval;
    let mut checkpoint = checkpoint.map(|c| (c, Instant::now()));
    let live = LiveScan::new(scan);
    let zone = Mutex::new(Zone::default());
    // The clock when the read in flight began (nanoseconds), for the watcher's updates.
    let began = AtomicU64::new(0);
    let mut last = clock();
    began.store(nanos(last), Ordering::Relaxed);
    let mut done_then = 0u64;
    let mut position_then = live.view(|scan, _| scan.position());
    let send = |u: ScanUpdate| ctx.send(ScanMsg::Update(Box::new(u)));
    let mut after_read = |live: &LiveScan| {
        let now = clock();
        began.store(nanos(now), Ordering::Relaxed);
        if let Some((c, last)) = checkpoint.as_mut()
            && last.elapsed() >= c.every
        {
            *last = Instant::now();
            live.view(|scan, _| (c.save)(scan));
        }
        let since = now.saturating_sub(last);
        if since < every || since.is_zero() {
            return true;
        }
        // False when nobody listens any more (the session ended): the scan stops.
        live.view(|scan, _| {
            let mut zone = zone.lock().unwrap_or_else(PoisonError::into_inner);
            let bytes = scan.done.saturating_sub(done_then);
            zone.add(
                position_then / 2 + scan.position() / 2,
                bytes as f64 / since.as_secs_f64() / 1e6,
            );
            (done_then, position_then, last) = (scan.done, scan.position(), now);
            send(update(&device, scan, &zone, now))
        })
    };
    let watcher = |live: &LiveScan| {
        let Some(period) = watch else { return };
        live.view(|scan, in_flight| {
            let Some(f) = in_flight.filter(|f| f.waited >= period) else {
                return;
            };
            let elapsed =
                Duration::from_nanos(began.load(Ordering::Relaxed)).saturating_add(f.waited);
            let zone = zone.lock().unwrap_or_else(PoisonError::into_inner);
            let mut u = update(&device, scan, &zone, elapsed);
            u.in_flight = Some(f);
            // Sent under the scan's lock: it arrives before the update that follows the
            // read, never after it.
            send(u);
        });
    };
    read_until_done(
        &live,
        reader,
        &|| ctx.stopped(),
        &mut after_read,
        watch.map(|p| ("scan-watch", p, &watcher as &(dyn Fn(&LiveScan) + Sync))),
    );
    let zone = zone.into_inner().unwrap_or_else(PoisonError::into_inner);
    let scan = live.into_scan();
    send(update(&device, &scan, &zone, clock()));
    scan
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::engine::{End, ReadOutcome, TimedRead};
    use std::sync::atomic::AtomicUsize;

    /// Reads every block at once, counting them.
    struct Quick(usize);

    impl BlockReader for Quick {
        fn read(&mut self, _: Span) -> TimedRead {
            self.0 += 1;
            TimedRead {
                outcome: ReadOutcome::Read,
                elapsed: Duration::from_micros(10),
            }
        }
        fn gone(&mut self) -> Option<String> {
            None
        }
    }

    fn scan(blocks: u64) -> LiveScan {
        let size = blocks * 4096;
        LiveScan::new(Scan::new(
            ScanConfig {
                domain: Span::new(0, size),
                block: 4096,
                sector: 512,
                slow: SLOW,
                timeout: TIMEOUT,
                retry: false,
                map_cells: DEFAULT_CELLS,
            },
            Mapfile::new(size),
        ))
    }

    /// The CLI's use of the loop: to the end, or stopped by its flag, or by `after_read`;
    /// the watch looks on its own thread meanwhile.
    #[test]
    fn the_loop_runs_to_the_end_or_stops_when_asked() {
        let live = scan(64);
        let mut disk = Quick(0);
        let mut after = 0;
        read_until_done(
            &live,
            &mut disk,
            &|| false,
            &mut |_| {
                after += 1;
                true
            },
            None,
        );
        // Every block read, and `after_read` after each read that did not end the scan.
        assert_eq!(disk.0, 64);
        assert!((63..=64).contains(&after), "{after}");
        assert_eq!(live.into_scan().end, Some(End::Finished));

        let live = scan(64);
        let mut disk = Quick(0);
        let reads = AtomicUsize::new(0);
        let looked = AtomicUsize::new(0);
        let look = |_: &LiveScan| {
            looked.fetch_add(1, Ordering::Relaxed);
        };
        read_until_done(
            &live,
            &mut disk,
            &|| reads.load(Ordering::Relaxed) >= 10,
            &mut |_| {
                reads.fetch_add(1, Ordering::Relaxed);
                // Slow enough for the watch to look at least once.
                std::thread::sleep(Duration::from_millis(2));
                true
            },
            Some(("test-watch", Duration::from_millis(1), &look)),
        );
        assert_eq!(disk.0, 10);
        assert!(looked.load(Ordering::Relaxed) > 0);
        assert_eq!(live.into_scan().end, Some(End::Stopped));

        let live = scan(64);
        let mut disk = Quick(0);
        read_until_done(&live, &mut disk, &|| false, &mut |_| false, None);
        assert_eq!(disk.0, 1);
        assert_eq!(live.into_scan().end, Some(End::Stopped));
    }

    /// The CLI's flags default to the scan's defaults here: the TUI's scan and
    /// `disktriage scan` without flags read alike.
    #[test]
    fn the_cli_defaults_are_the_scan_defaults() {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from(["disktriage", "scan", "/dev/null"]).unwrap();
        let Some(crate::cli::Command::Scan(args)) = cli.command else {
            panic!("not a scan")
        };
        assert_eq!((args.slow, args.timeout), (SLOW, TIMEOUT));
        assert_eq!(args.block, None);
        assert_eq!(block_size(None, 512).unwrap(), DEFAULT_BLOCK);
        assert_eq!(block_size(None, 4096).unwrap(), DEFAULT_BLOCK);
    }
}
