#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Port state follows the netdev (admin state, carrier, MTU too small for
# RoCEv2) and every change reaches applications as a port event.
. "$(dirname "$0")/../lib.sh"

load_softrma
ip link add v0 type veth peer name v1 || fail "ip link add veth"
ip link set v0 up && ip link set v1 up || fail "veth up"
rdma link add softrma0 type softrma netdev v0 || fail "rdma link add"
expect_eq "state" "$(devinfo_field softrma0 state)" PORT_ACTIVE

"$SOFTRMA_BIN/port_events" softrma0 6 10000 > /tmp/events &
pid=$!
wait_line /tmp/events ready

ip link set v0 down
expect_eq "state, v0 down" "$(devinfo_field softrma0 state)" PORT_DOWN
expect_eq "phys_state, v0 down" "$(devinfo_field softrma0 phys_state)" DISABLED
expect_eq "rdma link, v0 down" "$(rdma link show softrma0/1 | awk '{ print $4 }')" DOWN
ip link set v0 up
expect_eq "state, v0 up" "$(devinfo_field softrma0 state)" PORT_ACTIVE

ip link set v1 down	# no carrier on v0
expect_eq "state, no carrier" "$(devinfo_field softrma0 state)" PORT_DOWN
ip link set v1 up
expect_eq "state, carrier" "$(devinfo_field softrma0 state)" PORT_ACTIVE

ip link set v0 mtu 300	# too small for any RoCEv2 packet
expect_eq "state, MTU 300" "$(devinfo_field softrma0 state)" PORT_DOWN
ip link set v0 mtu 1500
expect_eq "state, MTU 1500" "$(devinfo_field softrma0 state)" PORT_ACTIVE

wait "$pid" || fail "port_events: $(cat /tmp/events)"
expect_eq "port events" "$(grep -v ready /tmp/events | tr '\n' ',')" \
	"port error port 1,port active port 1,port error port 1,port active port 1,port error port 1,port active port 1,"
ip link del v0
