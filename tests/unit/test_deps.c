// SPDX-License-Identifier: MIT
/*
 * The catalog's DEP rows (gate/gates.def) drive the engine: a gate whose
 * dependency did not PASS or WARN for the related subject is skipped by
 * engine/gates.c, without calling its probe, with the code the DEP row
 * names; a dependency that passes lets the probe decide. Also checks the
 * DEP rows themselves: an earlier gate, in the deps column, a code that may
 * be SKIP, subject kinds that relate.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/gates.h"
#include "probes/probes.h"

struct run {
	struct vendor_facts *vf;
	struct options opt;
	struct report rep;
	struct gdr_ctx ctx;
	int nic_subject;
};

/* A host with one RDMA device, mlx5_0, and no GPU; gates as selected. */
static void run_setup(struct run *r, gate_mask gates)
{
	memset(r, 0, sizeof(*r));
	r->vf = calloc(1, sizeof(*r->vf));
	assert_non_null(r->vf);
	r->opt.gates = gates;
	report_init(&r->rep);
	r->ctx.opt = &r->opt;
	r->ctx.vf = r->vf;
	r->ctx.rep = &r->rep;
	r->ctx.host = report_subject(&r->rep, SUBJ_HOST, "host", "", "", -1);
	r->nic_subject = report_subject(&r->rep, SUBJ_NIC, "mlx5_0", "", "",
					-1);
	r->ctx.inv.nic = calloc(1, sizeof(*r->ctx.inv.nic));
	assert_non_null(r->ctx.inv.nic);
	r->ctx.inv.nnic = 1;
	snprintf(r->ctx.inv.nic[0].name, sizeof(r->ctx.inv.nic[0].name),
		 "mlx5_0");
	r->ctx.inv.nic[0].subject = r->nic_subject;
	r->ctx.inv.nic[0].verbs = -1;
}

static void run_free(struct run *r)
{
	free(r->ctx.inv.nic);
	probe_caches_free(&r->ctx);
	report_free(&r->rep);
	free(r->vf);
}

/* The one result of gate g for subject s. */
static const struct result *result_of(const struct run *r, int g, int s)
{
	const struct result *found = NULL;

	for (size_t i = 0; i < r->rep.nres; i++)
		if (r->rep.res[i].gate->index == g &&
		    r->rep.res[i].subject == s) {
			assert_null(found);
			found = &r->rep.res[i];
		}
	assert_non_null(found);
	return found;
}

/*
 * libibverbs loaded without ibv_reg_dmabuf_mr: nic.libibverbs PASSes, so
 * mech.dmabuf_verbs's probe runs and BLOCKs; mech.dmabuf_provider depends
 * on it (DEP(MECH_DMABUF_VERBS, NO_DMABUF_API)) and is skipped for mlx5_0
 * by the engine, with the catalog's code and the dependency named.
 */
static void test_unmet_dependency_skips(void **state)
{
	struct run r;
	const struct result *res;

	run_setup(&r, GATE_BIT(G_NIC_LIBIBVERBS) |
		  GATE_BIT(G_MECH_DMABUF_VERBS) |
		  GATE_BIT(G_MECH_DMABUF_PROVIDER));
	r.vf->verbs.lib.loaded = true;
	r.vf->verbs.lib.attempted = true;
	snprintf(r.vf->verbs.lib.path, sizeof(r.vf->verbs.lib.path),
		 "libibverbs.so.1");
	r.vf->verbs.have_reg_dmabuf_mr = false;
	gates_run(&r.ctx);

	res = result_of(&r, G_NIC_LIBIBVERBS, r.ctx.host);
	assert_int_equal(res->status, ST_PASS);
	res = result_of(&r, G_MECH_DMABUF_VERBS, r.ctx.host);
	assert_int_equal(res->status, ST_BLOCKED);
	assert_int_equal(res->code_index, C_VERBS_TOO_OLD_FOR_DMABUF);
	res = result_of(&r, G_MECH_DMABUF_PROVIDER, r.nic_subject);
	assert_int_equal(res->status, ST_SKIP);
	assert_int_equal(res->code_index, C_NO_DMABUF_API);
	assert_string_equal(res->code, "NO_DMABUF_API");
	assert_string_equal(res->reason, "not checked: mech.dmabuf_verbs is "
			    "BLOCKED (VERBS_TOO_OLD_FOR_DMABUF)");
	run_free(&r);
}

