//! The in-use verdict: which mounts, swap areas and stacked devices claim a block device or one
//! of its partitions. Pure matching over tables the `sys` layer parsed.
//!
//! Loop devices register no holders, so their links are followed here (the loop-backing
//! rule): a loop device and what is behind it (the block device it is stacked on, or its
//! backing file and every other loop device over the same file) show the same data. A node
//! is in use when anything linked to it that way is mounted, active swap or held, through any
//! number of links (each node visited once, so cycles end). Partitions count inside their disk:
//! a link into a disk reaches its partitions, a link into a partition reaches the disk's own
//! use but never the sibling partitions. Where a backing file lives does not count: a loop
//! device over a file on a mounted file system is not in use merely by that.

use std::collections::{HashSet, VecDeque};

use super::device::{
    BlockDevice, DevNum, FileId, Holder, InUse, LoopBacking, LoopLink, SwapEntry, SwapKind,
};

/// One line of `/proc/self/mountinfo`, reduced to what the verdict needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// The mounted device's `major:minor` (0:N for pseudo filesystems).
    pub dev: Option<DevNum>,
    /// The mount source (`/dev/sda1`, `/dev/mapper/vg-root`).
    pub source: String,
    pub mount_point: String,
    pub fstype: String,
}

/// Does `source` (a mount or swap path) name the node `name`, or its dm alias?
fn names_node(source: &str, name: &str, dm_name: Option<&str>) -> bool {
    let dev_name = name.replace('!', "/");
    if source == format!("/dev/{dev_name}") {
        return true;
    }
    match dm_name {
        Some(dm) => source == format!("/dev/mapper/{dm}"),
        None => false,
    }
}

/// The reasons one node (a whole device or a partition) is in use.
fn node_usage(
    name: &str,
    dev: Option<DevNum>,
    dm_name: Option<&str>,
    holders: &[Holder],
    mounts: &[MountEntry],
    swaps: &[SwapEntry],
) -> Vec<InUse> {
    let mut reasons = Vec::new();
    for m in mounts {
        // Pseudo filesystems have major 0; a real block device never does.
        let by_number = matches!((dev, m.dev), (Some(a), Some(b)) if a == b && a.major != 0);
        if by_number || names_node(&m.source, name, dm_name) {
            let reason = InUse::Mounted {
                device: name.to_string(),
                mount_point: m.mount_point.clone(),
                fstype: m.fstype.clone(),
            };
            if !reasons.contains(&reason) {
                reasons.push(reason);
            }
        }
    }
    for s in swaps {
        if s.kind == SwapKind::Partition && names_node(&s.path, name, dm_name) {
            reasons.push(InUse::Swap {
                device: name.to_string(),
            });
        }
    }
    for h in holders {
        reasons.push(InUse::Held {
            device: name.to_string(),
            holder: h.clone(),
        });
    }
    reasons
}

/// Fills `device.in_use` from its and its partitions' mounts, swap, holders.
pub fn assess(device: &mut BlockDevice, mounts: &[MountEntry], swaps: &[SwapEntry]) {
    let mut reasons = node_usage(
        &device.name,
        device.dev,
        device.dm_name.as_deref(),
        &device.holders,
        mounts,
        swaps,
    );
    for p in &device.partitions {
        reasons.extend(node_usage(&p.name, p.dev, None, &p.holders, mounts, swaps));
    }
    device.in_use = reasons;
}

/// Fills every device's `in_use`, with the use inherited through loops.
pub fn assess_all(devices: &mut [BlockDevice], mounts: &[MountEntry], swaps: &[SwapEntry]) {
    for d in devices.iter_mut() {
        assess(d, mounts, swaps);
    }
    let graph = Graph::new(devices);
    let derived: Vec<Vec<InUse>> = (0..graph.nodes.len())
        .map(|n| graph.inherited(&[n]))
        .collect();
    for (node, reasons) in graph.nodes.iter().zip(derived) {
        let list = &mut devices[node.disk].in_use;
        for r in reasons {
            if !list.contains(&r) {
                list.push(r);
            }
        }
    }
}

