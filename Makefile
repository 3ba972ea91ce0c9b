# SPDX-License-Identifier: GPL-2.0
#
# make            build vnet.ko against Debian's linux-headers and the tools
# make install    vnetctl, vnet-bench, vnet-mapd (and its unit), libvnet
#                 (library, headers, vnet.pc) and the man pages
#                 into $(DESTDIR)$(PREFIX)
# make dkms-install  vnet.ko through DKMS, for every kernel installed
# make udev-install  /dev/vnet for group vnet (udev rule)
# make deb        Debian packages in build/deb/ (debian/), lintian-checked
# make check      host unit tests, a fuzz smoke run, sparse, the VM selftests
# make fuzz       the firmware's fuzzers, FUZZ_SECONDS (600) each, one
#                 after the other (firmware/test/fuzz/Makefile)
# make fuzz-coverage  firmware/ reached by the unit tests and by the fuzzers
# make check-cluster  the cluster selftest alone (part of make check)
# make demo       boot a VM, load the module and show paging at work
# make bench-mapd the mapper's convergence against node count, simulated
# make bench-cluster  vnet beside TCP between two nodes of a cluster of VMs
# make setup      install the Debian packages all of this needs
# make KVER=R ... the same for kernel release R (README.md)

# The kernel to build for and to boot the test VMs with: one setting for
# both (tools/testing/kver: by default the newest with headers and image).
KVER ?= $(shell tools/testing/kver)
KDIR ?= /usr/src/linux-headers-$(KVER)
export KVER
PREFIX ?= /usr/local

MODULE := vnet.ko
LINUX_SRC_TAR ?= $(lastword $(sort $(wildcard /usr/src/linux-source-*.tar.xz)))
KSFT_DIR := build/ksft

# Pieces of the kernel source we use as they are: the kselftest harness
# and checkpatch.
KSFT_FILES := tools/testing/selftests/kselftest_harness.h \
	      tools/testing/selftests/kselftest.h
CHECKPATCH_FILES := scripts/checkpatch.pl scripts/spelling.txt \
		    scripts/const_structs.checkpatch

.PHONY: all module lib tools selftests fwtests check demo setup clean sparse \
	ksft-headers checkpatch install

all: module lib tools selftests fwtests

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

sparse:
	$(MAKE) -C $(KDIR) M=$(CURDIR) C=2 modules

# kbuild writes objects next to the sources: a vnet.ko for another kernel
# (the debug kernel, or another release) is built from a copy of them, so
# it and the tree's coexist.  rsync copies changed files only.
copy_module_src = rsync -a --delete --prune-empty-dirs \
	--exclude=/firmware/test/ --exclude=/drivers/vnet/test/ \
	--include='*/' --include='*.[ch]' --include=/Kbuild --include=/VERSION \
	--exclude='*' Kbuild VERSION drivers firmware uapi $(1)/

# vnet.ko for kernel $(KVER) in build/kver/$(KVER)/, beside the tree's
# (make check builds and tests one for every other kernel installed).
KVER_SRC = build/kver/$(KVER)/src

.PHONY: kver-module
kver-module:
	@mkdir -p $(KVER_SRC)
	$(call copy_module_src,$(KVER_SRC))
	$(MAKE) -C $(KDIR) M=$(CURDIR)/$(KVER_SRC) modules
	cp $(KVER_SRC)/vnet.ko build/kver/$(KVER)/vnet.ko

# libvnet and its examples; vnet-bench and the selftests link it.
lib:
	$(MAKE) -C tools/lib/vnet all examples

MAN_PAGES := Documentation/man/vnetctl.8 Documentation/man/vnet.4 \
	     Documentation/man/libvnet.3 Documentation/man/vnet-mapd.8 \
	     Documentation/man/vnet-bench.1

