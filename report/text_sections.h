/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_REPORT_TEXT_SECTIONS_H
#define GDRCHECK_REPORT_TEXT_SECTIONS_H

/*
 * The human report's parts, one concern per file, called by report/text.c
 * only (it orders them); a part calls no other part, only
 * report/text_util.h:
 *
 *   text_summary.c  verdicts (node, per path, NCCL) and one count line per
 *                   layer
 *   text_table.c    the GPU x NIC table (nvidia-smi topo -m style)
 *   text_problems.c the problems and the fixes (to fix / optional)
 */
#include "report/text_util.h"

void text_summary(const struct text_ctx *t);
void text_layers(const struct text_ctx *t);
void text_table(const struct text_ctx *t);
void text_problems(const struct text_ctx *t);
void text_fixes(const struct text_ctx *t);

#endif
