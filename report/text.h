/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_REPORT_TEXT_H
#define GDRCHECK_REPORT_TEXT_H

/*
 * The human report's parts, one concern per file, shared by report/text*.c
 * only (not a public interface):
 *
 *   text.c          the order of the parts, the header, the -v detail, -q
 *   text_summary.c  verdicts (node, per path, NCCL) and one count line per
 *                   layer
 *   text_table.c    the GPU x NIC table (nvidia-smi topo -m style)
 *   text_problems.c the problems and the fixes (to fix / optional)
 *   text_list.c     compressed subject lists (GPU0-7, GPU0-7 x mlx5_0-11)
 */
#include <stdbool.h>
#include <stdio.h>

#include "core/result.h"

struct text_ctx {
	const struct report *r;
	const struct render_opts *o;
	FILE *out;
	int width;		/* columns: 80 unless told (render_opts) */
	bool *failing;		/* report_failing(): stands before the verdict */
	unsigned int required;	/* P_* paths whose problems matter */
};

/* Escape sequences, only when colour is on. */
const char *text_bold(const struct text_ctx *t);
const char *text_reset(const struct text_ctx *t);
const char *text_status_color(const struct text_ctx *t, enum gdr_status st);
const char *text_verdict_color(const struct text_ctx *t, enum verdict v);
/* Bytes the model did not make, passed through the model's rule. */
void text_put_clean(const char *s, FILE *out);

/*
 * The subjects (indexes into r->subj), compressed: "GPU0-3,GPU5",
 * "mlx5_0-11/1", pairs forming a full cross product "GPU0-7 x mlx5_0-11".
 * Writes at most size bytes (NUL terminated, cut with "..." when longer).
 */
void text_subject_list(const struct report *r, const int *subj, size_t n,
		       char *buf, size_t size);
/* (a, b) subject pairs grouped: "GPU0-3 x mlx5_0-3/1, GPU4-7 x ...". */
void text_pair_list(const struct report *r, const int (*pv)[2], size_t n,
		    const char *sep, char *buf, size_t size);
/* Compare subject ids with their numbers as numbers (mlx5_2 < mlx5_10). */
int text_natcmp(const char *a, const char *b);

/* Whether result i is shown as a problem by default (see text_problems.c). */
bool text_is_problem(const struct text_ctx *t, size_t i);

void text_summary(const struct text_ctx *t);
void text_layers(const struct text_ctx *t);
void text_table(const struct text_ctx *t);
void text_problems(const struct text_ctx *t);
void text_fixes(const struct text_ctx *t);

#endif
