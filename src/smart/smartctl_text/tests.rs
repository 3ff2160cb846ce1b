use super::*;
use crate::model::{LogRead, SelfTestOutcome, SmartReading, Transport, Verdict};

const BANNER: &str = "smartctl 7.4 2023-08-01 r5530 [x86_64-linux-6.13.9] (local build)\n\
Copyright (C) 2002-23, Bruce Allen, Christian Franke, www.smartmontools.org\n\n";

/// `smartctl -x` of a SATA disk: brief flags, FAIL column, raw values with spaces.
const ATA_X: &str = "=== START OF INFORMATION SECTION ===
Model Family:     Seagate BarraCuda 3.5
Device Model:     ST2000DM008-2FR102
Serial Number:    ZFL0ABCD
LU WWN Device Id: 5 000c50 0c1234567
Firmware Version: 0001
User Capacity:    2,000,398,934,016 bytes [2.00 TB]
Sector Sizes:     512 bytes logical, 4096 bytes physical
Rotation Rate:    7200 rpm
Form Factor:      3.5 inches
SMART support is: Available - device has SMART capability.
SMART support is: Enabled

=== START OF READ SMART DATA SECTION ===
SMART overall-health self-assessment test result: PASSED

General SMART Values:
Self-test execution status:      (   0)\tThe previous self-test routine completed
\t\t\t\t\twithout error or no self-test has ever
\t\t\t\t\tbeen run.
Short self-test routine
recommended polling time: \t (   1) minutes.
Extended self-test routine
recommended polling time: \t ( 216) minutes.

SMART Attributes Data Structure revision number: 10
Vendor Specific SMART Attributes with Thresholds:
ID# ATTRIBUTE_NAME          FLAGS    VALUE WORST THRESH FAIL RAW_VALUE
  1 Raw_Read_Error_Rate     POSR--   075   039   044    Past 30149871
  5 Reallocated_Sector_Ct   PO--CK   001   001   005    NOW  2005
  9 Power_On_Hours          -O--CK   056   056   000    -    39384h+40m+45.152s
188 Command_Timeout         -O--CK   100   097   000    -    2 3 3
190 Airflow_Temperature_Cel -O---K   068   040   045    Past 32 (6 194 35 29 0)
194 Temperature_Celsius     -O---K   032   060   000    -    32 (0 16 0 0 0)
197 Current_Pending_Sector  -O--C-   100   100   000    -    0
198 Offline_Uncorrectable   ----C-   100   100   000    -    0/5280540
240 Head_Flying_Hours       ------   100   253   000    -    0x00a3c1f2e4b5
                            ||||||_ K auto-keep
                            |______ P prefailure warning

SMART Extended Comprehensive Error Log Version: 1 (5 sectors)
Device Error Count: 14 (device log contains only the most recent 4 errors)
\tCR     = Command Register

Error 14 [1] occurred at disk power-on lifetime: 39380 hours (1640 days + 20 hours)
  When the command that caused the error occurred, the device was active or idle.

  After command completion occurred, registers were:
  ER -- ST COUNT  LBA_48  LH LM LL DV DC
  -- -- -- == -- == == == -- -- -- -- --
  40 -- 51 00 f3 00 00 2e 65 18 60 0e 00  Error: UNC at LBA = 0x2e651860 = 778377312

  Commands leading to the command that caused the error were:
  CR FEATR COUNT  LBA_48  LH LM LL DV DC  Powered_Up_Time  Command/Feature_Name
  -- == -- == -- == == == -- -- -- -- --  ---------------  --------------------
  60 00 08 00 00 00 00 2e 65 18 60 40 00  3d+01:12:35.232  READ FPDMA QUEUED
  42 20 00 00 ff 00 00 2e 65 17 55 e0 00     01:12:35.229  READ VERIFY SECTOR(S) EXT

Error 13 [0] occurred at disk power-on lifetime: 3 hours (0 days + 3 hours)
  When the command that caused the error occurred, the device was in standby mode.

  After command completion occurred, registers were:
  40 -- 51 00 22 00 00 2e 1d 72 20 0e 00  Error: ICRC, ABRT at LBA = 0x2e1d7220 = 773681696

