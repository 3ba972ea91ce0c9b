/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels vnet supports (README.md): the code is
 * written against the newest interfaces, and this file gives them to the
 * older kernels, so it shrinks as they are dropped.
 */
#ifndef _VNET_COMPAT_H
#define _VNET_COMPAT_H

#include <linux/mm.h>
#include <linux/skbuff.h>
#ifdef VNET_HAVE_SKBUFF_REF_H
/* 6.9 moved skb_frag_unref() and its kin out of skbuff.h. */
#include <linux/skbuff_ref.h>
#endif

/*
 * Each VNET_HAVE_* is defined by Kbuild when the kernel's headers have the
 * interface.
 */

#ifndef VNET_HAVE_VM_FLAGS_SET
/* 6.3 made vm_flags read-only outside these helpers. */
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

#ifndef VNET_HAVE_SKB_FRAGS_READABLE
/* 6.12 brought frames whose pages are device memory: none before. */
static inline bool skb_frags_readable(const struct sk_buff *skb)
{
	return true;
}
#endif

#endif /* _VNET_COMPAT_H */