install: lib tools
	$(MAKE) -C tools/lib/vnet install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C tools/vnetctl install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C tools/vnet-bench install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C tools/vnet-mapd install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	for m in $(MAN_PAGES); do \
		install -D -m 0644 $$m \
			$(DESTDIR)$(PREFIX)/share/man/man$${m##*.}/$${m##*/} || exit 1; \
	done

# DKMS (dkms.conf): the module's sources in $(DESTDIR)/usr/src/vnet-
# $(VERSION), then dkms builds and installs vnet.ko for every kernel
# installed with its headers and image (tools/testing/kver), and for each
# new kernel as it is installed.  dkms-uninstall takes it all away again.
VERSION := $(shell cat VERSION)
DKMS_SRC = $(DESTDIR)/usr/src/vnet-$(VERSION)

.PHONY: dkms-src dkms-install dkms-uninstall
dkms-src:
	@mkdir -p $(DKMS_SRC)
	$(call copy_module_src,$(DKMS_SRC))
	sed 's/#MODULE_VERSION#/$(VERSION)/' dkms.conf > $(DKMS_SRC)/dkms.conf

dkms-install: dkms-src
	dkms status -m vnet -v $(VERSION) | grep -q . || \
		dkms add -m vnet -v $(VERSION)
	for k in $$(tools/testing/kver --all); do \
		dkms install -m vnet -v $(VERSION) -k $$k || exit 1; \
	done

# The Debian packages (debian/): vnet-dkms, vnet-utils, libvnet1 and
# libvnet-dev, built by dpkg-buildpackage from a copy of the tree's files
# in build/deb/ (where it leaves them), then checked by lintian.  The
# package's version is VERSION's.
DEB_DIR := build/deb
DEB_SRC = $(DEB_DIR)/vnet-$(VERSION)

.PHONY: deb
deb:
	@[ "$$(dpkg-parsechangelog -S Version)" = "$(VERSION)" ] || \
		{ echo "debian/changelog is not at VERSION $(VERSION)" >&2; exit 1; }
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	git ls-files -z --cached --others --exclude-standard | \
		rsync -a --from0 --files-from=- . $(DEB_SRC)/
	cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b
	lintian --fail-on warning,error $(DEB_DIR)/vnet_$(VERSION)_*.changes

# /dev/vnet for group vnet (tools/udev/60-vnet.rules), the group made if
# it does not exist; the rule applied at once where udev runs.
UDEV_RULES ?= /etc/udev/rules.d

.PHONY: udev-install
udev-install:
	install -D -m 0644 tools/udev/60-vnet.rules \
		$(DESTDIR)$(UDEV_RULES)/60-vnet.rules
	[ -n "$(DESTDIR)" ] || getent group vnet >/dev/null || \
		groupadd --system vnet
	[ -n "$(DESTDIR)" ] || ! udevadm control --reload 2>/dev/null || \
		udevadm trigger --subsystem-match=misc --sysname-match=vnet

dkms-uninstall:
	! dkms status -m vnet -v $(VERSION) | grep -q . || \
		dkms remove -m vnet -v $(VERSION) --all
	rm -rf $(DKMS_SRC)

tools: lib
	$(MAKE) -C tools/vnetctl
	$(MAKE) -C tools/vnet-bench
	$(MAKE) -C tools/vnet-mapd

selftests: ksft-headers lib
	$(MAKE) -C selftests

# The host unit tests: the firmware, the residency policy, the mapper.
fwtests: ksft-headers
	$(MAKE) -C firmware/test
	$(MAKE) -C drivers/vnet/test
	$(MAKE) -C tools/vnet-mapd/test

ksft-headers: $(KSFT_DIR)/kselftest_harness.h

$(KSFT_DIR)/kselftest_harness.h:
	@test -n "$(LINUX_SRC_TAR)" || { echo "no /usr/src/linux-source-*.tar.xz: run 'make setup'" >&2; exit 1; }
	mkdir -p $(KSFT_DIR) build/kernel-src
	tar -xJf $(LINUX_SRC_TAR) -C build/kernel-src --strip-components=1 \
		$(addprefix $(notdir $(basename $(basename $(LINUX_SRC_TAR))))/,$(KSFT_FILES) $(CHECKPATCH_FILES))
	cp $(addprefix build/kernel-src/,$(KSFT_FILES)) $(KSFT_DIR)/

checkpatch: ksft-headers
	perl build/kernel-src/scripts/checkpatch.pl --no-tree --strict --terse \
		-f $$(git ls-files 'drivers/*.[ch]' 'firmware/*.[ch]' 'uapi/*.h' ':!firmware/test' ':!drivers/vnet/test')

check: all
	tools/testing/check

# Four guests, each with its own kernel, on one private switch
# (tools/vm/cluster): AM traffic between every pair with routes set by
# hand, then with vnet-mapd through a cold start, a power cut and a
# reboot, a link cut, the leader's daemon killed, and paging through 10%
# loss (selftests/cluster/run.sh).
.PHONY: check-cluster
check-cluster: all
	tools/vm/cluster --nodes 4 --timeout 600 -- selftests/cluster/run.sh

demo: setup all
	tools/vm/run -- tools/testing/demo

# vnet pingpong and bw between two NICs on veth, beside TCP (sockperf,
# iperf3), Soft-RoCE (perftest over rdma_rxe) and memcpy in the same VM
# run; tools/testing/bench-wire.  KVER=<6.1 release> for rxe's round trip
# (6.12's fails here, vnet-bench.rst).  One vCPU: with two
# on a two-core host, every wake-up across vCPUs waits for the host's
# scheduler and the figures measure that (Documentation/vnet/vnet-bench.rst).
.PHONY: bench-wire
BENCH_WIRE_ENV := $(foreach v,BENCH_SIZES BENCH_SECONDS BENCH_MTU,\
	$(if $($(v)),$(v)=$($(v))))
bench-wire: setup all
	tools/vm/run --smp 1 --timeout 1800 -- env $(BENCH_WIRE_ENV) \
		tools/testing/bench-wire

# vnet pingpong and bw between the kernels of two nodes of a four-node
# cluster whose ids and routes vnet-mapd keeps, beside TCP (sockperf,
# iperf3) between the same two nodes over the same switch, in the same
# run; tools/testing/bench-cluster.
.PHONY: bench-cluster
bench-cluster: setup all
	tools/vm/cluster --nodes 4 --timeout 900 -- tools/testing/bench-cluster

# The NOW paper's overcommit experiment (figures 10 and 11) and vnet-bench
# paging, once with one vCPU and once with two (tools/testing/
# bench-overcommit), then the figure from both (tools/testing/
# plot-overcommit) and what paging could reach with the best policy
# (tools/testing/paging-bound).  The results stay in the tree, where the VM can
# write them (Documentation/vnet/vnet-bench.rst).
OVERCOMMIT_OUT := build/bench-overcommit
BENCH_SECONDS ?= 2
BENCH_REPEAT ?= 3

# The mapper's convergence time, datagrams and join and death times for
# 16 to 1024 nodes, on the simulated segment (tools/vnet-mapd/test).
.PHONY: bench-mapd
bench-mapd:
	$(MAKE) -C tools/vnet-mapd bench

# The firmware's libFuzzer harnesses (clang), each for FUZZ_SECONDS on a
# scratch copy of its seeds in build/fuzz/run/; fails if one crashed.
.PHONY: fuzz
fuzz:
	$(MAKE) -C firmware/test/fuzz run $(if $(FUZZ_SECONDS),FUZZ_SECONDS=$(FUZZ_SECONDS)) \
		$(if $(FUZZ_GROWN),FUZZ_GROWN=$(FUZZ_GROWN))

# How much of firmware/ the unit tests and the fuzzers' inputs reach
# (clang's source-based coverage); FUZZ_CORPUS=build/fuzz/run after make
# fuzz counts what that run found.
.PHONY: fuzz-coverage
fuzz-coverage:
	FUZZ_CORPUS=$(FUZZ_CORPUS) tools/testing/fuzz-coverage

# The firmware's instructions per message, counted by callgrind on the
# host simulation (firmware/test/fw_cost.c): repeatable where VM timings
# are not.
.PHONY: bench-fw-cost
bench-fw-cost: ksft-headers
	$(MAKE) -C firmware/test cost

# The pipeline model that sizes trains' fragments against what each size
# takes (figures 8 and 9 of "Optimal communication pipelines"): tools/
# testing/bench-frag in a VM, then the figure (tools/testing/plot-frag),
# in build/bench-frag/.  One vCPU, as for bench-wire: with two on a
# two-core host the round trips turn bimodal (Documentation/vnet/
# vnet-bench.rst).
FRAG_OUT := build/bench-frag
BENCH_FRAG_ENV := $(foreach v,BENCH_SIZES BENCH_FRAGS BENCH_COUNT BENCH_MTU,\
	$(if $($(v)),$(v)=$($(v))))
.PHONY: bench-frag
bench-frag: setup all
	mkdir -p $(FRAG_OUT)
	tools/vm/run --smp 1 --timeout 1800 -- env \
		BENCH_OUT=$(CURDIR)/$(FRAG_OUT) $(BENCH_FRAG_ENV) \
		tools/testing/bench-frag
	tools/testing/plot-frag -o $(FRAG_OUT)/frag.png $(FRAG_OUT)

.PHONY: bench-overcommit
bench-overcommit: setup all
	@st=0; for n in 1 2; do \
		mkdir -p $(OVERCOMMIT_OUT)/smp$$n && \
		tools/vm/run --smp $$n --timeout 1800 -- env \
			BENCH_OUT=$(CURDIR)/$(OVERCOMMIT_OUT)/smp$$n \
			BENCH_SECONDS=$(BENCH_SECONDS) \
			BENCH_REPEAT=$(BENCH_REPEAT) \
			tools/testing/bench-overcommit || st=1; \
	done; \
	tools/testing/plot-overcommit -o $(OVERCOMMIT_OUT)/overcommit.png \
		$(OVERCOMMIT_OUT)/smp1 $(OVERCOMMIT_OUT)/smp2 || st=1; \
	tools/testing/paging-bound $(OVERCOMMIT_OUT)/smp*/paging.[0-9]*.csv || st=1; \
	exit $$st

setup:
	tools/testing/setup

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C firmware/test clean
	$(MAKE) -C firmware/test/fuzz clean
	$(MAKE) -C drivers/vnet/test clean
	$(MAKE) -C tools/vnetctl clean
	$(MAKE) -C tools/vnet-bench clean
	$(MAKE) -C tools/vnet-mapd clean
	$(MAKE) -C tools/lib/vnet clean
	$(MAKE) -C selftests clean

# The debug-kernel lane (Documentation/vnet/testing.rst): a KASAN, lockdep,
# kmemleak and failslab kernel built once into ~/.cache, vnet.ko built
# against it in build/debug/, and the VM selftests plus a fault-injection
# pass on it.
DEBUG_KERNEL := tools/testing/debug-kernel/build

DEBUG_SRC := build/debug/src

.PHONY: debug-kernel debug-module debug-tests check-debug

debug-kernel:
	@$(DEBUG_KERNEL) >/dev/null

debug-module: debug-kernel
	@mkdir -p $(DEBUG_SRC)
	$(call copy_module_src,$(DEBUG_SRC))
	$(MAKE) -C $$($(DEBUG_KERNEL) --path) M=$(CURDIR)/$(DEBUG_SRC) modules
	cp $(DEBUG_SRC)/vnet.ko build/debug/vnet.ko

debug-tests: ksft-headers
	$(MAKE) -C tools/testing/debug-kernel

check-debug: all debug-module debug-tests
	tools/testing/debug-kernel/check
