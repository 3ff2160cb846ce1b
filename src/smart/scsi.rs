//! SCSI: MODE SENSE(10) / MODE SELECT(10) command blocks and the caching mode page (0x08),
//! whose WCE bit is the drive's volatile write cache (SBC-4 6.5.5).
//!
//! The set path follows sdparm: sense the current page, clear the mode data length and the
//! device-specific byte, mask the PS bit, flip WCE, select with PF=1 and SP=0 (not saved: the
//! drive forgets the change at power cycle, as `hdparm -W` does on ATA).

use super::PageError;

pub const MODE_SENSE_10: u8 = 0x5A;
pub const MODE_SELECT_10: u8 = 0x55;
pub const CACHING_PAGE: u8 = 0x08;
/// Room for the header, block descriptors and the caching page.
pub const MODE_SENSE_ALLOC: u16 = 252;

/// Which values MODE SENSE returns (the PC field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageControl {
    Current = 0,
    /// A mask of the bits the host may change.
    Changeable = 1,
}

/// MODE SENSE(10) for one page, block descriptors disabled (DBD).
pub fn mode_sense10_cdb(page: u8, pc: PageControl, alloc: u16) -> [u8; 10] {
    let len = alloc.to_be_bytes();
    [
        MODE_SENSE_10,
        0x08,
        ((pc as u8) << 6) | (page & 0x3f),
        0,
        0,
        0,
        0,
        len[0],
        len[1],
        0,
    ]
}

/// MODE SELECT(10) with PF=1 (page format) and SP=0 (do not save).
pub fn mode_select10_cdb(param_len: u16) -> [u8; 10] {
    let len = param_len.to_be_bytes();
    [MODE_SELECT_10, 0x10, 0, 0, 0, 0, 0, len[0], len[1], 0]
}

/// The caching mode page as sensed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachingPage {
    pub medium_type: u8,
    /// PS: the drive can save the page.
    pub saveable: bool,
    /// Write Cache Enable.
    pub wce: bool,
    /// Read Cache Disable.
    pub rcd: bool,
    /// The page itself from its page-code byte, as the drive sent it.
    pub bytes: Vec<u8>,
}

const WHAT: &str = "caching mode page";

/// Parses a MODE SENSE(10) answer that should hold the caching page.
pub fn parse_caching_page(resp: &[u8]) -> Result<CachingPage, PageError> {
    if resp.len() < 8 {
        return Err(PageError::short(WHAT, 8, resp.len()));
    }
    // The length does not count itself; the answer may be cut short.
    let total = (usize::from(u16::from_be_bytes([resp[0], resp[1]])) + 2).min(resp.len());
    let bd_len = usize::from(u16::from_be_bytes([resp[6], resp[7]]));
    let at = 8 + bd_len;
    if at + 2 > total {
        return Err(PageError::new(
            WHAT,
            format!("no page after the header ({total} bytes, block descriptors {bd_len})"),
        ));
    }
    let code = resp[at] & 0x3f;
    if code != CACHING_PAGE || resp[at] & 0x40 != 0 {
        return Err(PageError::new(
            WHAT,
            format!("page code 0x{:02x} instead of 0x08", resp[at]),
        ));
    }
    let len = usize::from(resp[at + 1]);
    if len < 1 || at + 2 + len > total {
        return Err(PageError::new(
            WHAT,
            format!(
                "page length {len} does not fit the {total}-byte answer or holds no flags byte"
            ),
        ));
    }
    let bytes = resp[at..at + 2 + len].to_vec();
    Ok(CachingPage {
        medium_type: resp[2],
        saveable: bytes[0] & 0x80 != 0,
        wce: bytes[2] & 0x04 != 0,
        rcd: bytes[2] & 0x01 != 0,
        bytes,
    })
}