/// Why a regular file must not be written (a swap file, a busy loop's backing file).
pub fn file_usage(
    devices: &[BlockDevice],
    swaps: &[SwapEntry],
    path: &str,
    id: FileId,
) -> Vec<InUse> {
    let mut reasons = Vec::new();
    let is_swap = swaps.iter().any(|s| {
        s.kind == SwapKind::File
            && match s.file {
                Some(f) => f == id,
                None => s.path == path,
            }
    });
    if is_swap {
        reasons.push(InUse::SwapFile {
            device: path.to_string(),
        });
    }
    let graph = Graph::new(devices);
    let target = LoopBacking {
        file: Some(id),
        block: None,
    };
    let loops: Vec<usize> = graph
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| {
            n.part.is_none() && same_file(&devices[n.disk], &target, Some(path)) == Some(true)
        })
        .map(|(i, _)| i)
        .collect();
    for &l in &loops {
        let name = graph.nodes[l].name.clone();
        let mut own = graph.direct[l].clone();
        // The other loop devices over this file are in `loops` themselves.
        own.extend(graph.inherited(&[l]).into_iter().filter(|r| {
            !matches!(
                r,
                InUse::Loop {
                    link: LoopLink::SharesFile,
                    ..
                }
            )
        }));
        for r in own {
            let cause = graph.describe_from(l, &r);
            reasons.push(InUse::Loop {
                device: path.to_string(),
                link: LoopLink::BackingFileOf,
                other: name.clone(),
                file: None,
                cause,
            });
        }
    }
    reasons.dedup();
    reasons
}

/// A target of a run: a block node by name, or a file by identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataRef<'a> {
    Node(&'a str),
    File { id: FileId, path: &'a str },
}

/// Whether two targets show the same data, so that writing one writes the other: one device
/// under two names, a disk and one of its partitions, a loop device and its backing file or
/// the device it is stacked on (through any number of loop links), two loop devices over one
/// file, two hard links to one file. Sibling partitions do not share data.
pub fn same_data(devices: &[BlockDevice], a: DataRef, b: DataRef) -> bool {
    if a == b {
        return true;
    }
    if let (DataRef::File { id: x, .. }, DataRef::File { id: y, .. }) = (a, b)
        && x == y
    {
        return true;
    }
    let graph = Graph::new(devices);
    graph.reaches(devices, a, b) || graph.reaches(devices, b, a)
}

/// Whether loop `d` is backed by `other`'s file: by identity, else by path.
fn same_file(d: &BlockDevice, other: &LoopBacking, other_path: Option<&str>) -> Option<bool> {
    let own = d.loop_backing?;
    if own.block.is_some() || other.block.is_some() {
        return Some(false);
    }
    match (own.file, other.file) {
        (Some(a), Some(b)) => Some(a == b),
        _ => Some(match (d.backing_file.as_deref(), other_path) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        }),
    }
}

/// A block node: a disk (`part` None) or one of its partitions.
struct Node {
    disk: usize,
    part: Option<usize>,
    name: String,
}

/// How one node reaches another.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Hop {
    /// Same data through a loop device.
    Alias,
    /// From a partition to its disk.
    Up,
    /// From a disk to its partitions.
    Down,
}

impl Hop {
    /// The direction after this hop, having gone `dir`; `None` when it turns back (up after
    /// down or down after up), which would reach a sibling partition.
    fn after(self, dir: Option<Hop>) -> Option<Option<Hop>> {
        match (self, dir) {
            (Hop::Alias, d) => Some(d),
            (Hop::Up, Some(Hop::Down)) | (Hop::Down, Some(Hop::Up)) => None,
            (h, _) => Some(Some(h)),
        }
    }
}

struct Edge {
    to: usize,
    hop: Hop,
    link: LoopLink,
    file: Option<String>,
}

/// A node reached, its direction, and the path as (node, edge) pairs.
type Step = (usize, Option<Hop>, Vec<(usize, usize)>);

/// Block nodes, their own (direct) use and the links between them.
struct Graph {
    nodes: Vec<Node>,
    direct: Vec<Vec<InUse>>,
    edges: Vec<Vec<Edge>>,
}

