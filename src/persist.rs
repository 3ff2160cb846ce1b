//! Making a scheduler permanent: the udev rule that sets it whenever the disk appears (at boot,
//! on hotplug), written under a system root's `etc/udev/rules.d/`.
//!
//! The rule matches the disk by its stable identity (`ATTRS{wwid}` or `ATTRS{serial}`), never
//! by a kernel name that can change between boots; or, as the seed's rules do, every rotational
//! or non-rotational disk. Writing it changes nothing on the running system. The values quoted
//! in the rule come from the drive, so only harmless characters pass: a quote, backslash,
//! newline or glob (`*?[]|`) could end the match, add a rule or match other disks.
//!
//! The target root is another system's tree (rescue mode): `etc/udev/rules.d` is resolved
//! inside it (`sys::confined::walk_in_root`), so a link means what it means to that system and
//! none leads out; the rule is written through the directory's descriptor, and the path
//! reported is the one really written.
//!
//! `persist_scheduler` is the one entry point for the CLI, the TUI and the sweeps.

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::model::text::neutralize_controls;
use crate::model::{BlockDevice, DiskIdentity};
use crate::sys::SysRoot;
use crate::sys::confined::{self, FileError, RootedError, Walked};
use crate::sys::error::describe_io_brief;

/// Where rules go below a system root.
pub const RULES_DIR: &str = "etc/udev/rules.d";

/// The kernel names a class rule covers (SCSI/SATA/USB, virtio, Xen, NVMe, MMC).
const CLASS_KERNELS: &str = "sd*|vd*|xvd*|nvme*|mmcblk*";

/// Which disks a rule applies to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "match", rename_all = "kebab-case")]
pub enum RuleScope {
    /// One disk, by its WWN or serial.
    Disk { identity: DiskIdentity },
    /// Every rotational (true) or non-rotational disk.
    Class { rotational: bool },
}

/// A rule ready to be written: its file name and its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UdevRule {
    /// The disk it was made for (its kernel name when written).
    pub device: String,
    pub scheduler: String,
    pub scope: RuleScope,
    pub file_name: String,
    pub text: String,
}

/// Why a rule cannot be made or written. The words say what to do.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    #[error(
        "{device} has no stable identity a udev rule can match: sysfs gives it no wwid and no \
         serial number, and a kernel name can change between boots{hint}"
    )]
    NoStableIdentity {
        device: String,
        identity: DiskIdentity,
        /// "; --persist-class sets ... instead", where that would cover it.
        hint: String,
    },
    #[error("{device}: its {identity} holds {why}, which a udev rule cannot match safely{hint}")]
    UnsafeIdentity {
        device: String,
        identity: DiskIdentity,
        why: String,
        hint: String,
    },
    #[error(
        "a rule for every {class} disk covers {CLASS_KERNELS} disks, not {device} (loop, \
         zram, md and dm devices are left alone)"
    )]
    NotInClass { device: String, class: &'static str },
    #[error("{device}: the kernel does not say whether it is rotational, so no class rule applies")]
    UnknownRotational { device: String },
    #[error("{name:?} is not an I/O scheduler name")]
    BadScheduler { name: String },
    #[error("{device} has no I/O scheduler (not a disk that takes one)")]
    NoScheduler { device: String },
    #[error(
        "{device} does not offer the I/O scheduler {name} now (offered: {offered}); load its \
         module first (modprobe {module}) and make it load at boot (/etc/modules-load.d/)"
    )]
    NotOffered {
        device: String,
        name: String,
        offered: String,
        module: String,
    },
    #[error(
        "{} does not look like a system root: {why}. Give the mounted system's root, e.g. \
         --target-root /mnt/sysimage",
        root.display()
    )]
    NotASystemRoot { root: PathBuf, why: String },
    /// The OS's error is in the message: a field, not a source said twice.
    #[error("cannot {op} {}: {}", path.display(), describe_io_brief(error))]
    Io {
        op: &'static str,
        path: PathBuf,
        error: io::Error,
    },
    #[error(
        "{} is a symbolic link to {}, which does not exist inside {} (links are read as the \
         installed system reads them); create it there or remove the link",
        path.display(),
        target.display(),
        root.display()
    )]
    DanglingLink {
        path: PathBuf,
        target: PathBuf,
        root: PathBuf,
    },
    #[error(
        "{} is a symbolic link, and this kernel has no openat2 (Linux 5.6) to follow it \
         inside the target root safely; replace it by the directory it names",
        path.display()
    )]
    LinkUnsupported { path: PathBuf },
    #[error("refusing to replace {}: {why}", path.display())]
    NotAFile { path: PathBuf, why: FileError },
}

