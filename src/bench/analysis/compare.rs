//! The run-to-run noise: a figure over repeats (`Stat`: mean and spread) and whether a
//! difference exceeds that spread (`delta`). Results, Compare, setting sweeps and the
//! several-targets verdict all judge differences with it.

use serde::Serialize;

/// A figure over the repeats: mean, and spread = (max - min) / mean when there are two or more.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Stat {
    pub mean: f64,
    pub spread_pct: Option<f64>,
}

impl Stat {
    pub fn of(values: &[f64]) -> Option<Stat> {
        if values.is_empty() {
            return None;
        }
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let spread_pct = (values.len() >= 2 && mean > 0.0).then(|| {
            let max = values.iter().copied().fold(f64::MIN, f64::max);
            let min = values.iter().copied().fold(f64::MAX, f64::min);
            (max - min) / mean * 100.0
        });
        Some(Stat { mean, spread_pct })
    }
}

/// How a difference between two records (or two sets of runs) compares with their noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Significance {
    /// The difference is larger than the spread of either record's repeats.
    Significant,
    WithinNoise,
    /// A record has a single repeat: its noise is not measured.
    NoiseUnknown,
}

/// One metric of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Delta {
    pub a: f64,
    pub b: f64,
    /// (b - a) / a in percent.
    pub pct: f64,
    /// The larger spread of the two, in percent.
    pub noise_pct: Option<f64>,
    pub significance: Significance,
}

/// Compares two figures of the same metric.
pub fn delta(a: Stat, b: Stat) -> Delta {
    let pct = if a.mean.abs() > 0.0 {
        (b.mean - a.mean) / a.mean * 100.0
    } else {
        0.0
    };
    let noise_pct = match (a.spread_pct, b.spread_pct) {
        (Some(x), Some(y)) => Some(x.max(y)),
        _ => None,
    };
    let significance = match noise_pct {
        Some(n) if pct.abs() > n => Significance::Significant,
        Some(_) => Significance::WithinNoise,
        None => Significance::NoiseUnknown,
    };
    Delta {
        a: a.mean,
        b: b.mean,
        pct,
        noise_pct,
        significance,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_and_spread() {
        let s = Stat::of(&[100.0, 110.0, 90.0]).unwrap();
        assert_eq!(s.mean, 100.0);
        assert_eq!(s.spread_pct, Some(20.0));
        assert_eq!(Stat::of(&[5.0]).unwrap().spread_pct, None);
        assert!(Stat::of(&[]).is_none());
    }

    #[test]
    fn deltas_against_noise() {
        let a = Stat {
            mean: 100.0,
            spread_pct: Some(4.0),
        };
        let b = Stat {
            mean: 110.0,
            spread_pct: Some(6.0),
        };
        let d = delta(a, b);
        assert_eq!(d.pct, 10.0);
        assert_eq!(d.noise_pct, Some(6.0));
        assert_eq!(d.significance, Significance::Significant);
        let c = Stat {
            mean: 103.0,
            spread_pct: Some(2.0),
        };
        assert_eq!(delta(a, c).significance, Significance::WithinNoise);
        let single = Stat {
            mean: 150.0,
            spread_pct: None,
        };
        assert_eq!(delta(a, single).significance, Significance::NoiseUnknown);
    }
}
