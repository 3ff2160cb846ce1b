//! Properties of the binary drive-page decoders in `smart::{ata, sense, scsi, nvme}`, fed
//! with mutations of the pages captured from the QEMU lab's drives, structured pages with
//! lying length fields, and random bytes.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::TestCaseResult;

use disktriage::model::{AtaSmart, AttributeState, SmartHealth, SmartReading, Transport, Verdict};
use disktriage::model::{DriveLogs, LogRead, SelfTestOutcome};
use disktriage::smart;
use disktriage::smart::{
    AtaOutcome, AtaRegisters, ScsiOutcome, ata_outcome, parse_sense, scsi_outcome,
};

use super::strategies::{fix_checksum, interesting_byte, mutated_any, page};
use super::{Outcome, accepted, display_safe, expect_accepted, plausible_celsius, run};

/// Pages of about `len` bytes: mutated captures (most), random pages of the right size, and
/// random short or long ones. With `checksum`, half of them get a correct checksum over the
/// first `checksum` bytes so that the decoder behind the checksum test is reached.
fn pages_like(bases: Vec<Vec<u8>>, len: usize, checksum: Option<usize>) -> BoxedStrategy<Vec<u8>> {
    let raw = prop_oneof![
        6 => mutated_any(bases, 8),
        1 => vec(interesting_byte(), len..=len),
        1 => vec(any::<u8>(), 0..len + 64),
    ];
    (raw, any::<bool>())
        .prop_map(move |(mut p, fix)| {
            if let (Some(n), true) = (checksum, fix) {
                fix_checksum(&mut p, n);
            }
            p
        })
        .boxed()
}

/// What every health report must look like, whatever the drive sent.
pub fn check_health(h: &SmartHealth) -> TestCaseResult {
    prop_assert!(
        plausible_celsius(h.temperature_c),
        "temperature {:?} C",
        h.temperature_c
    );
    for f in &h.findings {
        prop_assert!(display_safe(&f.text), "finding {:?}", f.text);
    }
    for n in &h.notes {
        prop_assert!(display_safe(n), "note {n:?}");
    }
    if let Some(r) = &h.unavailable_reason {
        prop_assert!(display_safe(r), "reason {r:?}");
    }
    Ok(())
}

pub fn ata_identify(cases: u32) -> Result<Outcome, String> {
    let bases = vec![page("qemu-sata-0-ata-identify.hex")];
    let outcome = run(cases, pages_like(bases, 512, Some(512)), |p| {
        match smart::parse_identify(&p) {
            Ok(id) => {
                accepted();
                prop_assert!(p.len() >= 512);
                prop_assert_eq!(p[1] & 0x80, 0, "ATAPI signature accepted");
                for (text, max) in [(&id.model, 40), (&id.serial, 20), (&id.firmware, 8)] {
                    prop_assert!(display_safe(text), "{text:?}");
                    prop_assert!(
                        text.chars().count() <= max,
                        "{text:?} longer than its field"
                    );
                    prop_assert_eq!(text.trim(), text.as_str());
                }
            }
            Err(e) => {
                prop_assert!(!e.to_string().is_empty());
            }
        }
        if p.len() < 512 {
            prop_assert!(smart::parse_identify(&p).is_err());
        }
        Ok(())
    });
    expect_accepted(outcome, "IDENTIFY pages")
}

