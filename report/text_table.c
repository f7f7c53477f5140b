// SPDX-License-Identifier: MIT
/*
 * The GPU x NIC table, in the style of `nvidia-smi topo -m`: one row per
 * GPU, one column per RDMA device (natural order: mlx5_2 before mlx5_10),
 * each cell the nvidia-smi distance class with marks for the GPU's rails
 * (the NICs NCCL uses for it), what NCCL decides and ACS. Columns are as wide as the
 * widest cell or header, so any name length stays aligned; when the NIC
 * names do not fit the width they become N0, N1, ... with a legend, and
 * when even those do not fit, the columns wrap into blocks, each repeating
 * the GPU labels. Indexed once: a 64 x 64 node has 4096 pairs.
 */
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "gate/catalog.h"
#include "report/text_sections.h"

/*
 * What a cell shows comes from the typed pair facts (core/result.h), the
 * NCCL model's rails and the status of the pair's ACS result: never from
 * evidence keys or reason-code text.
 */
struct table {
	struct pair_grid grid;
	const struct result **acs;	/* by pair subject: platform.acs */
	bool *rail;		/* by pair subject: NCCL uses this NIC */
	size_t *col;		/* display column -> grid column */
};

static const struct report *sort_rep;	/* qsort has no context argument */
static const struct pair_grid *sort_grid;

static int col_cmp(const void *a, const void *b)
{
	return text_natcmp(sort_rep->subj[sort_grid->nics[*(const size_t *)a]].id,
			   sort_rep->subj[sort_grid->nics[*(const size_t *)b]].id);
}

/* The pairs NCCL's rails use, from the model's typed facts. */
static void mark_rails(const struct report *r, struct table *m)
{
	const struct pair_grid *g = &m->grid;

	for (size_t k = 0; k < r->nccl.ngpus; k++) {
		const struct nccl_gpu_rails *gr = &r->nccl.gpus[k];

		for (size_t row = 0; row < g->ngpu; row++) {
			if (g->gpus[row] != gr->gpu)
				continue;
			for (int x = 0; x < gr->nrails; x++)
				for (size_t col = 0; col < g->nnic; col++) {
					int pair = g->pair[row * g->nnic + col];

					if (pair >= 0 &&
					    g->nics[col] == gr->rail[x].nic)
						m->rail[pair] = true;
				}
		}
	}
}

static void table_build(const struct report *r, struct table *m)
{
	pair_grid_build(r, &m->grid);
	m->acs = xcalloc(r->nsubj, sizeof(*m->acs));
	m->rail = xcalloc(r->nsubj, sizeof(*m->rail));
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];

		if (res->gate == &gate_descs[G_PLATFORM_ACS] &&
		    r->subj[res->subject].kind == SUBJ_PAIR &&
		    !m->acs[res->subject])
			m->acs[res->subject] = res;
	}
	mark_rails(r, m);
	m->col = xcalloc(m->grid.nnic ? m->grid.nnic : 1, sizeof(*m->col));
	for (size_t j = 0; j < m->grid.nnic; j++)
		m->col[j] = j;
	sort_rep = r;
	sort_grid = &m->grid;
	qsort(m->col, m->grid.nnic, sizeof(*m->col), col_cmp);
}

static void table_free(struct table *m)
{
	pair_grid_free(&m->grid);
	free(m->acs);
	free(m->rail);
	free(m->col);
}

/* Does any GPU's rail have NCCL path type `path` (nccl facts)? */
static bool rails_on_path(const struct report *r, const char *path)
{
	for (size_t k = 0; k < r->nccl.ngpus; k++)
		for (int x = 0; x < r->nccl.gpus[k].nrails; x++)
			if (r->nccl.gpus[k].rail[x].path &&
			    !strcmp(r->nccl.gpus[k].rail[x].path, path))
				return true;
	return false;
}

static bool rails_data_direct(const struct report *r)
{
	for (size_t k = 0; k < r->nccl.ngpus; k++)
		for (int x = 0; x < r->nccl.gpus[k].nrails; x++)
			if (r->nccl.gpus[k].rail[x].data_direct)
				return true;
	return false;
}

/*
 * A cell: the class, then * for the GPU's rail, then ! when ACS redirect
 * blocks the pair, ~ when it only costs performance, ? when unreadable;
 * lower case when NCCL stages the pair through host memory, ^ when NCCL
 * only receives by GPUDirect RDMA.
 */
