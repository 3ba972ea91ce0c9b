/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The firmware's view of its environment when it runs inside vnet.ko: the
 * kernel's types, string functions and memory-ordering primitives.  The
 * host-side tests provide their own file of this name.
 */
#ifndef _VNET_FW_ENV_H
#define _VNET_FW_ENV_H

#include <linux/kernel.h>
#include <linux/types.h>
#include <asm/byteorder.h>
#include <linux/string.h>
#include <asm/barrier.h>
#include <linux/compiler.h>
#include <linux/math64.h>

#define fw_memcpy(d, s, n)		memcpy(d, s, n)
#define fw_memmove(d, s, n)		memmove(d, s, n)
#define fw_memset(d, c, n)		memset(d, c, n)
#define fw_memcmp(a, b, n)		memcmp(a, b, n)
/* 64-bit divisions by a variable: a 32-bit kernel has no '/' for them. */
#define fw_div64_u64(a, b)		div64_u64(a, b)
#define fw_div64_s64(a, b)		div64_s64(a, b)
/* The host tests change user memory here, between a read and its use. */
#define fw_user_fetched(p, n)		do { } while (0)
#define fw_read_once(x)			READ_ONCE(x)
#define fw_write_once(x, v)		WRITE_ONCE(x, v)
#define fw_cpu_to_be16(x)		cpu_to_be16(x)
#define fw_cpu_to_be32(x)		cpu_to_be32(x)
#define fw_cpu_to_be64(x)		cpu_to_be64(x)
#define fw_be16_to_cpu(x)		be16_to_cpu(x)
#define fw_be32_to_cpu(x)		be32_to_cpu(x)
#define fw_be64_to_cpu(x)		be64_to_cpu(x)

/* Queue indices shared with user space: acquire what it published. */
#define fw_load_acquire(p)		smp_load_acquire(p)
/* ... and release what the firmware wrote before moving an index. */
#define fw_store_release(p, v)		smp_store_release(p, v)
/* Between raising NEED_WAKEUP and the last look at the send queues. */
#define fw_smp_mb()			smp_mb()
/* A state machine asked to make an illegal transition: a firmware bug. */
#define fw_warn_on(cond)		WARN_ON_ONCE(cond)

#endif /* _VNET_FW_ENV_H */
