//! GNU ddrescue's mapfile, so ddrescueview, ddrescuelog and every rescue tool read what a scan
//! found, and a scan resumes from one (GNU ddrescue manual, "Mapfile structure").
//!
//! ```text
//! # comment lines start with '#'
//! # current_pos  current_status  current_pass
//! 0x00100000     ?               1
//! #      pos        size  status
//! 0x00000000  0x00100000  +
//! 0x00100000  0x3FF00000  ?
//! ```
//!
//! The first data line is the position and phase where the last run stopped; then one line
//! per region, in order and contiguous from 0, covering the device. Numbers are written in
//! hexadecimal with `0x`, as ddrescue writes them; on reading, decimal and octal (a leading
//! 0) are accepted too, as ddrescue accepts them (strtoll with base 0).
//!
//! The map in memory is a `BTreeMap` of regions with neighbours of one status merged: its size
//! follows the number of separate areas, not the device's size.

use std::collections::BTreeMap;

use super::Span;

/// A region's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// `?`: not tried yet.
    NonTried,
    /// `*`: a failed block ddrescue has not trimmed yet.
    NonTrimmed,
    /// `/`: a failed block ddrescue has not scraped yet.
    NonScraped,
    /// `-`: a bad sector (a failed read of a single sector).
    BadSector,
    /// `+`: read.
    Finished,
}

impl Status {
    pub fn char(self) -> char {
        match self {
            Status::NonTried => '?',
            Status::NonTrimmed => '*',
            Status::NonScraped => '/',
            Status::BadSector => '-',
            Status::Finished => '+',
        }
    }

    fn from_char(c: &str) -> Option<Status> {
        Some(match c {
            "?" => Status::NonTried,
            "*" => Status::NonTrimmed,
            "/" => Status::NonScraped,
            "-" => Status::BadSector,
            "+" => Status::Finished,
            _ => return None,
        })
    }

    /// Whether a scan reads this status: not tried, `*` and `/`; bad sectors with `retry`.
    pub fn to_read(self, retry: bool) -> bool {
        match self {
            Status::NonTried | Status::NonTrimmed | Status::NonScraped => true,
            Status::BadSector => retry,
            Status::Finished => false,
        }
    }
}

/// ddrescue's `current_status` phase characters.
const PHASES: [char; 7] = ['?', '*', '/', '-', 'F', 'G', '+'];

/// Why a mapfile was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct MapfileError {
    pub line: usize,
    pub reason: String,
}

/// A mapfile: where the last run was, and every byte's status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapfile {
    /// Where the last run stopped (ddrescue's `current_pos`).
    pub current_pos: u64,
    /// ddrescue's `current_status`: `?` still reading, `+` finished.
    pub current_status: char,
    /// ddrescue's pass number (absent in mapfiles of ddrescue before 1.20).
    pub current_pass: Option<u32>,
    /// Regions by start: (length, status), contiguous, neighbours differ.
    regions: BTreeMap<u64, (u64, Status)>,
    size: u64,
}

impl Mapfile {
    /// A device of `size` bytes not tried at all.
    pub fn new(size: u64) -> Mapfile {
        let mut regions = BTreeMap::new();
        if size > 0 {
            regions.insert(0, (size, Status::NonTried));
        }
        Mapfile {
            current_pos: 0,
            current_status: '?',
            current_pass: Some(1),
            regions,
            size,
        }
    }