/// The first character a rule cannot quote; `None` if all are ASCII alphanumerics, space or
/// `._-:+/=,@`.
pub fn unsafe_char(value: &str) -> Option<String> {
    if value.is_empty() {
        return Some("nothing (it is empty)".into());
    }
    let bad = value
        .chars()
        .find(|&c| !(c.is_ascii_alphanumeric() || " ._-:+/=,@".contains(c)))?;
    Some(match bad {
        '"' => "a double quote".into(),
        '\\' => "a backslash".into(),
        '\n' | '\r' => "a line break".into(),
        '*' | '?' | '[' | ']' | '|' => format!("the pattern character {bad:?}"),
        c if c.is_control() => format!("the control character {:?}", c),
        c if !c.is_ascii() => format!("the non-ASCII character {c:?}"),
        c => format!("the character {c:?}"),
    })
}

/// Is `name` a scheduler name (`mq-deadline`, `bfq`, `none`)?
fn scheduler_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// The module that provides a scheduler not built in.
fn module_of(name: &str) -> String {
    match name {
        "kyber" => "kyber-iosched".into(),
        other => other.into(),
    }
}

/// Does `CLASS_KERNELS` cover this kernel name?
pub fn in_class_kernels(name: &str) -> bool {
    ["sd", "vd", "xvd", "nvme", "mmcblk"]
        .iter()
        .any(|p| name.starts_with(p))
}

fn class_word(rotational: bool) -> &'static str {
    if rotational {
        "rotational"
    } else {
        "non-rotational"
    }
}

/// A file-name piece of an identity: `[A-Za-z0-9.-]` kept, else `_`, at most 48 characters,
/// plus a hash of the whole value when changed, so two disks never share a file.
fn slug(value: &str) -> String {
    let mut s = String::new();
    for c in value.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
            c
        } else {
            '_'
        };
        if !(c == '_' && s.ends_with('_')) {
            s.push(c);
        }
    }
    let s = s.trim_matches('_').to_string();
    let cut: String = s.chars().take(48).collect();
    if cut == value {
        return cut;
    }
    // FNV-1a, 64 bits: stable across builds and versions (std's hasher is not).
    let hash = value.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{cut}-{hash:016x}")
}

