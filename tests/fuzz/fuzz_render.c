// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the renderers (report/text.c, junit.c,
 * prometheus.c, json.c) behind the model's cleaning rule (core/result.c):
 * arbitrary bytes as the hostname, subject ids and labels, a reason, a
 * remediation, evidence and a path summary must give
 *   - text and Prometheus output that is valid UTF-8 with no control byte
 *     but the line breaks, JUnit too;
 *   - JUnit with the markup of the same report made of harmless names
 *     (same count of '<', '"' and lines), every '&' an entity;
 *   - Prometheus with the lines of that report, every label value quoted
 *     with only \\, \" and \n escapes;
 *   - JSON that jansson parses.
 *
 * Input: NUL-separated chunks (hostname, GPU id, GPU label, NIC id, NIC
 * label, reason, remediation, evidence, summary); the first byte also
 * picks the statuses and the exit code.
 */
#include <jansson.h>
#include <stdio.h>

#include "core/result.h"
#include "gate/catalog.h"
#include "tests/fuzz/fuzz_common.h"

enum { CH_HOST, CH_GPU, CH_GPU_LABEL, CH_NIC, CH_NIC_LABEL, CH_REASON, CH_REMEDY,
       CH_EVIDENCE, CH_SUMMARY, CH_COUNT };

static void build(struct report *r, const char *const *c, unsigned char pick)
{
	struct result *res;
	int gpu, nic, port, pair;

	report_init(r);
	snprintf(r->meta.tool_version, sizeof(r->meta.tool_version), "0.1.0");
	snprintf(r->meta.hostname, sizeof(r->meta.hostname), "%s", c[CH_HOST]);
	snprintf(r->meta.kernel, sizeof(r->meta.kernel), "%s", c[CH_HOST]);
	snprintf(r->meta.sysroot, sizeof(r->meta.sysroot), "%s", c[CH_NIC]);
	snprintf(r->meta.capture, sizeof(r->meta.capture), "%s", c[CH_NIC]);
	snprintf(r->meta.generated_at, sizeof(r->meta.generated_at),
		 "1970-01-01T00:00:00Z");
	r->meta.require = pick & 1 ? "dmabuf" : "any";
	r->meta.policy.warn_fails = pick & 2;
	report_subject(r, SUBJ_HOST, "host", c[CH_HOST], NULL, -1);
	gpu = report_subject(r, SUBJ_GPU, c[CH_GPU], c[CH_GPU_LABEL], c[CH_GPU], -1);
	nic = report_subject(r, SUBJ_NIC, c[CH_NIC], c[CH_NIC_LABEL], c[CH_NIC], -1);
	port = report_subject(r, SUBJ_PORT, c[CH_NIC], c[CH_NIC], NULL, nic);
	pair = report_subject(r, SUBJ_PAIR, c[CH_GPU], c[CH_NIC], NULL, -1);
	r->subj[pair].pair_gpu = gpu;
	r->subj[pair].pair_nic = nic;
	res = report_add(r, gate_find("nic.port"), L_NIC, P_BOTH, port,
			 (enum gdr_status)(pick % 5), "PORT_X", "%s",
			 c[CH_REASON]);
	result_remedy(res, "%s", c[CH_REMEDY]);
	ev_str(res, "state", "%s", c[CH_EVIDENCE]);
	res = report_add(r, gate_find("topo.path"), L_TOPOLOGY, P_BOTH, pair,
			 (enum gdr_status)((pick >> 3) % 5), "PATH_X",
			 "%s %s", c[CH_GPU], c[CH_REASON]);
	ev_str(res, "nvidia_smi", "%s", c[CH_EVIDENCE]);
	res = report_add(r, gate_find("mech.peermem"), L_MECHANISM, P_PEERMEM, gpu,
			 ST_BLOCKED, "PEERMEM_X", "%s", c[CH_REASON]);
	result_remedy(res, "%s", c[CH_REMEDY]);
	r->path[PATH_DMABUF].verdict = (enum verdict)((pick >> 5) % 3);
	r->path[PATH_PEERMEM].verdict = V_BLOCKED;
	r->path[PATH_PEERMEM].decisive = (int)r->nres - 1;
	/* verdict.c writes summaries with snprintf: cut anywhere. */
	snprintf(r->path[PATH_PEERMEM].summary,
		 sizeof(r->path[PATH_PEERMEM].summary), "BLOCKED at %s",
		 c[CH_SUMMARY]);
	r->overall = r->path[PATH_DMABUF].verdict;
	r->exit_code = r->overall == V_READY ? 0 : r->overall == V_BLOCKED ?
		       1 : 3;
}

