// SPDX-License-Identifier: GPL-2.0
/*
 * A minimal streaming JSON writer: objects, arrays, strings, integers and
 * rates, with the commas placed for the caller.  Output is compact, one
 * document per line.
 */
#include <inttypes.h>
#include <math.h>

#include "vnetctl.h"

void json_init(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = true;
}

static void json_string(struct json *j, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', j->f);
	for (; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", j->f);
			break;
		case '\\':
			fputs("\\\\", j->f);
			break;
		case '\n':
			fputs("\\n", j->f);
			break;
		case '\t':
			fputs("\\t", j->f);
			break;
		default:
			if (*p < 0x20)
				fprintf(j->f, "\\u%04x", *p);
			else
				fputc(*p, j->f);
		}
	}
	fputc('"', j->f);
}

/* The comma and "key": before a value; @key is NULL inside arrays. */
static void json_member(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (key) {
		json_string(j, key);
		fputc(':', j->f);
	}
}

/* Open an object ('{') or array ('['). */
void json_open(struct json *j, const char *key, char bracket)
{
	json_member(j, key);
	fputc(bracket, j->f);
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->first[j->depth] = true;
}

void json_close(struct json *j, char bracket)
{
	if (j->depth > 0)
		j->depth--;
	fputc(bracket, j->f);
	if (!j->depth)
		fputc('\n', j->f);
}

void json_str(struct json *j, const char *key, const char *val)
{
	json_member(j, key);
	json_string(j, val);
}

void json_u64(struct json *j, const char *key, uint64_t val)
{
	json_member(j, key);
	fprintf(j->f, "%" PRIu64, val);
}

void json_s64(struct json *j, const char *key, int64_t val)
{
	json_member(j, key);
	fprintf(j->f, "%" PRId64, val);
}

/* Rates: three decimals are below anything a counter over a second shows. */
void json_f64(struct json *j, const char *key, double val)
{
	json_member(j, key);
	if (isfinite(val))
		fprintf(j->f, "%.3f", val);
	else
		fputs("null", j->f);
}
