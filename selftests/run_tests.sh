#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run every softrma selftest in this (guest) kernel as TAP, kselftest style.
# After each test the runner itself checks what every test must leave behind:
# no softrma device with objects in "rdma resource show", a clean
# "rdma link delete" of what is left, and a clean "rmmod softrma".
#
# usage: run_tests.sh [TEST...]   (default: every test in the list below)

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
export SOFTRMA_TOP="$top"
. selftests/lib.sh

TESTS=${*:-"
device/devinfo.sh
device/provider.sh
device/port_state.sh
device/two_devices.sh
device/bad_input.sh
device/link_cycles.sh
device/netdev_unregister.sh
device/reg_mr.sh
device/ktest.sh
device/limits.sh
device/rc_ops.sh
device/tools.sh
device/libfabric.sh
device/ud_ops.sh
device/ext_api.sh
device/mw.sh
device/pyverbs.sh
device/parent_domain.sh
device/shared_pd.sh
device/xrc.sh
device/odp.sh
device/fault.sh
device/resize.sh
device/recv_sges.sh
device/big_msg.sh
device/rdma_cm.sh
device/nvme_rdma.sh
device/nfs_rdma.sh
device/iser.sh
device/srp.sh
device/ud_wire.sh
device/rc_wire.sh
device/comp_order.sh
device/rx_softirq.sh
device/last_byte.sh
device/rc_lossy.sh
device/wire_hostile.sh
device/rx_flood.sh
device/rc_hostile.sh
device/stale_lists.sh
device/local_isolation.sh
device/peer_reuse.sh
device/private_checkout.sh
device/ackreq.sh
device/sqd_wire.sh
device/wire_teardown.sh
device/ring_racer.sh
device/rma_ext.sh
device/noncoherent.sh
device/pmem.sh
device/observe.sh
device/mcast.sh
device/netdevs.sh
device/netns.sh
device/kill_peer.sh
device/unload_busy.sh
device/stress.sh
device/install.sh
"}
TEST_TIMEOUT=${TEST_TIMEOUT:-300}

# cleanup_after SID: what a test that failed left behind must not fail the
# next: its processes, and its network namespaces with the devices and
# netdevs in them.
cleanup_after() {
	pkill -KILL -s "$1" 2>/dev/null
	for ns in $(ip netns list 2>/dev/null | cut -d' ' -f1); do
		ip netns del "$ns"
	done
}

# gone DEV: DEV disappears within 10 s (a namespace that went takes it).
gone() {
	for _ in $(seq 100); do
		[ -e "/sys/class/infiniband/$1" ] || return 0
		sleep 0.1
	done
	return 1
}

# settled DEV: within 10 s DEV is gone or holds no application's objects
# (a process killed or a namespace deleted just now takes a moment).
settled() {
	for _ in $(seq 100); do
		[ -e "/sys/class/infiniband/$1" ] || return 0
		[ -z "$(softrma_user_objects "$1")" ] && return 0
		sleep 0.1
	done
	return 1
}

# Leaves softrma unloaded; prints why not and fails otherwise.
teardown() {
	grep -q '^softrma ' /proc/modules || return 0
	for dev in $(softrma_links); do
		settled "$dev" ||
			{ echo "# teardown: $dev still has objects: $(softrma_user_objects "$dev")"; return 1; }
		[ -e "/sys/class/infiniband/$dev" ] || continue
		timeout "$(bound 30)" rdma link delete "$dev" 2>/dev/null || gone "$dev" ||
			{ echo "# teardown: rdma link delete $dev failed"; return 1; }
	done
	timeout "$(bound 30)" rmmod softrma || { echo "# teardown: rmmod softrma failed"; return 1; }
}

# A kernel with kmemleak (make debug-kernel): one more test at the end.
kmemleak=/sys/kernel/debug/kmemleak
[ -e "$kmemleak" ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
n=$(echo $TESTS | wc -w)
if [ -e "$kmemleak" ]; then
	n=$((n + 1))
	# What boot left unreferenced is not ours: reported now, then cleared.
	echo scan > "$kmemleak"
	echo clear > "$kmemleak"
fi
echo "TAP version 13"
echo "1..$n"
i=0
nfail=0
for t in $TESTS; do
	i=$((i + 1))
	name="selftests: softrma: $t"
	echo "# $name"
	start=$(date +%s)
	# A test may ask for more time with a line "# timeout: N s".
	limit=$(sed -n 's/^# timeout: \([0-9][0-9]*\) s.*/\1/p' "selftests/$t")
	limit=${limit:-$TEST_TIMEOUT}
	limit=$((limit * SOFTRMA_SLOWDOWN))
	# Each test in a session of its own, so that what it leaves running
	# (servers, processes under a timeout of their own) can be found.
	timeout -k 5 "$limit" setsid -w \
		sh -c 'echo $$ > /tmp/test.sid; exec sh "$0"' "selftests/$t" \
		>/tmp/test.out 2>&1
	rc=$?
	sed 's/^\([^#]\)/# \1/' /tmp/test.out
	echo "# $t: $(($(date +%s) - start)) s"
	cleanup_after "$(cat /tmp/test.sid)"
	teardown || rc=1
	ip -o link show type dummy 2>/dev/null | awk -F': ' '{ print $2 }' |
		while read -r d; do ip link del "$d"; done
	case $rc in
	0) echo "ok $i $name" ;;
	4) echo "ok $i $name # SKIP" ;;
	124) echo "not ok $i $name # TIMEOUT ${limit}s"; nfail=$((nfail + 1)) ;;
	*) echo "not ok $i $name # exit=$rc"; nfail=$((nfail + 1)) ;;
	esac
done

# With everything unloaded, what kmemleak finds unreferenced since the
# suite began.
if [ -e "$kmemleak" ]; then
	i=$((i + 1))
	for _ in 1 2; do
		sleep 6
		echo scan > "$kmemleak"
	done
	leaks=$(grep -c '^unreferenced object' "$kmemleak")
	head -n 40 "$kmemleak" | sed 's/^/# /'
	if [ "$leaks" = 0 ]; then
		echo "ok $i selftests: softrma: kmemleak scan after the suite"
	else
		echo "not ok $i selftests: softrma: kmemleak scan after the suite # $leaks leaks"
		nfail=$((nfail + 1))
	fi
fi
[ "$nfail" = 0 ]
