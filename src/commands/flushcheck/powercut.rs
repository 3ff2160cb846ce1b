//! `disktriage flushcheck DEV --record LOG` and `--verify LOG`: the power-cut check
//! (diskchecker.pl's method without the second machine). `--record` writes numbered,
//! checksummed records to a ring at the device start, each made durable (write, then a cache
//! flush), and appends each acknowledged number to LOG on another device, made durable
//! before the next record; the admin cuts the power; `--verify` reads the ring back and names
//! every acknowledged record that is missing or torn.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};

use super::{EXIT_LOST, prepare_write};
use crate::cli::FlushcheckArgs;
use crate::flow::write_target::dir_off_target;
use crate::flush::log::{self, LogHeader};
use crate::flush::records::{self, Slot};
use crate::flush::verify;
use crate::history::{FLUSH_VERIFY_TEST, FlushRecord, HistoryEntry};
use crate::model::text::neutralize_controls;
use crate::report::flushcheck::powercut::VerifyReport;
use crate::report::output::{output_width, write_stderr, write_stdout};
use crate::sys::SysRoot;
use crate::sys::error::describe_io;
use crate::sys::flush::{Durability, FlushDevice, PinnedDevice};
use crate::sys::flush_log::LogDir;
use crate::sys::signals::{Catch, StopSignals};

/// The ring starts at the device start.
const REGION_OFFSET: u64 = 0;

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A run id nobody else's recording shares: the start (unix seconds) in the high 32 bits, so
/// a verify tells a later recording's records from an older one's, and 32 bits from std's
/// hasher (its keys come from the OS's random source) mixed with the pid and the time.
fn new_run_id(started_unix: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    (started_unix << 32) | (h.finish() & 0xffff_ffff)
}

/// Is `run` the id of a recording started at or after `started_unix` (and not in the
/// future)? Ids of older versions are random: one passes only by a chance of about
/// (now - started) / 2^32.
fn is_later_run(run: u64, started_unix: u64, now_unix: u64) -> bool {
    let start = run >> 32;
    start >= started_unix && start <= now_unix
}

/// The serial and world-wide id the disk reports, when it reports them.
fn identity_of(name: &str) -> (Option<String>, Option<String>) {
    let host = SysRoot::host();
    let serial = match host.disk_identity(name) {
        crate::model::DiskIdentity::Serial(s) => Some(s),
        _ => None,
    };
    (serial, host.device_identity(name).wwid)
}

/// The LOG's directory, refused when its file system lives on the target's disk.
fn log_dir_for(log: &Path, target: &FlushDevice, writing: bool) -> anyhow::Result<LogDir> {
    dir_off_target(
        log,
        target,
        writing,
        "LOG",
        "a power cut would take the LOG with the records; put the LOG on another disk",
    )
}

