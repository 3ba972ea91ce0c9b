// SPDX-License-Identifier: GPL-2.0
/*
 * vnetctl top's terminal: plain ANSI sequences rather than ncurses, so the
 * tool links nothing new and works on any VT100 descendant.
 *
 * The screen is redrawn from the top-left corner, each line cleared to its
 * end and the rest of the screen after the last one, which does not
 * flicker as clearing the whole screen first would.  No alternate screen:
 * the last view stays on the terminal after top ends, as with -n COUNT.
 *
 * Whatever way top ends (q, SIGINT, SIGQUIT, SIGTERM, SIGHUP, an error,
 * exit()), the terminal is given back as it was; Ctrl-Z gives it back
 * too, and fg takes it again.  The signals are blocked except while ppoll() waits, so
 * one that comes while sysfs is read is not lost until the next deadline.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "top.h"

#define CSI		"\x1b["

static volatile sig_atomic_t got_quit, got_stop, got_winch;
static struct termios saved_tio;
static sigset_t wait_mask;		/* the mask while ppoll() waits */
static bool redraw;			/* stdout is a terminal we draw on */
static bool keys;			/* stdin is a terminal we read keys from */
static bool raw;			/* stdin's settings are ours right now */
static bool entered;			/* the terminal is ours right now */
static bool started;

double top_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_signal(int sig)
{
	if (sig == SIGTSTP)
		got_stop = 1;
	else if (sig == SIGWINCH)
		got_winch = 1;
	else
		got_quit = 1;
}

static void handle(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/*
 * Keys one at a time and unechoed; ISIG stays on, so Ctrl-C is still
 * SIGINT and Ctrl-Z SIGTSTP.  The cursor is hidden and lines do not wrap:
 * a narrow terminal cuts the table off instead of scrolling it away.
 */
static void enter(void)
{
	struct termios tio;

	if (entered)
		return;
	if (keys && !tcgetattr(STDIN_FILENO, &saved_tio)) {
		tio = saved_tio;
		tio.c_lflag &= ~(ICANON | ECHO);
		tio.c_cc[VMIN] = 1;
		tio.c_cc[VTIME] = 0;
		raw = !tcsetattr(STDIN_FILENO, TCSANOW, &tio);
	} else {
		keys = false;
	}
	fputs(CSI "?25l" CSI "?7l" CSI "H" CSI "2J", stdout);
	fflush(stdout);
	entered = true;
}

void top_term_restore(void)
{
	if (!entered)
		return;
	entered = false;
	fputs(CSI "0m" CSI "?7h" CSI "?25h", stdout);
	fflush(stdout);
	if (raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	raw = false;
}

/*
 * @want_redraw: draw screens in place if stdout is a terminal; otherwise
 * (and for --once or --json) nothing here changes how top behaves.
 */
void top_term_start(bool want_redraw)
{
	static const int sigs[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP,
				    SIGTSTP, SIGWINCH };
	sigset_t block;
	size_t i;

	redraw = want_redraw && isatty(STDOUT_FILENO);
	if (!redraw || started)
		return;
	started = true;
	keys = isatty(STDIN_FILENO);
	sigemptyset(&block);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaddset(&block, sigs[i]);
		handle(sigs[i], on_signal);
	}
	sigprocmask(SIG_BLOCK, &block, &wait_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigdelset(&wait_mask, sigs[i]);
	/* A full screen goes out in one write, not a line at a time. */
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	atexit(top_term_restore);
	enter();
}

/* Ctrl-Z: the shell gets its terminal back while we are stopped. */
static void suspend(void)
{
	sigset_t tstp;

	top_term_restore();
	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	handle(SIGTSTP, SIG_DFL);
	raise(SIGTSTP);
	/* Pending while blocked; unblocking stops us here until SIGCONT. */
	sigprocmask(SIG_UNBLOCK, &tstp, NULL);
	sigprocmask(SIG_BLOCK, &tstp, NULL);
	handle(SIGTSTP, on_signal);
	enter();
}

/*
 * Sleep until @deadline (top_now() seconds), or until a key, a signal or
 * a resize says otherwise.  Without a terminal to draw on this is only a
 * sleep, and signals do what they always do.
 */
enum top_wake top_term_wait(double deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		struct timespec ts;
		double left;
		char c;
		int n;

		if (got_quit)
			return TOP_QUIT;
		if (got_stop) {
			got_stop = 0;
			suspend();
			return TOP_REDRAW;
		}
		if (got_winch) {
			got_winch = 0;
			return TOP_REDRAW;
		}
		left = deadline - top_now();
		if (left <= 0)
			return TOP_TICK;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		n = ppoll(&pfd, keys ? 1 : 0, &ts, redraw ? &wait_mask : NULL);
		if (n <= 0)
			continue;
		if (pfd.revents & POLLIN) {
			ssize_t r = read(STDIN_FILENO, &c, 1);

			if (r == 1 && (c == 'q' || c == 'Q'))
				return TOP_QUIT;
			if (r == 1)
				continue;
		}
		/* End of input or a hung-up terminal: no more keys, but go on. */
		keys = false;
	}
}

bool top_term_redraws(void)
{
	return redraw;
}

bool top_term_keys(void)
{
	return keys;
}

/* The lines a screen may take; the last row stays empty for the cursor. */
size_t top_term_rows(void)
{
	struct winsize ws;

	if (!redraw)
		return (size_t)-1;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || ws.ws_row < 2)
		return 23;
	return ws.ws_row - 1;
}

void top_term_home(void)
{
	if (redraw)
		fputs(CSI "H", stdout);
}

/* What ends a line: on a terminal, also the rest of the last screen's. */
const char *top_term_eol(void)
{
	return redraw ? CSI "K\n" : "\n";
}

void top_term_end_screen(void)
{
	if (redraw)
		fputs(CSI "J", stdout);
}
