//! ATA commands over SG_IO ATA PASS-THROUGH(16): IDENTIFY, SMART (data, thresholds, status,
//! logs, self-tests), READ LOG EXT, SET FEATURES, FLUSH CACHE, and SCT Error Recovery
//! Control's timers read (`sct_erc`: the SCT command written to SMART log 0xE0).
//! Works through libata (SATA, PATA) and through USB bridges that implement SAT.

use std::fs::File;
use std::path::Path;

use super::sgio::{self, FLUSH_TIMEOUT_MS, TIMEOUT_MS, Transfer};
use crate::model::Erc;
use crate::smart::ata::{AtaCommand, SECTOR};
use crate::smart::fitness::{
    SctStatus, decode_erc_timer, parse_sct_status, sct_erc_get_command, sct_erc_supported,
};
use crate::smart::sense::{AtaOutcome, AtaRegisters, Sense, ata_outcome};
use crate::sys::error::DriveError;

/// What a pass-through command came to, when it did not fail outright.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AtaAnswer {
    /// Done; the registers when the transport returned them (CK_COND).
    Done(Option<AtaRegisters>),
    /// ATA PASS-THROUGH itself refused (no ATA behind it).
    Refused(Sense),
}

/// Runs one ATA command; a data-in command fills `data`.
pub fn run(
    file: &File,
    path: &Path,
    cmd: &AtaCommand,
    data: Option<&mut [u8]>,
) -> Result<AtaAnswer, DriveError> {
    let timeout = if matches!(cmd.command, 0xE7 | 0xEA) {
        FLUSH_TIMEOUT_MS
    } else {
        TIMEOUT_MS
    };
    let transfer = match data {
        Some(buf) if cmd.reads_sector() => {
            if buf.len() < cmd.data_len() {
                return Err(DriveError::Invalid(format!(
                    "ATA {}: buffer of {} bytes for {} bytes of data",
                    cmd.name,
                    buf.len(),
                    cmd.data_len()
                )));
            }
            Transfer::FromDevice(&mut buf[..cmd.data_len()])
        }
        _ => Transfer::None,
    };
    let op = format!("ATA {}", cmd.name);
    let reply = sgio::execute(file, path, &op, &cmd.cdb(), transfer, timeout)?;
    answer_of(&reply, &op, path)
}

/// What a command's SCSI status and sense say it came to.
fn answer_of(reply: &sgio::SgReply, op: &str, path: &Path) -> Result<AtaAnswer, DriveError> {
    match ata_outcome(reply.status, &reply.sense) {
        AtaOutcome::Done(regs) => Ok(AtaAnswer::Done(regs)),
        AtaOutcome::Refused(sense) => Ok(AtaAnswer::Refused(sense)),
        AtaOutcome::DriveError(regs) => Err(DriveError::Device {
            op: format!("SG_IO {op}"),
            path: path.to_path_buf(),
            detail: format!(
                "the drive aborted the command (ATA status 0x{:02x}, error 0x{:02x})",
                regs.status, regs.error
            ),
        }),
        AtaOutcome::Failed(detail) => Err(DriveError::Device {
            op: format!("SG_IO {op}"),
            path: path.to_path_buf(),
            detail,
        }),
    }
}

/// Sends the one SCT command this program sends, "return the current Error Recovery Control
/// timer" (`selection` 1 read, 2 write), to SMART log 0xE0; returns the registers. The sector
/// is built by `sct_erc_get_command`, never taken from a caller: other SCT actions write the
/// medium.
fn sct_erc_get(file: &File, path: &Path, selection: SctTimer) -> Result<AtaAnswer, DriveError> {
    let cmd = AtaCommand::smart_write_log("SMART WRITE LOG (SCT Error Recovery Control)", 0xE0);
    let sector = sct_erc_get_command(selection as u16);
    let op = format!("ATA {}", cmd.name);
    let reply = sgio::execute(
        file,
        path,
        &op,
        &cmd.cdb(),
        Transfer::ToDevice(&sector),
        TIMEOUT_MS,
    )?;
    answer_of(&reply, &op, path)
}

/// Which Error Recovery Control timer.
#[derive(Debug, Clone, Copy)]
enum SctTimer {
    Read = 1,
    Write = 2,
}

