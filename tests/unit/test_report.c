// SPDX-License-Identifier: MIT
/* Unit tests for the report model, remediation grouping and renderers. */
#include <jansson.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/gates.h"
#include "core/result.h"
#include "gate/catalog.h"
#include "report/text_util.h"

/* --- the model ----------------------------------------------------------- */

static void test_subjects(void **state)
{
	char longid[400];
	struct report r;
	int h, n, p, l;

	report_init(&r);
	assert_int_equal(r.path[PATH_DMABUF].decisive, -1);
	assert_int_equal(r.path[PATH_PEERMEM].decisive, -1);
	h = report_subject(&r, SUBJ_HOST, "host", NULL, NULL, -1);
	n = report_subject(&r, SUBJ_NIC, "mlx5_0", "ConnectX-7", "0000:19:00.0", -1);
	p = report_subject(&r, SUBJ_PORT, "mlx5_0/1", "port 1", "0000:19:00.0", n);
	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	l = report_subject(&r, SUBJ_GPU, longid, longid, longid, -1);

	assert_int_equal(h, 0);
	assert_int_equal(n, 1);
	assert_int_equal(p, 2);
	assert_int_equal(l, 3);
	assert_int_equal(r.nsubj, 4);
	assert_string_equal(r.subj[h].label, "");
	assert_string_equal(r.subj[h].pci, "");
	assert_int_equal(r.subj[p].kind, SUBJ_PORT);
	assert_int_equal(r.subj[p].parent, n);
	assert_string_equal(r.subj[p].id, "mlx5_0/1");
	assert_string_equal(r.subj[n].label, "ConnectX-7");
	assert_string_equal(r.subj[n].pci, "0000:19:00.0");
	/* Over-long strings are cut to their fields, NUL terminated. */
	assert_int_equal(strlen(r.subj[l].id), sizeof(r.subj[l].id) - 1);
	assert_int_equal(strlen(r.subj[l].label), sizeof(r.subj[l].label) - 1);
	assert_int_equal(strlen(r.subj[l].pci), sizeof(r.subj[l].pci) - 1);
	report_subject_uuid(&r, l, longid);
	assert_int_equal(strlen(r.subj[l].uuid), sizeof(r.subj[l].uuid) - 1);
	assert_string_equal(r.subj[h].uuid, "");
	report_free(&r);
	assert_int_equal(r.nsubj, 0);
	assert_null(r.subj);
}

static void test_add_records(void **state)
{
	struct report r;
	struct result *res;

	report_init(&r);
	report_subject(&r, SUBJ_HOST, "host", "node", NULL, -1);
	report_subject(&r, SUBJ_GPU, "GPU0", "H200", "0000:18:00.0", -1);
	res = report_add(&r, gate_find("platform.bar1"), L_PLATFORM, P_BOTH, 1, ST_WARN,
			 "BAR1_SMALL", "BAR1 is %d MiB (%s)", 256, "small");
	assert_ptr_equal(res, &r.res[0]);
	assert_int_equal(r.nres, 1);
	assert_string_equal(res->gate->id, "platform.bar1");
	assert_int_equal(res->layer, L_PLATFORM);
	assert_int_equal(res->paths, P_BOTH);
	assert_int_equal(res->subject, 1);
	assert_int_equal(res->status, ST_WARN);
	assert_string_equal(res->code, "BAR1_SMALL");
	assert_string_equal(res->reason, "BAR1 is 256 MiB (small)");
	assert_null(res->remediation);
	assert_int_equal(res->nev, 0);

	result_remedy(res, "first %d", 1);
	result_remedy(res, "set %s=%d", "NVreg_X", 2);
	assert_string_equal(res->remediation, "set NVreg_X=2");

	ev_int(res, "bar1_bytes", 256LL << 30);
	ev_int(res, "min", LLONG_MIN);
	ev_bool(res, "resizable", true);
	ev_bool(res, "large", false);
	ev_str(res, "pci", "%04x:%02x", 0x10de, 0x18);
	assert_int_equal(res->nev, 5);
	assert_string_equal(res->ev[0].key, "bar1_bytes");
	assert_int_equal(res->ev[0].type, EV_INT);
	assert_true(res->ev[0].i == 256LL << 30);
	assert_true(res->ev[1].i == LLONG_MIN);
	assert_int_equal(res->ev[2].type, EV_BOOL);
	assert_true(res->ev[2].b);
	assert_false(res->ev[3].b);
	assert_int_equal(res->ev[4].type, EV_STR);
	assert_string_equal(res->ev[4].s, "10de:18");

	/* A second result lands after the first, the first intact. */
	res = report_add(&r, gate_find("host.kernel"), L_HOST, P_DMABUF, 0, ST_PASS,
			 "KERNEL_OK", "%s", "6.18.44");
	assert_int_equal(r.nres, 2);
	assert_ptr_equal(res, &r.res[1]);
	assert_string_equal(r.res[0].reason, "BAR1 is 256 MiB (small)");
	assert_int_equal(r.res[0].nev, 5);
	assert_int_equal(r.res[1].nev, 0);
	report_free(&r);
	assert_int_equal(r.nres, 0);
}

static void test_names(void **state)
{
	assert_string_equal(status_name(ST_PASS), "PASS");
	assert_string_equal(status_name(ST_BLOCKED), "BLOCKED");
	assert_string_equal(status_name(ST_ERROR), "ERROR");
	assert_string_equal(status_name((enum gdr_status)99), "?");
	assert_string_equal(layer_name(L_REGISTRATION), "reg");
	assert_string_equal(layer_name(L_COUNT), "?");
	assert_string_equal(path_name(PATH_DMABUF), "dmabuf");
	assert_string_equal(path_name(PATH_PEERMEM), "peermem");
	assert_string_equal(path_name(PATH_COUNT), "?");
	assert_string_equal(verdict_name(V_UNKNOWN), "UNKNOWN");
	assert_string_equal(subject_kind_name(SUBJ_PAIR), "pair");
	assert_string_equal(subject_kind_name((enum subject_kind)7), "?");
}

