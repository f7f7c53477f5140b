// SPDX-License-Identifier: MIT
/*
 * JUnit XML for CI systems: one testcase per gate and subject (classname
 * gdrcheck.<layer>, name "<gate> <subject>"), then one per path verdict
 * and an "overall" one carrying the node's verdict. Only what makes the
 * policy fail is a <failure> (an <error> when it left the verdict
 * undecided): a run that exits 0 has none. A SKIP is <skipped>; any other
 * result that is not PASS tells its status in <system-out>.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/result.h"

/*
 * Text and attribute values: markup characters as entities; anything the
 * model's rule would not let through (XML 1.0 forbids most C0 controls
 * even as references) as the characters \xNN, as the model writes it.
 */
static void xml_text(FILE *out, const char *s)
{
	int n;

	while ((n = report_safe_seq(s))) {
		if (n < 0) {
			fprintf(out, "\\x%02X", *(const unsigned char *)s);
			s++;
			continue;
		}
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default: fwrite(s, 1, (size_t)n, out);
		}
		s += n;
	}
}

/* What a testcase holds when the policy fails because of it. */
enum outcome {
	OUTCOME_NONE = 0,
	OUTCOME_FAILURE,
	OUTCOME_ERROR,
};

static const char *outcome_name(enum outcome o)
{
	return o == OUTCOME_FAILURE ? "failure" : "error";
}

/* What a path verdict's testcase holds. */
static enum outcome path_outcome(const struct report *r, int p)
{
	unsigned int acc = report_accepted_paths(r);

	if (!r->exit_code || !(acc & (1u << p)) ||
	    r->path[p].verdict == V_READY ||
	    r->path[p].verdict == V_READY_UNPROVEN)
		return OUTCOME_NONE;
	for (int q = 0; q < PATH_COUNT; q++)
		if ((acc & (1u << q)) && r->path[q].verdict == V_READY)
			return OUTCOME_NONE;	/* another accepted path is READY */
	return r->path[p].verdict == V_BLOCKED ? OUTCOME_FAILURE : OUTCOME_ERROR;
}

static enum outcome overall_outcome(const struct report *r)
{
	return !r->exit_code ? OUTCOME_NONE :
	       r->exit_code == 1 ? OUTCOME_FAILURE : OUTCOME_ERROR;
}

/* A failing result: BLOCKED or WARN fail, anything else is an error. */
static enum outcome result_outcome(const struct result *res, bool fails)
{
	if (!fails)
		return OUTCOME_NONE;
	return res->status == ST_BLOCKED || res->status == ST_WARN ||
	       res->status == ST_PASS ? OUTCOME_FAILURE : OUTCOME_ERROR;
}

static void result_case(FILE *out, const struct report *r,
			const struct result *res, bool fails)
{
	enum outcome outcome = result_outcome(res, fails);

	fprintf(out, "    <testcase classname=\"gdrcheck.%s\" name=\"",
		layer_name(res->layer));
	xml_text(out, res->gate->id);
	fputc(' ', out);
	xml_text(out, r->subj[res->subject].id);
	fprintf(out, "\" time=\"%.6f\">", res->duration_ms / 1e3);
	if (outcome != OUTCOME_NONE) {
		fprintf(out, "<%s type=\"", outcome_name(outcome));
		xml_text(out, res->code);
		fputs("\" message=\"", out);
		xml_text(out, status_name(res->status));
		fputs(": ", out);
		xml_text(out, res->reason);
		fputs("\">", out);
		if (res->remediation)
			xml_text(out, res->remediation);
		fprintf(out, "</%s>", outcome_name(outcome));
	} else if (res->status == ST_SKIP) {
		fputs("<skipped message=\"", out);
		xml_text(out, res->reason);
		fputs("\"/>", out);
	} else if (res->status != ST_PASS) {
		fprintf(out, "<system-out>%s ", status_name(res->status));
		xml_text(out, res->code);
		fputs(": ", out);
		xml_text(out, res->reason);
		fputs("</system-out>", out);
	}
	fputs("</testcase>\n", out);
}