impl Graph {
    fn new(devices: &[BlockDevice]) -> Graph {
        let mut nodes = Vec::new();
        let mut direct = Vec::new();
        for (di, d) in devices.iter().enumerate() {
            let own = |name: &str| -> Vec<InUse> {
                d.in_use
                    .iter()
                    .filter(|u| u.device() == name && !matches!(u, InUse::Loop { .. }))
                    .cloned()
                    .collect()
            };
            nodes.push(Node {
                disk: di,
                part: None,
                name: d.name.clone(),
            });
            direct.push(own(&d.name));
            for (pi, p) in d.partitions.iter().enumerate() {
                nodes.push(Node {
                    disk: di,
                    part: Some(pi),
                    name: p.name.clone(),
                });
                direct.push(own(&p.name));
            }
        }
        let dev_of = |n: &Node| -> Option<DevNum> {
            let d = &devices[n.disk];
            match n.part {
                None => d.dev,
                Some(p) => d.partitions[p].dev,
            }
        };
        let mut edges: Vec<Vec<Edge>> = nodes.iter().map(|_| Vec::new()).collect();
        for (i, n) in nodes.iter().enumerate() {
            if n.part.is_some() {
                let disk = nodes
                    .iter()
                    .position(|m| m.disk == n.disk && m.part.is_none())
                    .unwrap_or(i);
                edges[i].push(Edge {
                    to: disk,
                    hop: Hop::Up,
                    link: LoopLink::PartOf,
                    file: None,
                });
                edges[disk].push(Edge {
                    to: i,
                    hop: Hop::Down,
                    link: LoopLink::Contains,
                    file: None,
                });
                continue;
            }
            let d = &devices[n.disk];
            let Some(backing) = d.loop_backing else {
                continue;
            };
            if let Some(under) = backing.block {
                for (j, m) in nodes.iter().enumerate() {
                    if j != i && dev_of(m) == Some(under) {
                        edges[i].push(Edge {
                            to: j,
                            hop: Hop::Alias,
                            link: LoopLink::BackedBy,
                            file: None,
                        });
                        edges[j].push(Edge {
                            to: i,
                            hop: Hop::Alias,
                            link: LoopLink::Backs,
                            file: None,
                        });
                    }
                }
            } else {
                for (j, m) in nodes.iter().enumerate() {
                    if j != i
                        && m.part.is_none()
                        && same_file(&devices[m.disk], &backing, d.backing_file.as_deref())
                            == Some(true)
                    {
                        edges[i].push(Edge {
                            to: j,
                            hop: Hop::Alias,
                            link: LoopLink::SharesFile,
                            file: d.backing_file.as_deref().map(file_name),
                        });
                    }
                }
            }
        }
        Graph {
            nodes,
            direct,
            edges,
        }
    }

    /// The use `starts` inherit through loop links, breadth first so each reason comes with
    /// its shortest chain, each (node, direction) once, never into a sibling partition.
    fn inherited(&self, starts: &[usize]) -> Vec<InUse> {
        let mut out = Vec::new();
        for &start in starts {
            let mut seen: HashSet<(usize, Option<Hop>)> = HashSet::from([(start, None)]);
            let mut reported: HashSet<usize> = HashSet::from([start]);
            let mut queue: VecDeque<Step> = VecDeque::new();
            queue.push_back((start, None, Vec::new()));
            while let Some((at, dir, path)) = queue.pop_front() {
                for (k, e) in self.edges[at].iter().enumerate() {
                    // The first link must be a loop link: `assess` covers the rest.
                    if path.is_empty() && e.hop != Hop::Alias {
                        continue;
                    }
                    let Some(dir) = e.hop.after(dir) else {
                        continue;
                    };
                    if !seen.insert((e.to, dir)) {
                        continue;
                    }
                    let mut next = path.clone();
                    next.push((at, k));
                    if reported.insert(e.to) {
                        for r in &self.direct[e.to] {
                            out.push(self.reason(start, &next, r));
                        }
                    }
                    queue.push_back((e.to, dir, next));
                }
            }
        }
        out
    }

