// SPDX-License-Identifier: MIT
/*
 * JUnit XML for CI systems: one testcase per gate result (classname
 * gdrcheck.<layer>, name "<gate> <subject>"), BLOCKED as <failure>, ERROR
 * as <error>, SKIP as <skipped>, WARN as a pass with the warning in
 * <system-out>; then one testcase per path verdict.
 */
#include <stdio.h>
#include <string.h>

#include "report/result.h"

static void xml_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			/* XML 1.0 forbids most control characters. */
			if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
				fputc('?', out);
			else
				fputc(c, out);
		}
	}
}

int render_junit(const struct report *r, FILE *out)
{
	size_t count[5] = { 0 }, tests = r->nres + PATH_COUNT;
	size_t failures, errors;

	for (size_t i = 0; i < r->nres; i++)
		count[r->res[i].status]++;
	failures = count[ST_BLOCKED];
	errors = count[ST_ERROR];
	for (int p = 0; p < PATH_COUNT; p++) {
		failures += r->path[p].verdict == V_BLOCKED;
		errors += r->path[p].verdict == V_UNKNOWN;
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
	fprintf(out, "<testsuites name=\"gdrcheck\" tests=\"%zu\" "
		"failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" "
		"time=\"%.3f\">\n", tests, failures, errors, count[ST_SKIP],
		r->meta.total_ms / 1e3);
	fputs("  <testsuite name=\"gdrcheck ", out);
	xml_text(out, r->meta.hostname);
	fprintf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
		"skipped=\"%zu\" timestamp=\"%s\" time=\"%.3f\">\n", tests,
		failures, errors, count[ST_SKIP], r->meta.generated_at,
		r->meta.total_ms / 1e3);
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];

		fprintf(out, "    <testcase classname=\"gdrcheck.%s\" name=\"%s ",
			layer_name(res->layer), res->gate);
		xml_text(out, r->subj[res->subject].id);
		fprintf(out, "\" time=\"%.6f\">", res->duration_ms / 1e3);
		switch (res->status) {
		case ST_PASS:
			break;
		case ST_WARN:
			fputs("<system-out>WARN ", out);
			xml_text(out, res->code);
			fputs(": ", out);
			xml_text(out, res->reason);
			fputs("</system-out>", out);
			break;
		case ST_SKIP:
			fputs("<skipped message=\"", out);
			xml_text(out, res->reason);
			fputs("\"/>", out);
			break;
		case ST_BLOCKED:
		case ST_ERROR:
			fprintf(out, "<%s type=\"%s\" message=\"",
				res->status == ST_BLOCKED ? "failure" : "error",
				res->code);
			xml_text(out, res->reason);
			fputs("\">", out);
			if (res->remediation)
				xml_text(out, res->remediation);
			fprintf(out, "</%s>", res->status == ST_BLOCKED ?
				"failure" : "error");
			break;
		}
		fputs("</testcase>\n", out);
	}
	for (int p = 0; p < PATH_COUNT; p++) {
		const struct path_verdict *pv = &r->path[p];

		fprintf(out, "    <testcase classname=\"gdrcheck.verdict\" "
			"name=\"%s\">", path_name((enum gdr_path)p));
		if (pv->verdict != V_READY) {
			fprintf(out, "<%s type=\"%s\" message=\"",
				pv->verdict == V_BLOCKED ? "failure" : "error",
				verdict_name(pv->verdict));
			xml_text(out, pv->summary);
			fprintf(out, "\"/>");
		}
		fputs("</testcase>\n", out);
	}
	fputs("  </testsuite>\n</testsuites>\n", out);
	return ferror(out) ? -1 : 0;
}
