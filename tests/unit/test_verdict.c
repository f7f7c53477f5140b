// SPDX-License-Identifier: MIT
/* Unit tests for verdict folding (engine/verdict.c) on hand-built reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/gates.h"

/*
 * A node: the host, two GPUs and two NICs with one port each. Subjects
 * without results count as open, so each test adds only what it needs.
 */
struct node {
	struct report r;
	int host, gpu0, gpu1, nic0, port0, nic1, port1;
};

static int node_setup(void **state)
{
	struct node *n = calloc(1, sizeof(*n));

	if (!n)
		return -1;
	report_init(&n->r);
	n->r.meta.require = "any";
	n->host = report_subject(&n->r, SUBJ_HOST, "host", "node", NULL, -1);
	n->gpu0 = report_subject(&n->r, SUBJ_GPU, "GPU0", "H200", "0000:18:00.0", -1);
	n->gpu1 = report_subject(&n->r, SUBJ_GPU, "GPU1", "H200", "0000:2a:00.0", -1);
	n->nic0 = report_subject(&n->r, SUBJ_NIC, "mlx5_0", "ConnectX-7",
				 "0000:19:00.0", -1);
	n->port0 = report_subject(&n->r, SUBJ_PORT, "mlx5_0/1", "port 1",
				  "0000:19:00.0", n->nic0);
	n->nic1 = report_subject(&n->r, SUBJ_NIC, "mlx5_1", "ConnectX-7",
				 "0000:2b:00.0", -1);
	n->port1 = report_subject(&n->r, SUBJ_PORT, "mlx5_1/1", "port 1",
				  "0000:2b:00.0", n->nic1);
	*state = n;
	return 0;
}

static int node_teardown(void **state)
{
	struct node *n = *state;

	report_free(&n->r);
	free(n);
	return 0;
}

/* An empty report, for nodes shaped by the test itself. */
static int empty_setup(void **state)
{
	struct report *r = calloc(1, sizeof(*r));

	if (!r)
		return -1;
	report_init(r);
	r->meta.require = "any";
	*state = r;
	return 0;
}

static int empty_teardown(void **state)
{
	report_free(*state);
	free(*state);
	return 0;
}

/* Add a result and return its index. */
static int add(struct report *r, const char *gate, unsigned int paths,
	       int subject, enum gdr_status st, const char *code)
{
	report_add(r, gate_find(gate), L_HOST, paths, subject, st, code, "%s says %s",
		   gate, status_name(st));
	/* As emit() does for a catalog code: the fold reads the enum. */
	if (!strcmp(code, "NO_ALLOC"))
		r->res[r->nres - 1].code_index = C_NO_ALLOC;
	if (!strcmp(code, "NCCL_NO_ALLOC"))
		r->res[r->nres - 1].code_index = C_NCCL_NO_ALLOC;
	if (!strcmp(code, "NCCL_UNPROVEN"))
		r->res[r->nres - 1].code_index = C_NCCL_UNPROVEN;
	return (int)r->nres - 1;
}

/* The usual passing chain, so verdicts are not decided by empty subjects. */
static void add_passing(struct node *n)
{
	add(&n->r, "host.memlock", P_BOTH, n->host, ST_PASS, "OK");
	add(&n->r, "gpu.gdr_attr", P_BOTH, n->gpu0, ST_PASS, "OK");
	add(&n->r, "gpu.gdr_attr", P_BOTH, n->gpu1, ST_PASS, "OK");
	add(&n->r, "nic.uverbs", P_BOTH, n->nic0, ST_PASS, "OK");
	add(&n->r, "nic.uverbs", P_BOTH, n->nic1, ST_PASS, "OK");
	add(&n->r, "nic.port", P_BOTH, n->port0, ST_PASS, "OK");
	add(&n->r, "nic.port", P_BOTH, n->port1, ST_PASS, "OK");
}

static void expect_path(const struct report *r, enum gdr_path p,
			enum verdict v, int decisive)
{
	assert_int_equal(r->path[p].verdict, v);
	assert_int_equal(r->path[p].decisive, decisive);
	assert_non_null(strstr(r->path[p].summary, verdict_name(v)));
}

static void expect_overall(const struct report *r, enum verdict v, int code)
{
	assert_int_equal(r->overall, v);
	assert_int_equal(r->exit_code, code);
}

static void test_all_pass(void **state)
{
	struct node *n = *state;

	add_passing(n);
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_READY, -1);
	expect_path(&n->r, PATH_PEERMEM, V_READY, -1);
	assert_int_equal(n->r.path[PATH_DMABUF].nblockers, 0);
	assert_int_equal(n->r.path[PATH_PEERMEM].nblockers, 0);
	expect_overall(&n->r, V_READY, 0);
}

static void test_host_blocked_closes_only_its_mask(void **state)
{
	struct node *n = *state;
	int k;

	add_passing(n);
	k = add(&n->r, "host.kernel", P_DMABUF, n->host, ST_BLOCKED,
		"KERNEL_TOO_OLD");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_BLOCKED, k);
	assert_int_equal(n->r.path[PATH_DMABUF].nblockers, 1);
	assert_int_equal(n->r.path[PATH_DMABUF].blockers[0], k);
	assert_non_null(strstr(n->r.path[PATH_DMABUF].summary, "host.kernel"));
	assert_non_null(strstr(n->r.path[PATH_DMABUF].summary, "(host)"));
	expect_path(&n->r, PATH_PEERMEM, V_READY, -1);
	assert_int_equal(n->r.path[PATH_PEERMEM].nblockers, 0);
	expect_overall(&n->r, V_READY, 0);

	verdict_fold(&n->r, REQUIRE_DMABUF);
	expect_overall(&n->r, V_BLOCKED, 1);
	verdict_fold(&n->r, REQUIRE_PEERMEM);
	expect_overall(&n->r, V_READY, 0);
}

