//! The same test on several targets: each target's figures in one row, the verdict naming the
//! outlier, one `--destroy-data` list confirming every written device, and an md array's
//! members. Pure, so the CLI and the TUI show the same rows and verdict.
//!
//! A target is the outlier when slower than the median of the others by more than the
//! run-to-run noise (`compare::delta`), or, without repeats, a possible outlier when slower by
//! more than `NO_REPEATS_THRESHOLD_PCT`.

use serde::Serialize;

use crate::bench::analysis::compare::{Significance, Stat, delta};
use crate::bench::exec::safety;
use crate::model::{HolderKind, Inventory};

/// How much slower than the others a target must be to be named when the noise is unknown.
pub const NO_REPEATS_THRESHOLD_PCT: f64 = 20.0;

/// What a target is in a run over several targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// One of the targets given.
    Target,
    /// The md array whose members are tested too.
    Array,
    /// A member of that array.
    Member,
}

impl Role {
    pub fn label(self) -> &'static str {
        match self {
            Role::Target => "",
            Role::Array => "array",
            Role::Member => "member",
        }
    }
}

/// How far one target is from the median of the others.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Standing {
    pub name: String,
    pub mbps: f64,
    /// The median MB/s of the other targets in the comparison.
    pub others_median_mbps: f64,
    /// (this - median of the others) / median of the others, in percent: negative is slower.
    pub diff_pct: f64,
    /// How far it may lag before it is named: the run-to-run noise, or 20 % without repeats.
    pub threshold_pct: f64,
    /// The threshold is the measured noise (true) or the fixed one without repeats (false).
    pub threshold_is_noise: bool,
    pub slower: bool,
}

/// The verdict over several targets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeveralVerdict {
    /// Every compared target's standing, in the order given.
    pub standings: Vec<Standing>,
    /// The targets slower than the others beyond the threshold, slowest first.
    pub outliers: Vec<String>,
    /// Why no comparison was made (fewer than two targets with figures).
    pub not_compared: Option<String>,
    /// Named against the fixed line, with no noise figure: one run put one of two equal devices
    /// 38 % behind, so these are possible outliers, to be confirmed by repeats.
    pub tentative: bool,
}

/// The median; of an even count, the lower middle value. With three targets the mean of the
/// other two would let one fast target make a normal one look slow (100 against 100 and 300).
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some(values[(values.len() - 1) / 2])
}

/// Names the outliers among `(name, MB/s over the repeats)`: slower than the others' median by
/// more than the noise, or by `NO_REPEATS_THRESHOLD_PCT` when any has a single repeat.
pub fn outlier_verdict(figures: &[(String, Stat)]) -> SeveralVerdict {
    if figures.len() < 2 {
        return SeveralVerdict {
            standings: Vec::new(),
            outliers: Vec::new(),
            not_compared: Some(format!(
                "a verdict needs two targets with figures, {} had them",
                figures.len()
            )),
            tentative: false,
        };
    }
    let all_repeated = figures.iter().all(|(_, s)| s.spread_pct.is_some());
    let standings: Vec<Standing> = figures
        .iter()
        .enumerate()
        .map(|(i, (name, stat))| {
            let others: Vec<&Stat> = figures
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, (_, s))| s)
                .collect();
            let mut means: Vec<f64> = others.iter().map(|s| s.mean).collect();
            let others_median = median(&mut means).unwrap_or(0.0);
            // The others' noise is their largest spread; `delta` takes the larger of it and this.
            let others_stat = Stat {
                mean: others_median,
                spread_pct: if all_repeated {
                    others.iter().filter_map(|s| s.spread_pct).reduce(f64::max)
                } else {
                    None
                },
            };
            let own = Stat {
                mean: stat.mean,
                spread_pct: if all_repeated { stat.spread_pct } else { None },
            };
            let d = delta(others_stat, own);
            let (threshold_pct, threshold_is_noise, beyond) = match d.significance {
                Significance::NoiseUnknown => (
                    NO_REPEATS_THRESHOLD_PCT,
                    false,
                    d.pct < -NO_REPEATS_THRESHOLD_PCT,
                ),
                Significance::Significant => (d.noise_pct.unwrap_or(0.0), true, true),
                Significance::WithinNoise => (d.noise_pct.unwrap_or(0.0), true, false),
            };
            Standing {
                name: name.clone(),
                mbps: stat.mean,
                others_median_mbps: others_median,
                diff_pct: d.pct,
                threshold_pct,
                threshold_is_noise,
                slower: beyond && d.pct < 0.0 && others_median > 0.0,
            }
        })
        .collect();
    let mut slow: Vec<&Standing> = standings.iter().filter(|s| s.slower).collect();
    slow.sort_by(|a, b| a.diff_pct.total_cmp(&b.diff_pct));
    SeveralVerdict {
        outliers: slow.iter().map(|s| s.name.clone()).collect(),
        tentative: slow.iter().any(|s| !s.threshold_is_noise),
        standings,
        not_compared: None,
    }
}

