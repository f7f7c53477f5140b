// SPDX-License-Identifier: MIT
/*
 * Streaming JSON output: see json_writer.h for the layout it produces.
 * Bytes gather in the writer's own buffer and reach the FILE in large
 * blocks: per-call stdio overhead was most of the cost of a 16 MB report.
 */
#include "core/utf8.h"
#include "report/json_writer.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define NOT_UTF8 "<not valid UTF-8>"

void jw_init(struct json_writer *w, FILE *out)
{
	w->out = out;
	w->depth = 0;
	w->overflow = w->failed = false;
	w->has_member[0] = false;
	w->len = 0;
}

static void flush(struct json_writer *w)
{
	if (w->len && fwrite(w->buf, 1, w->len, w->out) != w->len)
		w->failed = true;
	w->len = 0;
}

static void put(struct json_writer *w, const void *p, size_t n)
{
	if (n > sizeof(w->buf) - w->len) {
		flush(w);
		if (n > sizeof(w->buf)) {
			if (fwrite(p, 1, n, w->out) != n)
				w->failed = true;
			return;
		}
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void put_str(struct json_writer *w, const char *s)
{
	put(w, s, strlen(s));
}

int jw_finish(struct json_writer *w)
{
	put(w, "\n", 1);
	flush(w);
	return w->depth || w->overflow || w->failed || ferror(w->out) ? -1 : 0;
}

/* What a byte asks of the writer: nothing, an escape, a UTF-8 check. */
enum { B_PLAIN, B_ESCAPE, B_MULTI, B_END };

static unsigned char byte_class(unsigned char c)
{
	if (!c)
		return B_END;
	if (c < 0x20 || c == '"' || c == '\\')
		return B_ESCAPE;
	return c < 0x80 ? B_PLAIN : B_MULTI;
}

static const unsigned char *classes(void)
{
	static unsigned char cls[256];
	static bool ready;

	if (!ready) {
		for (int c = 0; c < 256; c++)
			cls[c] = byte_class((unsigned char)c);
		ready = true;
	}
	return cls;
}

/*
 * Validates s and says whether any byte needs an escape, in one pass:
 * 1 clean, 0 needs escapes, -1 not UTF-8. *len: its length.
 */
static int scan_string(const char *s, size_t *len)
{
	const unsigned char *cls = classes();
	const unsigned char *p = (const unsigned char *)s;
	int clean = 1;

	for (;;) {
		size_t n;

		while (cls[*p] == B_PLAIN)
			p++;
		switch (cls[*p]) {
		case B_ESCAPE:
			clean = 0;
			p++;
			continue;
		case B_MULTI:
			n = utf8_sequence(p);
			if (!n)
				return -1;
			p += n;
			continue;
		}
		break;			/* B_END */
	}
	*len = (size_t)(p - (const unsigned char *)s);
	return clean;
}

bool jw_valid_utf8(const char *s)
{
	size_t len;

	return scan_string(s, &len) >= 0;
}

static void put_escaped(struct json_writer *w, const unsigned char *p)
{
	const unsigned char *cls = classes();
	const unsigned char *run = p;

	for (; *p; p++) {
		const char *esc;
		char u[8];

		if (cls[*p] != B_ESCAPE)
			continue;
		put(w, run, (size_t)(p - run));
		run = p + 1;
		switch (*p) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default:
			snprintf(u, sizeof(u), "\\u%04X", *p);
			esc = u;
		}
		put_str(w, esc);
	}
	put(w, run, (size_t)(p - run));
}

static void put_quoted(struct json_writer *w, const char *s)
{
	size_t len;
	int scan = scan_string(s, &len);

	put(w, "\"", 1);
	if (scan > 0)
		put(w, s, len);
	else if (scan == 0)
		put_escaped(w, (const unsigned char *)s);
	else
		put_str(w, NOT_UTF8);
	put(w, "\"", 1);
}

static void put_indent(struct json_writer *w)
{
	static const char spaces[] = "                                ";
	size_t n = 2 * (size_t)w->depth;

	for (; n > sizeof(spaces) - 1; n -= sizeof(spaces) - 1)
		put(w, spaces, sizeof(spaces) - 1);
	put(w, spaces, n);
}

/* Separator, line break and indentation before a value, then its key. */
static void begin_value(struct json_writer *w, const char *key)
{
	if (w->depth) {
		if (w->has_member[w->depth])
			put(w, ",\n", 2);
		else
			put(w, "\n", 1);
		w->has_member[w->depth] = true;
		put_indent(w);
	}
	if (key) {
		put_quoted(w, key);
		put(w, ": ", 2);
	}
}

static void open_container(struct json_writer *w, const char *key, char c)
{
	begin_value(w, key);
	put(w, &c, 1);
	if (w->depth == JSON_WRITER_MAX_DEPTH) {
		w->overflow = true;	/* jw_finish reports it */
		return;
	}
	w->has_member[++w->depth] = false;
}

static void close_container(struct json_writer *w, char c)
{
	if (!w->depth) {
		w->overflow = true;
		return;
	}
	if (w->has_member[w->depth--]) {
		put(w, "\n", 1);
		put_indent(w);
	}
	put(w, &c, 1);
}

void jw_open_object(struct json_writer *w, const char *key)
{
	open_container(w, key, '{');
}

void jw_close_object(struct json_writer *w)
{
	close_container(w, '}');
}

void jw_open_array(struct json_writer *w, const char *key)
{
	open_container(w, key, '[');
}

void jw_close_array(struct json_writer *w)
{
	close_container(w, ']');
}

void jw_string(struct json_writer *w, const char *key, const char *s)
{
	begin_value(w, key);
	put_quoted(w, s);
}

void jw_string_or_null(struct json_writer *w, const char *key, const char *s)
{
	if (s)
		jw_string(w, key, s);
	else
		jw_null(w, key);
}

void jw_int(struct json_writer *w, const char *key, long long v)
{
	char buf[24];
	/* Digits from the end; unsigned: LLONG_MIN has no positive twin. */
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v :
				       (unsigned long long)v;
	char *p = buf + sizeof(buf);

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	begin_value(w, key);
	put(w, p, (size_t)(buf + sizeof(buf) - p));
}

/*
 * jansson's form of a real, so readers keep it a real: "%.10g", ".0" added
 * when neither a point nor an exponent shows, the exponent without '+' or
 * leading zeros.
 */
void jw_real(struct json_writer *w, const char *key, double v)
{
	char buf[40], *e;

	if (!isfinite(v)) {
		jw_null(w, key);
		return;
	}
	if (v == 0.0) {		/* most rounded durations: spare the printf */
		begin_value(w, key);
		put_str(w, signbit(v) ? "-0.0" : "0.0");
		return;
	}
	snprintf(buf, sizeof(buf), "%.10g", v);
	e = strchr(buf, 'e');
	if (!e && !strchr(buf, '.')) {
		strcat(buf, ".0");
	} else if (e) {
		char *sign = e + 1, *digits = e + 2;

		if (*sign == '-')
			sign++;
		while (*digits == '0' && digits[1])
			digits++;
		memmove(sign, digits, strlen(digits) + 1);
	}
	begin_value(w, key);
	put_str(w, buf);
}

void jw_bool(struct json_writer *w, const char *key, bool v)
{
	begin_value(w, key);
	put_str(w, v ? "true" : "false");
}

void jw_null(struct json_writer *w, const char *key)
{
	begin_value(w, key);
	put_str(w, "null");
}
