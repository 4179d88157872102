#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The modes of what "make deb" packages and "make dkms-install" installs do
# not depend on the builder's umask: built under umask 002 or 000 (by
# scripts/deb.sh, dpkg-buildpackage on debian/), no file or directory in any
# package is writable by group or others (DKMS compiles /usr/src/softrma-*
# and loads the result as root), and the DKMS source tree holds the module's
# sources only.  On the host; no guest.  The packages of the last build
# (umask 000) stay in OUTDIR, with their .changes (check.sh runs lintian).
#
# usage: selftests/deb_modes.sh [OUTDIR]   (relative to the top of the tree;
#                                           default build/deb-modes)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=${1:-build/deb-modes}
rm -rf "$out"
mkdir -p "$out"
status=0

# writable LISTING: the entries of "dpkg-deb -c" or "ls -l" lines that group
# or others may write, symbolic links aside.
writable() {
	awk '$1 !~ /^l/ && (substr($1, 6, 1) == "w" || substr($1, 9, 1) == "w")' "$1"
}

# Under umask 002 (a group-writable default) and 000.
for mask in 002 000; do
	debs=$(umask $mask && sh scripts/deb.sh "$out" 2> "$out/deb.log")
	[ -n "$debs" ] ||
		{ echo "# make deb under umask $mask failed: $(tail -n 3 "$out/deb.log")"; status=1; continue; }
	for deb in $debs; do
		dpkg-deb -c "$deb" > "$out/listing" || { echo "# dpkg-deb -c $deb failed"; exit 1; }
		if [ -n "$(writable "$out/listing")" ]; then
			echo "# ${deb##*/}, built under umask $mask: writable by group or others:"
			writable "$out/listing" | sed 's/^/#   /'
			status=1
		fi
	done
done
[ "$status" = 0 ] || exit 1

# The DKMS source tree as make dkms-install copies it (scripts/dkms-src.sh),
# and as the package has it: sources only.
(umask 000 && sh scripts/dkms-src.sh "$out/dkms-src") || { echo "# scripts/dkms-src.sh failed"; exit 1; }
find "$out/dkms-src" -exec ls -ld {} + > "$out/listing"
if [ -n "$(writable "$out/listing")" ]; then
	echo "# make dkms-install's tree: writable by group or others:"
	writable "$out/listing" | sed 's/^/#   /'
	status=1
fi
others=$(cd "$out/dkms-src" && find . -type f ! -name '*.[ch]' ! -name Kbuild ! -name dkms.conf)
[ -z "$others" ] || { echo "# make dkms-install's tree: not sources: $others"; status=1; }
dpkg-deb -c "$out"/softrma-dkms_*.deb | awk '{ print $NF }' |
	sed -n 's|^\./usr/src/softrma-[^/]*/||p' | grep -v '/$' | grep -v '^$' | sort > "$out/deb-src"
(cd "$out/dkms-src" && find . -type f | sed 's|^\./||' | sort) > "$out/dkms-src.list"
diff "$out/deb-src" "$out/dkms-src.list" > "$out/src.diff" ||
	{ echo "# the package's and make dkms-install's source trees differ:"; sed 's/^/#   /' "$out/src.diff"; status=1; }
[ "$status" = 0 ] && echo "# $(echo "$debs" | wc -l) packages and the DKMS tree built under umask 002 and 000: nothing writable by group or others, sources only"
exit $status
