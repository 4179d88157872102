#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# "make install" lays softrma out like an rdma-core provider and an
# in-tree driver: "rdma link add" autoloads the module, and libibverbs finds
# the provider with no RDMAV_DRIVERS.  The guest's root is a tmpfs overlay,
# so installing there is real and leaves the host alone.
. "$(dirname "$0")/../lib.sh"
unset RDMAV_DRIVERS

kver=$(uname -r)
libdir=/usr/lib/x86_64-linux-gnu/libibverbs
# depmod reads every module of the kernel: minutes under TCG.  Cleaning up
# puts its indexes back as they were instead of running it again.
mkdir -p /tmp/modules.saved
cp -p "/lib/modules/$kver"/modules.* /tmp/modules.saved/
cleanup() {
	rm -f "/lib/modules/$kver/updates/softrma.ko" "$libdir"/libsoftrma-rdmav*.so \
		/etc/libibverbs.d/softrma.driver /usr/include/infiniband/softrmadv.h \
		/usr/share/man/man7/softrma.7 /usr/share/man/man7/softrmadv.7 \
		/usr/share/man/man3/softrmadv_*.3
	cp -p /tmp/modules.saved/* "/lib/modules/$kver/"
}
trap cleanup EXIT

make -s -C "$SOFTRMA_TOP" install KVER="$kver" > /tmp/install.log 2>&1 ||
	fail "make install: $(tail -n 5 /tmp/install.log)"
case $(modinfo -n softrma 2>/dev/null) in
/lib/modules/"$kver"/updates/*) ;;
*) fail "module not installed: $(tail -n 5 /tmp/install.log)" ;;
esac
[ -f "$libdir/libsoftrma-rdmav34.so" ] || fail "provider not installed"
expect_eq "softrma.driver" "$(cat /etc/libibverbs.d/softrma.driver)" "driver softrma"
expect_eq "modinfo alias" "$(modinfo -F alias softrma)" rdma-link-softrma

modprobe ib_uverbs || fail "modprobe ib_uverbs"
add_dummy d0 10.9.0.1/24
rdma link add softrma0 type softrma netdev d0 || fail "rdma link add without softrma loaded"
grep -q '^softrma ' /proc/modules || fail "softrma was not autoloaded"
expect_eq "installed provider" "$("$SOFTRMA_BIN/which_provider" softrma0)" \
	libsoftrma-rdmav34.so
ibv_devinfo -d softrma0 | grep -q PORT_ACTIVE || fail "ibv_devinfo with the installed provider"

# softrmadv.h is installed, and a program links its functions as the
# header says.
[ -f /usr/include/infiniband/softrmadv.h ] || fail "softrmadv.h not installed"
cat > /tmp/dv.c <<'EOF_C'
#include <stdio.h>
#include <infiniband/softrmadv.h>

int main(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;

	if (!ctx)
		return 1;
	printf("%d\n", softrmadv_is_softrma(ctx));
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
EOF_C
gcc -o /tmp/dv /tmp/dv.c -L"$libdir" -l:libsoftrma-rdmav34.so -Wl,-rpath,"$libdir" \
	-libverbs || fail "linking softrmadv.h's functions"
expect_eq "softrmadv_is_softrma" "$(env -u RDMAV_DRIVERS /tmp/dv)" 1

# The man pages are installed where man finds them.
for page in 7/softrma 7/softrmadv 3/softrmadv_wr_flush 3/softrmadv_is_softrma \
	    3/softrmadv_sync_mr; do
	expect_eq "man -w ${page#*/}" "$(man -w "${page%/*}" "${page#*/}" 2>&1)" \
		"/usr/share/man/man$page.${page%/*}"
done
MANWIDTH=80 man 7 softrma 2>/dev/null | grep -q "software RDMA device" ||
	fail "man softrma does not show the page"
