// SPDX-License-Identifier: MIT
/*
 * jansson's dump of each piece, indented to its depth and gathered into
 * large blocks: per-call stdio overhead was most of the cost of a 16 MB
 * report (see json_out.h).
 */
#include <math.h>
#include <string.h>

#include "core/utf8.h"
#include "report/json_out.h"

void jo_init(struct json_out *o, FILE *out)
{
	o->out = out;
	o->failed = false;
	o->indent = 0;
	o->len = 0;
}

static void flush(struct json_out *o)
{
	if (o->len && fwrite(o->buf, 1, o->len, o->out) != o->len)
		o->failed = true;
	o->len = 0;
}

static void put(struct json_out *o, const char *p, size_t n)
{
	if (n > sizeof(o->buf) - o->len) {
		flush(o);
		if (n > sizeof(o->buf)) {
			if (fwrite(p, 1, n, o->out) != n)
				o->failed = true;
			return;
		}
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

static void put_spaces(struct json_out *o, size_t n)
{
	static const char spaces[] = "                                ";

	for (; n > sizeof(spaces) - 1; n -= sizeof(spaces) - 1)
		put(o, spaces, sizeof(spaces) - 1);
	put(o, spaces, n);
}

void jo_raw(struct json_out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* json_dump_callback's sink: each line break gets the piece's depth. */
static int sink(const char *p, size_t n, void *data)
{
	struct json_out *o = data;
	const char *nl;

	while (n && (nl = memchr(p, '\n', n))) {
		size_t line = (size_t)(nl - p) + 1;

		put(o, p, line);
		put_spaces(o, o->indent);
		p += line;
		n -= line;
	}
	put(o, p, n);
	return 0;
}

void jo_value(struct json_out *o, json_t *v, unsigned int depth)
{
	if (!v) {
		o->failed = true;
		return;
	}
	o->indent = 2 * depth;
	if (json_dump_callback(v, sink, o, JSON_OUT_FLAGS))
		o->failed = true;
	json_decref(v);
}

int jo_finish(struct json_out *o)
{
	flush(o);
	return o->failed || ferror(o->out) ? -1 : 0;
}

json_t *jo_string(const char *s)
{
	json_t *v = json_string(s);

	return v ? v : json_string(JSON_OUT_NOT_UTF8);
}

json_t *jo_string_or_null(const char *s)
{
	return s ? jo_string(s) : json_null();
}

json_t *jo_real(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static bool valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = *p < 0x80 ? 1 : utf8_sequence(p);

		if (!n)
			return false;
		p += n;
	}
	return true;
}

int jo_set(json_t *obj, const char *key, json_t *v)
{
	if (!v)
		return -1;
	return json_object_set_new_nocheck(obj, valid_utf8(key) ? key :
					   JSON_OUT_NOT_UTF8, v);
}
