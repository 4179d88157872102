#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# SCSI RDMA Protocol (SRP), target and initiator in one guest, over the
# device under test (selftests/ulp.sh: softrma0, or rxe0 with
# ULP_DEV_TYPE=rxe), logging in through the RDMA/CM as on RoCE.
#  - The target is the kernel's LIO with ib_srpt, set up through configfs:
#    a 64 MiB fileio LUN on a tmpfs file; the target port named after the
#    device's port GUID (from GID 0), its RDMA/CM listener on port 5555, an
#    ACL for the initiator, which ib_srpt names by its source address.
#  - The initiator is the kernel's ib_srp, given an explicit target through
#    /sys/class/infiniband_srp/srp-DEV-1/add_target (id_ext and ioc_guid
#    from ib_srpt's srpt_service_guid, dest=10.9.0.1:5555); no srp_daemon.
#  - fio writes and verifies (crc32c) with 4k to 1m blocks at queue depth 8
#    on the new SCSI disk; random data written with O_DIRECT is compared
#    with the LUN's backing file and read back and compared again
#    (ulp_check_block in selftests/ulp.sh).
#  - the remote port deleted, target removed through configfs, ib_srp,
#    ib_srpt and the LIO modules unloaded, no QP left.
# ib_srp registers memory with fast registration where the device has it;
# without, it falls back to the PD's global rkey (IB_PD_UNSAFE_GLOBAL_RKEY,
# "FR is not supported" in the kernel log), so this test does not need fast
# registration.
# timeout: 900 s
. "$(dirname "$0")/../lib.sh"
. "$SOFTRMA_TOP/selftests/ulp.sh"

T=/sys/kernel/config/target
BACKSTORE=$T/core/fileio_1/ulp_srp0
CM_PORT=5555
WORK=/tmp/ulp-srp
LUN_MB=64
INITIATOR_MODULES="ib_srp scsi_transport_srp"
TARGET_MODULES="ib_srpt target_core_file target_core_iblock target_core_pscsi \
	target_core_user target_core_mod"
TPORT= TPG=

# srp_host: the SCSI host of ib_srp (e.g. host0).
srp_host() {
	for h in /sys/class/scsi_host/host*; do
		[ "$(cat "$h/proc_name" 2>/dev/null)" = ib_srp ] && basename "$h" && return 0
	done
	return 1
}

# srp_disk: the block device of the SRP LUN.
srp_disk() {
	h=$(srp_host) || return 1
	for b in /sys/class/scsi_host/"$h"/device/target*/*/block/*; do
		[ -b "/dev/${b##*/}" ] && echo "/dev/${b##*/}" && return 0
	done
	return 1
}