/* --- remedies ------------------------------------------------------------ */

static void test_remedies_grouped(void **state)
{
	struct report r;
	struct remedy *v;
	size_t n;

	report_init(&r);
	report_subject(&r, SUBJ_HOST, "host", "node", NULL, -1);
	report_subject(&r, SUBJ_GPU, "GPU0", "", NULL, -1);
	report_subject(&r, SUBJ_GPU, "GPU1", "", NULL, -1);

	/* 0: a WARN first in chain order, still listed after BLOCKED. */
	result_remedy(report_add(&r, gate_find("host.memlock"), L_HOST, P_BOTH, 0, ST_WARN,
				 "LOW", "low"), "raise memlock");
	result_remedy(report_add(&r, gate_find("gpu.gdr_attr"), L_GPU, P_BOTH, 1, ST_BLOCKED,
				 "NO", "no"), "update driver");
	/* Same gate, other text: its own entry. */
	result_remedy(report_add(&r, gate_find("gpu.gdr_attr"), L_GPU, P_BOTH, 2, ST_BLOCKED,
				 "NO", "no"), "enable IOMMU passthrough");
	/* Same gate and text: grouped with GPU0. */
	result_remedy(report_add(&r, gate_find("gpu.gdr_attr"), L_GPU, P_BOTH, 2, ST_BLOCKED,
				 "NO", "no"), "update driver");
	/* Same text, other gate: its own entry. */
	result_remedy(report_add(&r, gate_find("platform.bar1"), L_PLATFORM, P_BOTH, 1,
				 ST_BLOCKED, "NO", "no"), "update driver");
	/* No advice, or advice on a PASS/SKIP/ERROR: not listed. */
	report_add(&r, gate_find("nic.port"), L_NIC, P_BOTH, 0, ST_BLOCKED, "DOWN", "down");
	result_remedy(report_add(&r, gate_find("nic.gid"), L_NIC, P_BOTH, 0, ST_PASS,
				 "OK", "ok"), "nothing to do");
	result_remedy(report_add(&r, gate_find("gpu.cuinit"), L_GPU, P_BOTH, 0, ST_ERROR,
				 "ERR", "err"), "reboot");
	result_remedy(report_add(&r, gate_find("mech.gdrcopy"), L_MECHANISM, P_NONE, 0,
				 ST_SKIP, "SKIP", "skip"), "install gdrcopy");

	n = report_remedies(&r, &v);
	assert_int_equal(n, 4);
	assert_string_equal(v[0].gate, "gpu.gdr_attr");
	assert_string_equal(v[0].text, "update driver");
	assert_int_equal(v[0].status, ST_BLOCKED);
	assert_int_equal(v[0].nsubjects, 2);
	assert_int_equal(v[0].subjects[0], 1);
	assert_int_equal(v[0].subjects[1], 2);
	assert_string_equal(v[1].text, "enable IOMMU passthrough");
	assert_int_equal(v[1].nsubjects, 1);
	assert_int_equal(v[1].subjects[0], 2);
	assert_string_equal(v[2].gate, "platform.bar1");
	assert_string_equal(v[2].text, "update driver");
	assert_int_equal(v[2].nsubjects, 1);
	assert_string_equal(v[3].gate, "host.memlock");
	assert_int_equal(v[3].status, ST_WARN);
	assert_int_equal(v[3].subjects[0], 0);
	report_remedies_free(v, n);
	report_free(&r);
}

static void test_remedies_empty(void **state)
{
	static struct remedy sentinel;
	struct remedy *v = &sentinel;
	struct report r;

	report_init(&r);
	report_subject(&r, SUBJ_HOST, "host", "node", NULL, -1);
	report_add(&r, gate_find("host.kernel"), L_HOST, P_DMABUF, 0, ST_BLOCKED, "OLD",
		   "old kernel");
	assert_int_equal(report_remedies(&r, &v), 0);
	assert_null(v);
	report_remedies_free(v, 0);
	report_free(&r);
}

/* --- a small report for the renderers ------------------------------------ */

struct fixture {
	struct report r;
	int blocked;	/* index of the BLOCKED result */
};

static int fixture_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct report *r;
	struct result *res;
	int gpu, nic;

	if (!f)
		return -1;
	r = &f->r;
	report_init(r);
	snprintf(r->meta.tool_version, sizeof(r->meta.tool_version), "0.1.0");
	snprintf(r->meta.hostname, sizeof(r->meta.hostname), "h200-node");
	snprintf(r->meta.kernel, sizeof(r->meta.kernel), "6.18.44-fc-v657-gpu");
	snprintf(r->meta.sysroot, sizeof(r->meta.sysroot), "/");
	snprintf(r->meta.generated_at, sizeof(r->meta.generated_at),
		 "2025-01-01T00:00:00Z");
	r->meta.require = "any";
	r->meta.total_ms = 12.34567;

	report_subject(r, SUBJ_HOST, "host", "h200-node", NULL, -1);
	gpu = report_subject(r, SUBJ_GPU, "GPU0", "NVIDIA H200 (0000:18:00.0)",
			     "0000:18:00.0", -1);
	nic = report_subject(r, SUBJ_NIC, "mlx5_0", "mlx5_0 (0000:19:00.0)",
			     "0000:19:00.0", -1);
	report_subject(r, SUBJ_PORT, "mlx5_0/1", "mlx5_0 port 1",
		       "0000:19:00.0", nic);

	res = report_add(r, gate_find("host.kernel"), L_HOST, P_DMABUF, 0, ST_PASS,
			 "KERNEL_DMABUF_OK", "kernel 6.18.44 has dma-buf MRs");
	res->duration_ms = 1.23456;
	ev_str(res, "release", "6.18.44-fc-v657-gpu");
	ev_int(res, "major", 6);
	res = report_add(r, gate_find("platform.bar1"), L_PLATFORM, P_BOTH, gpu, ST_PASS,
			 "BAR1_OK", "BAR1 is 256 GiB");
	ev_int(res, "bar1_bytes", 256LL << 30);
	ev_bool(res, "resizable", true);
	ev_bool(res, "small", false);
	res = report_add(r, gate_find("mech.peermem"), L_MECHANISM, P_PEERMEM, 0,
			 ST_BLOCKED, "PEERMEM_NOT_LOADED",
			 "nvidia_peermem is not loaded");
	result_remedy(res, "modprobe nvidia-peermem");
	f->blocked = (int)r->nres - 1;
	report_add(r, gate_find("mech.gdrcopy"), L_MECHANISM, P_NONE, 0, ST_SKIP,
		   "NO_GDRDRV", "no /dev/gdrdrv");
	verdict_fold(r, REQUIRE_ANY);
	*state = f;
	return 0;
}

