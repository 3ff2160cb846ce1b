#!/bin/sh
# Guest side of tests/lab/qemu_lab_console.rs: the interactive screen on the kernel's own
# console (tests/vm/lab.sh, disk set `console`: vgacon in 80x25 text mode, no framebuffer).
#
# tty1 is filled with earlier output first, enough to scroll, as an admin's console holds it
# (a boot log, an `ls -l`): a cell the program does not draw would show it. Then disktriage
# runs on tty1 as the admin would start it (its own session, tty1 its controlling terminal,
# TERM=linux), and after it exits the shell prints `AFTER rc=N` there.
#
# The host drives it: keys through QEMU's monitor (`sendkey`), and requests on the third
# serial port (ttyS2, the host's WORKDIR/control.sock), one per line:
#     ping          -> pong
#     dump NAME     -> "screen NAME", one line of hex: /dev/vcsa1 (4 header bytes: rows,
#                      columns, cursor column and row; then a character and an attribute byte
#                      per cell, the characters as font positions: CP437 on vgacon), "end NAME"
#     done          -> bye, and the guest powers off
set -u

exec 5<>/dev/ttyS2
stty -F /dev/ttyS2 raw -echo 2>/dev/null

# Earlier output: more lines than the screen has, so the console scrolls.
i=0
while [ $i -lt 30 ]; do
    echo "EARLIER-OUTPUT line $i: [    1.234567] ata1.00: ATA-8: QEMU HARDDISK, 2.5+, max UDMA/100"
    i=$((i + 1))
done > /dev/tty1
ls -l /bin | head -n 40 > /dev/tty1

echo "===== CONSOLE"
cat /sys/class/vtconsole/vtcon*/name 2>/dev/null
head -c 4 /dev/vcsa1 | od -An -tu1
setsid sh -c 'exec </dev/tty1 >/dev/tty1 2>&1
TERM=linux /bin/disktriage --history-dir /tmp/history
echo "AFTER rc=$?"' &

while read -r cmd name <&5; do
    case "$cmd" in
        ping) echo pong >&5 ;;
        dump)
            {
                echo "screen $name"
                od -An -v -tx1 /dev/vcsa1 | tr -d ' \n'
                echo
                echo "end $name"
            } >&5
            ;;
        done)
            echo bye >&5
            break
            ;;
    esac
done
echo "rc=0"
