# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# NVMe over Fabrics on RDMA for the ULP tests: the kernel's nvmet-rdma
# target set up through configfs, and the nvme-rdma host through nvme-cli.
# Sourced after lib.sh and ulp.sh (device/nvme_rdma.sh in one guest,
# wire/nvme_interop.sh across two).

NQN=nqn.2014-08.org.softrma:ulp-nvme
NVMET_CFG=/sys/kernel/config/nvmet
NVMET_PORT=$NVMET_CFG/ports/1
NVMET_SUBSYS=$NVMET_CFG/subsystems/$NQN
NVME_MODULES="nvme_rdma nvme_fabrics nvmet_rdma nvmet"

# nvme_controllers: the host's controllers of $NQN.
nvme_controllers() {
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] && [ "$(cat "$c/subsysnqn")" = "$NQN" ] && basename "$c"
	done
}

nvme_connected() { [ -n "$(nvme_controllers)" ]; }

# nvme_namespace: the block device of $NQN's namespace 1 (the multipath
# head nvmeXnY, or the controller's own disk without multipath).
nvme_namespace() {
	for b in /sys/block/nvme*n*; do
		[ -e "$b" ] || continue
		case ${b##*/} in *c*) continue ;; esac	# a hidden path
		[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
		[ -b "/dev/${b##*/}" ] && echo "/dev/${b##*/}" && return 0
	done
	return 1
}

# nvme_modules: nvmet, nvmet-rdma and nvme-rdma loaded, configfs mounted.
nvme_modules() {
	command -v nvme > /dev/null && command -v fio > /dev/null ||
		skip "nvme-cli or fio is not installed (scripts/deps.sh)"
	timeout "$(bound 60)" modprobe -a nvmet nvmet_rdma nvme_rdma ||
		fail "modprobe nvmet nvmet_rdma nvme_rdma"
	ulp_configfs
	[ -d "$NVMET_CFG" ] || fail "no $NVMET_CFG"
}

# nvme_target_up IP FILE: $NQN's namespace 1 on FILE (a tmpfs file, whose
# data stays), listening on rdma IP:4420.
nvme_target_up() {
	mkdir "$NVMET_SUBSYS" || fail "mkdir $NVMET_SUBSYS"
	echo 1 > "$NVMET_SUBSYS/attr_allow_any_host" || fail "attr_allow_any_host"
	mkdir "$NVMET_SUBSYS/namespaces/1" || fail "mkdir namespace"
	printf %s "$2" > "$NVMET_SUBSYS/namespaces/1/device_path" || fail "device_path"
	# tmpfs takes no O_DIRECT before 6.6: the file backend buffered.
	echo 1 > "$NVMET_SUBSYS/namespaces/1/buffered_io" || fail "buffered_io"
	echo 1 > "$NVMET_SUBSYS/namespaces/1/enable" || fail "enable the namespace"
	mkdir "$NVMET_PORT" || fail "mkdir $NVMET_PORT"
	echo rdma > "$NVMET_PORT/addr_trtype" && echo ipv4 > "$NVMET_PORT/addr_adrfam" &&
		echo "$1" > "$NVMET_PORT/addr_traddr" && echo 4420 > "$NVMET_PORT/addr_trsvcid" ||
		fail "port attributes"
	ln -s "$NVMET_SUBSYS" "$NVMET_PORT/subsystems/$NQN" ||
		ulp_fail "nvmet-rdma does not listen on $1:4420"
	info "target: $NQN on rdma $1:4420, namespace 1 on $2"
}

# nvme_connect IP: the host connected to $NQN at IP.
nvme_connect() {
	timeout "$(bound 120)" nvme connect -t rdma -a "$1" -s 4420 -n "$NQN" \
		> /tmp/nvme-connect.log 2>&1
}

# nvme_host_up IP: connected to $NQN at IP, within 90 s (a target on
# another guest may still be coming up); its namespace in $dev.
nvme_host_up() {
	retry "$(bound 90)" nvme_connect "$1" ||
		ulp_fail "nvme connect -t rdma -a $1 -s 4420: $(tail -n 2 /tmp/nvme-connect.log | tr '\n' ' ')"
	ulp_wait 30 nvme_namespace > /dev/null || ulp_fail "connected, but no block device for $NQN"
	dev=$(nvme_namespace)
	ctrl=$(nvme_controllers | head -n 1)
	info "host: $ctrl ($(cat "/sys/class/nvme/$ctrl/transport") $(cat "/sys/class/nvme/$ctrl/address")), $dev," \
		"max_hw_sectors_kb $(cat "/sys/block/${dev#/dev/}/queue/max_hw_sectors_kb")"
	[ "$(cat "/sys/class/nvme/$ctrl/transport")" = rdma ] || fail "$ctrl is not over rdma"
}

# nvme_host_down: disconnected; prints what went wrong.
nvme_host_down() {
	nvme_connected || return 0
	timeout "$(bound 60)" nvme disconnect -n "$NQN" > /tmp/nvme-disconnect.log 2>&1 ||
		echo "nvme disconnect: $(tail -n 2 /tmp/nvme-disconnect.log)"
	ulp_wait 30 sh -c "! ls /sys/class/nvme/nvme* >/dev/null 2>&1" ||
		echo "controllers left: $(nvme_controllers)"
}

# nvme_target_down: the port and subsystem removed; prints what went wrong.
nvme_target_down() {
	if [ -d "$NVMET_PORT" ]; then
		rm -f "$NVMET_PORT/subsystems/$NQN"
		timeout "$(bound 60)" rmdir "$NVMET_PORT" || echo "rmdir port"
	fi
	if [ -d "$NVMET_SUBSYS" ]; then
		[ -d "$NVMET_SUBSYS/namespaces/1" ] && echo 0 > "$NVMET_SUBSYS/namespaces/1/enable"
		rmdir "$NVMET_SUBSYS/namespaces/1" 2>/dev/null
		rmdir "$NVMET_SUBSYS" || echo "rmdir subsystem"
	fi
}

# nvme_modules_down: nvme-rdma, nvmet-rdma and nvmet unloaded, with their
# unused dependencies (nvme_core, ...); prints what went wrong.
nvme_modules_down() {
	timeout "$(bound 60)" modprobe -r nvme_rdma nvmet_rdma nvmet || echo "modprobe -r"
	ulp_modules_gone $NVME_MODULES
}