impl SeveralVerdict {
    /// One sentence: the outlier(s) with how much slower they are, or "no outlier".
    pub fn sentence(&self) -> String {
        if let Some(why) = &self.not_compared {
            return format!("no verdict: {why}");
        }
        if self.outliers.is_empty() {
            let threshold = self
                .standings
                .iter()
                .map(|s| s.threshold_pct)
                .reduce(f64::max)
                .unwrap_or(NO_REPEATS_THRESHOLD_PCT);
            let basis = if self.standings.iter().all(|s| s.threshold_is_noise) {
                format!("the run-to-run noise ({threshold:.1} %)")
            } else {
                format!("{NO_REPEATS_THRESHOLD_PCT:.0} % (no repeats to measure the noise)")
            };
            return format!(
                "no outlier: no target is slower than the median of the others by more than \
                 {basis}"
            );
        }
        let parts: Vec<String> = self
            .outliers
            .iter()
            .filter_map(|n| self.standings.iter().find(|s| &s.name == n))
            .map(|s| {
                let basis = if s.threshold_is_noise {
                    format!("noise {:.1} %", s.threshold_pct)
                } else {
                    format!(
                        "threshold {NO_REPEATS_THRESHOLD_PCT:.0} %, no repeats to measure the \
                         noise"
                    )
                };
                format!(
                    "{} is {:.1} % slower than the median of the others ({:.1} against {:.1} \
                     MB/s; {basis})",
                    s.name, -s.diff_pct, s.mbps, s.others_median_mbps
                )
            })
            .collect();
        let word = if self.outliers.len() == 1 {
            "outlier"
        } else {
            "outliers"
        };
        if self.tentative {
            format!(
                "possible {word}: {}: repeat to confirm (2 or more repeats)",
                parts.join("; ")
            )
        } else {
            format!("{word}: {}", parts.join("; "))
        }
    }
}

/// Why a `--destroy-data` list does not confirm a run over several targets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListRefusal {
    #[error(
        "this test writes to {names} and destroys the data on them: pass --destroy-data {list} \
         (every written device, separated by commas) to confirm"
    )]
    NotConfirmed { names: String, list: String },
    #[error(
        "--destroy-data {given} does not name {missing}: it must name every written device \
         exactly, separated by commas (--destroy-data {list})"
    )]
    Missing {
        given: String,
        missing: String,
        list: String,
    },
    #[error(
        "--destroy-data names {extra}, which is not one of the targets written: it must name \
         every written device exactly, separated by commas (--destroy-data {list})"
    )]
    Extra { extra: String, list: String },
}

/// Splits one `--destroy-data a,b,c` into each target's confirmation. `names[i]` is the name
/// target i must be confirmed with, or None when it needs none (a test file this run creates).
/// The list must name every such target once and nothing else; `/dev/sdb` stands for `sdb`.
pub fn split_confirmation(
    names: &[Option<String>],
    given: Option<&str>,
) -> Result<Vec<Option<String>>, ListRefusal> {
    let needed: Vec<&str> = names.iter().flatten().map(String::as_str).collect();
    let list = needed.join(",");
    let Some(given) = given else {
        if needed.is_empty() {
            return Ok(vec![None; names.len()]);
        }
        return Err(ListRefusal::NotConfirmed {
            names: needed.join(", "),
            list,
        });
    };
    let mut entries: Vec<Option<&str>> = given
        .split(',')
        .filter(|e| !e.is_empty())
        .map(Some)
        .collect();
    let mut out = Vec::with_capacity(names.len());
    let mut missing = Vec::new();
    for name in names {
        let Some(name) = name else {
            out.push(None);
            continue;
        };
        let found = entries
            .iter_mut()
            .find(|e| e.is_some_and(|g| safety::confirms(g, name)));
        match found {
            Some(slot) => out.push(slot.take().map(str::to_string)),
            None => {
                missing.push(name.as_str());
                out.push(None);
            }
        }
    }
    if !missing.is_empty() {
        return Err(ListRefusal::Missing {
            given: given.to_string(),
            missing: missing.join(", "),
            list,
        });
    }
    let extra: Vec<&str> = entries.into_iter().flatten().collect();
    if !extra.is_empty() {
        return Err(ListRefusal::Extra {
            extra: extra.join(", "),
            list,
        });
    }
    Ok(out)
}

