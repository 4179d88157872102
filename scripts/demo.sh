#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The main job, run in the guest by `make run`: load softrma, create
# softrma0 on a dummy netdev with an address, show it with the standard
# tools, and run perftest's ib_write_bw over it (server and client here).
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
export RDMAV_DRIVERS=$top/user/libsoftrma

# insmod resolves no dependencies: load what softrma.ko needs first.
modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel
insmod "$top/build/$(uname -r)/softrma.ko"
ip link add d0 type dummy
ip link set d0 up
ip addr add 10.9.0.1/24 dev d0

echo "+ rdma link add softrma0 type softrma netdev d0"
rdma link add softrma0 type softrma netdev d0
sleep 1		# the core fills the GID table asynchronously
echo "+ rdma link show"; rdma link show
echo "+ ibv_devices"; ibv_devices
echo "+ ibv_devinfo -v -d softrma0 (port)"
ibv_devinfo -v -d softrma0 | sed -n '/port:/,$p'

echo "+ ib_write_bw -d softrma0 -x 1 -s 65536 -n 2000 (server and client)"
ib_write_bw -d softrma0 -x 1 -s 65536 -n 2000 > /tmp/ib_write_bw-server.log 2>&1 &
sleep 1
ib_write_bw -d softrma0 -x 1 -s 65536 -n 2000 10.9.0.1
wait

rdma link delete softrma0
rmmod softrma
echo "softrma0 created, used and removed cleanly on $(uname -r)"
