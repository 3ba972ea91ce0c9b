# SPDX-License-Identifier: GPL-2.0
# What the host-side unit tests (firmware/test, drivers/vnet/test) build
# with: the portable sources for user space, under the sanitizers.  The
# including Makefile sets TOP, the top of the tree, first.

.DEFAULT_GOAL := all
KSFT_DIR ?= $(TOP)/build/ksft
CC ?= cc
CFLAGS ?= -O1 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -fsanitize=address,undefined \
	  -fno-sanitize-recover=all \
	  -Wno-sign-compare -Wno-unused-parameter # for kselftest_harness.h

$(KSFT_DIR)/kselftest_harness.h:
	$(MAKE) -C $(TOP) ksft-headers
