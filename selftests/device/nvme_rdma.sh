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
. "$SOFTRMA_TOP/selftests/nvme.sh"

WORK=/tmp/ulp-nvme
NS_MB=64

# teardown STRICT: undo everything, each step bounded; with STRICT=1 any
# step that fails is reported as a failure.
teardown() {
	problems=$(nvme_host_down; nvme_target_down; nvme_modules_down)
	ulp_teardown_end "$1" "${problems:+; $(echo $problems)}"
}
trap 'rc=$?; trap - EXIT; teardown 0; exit $rc' EXIT

ulp_dev_up
nvme_modules

# The target: a namespace on a tmpfs file, a port on RDMA.
ulp_tmpfs "$WORK" $((NS_MB + 32))
truncate -s "${NS_MB}M" "$WORK/ns1.img" || fail "truncate"
nvme_target_up "$ULP_IP" "$WORK/ns1.img"

# The host.
nvme_host_up "$ULP_IP"
# An admin queue and an I/O queue at least, each a QP of the host and one
# of the target.
[ "$(ulp_kernel_qps | grep -c 'type RC state RTS')" -ge 4 ] ||
	fail "not the host's and the target's QPs on $ULP_DEV: $(ulp_kernel_qps)"
expect_eq "$dev size" "$(blockdev --getsize64 "$dev")" $((NS_MB << 20))

ulp_check_block "$dev" "$WORK/ns1.img"

trap - EXIT
teardown 1
info "disconnected, target removed, $NVME_MODULES unloaded, no QP left"