pub fn ata_smart(cases: u32) -> Result<Outcome, String> {
    let data = pages_like(vec![page("qemu-sata-0-ata-smart-data.hex")], 512, Some(512));
    let thresholds = pages_like(
        vec![page("qemu-sata-0-ata-smart-thresholds.hex")],
        512,
        Some(512),
    );
    let registers = (interesting_byte(), interesting_byte());
    let raw = (any::<u8>(), any::<[u8; 6]>());
    let outcome = run(
        cases,
        (data, thresholds, registers, raw),
        |(data, thresholds, (mid, high), (id, raw))| {
            // Any raw value of any attribute decodes or is left undecoded.
            if let Some(text) = smart::decode_raw(id, &raw) {
                prop_assert!(display_safe(&text));
            }
            let data = smart::parse_smart_data(&data);
            let thresholds = smart::parse_smart_thresholds(&thresholds);
            if let Ok(t) = &thresholds {
                prop_assert!(t.len() <= 30, "{} thresholds", t.len());
                prop_assert!(t.iter().all(|(id, _)| *id != 0));
            }
            let Ok(data) = data else { return Ok(()) };
            accepted();
            prop_assert!(data.attributes.len() <= 30);
            prop_assert!(data.attributes.iter().all(|a| a.id != 0));
            let table = smart::attribute_table(&data, thresholds.as_deref().ok());
            prop_assert_eq!(table.len(), data.attributes.len());
            for a in &table {
                prop_assert!(a.raw < 1 << 48);
                match (a.state, a.threshold) {
                    (AttributeState::NoThreshold, t) => prop_assert!(matches!(t, None | Some(0))),
                    (AttributeState::FailingNow, Some(t)) => prop_assert!(a.value <= t),
                    (AttributeState::FailedInPast, Some(t)) => {
                        prop_assert!(a.value > t && a.worst <= t)
                    }
                    (AttributeState::Ok, Some(t)) => prop_assert!(a.value > t && a.worst > t),
                    (state, t) => prop_assert!(false, "state {state:?} with threshold {t:?}"),
                }
                if let (190 | 194, Some(text)) = (a.id, &a.decoded) {
                    let celsius: i64 = text.split(' ').next().unwrap().parse().unwrap();
                    prop_assert!((1..=125).contains(&celsius), "{text}");
                }
            }
            let (status, status_note) = smart::smart_status(mid, high);
            let reading = AtaSmart {
                smart_supported: true,
                smart_enabled: true,
                status,
                status_note,
                attributes: table,
                drive: Default::default(),
                attribute_problem: thresholds.err().map(|e| e.to_string()),
            };
            let health = smart::assess("sda", Transport::Sata, SmartReading::Ata(reading));
            check_health(&health)?;
            prop_assert!(health.verdict != Verdict::Unavailable);
            Ok(())
        },
    );
    expect_accepted(outcome, "SMART data pages")
}

/// Descriptor-format sense with an ATA Status Return descriptor for `r` (SAT-3 12.2.2.7),
/// possibly after other descriptors.
fn descriptor_sense(key: u8, r: &AtaRegisters, before: &[(u8, Vec<u8>)]) -> Vec<u8> {
    let mut descriptors = Vec::new();
    for (kind, body) in before {
        // Another descriptor type, so the walk must skip it by its length.
        descriptors.push(if *kind == 0x09 { 0x0a } else { *kind });
        descriptors.push(body.len() as u8);
        descriptors.extend_from_slice(body);
    }
    descriptors.extend_from_slice(&[
        0x09,
        0x0c,
        u8::from(r.extend),
        r.error,
        0,
        r.count,
        0,
        r.lba_low,
        0,
        r.lba_mid,
        0,
        r.lba_high,
        r.device,
        r.status,
    ]);
    let mut sb = vec![0x72, key, 0x00, 0x1d, 0, 0, 0, descriptors.len() as u8];
    sb.extend_from_slice(&descriptors);
    sb
}

fn registers() -> impl Strategy<Value = AtaRegisters> {
    (any::<[u8; 7]>(), any::<bool>()).prop_map(|(b, extend)| AtaRegisters {
        error: b[0],
        count: b[1],
        lba_low: b[2],
        lba_mid: b[3],
        lba_high: b[4],
        device: b[5],
        status: b[6],
        extend,
    })
}

