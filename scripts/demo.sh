#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The main job, run in the guest by `make run`: load softrma, create
# softrma0 on a dummy netdev with an address, and show it with the standard
# tools.  Data-path tools (ib_write_bw) join once the RC data path exists.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
export RDMAV_DRIVERS=$top/user/libsoftrma

modprobe ib_uverbs
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

rdma link delete softrma0
rmmod softrma
echo "softrma0 created, listed and removed cleanly on $(uname -r)"
