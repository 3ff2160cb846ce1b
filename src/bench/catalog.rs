//! The test catalogue: every test the seeds describe (dd, concurrent dd, ORION, iozone/diskperf
//! sweeps, CrystalDiskMark), with its defaults and where it comes from.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// A test users can ask for by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TestName {
    SeqRead,
    SeqWrite,
    SeqReadQ8,
    SeqWriteQ8,
    ConcurrentRead,
    ConcurrentWrite,
    SyncLatency,
    RandRead,
    RandWrite,
    RandMixed,
    SizeSweep,
    QdSweep,
    Cdm,
    CdmNvme,
}

/// Whether a test writes to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    Never,
    Always,
    /// Writes are part of the test but can be left out (sweeps, CrystalDiskMark presets).
    Optional,
}

/// A catalogue entry.
#[derive(Debug, Clone, Copy)]
pub struct TestInfo {
    pub name: TestName,
    pub id: &'static str,
    pub summary: &'static str,
    pub origin: &'static str,
    pub writes: Writes,
}

pub const CATALOG: [TestInfo; 14] = [
    TestInfo {
        name: TestName::SeqRead,
        id: "seq-read",
        summary: "sequential read, 1 MiB requests, QD1",
        origin: "dd if=DEV of=/dev/null bs=1MiB iflag=direct",
        writes: Writes::Never,
    },
    TestInfo {
        name: TestName::SeqWrite,
        id: "seq-write",
        summary: "sequential write, 1 MiB requests, QD1",
        origin: "dd if=/dev/zero of=DEV bs=1MiB oflag=direct",
        writes: Writes::Always,
    },
    TestInfo {
        name: TestName::SeqReadQ8,
        id: "seq-read-q8",
        summary: "sequential read, 1 MiB requests, QD8",
        origin: "CrystalDiskMark SEQ1M Q8T1",
        writes: Writes::Never,
    },
    TestInfo {
        name: TestName::SeqWriteQ8,
        id: "seq-write-q8",
        summary: "sequential write, 1 MiB requests, QD8",
        origin: "CrystalDiskMark SEQ1M Q8T1",
        writes: Writes::Always,
    },
    TestInfo {
        name: TestName::ConcurrentRead,
        id: "concurrent-read",
        summary: "N sequential readers on disjoint regions (default 2), each rate and the total",
        origin: "two dd readers, the second with skip=200",
        writes: Writes::Never,
    },
    TestInfo {
        name: TestName::ConcurrentWrite,
        id: "concurrent-write",
        summary: "N sequential writers on disjoint regions (default 2), each rate and the total",
        origin: "two dd writers, the second with seek=200",
        writes: Writes::Always,
    },
    TestInfo {
        name: TestName::SyncLatency,
        id: "sync-latency",
        summary: "1000 synchronous 512-byte writes (O_DSYNC, or O_SYNC), latency per write",
        origin: "dd if=/dev/zero of=DEV bs=512 count=1000 oflag=dsync",
        writes: Writes::Always,
    },
    TestInfo {
        name: TestName::RandRead,
        id: "rand-read",
        summary: "random read, 4 KiB requests (8 KiB is ORION's small I/O), QD and workers settable",
        origin: "CrystalDiskMark RND4K, ORION small random",
        writes: Writes::Never,
    },
    TestInfo {
        name: TestName::RandWrite,
        id: "rand-write",
        summary: "random write, 4 KiB requests, QD and workers settable",
        origin: "CrystalDiskMark RND4K write",
        writes: Writes::Always,
    },
    TestInfo {
        name: TestName::RandMixed,
        id: "rand-mixed",
        summary: "random mixed read/write (70 % reads by default), 4 KiB requests",
        origin: "CrystalDiskMark mix R70/W30, ORION -write",
        writes: Writes::Always,
    },
    TestInfo {
        name: TestName::SizeSweep,
        id: "size-sweep",
        summary: "request sizes doubling from --min-bs to --max-bs: forward, backward and random \
                  read (and write with --write), MB/s table",
        origin: "SGI diskperf, iozone -a",
        writes: Writes::Optional,
    },
    TestInfo {
        name: TestName::QdSweep,
        id: "qd-sweep",
        summary: "queue depths 1,2,4..32 for small random (8 KiB) and large sequential (1 MiB) \
                  reads: max IOPS, max MB/s, min latency and the load of each",
        origin: "Oracle ORION -run simple/advanced",
        writes: Writes::Never,
    },
    TestInfo {
        name: TestName::Cdm,
        id: "cdm",
        summary: "CrystalDiskMark's four: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1, read \
                  and write",
        origin: "CrystalDiskMark / KDiskMark default profile",
        writes: Writes::Optional,
    },
    TestInfo {
        name: TestName::CdmNvme,
        id: "cdm-nvme",
        summary: "CrystalDiskMark's NVMe set: SEQ1M Q8T1, SEQ128K Q32T1, RND4K Q32T16, RND4K Q1T1",
        origin: "CrystalDiskMark NVMe SSD profile",
        writes: Writes::Optional,
    },
];

impl TestName {
    pub fn info(self) -> &'static TestInfo {
        CATALOG
            .iter()
            .find(|t| t.name == self)
            .unwrap_or(&CATALOG[0])
    }

    pub fn id(self) -> &'static str {
        self.info().id
    }
}

impl fmt::Display for TestName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// An unknown test name, with the list of known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown test {name:?}; known tests: {known}")]
pub struct UnknownTest {
    pub name: String,
    pub known: String,
}

impl FromStr for TestName {
    type Err = UnknownTest;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CATALOG
            .iter()
            .find(|t| t.id == s)
            .map(|t| t.name)
            .ok_or_else(|| UnknownTest {
                name: s.to_string(),
                known: CATALOG.iter().map(|t| t.id).collect::<Vec<_>>().join(", "),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for t in &CATALOG {
            assert_eq!(t.id.parse::<TestName>().unwrap(), t.name);
            assert_eq!(t.name.info().id, t.id);
        }
        let mut ids: Vec<_> = CATALOG.iter().map(|t| t.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), CATALOG.len());
        let err = "seq-reed".parse::<TestName>().unwrap_err().to_string();
        assert!(err.contains("seq-read, seq-write"), "{err}");
    }
}
