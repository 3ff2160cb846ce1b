//! `disktriage scan`: the surface scan of one block device, read-only.
//!
//! Every check runs before the first read: the arguments, the device, the output files (never
//! on the scanned disk, not even through a file system on it) and an existing mapfile (of a
//! device of this size, and of this disk when it says which). The scan job is the TUI's
//! (`flow::scan::OpenedScan`, run by `commands::job`); the mapfile is saved every 30 s. A stop
//! signal saves the files, prints what was read and exits 128 + the signal. Otherwise 0 every
//! sector read, 4 some unreadable, 3 blocks abandoned at `--timeout`, 5 the scan incomplete.

use std::io::BufRead;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::job::run_job;
use crate::bench::exec::safety::{self, WriteRefusal};
use crate::cli::ScanArgs;
use crate::flow::scan::{Checkpoint, OpenedScan, ScanMsg, block_size};
use crate::flow::scan_progress::{self, ScanFigures};
use crate::history::History;
use crate::model::exit::usage_bail;
use crate::model::text::neutralize_controls;
use crate::model::{Bytes, UsageError, exit};
use crate::model::{ChosenDevice, SmartReading};
use crate::report::output::{output_width, write_stderr, write_stdout};
use crate::report::scan::{self as report, ScanRun, ScanTarget};
use crate::report::scan::{RepairRun, SectorCounts};
use crate::scan::Span;
use crate::scan::badblocks;
use crate::scan::blockmap::DEFAULT_CELLS;
use crate::scan::engine::{End, Scan, ScanConfig};
use crate::scan::mapfile::{Mapfile, MapfileParser, Status};
use crate::scan::repair;
use crate::scan::snapshot::ScanUpdate;
use crate::sys::drive_control::DriveControl;
use crate::sys::output_file::OutputFile;
use crate::sys::scan::{ScanDevice, WrittenDevice, ZeroWriter, whole_disk};
use crate::sys::signals::{Catch, StopSignals};
use crate::sys::{LinuxDrives, direct};
use crate::sys::{SysRoot, activity};

/// Exit status when some sectors could not be read: failing, as `triage` and `smart` say it.
pub const EXIT_UNREADABLE: u8 = exit::FAILING;
/// Exit status when no sector failed but some blocks were abandoned at `--timeout`: suspect.
pub const EXIT_ABANDONED: u8 = exit::SUSPECT;
/// Exit status when the scan could not finish (the device went away or changed): unknown.
pub const EXIT_INCOMPLETE: u8 = exit::UNKNOWN;

/// How often the mapfile is saved during a scan.
const SAVE_EVERY: Duration = Duration::from_secs(30);
/// How often the progress line is redrawn, whether reads complete or hang.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// The comment line that says which disk a mapfile is of.
const DEVICE_COMMENT: &str = "disktriage device: ";