SMART Extended Self-test Log Version: 1 (1 sectors)
Num  Test_Description    Status                  Remaining  LifeTime(hours)  LBA_of_first_error
# 1  Short offline       Completed: read failure       90%     39383         778377312
# 2  Extended offline    Interrupted (host reset)      90%       483         -
#10  Short offline       Completed without error       00%         9         -

SCT Status Version:                  3
Current Temperature:                    32 Celsius
";

fn ata_x() -> String {
    format!("{BANNER}{ATA_X}")
}

fn attr(r: &SmartctlReport, id: u8) -> AtaAttribute {
    r.ata
        .as_ref()
        .unwrap()
        .attributes
        .iter()
        .find(|a| a.id == id)
        .cloned()
        .unwrap_or_else(|| panic!("no attribute {id}"))
}

#[test]
fn the_x_layout_keeps_each_raw_value_as_printed_and_reads_its_leading_integer() {
    let r = parse_smartctl_text(&ata_x()).unwrap();
    assert_eq!(r.version.as_deref(), Some("7.4"));
    assert_eq!(r.protocol.as_deref(), Some("ATA"));
    assert_eq!(r.passed, Some(true));
    assert_eq!(r.smart_available, Some(true));
    assert_eq!(r.exit_status, 0);
    let ata = r.ata.as_ref().unwrap();
    assert_eq!(ata.status, AtaSmartStatus::Good);
    assert_eq!(ata.attributes.len(), 9, "the legend is no row");
    let a = attr(&r, 188);
    assert_eq!(a.raw_text.as_deref(), Some("2 3 3"));
    assert_eq!(a.raw, 2);
    assert!(a.known);
    let a = attr(&r, 194);
    assert_eq!(a.raw_text.as_deref(), Some("32 (0 16 0 0 0)"));
    assert_eq!(a.raw, 32);
    assert_eq!(a.decoded.as_deref(), Some("32 C"));
    assert_eq!(a.state, AttributeState::NoThreshold);
    assert_eq!(attr(&r, 198).raw_text.as_deref(), Some("0/5280540"));
    assert_eq!(attr(&r, 198).raw, 0);
    assert_eq!(attr(&r, 240).raw, 0x00a3_c1f2_e4b5, "hexadecimal raw");
    assert_eq!(attr(&r, 9).raw, 39384);
    assert_eq!(r.power_on_hours, Some(39384), "h+m+s is hours");
    // The FAIL column: NOW, Past, and "-" with and without a threshold.
    let a = attr(&r, 5);
    assert_eq!(a.state, AttributeState::FailingNow);
    assert!(a.prefailure);
    assert_eq!(a.flags, 0b11_0011, "PO--CK");
    assert_eq!((a.value, a.worst, a.threshold), (1, 1, Some(5)));
    assert_eq!(attr(&r, 1).state, AttributeState::FailedInPast);
    assert_eq!(attr(&r, 1).flags, 0b1111, "POSR--");
    assert_eq!(attr(&r, 190).state, AttributeState::FailedInPast);
    assert_eq!(
        attr(&r, 190).raw_text.as_deref(),
        Some("32 (6 194 35 29 0)")
    );
    assert!(!attr(&r, 9).prefailure);
    // SCT's current temperature.
    assert_eq!(r.temperature_c, Some(32));
    // The attribute table knows its drive.
    assert_eq!(ata.drive.model.as_deref(), Some("ST2000DM008-2FR102"));
    assert_eq!(ata.drive.solid_state, Some(false));
    assert_eq!(ata.drive.sectors, Some(2_000_398_934_016 / 512));
}

