#!/usr/bin/env bash
# The QEMU lab: boots Debian's kernel with a busybox initramfs under software emulation (TCG)
# with real drive interfaces (SATA on AHCI, NVMe, SCSI on virtio-scsi, virtio-blk, and for
# captures USB storage), runs a guest script there and collects what it printed.
#
# usage:
#   tests/vm/lab.sh check
#       exit 0 when the lab can run here; otherwise print what is missing and exit 3.
#   tests/vm/lab.sh run WORKDIR GUEST_SCRIPT [standard|capture|triage|console|fbcon|discard|zoned]
#       builds WORKDIR/initramfs.cpio.gz (busybox, kernel modules, the static disktriage binary
#       from $DISKTRIAGE_BIN if set, GUEST_SCRIPT as /lab/guest.sh, the tools named in
#       $LAB_TOOLS with their libraries), creates sparse disk images in
#       WORKDIR, boots, and waits for the guest to power off. The guest script's output (its
#       second serial port) ends up in WORKDIR/results.log, the kernel console in
#       WORKDIR/console.log. Exit 0 when the guest script ran to the end. $LAB_PREPARE, if set,
#       is run by bash with $WORK set before the boot, to prepare the disk images.
#       The `console` disk set adds what a test drives the kernel's own console with: the
#       standard VGA (vgacon, 80x25 text), QEMU's monitor on WORKDIR/monitor.sock (`sendkey`,
#       `screendump`) and a third serial port (the guest's ttyS2) on WORKDIR/control.sock.
#       `fbcon` is the same with the standard VGA's DRM driver (bochs) loaded: the kernel's
#       framebuffer console at 1024x768, 128x48 cells of its 8x16 font.
#
# Packages (Debian): qemu-system-x86, linux-image-amd64, busybox-static.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

find_kernel() {
    local v
    for v in $(ls /lib/modules 2>/dev/null | sort -rV); do
        if [ -f "/boot/vmlinuz-$v" ]; then
            echo "$v"
            return 0
        fi
    done
    return 1
}

check() {
    local missing=()
    command -v qemu-system-x86_64 >/dev/null || missing+=("qemu-system-x86_64 (apt-get install qemu-system-x86)")
    # grep reads the whole list (no -q): with pipefail, grep -q leaving early can kill the
    # writer with SIGPIPE under load and make a present busybox look missing.
    [ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -x insmod >/dev/null \
        || missing+=("static busybox (apt-get install busybox-static)")
    find_kernel >/dev/null || missing+=("a Debian kernel with modules (apt-get install linux-image-amd64)")
    command -v cpio >/dev/null || missing+=("cpio")
    if [ ${#missing[@]} -gt 0 ]; then
        printf 'QEMU lab unavailable, missing: %s\n' "${missing[@]}"
        return 3
    fi
}

# Modules to load in the guest, each with its dependencies, in load order.
modules_for() {
    case "$1" in
        standard)
            echo "ahci sd_mod sg nvme virtio_pci virtio_blk virtio_scsi ext4 kyber-iosched bfq loop dm_delay raid0 raid1 xts dm_crypt"
            ;;
        capture) echo "ahci sd_mod nvme virtio_pci virtio_blk virtio_scsi xhci_pci usb_storage ext4 dm_mod raid1" ;;
        # dm_zero: capacity-guest.sh's dropped tail (after the flush lab, in the same boot);
        # raid1: the fitness sections' md array (triage-guest.sh).
        triage) echo "ahci sd_mod nvme virtio_pci virtio_blk virtio_scsi dm_delay dm_zero raid1" ;;
        # discard-guest.sh: the four disks, and null_blk (configfs) and scsi_debug on demand.
        discard) echo "ahci sd_mod nvme virtio_pci virtio_blk virtio_scsi configfs" ;;
        # zoned-guest.sh: the same, with zoned scsi_debug and null_blk on demand.
        zoned) echo "ahci sd_mod nvme virtio_pci virtio_blk virtio_scsi configfs" ;;
        # No DRM driver: the console stays vgacon, the VGA's text mode with its ROM font.
        console) echo "ahci sd_mod nvme virtio_pci virtio_blk virtio_scsi" ;;
        # The standard VGA's DRM driver: fbcon takes over tty1 when it binds.
        fbcon) echo "ahci sd_mod nvme virtio_pci virtio_blk virtio_scsi bochs" ;;
    esac
}

# Modules copied into the guest but not loaded at boot: the guest script loads them with
# parameters (`insmod /lab/modules/null_blk.ko irqmode=2 ...`, scsi_debug with its medium
# errors). Their dependencies are loaded at boot. null_blk or scsi_debug without parameters
# would add a disk the boot's disk count does not expect.
modules_on_demand_for() {
    case "$1" in
        standard) echo "null_blk scsi_debug" ;;
        # flush-guest.sh (after the triage) stacks a loop device with an ext2 file system.
        triage) echo "null_blk scsi_debug loop ext4" ;;
        discard | zoned) echo "null_blk scsi_debug" ;;
    esac
}