static int fixture_teardown(void **state)
{
	struct fixture *f = *state;

	report_free(&f->r);
	free(f);
	return 0;
}

/* Render into memory; the caller frees the text. */
static char *render(const struct report *r, bool json, bool color,
		    bool verbose, int *ret)
{
	struct render_opts o = { .color = color, .verbose = verbose };
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	*ret = json ? render_json(r, m) : render_text(r, &o, m);
	assert_int_equal(fclose(m), 0);
	assert_non_null(buf);
	return buf;
}

static json_t *render_parse(const struct report *r)
{
	json_error_t err;
	json_t *root;
	char *text;
	int ret;

	text = render(r, true, false, false, &ret);
	assert_int_equal(ret, 0);
	root = json_loads(text, 0, &err);
	if (!root)
		fail_msg("JSON does not parse: %s (line %d)", err.text, err.line);
	free(text);
	return root;
}

static const char *jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	assert_non_null(v);
	assert_true(json_is_string(v));
	return json_string_value(v);
}

/* --- render_json --------------------------------------------------------- */

static void test_json_top(void **state)
{
	struct fixture *f = *state;
	json_t *root = render_parse(&f->r), *v;

	assert_string_equal(jstr(root, "schema_version"), "2.6");
	/* The inventory: what was not read is null, not "". */
	v = json_object_get(root, "inventory");
	assert_true(json_is_object(v));
	assert_true(json_is_null(json_object_get(v, "nvidia_driver")));
	assert_true(json_is_array(json_object_get(v, "nic_kinds")));
	assert_string_equal(jstr(json_object_get(root, "tool"), "version"),
			    "0.1.0");
	assert_string_equal(jstr(root, "require"), "any");
	assert_string_equal(jstr(json_object_get(root, "host"), "kernel"),
			    "6.18.44-fc-v657-gpu");
	v = json_object_get(root, "verdict");
	assert_string_equal(jstr(v, "status"), "READY");
	assert_true(json_is_integer(json_object_get(v, "exit_code")));
	assert_int_equal(json_integer_value(json_object_get(v, "exit_code")), 0);
	v = json_object_get(root, "duration_ms");
	assert_true(json_is_real(v));
	assert_true(json_real_value(v) > 12.3455 &&
		    json_real_value(v) < 12.3465);
	json_decref(root);
}

static void test_json_subjects(void **state)
{
	struct fixture *f = *state;
	json_t *root = render_parse(&f->r);
	json_t *a = json_object_get(root, "subjects");

	assert_true(json_is_array(a));
	assert_int_equal(json_array_size(a), 4);
	assert_string_equal(jstr(json_array_get(a, 3), "kind"), "port");
	assert_string_equal(jstr(json_array_get(a, 3), "parent"), "mlx5_0");
	assert_true(json_is_null(json_object_get(json_array_get(a, 2), "parent")));
	/* The host has no PCI address: null, not "". */
	assert_true(json_is_null(json_object_get(json_array_get(a, 0), "pci")));
	json_decref(root);
}