#[test]
fn the_identity_comes_from_the_information_section() {
    let id = parse_smartctl_text_identity(&ata_x()).unwrap();
    assert_eq!(id.model_family.as_deref(), Some("Seagate BarraCuda 3.5"));
    assert_eq!(id.model.as_deref(), Some("ST2000DM008-2FR102"));
    assert_eq!(id.serial.as_deref(), Some("ZFL0ABCD"));
    assert_eq!(id.wwn.as_deref(), Some("naa.5000c500c1234567"));
    assert_eq!(id.firmware.as_deref(), Some("0001"));
    assert_eq!(id.capacity_bytes, Some(2_000_398_934_016));
    assert_eq!(id.logical_block_size, Some(512));
    assert_eq!(id.rotation_rpm, Some(7200));
    assert_eq!(id.form_factor.as_deref(), Some("3.5 inches"));
    // Windows' separators, a lossy Latin-1 no-break space, an SSD, a masked WWN.
    let text = format!(
        "{BANNER}=== START OF INFORMATION SECTION ===\r\nDevice Model:     Apacer AS340 240GB\r\n\
         LU WWN Device Id: 5 000cca ...\r\nUser Capacity:    240\u{fffd}057\u{fffd}409\u{fffd}536 \
         bytes [240 GB]\r\nSector Size:      512 bytes logical/physical\r\n\
         Rotation Rate:    Solid State Device\r\n"
    );
    let id = parse_smartctl_text_identity(&text).unwrap();
    assert_eq!(
        id.model.as_deref(),
        Some("Apacer AS340 240GB"),
        "no CR kept"
    );
    assert_eq!(id.capacity_bytes, Some(240_057_409_536));
    assert_eq!(id.logical_block_size, Some(512));
    assert_eq!(id.rotation_rpm, Some(0));
    assert_eq!(id.wwn, None, "a masked WWN is none");
}

#[test]
fn the_a_layout_reads_type_and_when_failed() {
    let text = format!(
        "{BANNER}=== START OF READ SMART DATA SECTION ===
SMART overall-health self-assessment test result: FAILED!
Drive failure expected in less than 24 hours. SAVE ALL DATA.
See vendor-specific Attribute list for failed Attributes.
Failed Attributes:
ID# ATTRIBUTE_NAME          FLAG     VALUE WORST THRESH TYPE      UPDATED  WHEN_FAILED RAW_VALUE
  5 Reallocated_Sector_Ct   0x0033   001   001   005    Pre-fail  Always   FAILING_NOW 16284

SMART Attributes Data Structure revision number: 16
Vendor Specific SMART Attributes with Thresholds:
ID# ATTRIBUTE_NAME          FLAG     VALUE WORST THRESH TYPE      UPDATED  WHEN_FAILED RAW_VALUE
  5 Reallocated_Sector_Ct   0x0033   001   001   005    Pre-fail  Always   FAILING_NOW 16284
  9 Power_On_Minutes        0x0032   098   098   000    Old_age   Always       -       12000
190 Airflow_Temperature_Cel 0x0022   066   045   045    Old_age   Always   In_the_past 34 (Min/Max 30/36)
194 Temperature_Celsius     0x0022   100   100   ---    Old_age   Always       -       35
196 Reallocated_Event_Count 0x0032   100   100   000    Old_age   Always       -       0 (0 6848)
"
    );
    let r = parse_smartctl_text(&text).unwrap();
    assert_eq!(r.passed, Some(false));
    let ata = r.ata.as_ref().unwrap();
    assert_eq!(ata.status, AtaSmartStatus::Failing);
    assert_eq!(
        ata.attributes.len(),
        5,
        "the full table, not the failed one"
    );
    let a = attr(&r, 5);
    assert_eq!(a.state, AttributeState::FailingNow);
    assert!(a.prefailure);
    assert_eq!(a.flags, 0x33);
    assert_eq!(a.raw, 16284);
    assert!(!attr(&r, 9).prefailure);
    assert_eq!(r.power_on_hours, Some(200), "minutes by the name");
    assert_eq!(attr(&r, 190).state, AttributeState::FailedInPast);
    assert_eq!(attr(&r, 194).threshold, None, "--- is no threshold");
    assert_eq!(attr(&r, 194).state, AttributeState::NoThreshold);
    assert_eq!(attr(&r, 196).raw_text.as_deref(), Some("0 (0 6848)"));
    let h = crate::smart::assess("sda", Transport::Sata, SmartReading::Smartctl(Box::new(r)));
    assert_eq!(h.verdict, Verdict::Failed);
}

