/* SPDX-License-Identifier: GPL-2.0 */
/* Reading JSON documents into a tree: json_read.c. */
#ifndef _VNETCTL_JSON_READ_H
#define _VNETCTL_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>

enum jv_kind { JV_NULL, JV_BOOL, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT };

struct jv {
	enum jv_kind kind;
	bool boolean;
	double num;
	char *str;
	size_t n;			/* items of an array or object */
	struct jv **items;
	char **keys;			/* an object's, in document order */
};

/* NULL if @text is not one well-formed JSON value. */
struct jv *jv_parse(const char *text, size_t len);
void jv_free(struct jv *v);

const struct jv *jv_get(const struct jv *obj, const char *key);
const char *jv_str(const struct jv *obj, const char *key, const char *dflt);
bool jv_num(const struct jv *obj, const char *key, double *out);
bool jv_bool(const struct jv *obj, const char *key);

#endif /* _VNETCTL_JSON_READ_H */
