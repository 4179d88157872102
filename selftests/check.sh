#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make check: for every kernel in $KVERS, build softrma with W=1 and sparse
# (any diagnostic fails), run the selftests in a guest of that kernel, and
# fail on any kernel log line that shows a bug.  Ends with the line
# "N passed, N failed, N skipped" over everything it ran.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
. selftests/slowdown.sh
KVERS=${KVERS:?no kernel to test: run make deps}
VM_TIMEOUT=${VM_TIMEOUT:-2100}
VM_MEM=${VM_MEM:-6144}		# MB; the 2 GiB message test needs 4.8 GB
FUZZ_SECONDS=${FUZZ_SECONDS:-15}	# per fuzzer

# What the guest's kernel log must never show.
BAD_LOG='BUG:|kernel BUG|WARNING:|Oops|Call Trace|UBSAN|general protection fault|possible circular locking|possible recursive locking|INFO: task .* blocked|unregister_netdevice: waiting|Kernel panic|refcount_t:|list_(add|del) corruption|kmemleak: [0-9]+ new suspected'

passed=0 failed=0 skipped=0
result() {	# result ok|fail|skip NAME
	case $1 in
	ok) passed=$((passed + 1)); echo "ok - $2" ;;
	skip) skipped=$((skipped + 1)); echo "ok - $2 # SKIP" ;;
	*) failed=$((failed + 1)); echo "not ok - $2" ;;
	esac
}

# Each provider library exports only softrmadv.h's functions, in
# SOFTRMA_1.0, and binds nothing of libibverbs beyond IBVERBS_1.x and the
# private ABI of its name, verbs_register_driver_<ABI> among it.
provider_abi() {
	for pabi in 34 57 59 64; do
		lib=user/libsoftrma-rdmav$pabi.so
		exports=$(objdump -T "$lib" | awk '$2 != "*UND*" && $4 == ".text" { print $6 " " $7 }' |
			sort | tr '\n' ' ')
		foreign=$(objdump -T "$lib" | awk '/\*UND\*/ && $5 ~ /^\(IBVERBS/' |
			grep -v -e "(IBVERBS_PRIVATE_$pabi)" -e '(IBVERBS_1\.' | grep -c .)
		[ "$exports" = "SOFTRMA_1.0 softrmadv_is_softrma SOFTRMA_1.0 softrmadv_sync_mr SOFTRMA_1.0 softrmadv_wr_flush " ] &&
			[ "$foreign" = 0 ] &&
			objdump -T "$lib" | grep -q "(IBVERBS_PRIVATE_$pabi) verbs_register_driver_$pabi\$" ||
			{ echo "# $lib: exports '$exports', $foreign foreign bindings"; return 1; }
	done
}
if provider_abi; then result ok "providers of ABI 34, 57, 59, 64: export only softrmadv_*, bind their IBVERBS_PRIVATE_<ABI>"
else result fail "providers of ABI 34, 57, 59, 64: export only softrmadv_*, bind their IBVERBS_PRIVATE_<ABI>"; fi