/// The MODE SELECT(10) parameter list setting WCE on the sensed page.
pub fn build_caching_select(current: &CachingPage, wce: bool) -> Vec<u8> {
    let mut out = vec![0, 0, current.medium_type, 0, 0, 0, 0, 0];
    let mut page = current.bytes.clone();
    if let Some(b0) = page.get_mut(0) {
        *b0 &= 0x7f;
    }
    if let Some(flags) = page.get_mut(2) {
        if wce {
            *flags |= 0x04;
        } else {
            *flags &= !0x04;
        }
    }
    out.extend_from_slice(&page);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MODE SENSE(10) of page 8 as QEMU's scsi-hd builds it.
    fn qemu_like(wce: bool) -> Vec<u8> {
        let mut r = vec![0, 26, 0, 0x10, 0, 0, 0, 0];
        let mut page = vec![0x08, 0x12];
        page.extend_from_slice(&[0u8; 0x12]);
        page[2] = if wce { 0x04 } else { 0 };
        r.extend_from_slice(&page);
        r
    }

    #[test]
    fn cdbs() {
        assert_eq!(
            mode_sense10_cdb(8, PageControl::Current, 252),
            [0x5a, 0x08, 0x08, 0, 0, 0, 0, 0, 252, 0]
        );
        assert_eq!(
            mode_sense10_cdb(8, PageControl::Changeable, 0x1ff),
            [0x5a, 0x08, 0x48, 0, 0, 0, 0, 1, 0xff, 0]
        );
        assert_eq!(mode_select10_cdb(28), [0x55, 0x10, 0, 0, 0, 0, 0, 0, 28, 0]);
    }

    #[test]
    fn parse_and_build() {
        let p = parse_caching_page(&qemu_like(true)).unwrap();
        assert!(p.wce && !p.rcd && !p.saveable);
        assert_eq!(p.bytes.len(), 20);
        let sel = build_caching_select(&p, false);
        assert_eq!(sel.len(), 28);
        assert_eq!(&sel[..8], &[0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(sel[8 + 2] & 0x04, 0);
        // Round trip: a select body reparsed (with a fixed-up length) says WCE off.
        let mut again = sel.clone();
        again[1] = 26;
        assert!(!parse_caching_page(&again).unwrap().wce);
    }

    #[test]
    fn ps_is_masked_and_block_descriptors_skipped() {
        let mut r = vec![0, 34, 0, 0, 0, 0, 0, 8];
        r.extend_from_slice(&[0xaa; 8]); // one block descriptor
        r.extend_from_slice(&[0x88, 0x12, 0x05]);
        r.extend_from_slice(&[0u8; 0x11]);
        let p = parse_caching_page(&r).unwrap();
        assert!(p.saveable && p.wce && p.rcd);
        let sel = build_caching_select(&p, true);
        assert_eq!(sel[8], 0x08, "PS masked");
        assert_eq!(sel[10], 0x05);
    }

    #[test]
    fn truncated_and_garbage() {
        assert!(parse_caching_page(&[]).is_err());
        assert!(parse_caching_page(&[0, 6, 0, 0, 0, 0, 0, 0]).is_err());
        // wrong page code
        let mut r = qemu_like(true);
        r[8] = 0x0a;
        assert!(parse_caching_page(&r).is_err());
        // block descriptor length pointing past the end
        let mut r = qemu_like(true);
        r[6] = 0xff;
        assert!(parse_caching_page(&r).is_err());
        // page length past the end
        let mut r = qemu_like(true);
        r[9] = 0xff;
        assert!(parse_caching_page(&r).is_err());
        for n in 0..qemu_like(true).len() {
            assert!(parse_caching_page(&qemu_like(true)[..n]).is_err(), "{n}");
        }
        assert!(parse_caching_page(&[0xff; 64]).is_err());
        // An empty page still builds a select without panicking.
        let empty = CachingPage {
            medium_type: 0,
            saveable: false,
            wce: false,
            rcd: false,
            bytes: vec![],
        };
        assert_eq!(build_caching_select(&empty, true).len(), 8);
    }
}