static void test_host_blocked_no_paths(void **state)
{
	struct node *n = *state;

	add_passing(n);
	/* An advisory gate (P_NONE) never closes a path. */
	add(&n->r, "host.privileges", P_NONE, n->host, ST_BLOCKED, "NOT_ROOT");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_READY, -1);
	expect_path(&n->r, PATH_PEERMEM, V_READY, -1);
	assert_int_equal(n->r.path[PATH_DMABUF].nblockers, 0);
	assert_int_equal(n->r.path[PATH_PEERMEM].nblockers, 0);
	expect_overall(&n->r, V_READY, 0);
}

static void test_one_gpu_blocked_still_ready(void **state)
{
	struct node *n = *state;
	int b;

	add_passing(n);
	b = add(&n->r, "platform.bar1", P_BOTH, n->gpu1, ST_BLOCKED, "BAR1_SMALL");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_READY, -1);
	expect_path(&n->r, PATH_PEERMEM, V_READY, -1);
	/* Still listed as a blocker of that GPU. */
	assert_int_equal(n->r.path[PATH_DMABUF].nblockers, 1);
	assert_int_equal(n->r.path[PATH_DMABUF].blockers[0], b);
	expect_overall(&n->r, V_READY, 0);
}

static void test_all_gpus_blocked_same_gate(void **state)
{
	struct node *n = *state;
	int first, second;

	add_passing(n);
	/* GPU1's result comes first, though GPU0 is the earlier subject. */
	first = add(&n->r, "platform.bar1", P_BOTH, n->gpu1, ST_BLOCKED,
		    "BAR1_SMALL");
	second = add(&n->r, "platform.bar1", P_BOTH, n->gpu0, ST_BLOCKED,
		     "BAR1_SMALL");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_BLOCKED, first);
	expect_path(&n->r, PATH_PEERMEM, V_BLOCKED, first);
	assert_non_null(strstr(n->r.path[PATH_DMABUF].summary,
			       "platform.bar1 (GPU1)"));
	assert_int_equal(n->r.path[PATH_DMABUF].nblockers, 2);
	assert_int_equal(n->r.path[PATH_DMABUF].blockers[0], first);
	assert_int_equal(n->r.path[PATH_DMABUF].blockers[1], second);
	expect_overall(&n->r, V_BLOCKED, 1);
}

/*
 * GPUs closed at different gates: the decisive result is the latest gate
 * in chain order that closed one (where the path finally closed).
 */
static void test_all_gpus_blocked_names_closing_gate(void **state)
{
	struct node *n = *state;
	int early, late;

	add_passing(n);
	early = add(&n->r, "gpu.visible", P_BOTH, n->gpu1, ST_BLOCKED,
		    "GPU_NOT_VISIBLE");
	late = add(&n->r, "platform.bar1", P_BOTH, n->gpu0, ST_BLOCKED,
		   "BAR1_SMALL");
	/* GPU1, already closed, fails the later gate too. */
	add(&n->r, "platform.bar1", P_BOTH, n->gpu1, ST_BLOCKED, "BAR1_SMALL");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_BLOCKED, late);
	assert_non_null(strstr(n->r.path[PATH_DMABUF].summary,
			       "platform.bar1 (GPU0)"));
	assert_int_equal(n->r.path[PATH_DMABUF].nblockers, 3);
	assert_int_equal(n->r.path[PATH_DMABUF].blockers[0], early);
	expect_overall(&n->r, V_BLOCKED, 1);
}

/* GPU x device pairs, [gpu][nic]. */
static void add_pairs(struct node *n, int pair[2][2])
{
	const int gpus[2] = { n->gpu0, n->gpu1 }, nics[2] = { n->nic0, n->nic1 };

	for (int g = 0; g < 2; g++)
		for (int d = 0; d < 2; d++) {
			char id[32];

			snprintf(id, sizeof(id), "GPU%d~mlx5_%d", g, d);
			pair[g][d] = report_subject(&n->r, SUBJ_PAIR, id, id,
						    NULL, -1);
			n->r.subj[pair[g][d]].pair_gpu = gpus[g];
			n->r.subj[pair[g][d]].pair_nic = nics[d];
		}
}

/* A transfer data.* verified on a pair: the proof, as the engine marks it. */
static int add_proof(struct node *n, const char *gate, unsigned int paths,
		     int pair)
{
	int d = add(&n->r, gate, paths, pair, ST_PASS, "TRANSFER_VERIFIED");

	n->r.res[d].layer = L_DATAPATH;
	n->r.res[d].proof = true;
	return d;
}

/* A proof outranks an inference (issue 15), on its path and subject only. */
static void test_proof_outranks_inference(void **state)
{
	struct node *n = *state;
	int pair[2][2], kconfig, attr0, attr1, bar;

	add_passing(n);
	add_pairs(n, pair);
	kconfig = add(&n->r, "host.kconfig", P_BOTH, n->host, ST_BLOCKED,
		      "KCONFIG_NO_USER_MEM");
	/* dma-buf only: a peermem proof does not contradict it. */
	attr0 = add(&n->r, "gpu.dmabuf_attr", P_DMABUF, n->gpu0, ST_BLOCKED,
		    "NO_DMABUF");
	/* Another GPU than the proven pair's. */
	attr1 = add(&n->r, "gpu.gdr_attr", P_PEERMEM, n->gpu1, ST_ERROR,
		    "UNREADABLE");
	bar = add(&n->r, "platform.bar1", P_PEERMEM, pair[0][0], ST_ERROR,
		  "BAR1_UNREADABLE");
	add_proof(n, "data.peermem", P_PEERMEM, pair[0][0]);
	verdict_fold(&n->r, REQUIRE_ANY);

	assert_int_equal(n->r.res[kconfig].status, ST_WARN);
	assert_int_equal(n->r.res[kconfig].code_index, C_CONTRADICTED_BY_PROOF);
	assert_string_equal(ev_find_str(&n->r.res[kconfig], "inferred_code"),
			    "KCONFIG_NO_USER_MEM");
	assert_non_null(strstr(n->r.res[kconfig].reason, "does not hold"));
	assert_non_null(n->r.res[kconfig].remediation);
	/* An unreadable input is moot, not contradicted: no fix for it. */
	assert_int_equal(n->r.res[bar].status, ST_WARN);
	assert_non_null(strstr(n->r.res[bar].reason, "decides the path"));
	assert_null(n->r.res[bar].remediation);
	assert_int_equal(n->r.res[attr0].status, ST_BLOCKED);
	assert_int_equal(n->r.res[attr1].status, ST_ERROR);
	expect_path(&n->r, PATH_PEERMEM, V_READY, -1);
}