/// Runs the command.
pub fn scan(history_dir: &Path, args: &ScanArgs) -> anyhow::Result<ExitCode> {
    let bb_size = badblocks::check_bb_size(args.bb_size).map_err(UsageError)?;
    check_durations(args)?;
    let shown = args.target.display().to_string();
    let Opened {
        mut device,
        sector,
        domain,
        block,
    } = open(args, &shown)?;
    let target = describe(&device, &shown);
    // --repair's write guard first: before the SG_IO probe below reads a sector, and before
    // any output file is touched.
    let mut repairer = if args.repair {
        Some(Repairer::prepare(
            &device,
            args.destroy_data.as_deref(),
            block,
        )?)
    } else {
        None
    };
    // Where the transport has a per-command timeout (sd: SATA, SAS, USB), a weak sector is
    // abandoned at --timeout instead of waited for through the kernel's retries.
    let (abandon_after, timeout_reason) = match device.enforce_timeout(args.timeout) {
        Ok((how, after)) => (Some(after), how),
        Err(why) => (None, why),
    };

    let (mapfile_out, badblocks_out) = output_files(args, &device)?;
    let config = ScanConfig {
        domain,
        block,
        sector,
        slow: args.slow,
        timeout: args.timeout,
        retry: args.retry,
        map_cells: DEFAULT_CELLS,
    };
    let scan = new_scan(args, config, mapfile_out.as_ref(), &target, device.size)?;

    let signals = StopSignals::catch(Catch::Command)?;
    let comments = mapfile_comments(&target);
    let mapfile_out = mapfile_out.map(Arc::new);
    let checkpoint = mapfile_out
        .clone()
        .map(|out| save_every(out, comments.clone()));
    let (scan, mut device, seconds) = run_scan(device, scan, checkpoint, &target, &signals)?;

    // Saved first: the files are what a stopped scan leaves for the next one.
    let outputs = Outputs {
        mapfile: mapfile_out.as_deref(),
        badblocks: badblocks_out.as_ref(),
        bb_size,
        comments: &comments,
        domain,
    };
    let mut file_errors = outputs.save(&scan.mapfile);

    let repaired = repairer
        .as_mut()
        .map(|r| r.after_scan(&scan, domain, sector, block, &mut device, &signals));
    // The map as the disk is now, saved again when the repair changed it (a repaired sector is
    // '+' and leaves the badblocks list); the report keeps what the scan read. Copied only
    // then: a dying disk's map can be millions of regions.
    let repaired_map = repaired.as_ref().filter(|r| r.repair.reads_now()).map(|r| {
        let mut now = scan.mapfile.clone();
        r.repair.mark_repaired(&mut now, sector);
        now
    });
    if let Some(now) = &repaired_map {
        file_errors = outputs.save(now);
    }
    let now = repaired_map.as_ref().unwrap_or(&scan.mapfile);

    let run = ScanRun {
        target: &target,
        scan: &scan,
        seconds,
        timeout_enforced: abandon_after.is_some(),
        abandon_after,
        timeout_reason,
        mapfile: args.mapfile.as_ref().map(|p| p.display().to_string()),
        badblocks: args.badblocks.as_ref().map(|p| p.display().to_string()),
        repair: repaired.as_ref(),
    };
    print_report(args, &run)?;
    record(history_dir, &target, &scan, seconds, &|| signals.is_set());
    exit_status(file_errors, &signals, &scan, now, domain, &shown)
}

/// The device opened for reading, with what its logical block size makes of the arguments.
struct Opened {
    device: ScanDevice,
    sector: u64,
    domain: Span,
    block: u64,
}

/// Opens the device, checks --offset, --size and --block against it and allocates the read
/// buffer.
fn open(args: &ScanArgs, shown: &str) -> anyhow::Result<Opened> {
    let mut device = ScanDevice::open(&args.target)
        .with_context(|| format!("cannot open {} for reading", neutralize_controls(shown)))?;
    let sector = u64::from(device.logical.max(512));
    let domain = domain(args, device.size, sector)?;
    let block = block_size(args.block, sector)?;
    device
        .set_block(block)
        .context("cannot allocate the read buffer")?;
    Ok(Opened {
        device,
        sector,
        domain,
        block,
    })
}

/// The --mapfile and --badblocks files, each when asked for, checked to be off the scanned
/// disk; an existing badblocks list is refused.
fn output_files(
    args: &ScanArgs,
    device: &ScanDevice,
) -> anyhow::Result<(Option<OutputFile>, Option<OutputFile>)> {
    let disk_family = activity::stacked_on(whole_disk(device.dev));
    let mapfile_out = args
        .mapfile
        .as_deref()
        .map(|p| output_file(p, "--mapfile", &disk_family))
        .transpose()?;
    let badblocks_out = args
        .badblocks
        .as_deref()
        .map(|p| {
            let out = output_file(p, "--badblocks", &disk_family)?;
            out.refuse_existing().with_context(|| {
                format!(
                    "--badblocks {}",
                    neutralize_controls(&p.display().to_string())
                )
            })?;
            anyhow::Ok(out)
        })
        .transpose()?;
    Ok((mapfile_out, badblocks_out))
}

/// The scan, resumed from the mapfile at `mapfile_out` when there is one (said on stderr),
/// else from an empty map.
fn new_scan(
    args: &ScanArgs,
    config: ScanConfig,
    mapfile_out: Option<&OutputFile>,
    target: &ScanTarget,
    device_size: u64,
) -> anyhow::Result<Scan> {
    let map = match mapfile_out {
        Some(out) => existing_mapfile(out, target)?,
        None => None,
    };
    let resumed = map.is_some();
    let map = map.unwrap_or_else(|| Mapfile::new(device_size));

    let scan = Scan::new(config, map);
    if resumed {
        write_stderr(&format!(
            "disktriage: resuming from {}: {} of the range left to read\n",
            neutralize_controls(
                &args
                    .mapfile
                    .as_deref()
                    .unwrap_or(Path::new(""))
                    .display()
                    .to_string()
            ),
            Bytes(scan.planned)
        ));
    }
    Ok(scan)
}