static void test_json_results(void **state)
{
	static const char *const gates[] = {
		"host.kernel", "platform.bar1", "mech.peermem", "mech.gdrcopy",
	};
	struct fixture *f = *state;
	json_t *root = render_parse(&f->r);
	json_t *a = json_object_get(root, "results"), *res, *ev, *v;

	assert_true(json_is_array(a));
	assert_int_equal(json_array_size(a), 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(jstr(json_array_get(a, i), "gate"), gates[i]);

	res = json_array_get(a, 0);
	assert_string_equal(jstr(res, "layer"), "host");
	assert_string_equal(jstr(res, "subject"), "host");
	assert_string_equal(jstr(res, "status"), "PASS");
	assert_string_equal(jstr(res, "reason_code"), "KERNEL_DMABUF_OK");
	/* Present, and null. */
	v = json_object_get(res, "remediation");
	assert_non_null(v);
	assert_true(json_is_null(v));
	v = json_object_get(res, "duration_ms");
	assert_true(json_is_real(v));
	assert_true(json_real_value(v) > 1.2345 && json_real_value(v) < 1.2355);
	ev = json_object_get(res, "evidence");
	assert_string_equal(jstr(ev, "release"), "6.18.44-fc-v657-gpu");
	assert_true(json_is_integer(json_object_get(ev, "major")));

	ev = json_object_get(json_array_get(a, 1), "evidence");
	v = json_object_get(ev, "bar1_bytes");
	assert_true(json_is_integer(v));
	assert_true(json_integer_value(v) == 256LL << 30);
	assert_true(json_is_true(json_object_get(ev, "resizable")));
	assert_true(json_is_false(json_object_get(ev, "small")));

	res = json_array_get(a, 2);
	assert_string_equal(jstr(res, "subject"), "host");
	assert_string_equal(jstr(res, "remediation"), "modprobe nvidia-peermem");
	assert_int_equal(json_object_size(json_object_get(res, "evidence")), 0);
	json_decref(root);
}

static void test_json_paths(void **state)
{
	struct fixture *f = *state;
	json_t *root = render_parse(&f->r);
	json_t *paths = json_object_get(root, "paths"), *p, *b;

	p = json_object_get(paths, "dmabuf");
	assert_string_equal(jstr(p, "verdict"), "READY");
	assert_true(json_is_null(json_object_get(p, "gate")));
	assert_int_equal(json_array_size(json_object_get(p, "blockers")), 0);
	p = json_object_get(paths, "peermem");
	assert_string_equal(jstr(p, "verdict"), "BLOCKED");
	assert_string_equal(jstr(p, "gate"), "mech.peermem");
	assert_string_equal(jstr(p, "subject"), "host");
	assert_string_equal(jstr(p, "reason_code"), "PEERMEM_NOT_LOADED");
	b = json_object_get(p, "blockers");
	assert_int_equal(json_array_size(b), 1);
	assert_string_equal(jstr(json_array_get(b, 0), "gate"), "mech.peermem");
	b = json_object_get(root, "remediations");
	assert_int_equal(json_array_size(b), 1);
	assert_string_equal(jstr(json_array_get(b, 0), "text"),
			    "modprobe nvidia-peermem");
	assert_string_equal(json_string_value(json_array_get(json_object_get(
		json_array_get(b, 0), "subjects"), 0)), "host");
	json_decref(root);
}

static void test_json_invalid_utf8(void **state)
{
	struct fixture *f = *state;
	struct result *res;
	json_t *root, *a, *ev;

	/* Bytes as a broken sysfs file or driver string might give them. */
	res = report_add(&f->r, gate_find("nic.port"), L_NIC, P_BOTH, 3, ST_BLOCKED,
			 "PORT_DOWN", "state \xff\xfe %s", "DOWN");
	ev_str(res, "state", "4: \xc3\x28");
	ev_int(res, "num", 1);
	result_remedy(res, "check the cable \xe2\x82");
	report_subject(&f->r, SUBJ_GPU, "GPU\xff", "bad \xc0\xaf", NULL, -1);
	/* The only port is now closed: the summary carries the bad reason. */
	verdict_fold(&f->r, REQUIRE_ANY);
	assert_int_equal(f->r.path[PATH_DMABUF].verdict, V_BLOCKED);

	root = render_parse(&f->r);
	a = json_object_get(root, "results");
	assert_int_equal(json_array_size(a), 5);
	assert_string_equal(jstr(json_array_get(a, 4), "gate"), "nic.port");
	assert_string_not_equal(jstr(json_array_get(a, 4), "reason"), "");
	ev = json_object_get(json_array_get(a, 4), "evidence");
	assert_non_null(jstr(ev, "state"));
	/* The good evidence next to it survives, typed. */
	assert_true(json_is_integer(json_object_get(ev, "num")));
	assert_string_equal(jstr(json_object_get(json_object_get(root, "paths"),
						 "dmabuf"), "verdict"), "BLOCKED");
	assert_int_equal(json_array_size(json_object_get(root, "subjects")), 5);
	a = json_object_get(root, "remediations");
	assert_int_equal(json_array_size(a), 2);
	assert_string_equal(jstr(json_array_get(a, 1), "gate"), "nic.port");
	json_decref(root);
}

/* --- render_text --------------------------------------------------------- */

static void test_text_plain(void **state)
{
	struct fixture *f = *state;
	int ret;
	char *t = render(&f->r, false, false, false, &ret);

	assert_int_equal(ret, 0);
	assert_null(strchr(t, '\033'));
	assert_non_null(strstr(t, "gdrcheck 0.1.0: GPUDirect RDMA readiness of "
			       "h200-node (kernel 6.18.44-fc-v657-gpu)"));
	assert_non_null(strstr(t, "\n  dmabuf   READY: "));
	assert_non_null(strstr(t, "\n  peermem  BLOCKED at mech.peermem (host): "
			       "nvidia_peermem is not loaded\n"));
	assert_non_null(strstr(t, "\n  overall  READY (--require any, exit 0)\n"));
	/*
	 * READY by DMA-BUF under --require any: the peermem fix is optional,
	 * nothing is "to fix", and peermem's BLOCKED is not a problem.
	 */
	assert_non_null(strstr(t, "\noptional (not needed for the verdict)\n"
			       "  1. [BLOCKED] mech.peermem (host): "
			       "modprobe nvidia-peermem"));
	assert_null(strstr(t, "\nto fix\n"));
	assert_null(strstr(t, "  BLOCKED  mech.peermem"));
	/* Summary first: the verdict comes before the layers and problems. */
	assert_true(strstr(t, "\nverdict\n") < strstr(t, "\nlayers\n"));
	assert_true(strstr(t, "\nlayers\n") < strstr(t, "\nproblems\n"));
	/* Sysroot "/" is not worth a line; ports are not listed as subjects. */
	assert_null(strstr(t, "sysroot"));
	assert_non_null(strstr(t, "\nGPUs     GPU0"));
	assert_null(strstr(t, "mlx5_0 port 1"));
	/* No PASS line per item without -v. */
	assert_null(strstr(t, "  PASS     "));
	/* Evidence only when verbose. */
	assert_null(strstr(t, "bar1_bytes="));
	free(t);
}

static void test_text_verbose(void **state)
{
	struct fixture *f = *state;
	int ret;
	char *t = render(&f->r, false, false, true, &ret);

	assert_int_equal(ret, 0);
	assert_non_null(strstr(t, "bar1_bytes=274877906944"));
	assert_non_null(strstr(t, "resizable=yes"));
	assert_non_null(strstr(t, "small=no"));
	assert_non_null(strstr(t, "release=6.18.44-fc-v657-gpu"));
	free(t);
}

static void test_text_color(void **state)
{
	struct fixture *f = *state;
	int ret;
	char *t = render(&f->r, false, true, false, &ret);

	assert_int_equal(ret, 0);
	assert_non_null(strchr(t, '\033'));
	/* Only the verdict word is coloured; the summary follows plain. */
	assert_non_null(strstr(t, "\033[1;32mREADY\033[0m: "));
	assert_non_null(strstr(t, "\033[1;31mBLOCKED\033[0m at mech.peermem"));
	assert_non_null(strstr(t, "\033[1;32mREADY\033[0m (--require any, exit 0)"));
	free(t);
}

/* Subject lists: runs of numbers compress, gaps and other names do not. */
static void test_text_subject_list(void **state)
{
	struct report r;
	int g[8], n[4], p[4], pairs[6], k = 0;
	char buf[256], small[12];

	(void)state;
	report_init(&r);
	report_subject(&r, SUBJ_HOST, "host", "host", "", -1);
	for (int i = 0; i < 8; i++) {
		char id[16];

		snprintf(id, sizeof(id), "GPU%d", i);
		g[i] = report_subject(&r, SUBJ_GPU, id, id, "", -1);
	}
	/* Natural order: mlx5_10 after mlx5_2, whatever the input order. */
	n[0] = report_subject(&r, SUBJ_NIC, "mlx5_10", "x", "", -1);
	n[1] = report_subject(&r, SUBJ_NIC, "mlx5_2", "x", "", -1);
	n[2] = report_subject(&r, SUBJ_NIC, "mlx5_11", "x", "", -1);
	n[3] = report_subject(&r, SUBJ_NIC, "mlx5_3", "x", "", -1);
	for (int i = 0; i < 4; i++) {
		char id[96];

		snprintf(id, sizeof(id), "%s/1", r.subj[n[i]].id);
		p[i] = report_subject(&r, SUBJ_PORT, id, id, "", n[i]);
	}
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 2; j++) {
			char id[176];
			int s;

			snprintf(id, sizeof(id), "%s~%s", r.subj[g[i]].id,
				 r.subj[n[j == 0 ? 1 : 3]].id);
			s = report_subject(&r, SUBJ_PAIR, id, id, "", -1);
			r.subj[s].pair_gpu = g[i];
			r.subj[s].pair_nic = n[j == 0 ? 1 : 3];
			pairs[k++] = s;
		}
	text_subject_list(&r, g, 8, buf, sizeof(buf));
	assert_string_equal(buf, "GPU0-7");
	g[3] = g[7];
	text_subject_list(&r, g, 4, buf, sizeof(buf));
	assert_string_equal(buf, "GPU0-2,GPU7");
	text_subject_list(&r, n, 4, buf, sizeof(buf));
	assert_string_equal(buf, "mlx5_2-3,mlx5_10-11");
	text_subject_list(&r, p, 4, buf, sizeof(buf));
	assert_string_equal(buf, "mlx5_2-3/1,mlx5_10-11/1");
	text_subject_list(&r, pairs, 6, buf, sizeof(buf));
	assert_string_equal(buf, "GPU0-2 x mlx5_2-3");
	/* GPU2 with one NIC only: its own group. */
	text_subject_list(&r, pairs, 5, buf, sizeof(buf));
	assert_string_equal(buf, "GPU0-1 x mlx5_2-3, GPU2 x mlx5_2");
	/* Cut with "..." rather than overflowing. */
	text_subject_list(&r, pairs, 5, small, sizeof(small));
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_string_equal(small + sizeof(small) - 4, "...");
	assert_true(text_natcmp("mlx5_2", "mlx5_10") < 0);
	assert_true(text_natcmp("GPU10", "GPU9") > 0);
	report_free(&r);
}