# Every function the provider exports has its man page, and every page
# renders without a warning.
man_pages() {
	for f in $(objdump -T user/libsoftrma-rdmav34.so | awk '$2 != "*UND*" && $4 == ".text" { print $7 }'); do
		[ -f "Documentation/man/$f.3" ] || { echo "# no man page for $f"; return 1; }
	done
	for page in Documentation/man/*.[37]; do
		out=$(LC_ALL=C.UTF-8 groff -man -ww -z "$page" 2>&1)
		[ -z "$out" ] || { echo "# $page: $out"; return 1; }
	done
}
if man_pages; then result ok "man pages: one per exported function, all render cleanly"
else result fail "man pages: one per exported function, all render cleanly"; fi

# The pure protocol code and the provider's checks, in user space: unit
# tests under ASan and UBSan (with ICRC vectors from zlib), then a bounded
# libFuzzer run over the parser.
mkdir -p build
# host_test DIR WHAT: "make test" in selftests/DIR, in user space.
host_test() {
	if make -s --no-print-directory -C "selftests/$1" test > "build/$1-test.log" 2>&1; then
		sed "s/^/[$1] /" "build/$1-test.log" | grep '#'
		result ok "$1: $2"
	else
		cat "build/$1-test.log"
		result fail "$1: $2"
	fi
}
host_test proto "codec unit tests, ICRC against zlib, kept fuzz inputs"
host_test provider "ring geometry checks, the ABI layouts of rdma-core 44 to 64, contexts and ops of larger ones"

# make deb and make dkms-install under a careless umask (security review
# G13): nothing they install is writable by group or others, and the DKMS
# tree holds sources only (selftests/deb_modes.sh).
if sh selftests/deb_modes.sh > build/deb-modes.log 2>&1; then
	grep '^#' build/deb-modes.log
	result ok "packages: modes independent of the builder's umask"
else
	cat build/deb-modes.log
	result fail "packages: modes independent of the builder's umask"
fi
# The packages deb_modes.sh built last (debian/, dpkg-buildpackage): no
# lintian error or warning (overrides, with reasons, in debian/*.lintian-overrides).
if ls build/deb-modes/softrma_*.changes > /dev/null 2>&1 &&
		lintian --fail-on error,warning build/deb-modes/softrma_*.changes > build/lintian.log 2>&1; then
	result ok "packages: lintian reports no error and no warning"
else
	cat build/lintian.log 2>/dev/null
	result fail "packages: lintian reports no error and no warning"
fi
if make -s --no-print-directory -C selftests/proto fuzz FUZZ_SECONDS="$FUZZ_SECONDS" \
		> build/proto-fuzz.log 2>&1; then
	result ok "proto: libFuzzer, ${FUZZ_SECONDS} s each over the packet parser and the responder resources: $(grep -o 'Done [0-9]* runs' build/proto-fuzz.log | tr '\n' ' ')"
else
	tail -n 40 build/proto-fuzz.log
	result fail "proto: libFuzzer, ${FUZZ_SECONDS} s each over the packet parser and the responder resources"
fi

# fail_reason CONSOLE NOT_OK_LINE: the FAIL lines the failed test printed,
# so that a failure's cause is in its result line (CI shows those lines).
fail_reason() {
	test=${2#not ok * selftests: softrma: }
	test=${test% \#*}
	awk -v t="# selftests: softrma: $test" '
		$0 == t { on = 1; why = ""; next }
		on && /^not ok / { exit }
		on && /FAIL/ { sub(/^# */, ""); why = why (why ? "; " : "") substr($0, 1, 160) }
		END { print why }' "$1"
}

# run_guest KVER LOGDIR: the selftests in a guest with an emulated NVDIMM
# (device/pmem.sh); console in LOGDIR.
run_guest() {
	limit=$((VM_TIMEOUT * $(slowdown "$1")))
	selftests/vm/run -k "$1" -m "$VM_MEM" -p 272 -t "$limit" -o "$2" -- \
		make -s --no-print-directory -C selftests run_tests > "$2/serial.log" 2>&1
	rc=$?
	tr -d '\r' < "$2/serial.log" > "$2/console.log"	# serial line ends
	return $rc
}

for k in $KVERS; do
	log=build/check-$k
	rm -rf "$log"
	mkdir -p "$log"

	make -s --no-print-directory modules KVER="$k" W=1 C=2 > "$log/build.log" 2>&1
	rc=$?
	if [ $rc = 0 ] && ! grep -qE 'warning:|error:' "$log/build.log"; then
		result ok "$k: softrma.ko builds with W=1 C=2, no diagnostics"
	else
		cat "$log/build.log"
		result fail "$k: softrma.ko builds with W=1 C=2, no diagnostics"
		continue
	fi

	# Kbuild records the lint flags: build once more without them, so that
	# the guest's "make install" finds the module up to date.
	make -s --no-print-directory modules KVER="$k" > "$log/build-plain.log" 2>&1

	run_guest "$k" "$log"
	vmrc=$?
	# qemu TCG has crashed a 6.12 guest while it was booting (an int3 oops
	# in the kernel's own code patching, softrma not loaded): boot once more
	# if nothing ran, and say so.
	if [ "$vmrc" = 125 ] && ! grep -q '^TAP version' "$log/console.log"; then
		echo "# $k: the guest died before running anything; booting it again:"
		grep -m 3 -E 'Oops|RIP:|Tainted' "$log/console.log" | sed 's/^/#   /'
		run_guest "$k" "$log"
		vmrc=$?
	fi
	grep -vE '^\[ *[0-9]+\.[0-9]+\] (sysrq|reboot):' "$log/console.log" | sed "s/^/[$k] /"
	while read -r line; do
		name=${line#* * }
		name="$k: ${name#* }"
		why=
		case $line in "not ok "*) why=$(fail_reason "$log/console.log" "$line") ;; esac
		case $line in
		"not ok "*) result fail "$name${why:+: $why}" ;;
		"ok "*"# SKIP"*) result skip "$name" ;;
		"ok "*) result ok "$name" ;;
		esac
	done <<EOT
