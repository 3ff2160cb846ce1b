//! SCSI sense data (SPC-4 4.5) and the ATA registers SAT returns in it, plus what an
//! ATA PASS-THROUGH answer means: done, refused by the transport, or failed by the drive.
//!
//! libata answers a CK_COND pass-through with descriptor sense (response code 0x72) holding an
//! ATA Status Return descriptor; on errors it uses the device's D_SENSE format, fixed (0x70) by
//! default. Descriptor format is parsed exactly, fixed format on a best-effort basis (SAT-3
//! 12.2.2.6; kernels before mid-2024 put the registers elsewhere, see the design notes).

use std::fmt;

use super::PageError;

const WHAT: &str = "sense data";

/// SCSI status byte values that matter here.
pub const STATUS_GOOD: u8 = 0x00;
pub const STATUS_CHECK_CONDITION: u8 = 0x02;

/// Sense keys.
pub const KEY_NO_SENSE: u8 = 0x0;
pub const KEY_RECOVERED_ERROR: u8 = 0x1;
pub const KEY_ILLEGAL_REQUEST: u8 = 0x5;
pub const KEY_ABORTED_COMMAND: u8 = 0xB;

/// ATA status register bits.
pub const ATA_STATUS_ERR: u8 = 0x01;
pub const ATA_STATUS_DRQ: u8 = 0x08;

/// The ATA registers after a command (`extend`: a 48-bit answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AtaRegisters {
    pub error: u8,
    pub count: u8,
    pub lba_low: u8,
    pub lba_mid: u8,
    pub lba_high: u8,
    pub device: u8,
    pub status: u8,
    pub extend: bool,
}

impl AtaRegisters {
    /// ERR or DRQ set: the command failed (hdparm's rule).
    pub fn failed(&self) -> bool {
        self.status & (ATA_STATUS_ERR | ATA_STATUS_DRQ) != 0
    }
}

/// Parsed sense data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sense {
    /// 0x70/0x71 fixed, 0x72/0x73 descriptor.
    pub response_code: u8,
    pub key: u8,
    pub asc: u8,
    pub ascq: u8,
    /// ATA registers, when the sense carries them.
    pub ata: Option<AtaRegisters>,
}

/// Parses sense data in fixed or descriptor format.
pub fn parse_sense(sb: &[u8]) -> Result<Sense, PageError> {
    let Some(&first) = sb.first() else {
        return Err(PageError::new(WHAT, "empty"));
    };
    let response_code = first & 0x7f;
    match response_code {
        0x72 | 0x73 => parse_descriptor(sb, response_code),
        0x70 | 0x71 => parse_fixed(sb, response_code),
        other => Err(PageError::new(
            WHAT,
            format!("unknown response code 0x{other:02x}"),
        )),
    }
}

fn parse_descriptor(sb: &[u8], response_code: u8) -> Result<Sense, PageError> {
    if sb.len() < 8 {
        return Err(PageError::short(WHAT, 8, sb.len()));
    }
    let mut sense = Sense {
        response_code,
        key: sb[1] & 0x0f,
        asc: sb[2],
        ascq: sb[3],
        ata: None,
    };
    // Walk the descriptors inside the additional length, never past the buffer.
    let end = sb.len().min(8 + usize::from(sb[7]));
    let mut at = 8;
    while at + 2 <= end {
        let kind = sb[at];
        let len = usize::from(sb[at + 1]);
        let next = at + 2 + len;
        if kind == 0x09 && len >= 0x0c && next <= end {
            let d = &sb[at..next];
            sense.ata = Some(AtaRegisters {
                extend: d[2] & 0x01 != 0,
                error: d[3],
                count: d[5],
                lba_low: d[7],
                lba_mid: d[9],
                lba_high: d[11],
                device: d[12],
                status: d[13],
            });
        }
        at = next;
    }
    Ok(sense)
}

fn parse_fixed(sb: &[u8], response_code: u8) -> Result<Sense, PageError> {
    if sb.len() < 3 {
        return Err(PageError::short(WHAT, 3, sb.len()));
    }
    let key = sb[2] & 0x0f;
    let (asc, ascq) = if sb.len() >= 14 {
        (sb[12], sb[13])
    } else {
        (0, 0)
    };
    // SAT returns the registers for 00/1D (ATA PASS-THROUGH INFORMATION AVAILABLE) and
    // for aborted commands.
    let carries_registers = (asc == 0x00 && ascq == 0x1d) || key == KEY_ABORTED_COMMAND;
    let ata = (carries_registers && sb.len() >= 12).then(|| AtaRegisters {
        error: sb[3],
        status: sb[4],
        device: sb[5],
        count: sb[6],
        extend: sb[8] & 0x80 != 0,
        lba_low: sb[9],
        lba_mid: sb[10],
        lba_high: sb[11],
    });
    Ok(Sense {
        response_code,
        key,
        asc,
        ascq,
        ata,
    })
}