/* A full disk must show in the return value, not vanish. */
static void test_render_write_failure(void **state)
{
	struct fixture *f = *state;
	struct render_opts o = { .color = false, .verbose = true };
	FILE *full = fopen("/dev/full", "w");

	if (!full)
		skip();
	setvbuf(full, NULL, _IONBF, 0);
	assert_true(render_text(&f->r, &o, full) < 0);
	clearerr(full);
	assert_true(render_json(&f->r, full) < 0);
	fclose(full);
}

/* --- foreign bytes: the one rule, unique ids, every renderer -------------- */

static char *clean(const char *s)
{
	size_t n = report_clean(NULL, 0, s) + 1;
	char *p = malloc(n);

	assert_non_null(p);
	assert_int_equal(report_clean(p, n, s), n - 1);
	return p;
}

static void test_clean_rule(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "mlx5_0", "mlx5_0" },
		{ "a\033[2Jb", "a\\x1B[2Jb" },			/* C0 */
		{ "tab\there\nnl\r", "tab\\x09here\\x0Anl\\x0D" },
		{ "del\x7f", "del\\x7F" },			/* DEL */
		{ "csi\xc2\x9b" "2J", "csi\\xC2\\x9B2J" },	/* C1 */
		{ "caf\xc3\xa9 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xf0\x9f\x98\x80" },
		{ "nbsp\xc2\xa0", "nbsp\xc2\xa0" },		/* U+00A0 is text */
		{ "\xef\xbf\xbf\xef\xbf\xbe", "\\xEF\\xBF\\xBF\\xEF\\xBF\\xBE" },
		{ "over\xc0\xaf", "over\\xC0\\xAF" },		/* overlong */
		{ "sur\xed\xa0\x80", "sur\\xED\\xA0\\x80" },	/* surrogate */
		{ "cut\xe2\x82", "cut\\xE2\\x82" },		/* truncated */
		{ "big\xf4\x90\x80\x80", "big\\xF4\\x90\\x80\\x80" },
		{ "<&>\"'\\", "<&>\"'\\" },			/* not control */
	};
	char buf[8];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = clean(cases[i].in);

		assert_string_equal(got, cases[i].out);
		assert_true(report_is_clean(got));
		assert_int_equal(report_is_clean(cases[i].in),
				 !strcmp(cases[i].in, cases[i].out));
		free(got);
	}
	/* Cut only between whole sequences and escapes. */
	assert_int_equal(report_clean(buf, 6, "ab\001cd"), 8);
	assert_string_equal(buf, "ab");
	assert_int_equal(report_clean(buf, 3, "a\xc3\xa9"), 3);
	assert_string_equal(buf, "a");
	assert_int_equal(report_clean(buf, 4, "a\xc3\xa9"), 3);
	assert_string_equal(buf, "a\xc3\xa9");
	assert_int_equal(report_clean(buf, 1, "xyz"), 3);
	assert_string_equal(buf, "");
}