/// Plans the rule setting `scheduler` on `device` or its class; no I/O.
pub fn plan_rule(
    device: &BlockDevice,
    identity: &DiskIdentity,
    scheduler: &str,
    class: bool,
) -> Result<UdevRule, PersistError> {
    if !scheduler_name_ok(scheduler) {
        return Err(PersistError::BadScheduler {
            name: neutralize_controls(scheduler),
        });
    }
    let dev = device.name.clone();
    match &device.scheduler {
        Some(set) if set.available.is_empty() => {
            return Err(PersistError::NoScheduler { device: dev });
        }
        Some(set) if !set.offers(scheduler) => {
            return Err(PersistError::NotOffered {
                device: dev,
                name: scheduler.into(),
                offered: set.available.join(" "),
                module: module_of(scheduler),
            });
        }
        Some(_) => {}
        None => return Err(PersistError::NoScheduler { device: dev }),
    }
    let hint = if in_class_kernels(&dev) {
        format!(
            "; --persist-class sets the scheduler of every {} disk instead",
            class_word(device.rotational.unwrap_or(true))
        )
    } else {
        String::new()
    };
    let head = "ACTION==\"add|change\", SUBSYSTEM==\"block\", ENV{DEVTYPE}==\"disk\"";
    let version = env!("CARGO_PKG_VERSION");
    if class {
        let rotational = device
            .rotational
            .ok_or_else(|| PersistError::UnknownRotational {
                device: dev.clone(),
            })?;
        let word = class_word(rotational);
        if !in_class_kernels(&dev) {
            return Err(PersistError::NotInClass {
                device: dev,
                class: word,
            });
        }
        let text = format!(
            "# disktriage {version}: I/O scheduler {scheduler} for every {word} disk \
             ({CLASS_KERNELS}),\n\
             # chosen on {dev}. Replaced by the next `disktriage sched DEV NAME --persist-class`.\n\
             {head}, KERNEL==\"{CLASS_KERNELS}\", ATTR{{queue/rotational}}==\"{}\", \
             ATTR{{queue/scheduler}}=\"{scheduler}\"\n",
            u8::from(rotational)
        );
        return Ok(UdevRule {
            device: dev,
            scheduler: scheduler.into(),
            scope: RuleScope::Class { rotational },
            file_name: format!("60-disktriage-scheduler-{word}.rules"),
            text,
        });
    }
    let Some(attr) = identity.udev_attribute() else {
        return Err(PersistError::NoStableIdentity {
            device: dev,
            identity: identity.clone(),
            hint,
        });
    };
    let value = identity.value();
    if let Some(why) = unsafe_char(value) {
        return Err(PersistError::UnsafeIdentity {
            device: dev,
            identity: identity.clone(),
            why,
            hint,
        });
    }
    let text = format!(
        "# disktriage {version}: I/O scheduler {scheduler} for the disk with {attr} \"{value}\"\n\
         # ({dev} when written). Replaced by the next `disktriage sched {dev} NAME --persist`.\n\
         {head}, ATTRS{{{attr}}}==\"{value}\", ATTR{{queue/scheduler}}=\"{scheduler}\"\n"
    );
    Ok(UdevRule {
        device: dev,
        scheduler: scheduler.into(),
        scope: RuleScope::Disk {
            identity: identity.clone(),
        },
        file_name: format!("60-disktriage-scheduler-{attr}-{}.rules", slug(value)),
        text,
    })
}

/// The rules directory below `target_root`, every link resolved inside the root
/// (`sys::confined::walk_in_root`). The root must have an `etc/`. With `create`, missing
/// directories are made and it is returned opened. The path is the real one (no link left).
fn locate_rules_dir(
    target_root: &Path,
    create: bool,
) -> Result<(PathBuf, Option<OwnedFd>), PersistError> {
    let not_root = |why: String| PersistError::NotASystemRoot {
        root: target_root.to_path_buf(),
        why,
    };
    let root = confined::open_root(target_root).map_err(|e| match e.raw_os_error() {
        Some(libc::ENOTDIR) => not_root("it is not a directory".into()),
        _ => not_root(crate::sys::error::describe_io_brief(&e)),
    })?;
    let rooted = |e: RootedError| match e {
        RootedError::Dangling { at, target } => PersistError::DanglingLink {
            path: target_root.join(at),
            target,
            root: target_root.to_path_buf(),
        },
        RootedError::LinkUnsupported { at } => PersistError::LinkUnsupported {
            path: target_root.join(at),
        },
        RootedError::Io { at, error } => PersistError::Io {
            op: if create { "create" } else { "open" },
            path: target_root.join(at),
            error,
        },
    };
    match confined::walk_in_root(&root, Path::new("etc"), false) {
        Ok(Walked::Open(_)) => {}
        Ok(Walked::Missing { .. }) => return Err(not_root("it has no etc/ directory".into())),
        Err(RootedError::Io { error, .. }) if error.raw_os_error() == Some(libc::ENOTDIR) => {
            return Err(not_root("its etc is not a directory".into()));
        }
        Err(e) => return Err(rooted(e)),
    }
    let real = |fd: &OwnedFd, rest: &Path| {
        confined::fd_path(fd)
            .map(|p| p.join(rest))
            .map_err(|error| PersistError::Io {
                op: "find",
                path: target_root.join(RULES_DIR),
                error,
            })
    };
    match confined::walk_in_root(&root, Path::new(RULES_DIR), create).map_err(rooted)? {
        Walked::Open(fd) => Ok((real(&fd, Path::new(""))?, Some(fd))),
        Walked::Missing { deepest, rest } => Ok((real(&deepest, &rest)?, None)),
    }
}

/// The real path of the rules directory; creates nothing.
pub fn rules_dir(target_root: &Path) -> Result<PathBuf, PersistError> {
    locate_rules_dir(target_root, false).map(|(path, _)| path)
}

