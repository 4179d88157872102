#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# iSCSI Extensions for RDMA (iSER), target and initiator in one guest, over
# the device under test (selftests/ulp.sh: softrma0, or rxe0 with
# ULP_DEV_TYPE=rxe).
#  - The target is the kernel's LIO, set up through configfs directly (what
#    targetcli does, without its Python layers): a 64 MiB fileio LUN on a
#    tmpfs file, a portal on 10.9.0.1:3260 with iSER enabled (ib_isert), no
#    authentication, ACLs generated for any initiator.
#  - The initiator is open-iscsi: iscsid started by hand (the guest has no
#    init system), an iface with iface.transport_name=iser, SendTargets
#    discovery (over TCP, which the portal offers as well), then login
#    through that iface: the kernel's ib_iser, which registers every
#    command's pages with fast registration.
#  - fio writes and verifies (crc32c) with 4k to 1m blocks at queue depth 8
#    on the new SCSI disk; random data written with O_DIRECT is compared
#    with the LUN's backing file and read back and compared again
#    (ulp_check_block in selftests/ulp.sh).
#  - logout, node records, iface and daemon gone, target removed through
#    configfs, ib_iser, ib_isert and the LIO modules unloaded, no QP left.
# On a device without fast registration ib_iser refuses it: login fails.
# timeout: 900 s
. "$(dirname "$0")/../lib.sh"
. "$SOFTRMA_TOP/selftests/ulp.sh"

IQN=iqn.2003-01.org.softrma:ulp-iser
T=/sys/kernel/config/target
TPG=$T/iscsi/$IQN/tpgt_1
NP=$TPG/np/$ULP_IP:3260
BACKSTORE=$T/core/fileio_0/ulp_lun0
IFACE=ulp_iser
PORTAL=$ULP_IP:3260
WORK=/tmp/ulp-iser
LUN_MB=64
INITIATOR_MODULES="ib_iser iscsi_tcp libiscsi_tcp libiscsi scsi_transport_iscsi"
# target_core_mod loads its iblock, pscsi and user backends itself.
TARGET_MODULES="ib_isert iscsi_target_mod target_core_file target_core_iblock \
	target_core_pscsi target_core_user target_core_mod"
iscsid_pid=

logged_in() { iscsiadm -m session 2>/dev/null | grep -q "$IQN"; }

# iser_disk: the SCSI disk of the session with $IQN.
iser_disk() {
	disk=$(iscsiadm -m session -P 3 2>/dev/null |
		sed -n 's/.*Attached scsi disk \([a-z]*\).*/\1/p' | head -n 1)
	[ -n "$disk" ] && [ -b "/dev/$disk" ] && echo "/dev/$disk"
}

teardown() {
	problems=
	if logged_in; then
		timeout "$(bound 120)" iscsiadm -m node -T "$IQN" -p "$PORTAL" -I "$IFACE" --logout \
			> /tmp/iscsi-logout.log 2>&1 ||
			problems="$problems; logout: $(tail -n 1 /tmp/iscsi-logout.log)"
		ulp_wait 30 sh -c "! iscsiadm -m session > /dev/null 2>&1" ||
			problems="$problems; sessions left: $(iscsiadm -m session 2>&1 | head -n 2)"
	fi
	if [ -n "$iscsid_pid" ]; then
		timeout "$(bound 30)" iscsiadm -m node -o delete > /dev/null 2>&1
		timeout "$(bound 30)" iscsiadm -m discoverydb -t sendtargets -p "$PORTAL" -o delete > /dev/null 2>&1
		timeout "$(bound 30)" iscsiadm -m iface -I "$IFACE" -o delete > /dev/null 2>&1
		kill "$iscsid_pid" 2>/dev/null
		timeout 10 sh -c "while kill -0 $iscsid_pid 2>/dev/null; do sleep 0.1; done" ||
			kill -KILL "$iscsid_pid"
		iscsid_pid=
	fi
	# The target, in the reverse order of its making.
	[ -e "$TPG/enable" ] && echo 0 > "$TPG/enable"
	if [ -d "$NP" ]; then
		[ "$(cat "$NP/iser" 2>/dev/null)" = 1 ] && echo 0 > "$NP/iser"
		rmdir "$NP" || problems="$problems; rmdir np"
	fi
	if [ -d "$TPG/lun/lun_0" ]; then
		rm -f "$TPG/lun/lun_0/ulp_lun0"
		rmdir "$TPG/lun/lun_0" || problems="$problems; rmdir lun_0"
	fi
	[ -d "$TPG" ] && { rmdir "$TPG" || problems="$problems; rmdir tpgt_1"; }
	[ -d "$T/iscsi/$IQN" ] && { rmdir "$T/iscsi/$IQN" || problems="$problems; rmdir $IQN"; }
	[ -d "$T/iscsi" ] && rmdir "$T/iscsi"
	[ -d "$BACKSTORE" ] && { rmdir "$BACKSTORE" || problems="$problems; rmdir backstore"; }
	[ -d "$T/core/fileio_0" ] && rmdir "$T/core/fileio_0"
	# The backends this kernel has (the debug kernel builds no pscsi, user).
	built=$(for m in $INITIATOR_MODULES $TARGET_MODULES; do
		modinfo "$m" > /dev/null 2>&1 && echo "$m"
	done)
	timeout "$(bound 60)" modprobe -r $built ||
		problems="$problems; modprobe -r: $(grep -E '^(target|iscsi|ib_iser)' /proc/modules | cut -d' ' -f1,3,4 | tr '\n' ' ') $(ls $T $T/core 2>&1 | tr '\n' ' ')"
	modprobe -r sd_mod 2>/dev/null
	left=$(ulp_modules_gone $INITIATOR_MODULES $TARGET_MODULES) || problems="$problems; $left"
	ulp_teardown_end "$1" "$problems"
}
trap 'rc=$?; trap - EXIT; teardown 0; exit $rc' EXIT