/// Runs the scan job with its progress line; the scan as it ended, the device back, and the
/// seconds it took.
fn run_scan(
    reader: ScanDevice,
    scan: Scan,
    checkpoint: Option<Checkpoint>,
    target: &ScanTarget,
    signals: &StopSignals,
) -> anyhow::Result<(Scan, ScanDevice, f64)> {
    let job = OpenedScan {
        device: target.name.clone().unwrap_or_else(|| target.path.clone()),
        reader,
        scan,
        checkpoint,
    };
    let mut follow = Follow {
        name: neutralize_controls(target.name.as_deref().unwrap_or(&target.path)),
    };
    let started = Instant::now();
    let (scan, device) = run_job(job, signals, &mut follow)?;
    let seconds = started.elapsed().as_secs_f64();
    Ok((scan, device, seconds))
}

/// Writes the report, as JSON with --json, else as text.
fn print_report(args: &ScanArgs, run: &ScanRun) -> anyhow::Result<()> {
    let text = if args.json {
        report::render_json(run)?
    } else {
        report::render_text(run, output_width())
    };
    write_stdout(&text)?;
    Ok(())
}

/// How the command ends: the first file error, a stop signal's status, then the scan's (module
/// docs). `now` is the map as the disk is now.
fn exit_status(
    file_errors: Vec<String>,
    signals: &StopSignals,
    scan: &Scan,
    now: &Mapfile,
    domain: Span,
    shown: &str,
) -> anyhow::Result<ExitCode> {
    if let Some(e) = file_errors.into_iter().next() {
        bail!("{}", neutralize_controls(&e));
    }
    if let Some(code) = signals.exit_code() {
        return Ok(ExitCode::from(code));
    }
    if let Some(End::Gone(why)) = &scan.end {
        write_stderr(&format!(
            "disktriage: the scan of {} could not finish: {}\n",
            neutralize_controls(shown),
            neutralize_controls(why)
        ));
        return Ok(ExitCode::from(EXIT_INCOMPLETE));
    }
    // Repaired sectors no longer count; bad sectors an earlier run left in the mapfile, not
    // read again, still do.
    if now.bytes_with(Status::BadSector, domain) > 0 {
        return Ok(ExitCode::from(EXIT_UNREADABLE));
    }
    if scan.bytes_abandoned > 0 {
        return Ok(ExitCode::from(EXIT_ABANDONED));
    }
    Ok(ExitCode::SUCCESS)
}

/// The progress line, from the scan's updates (`flow::scan_progress`).
struct Follow {
    name: String,
}

impl super::job::Follow<ScanMsg> for Follow {
    fn every(&self) -> Duration {
        PROGRESS_EVERY
    }

    fn hear(&mut self, msg: ScanMsg) -> Option<String> {
        match msg {
            ScanMsg::Update(u) => Some(scan_progress::line(
                &ScanFigures::of_update(&self.name, &u),
                scan_progress::WIDTH,
            )),
            ScanMsg::Refused(_) => None,
        }
    }
}

/// Saves the mapfile every `SAVE_EVERY`; the first failure is said on stderr (the last save
/// says it again as the command's error).
fn save_every(out: Arc<OutputFile>, comments: Vec<String>) -> Checkpoint {
    let mut said = false;
    Checkpoint {
        every: SAVE_EVERY,
        save: Box::new(move |scan: &Scan| {
            if let Err(e) = out.replace(&scan.mapfile.render(&comments))
                && !said
            {
                said = true;
                let text = format!("cannot save the mapfile {}: {e}", out.path.display());
                write_stderr(&format!("\ndisktriage: {}\n", neutralize_controls(&text)));
            }
        }),
    }
}

/// Adds the scan, however it ended, to the history as the TUI's scan does; a failure is a
/// warning on stderr. `stop` ends a wait for the history's lock.
fn record(dir: &Path, target: &ScanTarget, scan: &Scan, seconds: f64, stop: &dyn Fn() -> bool) {
    let device = target.name.as_deref().unwrap_or(&target.path);
    let update = ScanUpdate::of(
        device,
        scan,
        Vec::new(),
        Duration::from_secs_f64(seconds.max(0.0)),
    );
    match History::new(dir).record_scan(target.identity.clone(), &update, &target.path, stop) {
        Ok((_, warnings)) => {
            for w in warnings {
                write_stderr(&format!(
                    "disktriage: history: {}\n",
                    neutralize_controls(&w)
                ));
            }
        }
        Err(not_added) => write_stderr(&format!(
            "disktriage: warning: {}\n",
            neutralize_controls(&not_added)
        )),
    }
}

