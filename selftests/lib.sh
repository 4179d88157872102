# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Helpers for softrma's shell selftests; sourced, run as root in the guest.

ksft_skip=4
SOFTRMA_TOP=${SOFTRMA_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
SOFTRMA_KO=${SOFTRMA_KO:-$SOFTRMA_TOP/build/$(uname -r)/softrma.ko}	# another module: A/B, a fix's test on the code before it
SOFTRMA_BIN=$SOFTRMA_TOP/selftests/verbs/bin
export RDMAV_DRIVERS=$SOFTRMA_TOP/user/libsoftrma
. "$SOFTRMA_TOP/selftests/slowdown.sh"
SOFTRMA_SLOWDOWN=$(slowdown "$(uname -r)")
export SOFTRMA_SLOWDOWN			# the C tests' time limits read it too

fail() { echo "# FAIL: $*"; exit 1; }
skip() { echo "# SKIP: $*"; exit "$ksft_skip"; }
info() { echo "# $*"; }
# bound N: N seconds, as long as this kernel needs for them (slowdown.sh).
bound() { echo $(($1 * SOFTRMA_SLOWDOWN)); }
# ack_timeout: perftest's ACK timeout option, its default (14: 67 ms) made
# as much longer as this kernel is slower.  Its retry count is 7, and a
# softrma requester, like hardware, gives up after 7 timeouts in a row
# (rdma_rxe takes 7 as "retry forever").
ack_timeout() {
	t=14 s=1
	while [ "$s" -lt "$SOFTRMA_SLOWDOWN" ]; do
		t=$((t + 1)) s=$((s * 2))
	done
	echo "-u $t"
}

# as_user UID CMD [ARG...]: CMD as uid and gid UID, with no supplementary
# groups and no capabilities (setpriv), from /.  The checkout may sit where
# other users cannot enter (a clone in a 0700 home): a CMD of the checkout
# runs from a copy, and the provider comes from a copy too (RDMAV_DRIVERS,
# and LD_LIBRARY_PATH for a program linked with it), in $SOFTRMA_WORLD, a
# directory of the guest's /tmp that anyone may read.  CMD must need nothing
# else of the checkout.
SOFTRMA_WORLD=/tmp/softrma-world
as_user() {
	user_id=$1 user_cmd=$2
	shift 2
	install -d -m 0755 "$SOFTRMA_WORLD" "$SOFTRMA_WORLD/lib" "$SOFTRMA_WORLD/bin" &&
		install -m 0644 "$SOFTRMA_TOP"/user/libsoftrma-rdmav*.so "$SOFTRMA_WORLD/lib/" ||
		{ echo "as_user: no copy of the provider in $SOFTRMA_WORLD" >&2; return 1; }
	case $user_cmd in
	"$SOFTRMA_TOP"/*)
		install -m 0755 "$user_cmd" "$SOFTRMA_WORLD/bin/" ||
			{ echo "as_user: no copy of $user_cmd" >&2; return 1; }
		user_cmd=$SOFTRMA_WORLD/bin/${user_cmd##*/}
		;;
	esac
	(cd / && exec env RDMAV_DRIVERS="$SOFTRMA_WORLD/lib/libsoftrma" \
		LD_LIBRARY_PATH="$SOFTRMA_WORLD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		setpriv --reuid="$user_id" --regid="$user_id" --clear-groups -- "$user_cmd" "$@")
}

# expect_fail DESC CMD...: CMD must fail.
expect_fail() {
	desc=$1; shift
	if "$@" >/tmp/expect_fail.out 2>&1; then
		fail "$desc: succeeded but must fail"
	fi
	info "$desc: refused ($(head -n 1 /tmp/expect_fail.out))"
}

# kill_tree PID: kill PID and all its descendants (timeout(1) leaves its
# process group, so groups do not do), so that no server outlives a test.
kill_tree() {
	for child in $(pgrep -P "$1"); do
		kill_tree "$child"
	done
	kill -KILL "$1" 2>/dev/null
}

# pair NAME SERVER_CMD [CLIENT_CMD]: a server and its client (by default
# SERVER_CMD with 10.9.0.1 appended) must both succeed, within 120 s.
# perftest sometimes cannot calibrate its clock under TCG ("Correlation
# coefficient r^2 < 0.9 ... Can't produce a report"), more often on a busy
# host: such a pair runs again, up to twice.
pair() {
	for _ in 1 2 3; do
		pair_once "$@" && return 0
		grep -q "Can't produce a report" /tmp/client.log /tmp/server.log || break
		info "$1: perftest could not calibrate its clock; once more"
	done
	sed 's/^/# client: /' /tmp/client.log
	sed 's/^/# server: /' /tmp/server.log
	fail "$1: client: $(tail -n 5 /tmp/client.log) / server: $(tail -n 3 /tmp/server.log)"
}

# descendants PID: PID and every process below it.
descendants() {
	echo "$1"
	for child in $(pgrep -P "$1"); do
		descendants "$child"
	done
}

# listening PID: a process of PID's tree listens, on TCP (in any network
# namespace) or through rdma_cm.
listening() {
	for p in $(descendants "$1"); do
		{ ss -ltnp; ip -all netns exec ss -ltnp; } 2>/dev/null |
			grep -q "pid=$p," && return 0
		rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .*pid $p " &&
			return 0
	done
	return 1
}

pair_once() {
	sh -c "$2" > /tmp/server.log 2>&1 &
	spid=$!
	for _ in $(seq 100); do
		listening "$spid" && break
		sleep 0.1
	done
	timeout "$(bound 120)" sh -c "${3:-$2 10.9.0.1}" > /tmp/client.log 2>&1
	status=$?
	if [ "$status" != 0 ]; then
		echo "# exit status $status" >> /tmp/client.log
		kill_tree "$spid"
		wait "$spid" 2>/dev/null
		return 1
	fi
	if ! timeout "$(bound 30)" sh -c "while kill -0 $spid 2>/dev/null; do sleep 0.1; done"; then
		kill_tree "$spid"
		echo "# the server did not end" >> /tmp/server.log
		return 1
	fi
	wait "$spid" || return 1
	info "$1: $(grep -E 'iters|^ *[0-9]+ +[0-9]+ |data|complete|end 0' /tmp/client.log |
		tail -n 1 | tr -s ' ' | cut -c 1-100)"
}

