// SPDX-License-Identifier: MIT
/* The remediation list: one entry per (gate, advice), subjects grouped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

#include "core/result.h"

size_t report_remedies(const struct report *r, struct remedy **out)
{
	struct remedy *v = NULL;
	size_t n = 0;

	/* BLOCKED advice first, then WARN; chain order within each. */
	for (int pass = 0; pass < 2; pass++) {
		enum gdr_status want = pass == 0 ? ST_BLOCKED : ST_WARN;

		for (size_t i = 0; i < r->nres; i++) {
			const struct result *res = &r->res[i];
			struct remedy *m = NULL;

			if (res->status != want || !res->remediation)
				continue;
			for (size_t j = 0; j < n; j++)
				if (v[j].status == res->status &&
				    v[j].gate_desc == res->gate &&
				    !strcmp(v[j].text, res->remediation))
					m = &v[j];
			if (!m) {
				v = xrealloc(v, (n + 1) * sizeof(*v));
				m = &v[n++];
				m->gate_desc = res->gate;
				m->gate = res->gate->id;
				m->text = res->remediation;
				m->status = res->status;
				m->subjects = NULL;
				m->nsubjects = 0;
			}
			m->subjects = xrealloc(m->subjects, (m->nsubjects + 1) *
					       sizeof(*m->subjects));
			m->subjects[m->nsubjects++] = res->subject;
		}
	}
	*out = v;
	return n;
}

void report_remedies_free(struct remedy *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].subjects);
	free(v);
}
