#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The Debian packages of "make deb" (build/deb, debian/ built by
# dpkg-buildpackage), installed with dpkg on the guest's root (a tmpfs
# overlay, so the host is left alone): softrma-dkms's postinst (dh_dkms)
# has DKMS build softrma.ko for the running kernel; the headers of a second
# kernel, removed before and installed after the package, have DKMS's
# kernel hook (/etc/kernel/header_postinst.d/dkms, which the headers
# package's postinst runs) build it for that kernel too; "rdma link add"
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

# The second kernel: another installed Debian kernel whose headers package
# is installed, the newest first (besides the running kernel, DKMS's
# postinst builds for the newest, which would cost a build more in TCG),
# preferably with its .deb still in apt's cache to install it again;
# without one, its build tree is hidden and the hook run as that package's
# postinst runs it.
second='' second_deb=''
for k in $(ls -d /lib/modules/*/build 2>/dev/null | cut -d/ -f4 | sort -rV); do
	[ "$k" = "$kver" ] && continue
	[ "$(dpkg-query -W -f '${Status}' "linux-headers-$k" 2>/dev/null)" = "install ok installed" ] ||
		continue
	v=$(dpkg-query -W -f '${Version}' "linux-headers-$k")
	d=$(ls "/var/cache/apt/archives/linux-headers-${k}_$(echo "$v" | sed 's/:/%3a/')_"*.deb 2>/dev/null | head -n 1)
	if [ -n "$d" ]; then second=$k second_deb=$d; break; fi
	[ -n "$second" ] || second=$k
done

# (DKMS builds for the newest installed kernel too, hence every updates/.)
places="$libdir /etc/libibverbs.d /usr/include/infiniband /usr/share/man/man3
	/usr/share/man/man7 /usr/src /lib/modules/*/updates /var/lib/dkms"
[ -n "$second" ] && places="$places /lib/modules/$second/build"
# listing: the files of $places, but DKMS's own signing key, which it makes
# on its first build and keeps for every module.
listing() {
	# shellcheck disable=SC2086
	find $places 2>/dev/null | grep -v '^/var/lib/dkms/mok\.' | sort
}
listing > /tmp/before.txt

# The second kernel's headers go before the package comes.
if [ -n "$second_deb" ]; then
	dpkg -r --force-depends "linux-headers-$second" > /tmp/dpkg.log 2>&1 ||
		fail "dpkg -r linux-headers-$second: $(tail -n 20 /tmp/dpkg.log)"
elif [ -n "$second" ]; then
	mv "/lib/modules/$second/build" "/lib/modules/$second/build.hidden" ||
		fail "hiding the build tree of $second"
fi
[ -z "$second" ] || [ ! -e "/lib/modules/$second/build" ] ||
	fail "the headers of $second are still there"

start=$(date +%s)
dpkg -i "$debs"/softrma-dkms_*_all.deb "$debs"/libsoftrma_*.deb > /tmp/dpkg.log 2>&1 ||
	fail "dpkg -i: $(tail -n 20 /tmp/dpkg.log)"
info "dpkg -i (DKMS builds included): $(($(date +%s) - start)) s; $(grep '^Building for' /tmp/dpkg.log)"
case $(modinfo -n softrma 2>/dev/null) in
/lib/modules/"$kver"/updates/dkms/softrma.ko*) ;;
*) fail "module not installed by DKMS: $(modinfo -n softrma 2>&1); $(tail -n 5 /tmp/dpkg.log)" ;;
esac
dkms status -m softrma -k "$kver" | grep -q ": installed" || fail "dkms status: $(dkms status)"

# DKMS's kernel hook: the second kernel's headers installed after the
# package, by dpkg -i of their package (whose postinst runs
# /etc/kernel/header_postinst.d), or the hook run as that postinst runs it.
if [ -z "$second" ]; then
	info "no second kernel with installed headers: the kernel hook is not tested"
else
	! dkms status -m softrma -k "$second" | grep -qE ': (built|installed)' ||
		fail "built for $second before its headers: $(dkms status -m softrma)"
	start=$(date +%s)
	if [ -n "$second_deb" ]; then
		how="dpkg -i ${second_deb##*/}"
		dpkg -i "$second_deb" > /tmp/dpkg-headers.log 2>&1 ||
			fail "$how: $(tail -n 20 /tmp/dpkg-headers.log)"
	else
		how="run-parts /etc/kernel/header_postinst.d (no linux-headers-$second .deb in apt's cache)"
		mv "/lib/modules/$second/build.hidden" "/lib/modules/$second/build" ||
			fail "restoring the build tree of $second"
		run-parts --report --exit-on-error --arg="$second" /etc/kernel/header_postinst.d \
			> /tmp/dpkg-headers.log 2>&1 || fail "$how: $(tail -n 20 /tmp/dpkg-headers.log)"
	fi
	info "$how (DKMS build for $second included): $(($(date +%s) - start)) s"
	dkms status -m softrma -k "$second" | grep -q ": installed" ||
		fail "not installed for $second by the kernel hook: $(dkms status); $(tail -n 20 /tmp/dpkg-headers.log)"
	ko=$(modinfo -k "$second" -n softrma 2>/dev/null)
	case $ko in
	/lib/modules/"$second"/updates/dkms/softrma.ko*) ;;
	*) fail "modinfo -k $second softrma: $ko" ;;
	esac
	magic=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
	expect_eq "vermagic of $second's softrma.ko" "$magic" "$second"
fi
info "$(dkms status -m softrma | tr '\n' ';')"

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