/// Writes `rule` atomically into `target_root`'s rules directory (see `locate_rules_dir`): a
/// temporary file udev does not read (not `.rules`), O_EXCL|O_NOFOLLOW, synced, renamed over
/// the rule, so udev never reads half a rule. A non-regular file at the rule's name is
/// refused. Returns the path really written.
pub fn install(rule: &UdevRule, target_root: &Path) -> Result<PathBuf, PersistError> {
    let (dir_path, dir) = locate_rules_dir(target_root, true)?;
    let path = dir_path.join(&rule.file_name);
    let Some(dir) = dir else {
        // `create` opens the directory or fails; this is never reached.
        return Err(PersistError::Io {
            op: "create",
            path: dir_path,
            error: io::Error::from(io::ErrorKind::NotFound),
        });
    };
    confined::replace_file_at(&dir, &rule.file_name, rule.text.as_bytes(), 0o644).map_err(|e| {
        match e.error {
            FileError::Io(error) => PersistError::Io {
                op: e.op,
                path: path.clone(),
                error,
            },
            why => PersistError::NotAFile {
                path: path.clone(),
                why,
            },
        }
    })?;
    Ok(path)
}

/// How to persist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersistOptions {
    /// The installed system's root (`/`, or `/mnt/sysimage` in rescue mode).
    pub target_root: PathBuf,
    /// Every disk of the device's class instead of the device alone.
    pub class: bool,
    /// Only plan: write nothing.
    pub dry_run: bool,
}

/// What `persist_scheduler` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Persisted {
    pub rule: UdevRule,
    /// Where the rule goes (and went, unless a dry run).
    pub path: PathBuf,
    pub written: bool,
    /// The scheduler active now, which the rule does not change.
    pub active_now: Option<String>,
}