/// Writes records until the power goes (or a stop signal).
pub fn record(
    _history_dir: &Path,
    args: &FlushcheckArgs,
    log_path: &Path,
) -> anyhow::Result<ExitCode> {
    let signals = StopSignals::catch(Catch::Command)?;
    // clap already refuses --json with --record; this is for any other caller.
    if args.json {
        bail!("--json goes with --verify (--record prints its progress on stderr)");
    }
    let shown_log = neutralize_controls(&log_path.display().to_string());
    // Every check before the first write: the device guard, then the LOG's place.
    let target = prepare_write(&args.device, args.destroy_data.as_deref())?;
    let device = &target.device;
    let len = records::record_len(device.logical).map_err(anyhow::Error::msg)?;
    let slots = records::slots_for(device.size, len).ok_or_else(|| {
        anyhow::anyhow!(
            "{} is {} bytes: smaller than one {len}-byte record",
            target.name,
            device.size
        )
    })?;
    let dir = log_dir_for(log_path, device, true)?;
    if dir.in_ram {
        write_stderr(&format!(
            "disktriage: warning: LOG {shown_log} is on a file system in RAM (tmpfs): it does \
             not survive a real power cut\n"
        ));
    }
    let mut logfile = dir
        .create()
        .with_context(|| format!("cannot create LOG {shown_log}"))?;
    let (serial, wwid) = identity_of(&target.name);
    let started_unix = unix_now();
    let run_id = new_run_id(started_unix);
    let header = LogHeader {
        run_id,
        record_bytes: len,
        slots,
        region_offset: REGION_OFFSET,
        device: target.name.clone(),
        size_bytes: device.size,
        serial,
        wwid,
        logical_block_size: device.logical,
        started_unix,
    };
    logfile
        .append_durably(&log::format_header(&header))
        .with_context(|| format!("cannot write LOG {shown_log}"))?;
    let name = neutralize_controls(&target.name);
    write_stderr(&format!(
        "recording on {name}: cut the power now (pull the plug or switch it off at the wall); \
         after the reboot run: disktriage flushcheck /dev/{name} --verify {shown_log}\n"
    ));
    let mut buf = FlushDevice::buffer(len as usize)?;
    let started = Instant::now();
    let mut last_progress = Instant::now();
    let mut acknowledged: u64 = 0;
    let mut seq: u64 = 0;
    loop {
        if let Some(code) = signals.exit_code() {
            // No power cut came: the LOG says so, and the verify will not claim one.
            let why = format!("stopped by signal {}", code.saturating_sub(128));
            if let Err(e) = logfile.append_durably(&log::format_end(&why)) {
                write_stderr(&format!(
                    "disktriage: cannot note in LOG {shown_log} that the recording was {why}: \
                     {e}\n"
                ));
            }
            write_stderr(&format!(
                "disktriage: stopped by a signal after {acknowledged} acknowledged records; \
                 LOG {shown_log} is complete and can be verified\n"
            ));
            return Ok(ExitCode::from(code));
        }
        records::encode(buf.as_mut_slice(), run_id, seq);
        let offset = REGION_OFFSET + records::slot_of(seq, slots) * u64::from(len);
        if let Err(e) = device.write(buf.as_slice(), offset, Durability::WriteThenFlush) {
            let gone = device.gone().map(|g| format!("; {g}")).unwrap_or_default();
            write_stderr(&format!(
                "the device stopped answering after {acknowledged} acknowledged records \
                 (record {seq} at byte {offset}: {}{gone}): if you cut the power, reboot and \
                 verify: disktriage flushcheck /dev/{name} --verify {shown_log}\n",
                describe_io(&e)
            ));
            return Ok(ExitCode::SUCCESS);
        }
        logfile
            .append_durably(&log::format_ack(seq))
            .with_context(|| {
                format!(
                    "cannot make the acknowledgement of record {seq} durable in LOG {shown_log} \
                 (the recording stops: the LOG holds {acknowledged} acknowledged records)"
                )
            })?;
        acknowledged += 1;
        seq += 1;
        if last_progress.elapsed() >= Duration::from_secs(1) {
            last_progress = Instant::now();
            let secs = started.elapsed().as_secs_f64().max(1e-3);
            write_stderr(&format!(
                "{acknowledged} acknowledged records ({:.0}/s)\n",
                acknowledged as f64 / secs
            ));
        }
    }
}