pub fn sense(cases: u32) -> Result<Outcome, String> {
    let captured: Vec<Vec<u8>> = [
        "qemu-sata-0-ata-smart-status-sense.hex",
        "qemu-scsi-0-ata-identify-sense.hex",
        "qemu-scsi-0-ata-smart-data-sense.hex",
        "qemu-sata-0-ata-identify-sense.hex",
    ]
    .iter()
    .map(|n| page(n)[1..].to_vec())
    .collect();
    let descriptor = (
        prop_oneof![Just(0x72u8), Just(0x73), Just(0xf2), any::<u8>()],
        any::<[u8; 3]>(),
        prop::option::of(any::<u8>()),
        vec(
            (
                prop_oneof![Just(0x09u8), any::<u8>()],
                prop_oneof![Just(0x0cu8), 0u8..20, any::<u8>()],
                vec(any::<u8>(), 0..20),
            ),
            0..5,
        ),
    )
        .prop_map(|(code, [key, asc, ascq], add_len, descriptors)| {
            let mut body = Vec::new();
            for (kind, len, bytes) in descriptors {
                body.push(kind);
                body.push(len);
                body.extend_from_slice(&bytes);
            }
            let add_len = add_len.unwrap_or(body.len() as u8);
            let mut sb = vec![code, key, asc, ascq, 0, 0, 0, add_len];
            sb.extend_from_slice(&body);
            sb
        });
    let fixed = (
        prop_oneof![Just(0x70u8), Just(0x71), Just(0xf0)],
        vec(any::<u8>(), 0..30),
        prop_oneof![Just(0x0bu8), any::<u8>()],
    )
        .prop_map(|(code, mut rest, key)| {
            rest.insert(0, code);
            if rest.len() > 2 {
                rest[2] = key;
            }
            rest
        });
    let raw = prop_oneof![
        3 => mutated_any(captured, 6),
        3 => descriptor,
        2 => fixed,
        1 => vec(any::<u8>(), 0..64),
    ];
    let status = prop_oneof![Just(0x00u8), Just(0x02), any::<u8>()];
    let good = (
        registers(),
        prop_oneof![Just(0u8), Just(1), any::<u8>()],
        vec((any::<u8>(), vec(any::<u8>(), 0..12)), 0..3),
    );
    let outcome = run(
        cases,
        (raw, status, good),
        |(sb, status, (regs, key, before))| {
            let parsed = parse_sense(&sb);
            match &parsed {
                Ok(s) => {
                    accepted();
                    prop_assert!((0x70..=0x73).contains(&s.response_code));
                    prop_assert!(s.key <= 0x0f);
                    prop_assert!(display_safe(&s.to_string()));
                }
                Err(e) => prop_assert!(display_safe(&e.to_string())),
            }
            if sb.is_empty() {
                prop_assert!(parsed.is_err());
            }
            match ata_outcome(status, &sb) {
                AtaOutcome::Done(regs) => {
                    prop_assert!(status == 0 || status == 2);
                    prop_assert!(regs.is_none_or(|r| !r.failed()));
                }
                AtaOutcome::DriveError(r) => prop_assert!(status == 2 && r.failed()),
                AtaOutcome::Refused(s) => prop_assert!(status == 2 && s.key == 0x5),
                AtaOutcome::Failed(why) => {
                    prop_assert!(status != 0);
                    prop_assert!(display_safe(&why));
                }
            }
            if status == 0x02 && parsed.is_err() {
                prop_assert!(matches!(ata_outcome(status, &sb), AtaOutcome::Failed(_)));
            }
            match scsi_outcome(status, &sb) {
                ScsiOutcome::Done => prop_assert!(status == 0 || parsed.is_ok()),
                ScsiOutcome::Refused(s) => prop_assert_eq!(s.key, 0x5),
                ScsiOutcome::Failed(why) => prop_assert!(display_safe(&why)),
            }
            // Registers in a well-formed descriptor come back as sent, whatever precedes them.
            let before: Vec<(u8, Vec<u8>)> = before;
            let sb = descriptor_sense(key, &regs, &before);
            let s = parse_sense(&sb).unwrap();
            prop_assert_eq!(s.ata, Some(regs));
            // Every prefix parses or is refused.
            for n in 0..sb.len() {
                let _ = parse_sense(&sb[..n]);
            }
            let _ = smart::smart_status(regs.lba_mid, regs.lba_high);
            Ok(())
        },
    );
    expect_accepted(outcome, "sense buffers")
}

