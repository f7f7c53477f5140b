// SPDX-License-Identifier: MIT
/*
 * Unit tests for the capture's vendor facts (access/vendor_json.c): what
 * is encoded decodes to the same bytes, every field included; a document
 * that is not JSON, of another format or version, with a member missing,
 * of the wrong type or too long is refused with the member named, and
 * leaves nothing half-filled; the replay finds the file inside the sysroot.
 */
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "access/sysroot.h"
#include "access/vendor_json.h"

/* Room for one more NIC than recorded: verbs.count may not exceed them. */
static const struct vf_caps sample_caps = { .gpus = 4, .nics = 4, .pairs = 2 };

static void discard(struct vendor_facts *vf)
{
	if (vf)
		vendor_facts_free(vf);
	free(vf);
}

/* Two sets of facts hold the same values (where their arrays are aside). */
static void assert_facts_equal(const struct vendor_facts *a,
			       const struct vendor_facts *b)
{
	struct vendor_facts *x = malloc(sizeof(*x)), *y = malloc(sizeof(*y));

	assert_non_null(x);
	assert_non_null(y);
	/* A decoder sizes the arrays by what the document holds: the
	 * entries both have are equal, and every one recorded is there. */
#define SAME(arr, n, cap)						\
	do {								\
		int k = a->cap < b->cap ? a->cap : b->cap;		\
									\
		assert_true(vf_upto(n, a->cap) <= k);			\
		assert_memory_equal(a->arr, b->arr,			\
				    (size_t)k * sizeof(*a->arr));	\
	} while (0)
	SAME(cuda.gpus, a->cuda.gpus_recorded, cap.gpus);
	SAME(nvml.gpus, a->nvml.gpus_recorded, cap.gpus);
	SAME(reg.vmm, a->cap.gpus, cap.gpus);
	SAME(verbs.nics, a->verbs.count, cap.nics);
	SAME(reg.nics, a->reg.nnics, cap.nics);
	SAME(reg.pairs, a->reg.npairs, cap.pairs);
#undef SAME
	*x = *a;
	*y = *b;
	for (struct vendor_facts *v = x; v; v = v == x ? y : NULL) {
		memset(&v->cap, 0, sizeof(v->cap));
		v->arena_size = 0;
		v->arena = NULL;
		v->arena_shared = false;
		v->cuda.gpus = NULL;
		v->verbs.nics = NULL;
		v->nvml.gpus = NULL;
		v->reg.pairs = NULL;
		v->reg.nics = NULL;
		v->reg.vmm = NULL;
	}
	assert_memory_equal(x, y, sizeof(*x));
	free(x);
	free(y);
}

/* Facts touching every kind of field, counts within their arrays. */
static struct vendor_facts *sample(void)
{
	struct vendor_facts *vf = calloc(1, sizeof(*vf));
	struct cuda_gpu *g;
	struct reg_pair *p;