fn check_durations(args: &ScanArgs) -> anyhow::Result<()> {
    let ms = Duration::from_millis(1);
    if args.slow < ms {
        usage_bail!("--slow must be at least 1ms (every block would be slow and read twice)");
    }
    if args.timeout < ms {
        usage_bail!("--timeout must be at least 1ms");
    }
    Ok(())
}

/// The byte range to scan, from --offset and --size, checked against the device.
fn domain(args: &ScanArgs, device_size: u64, sector: u64) -> anyhow::Result<Span> {
    let offset = args.offset.unwrap_or(0);
    if !offset.is_multiple_of(sector) {
        usage_bail!(
            "--offset {offset} is not a multiple of the logical block size ({sector} bytes)"
        );
    }
    if offset >= device_size {
        usage_bail!(
            "--offset {offset} is at or beyond the end of the device ({device_size} bytes)"
        );
    }
    let size = match args.size {
        None => device_size - offset,
        Some(0) => usage_bail!("--size 0: nothing to scan"),
        Some(s) => s,
    };
    if !size.is_multiple_of(sector) {
        usage_bail!("--size {size} is not a multiple of the logical block size ({sector} bytes)");
    }
    if size > device_size - offset {
        usage_bail!(
            "--offset {offset} --size {size} goes beyond the end of the device ({device_size} \
             bytes)"
        );
    }
    Ok(Span::new(offset, size))
}

fn describe(device: &ScanDevice, shown: &str) -> ScanTarget {
    let host = SysRoot::host();
    let name = device.name.clone();
    let (identity, model) = match &name {
        Some(n) => (host.disk_identity(n), host.device_identity(n).model),
        None => (crate::model::DiskIdentity::Name(shown.to_string()), None),
    };
    ScanTarget {
        path: shown.to_string(),
        name,
        dev: device.dev.to_string(),
        size: device.size,
        logical_block_size: device.logical,
        physical_block_size: device.physical,
        identity,
        model,
        partition_start: device.partition_start,
    }
}

/// An output file, refused when it would be on the scanned disk.
fn output_file(
    path: &Path,
    flag: &str,
    disk_family: &[crate::model::DevNum],
) -> anyhow::Result<OutputFile> {
    let shown = neutralize_controls(&path.display().to_string());
    let out = OutputFile::at(path).with_context(|| format!("{flag} {shown}"))?;
    if disk_family.contains(&out.fs_dev) {
        bail!(
            "{flag} {shown} is on a file system of the disk being scanned: a scan never writes \
             to it; put the file elsewhere (e.g. /tmp or another disk)"
        );
    }
    Ok(out)
}

/// The comments written at the top of the mapfile.
fn mapfile_comments(target: &ScanTarget) -> Vec<String> {
    vec![
        format!(
            "Mapfile. Created by disktriage version {} (scan)",
            env!("CARGO_PKG_VERSION")
        ),
        device_comment(target),
    ]
}

/// The mapfile comment naming the disk, on one line as `Mapfile::render` writes it.
fn device_comment(target: &ScanTarget) -> String {
    format!("{DEVICE_COMMENT}{} size {}", target.identity, target.size)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The mapfile already at `out`, checked to be of this device; `None` when there is none.
fn existing_mapfile(out: &OutputFile, target: &ScanTarget) -> anyhow::Result<Option<Mapfile>> {
    let shown = neutralize_controls(&out.path.display().to_string());
    let cannot_read = || format!("cannot read the mapfile {shown}");
    let Some(mut reader) = out.open_existing().with_context(cannot_read)? else {
        return Ok(None);
    };
    // A line at a time: a mapfile of millions of regions is never held whole as text.
    let mut parser = MapfileParser::default();
    let mut device_line: Option<String> = None;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).with_context(cannot_read)? == 0 {
            break;
        }
        let text = line.trim_end_matches(['\n', '\r']);
        if device_line.is_none()
            && let Some(comment) = text.strip_prefix("# ")
            && comment.starts_with(DEVICE_COMMENT)
        {
            device_line = Some(comment.to_string());
        }
        parser
            .line(text)
            .with_context(|| format!("{shown} is not a ddrescue mapfile"))?;
    }
    let map = parser
        .finish()
        .with_context(|| format!("{shown} is not a ddrescue mapfile"))?;
    if map.size() != target.size {
        bail!(
            "the mapfile {shown} covers {} bytes, the device has {}: it is of another device \
             (remove it or name another file)",
            map.size(),
            target.size
        );
    }
    let ours = device_comment(target);
    if let Some(line) = device_line
        && line != ours
    {
        bail!(
            "the mapfile {shown} is of another disk ({}; this one is {}): remove it or name \
             another file",
            neutralize_controls(line.trim_start_matches(DEVICE_COMMENT)),
            neutralize_controls(ours.trim_start_matches(DEVICE_COMMENT))
        );
    }
    Ok(Some(map))
}

