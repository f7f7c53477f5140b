// SPDX-License-Identifier: MIT
/*
 * JUnit XML for CI systems: one testcase per gate (classname
 * gdrcheck.<layer>, name the gate id), its subjects folded by status and
 * reason as the text report folds them, then one per path verdict and an
 * "overall" one carrying the node's verdict. Only what makes the policy
 * fail is a <failure> (an <error> when it left the verdict undecided): a
 * run that exits 0 has none. A gate with a BLOCKED or ERROR result on a
 * path the policy does not need, or with only SKIPs, is <skipped> with its
 * reason (not green); its results are in <system-out>.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/result.h"
#include "report/text_util.h"

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

/*
 * What a gate's testcase holds: a failure (or error) when one of its
 * results makes the policy fail; "skipped" when it has a BLOCKED or ERROR
 * result the policy does not need, or when every result is a SKIP (not
 * green: it was not shown to work); else it passes. *first is the result
 * that decides it.
 */
enum gate_kind { GK_PASS, GK_SKIPPED, GK_FAILURE, GK_ERROR };

static enum gate_kind gate_outcome(const struct report *r, const bool *fails,
				   const struct gate_desc *g, int *first)
{
	enum gate_kind k = GK_PASS;
	bool all_skip = true;
	int skip_first = -1;

	*first = -1;
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];
		enum outcome o;

		if (res->gate != g)
			continue;
		o = result_outcome(res, fails[i]);
		if (o == OUTCOME_FAILURE && k < GK_FAILURE) {
			k = GK_FAILURE;
			*first = (int)i;
		} else if (o == OUTCOME_ERROR && k < GK_FAILURE) {
			k = GK_ERROR;
			*first = (int)i;
		} else if (o == OUTCOME_NONE && k == GK_PASS &&
			   (res->status == ST_BLOCKED || res->status == ST_ERROR)) {
			k = GK_SKIPPED;
			*first = (int)i;
		}
		if (res->status != ST_SKIP)
			all_skip = false;
		else if (skip_first < 0)
			skip_first = (int)i;
	}
	if (k == GK_PASS && all_skip && skip_first >= 0) {
		k = GK_SKIPPED;
		*first = skip_first;
	}
	return k;
}

/*
 * The gate's results folded as the text report folds them: one line per
 * (status, reason code) with its subjects, "BLOCKED PORT_NOT_ACTIVE on
 * mlx5_6/1: port DOWN (physical Polling)", then the fix.
 */
static void gate_body(FILE *out, const struct report *r,
		      const struct gate_desc *g)
{
	bool *done = calloc(r->nres ? r->nres : 1, sizeof(*done));
	int *subj = calloc(r->nres ? r->nres : 1, sizeof(*subj));
	char list[1024];

	if (!done || !subj) {
		free(done);
		free(subj);
		return;
	}
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];
		size_t n = 0;

		if (res->gate != g || done[i] || res->status == ST_PASS)
			continue;
		for (size_t k = i; k < r->nres; k++)
			if (r->res[k].gate == g && !done[k] &&
			    r->res[k].status == res->status &&
			    r->res[k].code_index == res->code_index &&
			    r->res[k].code == res->code) {
				done[k] = true;
				subj[n++] = r->res[k].subject;
			}
		text_subject_list(r, subj, n, list, sizeof(list));
		fprintf(out, "%s ", status_name(res->status));
		xml_text(out, res->code);
		fputs(" on ", out);
		xml_text(out, list);
		fputs(": ", out);
		xml_text(out, res->reason);
		if (res->remediation) {
			fputs(" -- fix: ", out);
			xml_text(out, res->remediation);
		}
		fputc('\n', out);
	}
	free(done);
	free(subj);
}

