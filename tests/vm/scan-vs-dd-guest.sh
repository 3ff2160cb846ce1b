#!/bin/sh
# Guest side of scripts/ab/scan-vs-dd-lab.sh: the surface scan's speed against
# `dd if=DEV of=/dev/null bs=1M iflag=direct` on the lab's emulated disks (SATA on AHCI, NVMe,
# SCSI on virtio-scsi, virtio-blk), the same bytes read by both in alternating rounds, as
# scripts/ab/scan-vs-dd.sh does on the host for loop and zram. Read-only: nothing is written.
#
# Prints, per disk, a `===== SCAN-VS-DD NAME` section: one `dd MB/s` or `scan MB/s` line a run,
# then `median dd X scan Y ratio Z block B`. R (rounds, default 3) and MIB (MiB each run reads,
# default the whole disk) come from the runner, which prepends them to this script.
#
# The disks are found by their serial (tests/vm/lab.sh names them DT-SATA-0, ...); dd is GNU
# dd (the runner passes LAB_TOOLS=dd), said in the output.
set -u
R=${R:-3}

section() { echo "===== $*"; }

# The kernel name of the disk whose serial is $1 (virtio: serial; NVMe: the controller's
# serial; sd: the unit serial number page).
by_serial() {
    for d in /sys/block/*; do
        for f in "$d/serial" "$d/device/serial" "$d/device/vpd_pg80"; do
            if [ -r "$f" ] && tr -c 'A-Za-z0-9-' ' ' <"$f" | grep -qw -- "$1"; then
                basename "$d"
                return 0
            fi
        done
    done
    return 1
}

# GNU dd when the runner copied it (LAB_TOOLS=dd): by its path, since busybox's shell runs its
# own applet for a bare `dd`; else busybox's dd (the same 1 MiB read() loop).
DD=dd
[ -x /bin/dd ] && [ ! -L /bin/dd ] && DD=/bin/dd

# dd's rate in MB/s (10^6 bytes), from its own summary line (GNU: "..., 2.1 s, ...",
# busybox: "..., 2.1 seconds, ...").
dd_rate() {
    $DD if="$1" of=/dev/null iflag=direct bs=1M count="$2" 2>&1 |
        awk '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s," || $i == "seconds,") printf "%.1f", $1 / $(i-1) / 1e6 }'
}

# The scan's rate in MB/s: bytes read over its own seconds, from its JSON.
scan_rate() {
    disktriage scan "$1" --size "$2M" --json 2>/dev/null |
        awk -F'[:,]' '/"bytes_read"/ { b = $2 } /"seconds"/ { s = $2 } END { printf "%.1f", b / s / 1e6 }'
}

# The median of the numbers on stdin.
median() {
    sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

section SCAN-VS-DD-SETUP
echo "dd: $DD, $($DD --version 2>&1 | head -n 1)"
echo "rounds=$R"
for pair in sata:DT-SATA-0 nvme:DT-NVME-0 scsi:DT-SCSI-0 virtio:DT-VIRTIO-0; do
    kind=${pair%%:*}
    name=$(by_serial "${pair#*:}") || {
        section "SCAN-VS-DD $kind"
        echo "no disk with serial ${pair#*:}"
        continue
    }
    dev=/dev/$name
    size=$(($(cat /sys/block/$name/size) / 2048))
    mib=${MIB:-$size}
    [ "$mib" -gt "$size" ] && mib=$size
    section "SCAN-VS-DD $kind"
    echo "device $dev $mib MiB a run, max_sectors_kb $(cat /sys/block/$name/queue/max_sectors_kb)"
    : >/tmp/dd.rates
    : >/tmp/scan.rates
    disktriage scan "$dev" --size 1M --json >/tmp/probe.json 2>/dev/null
    block=$(awk -F'[:,]' '/"block"/ { print $2 + 0 }' /tmp/probe.json)
    # How the scan reads this disk (SG_IO or plain; a block in pieces, together or not).
    grep '"timeout_reason"' /tmp/probe.json
    i=1
    while [ $i -le "$R" ]; do
        v=$(dd_rate "$dev" "$mib")
        echo "$v" >>/tmp/dd.rates
        echo "r$i dd $v MB/s"
        v=$(scan_rate "$dev" "$mib")
        echo "$v" >>/tmp/scan.rates
        echo "r$i scan $v MB/s"
        i=$((i + 1))
    done
    d=$(median </tmp/dd.rates)
    s=$(median </tmp/scan.rates)
    echo "median dd $d scan $s ratio $(awk -v s="$s" -v d="$d" 'BEGIN { printf "%.3f", (d > 0) ? s / d : 0 }') block $block"
done