for t in iscsiadm iscsid fio; do
	command -v $t > /dev/null || skip "$t is not installed (open-iscsi, fio: scripts/deps.sh)"
done
ulp_dev_up
timeout "$(bound 60)" modprobe -a target_core_mod target_core_file iscsi_target_mod ib_isert \
	ib_iser sd_mod || fail "modprobe the LIO target, ib_isert, ib_iser, sd_mod"
ulp_configfs
[ -d "$T" ] || fail "no $T"

# The target.
ulp_tmpfs "$WORK" $((LUN_MB + 32))
truncate -s "${LUN_MB}M" "$WORK/lun0.img" || fail "truncate"
mkdir -p "$BACKSTORE" || fail "mkdir $BACKSTORE"
echo "fd_dev_name=$WORK/lun0.img,fd_dev_size=$((LUN_MB << 20))" > "$BACKSTORE/control" &&
	echo 1 > "$BACKSTORE/enable" || fail "fileio backstore"
mkdir -p "$TPG/lun/lun_0" || fail "mkdir $TPG/lun/lun_0"
ln -s "$BACKSTORE" "$TPG/lun/lun_0/ulp_lun0" || fail "LUN 0"
mkdir "$NP" || fail "portal $PORTAL"
echo 1 > "$NP/iser" || ulp_fail "iSER on the portal $PORTAL (ib_isert)"
echo 0 > "$TPG/attrib/authentication" &&
	echo 1 > "$TPG/attrib/generate_node_acls" &&
	echo 1 > "$TPG/attrib/cache_dynamic_acls" &&
	echo 0 > "$TPG/attrib/demo_mode_write_protect" &&
	echo 1 > "$TPG/enable" || fail "tpgt_1 attributes"
info "target: $IQN, LUN 0 on $WORK/lun0.img (${LUN_MB} MiB), portal $PORTAL with iser=$(cat "$NP/iser")"

# The initiator.
mkdir -p /run/lock/iscsi
# A session of its own: iscsid ends with a SIGTERM to its whole process
# group, which would be this test's too.
rm -f /run/iscsid.pid
setsid iscsid -f > /tmp/iscsid.log 2>&1 &
iscsid_pid=$!
ulp_wait 20 sh -c 'iscsiadm -m iface > /dev/null 2>&1' || fail "iscsid does not answer: $(cat /tmp/iscsid.log)"
[ -s /run/iscsid.pid ] && iscsid_pid=$(cat /run/iscsid.pid)
timeout "$(bound 30)" iscsiadm -m iface -I "$IFACE" -o new > /dev/null &&
	timeout "$(bound 30)" iscsiadm -m iface -I "$IFACE" -o update \
		-n iface.transport_name -v iser > /dev/null || fail "iscsiadm iface $IFACE"
timeout "$(bound 60)" iscsiadm -m discovery -t sendtargets -p "$PORTAL" > /tmp/iscsi-disc.log 2>&1 ||
	fail "discovery on $PORTAL: $(tail -n 2 /tmp/iscsi-disc.log)"
grep -q "$IQN" /tmp/iscsi-disc.log || fail "discovery: no $IQN: $(cat /tmp/iscsi-disc.log)"
timeout "$(bound 30)" iscsiadm -m node -T "$IQN" -p "$PORTAL" -I "$IFACE" -o new > /dev/null ||
	fail "iscsiadm node record on $IFACE"
# A login that cannot succeed is tried 8 times by default: twice here.
timeout "$(bound 30)" iscsiadm -m node -T "$IQN" -p "$PORTAL" -I "$IFACE" -o update \
	-n node.session.initial_login_retry_max -v 2 > /dev/null || fail "iscsiadm node update"
timeout "$(bound 120)" iscsiadm -m node -T "$IQN" -p "$PORTAL" -I "$IFACE" --login \
	> /tmp/iscsi-login.log 2>&1
rc=$?
[ "$rc" = 124 ] && echo "(timed out)" >> /tmp/iscsi-login.log
[ "$rc" = 0 ] || ulp_fail "login over iser: $(tr "\n" " " < /tmp/iscsi-login.log | cut -c 1-400)"
session=$(iscsiadm -m session | grep "$IQN")
case $session in iser:*) ;; *) fail "the session is not over iser: $session" ;; esac
ulp_wait 30 iser_disk > /dev/null || ulp_fail "logged in, but no SCSI disk: $(iscsiadm -m session -P 3 | tail -n 5)"
dev=$(iser_disk)
info "initiator: $session, $dev, max_sectors_kb $(cat "/sys/block/${dev#/dev/}/queue/max_sectors_kb")," \
	"$(ulp_kernel_qps | grep -c .) kernel QPs on $ULP_DEV"
[ "$(ulp_kernel_qps | grep -c 'type RC state RTS')" -ge 2 ] ||
	fail "no QPs of ib_iser and ib_isert on $ULP_DEV: $(ulp_kernel_qps)"
expect_eq "$dev size" "$(blockdev --getsize64 "$dev")" $((LUN_MB << 20))

ulp_check_block "$dev" "$WORK/lun0.img"

trap - EXIT
teardown 1
info "logged out, target removed, ib_iser, ib_isert and LIO unloaded, no QP left"