static void gate_case(FILE *out, const struct report *r, const bool *fails,
		      const struct gate_desc *g)
{
	static const char *const tag[] = {
		[GK_SKIPPED] = "skipped", [GK_FAILURE] = "failure",
		[GK_ERROR] = "error",
	};
	double ms = 0;
	int first;
	enum gate_kind k = gate_outcome(r, fails, g, &first);
	const struct result *f = first >= 0 ? &r->res[first] : NULL;

	for (size_t i = 0; i < r->nres; i++)
		if (r->res[i].gate == g)
			ms += r->res[i].duration_ms;
	fprintf(out, "    <testcase classname=\"gdrcheck.%s\" name=\"",
		layer_name(g->layer));
	xml_text(out, g->id);
	fprintf(out, "\" time=\"%.6f\">", ms / 1e3);
	if (k != GK_PASS && f) {
		fprintf(out, "<%s", tag[k]);
		if (k != GK_SKIPPED) {
			fputs(" type=\"", out);
			xml_text(out, f->code);
			fputc('"', out);
		}
		fputs(" message=\"", out);
		if (k == GK_SKIPPED && f->status != ST_SKIP)
			fputs("not needed by the policy: ", out);
		xml_text(out, status_name(f->status));
		fputs(" on ", out);
		xml_text(out, r->subj[f->subject].id);
		fputs(": ", out);
		xml_text(out, f->reason);
		fprintf(out, "\"%s", k == GK_SKIPPED ? "/>" : ">");
		if (k != GK_SKIPPED) {
			gate_body(out, r, g);
			fprintf(out, "</%s>", tag[k]);
		}
	}
	if (k == GK_PASS || k == GK_SKIPPED) {
		/* WARNs and what the policy does not need, still shown. */
		bool any = false;

		for (size_t i = 0; i < r->nres && !any; i++)
			any = r->res[i].gate == g && r->res[i].status != ST_PASS;
		if (any) {
			fputs("<system-out>", out);
			gate_body(out, r, g);
			fputs("</system-out>", out);
		}
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

/* Does gate g have a result, and is it the first of its gate? */
static bool first_of_gate(const struct report *r, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (r->res[k].gate == r->res[i].gate)
			return false;
	return true;
}

int render_junit(const struct report *r, FILE *out)
{
	bool *fails = report_failing(r);
	size_t tests = PATH_COUNT + 1;
	size_t failures = 0, errors = 0, skipped = 0;

	for (size_t i = 0; i < r->nres; i++) {
		int first;
		enum gate_kind k;

		if (!first_of_gate(r, i))
			continue;
		k = gate_outcome(r, fails, r->res[i].gate, &first);
		tests++;
		failures += k == GK_FAILURE;
		errors += k == GK_ERROR;
		skipped += k == GK_SKIPPED;
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
	/*
	 * Format 3: one testcase per gate, its subjects folded as the text
	 * report folds them (an 8 x 12 node had 1,536 testcases); failures
	 * follow the policy (validate-formats.py).
	 */
	fputs("    <properties>\n"
	      "      <property name=\"gdrcheck.junit_format\" value=\"3\"/>\n"
	      "      <property name=\"gdrcheck.version\" value=\"", out);
	xml_text(out, r->meta.tool_version);
	fputs("\"/>\n      <property name=\"gdrcheck.require\" value=\"", out);
	xml_text(out, r->meta.require ? r->meta.require : "any");
	fprintf(out, "\"/>\n      <property name=\"gdrcheck.verdict\" "
		"value=\"%s\"/>\n      <property name=\"gdrcheck.exit_code\" "
		"value=\"%d\"/>\n    </properties>\n",
		verdict_name(r->overall), r->exit_code);
	for (size_t i = 0; i < r->nres; i++)
		if (first_of_gate(r, i))
			gate_case(out, r, fails, r->res[i].gate);
	for (int p = 0; p < PATH_COUNT; p++)
		path_case(out, r, p);
	overall_case(out, r);
	fputs("  </testsuite>\n</testsuites>\n", out);
	free(fails);
	return ferror(out) ? -1 : 0;
}