/*
 * libibverbs not loaded: nic.libibverbs does not PASS, so the engine skips
 * mech.dmabuf_verbs (LIBIBVERBS_UNAVAILABLE), and that SKIP in turn skips
 * mech.dmabuf_provider: a chain of skips, each naming its dependency.
 */
static void test_skips_chain(void **state)
{
	struct run r;
	const struct result *lib, *res;
	char want[256];

	run_setup(&r, GATE_BIT(G_NIC_LIBIBVERBS) |
		  GATE_BIT(G_MECH_DMABUF_VERBS) |
		  GATE_BIT(G_MECH_DMABUF_PROVIDER));
	gates_run(&r.ctx);

	lib = result_of(&r, G_NIC_LIBIBVERBS, r.ctx.host);
	assert_true(lib->status != ST_PASS && lib->status != ST_WARN);
	res = result_of(&r, G_MECH_DMABUF_VERBS, r.ctx.host);
	assert_int_equal(res->status, ST_SKIP);
	assert_int_equal(res->code_index, C_LIBIBVERBS_UNAVAILABLE);
	snprintf(want, sizeof(want), "not checked: nic.libibverbs is %s (%s)",
		 status_name(lib->status), lib->code);
	assert_string_equal(res->reason, want);
	res = result_of(&r, G_MECH_DMABUF_PROVIDER, r.nic_subject);
	assert_int_equal(res->status, ST_SKIP);
	assert_int_equal(res->code_index, C_NO_DMABUF_API);
	assert_string_equal(res->reason, "not checked: mech.dmabuf_verbs is "
			    "SKIP (LIBIBVERBS_UNAVAILABLE)");
	run_free(&r);
}

/* A dependency left out by --only/--skip decides nothing: skip, say so. */
static void test_excluded_dependency(void **state)
{
	struct run r;
	const struct result *res;

	run_setup(&r, GATE_BIT(G_MECH_DMABUF_PROVIDER));
	r.vf->verbs.lib.loaded = true;
	r.vf->verbs.have_reg_dmabuf_mr = true;
	gates_run(&r.ctx);
	res = result_of(&r, G_MECH_DMABUF_VERBS, r.ctx.host);
	assert_int_equal(res->code_index, C_EXCLUDED);
	res = result_of(&r, G_MECH_DMABUF_PROVIDER, r.nic_subject);
	assert_int_equal(res->status, ST_SKIP);
	assert_int_equal(res->code_index, C_NO_DMABUF_API);
	assert_string_equal(res->reason, "not checked: mech.dmabuf_verbs was "
			    "excluded by --only/--skip");
	run_free(&r);
}

/* Can a subject of kind from name one of kind to (engine/gates.c)? */
static bool relates(enum subject_kind from, enum subject_kind to)
{
	return to == SUBJ_HOST || to == from ||
	       (from == SUBJ_PAIR && (to == SUBJ_GPU || to == SUBJ_NIC)) ||
	       (from == SUBJ_PORT && to == SUBJ_NIC);
}

static void test_dep_rows(void **state)
{
	size_t total = 0;

	for (int g = 0; g < G_COUNT; g++) {
		const struct gate_desc *gd = &gate_descs[g];
		size_t n;
		const struct gate_dep *dp = gate_deps(g, &n);

		for (size_t k = 0; k < n; k++) {
			const struct gate_desc *d = &gate_descs[dp[k].gate];
			int owner = code_gate(dp[k].code);

			print_message("%s needs %s (%s)\n", gd->id, d->id,
				      code_descs[dp[k].code].name);
			assert_true(dp[k].gate < g);
			assert_true(gd->deps & (1ull << dp[k].gate));
			assert_true(code_descs[dp[k].code].statuses & S_SKIP);
			assert_true(owner < 0 || owner == g);
			assert_true(relates(gd->scope, d->scope));
		}
		total += n;
	}
	assert_true(total > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unmet_dependency_skips),
		cmocka_unit_test(test_skips_chain),
		cmocka_unit_test(test_excluded_dependency),
		cmocka_unit_test(test_dep_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