static void test_pairs(void **state)
{
	struct node *n = *state;
	int pair[2][2], first;

	add_passing(n);
	add_pairs(n, pair);
	/* An advisory pair gate closes nothing. */
	for (int g = 0; g < 2; g++)
		for (int d = 0; d < 2; d++)
			add(&n->r, "topo.path", P_NONE, pair[g][d], ST_BLOCKED,
			    "CROSS_SOCKET");
	/* Three of four pairs closed: GPU1 with mlx5_1 still works. */
	first = add(&n->r, "platform.acs", P_BOTH, pair[0][0], ST_BLOCKED,
		    "ACS_REDIRECT");
	add(&n->r, "platform.acs", P_BOTH, pair[0][1], ST_BLOCKED,
	    "ACS_REDIRECT");
	add(&n->r, "platform.acs", P_BOTH, pair[1][0], ST_BLOCKED,
	    "ACS_REDIRECT");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_READY, -1);
	assert_int_equal(n->r.path[PATH_DMABUF].nblockers, 3);
	expect_overall(&n->r, V_READY, 0);

	add(&n->r, "platform.acs", P_BOTH, pair[1][1], ST_BLOCKED,
	    "ACS_REDIRECT");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_BLOCKED, first);
	expect_path(&n->r, PATH_PEERMEM, V_BLOCKED, first);
	assert_non_null(strstr(n->r.path[PATH_DMABUF].summary,
			       "platform.acs (GPU0~mlx5_0)"));
	expect_overall(&n->r, V_BLOCKED, 1);
}

/* A pair closes only with its own GPU and device. */
static void test_pair_and_port_combine(void **state)
{
	struct node *n = *state;
	int pair[2][2], acs;

	add_passing(n);
	add_pairs(n, pair);
	/* Every GPU's pair with mlx5_0 is closed; mlx5_1's port is down. */
	acs = add(&n->r, "platform.acs", P_BOTH, pair[0][0], ST_BLOCKED,
		  "ACS_REDIRECT");
	add(&n->r, "platform.acs", P_BOTH, pair[1][0], ST_BLOCKED,
	    "ACS_REDIRECT");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_READY, -1);
	add(&n->r, "nic.port", P_BOTH, n->port1, ST_BLOCKED, "PORT_DOWN");
	verdict_fold(&n->r, REQUIRE_ANY);
	assert_int_equal(n->r.path[PATH_DMABUF].verdict, V_BLOCKED);
	assert_int_equal(n->r.path[PATH_DMABUF].nblockers, 3);
	assert_int_equal(n->r.path[PATH_DMABUF].blockers[0], acs);
	expect_overall(&n->r, V_BLOCKED, 1);
}

static void test_gpu_blocked_on_one_path(void **state)
{
	struct node *n = *state;
	int a, b;

	add_passing(n);
	a = add(&n->r, "gpu.dmabuf_attr", P_DMABUF, n->gpu0, ST_BLOCKED,
		"NO_DMABUF");
	b = add(&n->r, "gpu.dmabuf_attr", P_DMABUF, n->gpu1, ST_BLOCKED,
		"NO_DMABUF");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_BLOCKED, a);
	assert_int_equal(n->r.path[PATH_DMABUF].nblockers, 2);
	assert_int_equal(n->r.path[PATH_DMABUF].blockers[1], b);
	expect_path(&n->r, PATH_PEERMEM, V_READY, -1);
	assert_int_equal(n->r.path[PATH_PEERMEM].nblockers, 0);
	expect_overall(&n->r, V_READY, 0);
}

static void test_port_closed_by_blocked_nic(void **state)
{
	struct node *n = *state;
	int d0, d1;

	add_passing(n);
	/* Both ports pass their own gates, but their devices are closed. */
	d0 = add(&n->r, "mech.dmabuf_provider", P_DMABUF, n->nic0, ST_BLOCKED,
		 "PROVIDER_LACKS_DMABUF");
	verdict_fold(&n->r, REQUIRE_ANY);
	/* mlx5_1 is still open. */
	expect_path(&n->r, PATH_DMABUF, V_READY, -1);

	d1 = add(&n->r, "mech.dmabuf_provider", P_DMABUF, n->nic1, ST_BLOCKED,
		 "PROVIDER_LACKS_DMABUF");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_BLOCKED, d0);
	assert_non_null(strstr(n->r.path[PATH_DMABUF].summary, "(mlx5_0)"));
	assert_int_equal(n->r.path[PATH_DMABUF].nblockers, 2);
	assert_int_equal(n->r.path[PATH_DMABUF].blockers[1], d1);
	expect_path(&n->r, PATH_PEERMEM, V_READY, -1);
}

static void test_ports_blocked_and_device_blocked(void **state)
{
	struct node *n = *state;
	int p, d;

	add_passing(n);
	/* Port of mlx5_1 is down; mlx5_0 the device is closed, later. */
	p = add(&n->r, "nic.port", P_BOTH, n->port1, ST_BLOCKED, "PORT_DOWN");
	d = add(&n->r, "nic.uverbs", P_BOTH, n->nic0, ST_BLOCKED,
		"UVERBS_PERMISSION");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_PEERMEM, V_BLOCKED, p);
	assert_int_equal(n->r.path[PATH_PEERMEM].nblockers, 2);
	assert_int_equal(n->r.path[PATH_PEERMEM].blockers[1], d);
	expect_overall(&n->r, V_BLOCKED, 1);
}

