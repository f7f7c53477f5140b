// SPDX-License-Identifier: MIT
/*
 * The helpers every part of the human report uses (report/text_util.h):
 * colours, only when asked for, and the rule that keeps bytes the model
 * did not make from moving the terminal's cursor.
 */
#include <stdio.h>

#include "core/result.h"
#include "report/text_util.h"

#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"

const char *text_bold(const struct text_ctx *t)
{
	return t->o->color ? C_BOLD : "";
}

const char *text_reset(const struct text_ctx *t)
{
	return t->o->color ? C_RESET : "";
}

static const char *status_color(enum gdr_status st)
{
	switch (st) {
	case ST_PASS: return "\033[32m";
	case ST_WARN: return "\033[33m";
	case ST_BLOCKED: return "\033[1;31m";
	case ST_SKIP: return "\033[2m";
	case ST_ERROR: return "\033[35m";
	default: return "";
	}
}

const char *text_status_color(const struct text_ctx *t, enum gdr_status st)
{
	return t->o->color ? status_color(st) : "";
}

const char *text_verdict_color(const struct text_ctx *t, enum verdict v)
{
	if (!t->o->color)
		return "";
	return v == V_READY ? "\033[1;32m" : v == V_BLOCKED ? "\033[1;31m" :
	       v == V_READY_UNPROVEN ? "\033[1;36m" : "\033[1;35m";
}

/*
 * Strings the model did not make (the run's metadata, a path given on the
 * command line, a summary cut in mid-sequence) pass the model's rule here:
 * nothing reaches the terminal that could move its cursor.
 */
void text_put_clean(const char *s, FILE *out)
{
	int n;

	while ((n = report_safe_seq(s))) {
		if (n < 0) {
			fprintf(out, "\\x%02X", *(const unsigned char *)s);
			s++;
		} else {
			fwrite(s, 1, (size_t)n, out);
			s += n;
		}
	}
}