# expect_eq DESC GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

load_softrma() {
	# insmod resolves no dependencies: load what softrma.ko needs first.
	modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel || fail "modprobe"
	# shellcheck disable=SC2086 # SOFTRMA_MODULE_PARAMS: NAME=VALUE ...
	grep -q '^softrma ' /proc/modules || insmod "$SOFTRMA_KO" $SOFTRMA_MODULE_PARAMS ||
		fail "insmod $SOFTRMA_KO $SOFTRMA_MODULE_PARAMS"
}

# softrma_user_objects DEV: every object of DEV in "rdma resource show"
# except the MAD layer's own (PD, CQ and the GSI QP of ib_core).
softrma_user_objects() {
	for r in ctx pd mr cq srq qp cm_id; do
		rdma resource show "$r" 2>/dev/null
	done | grep -E "(dev|link) $1[ /]" | grep -v 'comm \[ib_core\]'
}

# expect_no_objects DEV: within 5 s DEV holds no application's objects (a
# process killed just now takes a moment to go), or the test fails.
expect_no_objects() {
	for _ in $(seq 50); do
		left=$(softrma_user_objects "$1")
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	fail "objects left on $1: $left"
}

softrma_links() {
	for d in /sys/class/infiniband/*; do
		[ -e "$d/hca_type" ] && [ "$(cat "$d/hca_type")" = softrma ] && basename "$d"
	done
}

# add_dummy NAME [IPV4/LEN]: an up dummy netdev, optionally with an address.
add_dummy() {
	ip link add "$1" type dummy || fail "ip link add $1"
	ip link set "$1" up || fail "ip link set $1 up"
	[ -z "${2:-}" ] || ip addr add "$2" dev "$1" || fail "ip addr add $2"
}

# add_softrma0: softrma loaded, and softrma0 up on dummy d0 (10.9.0.1/24)
# with its IPv4 GID in the table.
add_softrma0() {
	load_softrma
	add_dummy d0 10.9.0.1/24
	rdma link add softrma0 type softrma netdev d0 || fail "rdma link add"
	wait_gid softrma0 "::ffff:10.9.0.1" || fail "no GID"
}

# add_rxe0: rdma_rxe's rxe0 on the dummy d0 with 10.9.0.1, where tests
# check their expectations against rdma_rxe (removed at exit).
add_rxe0() {
	modprobe rdma_rxe || fail "modprobe rdma_rxe"
	trap 'rdma link delete rxe0 2>/dev/null; modprobe -r rdma_rxe' EXIT
	add_dummy d0 10.9.0.1/24
	rdma link add rxe0 type rxe netdev d0 || fail "rdma link add rxe0"
	wait_gid rxe0 "::ffff:10.9.0.1" || fail "no GID on rxe0"
}

# dev_up softrma|rxe: that device on the dummy d0 (10.9.0.1; add_dummy
# first), its name in $dev.  dev_down TYPE DEV removes it and its module.
dev_up() {
	case $1 in
	softrma)
		load_softrma
		rdma link add softrma0 type softrma netdev d0 || fail "rdma link add softrma0"
		dev=softrma0 ;;
	rxe)
		modprobe rdma_rxe || fail "modprobe rdma_rxe"
		rdma link add rxe0 type rxe netdev d0 || fail "rdma link add rxe0"
		dev=rxe0 ;;
	*) fail "unknown device type $1" ;;
	esac
	wait_gid "$dev" "::ffff:10.9.0.1, RoCE v2" || fail "no RoCE v2 GID on $dev"
}

dev_down() {
	rdma link delete "$2" || fail "rdma link delete $2"
	case $1 in
	softrma) rmmod softrma || fail "rmmod softrma" ;;
	rxe) modprobe -r rdma_rxe || fail "modprobe -r rdma_rxe" ;;
	esac
}

# add_softrma01: softrma loaded, softrma0 up on dummy d0 (10.9.0.1/24) and
# softrma1 on d1 (10.9.1.1/24), each with its IPv4 GID in the table.
add_softrma01() {
	load_softrma
	add_dummy d0 10.9.0.1/24
	add_dummy d1 10.9.1.1/24
	rdma link add softrma0 type softrma netdev d0 || fail "add softrma0"
	rdma link add softrma1 type softrma netdev d1 || fail "add softrma1"
	wait_gid softrma0 "::ffff:10.9.0.1" || fail "no GID on softrma0"
	wait_gid softrma1 "::ffff:10.9.1.1" || fail "no GID on softrma1"
}

# wire_up a|b: eth0 up on the two-guest link (selftests/wire/pair) with
# 10.10.0.1 (a) or 10.10.0.2 (b); waits up to 60 s for the other guest.
wire_up() {
	case $1 in a) me=1 peer=2 ;; b) me=2 peer=1 ;; *) fail "wire_up a|b" ;; esac
	modprobe virtio_net || fail "modprobe virtio_net"
	for _ in $(seq 50); do [ -e /sys/class/net/eth0 ] && break; sleep 0.1; done
	ip addr add "10.10.0.$me/24" dev eth0 || fail "no eth0"
	ip link set eth0 up
	WIRE_ME=10.10.0.$me WIRE_PEER=10.10.0.$peer
	for _ in $(seq 60); do
		ping -c 1 -W 1 "$WIRE_PEER" >/dev/null 2>&1 && return 0
	done
	fail "the other guest ($WIRE_PEER) does not answer"
}

# wire_dev_up a|b: after wire_up, dev0 on eth0: softrma on guest a; on
# guest b rdma_rxe, or softrma when PEER=softrma.  $me: softrma or rxe.
wire_dev_up() {
	if [ "$1" = a ] || [ "${PEER:-rxe}" = softrma ]; then
		load_softrma
		rdma link add dev0 type softrma netdev eth0 || fail "rdma link add softrma"
		me=softrma
	else
		modprobe rdma_rxe || fail "modprobe rdma_rxe"
		rdma link add dev0 type rxe netdev eth0 || fail "rdma link add rxe"
		me=rxe
	fi
	wait_gid dev0 "::ffff:$WIRE_ME" || fail "no GID"
}

# gid_index DEV ADDR: the index of DEV's RoCE v2 GID for the IPv4 or IPv6
# address ADDR.
gid_index() {
	case $2 in *:*) gid=$2 ;; *) gid=::ffff:$2 ;; esac
	ibv_devinfo -v -d "$1" |
		sed -n "s/.*GID\[ *\([0-9]*\)\]:[[:space:]]*$gid, RoCE v2.*/\1/p"
}