    /// A target's start nodes: its own, or every loop device over a file.
    fn starts(&self, devices: &[BlockDevice], target: DataRef) -> Vec<usize> {
        match target {
            DataRef::Node(name) => self
                .nodes
                .iter()
                .position(|n| n.name == name)
                .into_iter()
                .collect(),
            DataRef::File { id, path } => {
                let backing = LoopBacking {
                    file: Some(id),
                    block: None,
                };
                self.nodes
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| {
                        n.part.is_none()
                            && same_file(&devices[n.disk], &backing, Some(path)) == Some(true)
                    })
                    .map(|(i, _)| i)
                    .collect()
            }
        }
    }

    /// Whether the data of `from` reaches `to`, walked as `inherited` walks.
    fn reaches(&self, devices: &[BlockDevice], from: DataRef, to: DataRef) -> bool {
        // A file is reached at a loop device over it.
        let targets = self.starts(devices, to);
        let is_target = |node: usize| targets.contains(&node);
        let starts = self.starts(devices, from);
        let mut seen: HashSet<(usize, Option<Hop>)> = HashSet::new();
        let mut queue: VecDeque<(usize, Option<Hop>)> = VecDeque::new();
        for &s in &starts {
            if is_target(s) {
                return true;
            }
            seen.insert((s, None));
            queue.push_back((s, None));
        }
        while let Some((at, dir)) = queue.pop_front() {
            for e in &self.edges[at] {
                let Some(dir) = e.hop.after(dir) else {
                    continue;
                };
                if !seen.insert((e.to, dir)) {
                    continue;
                }
                if is_target(e.to) {
                    return true;
                }
                queue.push_back((e.to, dir));
            }
        }
        false
    }

    /// The reason for `start` from its chain of links to `root`'s node.
    fn reason(&self, start: usize, path: &[(usize, usize)], root: &InUse) -> InUse {
        let first = &self.edges[path[0].0][path[0].1];
        let mut words: Vec<String> = Vec::new();
        let mut rest = &path[1..];
        // Ending in a partition reads better: "loop5p1 mounted at ...".
        let mut owner = self.edges[path[path.len() - 1].0][path[path.len() - 1].1].to;
        if let Some(((at, k), init)) = rest.split_last()
            && self.edges[*at][*k].hop == Hop::Down
        {
            owner = *at;
            rest = init;
        }
        // A step down names the partition ("loop0p2 backs loop6").
        let mut into: Option<&str> = None;
        for (at, k) in rest {
            let e = &self.edges[*at][*k];
            if e.hop == Hop::Down {
                into = Some(&self.nodes[e.to].name);
                continue;
            }
            let step = e.link.words(&self.nodes[e.to].name, e.file.as_deref());
            words.push(match into.take() {
                Some(part) => format!("{part} {step}"),
                None => step,
            });
        }
        words.push(self.describe_from(owner, root));
        InUse::Loop {
            device: self.nodes[start].name.clone(),
            link: first.link,
            other: self.nodes[first.to].name.clone(),
            file: first.file.clone(),
            cause: words.join(", "),
        }
    }

    /// `root` in words as seen from node `owner`.
    fn describe_from(&self, owner: usize, root: &InUse) -> String {
        root.describe(&self.nodes[owner].name)
    }
}