static void test_error_without_blocked_is_unknown(void **state)
{
	struct node *n = *state;
	int e;

	add_passing(n);
	e = add(&n->r, "gpu.cuinit", P_BOTH, n->host, ST_ERROR, "CUINIT_FAILED");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_UNKNOWN, e);
	expect_path(&n->r, PATH_PEERMEM, V_UNKNOWN, e);
	assert_non_null(strstr(n->r.path[PATH_DMABUF].summary, "gpu.cuinit"));
	assert_int_equal(n->r.path[PATH_DMABUF].nblockers, 0);
	expect_overall(&n->r, V_UNKNOWN, 3);
}

/*
 * --no-alloc: the proof gates SKIP by the user's choice. A node that
 * passes every other gate is READY-UNPROVEN (exit 0); a fault anywhere
 * still makes it UNKNOWN (exit 3); a real proof makes it READY.
 */
static void add_no_alloc(struct node *n, unsigned int paths, const char *gate)
{
	int i = add(&n->r, gate, paths, n->gpu0, ST_SKIP, "NO_ALLOC");

	n->r.res[i].proof = true;
	i = add(&n->r, gate, paths, n->gpu1, ST_SKIP, "NO_ALLOC");
	n->r.res[i].proof = true;
}

static void test_no_alloc_ready_unproven(void **state)
{
	struct node *n = *state;

	add_passing(n);
	add_no_alloc(n, P_DMABUF, "reg.dmabuf");
	add_no_alloc(n, P_PEERMEM, "reg.peermem");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_READY_UNPROVEN, -1);
	assert_true(n->r.path[PATH_DMABUF].nready > 0);
	assert_non_null(strstr(n->r.path[PATH_DMABUF].summary, "--no-alloc"));
	expect_overall(&n->r, V_READY_UNPROVEN, 0);
	assert_string_equal(verdict_name(V_READY_UNPROVEN), "READY-UNPROVEN");
}

static void test_no_alloc_fault_still_unknown(void **state)
{
	struct node *n = *state;
	int e;

	add_passing(n);
	add_no_alloc(n, P_DMABUF, "reg.dmabuf");
	add_no_alloc(n, P_PEERMEM, "reg.peermem");
	e = add(&n->r, "gpu.cuinit", P_BOTH, n->host, ST_ERROR, "CUINIT_FAILED");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_UNKNOWN, e);
	expect_overall(&n->r, V_UNKNOWN, 3);
}

/*
 * data.nccl under --no-alloc: the nccl path is READY-UNPROVEN like the
 * others (a health check with --require nccl exits 0); a proof missing for
 * any other reason leaves it UNKNOWN.
 */
static void nccl_skip(struct node *n, const char *code)
{
	int i;

	add_passing(n);
	add_no_alloc(n, P_DMABUF, "reg.dmabuf");
	add_no_alloc(n, P_PEERMEM, "reg.peermem");
	i = add(&n->r, "data.nccl", P_NCCL, n->gpu0, ST_SKIP, code);
	n->r.res[i].proof = true;
	i = add(&n->r, "data.nccl", P_NCCL, n->gpu1, ST_SKIP, code);
	n->r.res[i].proof = true;
	verdict_fold(&n->r, REQUIRE_NCCL);
}

static void test_no_alloc_nccl_ready_unproven(void **state)
{
	struct node *n = *state;

	nccl_skip(n, "NCCL_NO_ALLOC");
	expect_path(&n->r, PATH_NCCL, V_READY_UNPROVEN, -1);
	expect_overall(&n->r, V_READY_UNPROVEN, 0);
}

static void test_nccl_unproven_is_unknown(void **state)
{
	struct node *n = *state;

	nccl_skip(n, "NCCL_UNPROVEN");
	assert_int_equal(n->r.path[PATH_NCCL].verdict, V_UNKNOWN);
	expect_overall(&n->r, V_UNKNOWN, 3);
}

static void test_no_alloc_proof_elsewhere_is_ready(void **state)
{
	struct node *n = *state;
	int i;

	add_passing(n);
	/* GPU0 unproven, GPU1 proven: the proven pair makes it READY. */
	i = add(&n->r, "reg.dmabuf", P_DMABUF, n->gpu0, ST_SKIP, "NO_ALLOC");
	n->r.res[i].proof = true;
	i = add(&n->r, "reg.dmabuf", P_DMABUF, n->gpu1, ST_PASS, "DMABUF_MR_OK");
	n->r.res[i].proof = true;
	verdict_fold(&n->r, REQUIRE_DMABUF);
	expect_path(&n->r, PATH_DMABUF, V_READY, -1);
	for (size_t k = 0; k < n->r.path[PATH_DMABUF].nready; k++)
		assert_int_equal(n->r.path[PATH_DMABUF].ready[k][0], n->gpu1);
	expect_overall(&n->r, V_READY, 0);
}

static void test_error_on_every_gpu_is_unknown(void **state)
{
	struct node *n = *state;
	int e0, e1;

	add_passing(n);
	e1 = add(&n->r, "gpu.gdr_attr", P_BOTH, n->gpu1, ST_ERROR, "ATTR_FAILED");
	verdict_fold(&n->r, REQUIRE_ANY);
	/* One GPU still decided open. */
	expect_path(&n->r, PATH_DMABUF, V_READY, -1);

	e0 = add(&n->r, "gpu.gdr_attr", P_BOTH, n->gpu0, ST_ERROR, "ATTR_FAILED");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_UNKNOWN, e1);
	assert_true(e1 < e0);
	expect_overall(&n->r, V_UNKNOWN, 3);
}