# retry SECONDS CMD...: CMD until it succeeds (a server may not listen yet).
retry() {
	end=$(($(date +%s) + $1)); shift
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 1
	done
}

# capture_start NETDEV COUNT [NETNS]: capture COUNT RoCEv2 packets on NETDEV
# (in network namespace NETNS) in the background.  selftests/wire/capture.py
# checks every ICRC with zlib as it goes.
capture_start() {
	capture_count=$2
	if [ -n "${3:-}" ]; then
		set -- ip netns exec "$3" python3 "$SOFTRMA_TOP/selftests/wire/capture.py" "$1" "$2" "$(bound 60)"
	else
		set -- python3 "$SOFTRMA_TOP/selftests/wire/capture.py" "$1" "$2" "$(bound 60)"
	fi
	"$@" > /tmp/capture.txt 2>/tmp/capture.log &
	capture_pid=$!
	# The traffic starts once the socket is bound: a second was not always
	# enough for python3 on a 6.1 guest, and 200 datagrams went uncaptured.
	for _ in $(seq $(($(bound 30) * 10))); do
		grep -q '^# capturing on' /tmp/capture.log && return
		kill -0 "$capture_pid" 2>/dev/null || break
		sleep 0.1
	done
	fail "capture on $1 did not start: $(tail -n 3 /tmp/capture.log)"
}

