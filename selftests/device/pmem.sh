#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# RDMA FLUSH to persistent memory on an emulated NVDIMM (selftests/vm/run -p,
# which make check gives its guest): a devdax namespace made with ndctl,
# /proc/iomem showing it as persistent memory, and verbs/pmem on it, on the
# local transport and in packets (force_wire): an MR over /dev/dax0.0 takes
# FLUSH_PERSISTENT where DRAM refuses it, and each FLUSH to persistence
# writes its range back and is counted with its bytes.  Then the same with
# each persistence domain (Documentation/noncoherent.md), where the device's
# power failure puts back, in cache mode, what no FLUSH made durable; the
# settings' refusals, and a user cannot make the power fail.
. "$(dirname "$0")/../lib.sh"

modprobe -a nfit libnvdimm nd_pmem dax_pmem device_dax 2>/dev/null ||
	skip "$(uname -r) has no NVDIMM drivers"
[ -d /sys/bus/nd/devices/region0 ] ||
	skip "no NVDIMM: boot the guest with selftests/vm/run -p (make check does)"
command -v ndctl >/dev/null || fail "ndctl missing (make deps)"
{
	ndctl disable-region all && ndctl init-labels -f all &&
		ndctl enable-region all &&
		ndctl create-namespace -r region0 -m devdax -a 4K
} > /tmp/ndctl.log 2>&1 || fail "ndctl: $(tail -n 3 /tmp/ndctl.log)"
[ -c /dev/dax0.0 ] || fail "no /dev/dax0.0: $(tail -n 3 /tmp/ndctl.log)"
grep -q "Persistent Memory" /proc/iomem || fail "no persistent memory in /proc/iomem"

add_softrma0
params=/sys/module/softrma/parameters
sys=/sys/class/infiniband/softrma0
expect_eq "persistence by default" "$(cat $sys/persistence)" off
echo dram > $sys/persistence 2>/dev/null && fail "persistence took dram"
echo 1 > $sys/noncoherent || fail "noncoherent"
echo cache > $sys/persistence 2>/dev/null && fail "persistence with noncoherent"
echo 0 > $sys/noncoherent || fail "noncoherent off"
as_user 65534 sh -c "echo 1 > $sys/power_fail" 2>/dev/null &&
	fail "a user made the power fail"
for domain in off cache adr; do
	echo $domain > $sys/persistence || fail "persistence $domain"
	expect_eq "persistence" "$(cat $sys/persistence)" $domain
	[ $domain = off ] || { echo 1 > $sys/noncoherent 2>/dev/null &&
		fail "noncoherent with persistence $domain"; }
	for wire in 0 1; do
		echo $wire > $params/force_wire
		SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/pmem" /dev/dax0.0 $domain
		rc=$?
		echo 0 > $params/force_wire
		[ $rc = 0 ] || fail "pmem, persistence $domain, force_wire=$wire"
	done
done
echo off > $sys/persistence || fail "persistence off"
info "$(rdma statistic show link softrma0/1 | grep -o '\(flush_persistent\|written_back_bytes\|power_fail_lost_bytes\|undo_log_overflows\) [0-9]*' | tr '\n' ' ')"
rdma link delete softrma0 || fail "rdma link delete softrma0"
ndctl destroy-namespace -f all > /dev/null 2>&1 || fail "ndctl destroy-namespace"
