// SPDX-License-Identifier: MIT
/*
 * Unit tests for the streaming JSON writer. jansson is the reference: the
 * writer must produce the bytes json_dumps(JSON_INDENT(2)) produces for the
 * same value, and jansson must read back what was written.
 */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/json_writer.h"

#define REF_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | \
		   JSON_REAL_PRECISION(10) | JSON_ENCODE_ANY)

struct capture {
	char *text;
	size_t len;
	FILE *f;
	struct json_writer w;
};

static void cap_open(struct capture *c)
{
	c->text = NULL;
	c->len = 0;
	c->f = open_memstream(&c->text, &c->len);
	assert_non_null(c->f);
	jw_init(&c->w, c->f);
}

/* jw_finish's status; the text (with its final newline) stays in c. */
static int cap_close(struct capture *c)
{
	int ret = jw_finish(&c->w);

	assert_int_equal(fclose(c->f), 0);
	return ret;
}

/* jansson's dump of ref with the newline jw_finish adds. */
static void assert_same_as_jansson(const struct capture *c, json_t *ref)
{
	char *want = json_dumps(ref, REF_FLAGS);
	size_t n;

	assert_non_null(want);
	n = strlen(want);
	assert_int_equal(c->len, n + 1);
	assert_memory_equal(c->text, want, n);
	assert_int_equal(c->text[n], '\n');
	free(want);
}

static void test_layout(void **state)
{
	struct capture c;
	json_t *ref = json_object(), *o = json_object(), *a = json_array();

	cap_open(&c);
	jw_open_object(&c.w, NULL);
	jw_string(&c.w, "name", "gdrcheck");
	jw_open_object(&c.w, "empty_object");
	jw_close_object(&c.w);
	jw_open_array(&c.w, "empty_array");
	jw_close_array(&c.w);
	jw_open_object(&c.w, "nested");
	jw_int(&c.w, "n", -42);
	jw_bool(&c.w, "yes", true);
	jw_bool(&c.w, "no", false);
	jw_null(&c.w, "nothing");
	jw_string_or_null(&c.w, "absent", NULL);
	jw_string_or_null(&c.w, "present", "x");
	jw_close_object(&c.w);
	jw_open_array(&c.w, "list");
	jw_string(&c.w, NULL, "a");
	jw_open_object(&c.w, NULL);
	jw_real(&c.w, "ms", 1.5);
	jw_close_object(&c.w);
	jw_open_array(&c.w, NULL);
	jw_close_array(&c.w);
	jw_close_array(&c.w);
	jw_close_object(&c.w);
	assert_int_equal(cap_close(&c), 0);

	json_object_set_new(ref, "name", json_string("gdrcheck"));
	json_object_set_new(ref, "empty_object", json_object());
	json_object_set_new(ref, "empty_array", json_array());
	json_object_set_new(o, "n", json_integer(-42));
	json_object_set_new(o, "yes", json_true());
	json_object_set_new(o, "no", json_false());
	json_object_set_new(o, "nothing", json_null());
	json_object_set_new(o, "absent", json_null());
	json_object_set_new(o, "present", json_string("x"));
	json_object_set_new(ref, "nested", o);
	json_array_append_new(a, json_string("a"));
	o = json_object();
	json_object_set_new(o, "ms", json_real(1.5));
	json_array_append_new(a, o);
	json_array_append_new(a, json_array());
	json_object_set_new(ref, "list", a);
	assert_same_as_jansson(&c, ref);
	json_decref(ref);
	free(c.text);
}

/* One string as a top-level value: the writer's bytes against jansson's. */
static void check_string(const char *s)
{
	struct capture c;
	json_t *ref = json_string(s), *back;
	json_error_t err;

	cap_open(&c);
	jw_string(&c.w, NULL, s);
	assert_int_equal(cap_close(&c), 0);
	assert_int_equal(jw_valid_utf8(s), ref != NULL);
	if (!ref)
		ref = json_string("<not valid UTF-8>");
	assert_same_as_jansson(&c, ref);
	back = json_loads(c.text, JSON_DECODE_ANY, &err);
	assert_non_null(back);
	assert_true(json_equal(back, ref));
	json_decref(back);
	json_decref(ref);
	free(c.text);
}

