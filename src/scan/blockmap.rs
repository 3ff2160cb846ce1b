//! The block map: a fixed number of cells over the scanned range, each holding the worst bucket
//! of the blocks read in it (none yet: not read). Its size does not depend on the device's.

use super::Span;
use super::buckets::Bucket;

/// Cells of a map unless told otherwise: enough for a full screen of 132x43.
pub const DEFAULT_CELLS: usize = 8192;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockMap {
    domain: Span,
    cells: Vec<Option<Bucket>>,
}

impl BlockMap {
    /// A map of `domain` in at most `cells` cells, none smaller than a 512-byte sector.
    pub fn new(domain: Span, cells: usize) -> BlockMap {
        let count = (domain.length / 512).min(cells as u64) as usize;
        BlockMap {
            domain,
            cells: vec![None; count.max(usize::from(domain.length > 0))],
        }
    }

    fn cell_of(&self, offset: u64) -> usize {
        let rel = u128::from(offset.saturating_sub(self.domain.offset));
        let n = self.cells.len() as u128;
        let idx = rel * n / u128::from(self.domain.length.max(1));
        (idx as usize).min(self.cells.len().saturating_sub(1))
    }

    /// Marks the cells `span` touches with `bucket` where it is worse.
    pub fn record(&mut self, span: Span, bucket: Bucket) {
        let Some(part) = span.intersect(&self.domain) else {
            return;
        };
        let (first, last) = (self.cell_of(part.offset), self.cell_of(part.end() - 1));
        for cell in &mut self.cells[first..=last] {
            if cell.is_none_or(|b| b < bucket) {
                *cell = Some(bucket);
            }
        }
    }

    pub fn cells(&self) -> &[Option<Bucket>] {
        &self.cells
    }

    /// The map in `width` glyphs, each the worst of its cells (space: not read).
    pub fn line(&self, width: usize) -> String {
        let n = self.cells.len();
        if n == 0 || width == 0 {
            return String::new();
        }
        let width = width.min(n);
        (0..width)
            .map(|i| {
                let (from, to) = (i * n / width, ((i + 1) * n / width).max(i * n / width + 1));
                self.cells[from..to.min(n)]
                    .iter()
                    .flatten()
                    .max()
                    .map_or(' ', |b| b.glyph())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_keep_the_worst_bucket() {
        let mut m = BlockMap::new(Span::new(1 << 20, 8 << 40), 1000);
        assert_eq!(m.cells().len(), 1000);
        m.record(Span::new(1 << 20, 1 << 20), Bucket::Under5);
        m.record(Span::new(2 << 20, 1 << 20), Bucket::Err);
        m.record(Span::new(3 << 20, 1 << 20), Bucket::Under50);
        assert_eq!(m.cells()[0], Some(Bucket::Err));
        assert_eq!(m.cells()[1], None);
        // The last byte lands in the last cell; outside the range nothing changes.
        m.record(Span::new((8 << 40) + (1 << 20) - 512, 512), Bucket::Time);
        m.record(Span::new(0, 4096), Bucket::Time);
        assert_eq!(m.cells()[999], Some(Bucket::Time));
        assert_eq!(&m.line(4)[..1], "X");
        assert_eq!(m.line(4).chars().last(), Some('T'));
    }

    #[test]
    fn a_small_range_has_no_cell_smaller_than_a_sector() {
        let mut m = BlockMap::new(Span::new(0, 4096), 8192);
        assert_eq!(m.cells().len(), 8);
        m.record(Span::new(0, 4096), Bucket::Under20);
        assert_eq!(m.line(80), "::::::::");
        assert!(BlockMap::new(Span::new(0, 0), 10).cells().is_empty());
        assert_eq!(BlockMap::new(Span::new(0, 100), 10).cells().len(), 1);
    }
}
