# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make            build softrma.ko for $(KVER) and the rdma-core provider
# make deps       install every Debian package build, tests and bench need
# make check      per kernel: build with W=1 C=2 (any diagnostic fails), run
#                 the selftests in a guest, check its kernel log
# make run        boot a guest, create softrma0, run ibv_devinfo and ib_write_bw
# make bench      perftest on softrma, rdma_rxe and siw in one guest, as ratios,
#                 with the guest's ceilings and a chart (make bench-wire: two guests;
#                 make bench-scale: one vCPU against two; make profile: perf
#                 profiles of chosen rows)
# make fuzz       libFuzzer over the RoCEv2 packet parser (FUZZ_SECONDS=600)
# make check-rdma-core  the provider with libibverbs of rdma-core 45 to 64,
#                 built by scripts/build-rdma-core.sh (RDMA_CORE_BUILDS=DIR)
# make debug-kernel  build 6.12 with KASAN, lockdep, kmemleak, UBSAN (once per
#                 machine) and install it for `make check KVERS=<its name>`
# make install    install module (with depmod) and provider on this host
# make dkms-install  the module through DKMS (rebuilt for every new kernel),
#                 and the provider; make dkms-uninstall removes both
# make deb        Debian packages softrma-dkms and libsoftrma in build/deb;
#                 make check-deb installs, uses and purges them in a guest
#
# The module is installed unsigned (distribution kernels taint, and refuse it
# under Secure Boot lockdown unless you sign it with your own key).
#
# KVER selects the kernel; by default the running kernel if its build tree is
# installed, else the first of KVERS below.  `make check` runs on
# the newest installed generic Debian kernel of each series (KVERS: a 6.1
# upgrade leaves the one before installed) unless KVER or KVERS is
# given: the PREEMPT_RT flavour and `make debug-kernel`'s kernel are run by
# name (make check KVERS=...).  C=2 and W=1 reach Kbuild unchanged.

