#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make deb: the Debian packages softrma-dkms (the module's sources for DKMS,
# which builds it for the running kernel on installation and for every
# kernel installed later) and libsoftrma (the provider libraries,
# softrma.driver, softrmadv.h, the man pages), with dpkg-deb alone.
#
# usage: scripts/deb.sh OUTDIR     (from the top of the tree, after "make user")
set -eu
out=$1
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
stage=$out/stage
rm -rf "$stage"
mkdir -p "$stage"

# control PACKAGE ARCH DEPENDS DESCRIPTION...: DEBIAN/control of PACKAGE.
control() {
	pkg=$1 pkgarch=$2 depends=$3; shift 3
	mkdir -p "$stage/$pkg/DEBIAN" "$stage/$pkg/usr/share/doc/$pkg"
	cat > "$stage/$pkg/DEBIAN/control" <<EOF_CONTROL
Package: $pkg
Version: $version
Architecture: $pkgarch
Maintainer: softrma developers <softrma@localhost>
Depends: $depends
Section: net
Priority: optional
Description: $*
EOF_CONTROL
	printf 'softrma\nLicense: GPL-2.0 OR BSD-2-Clause\n' > "$stage/$pkg/usr/share/doc/$pkg/copyright"
}

# softrma-dkms: the sources as make dkms-install installs them
sh scripts/dkms-src.sh "$stage/softrma-dkms/usr/src/softrma-$version"
control softrma-dkms all "dkms (>= 2.8), kmod" \
	"software RDMA device (RoCEv2) for Linux, kernel module (DKMS)
 softrma registers a RoCE device with the kernel's RDMA core on any
 Ethernet netdev (rdma link add NAME type softrma netdev NETDEV).  DKMS
 builds the module for the running kernel and for every kernel installed
 later."
cat > "$stage/softrma-dkms/DEBIAN/postinst" <<EOF_POSTINST
#!/bin/sh
set -e
if [ "\$1" = configure ]; then
	dkms status -m softrma -v $version | grep -q . || dkms add -m softrma -v $version
	# The running kernel now; later kernels through DKMS's kernel hook.
	if [ -e "/lib/modules/\$(uname -r)/build" ]; then
		dkms install -m softrma -v $version -k "\$(uname -r)"
	else
		echo "softrma-dkms: no headers for \$(uname -r): not built for it" >&2
	fi
fi
EOF_POSTINST
cat > "$stage/softrma-dkms/DEBIAN/prerm" <<EOF_PRERM
#!/bin/sh
set -e
if [ "\$1" = remove ] || [ "\$1" = upgrade ] || [ "\$1" = deconfigure ]; then
	if dkms status -m softrma -v $version | grep -q .; then
		dkms remove -m softrma -v $version --all
	fi
fi
EOF_PRERM
chmod 0755 "$stage/softrma-dkms/DEBIAN/postinst" "$stage/softrma-dkms/DEBIAN/prerm"

# libsoftrma
make -s -C user install DESTDIR="$PWD/$stage/libsoftrma" LIBDIR="/usr/lib/$multiarch" >/dev/null
gzip -9n "$stage"/libsoftrma/usr/share/man/man*/*
control libsoftrma "$arch" "libibverbs1 (>= 44), libc6 (>= 2.34)" \
	"software RDMA device (RoCEv2) for Linux, rdma-core provider
 The libibverbs provider of softrma devices, for rdma-core 44 to 64
 (libsoftrma-rdmav34.so, -rdmav57.so, -rdmav59.so, -rdmav64.so), its
 direct verbs (infiniband/softrmadv.h) and the man pages softrma(7) and
 softrmadv(7)."
echo /etc/libibverbs.d/softrma.driver > "$stage/libsoftrma/DEBIAN/conffiles"

# The modes of what the packages install are not the builder's umask's:
# writable by root alone (DKMS compiles /usr/src/softrma-* as root).
chmod -R u=rwX,go=rX "$stage"
for pkg in softrma-dkms libsoftrma; do
	a=$(sed -n 's/^Architecture: //p' "$stage/$pkg/DEBIAN/control")
	dpkg-deb --root-owner-group -Zxz --build "$stage/$pkg" "$out/${pkg}_${version}_$a.deb" >/dev/null
	echo "$out/${pkg}_${version}_$a.deb"
done