/// The name of a sense key.
pub fn key_name(key: u8) -> &'static str {
    match key {
        0x0 => "NO SENSE",
        0x1 => "RECOVERED ERROR",
        0x2 => "NOT READY",
        0x3 => "MEDIUM ERROR",
        0x4 => "HARDWARE ERROR",
        0x5 => "ILLEGAL REQUEST",
        0x6 => "UNIT ATTENTION",
        0x7 => "DATA PROTECT",
        0x8 => "BLANK CHECK",
        0xB => "ABORTED COMMAND",
        0xD => "VOLUME OVERFLOW",
        0xE => "MISCOMPARE",
        _ => "reserved sense key",
    }
}

/// Words for the additional sense codes this program meets.
fn asc_text(asc: u8, ascq: u8) -> Option<&'static str> {
    Some(match (asc, ascq) {
        (0x00, 0x1d) => "ATA pass-through information available",
        (0x04, _) => "logical unit not ready",
        (0x1a, 0x00) => "parameter list length error",
        (0x20, 0x00) => "invalid command operation code",
        (0x24, 0x00) => "invalid field in CDB",
        (0x25, 0x00) => "logical unit not supported",
        (0x26, _) => "invalid field in parameter list",
        (0x3a, _) => "medium not present",
        (0x5d, _) => "failure prediction threshold exceeded",
        _ => return None,
    })
}

impl fmt::Display for Sense {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, ASC/ASCQ 0x{:02x}/0x{:02x}",
            key_name(self.key),
            self.asc,
            self.ascq
        )?;
        if let Some(text) = asc_text(self.asc, self.ascq) {
            write!(f, " ({text})")?;
        }
        if let Some(r) = &self.ata {
            write!(f, ", ATA status 0x{:02x} error 0x{:02x}", r.status, r.error)?;
        }
        Ok(())
    }
}

/// What an ATA PASS-THROUGH command came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AtaOutcome {
    /// Completed; the registers if the transport returned them (CK_COND).
    Done(Option<AtaRegisters>),
    /// The drive reported an error (ABRT: unsupported or disabled).
    DriveError(AtaRegisters),
    /// ATA PASS-THROUGH itself refused (no ATA behind it).
    Refused(Sense),
    /// Anything else, in words.
    Failed(String),
}

/// Interprets the SCSI status and sense bytes of an ATA PASS-THROUGH command.
pub fn ata_outcome(scsi_status: u8, sense: &[u8]) -> AtaOutcome {
    match scsi_status {
        STATUS_GOOD => AtaOutcome::Done(None),
        STATUS_CHECK_CONDITION => match parse_sense(sense) {
            Err(e) => AtaOutcome::Failed(format!("CHECK CONDITION with unreadable {e}")),
            Ok(s) => match s.ata {
                Some(regs) if regs.failed() => AtaOutcome::DriveError(regs),
                Some(regs) if matches!(s.key, KEY_NO_SENSE | KEY_RECOVERED_ERROR) => {
                    AtaOutcome::Done(Some(regs))
                }
                _ if s.key == KEY_ILLEGAL_REQUEST => AtaOutcome::Refused(s),
                _ if matches!(s.key, KEY_NO_SENSE | KEY_RECOVERED_ERROR) => AtaOutcome::Done(None),
                _ => AtaOutcome::Failed(s.to_string()),
            },
        },
        other => AtaOutcome::Failed(format!("SCSI status 0x{other:02x}")),
    }
}

/// What a plain SCSI command came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScsiOutcome {
    Done,
    /// ILLEGAL REQUEST: the device does not support the command or the page.
    Refused(Sense),
    Failed(String),
}

