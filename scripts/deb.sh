#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make deb: the Debian packages softrma-dkms (the module's sources for DKMS,
# which builds it for the running kernel on installation and, through its
# kernel hook, for every kernel whose headers are installed later),
# libsoftrma (the provider libraries, softrma.driver, softrmadv.h, the man
# pages) and libsoftrma-dbgsym, built from debian/ by dpkg-buildpackage
# with debhelper and dh-dkms.  The build runs in a copy of the tree,
# OUTDIR/softrma-<version>, so the checkout gets no artefacts and the
# packages land in OUTDIR; the copy is removed after a successful build.
# Prints the paths of the .debs; dpkg-buildpackage's output is in
# OUTDIR/build.log.
#
# usage: scripts/deb.sh OUTDIR     (from the top of the tree)
set -eu
out=$1
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
changelog=$(dpkg-parsechangelog -S Version)
[ "$version" = "$changelog" ] || {
	echo "$0: dkms.conf has version $version, debian/changelog $changelog" >&2
	exit 1
}
src=$out/softrma-$version
mkdir -p "$out"
rm -rf "$src" "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo "$out/stage"
mkdir -p "$src"

# What debian/rules builds from; the provider's objects, if any were
# copied, go with debian/rules clean, which dpkg-buildpackage runs first.
cp -R debian dkms.conf Kbuild kernel include user "$src/"
mkdir -p "$src/Documentation" "$src/scripts"
cp -R Documentation/man "$src/Documentation/"
cp scripts/dkms-src.sh "$src/scripts/"

# --sanitize-env: umask 022 and a C locale, whatever the builder's.
if ! (cd "$src" && dpkg-buildpackage --sanitize-env -us -uc -b) > "$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	echo "$0: dpkg-buildpackage failed: $out/build.log" >&2
	exit 1
fi
rm -rf "$src"
ls "$out"/*.deb