/// The files a scan leaves: the mapfile and the badblocks list, each when asked for.
struct Outputs<'a> {
    mapfile: Option<&'a OutputFile>,
    badblocks: Option<&'a OutputFile>,
    bb_size: u64,
    comments: &'a [String],
    domain: Span,
}

impl Outputs<'_> {
    /// Writes both from `map` (the badblocks list: its bad sectors in the range scanned); the
    /// errors, one a file, for the end of the run.
    fn save(&self, map: &Mapfile) -> Vec<String> {
        let mut errors = Vec::new();
        if let Some(out) = self.mapfile
            && let Err(e) = out.replace_with(&mut |w| map.write_to(self.comments, w))
        {
            errors.push(format!(
                "cannot save the mapfile {}: {e}",
                out.path.display()
            ));
        }
        if let Some(out) = self.badblocks {
            let bad = map
                .regions()
                .filter(|&(_, s)| s == Status::BadSector)
                .filter_map(|(span, _)| span.intersect(&self.domain));
            if let Err(e) = out.replace(&badblocks::render(bad, self.bb_size)) {
                errors.push(format!(
                    "cannot write the badblocks list {}: {e}",
                    out.path.display()
                ));
            }
        }
        errors
    }
}

/// `--repair`: the device checked as a write test checks it, and the zero writer opened and
/// checked, before the scan starts.
///
/// O_EXCL keeps every exclusive opener (a mount, mkfs, md/dm/LVM, another write test) off the
/// device until the repair ends; one already holding it refuses the repair before any read. A
/// writer without O_EXCL (`dd of=`) is not stopped: only the sectors the scan found unreadable
/// are written, so its write to one of them is zeroed, as the typed name confirmed.
struct Repairer {
    writer: ZeroWriter,
    /// The writer's descriptor again, to check between writes that it is still the device.
    probe: WrittenDevice,
    /// The device as the write guard saw it in the live inventory.
    checked: ChosenDevice,
    /// The whole disk, whose SMART counts are read.
    disk: String,
    before: SectorCounts,
}

impl Repairer {
    /// The write guard on the live system, the read-only flag, then both descriptors checked
    /// to be the device the guard saw; reads the SMART counts before.
    fn prepare(
        device: &ScanDevice,
        confirmation: Option<&str>,
        max_write: u64,
    ) -> anyhow::Result<Repairer> {
        let name = device.name.clone().ok_or_else(|| WriteRefusal::Unknown {
            name: format!("device {}", device.dev),
        })?;
        let live = SysRoot::host().inventory().context(
            "cannot read the running system's devices to check that the target is unused",
        )?;
        safety::check_device_write(&live, &name, confirmation)?;
        if device.read_only().unwrap_or(false) {
            return Err(WriteRefusal::ReadOnly { name }.into());
        }
        let checked = live
            .chosen(&name)
            .ok_or_else(|| WriteRefusal::Unknown { name: name.clone() })?;
        let mut writer = device.open_writer().with_context(|| {
            format!("cannot open {name} for writing (O_DIRECT, exclusively) to repair it")
        })?;
        for verdict in [
            device.refuse_unless_chosen(&checked),
            writer.refuse_unless_chosen(&checked),
        ] {
            match verdict {
                Ok(Ok(())) => {}
                Ok(Err(why)) => bail!("{}", neutralize_controls(&why)),
                Err(e) => {
                    return Err(anyhow::Error::new(e)
                        .context(format!("cannot check that {name} is the device checked")));
                }
            }
        }
        writer
            .set_max_write(max_write)
            .context("cannot allocate the repair's buffer")?;
        let probe = writer
            .probe()
            .context("cannot hold the device opened for the repair")?;
        let disk = direct::block_name(whole_disk(device.dev)).unwrap_or_else(|| name.clone());
        let before = sector_counts(&disk);
        Ok(Repairer {
            writer,
            probe,
            checked,
            disk,
            before,
        })
    }

