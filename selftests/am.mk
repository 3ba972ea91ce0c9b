# SPDX-License-Identifier: GPL-2.0
# The libvnet (AM-II) selftests, included at the end of selftests/Makefile.
# They link tools/lib/vnet/libvnet.a, which is brought up to date first.

AM_TESTS := am_test am_msg_test am_wait_test am_pin_test
TESTS += $(AM_TESTS)
LIBVNET := $(TOP)/tools/lib/vnet/libvnet.a

all: $(AM_TESTS)

$(AM_TESTS): %: %.c $(DEPS) am_util.h $(LIBVNET) \
		$(TOP)/tools/lib/vnet/include/vnet/am.h
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LIBVNET) $(LDLIBS)

$(LIBVNET): FORCE
	$(MAKE) -C $(TOP)/tools/lib/vnet libvnet.a

.PHONY: FORCE
FORCE:
