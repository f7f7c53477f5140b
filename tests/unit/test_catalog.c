// SPDX-License-Identifier: MIT
/*
 * The whole catalog (gate/gates.def), row by row: names unique, every code
 * with statuses and a meaning, every remedy under a code and its format
 * kind right, dependencies pointing back up the chain, and every code a
 * decoder classifies into is a catalog code with that status.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "decode/parse.h"
#include "engine/gates.h"
#include "gate/catalog.h"

/* printf conversions in s, "%%" not counted. */
static int conversions(const char *s)
{
	int n = 0;

	for (; *s; s++)
		if (*s == '%') {
			if (s[1] == '%')
				s++;
			else
				n++;
		}
	return n;
}

static void test_gates(void **state)
{
	for (int i = 0; i < G_COUNT; i++) {
		const struct gate_desc *g = &gate_descs[i];
		const char *dot = strchr(g->id, '.');

		assert_int_equal(g->index, i);
		assert_non_null(dot);
		/* The id's prefix is its layer's name (--only takes both). */
		assert_int_equal(strlen(layer_name(g->layer)), dot - g->id);
		assert_memory_equal(g->id, layer_name(g->layer), dot - g->id);
		assert_non_null(gate_run[i]);
		assert_true(g->title && g->title[0]);
		assert_ptr_equal(gate_find(g->id), g);
		/* A gate builds only on gates that ran before it. */
		assert_int_equal(g->deps >> i, 0);
		/* Layers come in order, each gate in its layer's block. */
		if (i)
			assert_true(gate_descs[i - 1].layer <= g->layer);
	}
	assert_null(gate_find("no.such"));
}

static void test_codes(void **state)
{
	for (int c = 0; c < C_COUNT; c++) {
		const struct code_desc *d = &code_descs[c];

		assert_true(d->name && d->name[0]);
		assert_true(d->statuses && !(d->statuses >> (ST_ERROR + 1)));
		assert_true(d->meaning && d->meaning[0]);
		assert_null(strchr(d->meaning, '\n'));
		assert_int_equal(code_by_name(d->name), c);
		assert_true(code_gate(c) >= -1 && code_gate(c) < G_COUNT);
		for (int k = 0; k < c; k++)
			if (!strcmp(code_descs[k].name, d->name))
				fail_msg("code %s twice", d->name);
	}
	/* The engine's own codes are shared: any gate may give them. */
	assert_int_equal(code_gate(C_EXCLUDED), -1);
	assert_int_equal(code_gate(C_NO_SUBJECT), -1);
}

static void test_remedies(void **state)
{
	for (int i = 0; i < R_COUNT; i++) {
		const struct remedy_desc *d = &remedy_descs[i];
		int conv = conversions(d->text);

		assert_true(d->text && d->text[0]);
		assert_true((int)remedy_code(i) >= 0 &&
			    (int)remedy_code(i) < C_COUNT);
		/* A plain REMEDY is printed as is: a conversion in it means
		 * the row should have been a REMEDY_F. */
		if (d->format ? conv == 0 : conv != 0)
			fail_msg("remedy %s: %d conversion(s) in a %s row",
				 d->name, conv, d->format ? "REMEDY_F" :
				 "REMEDY");
		for (int k = 0; k < i; k++)
			if (!strcmp(remedy_descs[k].name, d->name))
				fail_msg("remedy %s twice", d->name);
	}
}

/* The code must be in the catalog and allow the status it comes with. */
static void check_classified(struct classified c, const char *what, int in)
{
	enum reason_code code = code_by_name(c.code);

	if (!(code_descs[code].statuses & (1u << c.status)))
		fail_msg("%s(%d) -> %s with status %s, not in its row", what,
			 in, c.code, status_name(c.status));
}

static void test_classified_codes(void **state)
{
	for (int e = 0; e < 200; e++) {
		check_classified(classify_dmabuf_probe(e), "dmabuf_probe", e);
		check_classified(classify_reg_errno(e, false), "reg_errno", e);
		check_classified(classify_reg_errno(e, true), "reg_errno", e);
		check_classified(classify_open_errno(e), "open_errno", e);
		check_classified(classify_wc_status(e), "wc_status", e);
	}
}

/* The runtime guard of remedy_NAME(): it checks the result's gate. */
static void test_remedy_attach(void **state)
{
	struct report r;
	struct result *res;

	report_init(&r);
	res = report_add(&r, &gate_descs[G_NIC_PORT], L_NIC, P_BOTH, 0,
			 ST_BLOCKED, code_descs[C_PORT_NOT_ACTIVE].name, "x");
	remedy_PORT_CABLE(res);
	assert_string_equal(res->remediation, remedy_descs[R_PORT_CABLE].text);
	res = report_add(&r, &gate_descs[G_NIC_UVERBS], L_NIC, P_BOTH, 0,
			 ST_BLOCKED, code_descs[C_UVERBS_PERMISSION].name, "x");
	remedy_UVERBS_PERMISSION(res, "/dev/infiniband/uverbs0");
	assert_non_null(strstr(res->remediation, "uverbs0 (rdma group"));
	/* EIO and the like: the device, not permissions. */
	res = report_add(&r, &gate_descs[G_NIC_UVERBS], L_NIC, P_BOTH, 0,
			 ST_BLOCKED, code_descs[C_UVERBS_OPEN_FAILED].name, "x");
	remedy_UVERBS_OPEN_FAILED(res, "mlx5_0");
	assert_non_null(strstr(res->remediation, "dmesg for mlx5_0's driver"));
	assert_null(strstr(res->remediation, "rdma group"));
	report_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gates),
		cmocka_unit_test(test_codes),
		cmocka_unit_test(test_remedies),
		cmocka_unit_test(test_classified_codes),
		cmocka_unit_test(test_remedy_attach),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
