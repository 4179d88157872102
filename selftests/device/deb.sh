#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The Debian packages of "make deb" (build/deb), installed with dpkg on the
# guest's root (a tmpfs overlay, so the host is left alone): softrma-dkms
# has DKMS build softrma.ko for the running kernel, "rdma link add"
# autoloads it, libsoftrma's provider serves ibv_devinfo and
# ibv_rc_pingpong with no RDMAV_DRIVERS, "man softrma" works; then both
# are purged, and nothing of them is left.  Not in run_tests.sh's list:
# DKMS compiles the module in the guest (make check-deb).
. "$(dirname "$0")/../lib.sh"
unset RDMAV_DRIVERS

debs=$SOFTRMA_TOP/build/deb
ls "$debs"/softrma-dkms_*_all.deb "$debs"/libsoftrma_*.deb >/dev/null 2>&1 ||
	skip "no packages in $debs: make deb"
command -v dkms >/dev/null || skip "no dkms (make deps installs it)"
kver=$(uname -r)
libdir=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libibverbs
places="$libdir /etc/libibverbs.d /usr/include/infiniband /usr/share/man/man3
	/usr/share/man/man7 /usr/src /lib/modules/$kver/updates /var/lib/dkms"
# listing: the files of $places, but DKMS's own signing key, which it makes
# on its first build and keeps for every module.
listing() {
	# shellcheck disable=SC2086
	find $places 2>/dev/null | grep -v '^/var/lib/dkms/mok\.' | sort
}
listing > /tmp/before.txt

start=$(date +%s)
dpkg -i "$debs"/softrma-dkms_*_all.deb "$debs"/libsoftrma_*.deb > /tmp/dpkg.log 2>&1 ||
	fail "dpkg -i: $(tail -n 20 /tmp/dpkg.log)"
info "dpkg -i (DKMS build for $kver included): $(($(date +%s) - start)) s"
case $(modinfo -n softrma 2>/dev/null) in
/lib/modules/"$kver"/updates/dkms/softrma.ko*) ;;
*) fail "module not installed by DKMS: $(modinfo -n softrma 2>&1); $(tail -n 5 /tmp/dpkg.log)" ;;
esac
dkms status -m softrma | grep -q "$kver.*: installed" || fail "dkms status: $(dkms status)"
info "$(dkms status -m softrma)"

modprobe ib_uverbs || fail "modprobe ib_uverbs"
add_dummy d0 10.9.0.1/24
rdma link add softrma0 type softrma netdev d0 || fail "rdma link add without softrma loaded"
grep -q '^softrma ' /proc/modules || fail "softrma was not autoloaded"
expect_eq "provider" "$("$SOFTRMA_BIN/which_provider" softrma0)" libsoftrma-rdmav34.so
ibv_devinfo -d softrma0 | grep -q PORT_ACTIVE || fail "ibv_devinfo with the packaged provider"
pair "ibv_rc_pingpong" "ibv_rc_pingpong -d softrma0 -g 1 -n 100"
man softrma 2>/dev/null | grep -q "software RDMA device" || fail "man softrma: $(man -w softrma 2>&1)"
rdma link delete softrma0 || fail "rdma link delete"
wait_gone softrma0
rmmod softrma || fail "rmmod softrma"

start=$(date +%s)
dpkg --purge libsoftrma softrma-dkms > /tmp/dpkg.log 2>&1 ||
	fail "dpkg --purge: $(tail -n 20 /tmp/dpkg.log)"
info "dpkg --purge: $(($(date +%s) - start)) s"
dpkg -l libsoftrma softrma-dkms 2>/dev/null | grep -q '^[ir]' &&
	fail "still known to dpkg: $(dpkg -l libsoftrma softrma-dkms | tail -n 2)"
listing > /tmp/after.txt
diff /tmp/before.txt /tmp/after.txt > /tmp/left.txt || fail "left behind or removed: $(cat /tmp/left.txt)"
