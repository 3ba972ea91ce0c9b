/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vnetctl top: the command and its rates (top.c), and the terminal it
 * redraws (top_term.c).
 */
#ifndef _VNETCTL_TOP_H
#define _VNETCTL_TOP_H

#include <stdbool.h>
#include <stddef.h>

/* What woke top_term_wait(). */
enum top_wake {
	TOP_TICK,			/* the deadline came: sample again */
	TOP_REDRAW,			/* resized or resumed: draw the last screen */
	TOP_QUIT,			/* q, SIGINT, SIGTERM or SIGHUP */
};

double top_now(void);
void top_term_start(bool redraw);
void top_term_restore(void);
enum top_wake top_term_wait(double deadline);
bool top_term_redraws(void);
bool top_term_keys(void);
size_t top_term_rows(void);
void top_term_home(void);
const char *top_term_eol(void);
void top_term_end_screen(void);

#endif /* _VNETCTL_TOP_H */