pub fn caching_page(cases: u32) -> Result<Outcome, String> {
    let captured: Vec<Vec<u8>> = [
        "qemu-sata-0-scsi-caching-current.hex",
        "qemu-sata-0-scsi-caching-changeable.hex",
        "qemu-scsi-0-scsi-caching-current.hex",
        "qemu-scsi-0-scsi-caching-changeable.hex",
    ]
    .iter()
    .map(|n| page(n))
    .collect();
    let structured = (
        prop::option::of(any::<u16>()),
        any::<[u8; 2]>(),
        (prop::option::of(any::<u16>()), vec(any::<u8>(), 0..16)),
        prop_oneof![Just(0x08u8), Just(0x88), Just(0x48), any::<u8>()],
        prop::option::of(any::<u8>()),
        vec(any::<u8>(), 0..40),
        prop::option::of(any::<usize>()),
    )
        .prop_map(
            |(mdl, [medium, dsp], (bd_len, bd), code, page_len, body, cut)| {
                let bd_len = bd_len.unwrap_or(bd.len() as u16);
                let page_len = page_len.unwrap_or(body.len() as u8);
                let mut r = vec![0, 0, medium, dsp, 0, 0];
                r.extend_from_slice(&bd_len.to_be_bytes());
                r.extend_from_slice(&bd);
                r.push(code);
                r.push(page_len);
                r.extend_from_slice(&body);
                let mdl = mdl.unwrap_or((r.len() - 2) as u16);
                r[..2].copy_from_slice(&mdl.to_be_bytes());
                if let Some(cut) = cut {
                    r.truncate(cut % (r.len() + 1));
                }
                r
            },
        );
    let resp = prop_oneof![
        3 => mutated_any(captured, 6),
        3 => structured,
        1 => vec(any::<u8>(), 0..64),
    ];
    let outcome = run(cases, resp, |resp| {
        let Ok(p) = smart::parse_caching_page(&resp) else {
            return Ok(());
        };
        accepted();
        prop_assert!(p.bytes.len() >= 3, "no flags byte: {:?}", p.bytes);
        prop_assert_eq!(p.bytes.len(), 2 + usize::from(p.bytes[1]));
        prop_assert!(p.bytes.len() + 8 <= resp.len());
        prop_assert_eq!(p.bytes[0] & 0x7f, 0x08);
        prop_assert_eq!(p.wce, p.bytes[2] & 0x04 != 0);
        // What we would select reads back as what we asked for.
        for wce in [true, false] {
            let mut sel = smart::build_caching_select(&p, wce);
            prop_assert_eq!(sel.len(), 8 + p.bytes.len());
            let mdl = (sel.len() - 2) as u16;
            sel[..2].copy_from_slice(&mdl.to_be_bytes());
            let again = smart::parse_caching_page(&sel).unwrap();
            prop_assert_eq!(again.wce, wce);
            prop_assert_eq!(again.rcd, p.rcd);
            prop_assert!(!again.saveable, "PS not masked");
            prop_assert_eq!(again.medium_type, p.medium_type);
        }
        Ok(())
    });
    expect_accepted(outcome, "MODE SENSE answers")
}

pub fn nvme_identify(cases: u32) -> Result<Outcome, String> {
    let bases = vec![
        page("qemu-nvme-0-nvme-identify-controller.hex"),
        page("qemu-nvme-warn-nvme-identify-controller.hex"),
    ];
    let outcome = run(cases, pages_like(bases, 4096, None), |p| {
        match smart::parse_identify_controller(&p) {
            Ok(c) => {
                accepted();
                prop_assert!(p.len() >= 4096);
                for (text, max) in [(&c.serial, 20), (&c.model, 40), (&c.firmware, 8)] {
                    prop_assert!(display_safe(text), "{text:?}");
                    prop_assert!(text.chars().count() <= max);
                }
                prop_assert_eq!(c.vwc_present, p[525] & 1 != 0);
            }
            Err(_) => prop_assert!(p.len() < 4096 || p[..4096].iter().all(|&b| b == 0)),
        }
        Ok(())
    });
    expect_accepted(outcome, "Identify Controller pages")
}

