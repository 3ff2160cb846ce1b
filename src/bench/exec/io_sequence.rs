//! Which I/O comes next: a pure function from an I/O's sequence number to its direction and
//! offset, so one planner serves an io_uring worker and a sync worker's threads alike.

use crate::bench::plan::{Access, Mix, OpKind, splitmix64};

/// The planned I/O number `k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedIo {
    pub kind: OpKind,
    pub offset: u64,
}

/// One worker's region and pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planner {
    start: u64,
    bs: u64,
    blocks: u64,
    access: Access,
    mix: Mix,
    seed: u64,
}

/// Maps a uniform u64 onto 0..n without division (Lemire's multiply-shift).
fn below(r: u64, n: u64) -> u64 {
    ((u128::from(r) * u128::from(n)) >> 64) as u64
}

impl Planner {
    /// A planner over `len` bytes from `start` in requests of `bs`; `None` when the region cannot
    /// hold one request.
    pub fn new(start: u64, len: u64, bs: u64, access: Access, mix: Mix, seed: u64) -> Option<Self> {
        if bs == 0 || len < bs {
            return None;
        }
        Some(Planner {
            start,
            bs,
            blocks: len / bs,
            access,
            mix,
            seed,
        })
    }

    /// Number of distinct request-sized blocks in the region.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Are this plan's offsets independent of the issue order (random access), so threads may
    /// each take their own share?
    pub fn order_free(&self) -> bool {
        self.access == Access::Random
    }

    pub fn op(&self, k: u64) -> PlannedIo {
        let block = match self.access {
            Access::Forward => k % self.blocks,
            Access::Backward => self.blocks - 1 - (k % self.blocks),
            Access::Random => below(
                splitmix64(self.seed ^ k.wrapping_mul(0x2545_F491_4F6C_DD1D)),
                self.blocks,
            ),
        };
        let kind = match self.mix {
            Mix::Read => OpKind::Read,
            Mix::Write => OpKind::Write,
            Mix::Mixed { read_pct } => {
                let r = splitmix64(!self.seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                if below(r, 100) < u64::from(read_pct) {
                    OpKind::Read
                } else {
                    OpKind::Write
                }
            }
        };
        PlannedIo {
            kind,
            offset: self.start + block * self.bs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets(p: &Planner, n: u64) -> Vec<u64> {
        (0..n).map(|k| p.op(k).offset).collect()
    }

    #[test]
    fn forward_walks_up_and_wraps() {
        let p = Planner::new(4096, 4 * 4096 + 100, 4096, Access::Forward, Mix::Read, 1).unwrap();
        assert_eq!(p.blocks(), 4);
        assert_eq!(
            offsets(&p, 6),
            [4096, 8192, 12288, 16384, 4096, 8192],
            "the partial block at the end is never touched"
        );
    }

    #[test]
    fn backward_walks_down_from_the_end() {
        let p = Planner::new(0, 3 << 20, 1 << 20, Access::Backward, Mix::Write, 1).unwrap();
        assert_eq!(offsets(&p, 4), [2 << 20, 1 << 20, 0, 2 << 20]);
        assert_eq!(p.op(0).kind, OpKind::Write);
    }

    #[test]
    fn random_stays_aligned_in_region_and_covers_it() {
        let bs = 4096;
        let p = Planner::new(1 << 20, 64 * bs, bs, Access::Random, Mix::Read, 42).unwrap();
        let offs = offsets(&p, 20_000);
        assert!(
            offs.iter()
                .all(|&o| o >= 1 << 20 && o + bs <= (1 << 20) + 64 * bs)
        );
        assert!(offs.iter().all(|o| o % bs == 0));
        let mut hits = [0u32; 64];
        for o in &offs {
            hits[((o - (1 << 20)) / bs) as usize] += 1;
        }
        // Uniform: 20000/64 = 312.5 per block; every block within 25 %.
        assert!(hits.iter().all(|&h| (234..=391).contains(&h)), "{hits:?}");
        // Deterministic for a seed, different across seeds.
        assert_eq!(offs, offsets(&p, 20_000));
        let q = Planner::new(1 << 20, 64 * bs, bs, Access::Random, Mix::Read, 43).unwrap();
        assert_ne!(offs, offsets(&q, 20_000));
    }

    #[test]
    fn mixed_honours_the_read_percentage() {
        let p = Planner::new(
            0,
            1 << 30,
            4096,
            Access::Random,
            Mix::Mixed { read_pct: 70 },
            7,
        )
        .unwrap();
        let reads = (0..100_000)
            .filter(|&k| p.op(k).kind == OpKind::Read)
            .count();
        assert!((69_000..71_000).contains(&reads), "{reads}");
        let all_write = Planner::new(
            0,
            1 << 20,
            4096,
            Access::Random,
            Mix::Mixed { read_pct: 0 },
            7,
        )
        .unwrap();
        assert!((0..1000).all(|k| all_write.op(k).kind == OpKind::Write));
    }

    #[test]
    fn too_small_regions_are_refused() {
        assert!(Planner::new(0, 4095, 4096, Access::Forward, Mix::Read, 0).is_none());
        assert!(Planner::new(0, 4096, 0, Access::Forward, Mix::Read, 0).is_none());
    }

    #[test]
    fn only_random_plans_are_order_free() {
        let plan = |access| Planner::new(0, 1 << 20, 4096, access, Mix::Read, 1).unwrap();
        assert!(plan(Access::Random).order_free());
        assert!(!plan(Access::Forward).order_free());
        assert!(!plan(Access::Backward).order_free());
    }
}
