//! ATA commands over SG_IO ATA PASS-THROUGH(16): IDENTIFY, SMART, SET FEATURES, FLUSH CACHE.
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

/// Runs one ATA command. A data-in command fills `sector`.
pub fn run(
    file: &File,
    path: &Path,
    cmd: &AtaCommand,
    sector: Option<&mut [u8; SECTOR]>,
) -> Result<AtaAnswer, DriveError> {
    let timeout = if matches!(cmd.command, 0xE7 | 0xEA) {
        FLUSH_TIMEOUT_MS
    } else {
        TIMEOUT_MS
    };
    let transfer = match sector {
        Some(buf) if cmd.reads_sector() => Transfer::FromDevice(buf),
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

/// Runs a data-in command and returns its sector, or the refusal.
pub fn read_sector(
    file: &File,
    path: &Path,
    cmd: &AtaCommand,
) -> Result<Result<Vec<u8>, Sense>, DriveError> {
    let mut buf = [0u8; SECTOR];
    match run(file, path, cmd, Some(&mut buf))? {
        AtaAnswer::Done(_) => Ok(Ok(buf.to_vec())),
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