logged_in() { ls /sys/class/srp_remote_ports/* > /dev/null 2>&1; }

teardown() {
	problems=
	if logged_in; then
		for p in /sys/class/srp_remote_ports/*; do
			echo 1 > "$p/delete"
		done
		ulp_wait 60 sh -c '! ls /sys/class/srp_remote_ports/* > /dev/null 2>&1' ||
			problems="$problems; remote ports left: $(ls /sys/class/srp_remote_ports)"
	fi
	if [ -n "$TPG" ] && [ -d "$TPG" ]; then
		echo 0 > "$TPG/enable"
		rm -f "$TPG/acls/$ULP_IP/lun_0/ulp_lun0"
		rmdir "$TPG/acls/$ULP_IP/lun_0" "$TPG/acls/$ULP_IP" 2>/dev/null
		rm -f "$TPG/lun/lun_0/ulp_srp0"
		rmdir "$TPG/lun/lun_0" 2>/dev/null
		rmdir "$TPG" || problems="$problems; rmdir tpg"
	fi
	[ -n "$TPORT" ] && [ -d "$T/srpt/$TPORT" ] &&
		{ rmdir "$T/srpt/$TPORT" || problems="$problems; rmdir the target port"; }
	[ -d "$T/srpt" ] && rmdir "$T/srpt"
	[ -d "$BACKSTORE" ] && { rmdir "$BACKSTORE" || problems="$problems; rmdir backstore"; }
	[ -d "$T/core/fileio_1" ] && rmdir "$T/core/fileio_1"
	ulp_wait 30 sh -c "modprobe -r $INITIATOR_MODULES $TARGET_MODULES 2>/dev/null;
			! grep -qE '^(ib_srp|ib_srpt|target_core_mod) ' /proc/modules" ||
		problems="$problems; modprobe -r: $(modprobe -r $INITIATOR_MODULES $TARGET_MODULES 2>&1 | head -n 1)"
	modprobe -r sd_mod 2>/dev/null
	left=$(ulp_modules_gone $INITIATOR_MODULES $TARGET_MODULES) || problems="$problems; $left"
	ulp_teardown_end "$1" "$problems"
}
trap 'rc=$?; trap - EXIT; teardown 0; exit $rc' EXIT

command -v fio > /dev/null || skip "fio is not installed (scripts/deps.sh)"
ulp_dev_up
timeout "$(bound 60)" modprobe -a target_core_mod target_core_file ib_srpt ib_srp sd_mod ||
	fail "modprobe the LIO target, ib_srpt, ib_srp, sd_mod"
ulp_configfs
[ -d "$T" ] || fail "no $T"

# The target.
gid0=$(cat "/sys/class/infiniband/$ULP_DEV/ports/1/gids/0")
case $gid0 in fe80:0000:0000:0000:*) ;; *) fail "GID 0 of $ULP_DEV is not link-local: $gid0" ;; esac
TPORT=${gid0#fe80:0000:0000:0000:}	# ib_srpt's port GUID name
TPG=$T/srpt/$TPORT/$TPORT
ulp_tmpfs "$WORK" $((LUN_MB + 32))
truncate -s "${LUN_MB}M" "$WORK/lun0.img" || fail "truncate"
mkdir -p "$BACKSTORE" || fail "mkdir $BACKSTORE"
echo "fd_dev_name=$WORK/lun0.img,fd_dev_size=$((LUN_MB << 20))" > "$BACKSTORE/control" &&
	echo 1 > "$BACKSTORE/enable" || fail "fileio backstore"
mkdir "$T/srpt" || fail "mkdir $T/srpt"
echo "$CM_PORT" > "$T/srpt/discovery_auth/rdma_cm_port" ||
	ulp_fail "ib_srpt does not listen on RDMA/CM port $CM_PORT"
mkdir "$T/srpt/$TPORT" || fail "no ib_srpt port $TPORT on $ULP_DEV"
mkdir "$TPG" && mkdir "$TPG/lun/lun_0" && ln -s "$BACKSTORE" "$TPG/lun/lun_0/ulp_srp0" ||
	fail "LUN 0"
# ib_srpt names an initiator that logged in through the RDMA/CM by its
# source address.
mkdir "$TPG/acls/$ULP_IP" && mkdir "$TPG/acls/$ULP_IP/lun_0" &&
	ln -s "$TPG/lun/lun_0" "$TPG/acls/$ULP_IP/lun_0/ulp_lun0" || fail "ACL for $ULP_IP"
echo 1 > "$TPG/enable" || fail "enable the target port group"
guid=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid)
info "target: ib_srpt port $TPORT, LUN 0 on $WORK/lun0.img (${LUN_MB} MiB), RDMA/CM port $CM_PORT, service GUID $guid"

# The initiator.
add=/sys/class/infiniband_srp/srp-$ULP_DEV-1/add_target
[ -e "$add" ] || fail "no $add"
gid_pfx=$(echo "$gid0" | tr -d : | cut -c 1-16)
params="id_ext=$guid,ioc_guid=$guid,initiator_ext=$gid_pfx,src=$ULP_IP,dest=$ULP_IP:$CM_PORT"
if ! timeout "$(bound 120)" sh -c "echo '$params' > '$add'" 2> /tmp/srp-add.log; then
	ulp_fail "add_target $params: $(cat /tmp/srp-add.log)"
fi
ulp_wait 30 srp_disk > /dev/null || ulp_fail "logged in, but no SCSI disk"
dev=$(srp_disk)
host=$(srp_host)
info "initiator: $host ($(ls /sys/class/srp_remote_ports)), $dev," \
	"max_sectors_kb $(cat "/sys/block/${dev#/dev/}/queue/max_sectors_kb")," \
	"$(ulp_kernel_qps | grep -c .) kernel QPs on $ULP_DEV"
[ "$(ulp_kernel_qps | grep -c 'type RC state RTS')" -ge 2 ] ||
	fail "no QPs of ib_srp and ib_srpt on $ULP_DEV: $(ulp_kernel_qps)"
expect_eq "$dev size" "$(blockdev --getsize64 "$dev")" $((LUN_MB << 20))
ulp_klog | grep -q 'FR is not supported' &&
	info "ib_srp: no fast registration on $ULP_DEV, it uses the PD's global rkey"

ulp_check_block "$dev" "$WORK/lun0.img"

trap - EXIT
teardown 1
info "logged out, target removed, ib_srp, ib_srpt and LIO unloaded, no QP left"