/// Makes `scheduler` permanent for the disk `device` of the system read under `root`: reads
/// the disk and its identity, plans the rule and, unless a dry run, writes it; the running
/// scheduler is left as it is.
pub fn persist_scheduler(
    root: &SysRoot,
    device: &str,
    scheduler: &str,
    opts: &PersistOptions,
) -> Result<Persisted, PersistError> {
    let dev = root.read_device(device);
    let identity = root.disk_identity(device);
    let rule = plan_rule(&dev, &identity, scheduler, opts.class)?;
    let (path, written) = if opts.dry_run {
        (rules_dir(&opts.target_root)?.join(&rule.file_name), false)
    } else {
        (install(&rule, &opts.target_root)?, true)
    };
    Ok(Persisted {
        active_now: dev.scheduler.and_then(|s| s.active),
        rule,
        path,
        written,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SchedulerSet;
    use std::fs;

    fn disk(name: &str, rotational: Option<bool>) -> BlockDevice {
        let mut d = BlockDevice::unknown(name, PathBuf::from("/dev").join(name));
        d.rotational = rotational;
        d.scheduler = Some(
            "none [mq-deadline] kyber bfq"
                .parse::<SchedulerSet>()
                .unwrap(),
        );
        d
    }

    /// The rule lines (not comments) of a rule text.
    fn rule_lines(text: &str) -> Vec<&str> {
        text.lines().filter(|l| !l.starts_with('#')).collect()
    }

    #[test]
    fn a_disk_by_its_wwn() {
        let id = DiskIdentity::Wwid("naa.5000c500a1b2c3d4".into());
        let r = plan_rule(&disk("sda", Some(true)), &id, "bfq", false).unwrap();
        assert_eq!(
            r.file_name,
            "60-disktriage-scheduler-wwid-naa.5000c500a1b2c3d4.rules"
        );
        assert_eq!(
            rule_lines(&r.text),
            [
                "ACTION==\"add|change\", SUBSYSTEM==\"block\", ENV{DEVTYPE}==\"disk\", \
                 ATTRS{wwid}==\"naa.5000c500a1b2c3d4\", ATTR{queue/scheduler}=\"bfq\""
            ]
        );
        assert!(
            !r.text.contains("KERNEL"),
            "never the kernel name: {}",
            r.text
        );
        assert!(r.text.ends_with('\n'));
    }

    #[test]
    fn a_disk_by_its_serial_with_spaces() {
        let id = DiskIdentity::Serial("WD-WCC4N 12345".into());
        let r = plan_rule(&disk("nvme0n1", Some(false)), &id, "none", false).unwrap();
        assert_eq!(
            rule_lines(&r.text),
            [
                "ACTION==\"add|change\", SUBSYSTEM==\"block\", ENV{DEVTYPE}==\"disk\", \
                 ATTRS{serial}==\"WD-WCC4N 12345\", ATTR{queue/scheduler}=\"none\""
            ]
        );
        assert!(
            r.file_name
                .starts_with("60-disktriage-scheduler-serial-WD-WCC4N_12345-"),
            "{}",
            r.file_name
        );
        assert!(r.file_name.ends_with(".rules"));
    }

    #[test]
    fn the_lab_sata_disks_t10_id() {
        let id = DiskIdentity::Wwid(
            "t10.ATA     DT SATA DISK                            DT-SATA-0".into(),
        );
        let r = plan_rule(&disk("sda", Some(true)), &id, "mq-deadline", false).unwrap();
        assert!(r.text.contains(
            "ATTRS{wwid}==\"t10.ATA     DT SATA DISK                            DT-SATA-0\""
        ));
        assert!(
            r.file_name
                .starts_with("60-disktriage-scheduler-wwid-t10.ATA_DT_SATA_DISK_DT-SATA-0-")
        );
    }

    #[test]
    fn every_rotational_or_solid_state_disk() {
        let none = DiskIdentity::LoopImage("/a.img".into());
        let r = plan_rule(&disk("sda", Some(true)), &none, "bfq", true).unwrap();
        assert_eq!(r.file_name, "60-disktriage-scheduler-rotational.rules");
        assert_eq!(
            rule_lines(&r.text),
            [
                "ACTION==\"add|change\", SUBSYSTEM==\"block\", ENV{DEVTYPE}==\"disk\", \
                 KERNEL==\"sd*|vd*|xvd*|nvme*|mmcblk*\", ATTR{queue/rotational}==\"1\", \
                 ATTR{queue/scheduler}=\"bfq\""
            ]
        );
        let r = plan_rule(&disk("nvme0n1", Some(false)), &none, "none", true).unwrap();
        assert_eq!(r.file_name, "60-disktriage-scheduler-non-rotational.rules");
        assert!(r.text.contains("ATTR{queue/rotational}==\"0\""));
        let err = plan_rule(&disk("sdx", None), &none, "none", true).unwrap_err();
        assert!(err.to_string().contains("rotational"), "{err}");
    }

    #[test]
    fn no_stable_identity_is_refused_with_the_class_hint() {
        let err = plan_rule(
            &disk("sdb", Some(true)),
            &DiskIdentity::Name("sdb".into()),
            "none",
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("sdb has no stable identity"), "{err}");
        assert!(
            err.contains("--persist-class sets the scheduler of every rotational disk instead"),
            "{err}"
        );
        // A loop device has no identity and no class rule: no hint, class refused.
        let image = DiskIdentity::LoopImage("/tmp/a.img".into());
        let err = plan_rule(&disk("loop0", Some(true)), &image, "none", false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("loop0 has no stable identity"), "{err}");
        assert!(!err.contains("--persist-class"), "{err}");
        let err = plan_rule(&disk("loop0", Some(true)), &image, "none", true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not loop0"), "{err}");
    }

    /// A serial is whatever the firmware says: a quote or newline must not start a second
    /// rule, a glob not widen the match.
    #[test]
    fn hostile_serials_never_make_a_rule() {
        let hostile = [
            "X\", ATTR{queue/scheduler}=\"none\"\nACTION==\"add\", RUN+=\"/bin/sh -c evil\"",
            "A\nB",
            "A\rB",
            "A\\",
            "A\"",
            "*",
            "A?",
            "A|B",
            "[AB]",
            "A$B%C",
            "A{B}",
            "A\u{0}B",
            "é",
            "",
        ];
        for value in hostile {
            for id in [
                DiskIdentity::Serial(value.into()),
                DiskIdentity::Wwid(value.into()),
            ] {
                let err = plan_rule(&disk("sda", Some(true)), &id, "bfq", false)
                    .expect_err(&format!("{value:?} must be refused"));
                let text = err.to_string();
                assert!(text.contains("cannot match safely"), "{text}");
                assert!(
                    !text.contains('\n'),
                    "the message itself is one line: {text:?}"
                );
            }
        }
        // The plain ones pass.
        for value in [
            "S3Z9NB0K123456A",
            "eui.0025385b71b0a0d1",
            "0x1234abcd",
            "a b.c_d-e:f+g/h=i,j@k",
        ] {
            let r = plan_rule(
                &disk("sda", Some(true)),
                &DiskIdentity::Serial(value.into()),
                "bfq",
                false,
            )
            .unwrap();
            assert_eq!(rule_lines(&r.text).len(), 1, "{}", r.text);
            assert_eq!(r.text.lines().count(), 3, "{}", r.text);
        }
    }

    #[test]
    fn the_scheduler_is_checked() {
        let id = DiskIdentity::Wwid("naa.1".into());
        let err = plan_rule(&disk("sda", Some(true)), &id, "bfq\"x", false).unwrap_err();
        assert!(matches!(err, PersistError::BadScheduler { .. }), "{err}");
        let mut d = disk("sda", Some(true));
        d.scheduler = Some("none [mq-deadline]".parse().unwrap());
        let err = plan_rule(&d, &id, "bfq", false).unwrap_err().to_string();
        assert!(
            err.contains("does not offer the I/O scheduler bfq now"),
            "{err}"
        );
        assert!(err.contains("offered: none mq-deadline"), "{err}");
        assert!(err.contains("modprobe bfq"), "{err}");
        let err = plan_rule(&d, &id, "kyber", false).unwrap_err().to_string();
        assert!(err.contains("modprobe kyber-iosched"), "{err}");
        d.scheduler = Some(SchedulerSet::default());
        let err = plan_rule(&d, &id, "none", false).unwrap_err().to_string();
        assert!(err.contains("has no I/O scheduler"), "{err}");
    }

    #[test]
    fn slugs_never_collide_after_replacing_characters() {
        assert_eq!(slug("naa.5000c500a1b2c3d4"), "naa.5000c500a1b2c3d4");
        assert_ne!(slug("a b"), slug("a_b"));
        assert_ne!(slug("a b"), slug("a/b"));
        let long = "x".repeat(100);
        let s = slug(&long);
        assert!(s.len() < 70, "{s}");
        assert_ne!(s, slug(&"x".repeat(99)));
    }

    #[test]
    fn install_replaces_the_rule_of_the_same_disk_atomically() {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir(root.path().join("etc")).unwrap();
        let id = DiskIdentity::Wwid("naa.5000c500a1b2c3d4".into());
        let first = plan_rule(&disk("sda", Some(true)), &id, "bfq", false).unwrap();
        let path = install(&first, root.path()).unwrap();
        assert_eq!(
            path,
            root.path()
                .join("etc/udev/rules.d/60-disktriage-scheduler-wwid-naa.5000c500a1b2c3d4.rules")
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), first.text);
        // The same disk under another name later: one file, the new scheduler.
        let second = plan_rule(&disk("sdc", Some(true)), &id, "mq-deadline", false).unwrap();
        assert_eq!(install(&second, root.path()).unwrap(), path);
        let names: Vec<String> = fs::read_dir(root.path().join(RULES_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names.len(),
            1,
            "no duplicate and no temporary left: {names:?}"
        );
        assert!(
            fs::read_to_string(&path)
                .unwrap()
                .contains("=\"mq-deadline\"")
        );
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o644
        );
    }

    #[test]
    fn a_target_root_without_etc_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let id = DiskIdentity::Wwid("naa.1".into());
        let rule = plan_rule(&disk("sda", Some(true)), &id, "bfq", false).unwrap();
        let err = install(&rule, root.path()).unwrap_err().to_string();
        assert!(err.contains("does not look like a system root"), "{err}");
        assert!(err.contains("no etc/ directory"), "{err}");
        assert!(err.contains("--target-root /mnt/sysimage"), "{err}");
        assert!(!root.path().join("etc").exists(), "nothing created");
        let missing = root.path().join("nope");
        let err = install(&rule, &missing).unwrap_err().to_string();
        assert!(err.contains("does not look like a system root"), "{err}");
    }
}