const NVME: &str = "=== START OF INFORMATION SECTION ===
Model Number:                       Samsung SSD 980 PRO 1TB
Serial Number:                      S5P2NG0NB05964V
Firmware Version:                   5B2QGXA7
Total NVM Capacity:                 1,000,204,886,016 [1.00 TB]
Namespace 1 Size/Capacity:          1 000 204 886 016 [1,00 TB]
Namespace 1 Formatted LBA Size:     512
Namespace 1 IEEE EUI-64:            002538 bb01501f70
Warning  Comp. Temp. Threshold:     82 Celsius

=== START OF SMART DATA SECTION ===
SMART overall-health self-assessment test result: FAILED!
- NVM subsystem reliability has been degraded

SMART/Health Information (NVMe Log 0x02, NSID 0xffffffff)
Critical Warning:                   0x04
Temperature:                        62 Celsius
Available Spare:                    98%
Available Spare Threshold:          10%
Percentage Used:                    114%
Data Units Read:                    151,288,508 [77.4 TB]
Data Units Written:                 264 489 347 [135 TB]
Host Read Commands:                 5,047,031,068
Host Write Commands:                7,842,130,574
Controller Busy Time:               19,134
Power Cycles:                       662
Power On Hours:                     3,441
Unsafe Shutdowns:                   36
Media and Data Integrity Errors:    4,294,967,296
Error Information Log Entries:      283
Warning  Comp. Temperature Time:    5
Critical Comp. Temperature Time:    0
Temperature Sensor 1:               62 Celsius
Temperature Sensor 2:               72 Celsius

Error Information (NVMe Log 0x01, 16 of 64 entries)
Num   ErrCount  SQId   CmdId  Status  PELoc          LBA  NSID    VS  Message
  0        283     0  0x000c  0xc004  0x02b            -     0     -  Invalid Field in Command
  1        282     2  0x0010  0x4502  0x000     12345678     1     -  Unrecovered Read Error

Self-test Log (NVMe Log 0x06)
Self-test status: Extended self-test in progress (28% completed)
Num  Test_Description  Status                       Power_on_Hours  Failing_LBA  NSID SCT Code
 0   Extended          Completed: failed segments             3441        12345     1   -    -
 1   Short             Completed without error                3441            -     -   -    -
 2   Short             Aborted: Self-test command              865            -     -   -    -
";

#[test]
fn nvme_health_with_separators_of_every_locale() {
    let text = format!("{BANNER}{NVME}");
    let r = parse_smartctl_text(&text).unwrap();
    assert_eq!(r.protocol.as_deref(), Some("NVMe"));
    assert_eq!(r.passed, Some(false));
    assert!(r.ata.is_none());
    let n = r.nvme.as_ref().unwrap();
    assert_eq!(n.critical_warning, 4);
    assert_eq!(n.critical_warnings, ["reliability degraded"]);
    assert_eq!(n.temperature_c(), Some(62));
    assert_eq!(
        (n.available_spare_pct, n.available_spare_threshold_pct),
        (98, 10)
    );
    assert_eq!(n.percentage_used, 114);
    assert_eq!(n.data_units_read, 151_288_508);
    assert_eq!(n.data_units_written, 264_489_347, "spaces as separators");
    assert_eq!(n.host_write_commands, 7_842_130_574);
    assert_eq!(n.controller_busy_minutes, 19_134);
    assert_eq!(n.power_on_hours, 3441);
    assert_eq!(n.media_errors, 4_294_967_296);
    assert_eq!(n.error_log_entries, 283);
    assert_eq!((n.warning_temp_minutes, n.critical_temp_minutes), (5, 0));
    assert_eq!(n.temperature_sensors_kelvin, [(1, 335), (2, 345)]);
    assert_eq!(r.power_on_hours, Some(3441));
    assert_eq!(r.temperature_c, Some(62));
    let id = parse_smartctl_text_identity(&text).unwrap();
    assert_eq!(id.model.as_deref(), Some("Samsung SSD 980 PRO 1TB"));
    assert_eq!(
        id.capacity_bytes,
        Some(1_000_204_886_016),
        "the namespace's"
    );
    assert_eq!(id.logical_block_size, Some(512));
    assert_eq!(id.wwn.as_deref(), Some("eui.002538bb01501f70"));
    assert_eq!(id.warning_temperature_c, Some(82));
    // The verdict names the bit rather than a generic FAILED.
    let h = crate::smart::assess("n", Transport::Nvme, SmartReading::Smartctl(Box::new(r)));
    assert_eq!(h.verdict, Verdict::Failed);
    assert!(h.findings.iter().any(|f| f.text.contains("reliability")));
}

