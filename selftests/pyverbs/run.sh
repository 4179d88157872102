#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# rdma-core's own pyverbs tests (the tests/ directory of the rdma-core release
# that matches the installed python3-pyverbs: 44.0 on Debian 12) on softrma
# and on the kernel's rdma_rxe, one after the other on the same dummy netdev
# in this (guest) kernel, module by module; then a table of ran, pass, fail,
# error and skip per module and device, with every fail, error and skip
# reason.  A development tool; run_tests.sh runs its test_mr and
# test_parent_domain on softrma (device/pyverbs.sh).
#
# usage: run.sh [MODULE...]   (default: every test_*.py in PYVERBS_TESTS)
#
# PYVERBS_TESTS    the tests/ directory (default: where "make deps" unpacks
#                  the one python3-pyverbs ships,
#                  ${SOFTRMA_CACHE:-/var/cache/softrma}/rdma-core-tests)
# PYVERBS_DEVICES  which devices, in order (default "softrma rxe")
# PYVERBS_OUT      where the raw unittest output goes, DEV/MODULE.log
#                  (default $SOFTRMA_VM_OUT/pyverbs, or /tmp/pyverbs)
# PYVERBS_TIMEOUT  seconds for one module (default 600, times slowdown.sh's)
# PYTHON           the python with pyverbs (default /usr/bin/python3)

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

tests=${PYVERBS_TESTS:-${SOFTRMA_CACHE:-/var/cache/softrma}/rdma-core-tests}
devices=${PYVERBS_DEVICES:-softrma rxe}
python=${PYTHON:-/usr/bin/python3}
if [ -n "${SOFTRMA_VM_OUT:-}" ]; then
	out=${PYVERBS_OUT:-$SOFTRMA_VM_OUT/pyverbs}
else
	out=${PYVERBS_OUT:-/tmp/pyverbs}
fi
per_module=$(bound "${PYVERBS_TIMEOUT:-600}")

[ -r "$tests/run_tests.py" ] ||
	skip "no rdma-core tests at $tests (make deps unpacks them; or set PYVERBS_TESTS)"
"$python" -c 'import pyverbs.device' 2>/dev/null ||
	skip "$python cannot import pyverbs (apt-get install python3-pyverbs)"

modules=$*
if [ -z "$modules" ]; then
	for f in "$tests"/test_*.py; do
		modules="$modules $(basename "$f" .py)"
	done
fi

add_dummy d0 10.9.0.1/24

names=
for type in $devices; do
	dev_up "$type"
	gid=$(gid_index "$dev" 10.9.0.1)
	names="$names $dev"
	mkdir -p "$out/$dev"
	info "$dev: GID index $gid (::ffff:10.9.0.1, RoCE v2), $(echo "$modules" | wc -w) modules, $per_module s each"
	for m in $modules; do
		start=$(date +%s)
		(cd "$tests" && timeout -k 10 "$per_module" "$python" run_tests.py \
			--dev "$dev" --port 1 --gid "$gid" -v "$m") > "$out/$dev/$m.log" 2>&1
		echo "$?" > "$out/$dev/$m.rc"
		info "$dev $m: status $(cat "$out/$dev/$m.rc"), $(($(date +%s) - start)) s"
	done
	# What a test left on the device: an object that its process's exit
	# did not release.
	[ "$type" = softrma ] && left=$(softrma_user_objects "$dev") &&
		info "$dev: objects left: $left"
	dev_down "$type" "$dev"
done

"$python" "$here/table.py" "$out" $names
