/* SPDX-License-Identifier: MIT */
/*
 * A streaming JSON writer in the manner of iproute2's json_writer: values
 * go straight to a FILE as they are produced, nothing is built in memory
 * and nothing is allocated, so a report of any size costs no more than its
 * model, and rendering can fail only where the FILE fails.
 *
 * The layout is jansson's JSON_INDENT(2): members one per line, two spaces
 * per level, "key": value, empty containers as {} and []. Strings are
 * written as UTF-8 with the escapes RFC 8259 requires (", \, control
 * characters); a string that is not valid UTF-8 is written as
 * "<not valid UTF-8>" so that one bad byte from a file cannot make the
 * document unparsable.
 */
#ifndef GDRCHECK_JSON_WRITER_H
#define GDRCHECK_JSON_WRITER_H

#include <stdbool.h>
#include <stdio.h>

#define JSON_WRITER_MAX_DEPTH 16

#define JSON_WRITER_BUFSIZE 16384

struct json_writer {
	FILE *out;
	unsigned int depth;
	bool overflow;			/* nested deeper than MAX_DEPTH */
	bool failed;			/* a write to out failed */
	bool has_member[JSON_WRITER_MAX_DEPTH + 1];
	size_t len;			/* bytes waiting in buf */
	char buf[JSON_WRITER_BUFSIZE];
};

void jw_init(struct json_writer *w, FILE *out);
/*
 * Writes what is buffered, a final newline after the top-level value, and
 * returns 0 when the document was complete and every byte reached the FILE.
 */
int jw_finish(struct json_writer *w);

/*
 * key names the member inside an object; it is NULL for an array element
 * and for the top-level value.
 */
void jw_open_object(struct json_writer *w, const char *key);
void jw_close_object(struct json_writer *w);
void jw_open_array(struct json_writer *w, const char *key);
void jw_close_array(struct json_writer *w);

void jw_string(struct json_writer *w, const char *key, const char *s);
/* A string, or null when s is NULL. */
void jw_string_or_null(struct json_writer *w, const char *key, const char *s);
void jw_int(struct json_writer *w, const char *key, long long v);
/* %.10g, always with a '.' or an exponent; null when not finite. */
void jw_real(struct json_writer *w, const char *key, double v);
void jw_bool(struct json_writer *w, const char *key, bool v);
void jw_null(struct json_writer *w, const char *key);

/* The same checks the writer applies: exposed for tests. */
bool jw_valid_utf8(const char *s);

#endif