build_initramfs() {
    local work=$1 script=$2 diskset=$3 kver=$4 expect=$5
    local root="$work/initramfs"
    rm -rf "$root"
    mkdir -p "$root"/{bin,dev,proc,sys,run,tmp,lab/modules,lib64,lib/x86_64-linux-gnu,etc}
    cp /bin/busybox "$root/bin/busybox"
    if [ -n "${DISKTRIAGE_BIN:-}" ]; then
        cp "$DISKTRIAGE_BIN" "$root/bin/disktriage"
    fi
    echo "$expect" > "$root/lab/expect_disks"
    cp "$script" "$root/lab/guest.sh"
    cp "$here/../fixtures/capture-sysfs.sh" "$root/lab/capture-sysfs.sh"
    cp "$here/latency-guest.sh" "$root/lab/latency-guest.sh"
    cp "$here/multi-guest.sh" "$root/lab/multi-guest.sh"
    cp "$here/layers-guest.sh" "$root/lab/layers-guest.sh"
    cp "$here/flush-guest.sh" "$root/lab/flush-guest.sh"
    cp "$here/capacity-guest.sh" "$root/lab/capacity-guest.sh"

    # Kernel modules with their dependencies, once each, in the order modprobe would load them.
    local m line ko order="$root/lab/modules.order" on_demand
    : > "$order"
    on_demand=$(modules_on_demand_for "$diskset")
    for m in $(modules_for "$diskset") $on_demand; do
        modprobe --show-depends -S "$kver" "$m" 2>/dev/null | while read -r line; do
            case "$line" in
                insmod*)
                    ko=$(echo "$line" | awk '{print $2}')
                    if ! grep -qx "$(basename "$ko")" "$order"; then
                        cp "$ko" "$root/lab/modules/"
                        # An on-demand module itself is only copied; its dependencies load.
                        case " $on_demand " in
                            *" $(basename "$ko" | sed 's/\.ko.*//; s/-/_/g') "*) ;;
                            *) basename "$ko" >> "$order" ;;
                        esac
                    fi
                    ;;
            esac
        done
    done
    # Decompress modules if the distribution ships them compressed (busybox insmod wants .ko).
    for ko in "$root"/lab/modules/*.ko.xz; do
        [ -e "$ko" ] || continue
        xz -d "$ko"
    done
    sed -i 's/\.ko\.xz$/.ko/' "$order"

    # Optional dynamically linked tools for captures (md and dm need their user-space tools).
    local tool lib
    for tool in ${LAB_TOOLS:-}; do
        tool=$(command -v "$tool") || continue
        cp "$tool" "$root/bin/"
        for lib in $(ldd "$tool" | grep -o '/[^ ]*'); do
            mkdir -p "$root$(dirname "$lib")"
            cp -L "$lib" "$root$lib"
        done
    done

    cat > "$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
for m in $(cat /lab/modules.order); do insmod /lab/modules/$m 2>/dev/null; done
# Wait for the disks to be probed (USB storage takes a few seconds).
want=$(cat /lab/expect_disks)
i=0
while [ "$(ls /sys/block | grep -cv -e '^loop' -e '^ram' -e '^zram')" -lt "$want" ] && [ $i -lt 300 ]; do
    sleep 0.1; i=$((i + 1))
done
exec 3>/dev/ttyS1
echo "===== LAB START $(uname -r)" >&3
sh /lab/guest.sh >&3 2>&3
echo "===== LAB END rc=$?" >&3
sync
poweroff -f
INIT
    chmod +x "$root/init"
    (cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initramfs.cpio.gz"
}

run() {
    local work=$1 script=$2 diskset=${3:-standard}
    check
    local kver
    kver=$(find_kernel)
    mkdir -p "$work"

    # The triage's SATA disk says it spins (IDENTIFY word 217), as a plain hard disk does; its
    # DT-VIRTIO-0 is throttled as its siblings are (below). The flush check (flush-guest.sh,
    # in the same boot) needs that disk to acknowledge from a volatile cache, as QEMU's
    # `cache=unsafe` does (it ignores the guest's flushes): with the default `writeback`, every
    # guest flush is an fdatasync of the image on the host, and the guest's 4 KiB O_DSYNC
    # writes took 4.7 ms on average, up to 35 ms (ioping, 200 writes; 0.6 ms with `unsafe`),
    # against a revolution of 8.33 ms at 7200 rpm: the verdict would depend on the host's
    # disk. Reads, all the triage does, are the same.
    local sata_rotation= sata_cache= virtio0_throttle=
    if [ "$diskset" = triage ] || [ "$diskset" = zoned ]; then
        sata_rotation=",rotation_rate=7200"
        sata_cache=",cache=unsafe"
        virtio0_throttle=",throttling.bps-total=32000000"
    fi
    local disks=(
        -drive "if=none,id=sata0,file=$work/sata.img,format=raw$sata_cache"
        -device "ide-hd,drive=sata0,bus=ide.0,serial=DT-SATA-0,model=DT SATA DISK$sata_rotation"
        -drive "if=none,id=nvme0,file=$work/nvme.img,format=raw"
        -device "nvme,drive=nvme0,serial=DT-NVME-0"
        -device virtio-scsi-pci,id=scsi0
        -drive "if=none,id=scsi0d,file=$work/scsi.img,format=raw"
        -device "scsi-hd,drive=scsi0d,bus=scsi0.0,serial=DT-SCSI-0"
        -drive "if=none,id=vblk0,file=$work/virtio.img,format=raw$virtio0_throttle"
        -device "virtio-blk-pci,drive=vblk0,serial=DT-VIRTIO-0"
    )
    local images=(sata nvme scsi virtio) expect=4 console_args=(-monitor none) video=
    case "$diskset" in
        console | fbcon)
            [ "$diskset" = fbcon ] && video=" video=1024x768"
            rm -f "$work/monitor.sock" "$work/control.sock"
            console_args=(
                -vga std
                -monitor "unix:$work/monitor.sock,server=on,wait=off"
                -chardev "socket,id=control,path=$work/control.sock,server=on,wait=off"
                -device "isa-serial,chardev=control"
            )
            ;;
        standard)
            disks+=(
                -drive "if=none,id=nvme1,file=$work/nvmewarn.img,format=raw"
                -device "nvme,drive=nvme1,serial=DT-NVME-WARN,smart_critical_warning=4"
            )
            images+=(nvmewarn)
            # Several disks at once (multi-guest.sh): two at 30 MB/s and one at a third of
            # that, throttled by QEMU.
            local m bps
            for m in 0 1 2; do
                bps=30000000
                [ "$m" = 2 ] && bps=10000000
                disks+=(
                    -drive "if=none,id=multi$m,file=$work/multi$m.img,format=raw,throttling.bps-total=$bps"
                    -device "virtio-blk-pci,drive=multi$m,serial=DT-MULTI-$m"
                )
                images+=("multi$m")
            done
            expect=8
            ;;
        capture)
            disks+=(
                -device qemu-xhci,id=xhci
                -drive "if=none,id=usb0,file=$work/usb.img,format=raw"
                -device "usb-storage,bus=xhci.0,drive=usb0,serial=DT-USB-0"
            )
            images+=(usb)
            local i
            for i in 1 2 3; do
                disks+=(
                    -drive "if=none,id=vx$i,file=$work/extra$i.img,format=raw"
                    -device "virtio-blk-pci,drive=vx$i,serial=DT-EXTRA-$i"
                )
                images+=("extra$i")
            done
            expect=9
            ;;
        triage)
            # tests/vm/triage-guest.sh: an NVMe whose controller reports "reliability
            # degraded" (critical warning bit 2), and two more virtio disks the size of
            # DT-VIRTIO-0. QEMU throttles the three: DT-VIRTIO-0 and -1 at 32 MB/s, DT-VIRTIO-2,
            # the outlier among its equal siblings, at a quarter of that. (The fast two are
            # throttled too, so their speed does not depend on how busy the emulating host
            # and the guest's one CPU are: the outlier rule compares them with each other.)
            disks+=(
                -drive "if=none,id=nvme1,file=$work/nvmewarn.img,format=raw"
                -device "nvme,drive=nvme1,serial=DT-NVME-WARN,smart_critical_warning=4"
            )
            images+=(nvmewarn)
            local v bps
            for v in 1 2; do
                bps=32000000
                [ "$v" = 2 ] && bps=8000000
                disks+=(
                    -drive "if=none,id=vblk$v,file=$work/virtio$v.img,format=raw,throttling.bps-total=$bps"
                    -device "virtio-blk-pci,drive=vblk$v,serial=DT-VIRTIO-$v"
                )
                images+=("virtio$v")
            done
            expect=7
            ;;
        # tests/vm/discard-guest.sh: the four disks alone (QEMU's default discard=ignore).
        discard) ;;
        # tests/vm/zoned-guest.sh: the four disks, the SATA one at 7,200 rpm (above).
        zoned) ;;
        *) echo "unknown disk set $diskset" >&2; return 2 ;;
    esac
    local img
    for img in "${images[@]}"; do
        rm -f "$work/$img.img"
        truncate -s 256M "$work/$img.img"
    done
    # Hooks may prepare disk images (a partition table, say) before the boot.
    if [ -n "${LAB_PREPARE:-}" ]; then
        WORK="$work" bash -c "$LAB_PREPARE"
    fi
    build_initramfs "$work" "$script" "$diskset" "$kver" "$expect"

    rm -f "$work/results.log" "$work/console.log"
    timeout "${LAB_TIMEOUT:-600}" qemu-system-x86_64 \
        -accel tcg -M q35 -cpu max -m 1024 -smp 1 \
        -display none -no-reboot \
        -serial "file:$work/console.log" -serial "file:$work/results.log" \
        -kernel "/boot/vmlinuz-$kver" -initrd "$work/initramfs.cpio.gz" \
        -append "console=ttyS0 panic=-1 loglevel=4$video" \
        "${disks[@]}" "${console_args[@]}" || {
        echo "qemu failed or timed out; console tail:" >&2
        tail -n 30 "$work/console.log" >&2 || true
        return 1
    }
    grep -q '^===== LAB END' "$work/results.log"
}

case "${1:-}" in
    check) check ;;
    run) shift; run "$@" ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
esac
