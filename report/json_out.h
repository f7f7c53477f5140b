/* SPDX-License-Identifier: MIT */
/*
 * The JSON report's output, encoded by jansson (as the product's
 * dependency list says) one piece at a time: the caller builds one json_t
 * per top-level member, or per result for the results array, and
 * jo_value() dumps it with json_dump_callback into a buffered stream. No
 * tree ever holds the whole report, so memory stays that of one result.
 *
 * The layout is jansson's JSON_INDENT(2) for the whole document: a piece
 * dumped at depth d has two spaces per level added after each line break
 * (jansson writes a line break only between tokens: a string's own
 * newlines are escaped). jo_raw() writes the enclosing punctuation.
 *
 * Strings go through jo_string(): jansson refuses text that is not valid
 * UTF-8, and the report then carries "<not valid UTF-8>" in its place, so
 * one bad byte from a file cannot make the document unparsable.
 */
#ifndef GDRCHECK_JSON_OUT_H
#define GDRCHECK_JSON_OUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#define JSON_OUT_NOT_UTF8 "<not valid UTF-8>"
#define JSON_OUT_BUFSIZE 16384
/* jansson's flags for every piece: the layout json_dumps gives the tree. */
#define JSON_OUT_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | \
			JSON_REAL_PRECISION(10) | JSON_ENCODE_ANY)

struct json_out {
	FILE *out;
	bool failed;		/* a write failed or a piece was NULL */
	unsigned int indent;	/* spaces added after each line break */
	size_t len;		/* bytes waiting in buf */
	char buf[JSON_OUT_BUFSIZE];
};

void jo_init(struct json_out *o, FILE *out);
/* Bytes as they are (punctuation, indentation, a literal key). */
void jo_raw(struct json_out *o, const char *s);
/*
 * Dumps v (jansson, JSON_OUT_FLAGS) nested depth levels deep, and drops
 * the reference: jo_value(o, json_object(...), 1) builds, writes, frees.
 * A NULL v (jansson could not allocate) marks the output failed.
 */
void jo_value(struct json_out *o, json_t *v, unsigned int depth);
/* Flushes; 0 when every byte reached the FILE and no piece was missing. */
int jo_finish(struct json_out *o);

/* A jansson string, or the placeholder when s is not valid UTF-8. */
json_t *jo_string(const char *s);
/* jo_string(s), or null when s is NULL. */
json_t *jo_string_or_null(const char *s);
/* A real; null when not finite (JSON has no NaN or infinity). */
json_t *jo_real(double v);
/*
 * Sets key in obj to v (stealing it); an invalid UTF-8 key is replaced by
 * the placeholder. Returns -1 when v is NULL or jansson refused.
 */
int jo_set(json_t *obj, const char *key, json_t *v);

#endif
