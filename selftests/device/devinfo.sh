#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# ibv_devices, ibv_devinfo -v and rdma link show describe a softrma device:
# GUID from the MAC, Ethernet link layer, MTU from the netdev, RoCE v2 GIDs.
. "$(dirname "$0")/../lib.sh"

load_softrma
add_dummy d0 10.9.0.1/24
ip -6 addr add fd00:9::1/64 dev d0 nodad || fail "ip -6 addr add"
rdma link add softrma0 type softrma netdev d0 || fail "rdma link add"

guid=$(mac_to_guid "$(cat /sys/class/net/d0/address)")
ibv_devices | grep -Eq "^[[:space:]]+softrma0[[:space:]]+$guid\$" ||
	fail "ibv_devices: $(ibv_devices)"
expect_eq "hca_type" "$(cat /sys/class/infiniband/softrma0/hca_type)" softrma
expect_eq "rdma link show" "$(rdma link show softrma0/1 | tr -s ' ' | sed 's/ $//')" \
	"link softrma0/1 state ACTIVE physical_state LINK_UP netdev d0"

wait_gid softrma0 "::ffff:10.9.0.1, RoCE v2" || fail "no IPv4 GID"
wait_gid softrma0 "fd00:9::1, RoCE v2" || fail "no IPv6 GID"
dotted=$(echo "$guid" | sed 's/\(....\)\(....\)\(....\)\(....\)/\1:\2:\3:\4/')
for kv in transport=InfiniBand fw_ver=0.1.0 node_guid=$dotted \
	  sys_image_guid=$dotted phys_port_cnt=1 state=PORT_ACTIVE \
	  phys_state=LINK_UP link_layer=Ethernet max_mtu=4096 active_mtu=1024 \
	  pkey_tbl_len=1 gid_tbl_len=1024 max_msg_sz=0x80000000; do
	expect_eq "${kv%%=*}" "$(devinfo_field softrma0 "${kv%%=*}")" "${kv#*=}"
done

# The active MTU is the largest IB MTU that fits the netdev MTU less the 96
# header bytes the core reserves for RoCE (iboe_get_mtu).
for m in 9000:4096 4192:4096 4191:2048 1500:1024 1120:1024 1119:512 608:512 607:256 352:256; do
	ip link set d0 mtu "${m%%:*}" || fail "ip link set d0 mtu ${m%%:*}"
	expect_eq "active_mtu at netdev MTU ${m%%:*}" \
		"$(devinfo_field softrma0 active_mtu)" "${m#*:}"
done
info "ibv_devices, ibv_devinfo -v, rdma link show and MTU mapping as expected"