static void test_blocked_beats_error(void **state)
{
	struct node *n = *state;
	int e, b;

	add_passing(n);
	e = add(&n->r, "gpu.cuinit", P_BOTH, n->host, ST_ERROR, "CUINIT_FAILED");
	b = add(&n->r, "mech.peermem", P_PEERMEM, n->host, ST_BLOCKED,
		"PEERMEM_NOT_LOADED");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_PEERMEM, V_BLOCKED, b);
	expect_path(&n->r, PATH_DMABUF, V_UNKNOWN, e);
	/* UNKNOWN and BLOCKED: undecided, not closed. */
	expect_overall(&n->r, V_UNKNOWN, 3);
}

static void test_skip_never_closes(void **state)
{
	struct node *n = *state;

	add_passing(n);
	add(&n->r, "host.kernel", P_BOTH, n->host, ST_SKIP, "NO_SUBJECT");
	add(&n->r, "gpu.dmabuf_attr", P_BOTH, n->gpu0, ST_SKIP, "SKIPPED");
	add(&n->r, "gpu.dmabuf_attr", P_BOTH, n->gpu1, ST_SKIP, "SKIPPED");
	add(&n->r, "nic.gid", P_BOTH, n->port0, ST_SKIP, "SKIPPED");
	add(&n->r, "nic.gid", P_BOTH, n->port1, ST_SKIP, "SKIPPED");
	add(&n->r, "nic.uverbs", P_BOTH, n->nic0, ST_WARN, "SLOW");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_READY, -1);
	expect_path(&n->r, PATH_PEERMEM, V_READY, -1);
	assert_int_equal(n->r.path[PATH_DMABUF].nblockers, 0);
	expect_overall(&n->r, V_READY, 0);
}

static void test_refold_does_not_duplicate_blockers(void **state)
{
	struct node *n = *state;

	add_passing(n);
	add(&n->r, "host.memlock", P_BOTH, n->host, ST_BLOCKED, "MEMLOCK_LOW");
	verdict_fold(&n->r, REQUIRE_ANY);
	verdict_fold(&n->r, REQUIRE_ANY);
	assert_int_equal(n->r.path[PATH_DMABUF].nblockers, 1);
	assert_int_equal(n->r.path[PATH_PEERMEM].nblockers, 1);
	expect_overall(&n->r, V_BLOCKED, 1);
}

/* --- no RDMA port -------------------------------------------------------- */

static void test_no_nic_is_unknown(void **state)
{
	struct report *r = *state;

	report_subject(r, SUBJ_HOST, "host", "node", NULL, -1);
	report_subject(r, SUBJ_GPU, "GPU0", "H200", "0000:18:00.0", -1);
	report_add(r, gate_find("gpu.gdr_attr"), L_GPU, P_BOTH, 1, ST_PASS, "OK", "ok");
	verdict_fold(r, REQUIRE_ANY);
	expect_path(r, PATH_DMABUF, V_UNKNOWN, -1);
	expect_path(r, PATH_PEERMEM, V_UNKNOWN, -1);
	assert_non_null(strstr(r->path[PATH_DMABUF].summary, "RDMA port"));
	expect_overall(r, V_UNKNOWN, 3);
}

static void test_no_gpu_is_unknown(void **state)
{
	struct report *r = *state;

	report_subject(r, SUBJ_HOST, "host", "node", NULL, -1);
	report_subject(r, SUBJ_NIC, "mlx5_0", "CX7", "0000:19:00.0", -1);
	report_subject(r, SUBJ_PORT, "mlx5_0/1", "port 1", "0000:19:00.0", 1);
	verdict_fold(r, REQUIRE_ANY);
	expect_path(r, PATH_DMABUF, V_UNKNOWN, -1);
	assert_non_null(strstr(r->path[PATH_DMABUF].summary, "GPU"));
	expect_overall(r, V_UNKNOWN, 3);
}

/* A NIC device whose ports were not enumerated is no open port. */
static void test_nic_without_ports_not_ready(void **state)
{
	struct report *r = *state;

	report_subject(r, SUBJ_HOST, "host", "node", NULL, -1);
	report_subject(r, SUBJ_GPU, "GPU0", "H200", "0000:18:00.0", -1);
	report_subject(r, SUBJ_NIC, "mlx5_0", "CX7", "0000:19:00.0", -1);
	report_add(r, gate_find("gpu.gdr_attr"), L_GPU, P_BOTH, 1, ST_PASS, "OK", "ok");
	report_add(r, gate_find("nic.uverbs"), L_NIC, P_BOTH, 2, ST_PASS, "OK", "ok");
	verdict_fold(r, REQUIRE_ANY);
	assert_int_not_equal(r->path[PATH_DMABUF].verdict, V_READY);
	assert_int_not_equal(r->path[PATH_PEERMEM].verdict, V_READY);
	assert_int_not_equal(r->exit_code, 0);
}

/* ... nor may it reopen a path whose only real port is closed. */
static void test_nic_without_ports_does_not_reopen(void **state)
{
	struct report *r = *state;
	int p;

	report_subject(r, SUBJ_HOST, "host", "node", NULL, -1);
	report_subject(r, SUBJ_GPU, "GPU0", "H200", "0000:18:00.0", -1);
	report_subject(r, SUBJ_NIC, "mlx5_0", "CX7", "0000:19:00.0", -1);
	report_subject(r, SUBJ_PORT, "mlx5_0/1", "port 1", "0000:19:00.0", 2);
	report_subject(r, SUBJ_NIC, "mlx5_1", "CX7", "0000:2b:00.0", -1);
	report_add(r, gate_find("nic.uverbs"), L_NIC, P_BOTH, 4, ST_PASS, "OK", "ok");
	report_add(r, gate_find("nic.port"), L_NIC, P_BOTH, 3, ST_BLOCKED, "PORT_DOWN",
		   "down");
	p = (int)r->nres - 1;
	verdict_fold(r, REQUIRE_ANY);
	expect_path(r, PATH_DMABUF, V_BLOCKED, p);
	expect_overall(r, V_BLOCKED, 1);
}