static void test_strings(void **state)
{
	static const char *const cases[] = {
		"", "plain ASCII 0000:05:00.0", "quote \" and backslash \\",
		"\b\f\n\r\t", "\x01\x1f controls", "\x7f is not escaped",
		"slash / stays", "caf\xc3\xa9", "\xe2\x82\xac euro",
		"\xf0\x9f\x98\x80 emoji", "\xf4\x8f\xbf\xbf last code point",
		"\xef\xbf\xbf U+FFFF",
		/* not UTF-8: stray continuation, overlong, surrogate, above
		 * U+10FFFF, truncated, lead bytes that never start one */
		"\x80", "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80",
		"\xe0\x9f\xbf", "\xf0\x8f\xbf\xbf", "\xed\xbf\xbf",
		"\xed\xa0\x80", "\xf0\x80\x80\x80", "\xf4\x90\x80\x80",
		"\xe2\x82", "ok then \xe2", "\xf5\x80\x80\x80", "\xff",
		"\xc3\x28",
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_string(cases[i]);
}

static void test_every_byte(void **state)
{
	char s[4];

	/* Each byte alone, and inside text: escapes and UTF-8 checks. */
	for (int b = 1; b < 256; b++) {
		s[0] = (char)b;
		s[1] = '\0';
		check_string(s);
		s[0] = 'a';
		s[1] = (char)b;
		s[2] = 'z';
		s[3] = '\0';
		check_string(s);
	}
}

static void test_keys_escaped(void **state)
{
	struct capture c;
	json_t *ref = json_object();

	cap_open(&c);
	jw_open_object(&c.w, NULL);
	jw_int(&c.w, "a\"b\n", 1);
	jw_close_object(&c.w);
	assert_int_equal(cap_close(&c), 0);
	json_object_set_new(ref, "a\"b\n", json_integer(1));
	assert_same_as_jansson(&c, ref);
	json_decref(ref);
	free(c.text);
}

static void test_numbers(void **state)
{
	static const double reals[] = {
		0.0, -0.0, 1.0, -1.0, 0.001, 0.5, 12.345, 100.0, 1234567.891,
		12345678901.0, 1e20, 1.5e300, 1e-5, -2.5e-7, 0.1 + 0.2,
		3.14159265358979, 1e-300, 4.9e-324, 1.7976931348623157e308,
	};
	static const long long ints[] = {
		0, 1, -1, 9, 10, 2097152, -4096, LLONG_MAX, LLONG_MIN,
	};
	struct capture c;
	json_t *ref = json_array();

	cap_open(&c);
	jw_open_array(&c.w, NULL);
	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
		jw_real(&c.w, NULL, reals[i]);
		json_array_append_new(ref, json_real(reals[i]));
	}
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		jw_int(&c.w, NULL, ints[i]);
		json_array_append_new(ref, json_integer(ints[i]));
	}
	jw_close_array(&c.w);
	assert_int_equal(cap_close(&c), 0);
	assert_same_as_jansson(&c, ref);
	json_decref(ref);
	free(c.text);
}

/* jansson has no non-finite reals; JSON has none either: null. */
static void test_non_finite(void **state)
{
	struct capture c;

	cap_open(&c);
	jw_open_array(&c.w, NULL);
	jw_real(&c.w, NULL, NAN);
	jw_real(&c.w, NULL, INFINITY);
	jw_real(&c.w, NULL, -INFINITY);
	jw_close_array(&c.w);
	assert_int_equal(cap_close(&c), 0);
	assert_string_equal(c.text, "[\n  null,\n  null,\n  null\n]\n");
	free(c.text);
}

/* More than the buffer holds, in one string and in many values. */
static void test_large(void **state)
{
	size_t big = 3 * JSON_WRITER_BUFSIZE + 7;
	char *s = malloc(big + 1);
	struct capture c;
	json_t *ref = json_array();

	assert_non_null(s);
	for (size_t i = 0; i < big; i++)
		s[i] = (char)('a' + i % 26);
	s[big] = '\0';
	s[big / 2] = '"';		/* one escape in the middle */
	cap_open(&c);
	jw_open_array(&c.w, NULL);
	jw_string(&c.w, NULL, s);
	json_array_append_new(ref, json_string(s));
	for (int i = 0; i < 5000; i++) {
		jw_int(&c.w, NULL, i);
		json_array_append_new(ref, json_integer(i));
	}
	jw_close_array(&c.w);
	assert_int_equal(cap_close(&c), 0);
	assert_same_as_jansson(&c, ref);
	json_decref(ref);
	free(c.text);
	free(s);
}

static void test_unbalanced(void **state)
{
	struct capture c;

	/* Left open: not a document. */
	cap_open(&c);
	jw_open_object(&c.w, NULL);
	assert_int_equal(cap_close(&c), -1);
	free(c.text);

	/* Closed once too often. */
	cap_open(&c);
	jw_open_array(&c.w, NULL);
	jw_close_array(&c.w);
	jw_close_array(&c.w);
	assert_int_equal(cap_close(&c), -1);
	free(c.text);

	/* Deeper than the writer tracks. */
	cap_open(&c);
	for (int i = 0; i <= JSON_WRITER_MAX_DEPTH; i++)
		jw_open_array(&c.w, NULL);
	for (int i = 0; i < JSON_WRITER_MAX_DEPTH; i++)
		jw_close_array(&c.w);
	assert_int_equal(cap_close(&c), -1);
	free(c.text);
}

/* A full disk is a failure, not a short report that looks whole. */
static void test_write_error(void **state)
{
	struct json_writer w;
	FILE *f = fopen("/dev/full", "w");

	assert_non_null(f);
	jw_init(&w, f);
	jw_open_array(&w, NULL);
	for (int i = 0; i < 10000; i++)
		jw_string(&w, NULL, "0000:05:00.0");
	jw_close_array(&w);
	assert_int_equal(jw_finish(&w), -1);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_every_byte),
		cmocka_unit_test(test_keys_escaped),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_non_finite),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_unbalanced),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