/// The last component of a path, for messages ("a.img").
fn file_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::device::{HolderKind, Partition};

    fn mount(dev: &str, source: &str, at: &str) -> MountEntry {
        MountEntry {
            dev: dev.parse().ok(),
            source: source.into(),
            mount_point: at.into(),
            fstype: "ext4".into(),
        }
    }

    fn disk_with_partition() -> BlockDevice {
        let mut d = BlockDevice::unknown("sda", "/dev/sda".into());
        d.dev = "8:0".parse().ok();
        d.partitions.push(Partition {
            name: "sda1".into(),
            path: "/dev/sda1".into(),
            dev: "8:1".parse().ok(),
            number: Some(1),
            start_sector: Some(2048),
            size_bytes: None,
            read_only: Some(false),
            holders: vec![],
        });
        d
    }

    #[test]
    fn mounted_partition_marks_the_disk() {
        let mut d = disk_with_partition();
        assess(&mut d, &[mount("8:1", "/dev/sda1", "/boot")], &[]);
        assert_eq!(d.usage_summary(), "sda1 mounted at /boot");
    }

    #[test]
    fn match_by_number_when_source_is_an_alias() {
        let mut d = disk_with_partition();
        assess(&mut d, &[mount("8:0", "UUID=abc", "/data")], &[]);
        assert_eq!(d.usage_summary(), "mounted at /data");
    }

    #[test]
    fn pseudo_filesystems_never_match() {
        let mut d = BlockDevice::unknown("zram0", "/dev/zram0".into());
        d.dev = "0:22".parse().ok();
        assess(&mut d, &[mount("0:22", "proc", "/proc")], &[]);
        assert!(!d.is_in_use());
    }

    #[test]
    fn swap_partitions_but_not_swap_files() {
        let mut d = BlockDevice::unknown("zram0", "/dev/zram0".into());
        let swaps = [
            SwapEntry {
                path: "/dev/zram0".into(),
                kind: SwapKind::Partition,
                file: None,
            },
            SwapEntry {
                path: "/dev/zram0.file".into(),
                kind: SwapKind::File,
                file: None,
            },
        ];
        assess(&mut d, &[], &swaps);
        assert_eq!(d.usage_summary(), "active swap");
    }

    fn loop_over(name: &str, minor: u32, file: &str, id: Option<FileId>) -> BlockDevice {
        let mut d = BlockDevice::unknown(name, format!("/dev/{name}").into());
        d.dev = Some(DevNum { major: 7, minor });
        d.backing_file = Some(file.into());
        d.loop_backing = Some(LoopBacking {
            file: id,
            block: None,
        });
        d
    }

    fn loop_on(name: &str, minor: u32, under: &BlockDevice) -> BlockDevice {
        let mut d = loop_over(name, minor, &under.path.to_string_lossy(), None);
        d.loop_backing = Some(LoopBacking {
            file: Some(id(0, minor as u64)),
            block: under.dev,
        });
        d
    }

    fn id(minor: u32, ino: u64) -> FileId {
        FileId {
            dev: DevNum { major: 254, minor },
            ino,
        }
    }

    fn summaries(devices: &[BlockDevice]) -> Vec<String> {
        devices.iter().map(BlockDevice::usage_summary).collect()
    }

    #[test]
    fn a_loop_device_sharing_a_file_with_a_mounted_one_is_in_use() {
        let mut devs = vec![
            loop_over("loop4", 4, "/tmp/a.img", Some(id(1, 12))),
            loop_over("loop5", 5, "/tmp/a.img", Some(id(1, 12))),
            loop_over("loop6", 6, "/tmp/b.img", Some(id(1, 13))),
        ];
        assess_all(&mut devs, &[mount("7:4", "/dev/loop4", "/mnt/x")], &[]);
        assert_eq!(
            summaries(&devs),
            [
                "mounted at /mnt/x",
                "shares a.img with loop4, mounted at /mnt/x",
                "free"
            ]
        );
        // Unmounted: all free.
        assess_all(&mut devs, &[], &[]);
        assert_eq!(summaries(&devs), ["free", "free", "free"]);
    }

    #[test]
    fn backing_files_are_compared_by_identity_then_by_path() {
        // The same path text, but the kernel says they are different files (one was
        // replaced after the first loop device was set up): not shared.
        let mut devs = vec![
            loop_over("loop4", 4, "/tmp/a.img", Some(id(1, 12))),
            loop_over("loop5", 5, "/tmp/a.img", Some(id(1, 99))),
        ];
        assess_all(&mut devs, &[mount("7:4", "/dev/loop4", "/mnt/x")], &[]);
        assert_eq!(summaries(&devs), ["mounted at /mnt/x", "free"]);
        // Identity unknown on one side: the path text decides, towards "in use".
        devs[1].loop_backing = Some(LoopBacking::default());
        assess_all(&mut devs, &[mount("7:4", "/dev/loop4", "/mnt/x")], &[]);
        assert_eq!(
            devs[1].usage_summary(),
            "shares a.img with loop4, mounted at /mnt/x"
        );
        // Different paths, same identity (a bind mount): shared.
        let mut devs = vec![
            loop_over("loop4", 4, "/tmp/a.img", Some(id(1, 12))),
            loop_over("loop5", 5, "/srv/bind/a.img", Some(id(1, 12))),
        ];
        assess_all(&mut devs, &[mount("7:5", "/dev/loop5", "/mnt/y")], &[]);
        assert_eq!(
            devs[0].usage_summary(),
            "shares a.img with loop5, mounted at /mnt/y"
        );
    }

    #[test]
    fn stacked_loop_devices_inherit_both_ways_and_through_chains() {
        let lower = loop_over("loop4", 4, "/tmp/a.img", Some(id(1, 12)));
        let upper = loop_on("loop5", 5, &lower);
        let top = loop_on("loop6", 6, &upper);
        let mut devs = vec![lower, upper, top];
        assess_all(&mut devs, &[mount("7:4", "/dev/loop4", "/mnt/x")], &[]);
        assert_eq!(
            summaries(&devs),
            [
                "mounted at /mnt/x",
                "backed by loop4, mounted at /mnt/x",
                "backed by loop5, backed by loop4, mounted at /mnt/x"
            ]
        );
        assess_all(&mut devs, &[mount("7:6", "/dev/loop6", "/mnt/top")], &[]);
        assert_eq!(
            summaries(&devs),
            [
                "backs loop5, backs loop6, mounted at /mnt/top",
                "backs loop6, mounted at /mnt/top",
                "mounted at /mnt/top"
            ]
        );
    }

    #[test]
    fn a_backing_file_on_a_mounted_file_system_is_not_use() {
        // loop5's file is on loop4's (7:4) file system, which is mounted.
        let lower = loop_over("loop4", 4, "/tmp/a.img", Some(id(1, 12)));
        let inner = loop_over(
            "loop5",
            5,
            "/mnt/x/inner.img",
            Some(FileId {
                dev: DevNum { major: 7, minor: 4 },
                ino: 12,
            }),
        );
        let mut devs = vec![lower, inner];
        assess_all(&mut devs, &[mount("7:4", "/dev/loop4", "/mnt/x")], &[]);
        assert_eq!(summaries(&devs), ["mounted at /mnt/x", "free"]);
    }

    #[test]
    fn partitions_pass_use_to_their_disk_but_not_to_siblings() {
        let mut disk = loop_over("loop0", 0, "/tmp/p.img", Some(id(1, 1)));
        disk.partitions = vec![
            Partition {
                name: "loop0p1".into(),
                path: "/dev/loop0p1".into(),
                dev: "259:1".parse().ok(),
                number: Some(1),
                start_sector: Some(2048),
                size_bytes: None,
                read_only: None,
                holders: vec![],
            },
            Partition {
                name: "loop0p2".into(),
                path: "/dev/loop0p2".into(),
                dev: "259:2".parse().ok(),
                number: Some(2),
                start_sector: Some(4096),
                size_bytes: None,
                read_only: None,
                holders: vec![],
            },
        ];
        let on_disk = loop_on("loop5", 5, &disk);
        let mut on_p2 = loop_over("loop6", 6, "/dev/loop0p2", None);
        on_p2.loop_backing = Some(LoopBacking {
            file: Some(id(0, 77)),
            block: "259:2".parse().ok(),
        });
        let mut devs = vec![disk, on_disk, on_p2];
        assess_all(&mut devs, &[mount("259:1", "/dev/loop0p1", "/boot")], &[]);
        assert_eq!(
            summaries(&devs),
            [
                "loop0p1 mounted at /boot",
                "backed by loop0, loop0p1 mounted at /boot",
                "free"
            ]
        );
        // A loop over the second partition mounted: it and its disk are in use, the first
        // partition is not.
        assess_all(&mut devs, &[mount("7:6", "/dev/loop6", "/mnt/6")], &[]);
        assert_eq!(
            devs[0].usage_summary(),
            "loop0p2 backs loop6, mounted at /mnt/6"
        );
        assert!(devs[0].in_use.iter().all(|u| u.device() != "loop0p1"));
        assert_eq!(
            devs[1].usage_summary(),
            "backed by loop0, loop0p2 backs loop6, mounted at /mnt/6"
        );
    }

    #[test]
    fn two_names_of_the_same_data_are_found() {
        let disk = disk_with_partition();
        let mut sda2 = disk.partitions[0].clone();
        sda2.name = "sda2".into();
        sda2.dev = "8:2".parse().ok();
        let mut disk = disk;
        disk.partitions.push(sda2);
        let img = id(1, 12);
        let over_file = loop_over("loop4", 4, "/tmp/a.img", Some(img));
        let also_over_file = loop_over("loop5", 5, "/tmp/a.img", Some(img));
        let on_sda1 = loop_on("loop6", 6, &disk);
        let mut on_part = on_sda1.clone();
        on_part.name = "loop7".into();
        on_part.dev = Some(DevNum { major: 7, minor: 7 });
        on_part.loop_backing = Some(LoopBacking {
            file: None,
            block: "8:1".parse().ok(),
        });
        let stacked = loop_on("loop8", 8, &over_file);
        let other = loop_over("loop9", 9, "/tmp/b.img", Some(id(1, 13)));
        let devs = vec![
            disk,
            over_file,
            also_over_file,
            on_sda1,
            on_part,
            stacked,
            other,
        ];
        let node = DataRef::Node;
        let file = |id, path| DataRef::File { id, path };
        let same = |a, b| same_data(&devs, a, b);
        assert!(same(node("sda"), node("sda")));
        assert!(same(node("sda"), node("sda1")));
        assert!(same(node("sda1"), node("sda")));
        assert!(!same(node("sda1"), node("sda2")), "siblings share nothing");
        // A loop device and its backing file; two loop devices over one file; a loop
        // stacked on a loop over the file.
        assert!(same(node("loop4"), file(img, "/tmp/a.img")));
        assert!(same(file(img, "/elsewhere/hard-link.img"), node("loop4")));
        assert!(same(node("loop4"), node("loop5")));
        assert!(same(node("loop8"), file(img, "/tmp/a.img")));
        // Hard links: one identity.
        assert!(same(
            file(img, "/tmp/a.img"),
            file(img, "/tmp/hard-link.img")
        ));
        // A loop over the whole disk shows sda1 too; a loop over sda1 is not sda2.
        assert!(same(node("loop6"), node("sda1")));
        assert!(same(node("loop7"), node("sda")));
        assert!(!same(node("loop7"), node("sda2")));
        // Unrelated.
        assert!(!same(node("loop9"), file(img, "/tmp/a.img")));
        assert!(!same(node("loop9"), node("loop4")));
        assert!(!same(
            file(img, "/tmp/a.img"),
            file(id(1, 13), "/tmp/b.img")
        ));
    }

    #[test]
    fn cycles_end() {
        // The kernel refuses loop cycles; a verdict over odd tables still ends.
        let mut a = loop_over("loop1", 1, "/dev/loop2", None);
        let mut b = loop_over("loop2", 2, "/dev/loop1", None);
        a.loop_backing = Some(LoopBacking {
            file: None,
            block: "7:2".parse().ok(),
        });
        b.loop_backing = Some(LoopBacking {
            file: None,
            block: "7:1".parse().ok(),
        });
        let mut devs = vec![a, b];
        assess_all(&mut devs, &[], &[]);
        assert_eq!(summaries(&devs), ["free", "free"]);
        assess_all(&mut devs, &[mount("7:1", "/dev/loop1", "/m")], &[]);
        assert_eq!(
            summaries(&devs),
            ["mounted at /m", "backs loop1, mounted at /m"]
        );
    }

    #[test]
    fn file_targets_backing_a_used_loop_device_or_swapping_are_in_use() {
        let mut devs = vec![
            loop_over("loop4", 4, "/tmp/a.img", Some(id(1, 12))),
            loop_over("loop5", 5, "/tmp/a.img", Some(id(1, 12))),
        ];
        assess_all(&mut devs, &[mount("7:4", "/dev/loop4", "/mnt/x")], &[]);
        let words =
            |v: Vec<InUse>| -> Vec<String> { v.iter().map(|u| u.describe(u.device())).collect() };
        assert_eq!(
            words(file_usage(&devs, &[], "/tmp/a.img", id(1, 12))),
            ["backing file of loop4, mounted at /mnt/x"]
        );
        assert!(file_usage(&devs, &[], "/tmp/b.img", id(1, 13)).is_empty());
        let swaps = [SwapEntry {
            path: "/swapfile".into(),
            kind: SwapKind::File,
            file: Some(id(1, 50)),
        }];
        assert_eq!(
            words(file_usage(&devs, &swaps, "/other/name", id(1, 50))),
            ["active swap file"]
        );
    }

    #[test]
    fn dm_alias_and_holders() {
        let mut d = BlockDevice::unknown("dm-0", "/dev/dm-0".into());
        d.dm_name = Some("vg-root".into());
        assess(&mut d, &[mount("", "/dev/mapper/vg-root", "/")], &[]);
        assert_eq!(d.usage_summary(), "mounted at /");

        let mut p = disk_with_partition();
        p.partitions[0].holders.push(Holder {
            name: "md0".into(),
            kind: HolderKind::Md,
            label: None,
        });
        assess(&mut p, &[], &[]);
        assert_eq!(p.usage_summary(), "sda1 held by md (md0)");
    }
}
