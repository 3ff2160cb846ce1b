//! ATA commands over SG_IO ATA PASS-THROUGH(16): IDENTIFY, SMART (data, thresholds, status,
//! logs, self-tests), READ LOG EXT, SET FEATURES, FLUSH CACHE.
//! Works through libata (SATA, PATA) and through USB bridges that implement SAT.

use std::fs::File;
use std::path::Path;

use super::sgio::{self, FLUSH_TIMEOUT_MS, TIMEOUT_MS, Transfer};
use crate::smart::ata::{AtaCommand, SECTOR};
use crate::smart::sense::{AtaOutcome, AtaRegisters, Sense, ata_outcome};
use crate::sys::error::DriveError;

/// What a pass-through command came to, when it did not fail outright.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AtaAnswer {
    /// Done; the registers when the transport returned them (CK_COND).
    Done(Option<AtaRegisters>),
    /// The SCSI layer or bridge refused ATA PASS-THROUGH itself (no ATA device behind it, or
    /// a bridge without SAT).
    Refused(Sense),
}

/// Runs one ATA command. A data-in command fills `data` (`cmd.data_len()` bytes).
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

/// Runs a data-in command and returns its sectors (`cmd.data_len()` bytes), or the refusal.
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

/// Runs SMART RETURN STATUS with CK_COND and also hands back the raw sense bytes (kept for
/// fixture captures).
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
