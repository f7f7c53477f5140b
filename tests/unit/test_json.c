// SPDX-License-Identifier: MIT
/*
 * Unit tests for the JSON output (report/json_out.c, report/json.c): the
 * pieces jansson dumps one at a time, indented to their depth, must give
 * the bytes json_dumps(JSON_INDENT(2)) gives the whole tree; strings keep
 * the escapes RFC 8259 requires; text that is not UTF-8 becomes the
 * placeholder; a report of thousands of results comes out whole.
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

#include "core/result.h"
#include "gate/catalog.h"
#include "report/json_out.h"

struct capture {
	char *text;
	size_t len;
	FILE *f;
	struct json_out o;
};

static void cap_open(struct capture *c)
{
	c->text = NULL;
	c->len = 0;
	c->f = open_memstream(&c->text, &c->len);
	assert_non_null(c->f);
	jo_init(&c->o, c->f);
}

static int cap_close(struct capture *c)
{
	int ret = jo_finish(&c->o);

	assert_int_equal(fclose(c->f), 0);
	return ret;
}

/* What jansson makes of the whole tree: the reference layout. */
static void assert_dump(const struct capture *c, json_t *ref)
{
	char *want = json_dumps(ref, JSON_OUT_FLAGS);

	assert_non_null(want);
	assert_int_equal(c->len, strlen(want));
	assert_memory_equal(c->text, want, c->len);
	free(want);
}

/* A string member dumped alone: its text between the quotes. */
static char *dumped(const char *s)
{
	struct capture c;

	cap_open(&c);
	jo_value(&c.o, jo_string(s), 0);
	assert_int_equal(cap_close(&c), 0);
	return c.text;
}

static void test_escapes(void **state)
{
	char *t = dumped("a\"b\\c/d\b\f\n\r\t");

	assert_string_equal(t, "\"a\\\"b\\\\c/d\\b\\f\\n\\r\\t\"");
	free(t);
}

static void test_control_characters(void **state)
{
	char s[40], *t, want[256] = "\"";
	int n = 0;

	/* Every control byte but those with a short escape: \u00XX. */
	for (int ch = 1; ch < 0x20; ch++) {
		if (strchr("\b\f\n\r\t", ch))
			continue;
		s[n++] = (char)ch;
		snprintf(want + strlen(want), sizeof(want) - strlen(want),
			 "\\u%04X", ch);
	}
	s[n++] = 0x7f;			/* DEL is not a control byte in JSON */
	s[n] = '\0';
	strcat(want, "\x7f\"");
	t = dumped(s);
	assert_string_equal(t, want);
	free(t);
}

static void test_utf8(void **state)
{
	static const char *const bad[] = {
		"\xff", "ab\xc3", "\xc3\x28", "\xe2\x82", "\xed\xa0\x80",
		"\xf4\x90\x80\x80", "\xc0\xaf", "x\x80y",
	};
	char *t = dumped("GPU \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");

	/* Valid UTF-8 stays as it is (no \u escapes). */
	assert_string_equal(t, "\"GPU \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	free(t);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t = dumped(bad[i]);
		assert_string_equal(t, "\"" JSON_OUT_NOT_UTF8 "\"");
		free(t);
	}
}

static void test_bad_key(void **state)
{
	json_t *o = json_object();
	struct capture c;

	assert_int_equal(jo_set(o, "k\xff", json_true()), 0);
	assert_int_equal(jo_set(o, "ok", NULL), -1);
	cap_open(&c);
	jo_value(&c.o, o, 0);
	assert_int_equal(cap_close(&c), 0);
	assert_string_equal(c.text, "{\n  \"" JSON_OUT_NOT_UTF8 "\": true\n}");
	free(c.text);
}

static void test_reals(void **state)
{
	static const struct { double v; const char *want; } cases[] = {
		{ 0.0, "0.0" }, { -0.0, "-0.0" }, { 12.346, "12.346" },
		{ 1e22, "1e22" }, { 1.5e-7, "1.5e-7" }, { 3.0, "3.0" },
	};
	struct capture c;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cap_open(&c);
		jo_value(&c.o, jo_real(cases[i].v), 0);
		assert_int_equal(cap_close(&c), 0);
		assert_string_equal(c.text, cases[i].want);
		free(c.text);
	}
	cap_open(&c);
	jo_value(&c.o, jo_real(NAN), 0);
	jo_value(&c.o, jo_real(INFINITY), 0);
	assert_int_equal(cap_close(&c), 0);
	assert_string_equal(c.text, "nullnull");
	free(c.text);
}

/* Pieces nested by hand at depth 1 and 2 equal the dump of the tree. */
static void test_nesting(void **state)
{
	json_t *ref = json_object(), *a = json_array();
	struct capture c;

	json_object_set_new(ref, "empty", json_object());
	json_object_set_new(ref, "list", a);
	json_array_append_new(a, json_pack("{s:i,s:[s,b],s:{}}", "n", 1,
					   "x", "y\n", 1, "e"));
	json_array_append_new(a, json_pack("{s:n}", "z"));
	cap_open(&c);
	jo_raw(&c.o, "{\n  \"empty\": ");
	jo_value(&c.o, json_object(), 1);
	jo_raw(&c.o, ",\n  \"list\": [\n    ");
	jo_value(&c.o, json_deep_copy(json_array_get(a, 0)), 2);
	jo_raw(&c.o, ",\n    ");
	jo_value(&c.o, json_deep_copy(json_array_get(a, 1)), 2);
	jo_raw(&c.o, "\n  ]\n}");
	assert_int_equal(cap_close(&c), 0);
	assert_dump(&c, ref);
	free(c.text);
	json_decref(ref);
}