# capture_check: the capture got its packets, and zlib and kernel/proto
# (selftests/proto/bin/roce_test) both agree with every ICRC.
capture_check() {
	wait "$capture_pid" || fail "capture: $(tail -n 3 /tmp/capture.log)"
	"$SOFTRMA_TOP/selftests/proto/bin/roce_test" --capture "$capture_count" \
		< /tmp/capture.txt || fail "kernel/proto disagrees with an ICRC"
	cat /tmp/capture.log
}

# namespace_pair NET: namespaces nsa and nsb joined by a veth pair (va in
# nsa with NET.1, vb in nsb with NET.2), and a softrma device on each end
# (softa, softb), created from inside its namespace.
namespace_pair() {
	ip netns add nsa && ip netns add nsb || fail "ip netns add"
	ip link add va type veth peer name vb || fail "veth"
	ip link set va netns nsa && ip link set vb netns nsb || fail "veth into namespaces"
	for n in a b; do
		i=$([ $n = a ] && echo 1 || echo 2)
		ip -n ns$n addr add "$1.$i/24" dev v$n
		ip -n ns$n link set v$n up
		ip -n ns$n link set lo up
		ip netns exec ns$n rdma link add soft$n type softrma netdev v$n ||
			fail "rdma link add soft$n in ns$n"
		wait_gid soft$n "::ffff:$1.$i" || fail "no GID on soft$n"
	done
}

# rps_all DEV [NETNS]: DEV's flows, each on one CPU's backlog.  lo and veth
# queue a packet on the backlog of the CPU that sends it, so a flow sent
# from two CPUs may arrive out of order; a NIC keeps it in order.
rps_all() {
	${2:+ip netns exec "$2"} sh -c "printf %x $(((1 << $(nproc)) - 1)) > /sys/class/net/$1/queues/rx-0/rps_cpus" ||
		fail "no RPS on $1"
}