static void test_nic_without_ports_blocked_closes(void **state)
{
	struct report *r = *state;

	report_subject(r, SUBJ_HOST, "host", "node", NULL, -1);
	report_subject(r, SUBJ_GPU, "GPU0", "H200", "0000:18:00.0", -1);
	report_subject(r, SUBJ_NIC, "mlx5_0", "CX7", "0000:19:00.0", -1);
	report_add(r, gate_find("nic.uverbs"), L_NIC, P_BOTH, 2, ST_BLOCKED,
		   "UVERBS_NODE_MISSING", "no /dev/infiniband/uverbs0");
	verdict_fold(r, REQUIRE_ANY);
	expect_path(r, PATH_DMABUF, V_BLOCKED, 0);
	expect_path(r, PATH_PEERMEM, V_BLOCKED, 0);
	expect_overall(r, V_BLOCKED, 1);
}

/* --- --require ------------------------------------------------------------ */

static void test_require_dmabuf_ready_peermem_blocked(void **state)
{
	struct node *n = *state;

	add_passing(n);
	add(&n->r, "mech.peermem", P_PEERMEM, n->host, ST_BLOCKED,
	    "PEERMEM_NOT_LOADED");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_path(&n->r, PATH_DMABUF, V_READY, -1);
	expect_path(&n->r, PATH_PEERMEM, V_BLOCKED, (int)n->r.nres - 1);
	expect_overall(&n->r, V_READY, 0);
	verdict_fold(&n->r, REQUIRE_DMABUF);
	expect_overall(&n->r, V_READY, 0);
	verdict_fold(&n->r, REQUIRE_PEERMEM);
	expect_overall(&n->r, V_BLOCKED, 1);
}

static void test_require_unknown_and_blocked(void **state)
{
	struct node *n = *state;

	add_passing(n);
	add(&n->r, "mech.dmabuf_verbs", P_DMABUF, n->host, ST_ERROR,
	    "PROBE_FAILED");
	add(&n->r, "mech.peermem", P_PEERMEM, n->host, ST_BLOCKED,
	    "PEERMEM_NOT_LOADED");
	verdict_fold(&n->r, REQUIRE_ANY);
	assert_int_equal(n->r.path[PATH_DMABUF].verdict, V_UNKNOWN);
	assert_int_equal(n->r.path[PATH_PEERMEM].verdict, V_BLOCKED);
	expect_overall(&n->r, V_UNKNOWN, 3);
	verdict_fold(&n->r, REQUIRE_DMABUF);
	expect_overall(&n->r, V_UNKNOWN, 3);
	verdict_fold(&n->r, REQUIRE_PEERMEM);
	expect_overall(&n->r, V_BLOCKED, 1);
}

static void test_require_both_unknown(void **state)
{
	struct node *n = *state;

	add_passing(n);
	add(&n->r, "gpu.libcuda", P_BOTH, n->host, ST_ERROR, "DLOPEN_FAILED");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_overall(&n->r, V_UNKNOWN, 3);
	verdict_fold(&n->r, REQUIRE_DMABUF);
	expect_overall(&n->r, V_UNKNOWN, 3);
	verdict_fold(&n->r, REQUIRE_PEERMEM);
	expect_overall(&n->r, V_UNKNOWN, 3);
}

static void test_require_both_blocked(void **state)
{
	struct node *n = *state;

	add_passing(n);
	add(&n->r, "host.kernel", P_DMABUF, n->host, ST_BLOCKED, "KERNEL_TOO_OLD");
	add(&n->r, "mech.peermem", P_PEERMEM, n->host, ST_BLOCKED,
	    "PEERMEM_NOT_LOADED");
	verdict_fold(&n->r, REQUIRE_ANY);
	expect_overall(&n->r, V_BLOCKED, 1);
	verdict_fold(&n->r, REQUIRE_DMABUF);
	expect_overall(&n->r, V_BLOCKED, 1);
	verdict_fold(&n->r, REQUIRE_PEERMEM);
	expect_overall(&n->r, V_BLOCKED, 1);
}

/* --- typed pair facts: the policy reads them, not strings ----------- */

/* How a test writes what the gates said besides the typed facts. */
enum wording {
	WORDING_AS_SHIPPED,	/* today's codes and evidence keys */
	WORDING_RENAMED,	/* every key and code text renamed */
	WORDING_NONE,		/* no evidence at all */
};

/*
 * One pair result as its probe records it: the typed fact, and around it
 * the code name, reason and evidence a renderer shows, worded as asked.
 */
static int add_path(struct node *n, int pair, enum topo_class cls,
		    enum wording w)
{
	struct result *res;

	res = report_add(&n->r, gate_find("topo.path"), L_TOPOLOGY, P_NONE,
			 pair, ST_PASS,
			 w == WORDING_RENAMED ? "PCIE_ROUTE" : "PCIE_PATH",
			 "%s", w == WORDING_RENAMED ? "somewhere" :
			 topo_class_name(cls));
	res->code_index = C_PCIE_PATH;
	fact_distance(res, cls);
	if (w == WORDING_AS_SHIPPED)
		ev_str(res, "nvidia_smi", "%s", topo_class_name(cls));
	else if (w == WORDING_RENAMED)
		ev_str(res, "distance_class", "%s", "PIX");	/* a lie */
	return (int)n->r.nres - 1;
}

/*
 * GPU0 is PIX from mlx5_0 and SYS from mlx5_1; GPU1 is SYS from mlx5_0
 * and PHB from mlx5_1, where ACS redirects into the IOMMU (BLOCKED).
 * Returns that ACS result.
 */