static void cell_text(const struct report *r, const struct table *m,
		      size_t row, size_t col, char *buf, size_t size)
{
	int pair = m->grid.pair[row * m->grid.nnic + col];
	const struct pair_fact *f;
	const struct result *acs;
	char name[16];

	if (pair < 0) {
		snprintf(buf, size, ".");
		return;
	}
	f = report_pair_fact(r, pair);
	acs = m->acs[pair];
	snprintf(name, sizeof(name), "%s", f->distance == TOPO_UNKNOWN ? "-" :
		 topo_class_name(f->distance));
	if (f->gdr == PAIR_GDR_HOST)
		for (char *p = name; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p = (char)(*p - 'A' + 'a');
	snprintf(buf, size, "%s%s%s%s", name, m->rail[pair] ? "*" : "",
		 f->gdr == PAIR_GDR_RECV ? "^" : "",
		 !acs || acs->status == ST_PASS ? "" :
		 acs->status == ST_BLOCKED ? "!" :
		 acs->status == ST_WARN ? "~" :
		 /* a SKIP that still says (Direct-NIC: platform.direct_acs) */
		 f->acs == PAIR_ACS_CLEAR ? "" :
		 f->acs == PAIR_ACS_REDIRECT ? "~" : "?");
}

static void print_block(const struct text_ctx *t, const struct table *m,
			size_t from, size_t to, int rw, int cw, bool shortnames)
{
	const struct report *r = t->r;
	char text[32], head[96];

	fprintf(t->out, "  %-*s", rw, "");
	for (size_t k = from; k < to; k++) {
		if (shortnames)
			snprintf(head, sizeof(head), "N%zu", k);
		else
			report_clean(head, sizeof(head),
				     r->subj[m->grid.nics[m->col[k]]].id);
		/* No padding after the last column: no trailing blanks. */
		fprintf(t->out, " %-*s", k + 1 < to ? cw : 0, head);
	}
	fputc('\n', t->out);
	for (size_t i = 0; i < m->grid.ngpu; i++) {
		fprintf(t->out, "  %-*s", rw, r->subj[m->grid.gpus[i]].id);
		for (size_t k = from; k < to; k++) {
			cell_text(r, m, i, m->col[k], text, sizeof(text));
			fprintf(t->out, " %-*s", k + 1 < to ? cw : 0, text);
		}
		fputc('\n', t->out);
	}
}

void text_table(const struct text_ctx *t)
{
	const struct report *r = t->r;
	struct table m;
	int rw = 3, cw = 1, sw = 1, perblock;
	bool shortnames;
	char text[32];

	table_build(r, &m);
	if (!m.grid.nnic || !m.grid.ngpu) {
		table_free(&m);
		return;
	}
	for (size_t i = 0; i < m.grid.ngpu; i++) {
		int w = (int)strlen(r->subj[m.grid.gpus[i]].id);

		rw = w > rw ? w : rw;
		for (size_t j = 0; j < m.grid.nnic; j++) {
			cell_text(r, &m, i, j, text, sizeof(text));
			cw = (int)strlen(text) > cw ? (int)strlen(text) : cw;
		}
	}
	sw = cw;
	for (size_t j = 0; j < m.grid.nnic; j++) {
		int w = (int)strlen(r->subj[m.grid.nics[j]].id);
		int s = snprintf(text, sizeof(text), "N%zu", j);

		cw = w > cw ? w : cw;
		sw = s > sw ? s : sw;
	}
	/* Full names when every column fits the width, else N0, N1, ... */
	shortnames = 2 + rw + (int)m.grid.nnic * (cw + 1) > t->width;
	if (shortnames)
		cw = sw;
	perblock = (t->width - 2 - rw) / (cw + 1);
	if (perblock < 1)
		perblock = 1;

	fprintf(t->out, "\n%sGPU x NIC%s (nvidia-smi distance; * rail: a NIC NCCL "
		"uses for the GPU)\n", text_bold(t), text_reset(t));
	for (size_t from = 0; from < m.grid.nnic; from += (size_t)perblock) {
		size_t to = from + (size_t)perblock;

		if (to > m.grid.nnic)
			to = m.grid.nnic;
		if (from)
			fputc('\n', t->out);
		print_block(t, &m, from, to, rw, cw, shortnames);
	}
	if (shortnames) {
		int col = 2;

		fputs("  ", t->out);
		for (size_t k = 0; k < m.grid.nnic; k++) {
			char leg[112];
			int len;

			len = snprintf(leg, sizeof(leg), "N%zu=", k);
			report_clean(leg + len, sizeof(leg) - (size_t)len,
				     r->subj[m.grid.nics[m.col[k]]].id);
			len = (int)strlen(leg);
			if (col > 2 && col + 1 + len > t->width) {
				fputs("\n  ", t->out);
				col = 2;
			}
			fprintf(t->out, "%s%s", col > 2 ? " " : "", leg);
			col += (col > 2) + len;
		}
		fputc('\n', t->out);
	}
	fputs("  lower case: NCCL stages through host memory; ^: NCCL receives "
	      "only by GDR;\n  ACS redirect ! blocks, ~ costs performance, ? "
	      "unreadable.\n", t->out);
	if (rails_data_direct(r))
		fputs("  a rail NCCL reaches through Data Direct (<dev>_dma) is "
		      "measured at the\n  NIC's DMA function (see topo.nccl); "
		      "the cell shows the NIC's own function.\n", t->out);
	if (rails_on_path(r, "P2C"))
		fputs("  a rail NCCL calls P2C (PHB/NODE here) goes through the "
		      "CPU its GPU reaches\n  over NVLink-C2C (Grace).\n",
		      t->out);
	table_free(&m);
}