/// Reads the records back and reports every acknowledged one that is missing or torn.
pub fn verify(
    history_dir: &Path,
    args: &FlushcheckArgs,
    log_path: &Path,
) -> anyhow::Result<ExitCode> {
    let shown_dev = neutralize_controls(&args.device.display().to_string());
    let shown_log = neutralize_controls(&log_path.display().to_string());
    let started_unix = unix_now();
    let pinned =
        PinnedDevice::pin(&args.device).with_context(|| format!("cannot open {shown_dev}"))?;
    let device = pinned
        .open(false)
        .with_context(|| format!("cannot open {shown_dev} for reading"))?;
    let dir = log_dir_for(log_path, &device, false)?;
    let text = dir
        .read()
        .with_context(|| format!("cannot read LOG {shown_log}"))?;
    let parsed = log::parse(&text).map_err(|why| anyhow::anyhow!("LOG {shown_log}: {why}"))?;
    let h = &parsed.header;
    let name = device.name.clone().unwrap_or_else(|| shown_dev.clone());
    if device.size != h.size_bytes {
        bail!(
            "{shown_dev} is {} bytes but LOG {shown_log} was recorded on a {}-byte device \
             ({}): not the device recorded",
            device.size,
            h.size_bytes,
            neutralize_controls(&h.device)
        );
    }
    let (serial, wwid) = identity_of(&name);
    for (what, now, then) in [("serial", &serial, &h.serial), ("WWN", &wwid, &h.wwid)] {
        if let (Some(now), Some(then)) = (now, then)
            && now.trim() != then.trim()
        {
            bail!(
                "{shown_dev} has {what} {} but LOG {shown_log} was recorded on {what} {}: not \
                 the device recorded",
                neutralize_controls(now),
                neutralize_controls(then)
            );
        }
    }
    if name != h.device {
        write_stderr(&format!(
            "disktriage: note: LOG {shown_log} was recorded on {}, now {} (the same size{}): \
             kernel names change across reboots\n",
            neutralize_controls(&h.device),
            neutralize_controls(&name),
            if serial.is_some() && h.serial.is_some() {
                " and serial"
            } else {
                ""
            }
        ));
    }
    if parsed.torn_last_line {
        write_stderr(&format!(
            "disktriage: note: LOG {shown_log} ends in a line cut short (the power went while \
             it was appended): that record was never counted as acknowledged\n"
        ));
    }
    let len = h.record_bytes as usize;
    if !(h.record_bytes).is_multiple_of(device.logical.max(1)) {
        bail!(
            "LOG {shown_log} has {}-byte records but {shown_dev} has {}-byte logical blocks",
            h.record_bytes,
            device.logical
        );
    }
    let mut buf = FlushDevice::buffer(len)?;
    let run = h.run_id;
    let later = |run| is_later_run(run, h.started_unix, started_unix);
    let verdict = verify::verify(&parsed.acknowledged, h.slots, later, |slot| {
        let offset = h.region_offset + slot * u64::from(h.record_bytes);
        match device.read(&mut buf.as_mut_slice()[..len], offset) {
            Ok(n) if n == len => records::decode(&buf.as_slice()[..len], run),
            Ok(n) => Slot::Unreadable(format!("short read of {n} bytes at byte {offset}")),
            Err(e) => Slot::Unreadable(format!("at byte {offset}: {}", describe_io(&e))),
        }
    });
    let report = VerifyReport {
        device: name.clone(),
        log: shown_log.clone(),
        run_id: run,
        verdict,
        ended: parsed.ended.clone(),
    };
    record_history(
        history_dir,
        &name,
        &report,
        started_unix,
        &shown_log,
        len as u64,
    );
    if args.json {
        let json = serde_json::to_string_pretty(&report.json()).context("cannot encode JSON")?;
        write_stdout(&(json + "\n"))?;
    } else {
        write_stdout(&report.text(output_width()))?;
    }
    Ok(if report.verdict.cannot_tell() {
        ExitCode::from(crate::model::exit::UNKNOWN)
    } else if report.verdict.nothing_lost() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_LOST)
    })
}

/// Adds the verify to the history; a failure is a warning, never a failed check.
fn record_history(
    dir: &Path,
    name: &str,
    report: &VerifyReport,
    started_unix: u64,
    log: &str,
    bs: u64,
) {
    let v = &report.verdict;
    let flush = FlushRecord {
        verdict: report.verdict_word().to_string(),
        sentence: report.sentence(),
        acknowledged: Some(v.acknowledged),
        verified: Some(v.verified),
        lost_count: Some(v.lost.len() as u64),
        lost: v.lost.iter().take(64).copied().collect(),
        ..FlushRecord::default()
    };
    let entry = HistoryEntry::of_flushcheck(
        SysRoot::host().disk_identity(name),
        name,
        FLUSH_VERIFY_TEST,
        started_unix,
        format!("verify of {log}"),
        bs,
        flush,
    );
    super::add_to_history(dir, &entry, &|| false);
}
