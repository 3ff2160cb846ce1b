//! A saved smartctl report as a disk's facts, for `triage --report`: its identity, its SMART
//! judged as a live reading (`smart::assess`, `smart::judge_logs`), nothing measured, no link.
//! The same rules judge it; only those on SMART and the logs can find anything.

use super::facts::{DiskFacts, DiskIdentityFacts};
use crate::model::{SavedReport, SmartReading};
use crate::smart::{assess, judge_logs};

/// The facts of the report saved as `name` (its file name: the disk's name in the report).
pub fn facts_of_report(name: &str, saved: SavedReport) -> DiskFacts {
    let SavedReport {
        transport,
        identity,
        report,
        mut logs,
        fitness,
        ..
    } = saved;
    logs.device = name.to_string();
    let mut health = assess(name, transport, SmartReading::Smartctl(Box::new(report)));
    judge_logs(&mut health, &logs);
    DiskFacts {
        identity: DiskIdentityFacts {
            device: name.to_string(),
            model: identity.model,
            serial: identity.serial,
            wwn: identity.wwn,
            firmware: identity.firmware,
            capacity_bytes: identity.capacity_bytes.unwrap_or(0),
            logical_block_size: identity.logical_block_size.unwrap_or(512),
            transport: Some(transport),
            rotation_rpm: identity.rotation_rpm,
            from_saved_report: true,
        },
        smart: Some(health),
        logs: Some(logs),
        fitness: super::facts::FitnessFacts {
            drive: fitness,
            ..Default::default()
        },
        temperature_warning_c: identity
            .warning_temperature_c
            .and_then(|c| crate::smart::nvme::plausible_warning_c(c + 273)),
        ..DiskFacts::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smart::parse_saved_report;
    use crate::triage::{TriageVerdict, judge_all};

    const PASSED: &str = "smartctl 7.4 2023-08-01 r5530 [x86_64-linux] (local build)
=== START OF INFORMATION SECTION ===
Device Model:     WDC WD40EFRX-68N32N0
Serial Number:    WD-1
User Capacity:    4,000,787,030,016 bytes [4.00 TB]
Sector Sizes:     512 bytes logical, 4096 bytes physical
Rotation Rate:    5400 rpm

=== START OF READ SMART DATA SECTION ===
SMART overall-health self-assessment test result: PASSED

ID# ATTRIBUTE_NAME          FLAGS    VALUE WORST THRESH FAIL RAW_VALUE
  5 Reallocated_Sector_Ct   PO--CK   200   200   140    -    0
  9 Power_On_Hours          -O--CK   050   050   000    -    36000
197 Current_Pending_Sector  -O--CK   200   200   000    -    0
";

    fn judge(text: &str) -> (DiskFacts, crate::triage::Judgement) {
        let facts = facts_of_report("r.txt", parse_saved_report(text, "x").unwrap());
        let j = judge_all(std::slice::from_ref(&facts)).remove(0);
        (facts, j)
    }

    #[test]
    fn a_clean_report_is_healthy_under_its_file_name() {
        let (facts, j) = judge(PASSED);
        assert_eq!(j.verdict, TriageVerdict::Healthy, "{:?}", j.findings);
        let id = &facts.identity;
        assert_eq!(id.device, "r.txt");
        assert_eq!(id.model.as_deref(), Some("WDC WD40EFRX-68N32N0"));
        assert_eq!(id.capacity_bytes, 4_000_787_030_016);
        assert_eq!(id.rotation_rpm, Some(5400));
        assert_eq!(id.transport, Some(crate::model::Transport::Sata));
        assert_eq!(facts.logs.as_ref().unwrap().device, "r.txt");
        assert_eq!(facts.smart.as_ref().unwrap().power_on_hours, Some(36000));
    }

    #[test]
    fn pending_sectors_and_a_failed_health_fail() {
        let pending = PASSED.replace(
            "-O--CK   200   200   000    -    0",
            "-O--CK   200   200   000    -    24",
        );
        let (_, j) = judge(&pending);
        assert_eq!(j.verdict, TriageVerdict::Failing);
        let f = j
            .findings
            .iter()
            .find(|f| f.rule == "ata-pending-sectors")
            .unwrap();
        // Not a device of this host: the next step must not name the file as one.
        assert!(
            f.next_step.contains("disktriage scan /dev/<its disk>"),
            "{f:?}"
        );
        assert!(!f.next_step.contains("r.txt"), "{f:?}");
        let failed = PASSED.replace("result: PASSED", "result: FAILED!");
        let (_, j) = judge(&failed);
        assert!(j.findings.iter().any(|f| f.rule == "smart-failed"));
    }
}
