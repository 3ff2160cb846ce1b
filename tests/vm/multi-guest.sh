# Sourced by drive-control-guest.sh: the same test on several disks at once. Three virtio
# disks that QEMU throttles (lab.sh): DT-MULTI-0 and -1 at 30 MB/s, DT-MULTI-2 at a third of
# that. (The fast two are throttled too, so their speed does not depend on how busy the
# emulating host is.) A parallel seq-read across the three must name DT-MULTI-2.
fast0=$(by_serial DT-MULTI-0)
fast1=$(by_serial DT-MULTI-1)
slow=$(by_serial DT-MULTI-2)
section MULTI-DEVICES
echo "fast0=$fast0 fast1=$fast1 slow=$slow"
section MULTI
# stderr is the serial port, a terminal: the live progress line would land in the output.
disktriage run "/dev/$fast0" "/dev/$slow" "/dev/$fast1" --test seq-read --bs 128k \
    --time 4 --warmup 1 2>/tmp/multi.err
echo "rc=$?"
cat /tmp/multi.err
section MULTI-JSON
disktriage run "/dev/$fast0" "/dev/$slow" "/dev/$fast1" --test seq-read --bs 128k \
    --time 4 --warmup 1 --json 2>/tmp/multi.err
echo "rc=$?"
cat /tmp/multi.err

# The seed's RAID0/RAID1 table: an md array over the two fast disks, the array alone, then
# each member, with the same test (dd bs=1MiB as in the seed: a request spans both RAID0
# chunks). Reads only: the members are held by the array.
for level in 0 1; do
    mdadm --create /dev/md$level --run --level=$level --raid-devices=2 --metadata=1.2 \
        --assume-clean "/dev/$fast0" "/dev/$fast1" >/dev/null 2>&1
    section MD$level-DEVICE
    echo "md=$(basename "$(readlink -f /dev/md$level)")"
    # RAID0 as JSON, RAID1 as the text a person reads (one run each keeps the boot short).
    section MD$level-MEMBERS
    json=
    [ "$level" = 0 ] && json=--json
    disktriage run /dev/md$level --members --test seq-read --bs 1M --time 4 --warmup 1 $json \
        2>/tmp/multi.err
    echo "rc=$?"
    cat /tmp/multi.err
    section MD$level-MEMBERS-WRITE
    disktriage run /dev/md$level --members --test seq-write --destroy-data md$level
    echo "rc=$?"
    section MD$level-MEMBER-WRITE
    disktriage run "/dev/$fast0" --test seq-write --count 1 --destroy-data "$fast0"
    echo "rc=$?"
    mdadm --stop /dev/md$level >/dev/null 2>&1
done