    /// The bytes the map covers (the device's size).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The regions in order.
    pub fn regions(&self) -> impl Iterator<Item = (Span, Status)> + '_ {
        self.regions
            .iter()
            .map(|(&pos, &(len, status))| (Span::new(pos, len), status))
    }

    /// Bytes of a status inside `within`.
    pub fn bytes_with(&self, status: Status, within: Span) -> u64 {
        self.regions()
            .filter(|&(_, s)| s == status)
            .filter_map(|(span, _)| span.intersect(&within))
            .fold(0u64, |a, s| a.saturating_add(s.length))
    }

    /// The regions inside `within` a scan still reads, merged.
    pub fn to_read(&self, within: Span, retry: bool) -> Vec<Span> {
        let mut out: Vec<Span> = Vec::new();
        for (span, status) in self.regions() {
            if !status.to_read(retry) {
                continue;
            }
            let Some(part) = span.intersect(&within) else {
                continue;
            };
            match out.last_mut() {
                Some(last) if last.end() == part.offset => last.length += part.length,
                _ => out.push(part),
            }
        }
        out
    }

    /// Sets the status of `span` (clipped), merging with neighbours.
    pub fn set(&mut self, span: Span, status: Status) {
        let Some(span) = span.intersect(&Span::new(0, self.size)) else {
            return;
        };
        let (start, end) = (span.offset, span.end());
        if let Some((&pos, &(len, st))) = self.regions.range(..=start).next_back()
            && pos < start
            && pos + len > start
        {
            self.regions.insert(pos, (start - pos, st));
            self.regions.insert(start, (pos + len - start, st));
        }
        if let Some((&pos, &(len, st))) = self.regions.range(..end).next_back()
            && pos + len > end
        {
            self.regions.insert(pos, (end - pos, st));
            self.regions.insert(end, (pos + len - end, st));
        }
        let inside: Vec<u64> = self.regions.range(start..end).map(|(&p, _)| p).collect();
        for pos in inside {
            self.regions.remove(&pos);
        }
        self.regions.insert(start, (end - start, status));
        self.merge_around(start);
    }

    /// Merges the region at `pos` with its neighbours of the same status.
    fn merge_around(&mut self, pos: u64) {
        let mut pos = pos;
        if let Some((&prev, &(plen, pst))) = self.regions.range(..pos).next_back()
            && let Some(&(len, st)) = self.regions.get(&pos)
            && pst == st
            && prev + plen == pos
        {
            self.regions.remove(&pos);
            self.regions.insert(prev, (plen + len, st));
            pos = prev;
        }
        if let Some(&(len, st)) = self.regions.get(&pos) {
            let next = pos + len;
            if let Some(&(nlen, nst)) = self.regions.get(&next)
                && nst == st
            {
                self.regions.remove(&next);
                self.regions.insert(pos, (len + nlen, st));
            }
        }
    }

    /// Parses a mapfile: regions in order, contiguous from 0, non-empty, a known status.
    pub fn parse(text: &str) -> Result<Mapfile, MapfileError> {
        let mut parser = MapfileParser::default();
        for raw in text.lines() {
            parser.line(raw)?;
        }
        parser.finish()
    }

    /// The mapfile's text in ddrescue's layout, `comments` first (each after "# ").
    pub fn render(&self, comments: &[String]) -> String {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail, and every byte written is UTF-8 text.
        let _ = self.write_to(comments, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// `render` a line at a time: a map saved every 30 s is never held twice.
    pub fn write_to(
        &self,
        comments: &[String],
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        for c in comments {
            // A comment never spans lines: a newline in it would start a data line.
            let one_line: String = c
                .chars()
                .map(|ch| if ch.is_control() { ' ' } else { ch })
                .collect();
            writeln!(out, "# {one_line}")?;
        }
        writeln!(out, "# current_pos  current_status  current_pass")?;
        writeln!(
            out,
            "{:#010X}     {}               {}",
            Hex(self.current_pos),
            self.current_status,
            self.current_pass.unwrap_or(1)
        )?;
        writeln!(out, "#      pos        size  status")?;
        for (span, status) in self.regions() {
            writeln!(
                out,
                "{:#010X}  {:#010X}  {}",
                Hex(span.offset),
                Hex(span.length),
                status.char()
            )?;
        }
        Ok(())
    }
}

/// Hex as ddrescue writes it: `0x` and upper-case digits (`{:#X}` writes `0X`).
struct Hex(u64);

impl std::fmt::UpperHex for Hex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `{:#010X}`: 10 characters with the prefix, as ddrescue's "0x%08llX".
        let width = f.width().unwrap_or(0).saturating_sub(2);
        write!(f, "0x{:0width$X}", self.0)
    }
}

/// A number as strtoll base 0 reads it: `0x` hex, leading `0` octal, else decimal.
fn parse_number(text: &str) -> Option<u64> {
    let v = if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()?
    } else if text.len() > 1 && text.starts_with('0') {
        u64::from_str_radix(&text[1..], 8).ok()?
    } else {
        text.parse::<u64>().ok()?
    };
    // A digit string only: from_str_radix accepts a leading '+'.
    (!text.contains('+')).then_some(v)
}

/// A mapfile read a line at a time (for the reason of `write_to`).
#[derive(Debug, Default)]
pub struct MapfileParser {
    lines: usize,
    status_line: Option<(u64, char, Option<u32>)>,
    regions: BTreeMap<u64, (u64, Status)>,
    end: u64,
    last: Option<(u64, Status)>,
}

