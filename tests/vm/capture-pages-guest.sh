#!/bin/sh
# Guest side of tests/vm/capture-pages.sh: dumps the raw pages every lab drive returns
# (`disktriage debug pages`) and smartctl's JSON for each, between markers; then the SATA
# drive's again after a short self-test.
set -u

# The serial from virtio's `serial`, NVMe's `device/serial` (space padded) or the SCSI VPD page
# 0x80 (a 4-byte binary header, no printable characters in it for these lengths).
serial_of() {
    for f in "$1/serial" "$1/device/serial" "$1/device/vpd_pg80"; do
        if [ -r "$f" ]; then
            tr -dc 'A-Za-z0-9-' < "$f"
            return
        fi
    done
}

by_serial() {
    for d in /sys/block/*; do
        if [ "$(serial_of "$d")" = "$1" ]; then
            basename "$d"
            return
        fi
    done
}

for serial in DT-SATA-0 DT-NVME-0 DT-NVME-WARN DT-SCSI-0 DT-VIRTIO-0; do
    dev=$(by_serial "$serial")
    echo "===== DEVICE $serial $dev"
    disktriage debug pages "$dev" 2>&1
    if command -v smartctl >/dev/null; then
        echo "===== SMARTCTL $serial"
        smartctl -j -a "/dev/$dev"
        echo "===== SMARTCTL-EXIT $serial $?"
    fi
done

# The SATA drive's logs after a short self-test (QEMU logs it at once), with smartctl's view.
sata=$(by_serial DT-SATA-0)
echo "===== SELFTEST-START $sata"
disktriage smart "$sata" --self-test short 2>&1
echo "===== DEVICE DT-SATA-0-AFTERTEST $sata"
disktriage debug pages "$sata" 2>&1
if command -v smartctl >/dev/null; then
    echo "===== SMARTCTL DT-SATA-0-AFTERTEST"
    smartctl -j -a "/dev/$sata"
    echo "===== SMARTCTL-EXIT DT-SATA-0-AFTERTEST $?"
fi
