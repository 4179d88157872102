#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# NVMe over Fabrics on RDMA, target and host in one guest, over the device
# under test (selftests/ulp.sh: softrma0, or rxe0 with ULP_DEV_TYPE=rxe).
# The kernel's nvmet + nvmet-rdma target, set up through configfs, exports a
# 64 MiB namespace backed by a file on a tmpfs (nvmet's file backend with
# buffered_io: the data stays, unlike null_blk's); nvme-cli connects the
# kernel's nvme-rdma host to it on 10.9.0.1:4420.  Then:
#  - fio writes and verifies (crc32c in every block) with 4k, 32k, 128k and
#    1m blocks at queue depth 8, so that the host registers multi-page
#    scatter lists with fast registration and the target RDMA-reads and
#    RDMA-writes them (ulp_check_block in selftests/ulp.sh);
#  - random data written through the block device with O_DIRECT is compared
#    with the target's backing file, and read back over the fabric and
#    compared again;
#  - disconnect, target teardown through configfs, nvme-rdma, nvmet-rdma and
#    nvmet unloaded, and no QP of theirs left on the device.
# Every step is bounded.  On a device without fast registration nvme-rdma
# refuses it ("Memory registrations not supported"): nvme connect fails.
# timeout: 900 s
. "$(dirname "$0")/../lib.sh"
. "$SOFTRMA_TOP/selftests/ulp.sh"

NQN=nqn.2014-08.org.softrma:ulp-nvme
CFG=/sys/kernel/config/nvmet
PORT=$CFG/ports/1
SUBSYS=$CFG/subsystems/$NQN
WORK=/tmp/ulp-nvme
NS_MB=64
MODULES="nvme_rdma nvme_fabrics nvmet_rdma nvmet"

connected() { [ -n "$(nvme_controllers)" ]; }

# nvme_controllers: the host's controllers of $NQN.
nvme_controllers() {
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] && [ "$(cat "$c/subsysnqn")" = "$NQN" ] && basename "$c"
	done
}