impl MapfileParser {
    /// Takes the next line (without its line break).
    pub fn line(&mut self, raw: &str) -> Result<(), MapfileError> {
        self.lines += 1;
        let line = self.lines;
        let err = |reason: String| MapfileError { line, reason };
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            return Ok(());
        }
        let fields: Vec<&str> = trimmed.split_whitespace().collect();
        if self.status_line.is_none() {
            if !(2..=3).contains(&fields.len()) {
                return Err(err(
                    "expected \"current_pos current_status [current_pass]\"".into(),
                ));
            }
            let pos = parse_number(fields[0])
                .ok_or_else(|| err(format!("{:?} is not a position", fields[0])))?;
            let phase = fields[1]
                .chars()
                .next()
                .filter(|c| fields[1].len() == 1 && PHASES.contains(c))
                .ok_or_else(|| err(format!("{:?} is not a ddrescue phase", fields[1])))?;
            let pass = match fields.get(2) {
                Some(f) => Some(
                    f.parse::<u32>()
                        .map_err(|_| err(format!("{f:?} is not a pass number")))?,
                ),
                None => None,
            };
            self.status_line = Some((pos, phase, pass));
            return Ok(());
        }
        if fields.len() != 3 {
            return Err(err("expected \"pos size status\"".into()));
        }
        let pos = parse_number(fields[0])
            .ok_or_else(|| err(format!("{:?} is not a position", fields[0])))?;
        let size = parse_number(fields[1])
            .filter(|&s| s > 0)
            .ok_or_else(|| err(format!("{:?} is not a size above 0", fields[1])))?;
        let status = Status::from_char(fields[2])
            .ok_or_else(|| err(format!("{:?} is not a block status", fields[2])))?;
        let end = self.end;
        if pos != end {
            return Err(err(format!(
                "the region starts at {pos:#x}, the one before ends at {end:#x}: regions \
                 must be in order and contiguous from 0"
            )));
        }
        self.end = pos
            .checked_add(size)
            .filter(|&e| e <= i64::MAX as u64)
            .ok_or_else(|| err("the region ends beyond 2^63".into()))?;
        // ddrescue itself never writes neighbours of one status; another tool might.
        match self.last {
            Some((start, st)) if st == status => {
                self.regions.insert(start, (self.end - start, status));
            }
            _ => {
                self.regions.insert(pos, (size, status));
                self.last = Some((pos, status));
            }
        }
        Ok(())
    }

    /// The map, once every line was given.
    pub fn finish(self) -> Result<Mapfile, MapfileError> {
        let Some((current_pos, current_status, current_pass)) = self.status_line else {
            return Err(MapfileError {
                line: self.lines,
                reason: "no status line: not a ddrescue mapfile".into(),
            });
        };
        Ok(Mapfile {
            current_pos,
            current_status,
            current_pass,
            regions: self.regions,
            size: self.end,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn regions(m: &Mapfile) -> Vec<(u64, u64, char)> {
        m.regions()
            .map(|(s, st)| (s.offset, s.length, st.char()))
            .collect()
    }

    #[test]
    fn written_as_ddrescue_writes_it() {
        let mut m = Mapfile::new(0x4000_0000);
        m.set(Span::new(0, 0x10_0000), Status::Finished);
        m.set(Span::new(0x10_0000, 0x2000), Status::BadSector);
        m.current_pos = 0x10_2000;
        let text = m.render(&["Mapfile. Created by disktriage".into()]);
        assert_eq!(
            text,
            "# Mapfile. Created by disktriage\n\
             # current_pos  current_status  current_pass\n\
             0x00102000     ?               1\n\
             #      pos        size  status\n\
             0x00000000  0x00100000  +\n\
             0x00100000  0x00002000  -\n\
             0x00102000  0x3FEFE000  ?\n"
        );
        assert_eq!(Mapfile::parse(&text), Ok(m));
    }

    #[test]
    fn reads_ddrescue_mapfiles_old_and_new() {
        // ddrescue 1.27's mapfile, and one before 1.20 (no pass), decimal, every status.
        let new = "# Mapfile. Created by GNU ddrescue version 1.27\n\
                   # Command line: ddrescue -d /dev/sdb sdb.img sdb.map\n\
                   # current_pos  current_status  current_pass\n\
                   0x00010000     *               2\n\
                   #      pos        size  status\n\
                   0x00000000  0x00010000  +\n\
                   0x00010000  0x00000200  -\n\
                   0x00010200  0x0000FE00  *\n\
                   0x00020000  0x00010000  /\n\
                   0x00030000  0x00010000  ?\n";
        let m = Mapfile::parse(new).expect("parses");
        assert_eq!(m.size(), 0x40000);
        assert_eq!(m.current_status, '*');
        assert_eq!(m.current_pass, Some(2));
        let full = Span::new(0, m.size());
        assert_eq!(
            m.to_read(full, false),
            vec![Span::new(0x10200, 0x2FE00)],
            "non-trimmed, non-scraped and non-tried are read; bad sectors only with --retry"
        );
        assert_eq!(m.to_read(full, true), vec![Span::new(0x10000, 0x30000)]);
        // Decimal, and octal with a leading 0 (03000 = 1536, 01000 = 512).
        let old = "0 +\n0 1024 +\n1024 512 -\n03000 01000 ?\n";
        let m = Mapfile::parse(old).expect("parses");
        assert_eq!(m.current_pass, None);
        assert_eq!(
            regions(&m),
            vec![(0, 1024, '+'), (1024, 512, '-'), (1536, 512, '?')]
        );
    }

    #[test]
    fn refuses_what_is_not_a_mapfile() {
        for (text, line) in [
            ("", 0),
            ("# only comments\n", 1),
            ("0x0 ?\n0x0 0x200 +\n0x400 0x200 +\n", 3),
            ("0x0 ?\n0x200 0x200 +\n", 2),
            ("0x0 ?\n0x0 0x0 +\n", 2),
            ("0x0 ?\n0x0 0x200 x\n", 2),
            ("0x0 Q\n", 1),
            ("0x0 ?\n0x0 -5 +\n", 2),
            ("0x0 ?\n0x0 0xFFFFFFFFFFFFFFFF +\n", 2),
            ("zz ?\n", 1),
            ("0x0 ? 1 extra\n", 1),
        ] {
            let e = Mapfile::parse(text).expect_err(text);
            assert_eq!(e.line, line, "{text:?}: {e}");
        }
    }

    #[test]
    fn setting_statuses_merges_neighbours() {
        let mut m = Mapfile::new(100);
        m.set(Span::new(10, 10), Status::Finished);
        m.set(Span::new(30, 10), Status::Finished);
        m.set(Span::new(20, 10), Status::Finished);
        assert_eq!(
            regions(&m),
            vec![(0, 10, '?'), (10, 30, '+'), (40, 60, '?')]
        );
        m.set(Span::new(0, 200), Status::BadSector);
        assert_eq!(regions(&m), vec![(0, 100, '-')]);
        assert_eq!(m.bytes_with(Status::BadSector, Span::new(50, 10)), 10);
    }

    fn status_of(i: u8) -> Status {
        [
            Status::NonTried,
            Status::NonTrimmed,
            Status::NonScraped,
            Status::BadSector,
            Status::Finished,
        ][usize::from(i % 5)]
    }

    proptest! {
        /// Any settings: contiguous regions with differing neighbours, equal to a plain
        /// array, and the text parses back to the same map.
        #[test]
        fn the_mapfile_round_trips(
            size in 1u64..300,
            sets in proptest::collection::vec((0u64..320, 0u64..80, 0u8..5), 0..40),
            pos in 0u64..300,
        ) {
            let mut m = Mapfile::new(size);
            let mut model = vec![Status::NonTried; size as usize];
            for &(offset, length, s) in &sets {
                m.set(Span::new(offset, length), status_of(s));
                for b in offset..(offset + length).min(size) {
                    model[b as usize] = status_of(s);
                }
            }
            let mut expect_pos = 0;
            let mut previous: Option<Status> = None;
            for (span, status) in m.regions() {
                prop_assert_eq!(span.offset, expect_pos);
                prop_assert!(span.length > 0);
                prop_assert_ne!(Some(status), previous);
                for b in span.offset..span.end() {
                    prop_assert_eq!(model[b as usize], status);
                }
                expect_pos = span.end();
                previous = Some(status);
            }
            prop_assert_eq!(expect_pos, size);
            m.current_pos = pos;
            let text = m.render(&["a comment\nwith a newline".into()]);
            prop_assert_eq!(Mapfile::parse(&text), Ok(m));
        }
    }
}