#[test]
fn nvme_logs_error_table_and_self_tests() {
    let logs = parse_smartctl_text_logs(&format!("{BANNER}{NVME}"), "n", Transport::Nvme).unwrap();
    assert_eq!(logs.source, "smartctl 7.4 (text)");
    let LogRead::Read(errors) = &logs.error_log else {
        panic!("{:?}", logs.error_log);
    };
    assert_eq!(
        errors.count, 283,
        "the health log's count over the drive's life"
    );
    assert_eq!(errors.entries.len(), 2);
    assert_eq!(errors.entries[0].number, 283);
    assert_eq!(errors.entries[0].lba, None);
    assert_eq!(
        errors.entries[0].command.as_deref(),
        Some("admin queue, command id 0x000c")
    );
    assert_eq!(errors.entries[1].lba, Some(12_345_678));
    let LogRead::Read(tests) = &logs.self_test_log else {
        panic!("{:?}", logs.self_test_log);
    };
    assert_eq!(tests.entries.len(), 3);
    let t = &tests.entries[0];
    assert_eq!(
        (
            t.kind.as_str(),
            t.outcome,
            t.power_on_hours,
            t.first_failing_lba
        ),
        ("extended", SelfTestOutcome::Failed, 3441, Some(12345))
    );
    assert_eq!(tests.entries[1].outcome, SelfTestOutcome::Passed);
    assert_eq!(tests.entries[2].outcome, SelfTestOutcome::Aborted);
    let running = logs.self_test.running.as_ref().unwrap();
    assert_eq!(running.percent_done, 28);
    assert!(!logs.self_test.supported, "a saved report starts no test");
}

#[test]
fn ata_logs_entries_counts_and_self_tests() {
    let logs = parse_smartctl_text_logs(&ata_x(), "sda", Transport::Sata).unwrap();
    let LogRead::Read(errors) = &logs.error_log else {
        panic!("{:?}", logs.error_log);
    };
    assert!(errors.source.contains("extended"));
    assert_eq!(errors.count, 14);
    assert_eq!(errors.entries.len(), 2);
    let e = &errors.entries[0];
    assert_eq!(e.number, 14);
    assert_eq!(e.power_on_hours, Some(39380));
    assert_eq!(e.lba, Some(778_377_312));
    assert_eq!(e.error, "UNC at LBA = 0x2e651860 = 778377312");
    assert_eq!(
        e.command.as_deref(),
        Some("READ FPDMA QUEUED"),
        "the first listed"
    );
    assert_eq!(e.state.as_deref(), Some("active or idle"));
    let e = &errors.entries[1];
    assert_eq!(e.power_on_hours, Some(3));
    assert_eq!(e.state.as_deref(), Some("in standby mode"));
    assert_eq!(e.error, "ICRC, ABRT at LBA = 0x2e1d7220 = 773681696");
    let LogRead::Read(tests) = &logs.self_test_log else {
        panic!("{:?}", logs.self_test_log);
    };
    assert_eq!(tests.entries.len(), 3, "#10 too");
    let t = &tests.entries[0];
    assert_eq!(
        (
            t.kind.as_str(),
            t.outcome,
            t.power_on_hours,
            t.first_failing_lba
        ),
        ("short", SelfTestOutcome::Failed, 39383, Some(778_377_312))
    );
    assert_eq!(t.result, "Completed: read failure");
    assert_eq!(tests.entries[1].kind, "extended");
    assert_eq!(tests.entries[1].outcome, SelfTestOutcome::Aborted);
    assert_eq!(tests.entries[2].power_on_hours, 9);
    assert_eq!(
        logs.self_test.last.as_deref(),
        Some("completed without error")
    );
    assert_eq!(logs.self_test.short_minutes, Some(1));
    assert_eq!(logs.self_test.long_minutes, Some(216));
    // The failed newest self-test is a warning once judged.
    let mut h = crate::smart::assess(
        "sda",
        Transport::Sata,
        SmartReading::Smartctl(Box::new(parse_smartctl_text(&ata_x()).unwrap())),
    );
    crate::smart::judge_logs(&mut h, &logs);
    assert!(h.findings.iter().any(|f| f.text.contains("self-test")));
}