SRC := $(CURDIR)
KVERS_ALL := $(shell ls -d /lib/modules/*-amd64/build 2>/dev/null | \
		cut -d/ -f4 | grep -v -- '-rt-amd64$$' | sort -V | \
		while read k; do [ -e /boot/vmlinuz-$$k ] && echo $$k; done | \
		awk -F. '{ newest[$$1 "." $$2] = $$0 } END { for (s in newest) print newest[s] }' | \
		sort -V)
ifeq ($(origin KVER),undefined)
  ifneq ($(wildcard /lib/modules/$(shell uname -r)/build),)
    KVER := $(shell uname -r)
  else
    KVER := $(firstword $(KVERS_ALL))
  endif
  KVERS ?= $(KVERS_ALL)
else
  KVERS ?= $(KVER)
endif
KDIR ?= /lib/modules/$(KVER)/build
BUILD = $(SRC)/build/$(KVER)

DESTDIR ?=
LIBDIR ?= $(or $(shell pkg-config --variable=libdir libibverbs 2>/dev/null), \
	       /usr/lib/$(shell $(CC) -print-multiarch))

.PHONY: all modules modules-all user tests deps check check-rdma-core run bench bench-wire bench-scale profile \
	install dkms-install dkms-uninstall deb check-deb debug-kernel fuzz clean FORCE

all: modules user tests

# Kbuild writes its objects beside the sources, so every kernel gets its own
# tree of links to them.  Kbuild runs only when a source is newer than the
# module (entering it costs minutes in a TCG guest's "make install"), or
# always for W= and C=, whose point is to see its diagnostics.
KSRCS := $(shell cd $(SRC) && find Kbuild kernel include -type f \( -name '*.[ch]' -o -name Kbuild \))

modules: $(BUILD)/softrma.ko $(BUILD)/softrma_ktest.ko

$(BUILD)/softrma.ko: $(KSRCS) Makefile $(if $(W)$(C),FORCE)
	@test -d "$(KDIR)" || { echo "no kernel build tree at $(KDIR): run 'make deps'"; exit 1; }
	@mkdir -p $(BUILD)/src
	@find $(BUILD)/src -xtype l -delete
	@cd $(SRC) && find Kbuild kernel include -type f \( -name '*.[ch]' -o -name Kbuild \) | \
		while read f; do mkdir -p $(BUILD)/src/$$(dirname $$f); \
		ln -sf $(SRC)/$$f $(BUILD)/src/$$f; done
	$(MAKE) -C $(KDIR) M=$(BUILD)/src modules
	@cp $(BUILD)/src/kernel/softrma.ko $(BUILD)/softrma.ko
	@echo "built $(BUILD)/softrma.ko"

# The kernel-verbs test module (selftests/device/ktest.sh), the same way.
KTEST_SRCS := $(shell cd $(SRC) && ls selftests/kmod/Kbuild selftests/kmod/*.c)

$(BUILD)/softrma_ktest.ko: $(KTEST_SRCS) Makefile $(if $(W)$(C),FORCE)
	@mkdir -p $(BUILD)/ktest
	@for f in $(KTEST_SRCS); do ln -sf $(SRC)/$$f $(BUILD)/ktest/; done
	$(MAKE) -C $(KDIR) M=$(BUILD)/ktest modules
	@cp $(BUILD)/ktest/softrma_ktest.ko $@
	@echo "built $@"

modules-all:
	@set -e; for k in $(KVERS); do $(MAKE) --no-print-directory modules KVER=$$k; done

user:
	$(MAKE) -C user

tests: user
	$(MAKE) -C selftests

deps:
	sh scripts/deps.sh

check: user tests
	@KVERS="$(KVERS)" sh selftests/check.sh

debug-kernel:
	sh scripts/debug-kernel.sh

# The provider with libibverbs of other rdma-core releases (device/rdma_core.sh),
# built once by scripts/build-rdma-core.sh into RDMA_CORE_BUILDS.
RDMA_CORE_BUILDS ?= /var/tmp/rdma-core-builds
check-rdma-core: modules user tests
	selftests/vm/run -k $(KVER) -m 4096 -t 1200 -- env RDMA_CORE_BUILDS=$(RDMA_CORE_BUILDS) \
		sh selftests/run_tests.sh device/rdma_core.sh

# make deb's packages installed, used and purged in a guest (device/deb.sh);
# DKMS compiles the module there for two or three kernels.
check-deb: deb tests
	selftests/vm/run -k $(KVER) -m 4096 -t 2700 -- env TEST_TIMEOUT=2400 \
		sh selftests/run_tests.sh device/deb.sh

fuzz:
	$(MAKE) -C selftests/proto fuzz FUZZ_SECONDS=$(or $(FUZZ_SECONDS),600)

run: modules user
	selftests/vm/run -k $(KVER) -- scripts/demo.sh $(KVER)

# make bench: one guest per CPU model of BENCH_CPUS (qemu's max and its
# default qemu64: TCG emulates SIMD slowly, which moves CRC and copy costs),
# build/bench-KVER-CPU/ with bench.txt, bench.dat and the chart bench.svg.
# make bench-wire: two guests over a qemu link, the same rows: a UDP link
# (a TCP one holds small frames back for its ACKs, some 20 ms per round
# trip) and BENCH_WIRE_VCPUS each (1: two guests of 2 would share this
# machine's 2 cores four ways).
BENCH_CPUS ?= max qemu64
BENCH_WIRE_VCPUS ?= 1

bench: modules user build/sync_cost build/ceiling $(BUILD)/siw.ko
	@set -e; for cpu in $(BENCH_CPUS); do \
		out=build/bench-$(KVER)-$$cpu; mkdir -p $$out; \
		{ selftests/vm/run -k $(KVER) -c $$cpu -t 3600 -o $$out -- sh bench/guest.sh; \
		  echo $$? > $$out/rc; } | tee $$out/bench.txt; \
		test "$$(cat $$out/rc)" = 0; \
		sh bench/chart.sh $$out/bench.dat rxe "$(KVER), -cpu $$cpu, one guest" $$out/bench.svg; \
	done

bench-wire: modules user
	@set -e; for cpu in $(BENCH_CPUS); do \
		out=build/bench-wire-$(KVER)-$$cpu; \
		{ SOFTRMA_VM_LINK=udp SOFTRMA_VM_SMP=$(BENCH_WIRE_VCPUS) \
		  selftests/wire/pair -c $$cpu -t 3600 -o $$out $(KVER) $(KVER) bench/wire.sh; \
		  echo $$? > $$out.rc; } | tee $$out.txt; \
		test "$$(cat $$out.rc)" = 0; \
		sh bench/chart.sh $$out/b/bench.dat rxe-rxe "$(KVER), -cpu $$cpu, two guests" $$out.svg; \
	done

# make bench-scale: ib_write_bw with one QP, four QPs and two processes on
# every device of one guest, booted with one vCPU and with two
# (bench/scale.sh), in build/bench-scale-KVER-CPU.txt and .svg.
bench-scale: modules user $(BUILD)/siw.ko
	@set -e; for cpu in $(BENCH_CPUS); do \
		out=build/bench-scale-$(KVER)-$$cpu; rm -rf $$out; \
		for n in 1 2; do \
			mkdir -p $$out/$$n; \
			SOFTRMA_VM_SMP=$$n selftests/vm/run -k $(KVER) -c $$cpu -t 3600 \
				-o $$out/$$n -- sh bench/scale.sh; \
			test "$$(cat $$out/$$n/rc)" = 0; \
		done; \
		sh bench/scale.sh report $$out/1/scale.dat $$out/2/scale.dat \
			$$out/chart.dat | tee $$out.txt; \
		sh bench/chart.sh $$out/chart.dat 1vcpu \
			"$(KVER), -cpu $$cpu, ib_write_bw 2 vCPUs / 1" $$out.svg; \
	done

# make profile: perf profiles of PROFILE's DEV:TOOL:SIZE runs (bench/profile.sh)
# in build/profile-KVER-CPU/.
PROFILE ?= local:ib_send_bw:64 wire:ib_write_bw:4096 rxe:ib_write_bw:4096 \
	wire:ib_send_lat:2 rxe:ib_send_lat:2
profile: modules user $(BUILD)/siw.ko
	@set -e; for cpu in $(BENCH_CPUS); do \
		out=build/profile-$(KVER)-$$cpu; rm -rf $$out; mkdir -p $$out; \
		selftests/vm/run -k $(KVER) -c $$cpu -t 3600 -o $$out -- sh bench/profile.sh $(PROFILE); \
	done

$(BUILD)/siw.ko: scripts/build-siw.sh
	sh scripts/build-siw.sh $(KVER) $(BUILD)

build/ceiling: bench/ceiling.c
	@mkdir -p build
	$(CC) -O2 -Wall -Wextra -Werror -o $@ $<

build/sync_cost: bench/sync_cost.c user/softrmadv.h user/libsoftrma-rdmav34.so
	@mkdir -p build
	$(CC) -O2 -Wall -Wextra -Werror -Iuser -o $@ $< -Luser -l:libsoftrma-rdmav34.so \
		-Wl,-rpath,$(CURDIR)/user -libverbs

# What Kbuild's modules_install does for an unsigned, uncompressed module,
# without the minutes it takes to re-enter Kbuild under TCG.
install: modules user
	install -D -m 644 $(BUILD)/softrma.ko /lib/modules/$(KVER)/updates/softrma.ko
	depmod -a $(KVER)
	$(MAKE) -C user install DESTDIR=$(DESTDIR) LIBDIR=$(LIBDIR)

VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' $(SRC)/dkms.conf)
DKMS_SRC := /usr/src/softrma-$(VERSION)

# The sources only, writable by root alone, whatever the umask (dkms-src.sh).
dkms-install: user
	rm -rf $(DKMS_SRC)
	sh scripts/dkms-src.sh $(DKMS_SRC)
	dkms status -m softrma -v $(VERSION) | grep -q . || dkms add -m softrma -v $(VERSION)
	dkms install -m softrma -v $(VERSION) -k $(KVER)
	$(MAKE) -C user install LIBDIR=$(LIBDIR)

dkms-uninstall:
	! dkms status -m softrma -v $(VERSION) | grep -q . || dkms remove -m softrma -v $(VERSION) --all
	rm -rf $(DKMS_SRC)

deb:
	sh scripts/deb.sh build/deb

clean:
	rm -rf build
	$(MAKE) -C user clean
	$(MAKE) -C selftests clean
	$(MAKE) -C selftests/proto clean