static int build_policy_node(struct node *n, enum wording w)
{
	static const enum topo_class cls[2][2] = {
		{ TOPO_PIX, TOPO_SYS }, { TOPO_SYS, TOPO_PHB },
	};
	int pair[2][2], acs;
	struct result *res;

	add_passing(n);
	add_pairs(n, pair);
	for (int g = 0; g < 2; g++)
		for (int d = 0; d < 2; d++)
			add_path(n, pair[g][d], cls[g][d], w);
	acs = add(&n->r, "platform.acs", P_BOTH, pair[1][1], ST_BLOCKED,
		  w == WORDING_RENAMED ? "REDIRECTED" : "ACS_REDIRECT_IOMMU");
	res = &n->r.res[acs];
	res->code_index = C_ACS_REDIRECT_IOMMU;
	fact_acs(res, PAIR_ACS_REDIRECT_IOMMU);
	return acs;
}

/* What a policy decided: everything but the wording of the results. */
struct decision {
	enum verdict verdict[PATH_COUNT];
	int decisive[PATH_COUNT];
	size_t nready[PATH_COUNT];
	int ready[PATH_COUNT][8][2];
	char summary[PATH_COUNT][256];
	int nviolations;
	char violations[POLICY_MAX_VIOLATIONS][160];
	enum verdict overall;
	int exit_code;
};

static void decide(enum wording w, const struct options *o,
		   struct decision *d, int *acs)
{
	struct node n;
	int a;

	memset(&n, 0, sizeof(n));
	memset(d, 0, sizeof(*d));
	report_init(&n.r);
	n.r.meta.require = "any";
	n.host = report_subject(&n.r, SUBJ_HOST, "host", "node", NULL, -1);
	n.gpu0 = report_subject(&n.r, SUBJ_GPU, "GPU0", "H200", "0000:18:00.0", -1);
	n.gpu1 = report_subject(&n.r, SUBJ_GPU, "GPU1", "H200", "0000:2a:00.0", -1);
	n.nic0 = report_subject(&n.r, SUBJ_NIC, "mlx5_0", "CX7", "0000:19:00.0", -1);
	n.port0 = report_subject(&n.r, SUBJ_PORT, "mlx5_0/1", "port 1",
				 "0000:19:00.0", n.nic0);
	n.nic1 = report_subject(&n.r, SUBJ_NIC, "mlx5_1", "CX7", "0000:2b:00.0", -1);
	n.port1 = report_subject(&n.r, SUBJ_PORT, "mlx5_1/1", "port 1",
				 "0000:2b:00.0", n.nic1);
	a = build_policy_node(&n, w);
	if (acs)
		*acs = a;
	verdict_fold(&n.r, REQUIRE_ANY);
	policy_apply(&n.r, o);
	policy_overall(&n.r, REQUIRE_ANY, o->warn_fails);
	for (int p = 0; p < PATH_COUNT; p++) {
		const struct path_verdict *pv = &n.r.path[p];

		d->verdict[p] = pv->verdict;
		d->decisive[p] = pv->decisive;
		d->nready[p] = pv->nready;
		assert_true(pv->nready <= 8);
		memcpy(d->ready[p], pv->ready, pv->nready * sizeof(pv->ready[0]));
		memcpy(d->summary[p], pv->summary, sizeof(d->summary[p]));
	}
	d->nviolations = n.r.meta.policy.nviolations;
	memcpy(d->violations, n.r.meta.policy.violations, sizeof(d->violations));
	d->overall = n.r.overall;
	d->exit_code = n.r.exit_code;
	report_free(&n.r);
}

static void expect_same(const struct decision *a, const struct decision *b)
{
	for (int p = 0; p < PATH_COUNT; p++) {
		assert_int_equal(a->verdict[p], b->verdict[p]);
		assert_int_equal(a->decisive[p], b->decisive[p]);
		assert_int_equal(a->nready[p], b->nready[p]);
		assert_memory_equal(a->ready[p], b->ready[p],
				    a->nready[p] * sizeof(a->ready[p][0]));
		assert_string_equal(a->summary[p], b->summary[p]);
	}
	assert_int_equal(a->nviolations, b->nviolations);
	for (int i = 0; i < a->nviolations; i++)
		assert_string_equal(a->violations[i], b->violations[i]);
	assert_int_equal(a->overall, b->overall);
	assert_int_equal(a->exit_code, b->exit_code);
}

/*
 * Renaming an evidence key or a reason code's text (or dropping the
 * evidence) cannot change what a policy decides: --max-distance and
 * --every-gpu read the typed pair facts.
 */