/* Every string the model stores has passed the rule, whatever made it. */
static void test_model_cleans(void **state)
{
	struct report r;
	struct result *res;
	int s;

	report_init(&r);
	s = report_subject(&r, SUBJ_NIC, "nic\033]0;x\007", "lbl\xff\x1b[2J",
			   "0000:\x01", -1);
	res = report_add(&r, gate_find("nic.port"), L_NIC, P_BOTH, s, ST_BLOCKED,
			 "PORT_DOWN", "state %s", "\033[2J\xc2\x85");
	result_remedy(res, "%s", "fix \x7f\xfe");
	ev_str(res, "fw", "28.\033[5m%d", 39);
	assert_string_equal(r.subj[s].id, "nic\\x1B]0;x\\x07");
	assert_string_equal(r.subj[s].label, "lbl\\xFF\\x1B[2J");
	assert_string_equal(r.subj[s].pci, "0000:\\x01");
	assert_string_equal(res->reason, "state \\x1B[2J\\xC2\\x85");
	assert_string_equal(res->remediation, "fix \\x7F\\xFE");
	assert_string_equal(ev_find_str(res, "fw"), "28.\\x1B[5m39");
	report_free(&r);
}

/* Distinct subjects never share an id, whatever cleaning or cutting did. */
static void test_subject_ids_unique(void **state)
{
	char longname[3][120];
	struct report r;
	int a, b, c, d, l[3];

	report_init(&r);
	a = report_subject(&r, SUBJ_NIC, "dup\001", NULL, NULL, -1);
	b = report_subject(&r, SUBJ_NIC, "dup\\x01", NULL, NULL, -1);
	c = report_subject(&r, SUBJ_NIC, "dup\\x01", NULL, NULL, -1);
	d = report_subject(&r, SUBJ_NIC, "dup\\x01#2", NULL, NULL, -1);
	assert_string_equal(r.subj[a].id, "dup\\x01");
	assert_string_equal(r.subj[b].id, "dup\\x01#2");
	assert_string_equal(r.subj[c].id, "dup\\x01#3");
	assert_string_equal(r.subj[d].id, "dup\\x01#2#2");
	for (int i = 0; i < 3; i++) {
		/* Same 100 bytes, then a different tail: cut at 79. */
		memset(longname[i], 'n', 100);
		snprintf(longname[i] + 100, 20, "tail%d", i);
		l[i] = report_subject(&r, SUBJ_PAIR, longname[i], NULL, NULL, -1);
		assert_true(strlen(r.subj[l[i]].id) < sizeof(r.subj[0].id));
	}
	for (size_t i = 0; i < r.nsubj; i++)
		for (size_t j = i + 1; j < r.nsubj; j++)
			assert_string_not_equal(r.subj[i].id, r.subj[j].id);
	/* An escape is never cut in two to make room for the suffix. */
	for (int i = 0; i < 40; i++)
		report_subject(&r, SUBJ_NIC, "\033\033\033\033\033\033\033\033"
			       "\033\033\033\033\033\033\033\033\033\033\033\033",
			       NULL, NULL, -1);
	for (size_t i = 0; i < r.nsubj; i++) {
		const char *id = r.subj[i].id;
		const char *hash = strrchr(id, '#');

		assert_true(report_is_clean(id));
		if (id[0] == '\\')
			assert_int_equal((hash - id) % 4, 0);
		for (size_t j = i + 1; j < r.nsubj; j++)
			assert_string_not_equal(id, r.subj[j].id);
	}
	report_free(&r);
}