/// Interprets the SCSI status and sense bytes of an ordinary SCSI command.
pub fn scsi_outcome(scsi_status: u8, sense: &[u8]) -> ScsiOutcome {
    match scsi_status {
        STATUS_GOOD => ScsiOutcome::Done,
        STATUS_CHECK_CONDITION => match parse_sense(sense) {
            Err(e) => ScsiOutcome::Failed(format!("CHECK CONDITION with unreadable {e}")),
            Ok(s) if matches!(s.key, KEY_NO_SENSE | KEY_RECOVERED_ERROR) => ScsiOutcome::Done,
            Ok(s) if s.key == KEY_ILLEGAL_REQUEST => ScsiOutcome::Refused(s),
            Ok(s) => ScsiOutcome::Failed(s.to_string()),
        },
        other => ScsiOutcome::Failed(format!("SCSI status 0x{other:02x}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libata's descriptor sense for SMART RETURN STATUS with CK_COND (SAT-3 12.2.2.7).
    fn ck_cond_descriptor(lba_mid: u8, lba_high: u8, status: u8) -> Vec<u8> {
        let mut sb = vec![0x72, 0x01, 0x00, 0x1d, 0, 0, 0, 14];
        sb.extend_from_slice(&[
            0x09, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, lba_mid, 0x00, lba_high, 0x40,
            status,
        ]);
        sb
    }

    #[test]
    fn descriptor_sense_with_ata_registers() {
        let s = parse_sense(&ck_cond_descriptor(0x4f, 0xc2, 0x50)).unwrap();
        assert_eq!((s.key, s.asc, s.ascq), (1, 0, 0x1d));
        let r = s.ata.unwrap();
        assert_eq!((r.lba_mid, r.lba_high, r.status), (0x4f, 0xc2, 0x50));
        assert!(!r.failed());
        assert_eq!(
            ata_outcome(
                STATUS_CHECK_CONDITION,
                &ck_cond_descriptor(0x4f, 0xc2, 0x50)
            ),
            AtaOutcome::Done(Some(r))
        );
    }

    #[test]
    fn descriptor_with_error_bit_is_a_drive_error() {
        let mut sb = ck_cond_descriptor(0, 0, 0x51);
        sb[1] = KEY_ABORTED_COMMAND;
        sb[11] = 0x04; // ABRT in the error register
        match ata_outcome(STATUS_CHECK_CONDITION, &sb) {
            AtaOutcome::DriveError(r) => assert_eq!((r.status, r.error), (0x51, 0x04)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn fixed_sense_illegal_request_is_refused() {
        // QEMU's scsi-hd refuses ATA PASS-THROUGH: invalid command operation code.
        let sb = [
            0x70, 0, 0x05, 0, 0, 0, 0, 0x0a, 0, 0, 0, 0, 0x20, 0x00, 0, 0, 0, 0,
        ];
        let s = parse_sense(&sb).unwrap();
        assert_eq!((s.key, s.asc, s.ascq, s.ata), (5, 0x20, 0, None));
        assert!(s.to_string().contains("invalid command operation code"));
        assert!(matches!(
            ata_outcome(STATUS_CHECK_CONDITION, &sb),
            AtaOutcome::Refused(_)
        ));
        assert!(matches!(
            scsi_outcome(STATUS_CHECK_CONDITION, &sb),
            ScsiOutcome::Refused(_)
        ));
    }

    #[test]
    fn fixed_sense_with_registers_best_effort() {
        let mut sb = vec![0u8; 18];
        sb[0] = 0x70;
        sb[2] = KEY_RECOVERED_ERROR;
        sb[7] = 10;
        sb[4] = 0x50; // status
        sb[10] = 0xf4;
        sb[11] = 0x2c;
        sb[13] = 0x1d;
        let s = parse_sense(&sb).unwrap();
        let r = s.ata.unwrap();
        assert_eq!((r.lba_mid, r.lba_high, r.status), (0xf4, 0x2c, 0x50));
        assert_eq!(
            ata_outcome(STATUS_CHECK_CONDITION, &sb),
            AtaOutcome::Done(Some(r))
        );
    }

    #[test]
    fn truncated_and_garbage_sense() {
        assert!(parse_sense(&[]).is_err());
        assert!(parse_sense(&[0x72, 1, 0]).is_err());
        assert!(parse_sense(&[0x70, 0]).is_err());
        assert!(parse_sense(&[0x00; 32]).is_err());
        assert!(parse_sense(&[0xff; 32]).is_err());
        // A descriptor whose length runs past the buffer is ignored, not read.
        let s = parse_sense(&[0x72, 1, 0, 0x1d, 0, 0, 0, 0xff, 0x09, 0x0c, 0, 0]).unwrap();
        assert_eq!(s.ata, None);
        // Every prefix of a valid answer parses or errors, never panics.
        let full = ck_cond_descriptor(0x4f, 0xc2, 0x50);
        for n in 0..full.len() {
            let _ = parse_sense(&full[..n]);
            let _ = ata_outcome(STATUS_CHECK_CONDITION, &full[..n]);
        }
        assert!(matches!(
            ata_outcome(STATUS_CHECK_CONDITION, &[]),
            AtaOutcome::Failed(_)
        ));
        assert!(matches!(ata_outcome(0x08, &[]), AtaOutcome::Failed(_)));
        assert_eq!(ata_outcome(STATUS_GOOD, &[]), AtaOutcome::Done(None));
        assert_eq!(scsi_outcome(STATUS_GOOD, &[]), ScsiOutcome::Done);
    }
}
