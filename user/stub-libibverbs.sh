#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# A link-time stand-in for a libibverbs of private ABI PABI, for building
# the provider of that ABI whatever libibverbs is installed: every
# function of the installed library, under its version node, the private
# ones under IBVERBS_PRIVATE_<PABI> (and verbs_register_driver_<PABI>).
# Linking against it records what a libibverbs of that ABI provides; at run
# time the real one resolves it, or refuses the provider.
#
# usage: stub-libibverbs.sh PABI OUTDIR     (CC from the environment)
set -eu
pabi=$1 out=$2
lib=$(${CC:-cc} -print-file-name=libibverbs.so)
[ -e "$lib" ] || { echo "$0: no libibverbs.so to model the stub on" >&2; exit 1; }
mkdir -p "$out"
# objdump -T: "ADDR FLAGS DF .text SIZE VERSION NAME"; a hidden (older)
# version is in parentheses and is left out.
${OBJDUMP:-objdump} -T "$lib" | awk -v pabi="$pabi" '
	$3 == "DF" && $4 == ".text" && $(NF - 1) !~ /^\(/ {
		node = $(NF - 1); name = $NF
		if (node ~ /^IBVERBS_PRIVATE_/) node = "IBVERBS_PRIVATE_" pabi
		sub(/^verbs_register_driver_[0-9]+$/, "verbs_register_driver_" pabi, name)
		syms[node] = syms[node] "\t\t" name ";\n"
		print "void " name "(void) {}" > "'"$out"'/stub.c"
	}
	END {
		for (node in syms)
			printf "%s {\n\tglobal:\n%s};\n", node, syms[node] > "'"$out"'/stub.map"
	}'
${CC:-cc} -shared -fPIC -o "$out/libibverbs.so" -Wl,-soname,libibverbs.so.1 \
	-Wl,--version-script="$out/stub.map" "$out/stub.c"