pub fn nvme_health(cases: u32) -> Result<Outcome, String> {
    let bases = vec![
        page("qemu-nvme-0-nvme-smart-log.hex"),
        page("qemu-nvme-warn-nvme-smart-log.hex"),
    ];
    let outcome = run(
        cases,
        (pages_like(bases, 512, None), any::<u32>()),
        |(p, status)| {
            prop_assert!(display_safe(&smart::describe_status(status)));
            let h = match smart::parse_health_log(&p) {
                Ok(h) => h,
                Err(_) => {
                    prop_assert!(p.len() < 512 || p[0] & 0xc0 != 0);
                    return Ok(());
                }
            };
            accepted();
            prop_assert_eq!(h.critical_warning & 0xc0, 0);
            prop_assert_eq!(
                h.critical_warnings.len() as u32,
                h.critical_warning.count_ones()
            );
            prop_assert!(h.temperature_sensors_kelvin.len() <= 8);
            prop_assert!(
                h.temperature_sensors_kelvin
                    .windows(2)
                    .all(|w| w[0].0 < w[1].0)
            );
            prop_assert!(
                h.temperature_sensors_kelvin
                    .iter()
                    .all(|(i, k)| (1..=8).contains(i) && *k != 0)
            );
            prop_assert!(
                plausible_celsius(h.temperature_c()),
                "{} K read as {:?} C",
                h.temperature_kelvin,
                h.temperature_c()
            );
            let failed = h.critical_warning != 0;
            let health = smart::assess("nvme0n1", Transport::Nvme, SmartReading::Nvme(h));
            check_health(&health)?;
            prop_assert_eq!(health.verdict == Verdict::Failed, failed);
            Ok(())
        },
    );
    expect_accepted(outcome, "health logs")
}

/// What every drive-log reading must look like, whatever the drive sent: display-safe text,
/// progress within 0..=100 %, a judged health that stays well-formed.
pub fn check_logs(logs: &DriveLogs) -> TestCaseResult {
    if let LogRead::Read(l) = &logs.error_log {
        prop_assert!(display_safe(&l.source));
        for e in &l.entries {
            prop_assert!(display_safe(&e.error), "{:?}", e.error);
            for t in [&e.command, &e.state].into_iter().flatten() {
                prop_assert!(display_safe(t), "{t:?}");
            }
        }
    }
    if let LogRead::Read(l) = &logs.self_test_log {
        for e in &l.entries {
            prop_assert!(display_safe(&e.kind) && display_safe(&e.result), "{e:?}");
            prop_assert!(e.remaining_pct.is_none_or(|r| r <= 100));
        }
    }
    let st = &logs.self_test;
    if let Some(r) = &st.running {
        prop_assert!(r.percent_done <= 100, "{r:?}");
    }
    prop_assert!(st.supported || st.unsupported_reason.is_some());
    let mut health = smart::assess(
        &logs.device,
        logs.transport,
        SmartReading::Unavailable { reason: "x".into() },
    );
    smart::judge_logs(&mut health, logs);
    prop_assert_eq!(health.verdict, Verdict::Unavailable);
    check_health(&health)?;
    Ok(())
}

/// Several sectors of about 512 bytes each, every one mutated from the bases and half of
/// them with a correct checksum.
fn sectors_like(bases: Vec<Vec<u8>>) -> BoxedStrategy<Vec<u8>> {
    vec(pages_like(bases, 512, Some(512)), 1..4)
        .prop_map(|ps| ps.concat())
        .boxed()
}