# softrma_rxe_pair NET: softrma beside rdma_rxe across a veth pair: vs in
# namespace nss with NET.1 and softrma device "softs", vr in init_net
# (where rxe holds UDP port 4791) with NET.2 and rxe device "rxer".
# softrma_rxe_unpair removes it all.
softrma_rxe_pair() {
	modprobe rdma_rxe || fail "modprobe rdma_rxe"
	ip netns add nss || fail "ip netns add"
	ip link add vs type veth peer name vr || fail "veth"
	ip link set vs netns nss || fail "veth into nss"
	ip -n nss addr add "$1.1/24" dev vs && ip -n nss link set vs up &&
		ip -n nss link set lo up || fail "vs"
	ip addr add "$1.2/24" dev vr && ip link set vr up || fail "vr"
	ip netns exec nss rdma link add softs type softrma netdev vs || fail "softs"
	rdma link add rxer type rxe netdev vr || fail "rdma link add rxer"
	wait_gid softs "::ffff:$1.1" || fail "no GID on softs"
	wait_gid rxer "::ffff:$1.2" || fail "no GID on rxer"
	ip netns exec nss ping -c 1 -W 5 "$1.2" > /dev/null || fail "no route over the veth"
}

softrma_rxe_unpair() {
	rdma link delete rxer
	ip netns del nss
	wait_gone softs
	ip link del vr 2>/dev/null
	modprobe -r rdma_rxe
}

# port_counter DEV NAME: a port counter of DEV ("rdma statistic").
port_counter() {
	rdma statistic show link "$1/1" | tr ' ' '\n' |
		awk -v k="$2" 'found { print; exit } $0 == k { found = 1 }'
}

# The EUI-64 node GUID that a netdev's MAC gives, as ibv_devices prints it.
mac_to_guid() {
	set -- $(echo "$1" | tr ':' ' ')
	printf '%02x%s%sfffe%s%s%s\n' $((0x$1 ^ 2)) "$2" "$3" "$4" "$5" "$6"
}

# Wait until the GID table shows an entry, up to 5 s (filled asynchronously).
wait_gid() {
	for _ in $(seq 50); do
		ibv_devinfo -v -d "$1" 2>/dev/null | grep -q "$2" && return 0
		sleep 0.1
	done
	return 1
}

# start_held NAME CMD...: CMD in the background with its output in
# /tmp/NAME.log and its standard input on fd 3, once it printed "ready";
# $held is its PID.  "echo go >&3" lets it go on; "exec 3>&-" closes.
start_held() {
	name=$1; shift
	rm -f "/tmp/$name.in"
	mkfifo "/tmp/$name.in"
	"$@" < "/tmp/$name.in" > "/tmp/$name.log" 2>&1 &
	held=$!
	exec 3> "/tmp/$name.in"
	wait_line "/tmp/$name.log" ready
}

# wait_line FILE TEXT: wait up to 10 s for a line TEXT in FILE.
wait_line() {
	for _ in $(seq 100); do
		grep -qx "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "no '$2' in $1: $(cat "$1" 2>/dev/null)"
}

# devinfo_field DEV FIELD: one field of "ibv_devinfo -v".
devinfo_field() {
	ibv_devinfo -v -d "$1" | awk -v k="$2:" '$1 == k { print $2; exit }'
}

# wait_gone DEV: wait up to 10 s for an RDMA device to disappear.
wait_gone() {
	for _ in $(seq 100); do
		[ -e "/sys/class/infiniband/$1" ] || return 0
		sleep 0.1
	done
	fail "$1 is still there"
}

# while_held DEV DESC CMD...: run CMD while an application holds DEV open
# with a context and a PD.  CMD must succeed within 20 s, and the
# application must then see the device gone (DEVICE_FATAL, failing verbs)
# and still close it cleanly (selftests/verbs/hold_context.c).
while_held() {
	dev=$1 desc=$2
	shift 2
	"$SOFTRMA_BIN/hold_context" "$dev" > /tmp/hold &
	pid=$!
	wait_line /tmp/hold ready
	timeout "$(bound 20)" "$@" || fail "$desc with $dev held open: failed or hung"
	wait "$pid" || fail "hold_context, $desc: $(cat /tmp/hold)"
}