#[test]
fn the_summary_error_log_and_its_absence() {
    let text = format!(
        "{BANNER}=== START OF READ SMART DATA SECTION ===
SMART overall-health self-assessment test result: PASSED

Warning! SMART ATA Error Log Structure error: invalid SMART checksum.
SMART Error Log Version: 1
ATA Error Count: 5 (device log contains only the most recent five errors)
Error 5 occurred at disk power-on lifetime: 1,234 hours (51 days + 10 hours)
  When the command that caused the error occurred, the device was active or idle.
  40 51 08 ff ff ff 0f  Error: UNC 8 sectors at LBA = 0x0fffffff = 268435455

SMART Self-test log structure revision number 1
No self-tests have been logged.  [To run self-tests, use: smartctl -t]
"
    );
    let logs = parse_smartctl_text_logs(&text, "sda", Transport::Sata).unwrap();
    let LogRead::Read(errors) = &logs.error_log else {
        panic!("{:?}", logs.error_log);
    };
    assert!(errors.source.contains("summary"));
    assert_eq!(errors.count, 5);
    assert_eq!(errors.entries[0].power_on_hours, Some(1234));
    assert_eq!(errors.entries[0].lba, Some(268_435_455));
    assert_eq!(
        logs.self_test_log,
        LogRead::Read(crate::model::SelfTestLog {
            source: "ATA SMART self-test log (smartctl text)".into(),
            entries: vec![],
        })
    );
    let r = parse_smartctl_text(&text).unwrap();
    assert!(r.messages.iter().any(|m| m.contains("Error Log Structure")));
    let none = format!(
        "{BANNER}=== START OF READ SMART DATA SECTION ===\nSMART Error Log not supported\n"
    );
    let logs = parse_smartctl_text_logs(&none, "sda", Transport::Sata).unwrap();
    assert!(matches!(logs.error_log, LogRead::NotSupported { .. }));
}

