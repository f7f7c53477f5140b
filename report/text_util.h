/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_REPORT_TEXT_UTIL_H
#define GDRCHECK_REPORT_TEXT_UTIL_H

/*
 * What the human report's parts share, below all of them (not a public
 * interface): the rendering context, colours, the clean-output rule and
 * the compressed subject lists. Nothing here calls a part; only
 * report/text.c calls the parts (report/text_sections.h), so the calls run
 * one way (tests/check-layers.sh).
 *
 *   text_util.c     colours, text_put_clean
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

#endif