static void path_case(FILE *out, const struct report *r, int p)
{
	const struct path_verdict *pv = &r->path[p];
	enum outcome outcome = path_outcome(r, p);

	fprintf(out, "    <testcase classname=\"gdrcheck.verdict\" "
		"name=\"%s\">", path_name((enum gdr_path)p));
	if (outcome != OUTCOME_NONE) {
		fprintf(out, "<%s type=\"%s\" message=\"", outcome_name(outcome),
			verdict_name(pv->verdict));
		xml_text(out, pv->summary);
		fputs("\"/>", out);
	} else {
		fputs("<system-out>", out);
		xml_text(out, pv->summary[0] ? pv->summary :
			 verdict_name(pv->verdict));
		fputs("</system-out>", out);
	}
	fputs("</testcase>\n", out);
}

static void overall_case(FILE *out, const struct report *r)
{
	enum outcome outcome = overall_outcome(r);

	fputs("    <testcase classname=\"gdrcheck.verdict\" name=\"overall\">",
	      out);
	if (outcome != OUTCOME_NONE)
		fprintf(out, "<%s type=\"%s\" message=\"", outcome_name(outcome),
			verdict_name(r->overall));
	else
		fputs("<system-out>", out);
	fprintf(out, "%s (--require ", verdict_name(r->overall));
	xml_text(out, r->meta.require ? r->meta.require : "any");
	fprintf(out, ", exit %d)%s", r->exit_code,
		r->meta.interrupted ? "; INTERRUPTED, the report is partial" : "");
	for (int i = 0; i < r->meta.policy.nviolations; i++) {
		fputs("; policy: ", out);
		xml_text(out, r->meta.policy.violations[i]);
	}
	fputs(outcome != OUTCOME_NONE ? "\"/>" : "</system-out>", out);
	fputs("</testcase>\n", out);
}

int render_junit(const struct report *r, FILE *out)
{
	bool *fails = report_failing(r);
	size_t tests = r->nres + PATH_COUNT + 1;
	size_t failures = 0, errors = 0, skipped = 0;

	for (size_t i = 0; i < r->nres; i++) {
		enum outcome o = result_outcome(&r->res[i], fails[i]);

		failures += o == OUTCOME_FAILURE;
		errors += o == OUTCOME_ERROR;
		skipped += o == OUTCOME_NONE && r->res[i].status == ST_SKIP;
	}
	for (int p = 0; p < PATH_COUNT; p++) {
		enum outcome o = path_outcome(r, p);

		failures += o == OUTCOME_FAILURE;
		errors += o == OUTCOME_ERROR;
	}
	failures += r->exit_code == 1;
	errors += r->exit_code && r->exit_code != 1;

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
	fprintf(out, "<testsuites name=\"gdrcheck\" tests=\"%zu\" "
		"failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" "
		"time=\"%.3f\">\n", tests, failures, errors, skipped,
		r->meta.total_ms / 1e3);
	fputs("  <testsuite name=\"gdrcheck ", out);
	xml_text(out, r->meta.hostname);
	fputs("\" hostname=\"", out);
	xml_text(out, r->meta.hostname);
	fprintf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
		"skipped=\"%zu\" timestamp=\"", tests, failures, errors,
		skipped);
	xml_text(out, r->meta.generated_at);
	fprintf(out, "\" time=\"%.3f\">\n", r->meta.total_ms / 1e3);
	/* Format 2: failures follow the policy (validate-formats.py). */
	fputs("    <properties>\n"
	      "      <property name=\"gdrcheck.junit_format\" value=\"2\"/>\n"
	      "      <property name=\"gdrcheck.version\" value=\"", out);
	xml_text(out, r->meta.tool_version);
	fputs("\"/>\n      <property name=\"gdrcheck.require\" value=\"", out);
	xml_text(out, r->meta.require ? r->meta.require : "any");
	fprintf(out, "\"/>\n      <property name=\"gdrcheck.verdict\" "
		"value=\"%s\"/>\n      <property name=\"gdrcheck.exit_code\" "
		"value=\"%d\"/>\n    </properties>\n",
		verdict_name(r->overall), r->exit_code);
	for (size_t i = 0; i < r->nres; i++)
		result_case(out, r, &r->res[i], fails[i]);
	for (int p = 0; p < PATH_COUNT; p++)
		path_case(out, r, p);
	overall_case(out, r);
	fputs("  </testsuite>\n</testsuites>\n", out);
	free(fails);
	return ferror(out) ? -1 : 0;
}
