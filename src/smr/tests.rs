use super::*;

/// One-second intervals at `mbps` each, with the longest wait `worst_ms`.
fn series(rates: &[f64], worst_ms: f64) -> Vec<Sample> {
    rates
        .iter()
        .enumerate()
        .map(|(i, &mbps)| Sample {
            at_s: i as f64 + 1.0,
            seconds: 1.0,
            writes: (mbps * 1e6 / 4096.0) as u64,
            bytes: (mbps * 1e6) as u64,
            mean_ms: 1.0,
            max_ms: worst_ms,
            flush_ms: 5.0,
        })
        .collect()
}

fn repeat(v: f64, n: usize) -> Vec<f64> {
    vec![v; n]
}

#[test]
fn a_steady_series_is_no_cliff_with_its_median() {
    let mut rates = repeat(40.0, 60);
    rates[0] = 5.0; // the warm-up is not judged
    match detect(&series(&rates, 20.0)) {
        Finding::Steady { mbps, worst_s } => {
            assert!((mbps - 40.0).abs() < 0.01, "{mbps}");
            assert!((worst_s - 0.02).abs() < 1e-9);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_cliff_is_found_where_it_begins_with_both_rates() {
    // 30 s at 40 MB/s, then 30 s at 0.5 MB/s with a 3 s stall.
    let mut rates = repeat(40.0, 30);
    rates.extend(repeat(0.5, 30));
    let mut s = series(&rates, 10.0);
    s[40].max_ms = 3000.0;
    match detect(&s) {
        Finding::Cliff {
            onset,
            written_before,
            before_mbps,
            after_mbps,
            worst_s,
        } => {
            assert_eq!(onset, 30);
            assert_eq!(written_before, 30 * 40_000_000);
            assert!((before_mbps - 40.0).abs() < 0.01);
            assert!((after_mbps - 0.5).abs() < 0.01);
            assert!((worst_s - 3.0).abs() < 1e-9);
        }
        other => panic!("{other:?}"),
    }
    let text = sentence(&detect(&s), Medium::Rotating, 5.0);
    assert_eq!(
        text,
        "write cliff after 1144.4 MiB written: 40.00 MB/s to 0.50 MB/s, stalls up to 3.0 s: \
         drive-managed SMR behaviour"
    );
}

#[test]
fn a_cliff_is_proven_only_once_its_window_is_there() {
    // Proven at the CONFIRM_SLOW-th slow interval, not before.
    let mut rates = repeat(40.0, 20);
    rates.extend(repeat(0.5, CONFIRM_SLOW - 1));
    assert!(matches!(
        detect(&series(&rates, 1.0)),
        Finding::Steady { .. }
    ));
    rates.push(0.5);
    assert!(matches!(
        detect(&series(&rates, 1.0)),
        Finding::Cliff { onset: 20, .. }
    ));
}

#[test]
fn noise_spikes_and_short_dips_are_not_a_cliff() {
    // Every fourth second a dip to almost nothing (a busy host, the drive's housekeeping),
    // and bursts far above the rate: never 8 slow seconds in 10.
    let rates: Vec<f64> = (0..120)
        .map(|i| match i % 4 {
            0 => 0.1,
            1 => 200.0,
            _ => 30.0,
        })
        .collect();
    assert!(matches!(
        detect(&series(&rates, 2500.0)),
        Finding::Steady { .. }
    ));
    // Seven slow seconds in a row, then back: still no cliff.
    let mut rates = repeat(40.0, 20);
    rates.extend(repeat(0.5, 7));
    rates.extend(repeat(40.0, 20));
    assert!(matches!(
        detect(&series(&rates, 1.0)),
        Finding::Steady { .. }
    ));
    // Half the rate is a slower stretch, not a cliff.
    let mut rates = repeat(40.0, 20);
    rates.extend(repeat(20.0, 40));
    assert!(matches!(
        detect(&series(&rates, 1.0)),
        Finding::Steady { .. }
    ));
}

#[test]
fn a_cliff_with_a_recovered_second_or_two_is_still_a_cliff() {
    let mut rates = repeat(40.0, 20);
    rates.extend([0.4, 0.3, 35.0, 0.2, 0.2, 0.3, 30.0, 0.2, 0.1, 0.2, 0.3]);
    match detect(&series(&rates, 1.0)) {
        Finding::Cliff { onset, .. } => assert_eq!(onset, 20),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_short_series_is_too_short() {
    let s = series(&repeat(40.0, WARM_UP + BASELINE + CONFIRM - 1), 1.0);
    let f = detect(&s);
    assert_eq!(f, Finding::TooShort { intervals: 15 });
    assert!(sentence(&f, Medium::Unknown, 0.25).starts_with("unknown: 15 s of writes"));
}

#[test]
fn what_a_cliff_means_follows_the_medium() {
    let mut rates = repeat(400.0, 20);
    rates.extend(repeat(50.0, 20));
    let f = detect(&series(&rates, 4.0));
    assert!(sentence(&f, Medium::SolidState, 5.0).ends_with(
        "the longest wait 5 ms: an SSD's fast write cache (SLC) running out, not SMR (it does \
         not rotate)"
    ));
    assert!(sentence(&f, Medium::Unknown, 5.0).contains("cannot be told here"));
    let steady = Finding::Steady {
        mbps: 0.05,
        worst_s: 2.5,
    };
    assert_eq!(
        sentence(&steady, Medium::Rotating, 0.5),
        "no write cliff in 30 s (0.05 MB/s steady), stalls up to 2.5 s (slow \
         throughout: a shingled disk whose cache was already full looks like this)"
    );
}

#[test]
fn the_scratch_range_is_in_the_middle_in_whole_mib() {
    let tib = 1u64 << 40;
    assert_eq!(
        scratch_range(tib, 4096),
        Ok(Scratch {
            offset: tib / 2 - (128 << 20),
            len: 256 << 20
        })
    );
    // 64 MiB: a quarter, 16 MiB, at 24 MiB.
    assert_eq!(
        scratch_range(64 << 20, 4096),
        Ok(Scratch {
            offset: 24 << 20,
            len: 16 << 20
        })
    );
    // An odd size: still whole MiB on a MiB boundary, inside the device.
    let odd = (100 << 20) + 12_345 * 512;
    let s = scratch_range(odd, 512).unwrap();
    assert_eq!(s.offset % (1 << 20), 0);
    assert_eq!(s.len, 26 << 20);
    assert!(s.offset + s.len <= odd);
    assert!(scratch_range(31 << 20, 4096).is_err());
    assert!(scratch_range(0, 4096).is_err());
    assert!(scratch_range(u64::MAX, 4096).is_ok());
    assert!(scratch_range(1 << 30, 3000).is_err());
}

#[test]
fn the_time_asked_reads_in_minutes_or_seconds() {
    assert_eq!(minutes_words(5.0), "5 min");
    assert_eq!(minutes_words(1.5), "1.5 min");
    assert_eq!(minutes_words(0.3), "18 s");
}

#[test]
fn a_write_takes_at_least_4_kib_or_the_physical_block() {
    assert_eq!(write_block(512, 512), 4096);
    assert_eq!(write_block(512, 4096), 4096);
    assert_eq!(write_block(4096, 16384), 16384);
}

#[test]
fn the_random_places_cover_the_range() {
    let mut r = Rng::new(7);
    let mut seen = [false; 64];
    for _ in 0..2000 {
        seen[r.below(64) as usize] = true;
    }
    assert!(seen.iter().all(|&s| s));
    let mut buf = [0u8; 13];
    r.fill(&mut buf);
    assert!(buf.iter().any(|&b| b != 0));
}

#[test]
fn a_cache_that_fills_within_the_baseline_seconds_is_a_cliff_where_it_begins() {
    // The root test's FUSE disk on an idle host: its 64 MiB are full in the 4th second, so
    // the seconds the baseline is taken from hold the cliff itself.
    let mut rates = vec![20.2, 21.6, 18.9, 6.6];
    rates.extend(repeat(0.2, 12));
    match detect(&series(&rates, 20.0)) {
        Finding::Cliff {
            onset,
            before_mbps,
            after_mbps,
            ..
        } => {
            assert_eq!(onset, 4, "the first slow second");
            assert!(before_mbps > 15.0, "{before_mbps}");
            assert!(after_mbps < 0.5, "{after_mbps}");
        }
        other => panic!("{other:?}"),
    }
}