static void test_policy_reads_facts_not_strings(void **state)
{
	struct options o;
	struct decision shipped, renamed, bare;
	int acs;

	(void)state;
	memset(&o, 0, sizeof(o));

	/* Within PHB: GPU0+mlx5_0 only (GPU1's PHB pair is BLOCKED). */
	o.max_distance = TOPO_PHB;
	decide(WORDING_AS_SHIPPED, &o, &shipped, NULL);
	assert_int_equal(shipped.verdict[PATH_DMABUF], V_READY);
	assert_int_equal(shipped.nready[PATH_DMABUF], 1);
	assert_non_null(strstr(shipped.summary[PATH_DMABUF], "(within PHB)"));
	decide(WORDING_RENAMED, &o, &renamed, NULL);
	decide(WORDING_NONE, &o, &bare, NULL);
	expect_same(&shipped, &renamed);
	expect_same(&shipped, &bare);

	/* GPU1 is not ready with its nearest NIC: closed at its ACS result. */
	o.every_gpu = true;
	decide(WORDING_AS_SHIPPED, &o, &shipped, &acs);
	assert_int_equal(shipped.verdict[PATH_DMABUF], V_BLOCKED);
	assert_int_equal(shipped.decisive[PATH_DMABUF], acs);
	assert_int_equal(shipped.exit_code, 1);
	decide(WORDING_RENAMED, &o, &renamed, NULL);
	decide(WORDING_NONE, &o, &bare, NULL);
	expect_same(&shipped, &renamed);
	expect_same(&shipped, &bare);

	/* Nothing within PIX but GPU0+mlx5_0; every GPU not asked. */
	o.every_gpu = false;
	o.max_distance = TOPO_PIX;
	decide(WORDING_AS_SHIPPED, &o, &shipped, NULL);
	assert_int_equal(shipped.verdict[PATH_PEERMEM], V_READY);
	assert_int_equal(shipped.nready[PATH_PEERMEM], 1);
	decide(WORDING_RENAMED, &o, &renamed, NULL);
	decide(WORDING_NONE, &o, &bare, NULL);
	expect_same(&shipped, &renamed);
	expect_same(&shipped, &bare);

	/* Every GPU alone, no distance limit. */
	o.every_gpu = true;
	o.max_distance = -1;
	decide(WORDING_AS_SHIPPED, &o, &shipped, &acs);
	assert_int_equal(shipped.decisive[PATH_PEERMEM], acs);
	decide(WORDING_RENAMED, &o, &renamed, NULL);
	decide(WORDING_NONE, &o, &bare, NULL);
	expect_same(&shipped, &renamed);
	expect_same(&shipped, &bare);
}

/* Facts live once per pair, remember their result, and default unknown. */
static void test_pair_facts(void **state)
{
	struct node *n = *state;
	const struct pair_fact *f;
	int pair[2][2], path, acs;

	add_pairs(n, pair);
	f = report_pair_fact(&n->r, n->gpu0);	/* not a pair */
	assert_int_equal(f->distance, TOPO_UNKNOWN);
	assert_int_equal(f->distance_result, -1);
	assert_int_equal(report_pair_fact(&n->r, -1)->acs, PAIR_ACS_UNKNOWN);
	f = report_pair_fact(&n->r, pair[1][0]);
	assert_int_equal(f->distance, TOPO_UNKNOWN);
	assert_int_equal(f->gdr, PAIR_GDR_UNKNOWN);
	assert_int_equal(f->acs, PAIR_ACS_UNKNOWN);

	path = add(&n->r, "topo.path", P_NONE, pair[1][0], ST_PASS, "PCIE_PATH");
	fact_distance(&n->r.res[path], TOPO_NODE);
	acs = add(&n->r, "platform.acs", P_BOTH, pair[1][0], ST_WARN,
		  "ACS_REDIRECT");
	fact_acs(&n->r.res[acs], PAIR_ACS_REDIRECT);
	fact_gdr(&n->r.res[add(&n->r, "topo.nccl", P_NONE, pair[1][0],
			       ST_WARN, "NCCL_GDR_WRITE_ONLY")], PAIR_GDR_RECV);
	f = report_pair_fact(&n->r, pair[1][0]);
	assert_int_equal(f->distance, TOPO_NODE);
	assert_int_equal(f->distance_result, path);
	assert_int_equal(f->acs, PAIR_ACS_REDIRECT);
	assert_int_equal(f->acs_result, acs);
	assert_int_equal(f->gdr, PAIR_GDR_RECV);
	assert_int_equal(f->gdr_result, acs + 1);
	/* The other pairs are untouched. */
	assert_int_equal(report_pair_fact(&n->r, pair[0][0])->distance,
			 TOPO_UNKNOWN);
}

#define EMPTY_TEST(f) \
	cmocka_unit_test_setup_teardown(f, empty_setup, empty_teardown)
#define NODE_TEST(f) \
	cmocka_unit_test_setup_teardown(f, node_setup, node_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		NODE_TEST(test_all_pass),
		NODE_TEST(test_proof_outranks_inference),
		NODE_TEST(test_host_blocked_closes_only_its_mask),
		NODE_TEST(test_host_blocked_no_paths),
		NODE_TEST(test_one_gpu_blocked_still_ready),
		NODE_TEST(test_all_gpus_blocked_same_gate),
		NODE_TEST(test_all_gpus_blocked_names_closing_gate),
		NODE_TEST(test_pairs),
		NODE_TEST(test_pair_and_port_combine),
		NODE_TEST(test_gpu_blocked_on_one_path),
		NODE_TEST(test_port_closed_by_blocked_nic),
		NODE_TEST(test_ports_blocked_and_device_blocked),
		NODE_TEST(test_error_without_blocked_is_unknown),
		NODE_TEST(test_no_alloc_ready_unproven),
		NODE_TEST(test_no_alloc_fault_still_unknown),
		NODE_TEST(test_no_alloc_proof_elsewhere_is_ready),
		NODE_TEST(test_no_alloc_nccl_ready_unproven),
		NODE_TEST(test_nccl_unproven_is_unknown),
		NODE_TEST(test_error_on_every_gpu_is_unknown),
		NODE_TEST(test_blocked_beats_error),
		NODE_TEST(test_skip_never_closes),
		NODE_TEST(test_refold_does_not_duplicate_blockers),
		EMPTY_TEST(test_no_nic_is_unknown),
		EMPTY_TEST(test_no_gpu_is_unknown),
		EMPTY_TEST(test_nic_without_ports_not_ready),
		EMPTY_TEST(test_nic_without_ports_does_not_reopen),
		EMPTY_TEST(test_nic_without_ports_blocked_closes),
		NODE_TEST(test_require_dmabuf_ready_peermem_blocked),
		NODE_TEST(test_require_unknown_and_blocked),
		NODE_TEST(test_require_both_unknown),
		NODE_TEST(test_require_both_blocked),
		NODE_TEST(test_pair_facts),
		EMPTY_TEST(test_policy_reads_facts_not_strings),
	};

	return cmocka_run_group_tests_name("verdict", tests, NULL, NULL);
}