$(grep -E '^(not )?ok [0-9]+ ' "$log/console.log")
EOT
	# Every planned test must have reported, and a failing run must have
	# said which test failed: a guest that died, hung or ran nothing fails.
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$log/console.log")
	ran=$(grep -cE '^(not )?ok [0-9]+ ' "$log/console.log")
	if [ -z "$plan" ] || [ "$plan" = 0 ] || [ "$ran" != "$plan" ]; then
		result fail "$k: guest ran its whole plan (${ran:-0} of ${plan:-no plan}, status $vmrc)"
	elif [ "$vmrc" != 0 ] && ! grep -q '^not ok ' "$log/console.log"; then
		result fail "$k: guest run finished (status $vmrc)"
	fi

	if [ ! -s "$log/dmesg" ]; then
		result fail "$k: guest kernel log collected"
	elif grep -nE "$BAD_LOG" "$log/dmesg"; then
		result fail "$k: guest kernel log clean"
	else
		result ok "$k: guest kernel log clean"
	fi
done

# RoCEv2 on a real link between two guests (selftests/wire/pair): guest a
# on the first kernel named, guest b on the second.
#   rxe_capture: rdma_rxe on both; their packets decode with kernel/proto and
#                carry the ICRC that kernel/proto and zlib compute.
#   ud_interop:  softrma (a) and rdma_rxe (b) exchange UD both ways.
#   rc_interop:  softrma (a) and rdma_rxe (b): RC and UC tools and perftest,
#                the server on each side in turn; once with rxe on the newest
#                kernel, once on the oldest.
#   rc_softrma:  the same with softrma on both guests.
#   nvme_interop: softrma (a) and rdma_rxe (b): NVMe-oF on RDMA, the target
#                on each side in turn, data verified.
ka=${KVERS%% *} kb=${KVERS##* }
wire_runs="rxe_capture:$ka:$kb ud_interop:$ka:$kb rc_interop:$ka:$kb rc_softrma:$ka:$kb nvme_interop:$ka:$kb"
[ "$ka" = "$kb" ] || wire_runs="$wire_runs rc_interop:$kb:$ka"
for run in $wire_runs; do
	t=${run%%:*} a=${run#*:} b=${run##*:}
	a=${a%:*}
	name="wire: $t, guest a $a, guest b $b"
	out=build/wire-$t-$a
	make -s --no-print-directory modules KVER="$a" > /dev/null 2>&1 &&
		make -s --no-print-directory modules KVER="$b" > /dev/null 2>&1 &&
		selftests/wire/pair -o "$out" "$a" "$b" "selftests/wire/$t.sh" > "$out.log" 2>&1
	rc=$?
	# A TCG guest has hung while booting, before printing anything (a
	# 6.1 guest, 600 s of an empty console): boot the pair once more.
	if [ $rc != 0 ] && ! { grep -q '^\[a\] #' "$out.log" && grep -q '^\[b\] #' "$out.log"; }; then
		echo "# $name: a guest printed nothing; booting the pair again:"
		grep -E '^\[[ab]\] (vm|qemu)' "$out.log" | sed 's/^/#   /'
		selftests/wire/pair -o "$out" "$a" "$b" "selftests/wire/$t.sh" > "$out.log" 2>&1
		rc=$?
	fi
	if [ $rc = 0 ] && ! cat "$out/a/dmesg" "$out/b/dmesg" | grep -nE "$BAD_LOG"; then
		grep '#' "$out.log"
		result ok "$name"
	else
		cat "$out.log"
		result fail "$name"
	fi
done

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