static char *render_fmt(const struct report *r,
			int (*fn)(const struct report *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	assert_int_equal(fn(r, m), 0);
	assert_int_equal(fclose(m), 0);
	assert_non_null(buf);
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Valid UTF-8 with no control byte but the line breaks. */
static void assert_clean_lines(const char *text)
{
	char *copy = strdup(text);

	assert_non_null(copy);
	for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n"))
		if (!report_is_clean(line))
			fail_msg("unclean line: %s", line);
	free(copy);
}

/* JUnit fails only what fails the policy. */
/* Distinct gates among the results: format 3 has one testcase each. */
static size_t gate_count(const struct report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nres; i++) {
		size_t k;

		for (k = 0; k < i && r->res[k].gate != r->res[i].gate; k++)
			;
		n += k == i;
	}
	return n;
}

static void test_junit_policy(void **state)
{
	struct fixture *f = *state;
	struct report *r = &f->r;
	char *x;

	/* --require any, dmabuf READY: exit 0, zero failures. */
	policy_overall(r, REQUIRE_ANY, false);
	assert_int_equal(r->exit_code, 0);
	x = render_fmt(r, render_junit);
	assert_int_equal(count(x, "<failure"), 0);
	assert_int_equal(count(x, "<error"), 0);
	/* A BLOCKED the policy does not need is skipped, not green. */
	assert_non_null(strstr(x, "name=\"mech.peermem\" time=\"0.000000\">"
			       "<skipped message=\"not needed by the policy: "
			       "BLOCKED on host: "));
	assert_non_null(strstr(x, "<system-out>BLOCKED PEERMEM_NOT_LOADED on "
			       "host: "));
	assert_non_null(strstr(x, "name=\"overall\"><system-out>READY"));
	assert_non_null(strstr(x, "no /dev/gdrdrv\"/>"));
	assert_non_null(strstr(x, "failures=\"0\" errors=\"0\" skipped=\"2\""));
	/* One testcase per gate, three paths (dmabuf, peermem, nccl), overall. */
	assert_int_equal(count(x, "<testcase "), gate_count(r) + PATH_COUNT + 1);
	free(x);

	/* --require peermem: the peermem gate and the verdict fail. */
	r->meta.require = "peermem";
	policy_overall(r, REQUIRE_PEERMEM, false);
	assert_int_equal(r->exit_code, 1);
	x = render_fmt(r, render_junit);
	assert_int_equal(count(x, "<failure"), 3);	/* gate, path, overall */
	assert_non_null(strstr(x, "name=\"mech.peermem\" time=\"0.000000\">"
			       "<failure type=\"PEERMEM_NOT_LOADED\""));
	assert_non_null(strstr(x, "name=\"peermem\"><failure type=\"BLOCKED\""));
	assert_non_null(strstr(x, "name=\"dmabuf\"><system-out>"));
	assert_non_null(strstr(x, "name=\"overall\"><failure type=\"BLOCKED\""));
	free(x);

	/* --warn-fails with dmabuf READY: the WARN fails, the BLOCKED not. */
	report_add(r, gate_find("topo.nccl"), L_TOPOLOGY, P_BOTH, 1, ST_WARN,
		   "NCCL_GDR_OFF", "NCCL would stage through the host");
	r->meta.require = "any";
	r->meta.policy.warn_fails = true;
	policy_overall(r, REQUIRE_ANY, true);
	assert_int_equal(r->exit_code, 1);
	x = render_fmt(r, render_junit);
	assert_int_equal(count(x, "<failure"), 2);	/* the WARN, overall */
	assert_non_null(strstr(x, "<failure type=\"NCCL_GDR_OFF\""));
	assert_null(strstr(x, "<failure type=\"PEERMEM_NOT_LOADED\""));
	free(x);
}

/* Well-formed for any input, attributes included. */
static void test_junit_hostile(void **state)
{
	struct fixture *f = *state;
	struct report *r = &f->r;
	char *x;

	/* meta strings do not pass through the model: the renderer's rule. */
	snprintf(r->meta.hostname, sizeof(r->meta.hostname),
		 "h\001<\"'&>\xff\xc2\x9b]]>");
	report_add(r, gate_find("nic.port"), L_NIC, P_BOTH, 3, ST_SKIP, "PORT_UNREADABLE",
		   "<![CDATA[\033[2J\"]]> &amp; \xef\xbf\xbf");
	x = render_fmt(r, render_junit);
	assert_clean_lines(x);
	assert_non_null(strstr(x, "hostname=\"h\\x01&lt;&quot;&apos;&amp;&gt;"
			       "\\xFF\\xC2\\x9B]]&gt;\""));
	assert_non_null(strstr(x, ": &lt;![CDATA[\\x1B[2J"
			       "&quot;]]&gt; &amp;amp; \\xEF\\xBF\\xBF\"/>"));
	free(x);
}

/* Bounded series, pair results counted, label values escaped. */
static void test_prometheus(void **state)
{
	struct fixture *f = *state;
	struct report *r = &f->r;
	int pair[3];
	char *x;

	for (int i = 0; i < 3; i++) {
		char id[24];

		snprintf(id, sizeof(id), "GPU0~p%d", i);
		pair[i] = report_subject(r, SUBJ_PAIR, id, NULL, NULL, -1);
		report_add(r, gate_find("topo.path"), L_TOPOLOGY, P_BOTH, pair[i],
			   i ? ST_PASS : ST_WARN, "PATH_PIX", "PIX");
	}
	report_subject(r, SUBJ_NIC, "q\"b\\s\001", NULL, NULL, -1);
	report_add(r, gate_find("nic.uverbs"), L_NIC, P_BOTH, (int)r->nsubj - 1, ST_PASS,
		   "UVERBS_OK", "ok");
	policy_overall(r, REQUIRE_ANY, false);
	x = render_fmt(r, render_prometheus);
	assert_clean_lines(x);
	assert_null(strstr(x, "GPU0~p"));		/* no series per pair */
	/* Pairs: the worst status (WARN = 2) and the pairs with a problem. */
	assert_non_null(strstr(x, "gdrcheck_pair_status{gate=\"topo.path\","
			       "layer=\"topo\"} 2\n"));
	assert_non_null(strstr(x, "gdrcheck_pair_problems{gate=\"topo.path\","
			       "layer=\"topo\"} 1\n"));
	/* The status is the value (0 PASS); a PASS has no reason series. */
	assert_non_null(strstr(x, "subject=\"q\\\"b\\\\s\\\\x01\"} 0\n"));
	assert_null(strstr(x, "reason_code=\"UVERBS_OK\""));
	assert_non_null(strstr(x, "gdrcheck_path_status{path=\"peermem\"} 3\n"));
	assert_non_null(strstr(x, "gdrcheck_path_blocked_by{path=\"peermem\","
			       "gate=\"mech.peermem\",subject=\"host\","
			       "reason_code=\"PEERMEM_NOT_LOADED\"} 1\n"));
	assert_non_null(strstr(x, "gdrcheck_info{version=\"0.1.0\",require=\"any\","));
	assert_non_null(strstr(x, "gdrcheck_exit_code{require=\"any\"} 0\n"));
	/* Results of host, GPU, NIC: one series each. */
	assert_int_equal(count(x, "\ngdrcheck_gate_status{"), r->nres - 3);
	free(x);
}

/* Strings from the command line in the text report: no escape reaches it. */
static void test_text_hostile(void **state)
{
	struct fixture *f = *state;
	struct render_opts o = { .color = false, .verbose = true };
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	snprintf(f->r.meta.capture, sizeof(f->r.meta.capture),
		 "/tmp/\033[2J\033]0;x\007.tgz");
	snprintf(f->r.meta.policy.violations[0], 160, "cut \xe2\x82");
	f->r.meta.policy.nviolations = 1;
	assert_non_null(m);
	assert_int_equal(render_text(&f->r, &o, m), 0);
	fclose(m);
	assert_clean_lines(buf);
	assert_non_null(strstr(buf, "capture  /tmp/\\x1B[2J\\x1B]0;x\\x07.tgz"));
	assert_non_null(strstr(buf, "policy   cut \\xE2\\x82\n"));
	free(buf);
}

#define FIX_TEST(t) \
	cmocka_unit_test_setup_teardown(t, fixture_setup, fixture_teardown)

/*
 * Folding (core/fold.c): pair results of one gate that say the same but for
 * each pair's own names (id, GPU and NIC ids and PCI addresses, a cited
 * IOMMU group) are one JSON result with subjects and one -v line; a
 * different fact, another gate or a measurement stays apart.
 */
static void test_fold(void **state)
{
	struct report r;
	int gpu, nic[4], pair[4];
	json_t *root, *res, *subs;
	char *text;
	int ret;

	report_init(&r);
	gpu = report_subject(&r, SUBJ_GPU, "GPU0", "", "0000:05:00.0", -1);
	for (int i = 0; i < 4; i++) {
		char id[16], pci[16], pid[32];

		snprintf(id, sizeof(id), "mlx5_%d", i);
		snprintf(pci, sizeof(pci), "0000:0%d:00.0", 6 + i);
		nic[i] = report_subject(&r, SUBJ_NIC, id, "", pci, -1);
		snprintf(pid, sizeof(pid), "GPU0~%s", id);
		pair[i] = report_subject(&r, SUBJ_PAIR, pid, pid, NULL, -1);
		r.subj[pair[i]].pair_gpu = gpu;
		r.subj[pair[i]].pair_nic = nic[i];
		report_subject_iommu_group(&r, nic[i], i == 3 ? "7" : id + 5);
	}
	for (int i = 0; i < 4; i++) {
		struct result *x = report_add(&r, gate_find("platform.iommu_group"),
			L_PLATFORM, P_DMABUF, pair[i], ST_PASS, "G",
			"NIC %s (%s) in group %s", r.subj[nic[i]].id,
			r.subj[nic[i]].pci, r.subj[nic[i]].iommu_group);

		ev_str(x, "nic_group", "%s", r.subj[nic[i]].iommu_group);
		/* mlx5_2 otherwise: a fact of its own. */
		ev_int(x, "n", i == 2 ? 2 : 1);
	}
	/* Another gate, same words: never folded with the first. */
	report_add(&r, gate_find("topo.path"), L_TOPOLOGY, P_BOTH, pair[0],
		   ST_PASS, "G", "x");
	report_add(&r, gate_find("topo.path"), L_TOPOLOGY, P_BOTH, pair[1],
		   ST_PASS, "G", "x");
	/* Equal measurements by chance: never folded (not deterministic). */
	for (int i = 0; i < 2; i++)
		ev_real(report_add(&r, gate_find("reg.dmabuf"), L_REGISTRATION,
				   P_DMABUF, pair[i], ST_PASS, "G", "y"),
			"ms", 1.0);
	report_fold(&r);
	assert_int_equal(r.res[6].fold_n, 1);
	assert_int_equal(r.res[7].fold_rep, -1);
	assert_int_equal(r.res[0].fold_n, 3);		/* mlx5_0, 1, 3 */
	assert_int_equal(r.res[1].fold_rep, 0);
	assert_int_equal(r.res[2].fold_rep, -1);	/* 2.0 ms */
	assert_int_equal(r.res[3].fold_rep, 0);
	assert_int_equal(r.res[4].fold_n, 2);
	assert_int_equal(r.res[5].fold_rep, 4);

	root = render_parse(&r);
	res = json_object_get(root, "results");
	assert_int_equal(json_array_size(res), 5);
	subs = json_object_get(json_array_get(res, 0), "subjects");
	assert_int_equal(json_array_size(subs), 3);
	assert_string_equal(json_string_value(json_array_get(subs, 2)),
			    "GPU0~mlx5_3");
	assert_null(json_object_get(json_array_get(res, 1), "subjects"));
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(json_object_get(root, "subjects"), nic[3]),
		"iommu_group")), "7");
	json_decref(root);

	text = render(&r, false, false, true, &ret);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(text, "GPU0 x mlx5_0-1,mlx5_3"));
	assert_non_null(strstr(text, "GPU0 x mlx5_0-1  x"));
	free(text);
	report_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_subjects),
		cmocka_unit_test(test_add_records),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_remedies_grouped),
		cmocka_unit_test(test_remedies_empty),
		FIX_TEST(test_json_top),
		FIX_TEST(test_json_subjects),
		FIX_TEST(test_json_results),
		FIX_TEST(test_json_paths),
		FIX_TEST(test_json_invalid_utf8),
		FIX_TEST(test_text_plain),
		FIX_TEST(test_text_verbose),
		FIX_TEST(test_text_color),
		cmocka_unit_test(test_text_subject_list),
		FIX_TEST(test_render_write_failure),
		cmocka_unit_test(test_clean_rule),
		cmocka_unit_test(test_model_cleans),
		cmocka_unit_test(test_subject_ids_unique),
		FIX_TEST(test_junit_policy),
		FIX_TEST(test_junit_hostile),
		FIX_TEST(test_prometheus),
		FIX_TEST(test_text_hostile),
		cmocka_unit_test(test_fold),
	};

	/* make msan-check: the jansson readers cannot run under MSan. */
	if (getenv("CMOCKA_SKIP"))
		cmocka_set_skip_filter(getenv("CMOCKA_SKIP"));
	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