/// The SCT status (SMART READ LOG 0xE0).
fn sct_status(file: &File, path: &Path) -> Result<Result<SctStatus, String>, DriveError> {
    let cmd = AtaCommand::smart_read_log("SMART READ LOG (SCT status)", 0xE0, 1);
    Ok(match read_sector(file, path, &cmd)? {
        Ok(page) => parse_sct_status(&page).ok_or_else(|| "a short SCT status".to_string()),
        Err(sense) => Err(format!("the SCT status was refused ({sense:?})")),
    })
}

/// SCT ERC's read and write timers as `smartctl -l scterc` reads them: IDENTIFY word 206,
/// then per timer the status, the command, the status again (it must name the command), and
/// the returned registers. `Ok(Err(why))`: no answer to trust.
pub fn sct_erc(file: &File, path: &Path) -> Result<Result<Erc, String>, DriveError> {
    let identify = match read_sector(file, path, &AtaCommand::identify())? {
        Ok(page) => page,
        Err(sense) => return Ok(Err(format!("IDENTIFY was refused ({sense:?})"))),
    };
    match sct_erc_supported(&identify) {
        Some(true) => {}
        Some(false) => return Ok(Ok(Erc::NotSupported)),
        None => return Ok(Err("a short IDENTIFY page".to_string())),
    }
    let mut timers = [0u16; 2];
    for (slot, timer) in [SctTimer::Read, SctTimer::Write].into_iter().enumerate() {
        match sct_status(file, path)? {
            Ok(s) if s.ext_status == 0xffff => {
                return Ok(Err("another SCT command is running".to_string()));
            }
            Ok(_) => {}
            Err(why) => return Ok(Err(why)),
        }
        let regs = match sct_erc_get(file, path, timer)? {
            AtaAnswer::Done(Some(regs)) => regs,
            AtaAnswer::Done(None) => {
                return Ok(Err("the pass-through returned no registers".to_string()));
            }
            AtaAnswer::Refused(sense) => {
                return Ok(Err(format!("the SCT command was refused ({sense:?})")));
            }
        };
        let after = match sct_status(file, path)? {
            Ok(s) => s,
            Err(why) => return Ok(Err(why)),
        };
        match decode_erc_timer(after, regs.count, regs.lba_low) {
            Ok(t) => timers[slot] = t,
            Err(why) => return Ok(Err(why)),
        }
    }
    Ok(Ok(Erc::Timers {
        read: timers[0],
        write: timers[1],
    }))
}

/// Runs a data-in command: its sectors, or the refusal.
pub fn read_sector(
    file: &File,
    path: &Path,
    cmd: &AtaCommand,
) -> Result<Result<Vec<u8>, Sense>, DriveError> {
    let mut buf = vec![0u8; cmd.data_len().max(SECTOR)];
    match run(file, path, cmd, Some(&mut buf))? {
        AtaAnswer::Done(_) => {
            buf.truncate(cmd.data_len());
            Ok(Ok(buf))
        }
        AtaAnswer::Refused(sense) => Ok(Err(sense)),
    }
}

/// SMART RETURN STATUS with CK_COND, and the raw sense (for fixtures).
pub fn smart_return_status(file: &File, path: &Path) -> Result<(AtaAnswer, Vec<u8>), DriveError> {
    let cmd = AtaCommand::smart_return_status();
    let op = format!("ATA {}", cmd.name);
    let reply = sgio::execute(file, path, &op, &cmd.cdb(), Transfer::None, TIMEOUT_MS)?;
    let answer = match ata_outcome(reply.status, &reply.sense) {
        AtaOutcome::Done(regs) => AtaAnswer::Done(regs),
        AtaOutcome::Refused(sense) => AtaAnswer::Refused(sense),
        AtaOutcome::DriveError(regs) => {
            return Err(DriveError::Device {
                op: format!("SG_IO {op}"),
                path: path.to_path_buf(),
                detail: format!(
                    "the drive aborted the command (ATA status 0x{:02x}, error 0x{:02x}): \
                     SMART disabled?",
                    regs.status, regs.error
                ),
            });
        }
        AtaOutcome::Failed(detail) => {
            return Err(DriveError::Device {
                op: format!("SG_IO {op}"),
                path: path.to_path_buf(),
                detail,
            });
        }
    };
    Ok((answer, reply.sense))
}