static char *render(const struct report *r, int fmt, size_t *len)
{
	struct render_opts o = { .color = false, .verbose = true };
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	int ret;

	FUZZ_ASSERT(f);
	ret = fmt == 0 ? render_text(r, &o, f) : fmt == 1 ? render_junit(r, f) :
	      fmt == 2 ? render_prometheus(r, f) : render_json(r, f);
	FUZZ_ASSERT(ret == 0);
	FUZZ_ASSERT(fclose(f) == 0 && text);
	return text;
}

static size_t count(const char *s, size_t len, char c)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += s[i] == c;
	return n;
}

/* Valid UTF-8, no control byte but '\n', no NUL inside. */
static void assert_clean(const char *s, size_t len)
{
	size_t i = 0;

	FUZZ_ASSERT(strlen(s) == len);
	while (i < len) {
		int n;

		if (s[i] == '\n') {
			i++;
			continue;
		}
		n = report_safe_seq(s + i);
		FUZZ_ASSERT(n > 0);
		i += (size_t)n;
	}
}

static void check_entities(const char *s)
{
	static const char *const ents[] = {
		"&amp;", "&lt;", "&gt;", "&quot;", "&apos;",
	};

	for (const char *p = strchr(s, '&'); p; p = strchr(p + 1, '&')) {
		bool ok = false;

		for (size_t e = 0; e < sizeof(ents) / sizeof(ents[0]); e++)
			ok |= !strncmp(p, ents[e], strlen(ents[e]));
		FUZZ_ASSERT(ok);
	}
}

/* Every sample line: name, optional {label="value",...}, a value. */
static void check_prom_labels(const char *s)
{
	for (const char *line = s; *line; line = strchr(line, '\n') + 1) {
		const char *p = line;

		FUZZ_ASSERT(strchr(line, '\n'));
		if (*p == '#')
			continue;
		while (*p && *p != '{' && *p != ' ')
			p++;
		if (*p != '{')
			continue;
		for (p++; *p != '}';) {
			/* Prometheus label names: [a-zA-Z_][a-zA-Z0-9_]*
			 * (dcgm-exporter's UUID and pci_bus_id among them). */
			while ((*p >= 'a' && *p <= 'z') ||
			       (*p >= 'A' && *p <= 'Z') ||
			       (*p >= '0' && *p <= '9') || *p == '_')
				p++;
			FUZZ_ASSERT(p[0] == '=' && p[1] == '"');
			for (p += 2; *p != '"'; p++) {
				FUZZ_ASSERT(*p && *p != '\n');
				if (*p == '\\') {
					p++;
					FUZZ_ASSERT(*p == '\\' || *p == '"' ||
						    *p == 'n');
				}
			}
			p++;
			if (*p == ',')
				p++;
			else
				FUZZ_ASSERT(*p == '}');
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const benign[CH_COUNT] = {
		"node", "GPU0", "gpu", "mlx5_0", "nic", "reason", "fix", "ev",
		"summary",
	};
	char *s = fuzz_strndup(data, size);
	const char *c[CH_COUNT];
	unsigned char pick = size ? data[0] : 0;
	struct report hostile, plain;
	size_t at = 0;

	for (int i = 0; i < CH_COUNT; i++) {
		c[i] = at <= size ? s + at : "";
		if (at <= size)
			at += strlen(s + at) + 1;
	}
	build(&hostile, c, pick);
	build(&plain, benign, pick);
	for (int fmt = 0; fmt < 4; fmt++) {
		size_t len, plen;
		char *got = render(&hostile, fmt, &len);
		char *want = render(&plain, fmt, &plen);

		if (fmt < 3)
			assert_clean(got, len);
		if (fmt == 1) {
			FUZZ_ASSERT(count(got, len, '<') == count(want, plen, '<'));
			FUZZ_ASSERT(count(got, len, '"') == count(want, plen, '"'));
			FUZZ_ASSERT(count(got, len, '\n') == count(want, plen, '\n'));
			check_entities(got);
		} else if (fmt == 2) {
			FUZZ_ASSERT(count(got, len, '\n') == count(want, plen, '\n'));
			check_prom_labels(got);
		} else if (fmt == 3) {
			json_t *doc = json_loads(got, 0, NULL);

			FUZZ_ASSERT(doc);
			json_decref(doc);
		}
		free(got);
		free(want);
	}
	report_free(&hostile);
	report_free(&plain);
	free(s);
	return 0;
}