#[test]
fn scsi_health_defects_counters_and_self_tests() {
    let text = format!(
        "{BANNER}=== START OF INFORMATION SECTION ===
Vendor:               HGST
Product:              HUS726040AL5210
Revision:             A907
User Capacity:        4 000 787 030 016 bytes [4,00 TB]
Logical block size:   512 bytes
Rotation Rate:        7200 rpm
Logical Unit id:      0x5000cca25c244870
Serial number:        K4KABCDE

=== START OF READ SMART DATA SECTION ===
SMART Health Status: FAILURE PREDICTION THRESHOLD EXCEEDED [asc=5d, ascq=10]

Current Drive Temperature:     40 C
Elements in grown defect list: 1,056

Error counter log:
           Errors Corrected by           Total   Correction     Gigabytes    Total
               ECC          rereads/    errors   algorithm      processed    uncorrected
           fast | delayed   rewrites  corrected  invocations   [10^9 bytes]  errors
read:          0        8         0         8      60614      16772,475           3
write:         0      211         0       211     233430     574543.134           0

SMART Self-test log
Num  Test              Status                 segment  LifeTime  LBA_first_err [SK ASC ASQ]
     Description                              number   (hours)
# 1  Background short  Failed in segment -->       3     302          123456 [0x3 0x11 0x0]
# 2  Background long   Completed                   -     290                 - [-   -    -]

Background scan results log
    Accumulated power on time, hours:minutes 146:02 [8762 minutes]
"
    );
    let r = parse_smartctl_text(&text).unwrap();
    assert_eq!(r.protocol.as_deref(), Some("SCSI"));
    assert_eq!(r.passed, Some(false));
    assert_eq!(
        r.scsi_ie_string.as_deref(),
        Some("FAILURE PREDICTION THRESHOLD EXCEEDED [asc=5d, ascq=10]")
    );
    assert_eq!(r.scsi_grown_defects, Some(1056));
    assert_eq!(r.temperature_c, Some(40));
    assert_eq!(r.power_on_hours, Some(146));
    let id = parse_smartctl_text_identity(&text).unwrap();
    assert_eq!(id.model.as_deref(), Some("HGST HUS726040AL5210"));
    assert_eq!(id.serial.as_deref(), Some("K4KABCDE"));
    assert_eq!(id.firmware.as_deref(), Some("A907"));
    assert_eq!(id.capacity_bytes, Some(4_000_787_030_016));
    assert_eq!(id.wwn.as_deref(), Some("naa.5000cca25c244870"));
    let logs = parse_smartctl_text_logs(&text, "sdb", Transport::Scsi).unwrap();
    let LogRead::Read(errors) = &logs.error_log else {
        panic!("{:?}", logs.error_log);
    };
    assert_eq!(errors.count, 3);
    assert_eq!(errors.entries[0].error, "read: 3 uncorrected, 8 corrected");
    let LogRead::Read(tests) = &logs.self_test_log else {
        panic!("{:?}", logs.self_test_log);
    };
    let t = &tests.entries[0];
    assert_eq!(
        (
            t.kind.as_str(),
            t.outcome,
            t.power_on_hours,
            t.first_failing_lba
        ),
        (
            "background short",
            SelfTestOutcome::Failed,
            302,
            Some(123_456)
        )
    );
    assert_eq!(tests.entries[1].outcome, SelfTestOutcome::Passed);
    // OK is passed; a drive without a sensor says 0 C, which is no temperature.
    let ok = text
        .replace(
            "FAILURE PREDICTION THRESHOLD EXCEEDED [asc=5d, ascq=10]",
            "OK",
        )
        .replace("40 C", "0 C");
    let r = parse_smartctl_text(&ok).unwrap();
    assert_eq!((r.passed, r.temperature_c), (Some(true), None));
}

#[test]
fn a_device_without_smart_and_one_smartctl_could_not_open() {
    let raid = format!(
        "{BANNER}=== START OF INFORMATION SECTION ===
Vendor:               AVAGO
Product:              MR9361-16i
SMART support is:     Unavailable - device lacks SMART capability.

=== START OF READ SMART DATA SECTION ===
Current Drive Temperature:     0 C
"
    );
    let r = parse_smartctl_text(&raid).unwrap();
    assert_eq!(r.smart_available, Some(false));
    let h = crate::smart::assess("x", Transport::Scsi, SmartReading::Smartctl(Box::new(r)));
    assert_eq!(h.verdict, Verdict::Unavailable);
    let closed =
        format!("{BANNER}Smartctl open device: /dev/sdz failed: No such device or address\n");
    let r = parse_smartctl_text(&closed).unwrap();
    assert_eq!(r.exit_status, 2);
    let h = crate::smart::assess("x", Transport::Sata, SmartReading::Smartctl(Box::new(r)));
    assert_eq!(h.verdict, Verdict::Unavailable);
    assert!(h.unavailable_reason.unwrap().contains("No such device"));
}

#[test]
fn what_is_not_smartctl_text_is_an_error() {
    for junk in [
        "",
        "hello\nworld\n",
        "ID# ATTRIBUTE_NAME\n",
        "\u{1b}[2J",
        "smartctl is great\n",
    ] {
        let e = parse_smartctl_text(junk).unwrap_err();
        assert!(e.problem.contains("not smartctl output"), "{junk:?}: {e}");
    }
    let e = parse_smartctl_text(BANNER).unwrap_err();
    assert!(e.problem.contains("cut short"), "{e}");
    assert!(parse_smartctl_text_logs(BANNER, "x", Transport::Sata).is_err());
    assert!(parse_smartctl_text_identity("nothing").is_err());
}