	assert_non_null(vf);
	assert_int_equal(vendor_facts_alloc(vf, &sample_caps, false), 0);
	vf->stage[WSTAGE_CUDA].state = STAGE_DONE;
	vf->stage[WSTAGE_CUDA].seconds = 0.123456789012345;
	vf->stage[WSTAGE_CUDA].pid = 4242;
	vf->stage[WSTAGE_VERBS].state = STAGE_TIMEOUT;
	snprintf(vf->stage[WSTAGE_VERBS].call, VF_NAME, "ibv_open_device");
	/* A library's output: bytes as they are, not UTF-8, with controls. */
	snprintf(vf->stage[WSTAGE_VERBS].output, VF_OUTPUT, "warn\xff\xfe\n\t\x01");
	vf->stage[WSTAGE_VERBS].output_bytes = ULLONG_MAX;
	vf->stage[WSTAGE_VERBS].output_truncated = true;
	vf->stage[WSTAGE_REGISTRATION].started_ms = -1e300;
	vf->cuda.lib.attempted = vf->cuda.lib.loaded = true;
	snprintf(vf->cuda.lib.path, VF_TEXT, "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
	vf->cuda.driver_version = 12080;
	vf->cuda.count = 2;
	vf->cuda.gpus_recorded = 2;
	g = &vf->cuda.gpus[1];
	g->ordinal = 1;
	snprintf(g->name, VF_NAME, "NVIDIA H200 \xc3\xa9");
	snprintf(g->pci, sizeof(g->pci), "0000:18:00.0");
	g->total_mem = 150754820096ULL;
	g->attr_gdr = CU_ATTR_UNKNOWN;
	g->attr_unanswered = UINT_MAX;
	g->fd_size = LLONG_MIN;
	g->export_call.called = true;
	g->export_call.rc = 801;
	snprintf(g->export_call.name, sizeof(g->export_call.name),
		 "CUDA_ERROR_NOT_SUPPORTED");
	vf->verbs.lib.attempted = true;
	snprintf(vf->verbs.lib.error, VF_TEXT, "libibverbs.so.1: \"cannot\" open");
	vf->verbs.count = 3;
	snprintf(vf->verbs.nics[2].name, 64, "mlx5_2");
	vf->verbs.nics[2].probe_errno = 95;
	vf->reg.ran = true;
	vf->reg.npairs = 1;
	p = &vf->reg.pairs[0];
	p->gid_index = -1;
	snprintf(p->nic, sizeof(p->nic), "mlx5_2");
	p->dmabuf.ok = true;
	p->dmabuf.lkey = 0xdeadbeef;
	p->dp_dmabuf.gbps = 21.75;
	p->dp_dmabuf.bytes = 1ULL << 40;
	vf->reg.nnics = 1;
	snprintf(vf->reg.nics[0].g2g_error, 96, "WRITE: status 4");
	vf->reg.kmsg_count = 12;
	snprintf(vf->reg.kmsg[7], 160, "mlx5_core: DMA fault");
	return vf;
}

static void test_round_trip(void **state)
{
	struct vendor_facts *vf = sample(), *back = malloc(sizeof(*back));
	char err[256] = "";
	char *text = vendor_json_encode(vf);

	assert_non_null(text);
	assert_non_null(back);
	assert_non_null(strstr(text, "\"format\": \"" VENDOR_FACTS_FORMAT "\""));
	assert_int_equal(vendor_json_decode(text, strlen(text), back, err,
					    sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_facts_equal(vf, back);
	/* Encoding is deterministic: the same facts, the same document
	 * (a decoded copy records the capacities its arrays got). */
	{
		struct vendor_facts *third = malloc(sizeof(*third));
		char *again = vendor_json_encode(back), *thrice;

		assert_non_null(third);
		assert_int_equal(vendor_json_decode(again, strlen(again), third,
						    err, sizeof(err)), 0);
		thrice = vendor_json_encode(third);
		assert_string_equal(again, thrice);
		assert_non_null(strstr(text, "\"nics\": 4"));
		assert_non_null(strstr(again, "\"nics\": 3"));
		free(thrice);
		free(again);
		discard(third);
	}
	free(text);
	discard(back);
	discard(vf);
}

/*
 * compute_mode came after captures of version 1 were made: a GPU without
 * it decodes as "not asked" (unknown), not as 0 (DEFAULT); one with it
 * keeps its value.
 */
static void test_compute_mode_compat(void **state)
{
	struct vendor_facts *vf = sample(), *back = malloc(sizeof(*back));
	char err[256] = "";
	char *text, *old;
	json_t *doc, *gpus;

	assert_non_null(back);
	vf->cuda.gpus[0].attr_unanswered = 0;
	vf->cuda.gpus[1].compute_mode = 3;
	vf->cuda.gpus[1].attr_unanswered = 0;
	text = vendor_json_encode(vf);
	assert_non_null(text);
	doc = json_loads(text, 0, NULL);
	assert_non_null(doc);
	gpus = json_object_get(json_object_get(json_object_get(doc, "facts"),
					       "cuda"), "gpus");
	assert_int_equal(json_object_del(json_array_get(gpus, 0),
					 "compute_mode"), 0);
	old = json_dumps(doc, 0);
	assert_non_null(old);
	assert_int_equal(vendor_json_decode(old, strlen(old), back, err,
					    sizeof(err)), 0);
	assert_int_equal(back->cuda.gpus[0].compute_mode, CU_ATTR_UNKNOWN);
	assert_true(back->cuda.gpus[0].attr_unanswered &
		    CU_SLOT_BIT(CU_SLOT_COMPUTE_MODE));
	assert_int_equal(back->cuda.gpus[1].compute_mode, 3);
	assert_int_equal(back->cuda.gpus[1].attr_unanswered, 0);
	free(old);
	json_decref(doc);
	free(text);
	discard(back);
	discard(vf);
}

/* A count member larger (or smaller) than its array is refused. */
static void test_counts_checked(void **state)
{
	static const char *const bad[][2] = {
		{ "cuda", "gpus_recorded" }, { "verbs", "count" },
		{ "reg", "npairs" }, { "reg", "nnics" },
	};
	struct vendor_facts *vf = sample(), *back = malloc(sizeof(*back));
	char err[256], *text, *mod;

	assert_non_null(back);
	text = vendor_json_encode(vf);
	assert_non_null(text);
	assert_int_equal(vendor_json_decode(text, strlen(text), back, err,
					    sizeof(err)), 0);
	vendor_facts_free(back);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		for (int v = 0; v < 2; v++) {
			json_t *doc = json_loads(text, 0, NULL);
			json_t *o = json_object_get(json_object_get(doc,
					"facts"), bad[i][0]);

			assert_non_null(o);
			json_object_set_new(o, bad[i][1],
					    json_integer(v ? -1 : 100000));
			mod = json_dumps(doc, 0);
			assert_non_null(mod);
			err[0] = '\0';
			assert_int_equal(vendor_json_decode(mod, strlen(mod),
							    back, err,
							    sizeof(err)), -1);
			assert_non_null(strstr(err, bad[i][1]));
			free(mod);
			json_decref(doc);
		}
	}
	free(text);
	discard(back);
	discard(vf);
}

static void test_not_finite(void **state)
{
	struct vendor_facts *vf = calloc(1, sizeof(*vf)), *back = malloc(sizeof(*back));
	char err[256], *text;

	assert_non_null(vf);
	assert_non_null(back);
	vf->stage[0].seconds = NAN;
	text = vendor_json_encode(vf);
	assert_non_null(text);
	assert_int_equal(vendor_json_decode(text, strlen(text), back, err,
					    sizeof(err)), 0);
	assert_true(isnan(back->stage[0].seconds));
	free(text);
	discard(back);
	discard(vf);
}

/* text with the first occurrence of from replaced by to. */
static char *edit(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	char *out;

	assert_non_null(at);
	assert_true(asprintf(&out, "%.*s%s%s", (int)(at - text), text, to,
			     at + strlen(from)) > 0);
	return out;
}

static void refused(const char *text, const char *why)
{
	struct vendor_facts *vf = malloc(sizeof(*vf));
	char err[256] = "";

	assert_non_null(vf);
	memset(vf, 0x5a, sizeof(*vf));
	assert_int_equal(vendor_json_decode(text, strlen(text), vf, err,
					    sizeof(err)), -1);
	if (!strstr(err, why))
		fail_msg("error \"%s\" does not say \"%s\"", err, why);
	/* Nothing half-filled: a refused document leaves zeroed facts. */
	for (size_t i = 0; i < sizeof(*vf); i++)
		if (((unsigned char *)vf)[i])
			fail_msg("byte %zu left set", i);
	free(vf);
}

static void test_malformed(void **state)
{
	struct vendor_facts *vf = sample();
	char *text = vendor_json_encode(vf), *bad;
	char big[400];

	assert_non_null(text);
	refused("", "not JSON");
	refused("{\"format\": ", "not JSON");
	refused("[]", "not a " VENDOR_FACTS_FORMAT " document");
	/* Cut anywhere: never a crash, always refused. */
	for (size_t n = 0; n < strlen(text); n += 97) {
		char *cut = strndup(text, n);

		refused(cut, "not JSON");
		free(cut);
	}
	bad = edit(text, "\"version\": 1", "\"version\": 2");
	refused(bad, "version 2, this gdrcheck reads 1");
	free(bad);
	bad = edit(text, "\"version\": 1", "\"version\": \"1\"");
	refused(bad, "no version");
	free(bad);
	bad = edit(text, "\"driver_version\": 12080", "\"driver_version\": \"12080\"");
	refused(bad, "facts.cuda.driver_version: not an integer");
	free(bad);
	bad = edit(text, "\"driver_version\": 12080", "\"driver_versio\": 12080");
	refused(bad, "facts.cuda.driver_version: missing");
	free(bad);
	bad = edit(text, "\"driver_version\": 12080", "\"driver_version\": 99999999999");
	refused(bad, "facts.cuda.driver_version: 99999999999 out of range");
	free(bad);
	bad = edit(text, "\"ordinal\": 1", "\"ordinal\": 1.5");
	refused(bad, "facts.cuda.gpus[1].ordinal: not an integer");
	free(bad);
	bad = edit(text, "\"pid\": 4242", "\"pid\": 4242, \"pid\": 1");
	refused(bad, "not JSON");
	free(bad);
	bad = edit(text, "\"state\": 2", "\"state\": 77");
	refused(bad, "facts.stage[0].state: 77 unknown");
	free(bad);
	bad = edit(text, "\"hex\": \"", "\"hex\": \"0");
	refused(bad, "facts.stage[2].output: bad hex string");
	free(bad);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	{
		char *to;

		assert_true(asprintf(&to, "\"pci\": \"%s\"", big) > 0);
		bad = edit(text, "\"pci\": \"0000:18:00.0\"", to);
		free(to);
	}
	refused(bad, "facts.cuda.gpus[1].pci: string longer than 31 bytes");
	free(bad);
	bad = edit(text, "\"facts\": {", "\"facts\": [");
	refused(bad, "not JSON");
	free(bad);
	/* The capacities it was recorded with bound its arrays and counts. */
	bad = edit(text, "\"nics\": 4", "\"nics\": 2");
	refused(bad, "facts.verbs.nics: 3 elements, more than the capacity 2");
	free(bad);
	bad = edit(text, "\"gpus\": 4", "\"gpus\": \"4\"");
	refused(bad, "caps.gpus: not an integer");
	free(bad);
	bad = edit(text, "\"pairs\": 2", "\"pairs\": 99999999");
	refused(bad, "caps.pairs: 99999999 out of range");
	free(bad);
	/* A short text cannot ask for a large block: 200,000 empty pairs. */
	{
		size_t n = 200000, at = 0;
		char *pairs = malloc(3 * n + 3);

		assert_non_null(pairs);
		pairs[at++] = '[';
		for (size_t i = 0; i < n; i++) {
			pairs[at++] = '{';
			pairs[at++] = '}';
			pairs[at++] = i + 1 < n ? ',' : ']';
		}
		pairs[at] = '\0';
		bad = edit(text, "\"pairs\": 2", "\"pairs\": 1000000");
		{
			char *p = strstr(bad, "\"npairs\": 1");
			char *q, *huge;

			assert_non_null(p);
			q = strstr(p, "\"pairs\": [");
			assert_non_null(q);
			assert_true(asprintf(&huge, "%.*s\"pairs\": %s, \"x\": [%s",
					     (int)(q - bad), bad, pairs,
					     q + strlen("\"pairs\": [")) > 0);
			refused(huge, "facts: more elements than");
			free(huge);
		}
		free(pairs);
	}
	free(bad);
	free(text);
	discard(vf);
}

static void put(const char *dir, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/gdrcheck", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s%s", dir, VENDOR_FACTS_PATH);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void test_replay(void **state)
{
	char dir[] = "/tmp/test_vendor_json.XXXXXX", err[256] = "", cmd[4200];
	struct vendor_facts *vf = sample(), *back = calloc(1, sizeof(*back));
	char *text = vendor_json_encode(vf);
	struct sysroot *sr;

	assert_non_null(mkdtemp(dir));
	assert_non_null(back);
	sr = sysroot_new(dir);
	assert_non_null(sr);
	/* A capture without the file: nothing to replay, no error. */
	assert_int_equal(vendor_json_replay(sr, back, err, sizeof(err)), 0);
	put(dir, "{ corrupt");
	assert_int_equal(vendor_json_replay(sr, back, err, sizeof(err)), -1);
	assert_non_null(strstr(err, VENDOR_FACTS_PATH ": not JSON"));
	put(dir, text);
	assert_int_equal(vendor_json_replay(sr, back, err, sizeof(err)), 1);
	assert_non_null(strstr(back->replayed_from, VENDOR_FACTS_PATH));
	memset(back->replayed_from, 0, sizeof(back->replayed_from));
	assert_facts_equal(back, vf);
	sysroot_free(sr);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	free(text);
	discard(back);
	discard(vf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_compute_mode_compat),
		cmocka_unit_test(test_counts_checked),
		cmocka_unit_test(test_not_finite),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_replay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
