// SPDX-License-Identifier: GPL-2.0
/*
 * A small JSON reader: the whole document into a tree of values, for the
 * mapper's state files.  Strict about the grammar, bounded in depth, and
 * with no escapes beyond what those files use it keeps \uXXXX for ASCII
 * only (anything else is refused, which is fine for what it reads).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

#define JR_MAX_DEPTH	16

struct jr {
	const char *p, *end;
	int depth;
};

static void skip_ws(struct jr *r)
{
	while (r->p < r->end && isspace((unsigned char)*r->p))
		r->p++;
}

static struct jv *jv_new(enum jv_kind kind)
{
	struct jv *v = calloc(1, sizeof(*v));

	if (v)
		v->kind = kind;
	return v;
}

void jv_free(struct jv *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->n; i++) {
		free(v->keys ? v->keys[i] : NULL);
		jv_free(v->items[i]);
	}
	free(v->keys);
	free(v->items);
	free(v->str);
	free(v);
}

static int hex4(const char *p)
{
	int x = 0, i;

	for (i = 0; i < 4; i++) {
		int c = p[i];

		x <<= 4;
		if (c >= '0' && c <= '9')
			x |= c - '0';
		else if (c >= 'a' && c <= 'f')
			x |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			x |= c - 'A' + 10;
		else
			return -1;
	}
	return x;
}

static char *read_string(struct jr *r)
{
	size_t cap = 16, n = 0;
	char *s = malloc(cap);

	if (!s || r->p >= r->end || *r->p != '"')
		goto bad;
	r->p++;
	while (r->p < r->end && *r->p != '"') {
		int c = (unsigned char)*r->p++;

		if (c < 0x20)
			goto bad;
		if (c == '\\') {
			if (r->p >= r->end)
				goto bad;
			c = *r->p++;
			switch (c) {
			case '"': case '\\': case '/':
				break;
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'u':
				if (r->end - r->p < 4)
					goto bad;
				c = hex4(r->p);
				r->p += 4;
				if (c < 0x01 || c > 0x7f)
					goto bad;
				break;
			default:
				goto bad;
			}
		}
		if (n + 2 > cap) {
			char *t = realloc(s, cap *= 2);

			if (!t)
				goto bad;
			s = t;
		}
		s[n++] = (char)c;
	}
	if (r->p >= r->end)
		goto bad;
	r->p++;
	s[n] = '\0';
	return s;
bad:
	free(s);
	return NULL;
}

static int push(struct jv *v, char *key, struct jv *item)
{
	struct jv **items = realloc(v->items, (v->n + 1) * sizeof(*items));
	char **keys;

	if (!items)
		return -1;
	v->items = items;
	if (v->kind == JV_OBJECT) {
		keys = realloc(v->keys, (v->n + 1) * sizeof(*keys));
		if (!keys)
			return -1;
		v->keys = keys;
		v->keys[v->n] = key;
	}
	v->items[v->n++] = item;
	return 0;
}

static struct jv *read_value(struct jr *r);

/* An object or an array, the opening bracket next. */
static struct jv *read_container(struct jr *r, bool object)
{
	struct jv *v = jv_new(object ? JV_OBJECT : JV_ARRAY);
	char close = object ? '}' : ']';

	if (!v || ++r->depth > JR_MAX_DEPTH)
		goto bad;
	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		r->depth--;
		return v;
	}
	for (;;) {
		char *key = NULL;
		struct jv *item;

		skip_ws(r);
		if (object) {
			key = read_string(r);
			skip_ws(r);
			if (!key || r->p >= r->end || *r->p++ != ':') {
				free(key);
				goto bad;
			}
		}
		item = read_value(r);
		if (!item || push(v, key, item)) {
			free(key);
			jv_free(item);
			goto bad;
		}
		skip_ws(r);
		if (r->p >= r->end)
			goto bad;
		if (*r->p == ',') {
			r->p++;
			continue;
		}
		if (*r->p++ != close)
			goto bad;
		r->depth--;
		return v;
	}
bad:
	jv_free(v);
	return NULL;
}

static struct jv *read_number(struct jr *r)
{
	struct jv *v = jv_new(JV_NUMBER);
	char buf[64], *end;
	size_t n = 0;

	while (r->p + n < r->end && n < sizeof(buf) - 1 &&
	       strchr("+-0123456789.eE", r->p[n]))
		n++;
	if (!v || !n || n == sizeof(buf) - 1)
		goto bad;
	memcpy(buf, r->p, n);
	buf[n] = '\0';
	v->num = strtod(buf, &end);
	if (*end)
		goto bad;
	r->p += n;
	return v;
bad:
	jv_free(v);
	return NULL;
}

static struct jv *read_word(struct jr *r, const char *word, enum jv_kind kind,
			    bool val)
{
	size_t n = strlen(word);
	struct jv *v;

	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n))
		return NULL;
	v = jv_new(kind);
	if (v) {
		v->boolean = val;
		r->p += n;
	}
	return v;
}

static struct jv *read_value(struct jr *r)
{
	struct jv *v;

	skip_ws(r);
	if (r->p >= r->end)
		return NULL;
	switch (*r->p) {
	case '{':
		return read_container(r, true);
	case '[':
		return read_container(r, false);
	case '"':
		v = jv_new(JV_STRING);
		if (v && !(v->str = read_string(r))) {
			jv_free(v);
			v = NULL;
		}
		return v;
	case 't':
		return read_word(r, "true", JV_BOOL, true);
	case 'f':
		return read_word(r, "false", JV_BOOL, false);
	case 'n':
		return read_word(r, "null", JV_NULL, false);
	}
	return read_number(r);
}

struct jv *jv_parse(const char *text, size_t len)
{
	struct jr r = { .p = text, .end = text + len };
	struct jv *v = read_value(&r);

	skip_ws(&r);
	if (v && r.p != r.end) {
		jv_free(v);
		return NULL;
	}
	return v;
}

const struct jv *jv_get(const struct jv *obj, const char *key)
{
	size_t i;

	if (!obj || obj->kind != JV_OBJECT)
		return NULL;
	for (i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return obj->items[i];
	return NULL;
}

const char *jv_str(const struct jv *obj, const char *key, const char *dflt)
{
	const struct jv *v = jv_get(obj, key);

	return v && v->kind == JV_STRING ? v->str : dflt;
}

bool jv_num(const struct jv *obj, const char *key, double *out)
{
	const struct jv *v = jv_get(obj, key);

	if (!v || v->kind != JV_NUMBER)
		return false;
	*out = v->num;
	return true;
}

bool jv_bool(const struct jv *obj, const char *key)
{
	const struct jv *v = jv_get(obj, key);

	return v && v->kind == JV_BOOL && v->boolean;
}
