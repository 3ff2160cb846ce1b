//! SCSI commands over SG_IO: MODE SENSE(10) and MODE SELECT(10) of the caching page.

use std::fs::File;
use std::path::Path;

use super::sgio::{self, TIMEOUT_MS, Transfer};
use crate::smart::scsi::{
    CACHING_PAGE, CachingPage, MODE_SENSE_ALLOC, PageControl, build_caching_select,
    mode_select10_cdb, mode_sense10_cdb, parse_caching_page,
};
use crate::smart::sense::{ScsiOutcome, Sense, scsi_outcome};
use crate::sys::error::DriveError;

/// Reads the caching page (current or changeable); `Ok(Err(sense))` if it has none.
pub fn sense_caching(
    file: &File,
    path: &Path,
    pc: PageControl,
) -> Result<Result<(CachingPage, Vec<u8>), Sense>, DriveError> {
    let op = match pc {
        PageControl::Current => "MODE SENSE(10) caching page",
        PageControl::Changeable => "MODE SENSE(10) caching page, changeable mask",
    };
    let mut buf = vec![0u8; usize::from(MODE_SENSE_ALLOC)];
    let cdb = mode_sense10_cdb(CACHING_PAGE, pc, MODE_SENSE_ALLOC);
    let reply = sgio::execute(
        file,
        path,
        op,
        &cdb,
        Transfer::FromDevice(&mut buf),
        TIMEOUT_MS,
    )?;
    match scsi_outcome(reply.status, &reply.sense) {
        ScsiOutcome::Done => {}
        ScsiOutcome::Refused(sense) => return Ok(Err(sense)),
        ScsiOutcome::Failed(detail) => {
            return Err(DriveError::Device {
                op: format!("SG_IO {op}"),
                path: path.to_path_buf(),
                detail,
            });
        }
    }
    let got = buf
        .len()
        .saturating_sub(usize::try_from(reply.resid).unwrap_or(0));
    buf.truncate(got);
    let page = parse_caching_page(&buf).map_err(|e| DriveError::BadAnswer {
        op: format!("SG_IO {op}"),
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    Ok(Ok((page, buf)))
}

/// Sets WCE with MODE SELECT(10) (PF=1, not saved) on the sensed page.
pub fn select_caching(
    file: &File,
    path: &Path,
    current: &CachingPage,
    wce: bool,
) -> Result<(), DriveError> {
    let op = "MODE SELECT(10) caching page";
    let body = build_caching_select(current, wce);
    let len = u16::try_from(body.len())
        .map_err(|_| DriveError::Invalid(format!("{op}: {} bytes", body.len())))?;
    let reply = sgio::execute(
        file,
        path,
        op,
        &mode_select10_cdb(len),
        Transfer::ToDevice(&body),
        TIMEOUT_MS,
    )?;
    match scsi_outcome(reply.status, &reply.sense) {
        ScsiOutcome::Done => Ok(()),
        ScsiOutcome::Refused(sense) => Err(DriveError::Device {
            op: format!("SG_IO {op}"),
            path: path.to_path_buf(),
            detail: format!("refused: {sense}"),
        }),
        ScsiOutcome::Failed(detail) => Err(DriveError::Device {
            op: format!("SG_IO {op}"),
            path: path.to_path_buf(),
            detail,
        }),
    }
}
