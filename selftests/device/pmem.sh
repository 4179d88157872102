#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# RDMA FLUSH to persistent memory on an emulated NVDIMM (selftests/vm/run -p,
# which make check gives its guest): a devdax namespace made with ndctl,
# /proc/iomem showing it as persistent memory, and verbs/pmem on it, on the
# local transport and in packets (force_wire): an MR over /dev/dax0.0 takes
# FLUSH_PERSISTENT where DRAM refuses it, and each FLUSH to persistence
# writes its range back and is counted with its bytes.  Then the same with
# each persistence domain (Documentation/noncoherent.md), where the device's
# power failure puts back, in cache mode, what no FLUSH made durable, and
# Debian's librpma, on a server that declares direct write to pmem, keeps
# its data with adr and loses it with cache; the settings' refusals, and a
# user cannot make the power fail.
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

# librpma 1.2's remote persistence (verbs/rpma_persist.c): its WRITE survives
# the power failure with adr and is lost with cache, where the trace names
# the range (offset 8192, 20000 bytes) in the server's MR.
t=/sys/kernel/tracing
[ -d $t/events ] || mount -t tracefs nodev $t 2>/dev/null || fail "no tracefs"
rpma_persist() {
	echo > $t/trace
	echo 1 > $t/events/softrma/softrma_lost_write/enable
	"$SOFTRMA_BIN/rpma_persist" /dev/dax0.0 10.9.0.1 7471 "$1" || return 1
	echo 0 > $t/events/softrma/softrma_lost_write/enable
	lost=$(grep -o 'softrma_lost_write: .*' $t/trace)
	[ -z "$lost" ] || info "$lost"
	case $1 in
	adr)	[ -z "$lost" ] ;;
	cache)	[ "$(echo "$lost" | grep -c 'dev=softrma0 key=0x[0-9a-f]* offset=8192 length=20000$')" = 1 ] &&
			[ "$(echo "$lost" | wc -l)" = 1 ] ;;
	esac || { echo "# lost writes traced: $lost"; return 1; }
}

add_softrma0
params=/sys/module/softrma/parameters
sys=/sys/class/infiniband/softrma0
expect_eq "persistence by default" "$(cat $sys/persistence)" off
echo dram > $sys/persistence 2>/dev/null && fail "persistence took dram"
as_user 65534 sh -c "echo 1 > $sys/power_fail" 2>/dev/null &&
	fail "a user made the power fail"
# noncoherent: persistence cache on a non-coherent checking device.
for domain in off cache adr noncoherent; do
	persistence=$domain
	[ $domain = noncoherent ] && { echo 1 > $sys/noncoherent || fail "noncoherent"; } &&
		persistence=cache
	echo $persistence > $sys/persistence || fail "persistence $persistence"
	expect_eq "persistence" "$(cat $sys/persistence)" $persistence
	for wire in 0 1; do
		echo $wire > $params/force_wire
		SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/pmem" /dev/dax0.0 $domain
		rc=$?
		case $domain in cache|adr) [ $rc = 0 ] && { rpma_persist $domain; rc=$?; } ;; esac
		echo 0 > $params/force_wire
		[ $rc = 0 ] || fail "persistence $domain, force_wire=$wire"
	done
done
echo off > $sys/persistence && echo 0 > $sys/noncoherent || fail "checking off"
info "$(rdma statistic show link softrma0/1 | grep -o '\(flush_persistent\|written_back_bytes\|power_fail_lost_bytes\|undo_log_overflows\) [0-9]*' | tr '\n' ' ')"
rdma link delete softrma0 || fail "rdma link delete softrma0"
ndctl destroy-namespace -f all > /dev/null 2>&1 || fail "ndctl destroy-namespace"