# nvme_namespace: the block device of $NQN's namespace 1 (the multipath
# head nvmeXnY, or the controller's own disk without multipath).
nvme_namespace() {
	for b in /sys/block/nvme*n*; do
		[ -e "$b" ] || continue
		case ${b##*/} in *c*) continue ;; esac	# a hidden path
		[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
		[ -b "/dev/${b##*/}" ] && echo "/dev/${b##*/}" && return 0
	done
	return 1
}

# teardown STRICT: undo everything, each step bounded; with STRICT=1 any
# step that fails is reported as a failure.
teardown() {
	problems=
	if connected; then
		timeout "$(bound 60)" nvme disconnect -n "$NQN" > /tmp/nvme-disconnect.log 2>&1 ||
			problems="$problems; nvme disconnect: $(tail -n 2 /tmp/nvme-disconnect.log)"
		ulp_wait 30 sh -c "! ls /sys/class/nvme/nvme* >/dev/null 2>&1" ||
			problems="$problems; controllers left: $(nvme_controllers)"
	fi
	if [ -d "$PORT" ]; then
		rm -f "$PORT/subsystems/$NQN"
		timeout "$(bound 60)" rmdir "$PORT" || problems="$problems; rmdir port"
	fi
	if [ -d "$SUBSYS" ]; then
		[ -d "$SUBSYS/namespaces/1" ] && echo 0 > "$SUBSYS/namespaces/1/enable"
		rmdir "$SUBSYS/namespaces/1" 2>/dev/null
		rmdir "$SUBSYS" || problems="$problems; rmdir subsystem"
	fi
	# modprobe -r takes the unused dependencies too (nvme_core, ...).
	timeout "$(bound 60)" modprobe -r nvme_rdma nvmet_rdma nvmet ||
		problems="$problems; modprobe -r"
	left=$(ulp_modules_gone $MODULES) || problems="$problems; $left"
	[ -z "$ULP_DEV" ] || [ -z "$(ulp_kernel_qps)" ] ||
		problems="$problems; QPs left on $ULP_DEV: $(ulp_kernel_qps)"
	mountpoint -q "$WORK" && umount "$WORK"
	ulp_dev_down || problems="$problems; removing $ULP_DEV"
	[ "$1" = 0 ] || [ -z "$problems" ] || fail "teardown${problems}"
}
trap 'rc=$?; trap - EXIT; teardown 0; exit $rc' EXIT

command -v nvme > /dev/null && command -v fio > /dev/null ||
	skip "nvme-cli or fio is not installed (scripts/deps.sh)"
ulp_dev_up
timeout "$(bound 60)" modprobe -a nvmet nvmet_rdma nvme_rdma || fail "modprobe nvmet nvmet_rdma nvme_rdma"
ulp_configfs
[ -d "$CFG" ] || fail "no $CFG"

# The target: a namespace on a tmpfs file, a port on RDMA.
ulp_tmpfs "$WORK" $((NS_MB + 32))
truncate -s "${NS_MB}M" "$WORK/ns1.img" || fail "truncate"
mkdir "$SUBSYS" || fail "mkdir $SUBSYS"
echo 1 > "$SUBSYS/attr_allow_any_host" || fail "attr_allow_any_host"
mkdir "$SUBSYS/namespaces/1" || fail "mkdir namespace"
printf %s "$WORK/ns1.img" > "$SUBSYS/namespaces/1/device_path" || fail "device_path"
# tmpfs takes no O_DIRECT before 6.6: the file backend buffered.
echo 1 > "$SUBSYS/namespaces/1/buffered_io" || fail "buffered_io"
echo 1 > "$SUBSYS/namespaces/1/enable" || fail "enable the namespace"
mkdir "$PORT" || fail "mkdir $PORT"
echo rdma > "$PORT/addr_trtype" && echo ipv4 > "$PORT/addr_adrfam" &&
	echo "$ULP_IP" > "$PORT/addr_traddr" && echo 4420 > "$PORT/addr_trsvcid" ||
	fail "port attributes"
ln -s "$SUBSYS" "$PORT/subsystems/$NQN" || ulp_fail "nvmet-rdma does not listen on $ULP_IP:4420"
info "target: $NQN on rdma $ULP_IP:4420, namespace 1 on $WORK/ns1.img (${NS_MB} MiB)"

# The host.
if ! timeout "$(bound 120)" nvme connect -t rdma -a "$ULP_IP" -s 4420 -n "$NQN" \
		> /tmp/nvme-connect.log 2>&1; then
	ulp_fail "nvme connect -t rdma -a $ULP_IP -s 4420: $(tail -n 2 /tmp/nvme-connect.log | tr '\n' ' ')"
fi
ulp_wait 30 nvme_namespace > /dev/null || ulp_fail "connected, but no block device for $NQN"
dev=$(nvme_namespace)
ctrl=$(nvme_controllers | head -n 1)
info "host: $ctrl ($(cat "/sys/class/nvme/$ctrl/transport") $(cat "/sys/class/nvme/$ctrl/address")), $dev," \
	"max_hw_sectors_kb $(cat "/sys/block/${dev#/dev/}/queue/max_hw_sectors_kb")," \
	"$(ulp_kernel_qps | grep -c .) kernel QPs on $ULP_DEV"
[ "$(cat "/sys/class/nvme/$ctrl/transport")" = rdma ] || fail "$ctrl is not over rdma"
# An admin queue and an I/O queue at least, each a QP of the host and one
# of the target.
[ "$(ulp_kernel_qps | grep -c 'type RC state RTS')" -ge 4 ] ||
	fail "not the host's and the target's QPs on $ULP_DEV: $(ulp_kernel_qps)"
expect_eq "$dev size" "$(blockdev --getsize64 "$dev")" $((NS_MB << 20))

ulp_check_block "$dev" "$WORK/ns1.img"

trap - EXIT
teardown 1
info "disconnected, target removed, $MODULES unloaded, no QP left"