static void test_missing_piece_fails(void **state)
{
	struct capture c;

	cap_open(&c);
	jo_value(&c.o, NULL, 1);
	assert_int_equal(cap_close(&c), -1);
	free(c.text);
}

static void test_write_error(void **state)
{
	FILE *f = fopen("/dev/full", "w");
	struct json_out *o = malloc(sizeof(*o));

	if (!f)
		skip();
	assert_non_null(o);
	jo_init(o, f);
	for (int i = 0; i < 3000; i++)
		jo_value(o, jo_string("0123456789"), 0);
	assert_int_equal(jo_finish(o), -1);
	fclose(f);
	free(o);
}

/* --- the whole report -------------------------------------------------- */

/* gpus x nics pair results, plus text that needs escapes. */
static void build(struct report *r, int gpus, int nics)
{
	int pair;

	report_init(r);
	snprintf(r->meta.tool_version, sizeof(r->meta.tool_version), "0.1.0");
	snprintf(r->meta.hostname, sizeof(r->meta.hostname), "node \"7\"");
	snprintf(r->meta.generated_at, sizeof(r->meta.generated_at),
		 "1970-01-01T00:00:00Z");
	r->meta.require = "any";
	r->meta.total_ms = 1234.5678;
	report_subject(r, SUBJ_HOST, "host", "node", NULL, -1);
	for (int g = 0; g < gpus; g++) {
		char id[24];

		snprintf(id, sizeof(id), "GPU%d", g);
		report_subject(r, SUBJ_GPU, id, "H200\tSXM", NULL, -1);
	}
	for (int n = 0; n < nics; n++) {
		char id[24];

		snprintf(id, sizeof(id), "mlx5_%d", n);
		report_subject(r, SUBJ_NIC, id, "ConnectX-7", NULL, -1);
	}
	for (int g = 0; g < gpus; g++) {
		for (int n = 0; n < nics; n++) {
			struct result *res;
			char id[40];

			snprintf(id, sizeof(id), "GPU%d<->mlx5_%d", g, n);
			pair = report_subject(r, SUBJ_PAIR, id, id, NULL, -1);
			r->subj[pair].pair_gpu = 1 + g;
			r->subj[pair].pair_nic = 1 + gpus + n;
			res = report_add(r, gate_find("topo.path"), L_TOPOLOGY,
					 P_BOTH, pair, ST_PASS, "PATH_PIX",
					 "path \\ %d \"hops\"", g + n);
			ev_str(res, "nvidia_smi", "PIX");
			ev_int(res, "hops", g - n);
			ev_real(res, "gbps", g * 1.25);
			ev_bool(res, "acs", n & 1);
			res->duration_ms = 0.0005 * n;
		}
	}
}

static char *render(const struct report *r, size_t *len)
{
	char *text = NULL;
	FILE *m = open_memstream(&text, len);

	assert_non_null(m);
	assert_int_equal(render_json(r, m), 0);
	assert_int_equal(fclose(m), 0);
	return text;
}

/* The streamed report equals jansson's dump of the same document. */
static void check_report(int gpus, int nics)
{
	struct report r;
	json_error_t err;
	size_t len;
	char *text, *again;
	json_t *doc, *res;

	build(&r, gpus, nics);
	text = render(&r, &len);
	assert_int_equal(strlen(text), len);
	assert_true(len && text[len - 1] == '\n');
	doc = json_loads(text, 0, &err);
	assert_non_null(doc);
	res = json_object_get(doc, "results");
	assert_int_equal(json_array_size(res), (size_t)(gpus * nics));
	assert_string_equal(json_string_value(json_object_get(
		json_object_get(doc, "host"), "hostname")), "node \"7\"");
	if (gpus) {
		json_t *last = json_array_get(res, json_array_size(res) - 1);
		char want[64];

		snprintf(want, sizeof(want), "path \\ %d \"hops\"",
			 gpus + nics - 2);

		assert_true(json_is_real(json_object_get(
			json_object_get(last, "evidence"), "gbps")));
		assert_string_equal(json_string_value(json_object_get(last,
			"reason")), want);
	}
	again = json_dumps(doc, JSON_OUT_FLAGS);
	assert_non_null(again);
	assert_int_equal(strlen(again) + 1, len);
	assert_memory_equal(text, again, len - 1);
	free(again);
	json_decref(doc);
	free(text);
	report_free(&r);
}

static void test_report_empty(void **state)
{
	check_report(0, 0);
}

static void test_report_small(void **state)
{
	check_report(4, 3);
}

/* 64 x 64: 4096 pair results, several MB, each its own jansson piece. */
static void test_report_large(void **state)
{
	check_report(64, 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_control_characters),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_bad_key),
		cmocka_unit_test(test_reals),
		cmocka_unit_test(test_nesting),
		cmocka_unit_test(test_missing_piece_fails),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_report_empty),
		cmocka_unit_test(test_report_small),
		cmocka_unit_test(test_report_large),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