    /// The repair after the scan: only after a scan that ran to its end on the same device,
    /// only the sectors this scan found unreadable in the range scanned.
    fn after_scan(
        &mut self,
        scan: &Scan,
        domain: Span,
        sector: u64,
        block: u64,
        device: &mut ScanDevice,
        signals: &StopSignals,
    ) -> RepairRun {
        if matches!(scan.end, Some(End::Finished)) && signals.exit_code().is_none() {
            let bad: Vec<Span> = scan
                .errors
                .iter()
                .filter_map(|(span, _)| span.intersect(&domain))
                .collect();
            self.run(&bad, sector, block, device, &|| signals.is_set())
        } else {
            self.not_run(sector)
        }
    }

    /// The report of a repair that did not run because the scan did not finish.
    fn not_run(&self, sector: u64) -> RepairRun {
        RepairRun {
            repair: repair::Repair {
                sectors: Vec::new(),
                stopped: Some("the scan did not finish, so nothing was written".into()),
            },
            sector,
            before: self.before.clone(),
            after: self.before.clone(),
        }
    }

    /// Writes zeros over `bad` and reads each sector back; the device is checked again before
    /// each write.
    fn run(
        &mut self,
        bad: &[Span],
        sector: u64,
        block: u64,
        device: &mut ScanDevice,
        stop: &dyn Fn() -> bool,
    ) -> RepairRun {
        let Repairer {
            writer,
            probe,
            checked: chosen,
            ..
        } = self;
        // A signal stops the repair before the next write. The scan may have lasted hours, and
        // O_EXCL does not stop a loop device stacked on the target since: the in-use check runs
        // again before the first write, then at most once a second.
        let mut in_use_checked: Option<Instant> = None;
        let mut still_ours = || {
            if stop() {
                return Some("stopped by a signal".to_string());
            }
            match probe.refuse_unless_chosen(chosen) {
                Ok(Ok(())) => {}
                Ok(Err(why)) => return Some(why),
                Err(e) => return Some(format!("cannot check the device: {e}")),
            }
            if in_use_checked.is_none_or(|at| at.elapsed() >= IN_USE_RECHECK) {
                in_use_checked = Some(Instant::now());
                return in_use_now(&chosen.name).err();
            }
            None
        };
        let repair = repair::repair(bad, sector, block, writer, device, &mut still_ours);
        RepairRun {
            repair,
            sector,
            before: self.before.clone(),
            after: sector_counts(&self.disk),
        }
    }
}

/// How often the repair looks again for a new user of the device between its writes.
const IN_USE_RECHECK: Duration = Duration::from_secs(1);

/// The write guard's in-use check on the live system now (the name was confirmed before the
/// scan): `Err` with why nothing more may be written.
fn in_use_now(name: &str) -> Result<(), String> {
    let live = SysRoot::host()
        .inventory()
        .map_err(|e| format!("cannot read the running system's devices to check {name}: {e:#}"))?;
    safety::check_device_write(&live, name, Some(name))
        .map_err(|e| format!("checked again after the scan: {e}"))
}

/// The reallocated (5) and pending (197) sector counts of `disk`, read as the Health view
/// reads SMART; "not available" (`None`) when the drive does not give them.
fn sector_counts(disk: &str) -> SectorCounts {
    let drives = LinuxDrives::new(SysRoot::host());
    let reading = drives
        .device(disk)
        .map_err(|e| e.to_string())
        .and_then(|dev| drives.smart(&dev).map_err(|e| e.to_string()));
    let ata = match reading {
        Ok(SmartReading::Ata(ata)) => ata,
        Ok(SmartReading::Smartctl(report)) => match report.ata {
            Some(ata) => ata,
            None => {
                return SectorCounts {
                    note: Some("smartctl gives no ATA attributes for this drive".into()),
                    ..SectorCounts::default()
                };
            }
        },
        Ok(SmartReading::Nvme(_)) => {
            return SectorCounts {
                note: Some("an NVMe drive has no reallocated or pending sector counts".into()),
                ..SectorCounts::default()
            };
        }
        Ok(SmartReading::Unavailable { reason }) | Err(reason) => {
            return SectorCounts {
                note: Some(reason),
                ..SectorCounts::default()
            };
        }
    };
    // All 48 raw bits, as the Health view and the SMART verdict read them, so the
    // before/after agrees with that screen.
    let raw = |id: u8| ata.attributes.iter().find(|a| a.id == id).map(|a| a.raw);
    SectorCounts {
        reallocated: raw(5),
        pending: raw(197),
        note: None,
    }
}
