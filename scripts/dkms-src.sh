#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The module's sources for DKMS, as make dkms-install installs them in
# /usr/src/softrma-<version> and make deb packages them (scripts/deb.sh):
# dkms.conf, and the files Kbuild builds from (Kbuild, kernel/, include/:
# *.[ch] and Kbuild, as the Makefile's KSRCS), never build artefacts.  DKMS
# compiles them and loads the module as root, so their modes are set here,
# whatever the umask or the checkout's modes: writable by the owner alone.
#
# usage: scripts/dkms-src.sh DIR     (from the top of the tree)
set -eu
dest=$1
umask 022
mkdir -p "$dest"
cp dkms.conf "$dest/"
find Kbuild kernel include -type f \( -name '*.[ch]' -o -name Kbuild \) |
	while read -r f; do
		mkdir -p "$dest/$(dirname "$f")"
		cp "$f" "$dest/$f"
	done
chmod -R u=rwX,go=rX "$dest"
