/* SPDX-License-Identifier: GPL-2.0 */
/* The firmware's environment in the host-side tests: plain C11. */
#ifndef _VNET_FW_ENV_H
#define _VNET_FW_ENV_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif
#ifndef __aligned
#define __aligned(x)		__attribute__((aligned(x)))
#endif

typedef int8_t s8;
typedef int32_t s32;
typedef int64_t s64;

#define fw_cpu_to_be16(x)	htobe16(x)
#define fw_cpu_to_be32(x)	htobe32(x)
#define fw_cpu_to_be64(x)	htobe64(x)
#define fw_be16_to_cpu(x)	be16toh(x)
#define fw_be32_to_cpu(x)	be32toh(x)
#define fw_be64_to_cpu(x)	be64toh(x)

#define fw_memcpy(d, s, n)	memcpy(d, s, n)
#define fw_memmove(d, s, n)	memmove(d, s, n)
#define fw_memset(d, c, n)	memset(d, c, n)
#define fw_memcmp(a, b, n)	memcmp(a, b, n)
#define fw_div64_u64(a, b)	((u64)(a) / (u64)(b))
#define fw_div64_s64(a, b)	((s64)(a) / (s64)(b))
/*
 * The firmware has taken its one copy of @n bytes of user memory at @p.  A
 * test may rewrite them now, as a user could at that very moment, so that
 * a second read finds other bytes than the copy it checked (user_fuzz).
 */
extern void (*fw_test_fetched)(void *p, size_t n);
#define fw_user_fetched(p, n) do {					\
	if (fw_test_fetched)						\
		fw_test_fetched(p, n);					\
} while (0)
#define fw_read_once(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define fw_write_once(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define fw_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define fw_store_release(p, v)	__atomic_store_n(p, (v), __ATOMIC_RELEASE)
#define fw_smp_mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)

/* A firmware bug: the tests stop right there. */
#include <stdio.h>
#include <stdlib.h>
#define fw_warn_on(cond) ({						\
	bool __c = (cond);						\
	if (__c) {							\
		fprintf(stderr, "%s:%d: fw_warn_on(%s)\n", __FILE__,	\
			__LINE__, #cond);				\
		abort();						\
	}								\
	__c;								\
})

#endif /* _VNET_FW_ENV_H */
