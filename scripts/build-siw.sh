#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# rdma_siw for `make bench`: Debian's kernels do not build it, so build the
# unmodified driver out of tree from the linux-source package of KVER's
# series (make deps installs linux-source-6.1 and -6.12), against KVER's
# headers, into OUT/siw.ko.
#
# usage: build-siw.sh KVER OUT
set -eu

[ $# = 2 ] || { sed -n 's/^# usage: /usage: /p' "$0" >&2; exit 2; }
kver=$1 out=$2
series=$(echo "$kver" | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p')
tarball=/usr/src/linux-source-$series.tar.xz
[ -f "$tarball" ] || { echo "build-siw: $tarball missing (run 'make deps')" >&2; exit 1; }

src=$out/siw-src
rm -rf "$src"
mkdir -p "$src"
tar -xJf "$tarball" -C "$src" --strip-components=5 \
	"linux-source-$series/drivers/infiniband/sw/siw"
make -C "/lib/modules/$kver/build" M="$(cd "$src" && pwd)" CONFIG_RDMA_SIW=m modules
cp "$src/siw.ko" "$out/siw.ko"
echo "built $out/siw.ko from $tarball"
