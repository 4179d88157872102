#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# libfabric's own test suite, fabtests (built by scripts/build-fabtests.sh
# against Debian's libfabric), on softrma and, for comparison, on the
# kernel's rdma_rxe, one after the other on the same dummy netdev (d0,
# 10.9.0.1) in this (guest) kernel: runfabtests.sh with the test sets
# unit, functional and short, server and client on this host, for the
# providers verbs and "verbs;ofi_rxm", each with fabtests' own exclude file
# for it (test_configs/verbs/verbs.exclude, test_configs/ofi_rxm/ofi_rxm.exclude).
# Then a table of pass, notrun/excluded and fail per device and provider,
# and every failed test.  A by-hand check: CI has no fabtests (Debian does
# not package them), so run_tests.sh does not list it, and it skips (status
# 4) when the build is missing.  Fails when a test fails on softrma.
#
# usage: run.sh [FABTESTS_DIR]   (default $FABTESTS, or
#                                 ${SOFTRMA_CACHE:-/var/cache/softrma}/fabtests-<libfabric version>)
#
# FABTESTS_DEVICES    which devices, in order (default "softrma rxe")
# FABTESTS_PROVIDERS  which providers (default "verbs verbs;ofi_rxm")
# FABTESTS_SETS       runfabtests.sh's -t (default unit,functional,short)
# FABTESTS_TIMEOUT    seconds for one test (default 120, times slowdown.sh's)
# FABTESTS_OUT        where each run's YAML output goes, DEV/PROVIDER.log
#                     (default $SOFTRMA_VM_OUT/fabtests, or /tmp/fabtests)

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

version=$(pkg-config --modversion libfabric 2>/dev/null || echo 1.17.0)
dir=${1:-${FABTESTS:-${SOFTRMA_CACHE:-/var/cache/softrma}/fabtests-$version}}
devices=${FABTESTS_DEVICES:-softrma rxe}
providers=${FABTESTS_PROVIDERS:-verbs verbs;ofi_rxm}
sets=${FABTESTS_SETS:-unit,functional,short}
per_test=$(bound "${FABTESTS_TIMEOUT:-120}")
if [ -n "${SOFTRMA_VM_OUT:-}" ]; then
	out=${FABTESTS_OUT:-$SOFTRMA_VM_OUT/fabtests}
else
	out=${FABTESTS_OUT:-/tmp/fabtests}
fi

[ -x "$dir/bin/runfabtests.sh" ] ||
	skip "no fabtests build at $dir (scripts/build-fabtests.sh LIBFABRIC_CLONE/.git builds one; or give its path)"
configs=$dir/share/fabtests/test_configs
[ -d "$configs" ] || skip "no $configs in the fabtests build"
command -v bash >/dev/null || skip "runfabtests.sh needs bash"
command -v python3 >/dev/null || skip "runfabtests.sh needs python3"
ldconfig -p | grep -q 'libfabric\.so\.1 ' || skip "no libfabric (Debian's libfabric1)"
# The pingpong and bandwidth tests allocate and register a window of 64
# messages of the largest size (8 MiB) each way: 1 GiB in each of server
# and client.  In the 2 GiB of selftests/vm/run's default guest the OOM
# killer takes one of them, and the tests after fail too.
mem=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
[ "$mem" -ge 3800 ] ||
	skip "$mem MiB of memory: fabtests need 4 GiB or more (selftests/vm/run -m 6144)"

# exclude_file PROVIDER: fabtests' exclude file for it.
exclude_file() {
	case $1 in
	*ofi_rxm*) echo "$configs/ofi_rxm/ofi_rxm.exclude" ;;
	*) echo "$configs/${1%%;*}/${1%%;*}.exclude" ;;
	esac
}

add_dummy d0 10.9.0.1/24
modprobe rdma_ucm || fail "modprobe rdma_ucm"

# results LOG: "RESULT NAME" per test of a runfabtests.sh -v log.
results() {
	awk '/^- name:/ { sub(/^- name: +/, ""); name = $0 }
	     /^  result:/ { print $2 "\t" name }' "$1"
}

work=$(mktemp -d)		# runfabtests.sh writes its temporary files in .
trap 'rm -rf "$work"' EXIT
softrma_failed=0
table=$out/table
mkdir -p "$out"
printf '%-10s %-16s %6s %8s %6s\n' device provider pass notrun fail > "$table"
for type in $devices; do
	dev_up "$type"
	mkdir -p "$out/$dev"
	for prov in $providers; do
		log=$out/$dev/$(echo "$prov" | tr ';' '+').log
		excl=$(exclude_file "$prov")
		[ -r "$excl" ] || fail "no exclude file $excl"
		start=$(date +%s)
		info "$dev $prov: runfabtests.sh -t $sets -f ${excl#"$configs"/}, $per_test s a test"
		(cd "$work" && FI_VERBS_DEVICE_NAME=$dev bash "$dir/bin/runfabtests.sh" \
			-v -p "$dir/bin" -t "$sets" -T "$per_test" -f "$excl" \
			-s 10.9.0.1 -c 10.9.0.1 "$prov") > "$log" 2>&1
		pass=$(results "$log" | grep -c '^Pass')
		notrun=$(results "$log" | grep -Ec '^(Notrun|Excluded)')
		failed=$(results "$log" | grep -c '^Fail')
		info "$dev $prov: $pass passed, $failed failed, $notrun not run or excluded, $(($(date +%s) - start)) s"
		printf '%-10s %-16s %6d %8d %6d\n' "$dev" "$prov" "$pass" "$notrun" "$failed" >> "$table"
		results "$log" | grep '^Fail' | cut -f 2 | sed "s/^/#   $dev failed: /"
		[ "$type" = softrma ] && [ "$failed" -gt 0 ] && softrma_failed=$((softrma_failed + failed))
	done
	[ "$type" = softrma ] && left=$(softrma_user_objects "$dev") &&
		info "$dev: objects left: $left"
	dev_down "$type" "$dev"
done
sed 's/^/# /' "$table"
info "logs (runfabtests.sh -v: a failed test's server and client output) in $out"
[ "$softrma_failed" = 0 ] || fail "$softrma_failed fabtests failed on softrma"