pub fn ata_logs(cases: u32) -> Result<Outcome, String> {
    let bases = vec![
        page("qemu-sata-0-ata-smart-log-error.hex"),
        page("qemu-sata-0-ata-smart-log-selftest.hex"),
        page("qemu-sata-0-aftertest-ata-smart-log-selftest.hex"),
    ];
    let data = pages_like(
        vec![page("qemu-sata-0-aftertest-ata-smart-data.hex")],
        512,
        Some(512),
    );
    let input = (
        pages_like(bases.clone(), 512, Some(512)),
        sectors_like(bases),
        data,
        any::<u8>(),
    );
    let outcome = run(cases, input, |(one, many, data, status)| {
        let (outcome, text, remaining) = smart::decode_self_test_status(status);
        prop_assert!(!text.is_empty());
        prop_assert_eq!(remaining.is_some(), outcome == SelfTestOutcome::InProgress);
        prop_assert!(remaining.is_none_or(|r| r <= 100));
        let mut logs = DriveLogs::unavailable("sda", Transport::Sata, "x");
        let mut any = false;
        if let Ok(l) = smart::parse_summary_error_log(&one) {
            prop_assert!(l.entries.len() <= 5);
            prop_assert!(l.entries.iter().all(|e| e.lba.is_some_and(|x| x < 1 << 28)));
            logs.error_log = LogRead::Read(l);
            any = true;
        }
        if let Ok(l) = smart::parse_self_test_log(&one) {
            prop_assert!(l.entries.len() <= 21);
            logs.self_test_log = LogRead::Read(l);
            any = true;
        }
        if let Ok(l) = smart::parse_ext_error_log(&many) {
            prop_assert!(l.entries.len() <= 4 * (many.len() / 512));
            prop_assert!(l.entries.iter().all(|e| e.lba.is_some_and(|x| x < 1 << 48)));
            logs.error_log = LogRead::Read(l);
            any = true;
        }
        if let Ok(l) = smart::parse_ext_self_test_log(&many) {
            prop_assert!(l.entries.len() <= 19 * (many.len() / 512));
            logs.self_test_log = LogRead::Read(l);
            any = true;
        }
        if let Ok(d) = smart::parse_smart_data(&data) {
            logs.self_test = smart::self_test_status(&d);
            any = true;
        }
        if any {
            accepted();
        }
        check_logs(&logs)
    });
    expect_accepted(outcome, "ATA log sectors")
}

pub fn nvme_logs(cases: u32) -> Result<Outcome, String> {
    // QEMU has no Device Self-test log: the base is a hand-made one with one result.
    let mut self_test = vec![0u8; smart::SELF_TEST_LOG_LEN];
    for r in self_test[4..].chunks_exact_mut(28) {
        r[0] = 0x0F;
    }
    self_test[4] = 0x10;
    let input = (
        pages_like(vec![page("qemu-nvme-0-nvme-error-log.hex")], 256, None),
        pages_like(vec![self_test], smart::SELF_TEST_LOG_LEN, None),
        any::<u16>(),
    );
    let outcome = run(cases, input, |(errors, tests, edstt)| {
        let mut logs = DriveLogs::unavailable("nvme0n1", Transport::Nvme, "x");
        let mut any = false;
        if let Ok(l) = smart::parse_error_log(&errors) {
            prop_assert!(l.entries.len() <= errors.len() / 64);
            prop_assert!(l.entries.windows(2).all(|w| w[0].number > w[1].number));
            prop_assert!(l.entries.iter().all(|e| e.number != 0));
            prop_assert_eq!(l.count, l.entries.first().map_or(0, |e| e.number));
            logs.error_log = LogRead::Read(l);
            any = true;
        }
        if let Ok((l, running)) = smart::parse_nvme_self_test_log(&tests) {
            prop_assert!(l.entries.len() <= 20);
            logs.self_test = smart::nvme_self_test_status(&l, running, edstt);
            logs.self_test_log = LogRead::Read(l);
            any = true;
        }
        if any {
            accepted();
        }
        check_logs(&logs)
    });
    expect_accepted(outcome, "NVMe log pages")
}