#[test]
fn line_ends_of_every_system_read_alike() {
    let unix = ata_x();
    let want = parse_smartctl_text(&unix).unwrap();
    let crlf = unix.replace('\n', "\r\n");
    assert_eq!(parse_smartctl_text(&crlf).unwrap(), want);
    let cr = unix.replace('\n', "\r");
    assert_eq!(parse_smartctl_text(&cr).unwrap(), want);
}

#[test]
fn strings_cannot_drive_the_terminal() {
    let text = ata_x()
        .replace("ST2000DM008-2FR102", "ST2000\u{1b}[2J")
        .replace("39384h+40m+45.152s", "39384h\u{7}");
    let r = parse_smartctl_text(&text).unwrap();
    assert_eq!(attr(&r, 9).raw_text.as_deref(), Some("39384h?"));
    let id = parse_smartctl_text_identity(&text).unwrap();
    assert_eq!(id.model.as_deref(), Some("ST2000?[2J"));
    // A C1 control before a self-test's description (found by the property test).
    let text = ata_x().replace("#10  Short offline", "#10  \u{9b}Short offline");
    let logs = parse_smartctl_text_logs(&text, "x", Transport::Sata).unwrap();
    let LogRead::Read(tests) = &logs.self_test_log else {
        panic!("{:?}", logs.self_test_log);
    };
    assert_eq!(tests.entries[2].kind, "?short offline");
}

#[test]
fn every_cut_and_every_byte_changed_is_a_result_never_a_panic() {
    let full = format!("{}{}", ata_x(), NVME);
    // Every line end and a spread of places inside lines (three parses each).
    let cuts: Vec<usize> = full
        .char_indices()
        .filter(|(i, c)| *c == '\n' || i % 17 == 0)
        .map(|(i, _)| i)
        .collect();
    for &n in &cuts {
        let part = &full[..n];
        let _ = parse_smartctl_text(part);
        let _ = parse_smartctl_text_identity(part);
        let _ = parse_smartctl_text_logs(part, "x", Transport::Sata);
    }
    let bytes = full.as_bytes();
    for i in (0..bytes.len()).step_by(31) {
        for b in [b'\n', b'#', b'%', 0xff] {
            let mut changed = bytes.to_vec();
            changed[i] = b;
            let text = String::from_utf8_lossy(&changed);
            let _ = parse_smartctl_text(&text);
            let _ = parse_smartctl_text_logs(&text, "x", Transport::Nvme);
        }
    }
}

#[test]
fn numbers_beyond_every_range_are_unknown_not_a_panic() {
    let huge = "9223372036854775807";
    let text = format!(
        "{BANNER}SMART/Health Information (NVMe Log 0x02)\nCritical Warning: 0x00\n\
         Temperature: {huge} Celsius\nTemperature Sensor 1: {huge} Celsius\n\
         Temperature Sensor 2: -{huge} Celsius\nAvailable Spare: 999999%\n\
         Power On Hours: 99999999999999999999999999999999999999999\n"
    );
    let r = parse_smartctl_text(&text).unwrap();
    let n = r.nvme.unwrap();
    assert_eq!(n.temperature_c(), None);
    assert!(n.temperature_sensors_kelvin.is_empty());
    assert_eq!(n.available_spare_pct, 255, "saturated");
    assert_eq!(n.power_on_hours, 0, "not a number");
}

#[test]
fn counts_read_every_locale_and_refuse_words() {
    assert_eq!(count("1,234"), Some(1234));
    assert_eq!(count("1 234 567 [1 TB]"), Some(1_234_567));
    assert_eq!(count("1.234"), Some(1234));
    assert_eq!(count("100%"), Some(100));
    assert_eq!(count("12\u{a0}345"), Some(12345));
    assert_eq!(count("abc"), None);
    assert_eq!(count(""), None);
    assert_eq!(count("99999999999999999999999999999999999999999"), None);
    assert_eq!(raw_leading("281474976710656"), RAW48, "within 48 bits");
    assert_eq!(raw_leading("-"), 0);
    assert_eq!(brief_flags("-O--CK"), 0b11_0010);
    assert_eq!(brief_flags("PO-R--"), 0b1011);
}