/// The members of md array `md` as the inventory shows them, in its order. Empty when `md`
/// holds nothing (not an md array, or not assembled).
pub fn md_members(inv: &Inventory, md: &str) -> Vec<String> {
    let held = |holders: &[crate::model::Holder]| {
        holders
            .iter()
            .any(|h| h.name == md && h.kind == HolderKind::Md)
    };
    let mut out = Vec::new();
    for d in &inv.devices {
        if held(&d.holders) {
            out.push(d.name.clone());
        }
        out.extend(
            d.partitions
                .iter()
                .filter(|p| held(&p.holders))
                .map(|p| p.name.clone()),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BlockDevice, Holder, Partition};

    fn single(name: &str, mbps: f64) -> (String, Stat) {
        (
            name.into(),
            Stat {
                mean: mbps,
                spread_pct: None,
            },
        )
    }

    fn repeated(name: &str, mbps: f64, spread: f64) -> (String, Stat) {
        (
            name.into(),
            Stat {
                mean: mbps,
                spread_pct: Some(spread),
            },
        )
    }

    #[test]
    fn a_third_of_the_speed_is_the_outlier_without_repeats() {
        let v = outlier_verdict(&[
            single("vdb", 150.0),
            single("vdc", 148.0),
            single("vdd", 50.0),
        ]);
        assert_eq!(v.outliers, ["vdd"]);
        let vdd = &v.standings[2];
        assert_eq!(vdd.others_median_mbps, 148.0);
        assert!((vdd.diff_pct - (50.0 - 148.0) / 148.0 * 100.0).abs() < 1e-9);
        assert!(!vdd.threshold_is_noise);
        assert!(
            v.sentence()
                .starts_with("possible outlier: vdd is 66.2 % slower"),
            "{}",
            v.sentence()
        );
        assert!(v.sentence().contains("threshold 20 %"), "{}", v.sentence());
    }

    #[test]
    fn without_a_noise_figure_an_outlier_is_only_possible() {
        // Two equal loop devices, one repeat: one read 38.4 % slower (with three repeats
        // the same pair was 6.7 % apart, within the noise). No firm verdict from one run.
        let v = outlier_verdict(&[single("loop0", 100.0), single("loop1", 61.6)]);
        assert_eq!(v.outliers, ["loop1"]);
        assert!(v.tentative);
        let s = v.sentence();
        assert!(
            s.starts_with("possible outlier: loop1 is 38.4 % slower"),
            "{s}"
        );
        assert!(s.ends_with("repeat to confirm (2 or more repeats)"), "{s}");
        // With the noise measured the verdict is firm.
        let v = outlier_verdict(&[repeated("a", 100.0, 2.0), repeated("b", 60.0, 3.0)]);
        assert!(!v.tentative);
        assert!(
            v.sentence().starts_with("outlier: b is"),
            "{}",
            v.sentence()
        );
    }

    #[test]
    fn twenty_percent_is_the_line_without_repeats() {
        // 19 % slower: not named; 21 % slower: named.
        let v = outlier_verdict(&[single("a", 100.0), single("b", 81.0)]);
        assert!(v.outliers.is_empty(), "{v:?}");
        assert!(v.sentence().starts_with("no outlier"), "{}", v.sentence());
        assert!(v.sentence().contains("20 %"));
        let v = outlier_verdict(&[single("a", 100.0), single("b", 79.0)]);
        assert_eq!(v.outliers, ["b"]);
        // The faster one is never the outlier, however far ahead.
        let v = outlier_verdict(&[single("a", 300.0), single("b", 100.0), single("c", 100.0)]);
        assert!(v.outliers.is_empty(), "{v:?}");
    }

    #[test]
    fn with_repeats_the_noise_is_the_line() {
        // 10 % slower, noise 4 %: named, though under 20 %.
        let v = outlier_verdict(&[
            repeated("a", 100.0, 2.0),
            repeated("b", 100.0, 4.0),
            repeated("c", 90.0, 3.0),
        ]);
        assert_eq!(v.outliers, ["c"]);
        let c = &v.standings[2];
        assert!(c.threshold_is_noise);
        assert_eq!(c.threshold_pct, 4.0);
        assert!(v.sentence().contains("noise 4.0 %"), "{}", v.sentence());
        // 25 % slower but the runs scatter by 30 %: within the noise.
        let v = outlier_verdict(&[
            repeated("a", 100.0, 30.0),
            repeated("b", 100.0, 2.0),
            repeated("c", 75.0, 5.0),
        ]);
        assert!(v.outliers.is_empty(), "{v:?}");
        assert!(
            v.sentence().contains("run-to-run noise (30.0 %)"),
            "{}",
            v.sentence()
        );
        // One target with a single repeat: the noise is unknown for all, 20 % applies.
        let v = outlier_verdict(&[
            repeated("a", 100.0, 1.0),
            single("b", 100.0),
            repeated("c", 90.0, 1.0),
        ]);
        assert!(v.outliers.is_empty(), "{v:?}");
    }

    #[test]
    fn several_outliers_slowest_first_and_too_few_targets() {
        let v = outlier_verdict(&[
            single("a", 100.0),
            single("b", 100.0),
            single("c", 100.0),
            single("d", 60.0),
            single("e", 30.0),
        ]);
        assert_eq!(v.outliers, ["e", "d"]);
        assert!(
            v.sentence().starts_with("possible outliers: e is"),
            "{}",
            v.sentence()
        );
        let v = outlier_verdict(&[single("a", 100.0)]);
        assert!(v.outliers.is_empty());
        assert_eq!(
            v.sentence(),
            "no verdict: a verdict needs two targets with figures, 1 had them"
        );
        // Even count of others: the lower middle value.
        let v = outlier_verdict(&[single("a", 100.0), single("b", 200.0), single("c", 10.0)]);
        assert_eq!(v.standings[2].others_median_mbps, 100.0);
        assert_eq!(v.standings[0].others_median_mbps, 10.0);
        assert_eq!(v.outliers, ["c"]);
    }

    fn names(list: &[&str]) -> Vec<Option<String>> {
        list.iter()
            .map(|n| (!n.is_empty()).then(|| n.to_string()))
            .collect()
    }

    #[test]
    fn one_list_confirms_every_written_device() {
        let targets = names(&["loop0", "loop1"]);
        assert_eq!(
            split_confirmation(&targets, Some("loop1,/dev/loop0")),
            Ok(vec![Some("/dev/loop0".into()), Some("loop1".into())])
        );
        // Each name exactly, as for one target: a name with a space around it names no device.
        for spaced in [" loop0 , loop1 ", "loop0, loop1", "loop0 ,loop1"] {
            assert!(
                matches!(
                    split_confirmation(&targets, Some(spaced)),
                    Err(ListRefusal::Missing { .. })
                ),
                "{spaced:?}"
            );
        }
        // A created file needs no name.
        assert_eq!(
            split_confirmation(&names(&["loop0", ""]), Some("loop0")),
            Ok(vec![Some("loop0".into()), None])
        );
        assert_eq!(
            split_confirmation(&names(&["", ""]), None),
            Ok(vec![None, None])
        );
    }

    #[test]
    fn a_list_that_misses_or_adds_a_device_is_refused() {
        let targets = names(&["loop0", "loop1"]);
        let e = split_confirmation(&targets, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "this test writes to loop0, loop1 and destroys the data on them: pass \
             --destroy-data loop0,loop1 (every written device, separated by commas) to confirm"
        );
        let e = split_confirmation(&targets, Some("loop0")).unwrap_err();
        assert!(
            matches!(&e, ListRefusal::Missing { missing, .. } if missing == "loop1"),
            "{e:?}"
        );
        let e = split_confirmation(&targets, Some("loop0,loop1,sda")).unwrap_err();
        assert!(
            matches!(&e, ListRefusal::Extra { extra, .. } if extra == "sda"),
            "{e:?}"
        );
        // A name twice does not stand for two devices.
        let e = split_confirmation(&targets, Some("loop0,loop0")).unwrap_err();
        assert!(matches!(&e, ListRefusal::Missing { .. }), "{e:?}");
        // A prefix is not the name.
        let e = split_confirmation(&names(&["loop1"]), Some("loop")).unwrap_err();
        assert!(matches!(&e, ListRefusal::Missing { .. }), "{e:?}");
    }

    #[test]
    fn md_members_are_what_the_array_holds() {
        let md_holder = |name: &str| Holder {
            name: name.into(),
            kind: HolderKind::Md,
            label: None,
        };
        let mut a = BlockDevice::unknown("sda", "/dev/sda".into());
        a.holders = vec![md_holder("md0")];
        let mut b = BlockDevice::unknown("sdb", "/dev/sdb".into());
        b.partitions = vec![Partition {
            name: "sdb1".into(),
            path: "/dev/sdb1".into(),
            dev: None,
            number: Some(1),
            start_sector: None,
            size_bytes: None,
            read_only: None,
            holders: vec![md_holder("md0")],
        }];
        let mut c = BlockDevice::unknown("sdc", "/dev/sdc".into());
        c.holders = vec![md_holder("md1")];
        let inv = Inventory {
            devices: vec![a, b, c, BlockDevice::unknown("md0", "/dev/md0".into())],
            usage_complete: true,
            notes: vec![],
            swaps: vec![],
        };
        assert_eq!(md_members(&inv, "md0"), ["sda", "sdb1"]);
        assert_eq!(md_members(&inv, "md1"), ["sdc"]);
        assert!(md_members(&inv, "sda").is_empty());
    }
}
