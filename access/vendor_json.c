// SPDX-License-Identifier: MIT
/*
 * struct vendor_facts <-> JSON (see vendor_json.h). One table per
 * structure names each field, its type and its place; the encoder and the
 * decoder walk the same tables, so a field cannot be written and not read.
 */
#include "access/vendor_json.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access/sysroot.h"

enum ftype { T_BOOL, T_INT, T_UINT, T_LL, T_ULL, T_DBL, T_STR, T_OBJ, T_ARR, T_LINES };

/* An array in place, or a pointer to one of the node-sized arrays. */
enum node_sized { IN_PLACE, BY_GPUS, BY_NICS, BY_PAIRS };

struct field {
	const char *name;
	enum ftype type;
	size_t off;
	size_t size;		/* T_STR, T_LINES: bytes per string; T_ARR: per element */
	const struct field *sub;	/* T_OBJ, T_ARR */
	size_t cap;		/* T_ARR, T_LINES: elements */
	long count_off;		/* T_ARR: offset of its int count; -1: cap */
	enum node_sized node;	/* T_ARR: a pointer to an array of vf_caps */
};

#define MEMBER(s, f) (((s *)0)->f)
#define F(s, f, t) { #f, t, offsetof(s, f), sizeof(MEMBER(s, f)), NULL, 0, -1, IN_PLACE }
#define B(s, f) F(s, f, T_BOOL)
#define I(s, f) F(s, f, T_INT)
#define U(s, f) F(s, f, T_UINT)
#define LL(s, f) F(s, f, T_LL)
#define ULL(s, f) F(s, f, T_ULL)
#define D(s, f) F(s, f, T_DBL)
#define S(s, f) F(s, f, T_STR)
#define O(s, f, tab) { #f, T_OBJ, offsetof(s, f), sizeof(MEMBER(s, f)), tab, 0, -1, IN_PLACE }
#define A(s, f, tab, n) { #f, T_ARR, offsetof(s, f), sizeof(MEMBER(s, f)[0]), tab, \
			  sizeof(MEMBER(s, f)) / sizeof(MEMBER(s, f)[0]), \
			  (long)offsetof(s, n), IN_PLACE }
#define AF(s, f, tab) { #f, T_ARR, offsetof(s, f), sizeof(MEMBER(s, f)[0]), tab, \
			sizeof(MEMBER(s, f)) / sizeof(MEMBER(s, f)[0]), -1, IN_PLACE }
/* A node-sized array: its capacity is vf_caps' @by; @n counts, or -1: all. */
#define NA(s, f, tab, n, by) { #f, T_ARR, offsetof(s, f), sizeof(*MEMBER(s, f)), \
			       tab, 0, (long)offsetof(s, n), by }
#define NAF(s, f, tab, by) { #f, T_ARR, offsetof(s, f), sizeof(*MEMBER(s, f)), \
			     tab, 0, -1, by }
#define LINES(s, f) { #f, T_LINES, offsetof(s, f), sizeof(MEMBER(s, f)[0]), NULL, \
		      sizeof(MEMBER(s, f)) / sizeof(MEMBER(s, f)[0]), -1, IN_PLACE }
#define END { NULL, T_BOOL, 0, 0, NULL, 0, -1, IN_PLACE }
/*
 * A field added after captures of this format version were made (Data
 * Direct, libmlx5): a document without it decodes, the field left zero
 * (count_off -2 marks it; only arrays read count_off).
 */
#define OPTF(s, f, t) { #f, t, offsetof(s, f), sizeof(MEMBER(s, f)), NULL, 0, -2, IN_PLACE }
#define BO(s, f) OPTF(s, f, T_BOOL)
#define IO(s, f) OPTF(s, f, T_INT)
#define UO(s, f) OPTF(s, f, T_UINT)
#define SO(s, f) OPTF(s, f, T_STR)
#define OO(s, f, tab) { #f, T_OBJ, offsetof(s, f), sizeof(MEMBER(s, f)), tab, 0, -2, IN_PLACE }

static const struct field t_call[] = {
	B(struct cu_call, called), I(struct cu_call, rc),
	S(struct cu_call, name), D(struct cu_call, ms), END
};

static const struct field t_stage[] = {
	I(struct stage_status, state), S(struct stage_status, call),
	I(struct stage_status, signal), I(struct stage_status, err),
	D(struct stage_status, seconds), I(struct stage_status, pid),
	D(struct stage_status, started_ms), D(struct stage_status, limit),
	B(struct stage_status, by_deadline), S(struct stage_status, output),
	ULL(struct stage_status, output_bytes),
	B(struct stage_status, output_truncated), END
};

static const struct field t_lib[] = {
	B(struct lib_facts, attempted), B(struct lib_facts, loaded),
	S(struct lib_facts, path), S(struct lib_facts, error),
	S(struct lib_facts, missing_required),
	S(struct lib_facts, missing_optional), END
};

static const struct field t_gpu[] = {
	I(struct cuda_gpu, ordinal), S(struct cuda_gpu, name),
	S(struct cuda_gpu, pci), I(struct cuda_gpu, cc_major),
	I(struct cuda_gpu, cc_minor), ULL(struct cuda_gpu, total_mem),
	I(struct cuda_gpu, attr_gdr), I(struct cuda_gpu, attr_dmabuf),
	I(struct cuda_gpu, attr_flush), I(struct cuda_gpu, attr_ordering),
	I(struct cuda_gpu, attr_vmm_gdr), IO(struct cuda_gpu, compute_mode),
	O(struct cuda_gpu, attr_call, t_call),
	U(struct cuda_gpu, attr_unanswered),
	O(struct cuda_gpu, ctx_retain, t_call), O(struct cuda_gpu, alloc, t_call),
	O(struct cuda_gpu, export_call, t_call),
	ULL(struct cuda_gpu, export_size), I(struct cuda_gpu, ptr_gdr_capable),
	O(struct cuda_gpu, enum_call, t_call), S(struct cuda_gpu, enum_fn),
	B(struct cuda_gpu, complete), O(struct cuda_gpu, setup_call, t_call),
	B(struct cuda_gpu, fd_checked), B(struct cuda_gpu, fd_is_dmabuf),
	S(struct cuda_gpu, fd_link), S(struct cuda_gpu, fd_exp_name),
	LL(struct cuda_gpu, fd_size), END
};

static const struct field t_cuda[] = {
	O(struct cuda_facts, lib, t_lib), B(struct cuda_facts, have_export_fn),
	O(struct cuda_facts, init, t_call),
	O(struct cuda_facts, version_call, t_call),
	I(struct cuda_facts, driver_version),
	O(struct cuda_facts, count_call, t_call), I(struct cuda_facts, count),
	I(struct cuda_facts, gpus_recorded),
	NA(struct cuda_facts, gpus, t_gpu, gpus_recorded, BY_GPUS), END
};

static const struct field t_vnic[] = {
	S(struct verbs_nic, name), I(struct verbs_nic, open_errno),
	B(struct verbs_nic, opened), I(struct verbs_nic, phys_ports),
	B(struct verbs_nic, probe_run), I(struct verbs_nic, probe_errno),
	B(struct verbs_nic, probe_returned_mr), I(struct verbs_nic, pd_errno),
	IO(struct verbs_nic, mlx5), BO(struct verbs_nic, dd_probe_run),
	IO(struct verbs_nic, dd_probe_errno), BO(struct verbs_nic, dd_path_called),
	IO(struct verbs_nic, dd_path_rc), SO(struct verbs_nic, dd_path),
	END
};

static const struct field t_verbs[] = {
	O(struct verbs_facts, lib, t_lib),
	B(struct verbs_facts, have_reg_dmabuf_mr),
	B(struct verbs_facts, have_reg_mr_iova2),
	B(struct verbs_facts, have_query_gid_ex),
	OO(struct verbs_facts, mlx5_lib, t_lib),
	BO(struct verbs_facts, have_mlx5_is_supported),
	BO(struct verbs_facts, have_dd_sysfs_path),
	BO(struct verbs_facts, have_mlx5_reg_dmabuf_mr),
	B(struct verbs_facts, list_called), I(struct verbs_facts, list_errno),
	I(struct verbs_facts, name_errno), I(struct verbs_facts, count),
	NA(struct verbs_facts, nics, t_vnic, count, BY_NICS), END
};

static const struct field t_mr[] = {
	B(struct mr_result, tried), B(struct mr_result, ok),
	I(struct mr_result, err), S(struct mr_result, call),
	D(struct mr_result, ms_cold), D(struct mr_result, ms_warm),
	D(struct mr_result, ms_dereg), U(struct mr_result, lkey),
	U(struct mr_result, rkey), B(struct mr_result, relaxed_ordering),
	BO(struct mr_result, data_direct), END
};

static const struct field t_dp[] = {
	B(struct dp_result, tried), B(struct dp_result, ok),
	S(struct dp_result, step), I(struct dp_result, err),
	I(struct dp_result, wc_status), B(struct dp_result, timeout),
	B(struct dp_result, write_ok), B(struct dp_result, read_ok),
	B(struct dp_result, verified_read), B(struct dp_result, verified_gpu),
	D(struct dp_result, gbps), O(struct dp_result, dtoh, t_call),
	O(struct dp_result, htod, t_call), I(struct dp_result, write_fault),
	I(struct dp_result, read_fault), I(struct dp_result, fault_round),
	B(struct dp_result, read_own_pattern), I(struct dp_result, iters),
	ULL(struct dp_result, bytes), END
};

static const struct field t_pair[] = {
	I(struct reg_pair, gpu), S(struct reg_pair, nic), I(struct reg_pair, port),
	I(struct reg_pair, gid_index), I(struct reg_pair, link_layer),
	S(struct reg_pair, skip), BO(struct reg_pair, dp_off_rail),
	BO(struct reg_pair, reg_inferred),
	IO(struct reg_pair, gpu_rc),
	SO(struct reg_pair, gpu_fn),
	O(struct reg_pair, export_call, t_call),
	UO(struct reg_pair, export_flags),
	O(struct reg_pair, peermem, t_mr), O(struct reg_pair, dmabuf, t_mr),
	O(struct reg_pair, dp_peermem, t_dp), O(struct reg_pair, dp_dmabuf, t_dp),
	O(struct reg_pair, vmm_export_call, t_call),
	O(struct reg_pair, vmm_peermem, t_mr), O(struct reg_pair, vmm_dmabuf, t_mr),
	O(struct reg_pair, dp_vmm_peermem, t_dp),
	O(struct reg_pair, dp_vmm_dmabuf, t_dp), END
};

static const struct field t_vmm[] = {
	I(struct reg_vmm_gpu, skip), S(struct reg_vmm_gpu, missing),
	I(struct reg_vmm_gpu, attr), O(struct reg_vmm_gpu, attr_call, t_call),
	B(struct reg_vmm_gpu, ok), S(struct reg_vmm_gpu, fail_fn),
	O(struct reg_vmm_gpu, fail, t_call),
	ULL(struct reg_vmm_gpu, granularity), ULL(struct reg_vmm_gpu, size),
	B(struct reg_vmm_gpu, gdr_capable_flag), END
};

static const struct field t_rnic[] = {
	S(struct reg_nic, nic), I(struct reg_nic, open_err),
	I(struct reg_nic, pd_err), O(struct reg_nic, host, t_mr),
	B(struct reg_nic, g2g_tried), B(struct reg_nic, g2g_ok),
	I(struct reg_nic, g2g_src), I(struct reg_nic, g2g_dst),
	I(struct reg_nic, g2g_fault), S(struct reg_nic, g2g_error), END
};

static const struct field t_reg[] = {
	B(struct reg_facts, ran), B(struct reg_facts, cuda),
	ULL(struct reg_facts, bytes), I(struct reg_facts, gpus_allocated),
	O(struct reg_facts, alloc_fail, t_call), S(struct reg_facts, alloc_fn),
	I(struct reg_facts, npairs), B(struct reg_facts, pairs_truncated),
	NA(struct reg_facts, pairs, t_pair, npairs, BY_PAIRS),
	I(struct reg_facts, nnics),
	NA(struct reg_facts, nics, t_rnic, nnics, BY_NICS),
	NAF(struct reg_facts, vmm, t_vmm, BY_GPUS),
	B(struct reg_facts, kmsg_readable), I(struct reg_facts, kmsg_errno),
	I(struct reg_facts, kmsg_count), LINES(struct reg_facts, kmsg), END
};

static const struct field t_nvlink[] = {
	I(struct nvml_link, state_rc), I(struct nvml_link, active),
	I(struct nvml_link, remote_rc), S(struct nvml_link, remote_pci),
	U(struct nvml_link, remote_device_id), I(struct nvml_link, type_rc),
	I(struct nvml_link, remote_type), END
};

static const struct field t_nvgpu[] = {
	I(struct nvml_gpu, index), S(struct nvml_gpu, uuid),
	S(struct nvml_gpu, pci), O(struct nvml_gpu, fail, t_call),
	S(struct nvml_gpu, fail_fn), I(struct nvml_gpu, links_asked),
	A(struct nvml_gpu, links, t_nvlink, links_asked),
	I(struct nvml_gpu, c2c_rc), I(struct nvml_gpu, c2c),
	B(struct nvml_gpu, complete), END
};

static const struct field t_nvml[] = {
	O(struct nvml_facts, lib, t_lib), B(struct nvml_facts, have_remote_type),
	B(struct nvml_facts, have_c2c), O(struct nvml_facts, init, t_call),
	S(struct nvml_facts, driver_version),
	O(struct nvml_facts, count_call, t_call), I(struct nvml_facts, count),
	I(struct nvml_facts, gpus_recorded),
	O(struct nvml_facts, shutdown, t_call),
	NA(struct nvml_facts, gpus, t_nvgpu, gpus_recorded, BY_GPUS), END
};

static const struct field t_facts[] = {
	AF(struct vendor_facts, stage, t_stage),
	O(struct vendor_facts, cuda, t_cuda),
	O(struct vendor_facts, verbs, t_verbs),
	O(struct vendor_facts, nvml, t_nvml),
	O(struct vendor_facts, reg, t_reg), END
};

/* --- encoding ------------------------------------------------------------ */

static json_t *enc_obj(const struct field *tab, const char *base,
			const struct vf_caps *caps);

/* Entries of a node-sized array of kind @by under @caps. */
static size_t node_cap(enum node_sized by, const struct vf_caps *caps)
{
	int n = by == BY_GPUS ? caps->gpus : by == BY_NICS ? caps->nics :
		caps->pairs;

	return n < 0 ? 0 : (size_t)n;
}

/* Where an array field's elements are, and how many fit there. */
static char *arr_store(const struct field *f, const char *base,
		       const struct vf_caps *caps, size_t *cap)
{
	char *p;

	if (f->node == IN_PLACE) {
		*cap = f->cap;
		return (char *)base + f->off;
	}
	memcpy(&p, base + f->off, sizeof(p));
	*cap = p ? node_cap(f->node, caps) : 0;
	return p;
}

/* Text as it is when UTF-8, else { "hex": "..." } (a library's raw bytes). */
static json_t *enc_str(const char *s, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	size_t n = strnlen(s, size);
	json_t *v = json_stringn(s, n), *o;
	char *hex;

	if (v)
		return v;
	hex = malloc(2 * n + 1);
	if (!hex)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		hex[2 * i] = digits[(unsigned char)s[i] >> 4];
		hex[2 * i + 1] = digits[(unsigned char)s[i] & 15];
	}
	hex[2 * n] = '\0';
	o = json_pack("{s:s}", "hex", hex);
	free(hex);
	return o;
}

/* Elements of an array field: its count member, within [0, cap]. */
static size_t arr_len(const struct field *f, const char *base, size_t cap)
{
	int n;

	if (f->count_off < 0)
		return cap;
	memcpy(&n, base + f->count_off, sizeof(n));
	return n < 0 ? 0 : (size_t)n > cap ? cap : (size_t)n;
}

static json_t *enc_field(const struct field *f, const char *base,
			 const struct vf_caps *caps)
{
	const char *p = base + f->off;
	size_t cap, len;
	json_t *a;
	int i;
	unsigned int u;
	long long ll;
	unsigned long long ull;
	double d;

	switch (f->type) {
	case T_BOOL:
		return json_boolean(*(const bool *)p);
	case T_INT:
		memcpy(&i, p, sizeof(i));
		return json_integer(i);
	case T_UINT:
		memcpy(&u, p, sizeof(u));
		return json_integer(u);
	case T_LL:
		memcpy(&ll, p, sizeof(ll));
		return json_integer(ll);
	case T_ULL:	/* the bits, as jansson's signed integer */
		memcpy(&ull, p, sizeof(ull));
		return json_integer((json_int_t)ull);
	case T_DBL:
		memcpy(&d, p, sizeof(d));
		return isfinite(d) ? json_real(d) : json_null();
	case T_STR:
		return enc_str(p, f->size);
	case T_OBJ:
		return enc_obj(f->sub, p, caps);
	case T_ARR:
	case T_LINES:
		a = json_array();
		p = arr_store(f, base, caps, &cap);
		len = f->type == T_ARR ? arr_len(f, base, cap) : cap;
		for (size_t k = 0; a && k < len; k++) {
			const char *e = p + k * f->size;

			if (json_array_append_new(a, f->type == T_ARR ?
						  enc_obj(f->sub, e, caps) :
						  enc_str(e, f->size))) {
				json_decref(a);
				return NULL;
			}
		}
		return a;
	}
	return NULL;
}

static json_t *enc_obj(const struct field *tab, const char *base,
			const struct vf_caps *caps)
{
	json_t *o = json_object();

	for (const struct field *f = tab; o && f->name; f++) {
		if (json_object_set_new_nocheck(o, f->name,
						enc_field(f, base, caps))) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

char *vendor_json_encode(const struct vendor_facts *vf)
{
	json_t *doc = json_pack("{s:s,s:i,s:{s:i,s:i,s:i},s:o?}", "format",
				VENDOR_FACTS_FORMAT, "version",
				VENDOR_FACTS_VERSION, "caps",
				"gpus", vf->cap.gpus, "nics", vf->cap.nics,
				"pairs", vf->cap.pairs, "facts",
				enc_obj(t_facts, (const char *)vf, &vf->cap));
	char *text;

	if (!doc || !json_object_get(doc, "facts")) {
		json_decref(doc);
		return NULL;
	}
	/* Reals with 17 digits: every double reads back as itself. */
	text = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	return text;
}

/* --- decoding ------------------------------------------------------------ */

struct dec {
	char path[256];
	char *err;
	size_t errlen;
	const struct vf_caps *caps;	/* of the arrays decoded into */
	struct vf_caps recorded;	/* the recorder's (document "caps") */
};

static int fail(struct dec *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct dec *d, const char *fmt, ...)
{
	char why[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(d->err, d->errlen, "%s: %s", d->path, why);
	return -1;
}

static int dec_obj(struct dec *d, const struct field *tab, json_t *o, char *base);

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int dec_str(struct dec *d, json_t *v, char *p, size_t size)
{
	const char *s;
	size_t n;

	if (json_is_string(v)) {
		n = json_string_length(v);
		if (n >= size || memchr(json_string_value(v), '\0', n))
			return fail(d, "string longer than %zu bytes or with NUL",
				    size - 1);
		memcpy(p, json_string_value(v), n);
		p[n] = '\0';
		return 0;
	}
	s = json_string_value(json_object_get(v, "hex"));
	if (!json_is_object(v) || !s)
		return fail(d, "not a string");
	n = strlen(s);
	if (n % 2 || n / 2 >= size)
		return fail(d, "bad hex string");
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0 || !(hi | lo))
			return fail(d, "bad hex string");
		p[i] = (char)(hi << 4 | lo);
	}
	p[n / 2] = '\0';
	return 0;
}

static int dec_int(struct dec *d, json_t *v, long long lo, long long hi,
		   long long *out)
{
	if (!json_is_integer(v))
		return fail(d, "not an integer");
	*out = json_integer_value(v);
	if (*out < lo || *out > hi)
		return fail(d, "%lld out of range", *out);
	return 0;
}

static int dec_field(struct dec *d, const struct field *f, json_t *v, char *base)
{
	char *p = base + f->off;
	size_t n, cap, at = strlen(d->path);
	long long ll = 0;
	int i;
	unsigned int u;
	double x;

	switch (f->type) {
	case T_BOOL:
		if (!json_is_boolean(v))
			return fail(d, "not true or false");
		*(bool *)p = json_is_true(v);
		return 0;
	case T_INT:
		if (dec_int(d, v, INT32_MIN, INT32_MAX, &ll))
			return -1;
		i = (int)ll;
		memcpy(p, &i, sizeof(i));
		return 0;
	case T_UINT:
		if (dec_int(d, v, 0, UINT32_MAX, &ll))
			return -1;
		u = (unsigned int)ll;
		memcpy(p, &u, sizeof(u));
		return 0;
	case T_LL:
	case T_ULL:
		if (dec_int(d, v, INT64_MIN, INT64_MAX, &ll))
			return -1;
		memcpy(p, &ll, sizeof(ll));
		return 0;
	case T_DBL:
		if (json_is_null(v))
			x = NAN;
		else if (json_is_number(v))
			x = json_number_value(v);
		else
			return fail(d, "not a number");
		memcpy(p, &x, sizeof(x));
		return 0;
	case T_STR:
		return dec_str(d, v, p, f->size);
	case T_OBJ:
		return dec_obj(d, f->sub, v, p);
	case T_ARR:
	case T_LINES:
		if (!json_is_array(v))
			return fail(d, "not an array");
		n = json_array_size(v);
		p = arr_store(f, base, d->caps, &cap);
		if (n > cap)
			return fail(d, "%zu elements, at most %zu", n, cap);
		for (size_t k = 0; k < n; k++) {
			json_t *e = json_array_get(v, k);
			int ret;

			snprintf(d->path + at, sizeof(d->path) - at, "[%zu]", k);
			ret = f->type == T_ARR ?
			      dec_obj(d, f->sub, e, p + k * f->size) :
			      dec_str(d, e, p + k * f->size, f->size);
			if (ret)
				return -1;
		}
		d->path[at] = '\0';
		return 0;
	}
	return fail(d, "unknown field type");
}

/*
 * Replay trusts no count: an array's count member must agree with the
 * elements decoded. A recorded count (gpus_recorded, npairs, nnics: what
 * the array holds) equals them; a total (verbs.count, all the devices)
 * may exceed them only where the array is full. A capture that said
 * npairs 100000 beside two pairs sent the gates past the array.
 */
static int check_counts(struct dec *d, const struct field *tab, json_t *o,
			const char *base)
{
	for (const struct field *f = tab; f->name; f++) {
		const struct field *c = NULL;
		size_t n, cap;
		int count;

		if (f->type != T_ARR || f->count_off < 0)
			continue;
		for (const struct field *g = tab; g->name && !c; g++)
			if ((long)g->off == f->count_off && g->type == T_INT)
				c = g;
		if (!c)
			continue;
		n = json_array_size(json_object_get(o, f->name));
		memcpy(&count, base + f->count_off, sizeof(count));
		cap = f->node == IN_PLACE ? f->cap : node_cap(f->node, &d->recorded);
		if (count < 0 || (size_t)count < n ||
		    ((size_t)count > n && (n < cap || strcmp(c->name, "count"))))
			return fail(d, "%s is %d but %s holds %zu", c->name, count,
				    f->name, n);
	}
	return 0;
}

static int dec_obj(struct dec *d, const struct field *tab, json_t *o, char *base)
{
	size_t at = strlen(d->path);

	if (!json_is_object(o))
		return fail(d, "not an object");
	for (const struct field *f = tab; f->name; f++) {
		json_t *v = json_object_get(o, f->name);

		snprintf(d->path + at, sizeof(d->path) - at, ".%s", f->name);
		if (!v && f->count_off == -2)
			continue;	/* added later: stays zero */
		if (!v)
			return fail(d, "missing");
		if (dec_field(d, f, v, base))
			return -1;
	}
	d->path[at] = '\0';
	return check_counts(d, tab, o, base);
}

/*
 * compute_mode came after captures of this version: a GPU recorded without
 * it was not asked, which is "unknown", not the 0 (DEFAULT) IO leaves.
 */
static void compute_mode_compat(json_t *doc, struct vendor_facts *vf)
{
	json_t *gpus = json_object_get(json_object_get(json_object_get(doc,
				"facts"), "cuda"), "gpus");
	size_t n = json_array_size(gpus);

	for (size_t i = 0; i < n && i < (size_t)vf->cap.gpus; i++) {
		struct cuda_gpu *g = &vf->cuda.gpus[i];

		if (json_object_get(json_array_get(gpus, i), "compute_mode"))
			continue;
		g->compute_mode = CU_ATTR_UNKNOWN;
		g->attr_unanswered |= CU_SLOT_BIT(CU_SLOT_COMPUTE_MODE);
	}
}

/*
 * The capacities the recorder had: the document's "caps", or those of the
 * fixed arrays of the gdrcheck that wrote documents without them.
 */
#define LEGACY_CAPS { .gpus = 128, .nics = 128, .pairs = 256 }

static int recorded_caps(struct dec *d, json_t *doc)
{
	static const struct vf_caps legacy = LEGACY_CAPS;
	static const struct {
		const char *name;
		size_t off;
		long long max;
	} keys[] = {
		{ "gpus", offsetof(struct vf_caps, gpus), VF_CAPS_MAX_GPUS },
		{ "nics", offsetof(struct vf_caps, nics), VF_CAPS_MAX_NICS },
		{ "pairs", offsetof(struct vf_caps, pairs), VF_CAPS_MAX_PAIRS },
	};
	json_t *caps = json_object_get(doc, "caps");
	long long v = 0;

	d->recorded = legacy;
	if (!caps)
		return 0;
	if (!json_is_object(caps)) {
		snprintf(d->path, sizeof(d->path), "caps");
		return fail(d, "not an object");
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		int n;

		snprintf(d->path, sizeof(d->path), "caps.%s", keys[i].name);
		if (dec_int(d, json_object_get(caps, keys[i].name), 0,
			    keys[i].max, &v))
			return -1;
		n = (int)v;
		memcpy((char *)&d->recorded + keys[i].off, &n, sizeof(n));
	}
	return 0;
}

/* The fewest bytes an object of @tab encodes to: its required keys. */
static size_t min_text(const struct field *tab)
{
	size_t n = 2;

	for (const struct field *f = tab; f->name; f++)
		if (f->count_off != -2)
			n += strlen(f->name) + 4 +
			     (f->type == T_OBJ ? min_text(f->sub) : 0);
	return n;
}

static size_t array_at(json_t *facts, const char *obj, const char *arr)
{
	return json_array_size(json_object_get(json_object_get(facts, obj), arr));
}

/*
 * Size the node-sized arrays from the document's own arrays. The caps of
 * vendor_facts_alloc() bound them, and so does the text: an element is no
 * shorter than its keys, so a small file cannot ask for a large block.
 */
static int caps_from_doc(struct dec *d, json_t *doc, size_t len,
			 struct vendor_facts *vf)
{
	json_t *facts = json_object_get(doc, "facts");
	static const struct {
		const char *obj, *arr;
		const struct field *tab;
		size_t max;
		enum node_sized by;
	} arrays[] = {
		{ "cuda", "gpus", t_gpu, VF_CAPS_MAX_GPUS, BY_GPUS },
		{ "nvml", "gpus", t_nvgpu, VF_CAPS_MAX_GPUS, BY_GPUS },
		{ "reg", "vmm", t_vmm, VF_CAPS_MAX_GPUS, BY_GPUS },
		{ "verbs", "nics", t_vnic, VF_CAPS_MAX_NICS, BY_NICS },
		{ "reg", "nics", t_rnic, VF_CAPS_MAX_NICS, BY_NICS },
		{ "reg", "pairs", t_pair, VF_CAPS_MAX_PAIRS, BY_PAIRS },
	};
	struct vf_caps caps = { 0, 0, 0 };
	size_t bytes = 0;
	int err;

	if (recorded_caps(d, doc))
		return -1;
	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) {
		size_t n = array_at(facts, arrays[i].obj, arrays[i].arr);
		int *cap = arrays[i].by == BY_GPUS ? &caps.gpus :
			   arrays[i].by == BY_NICS ? &caps.nics : &caps.pairs;

		snprintf(d->path, sizeof(d->path), "facts.%s.%s",
			 arrays[i].obj, arrays[i].arr);
		if (n > arrays[i].max)
			return fail(d, "%zu elements, at most %zu", n,
				    arrays[i].max);
		if (n > node_cap(arrays[i].by, &d->recorded))
			return fail(d, "%zu elements, more than the capacity "
				    "%zu it was recorded with", n,
				    node_cap(arrays[i].by, &d->recorded));
		bytes += n * min_text(arrays[i].tab);
		/* The longest array of each kind sizes its arrays. */
		if ((int)n > *cap)
			*cap = (int)n;
	}
	snprintf(d->path, sizeof(d->path), "facts");
	if (bytes > len)
		return fail(d, "more elements than %zu bytes can hold", len);
	err = vendor_facts_alloc(vf, &caps, false);
	if (err)
		return fail(d, "%s", strerror(-err));
	d->caps = &vf->cap;
	return 0;
}

int vendor_json_decode(const char *text, size_t len, struct vendor_facts *vf,
		       char *err, size_t errlen)
{
	struct dec d = { .path = "facts", .err = err, .errlen = errlen };
	json_error_t jerr;
	json_t *doc, *v;
	int ret = -1;

	memset(vf, 0, sizeof(*vf));
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		snprintf(err, errlen, "not JSON (line %d: %s)", jerr.line,
			 jerr.text);
		return -1;
	}
	v = json_object_get(doc, "format");
	if (!json_is_string(v) || strcmp(json_string_value(v), VENDOR_FACTS_FORMAT)) {
		snprintf(err, errlen, "not a %s document", VENDOR_FACTS_FORMAT);
		goto out;
	}
	v = json_object_get(doc, "version");
	if (!json_is_integer(v) || json_integer_value(v) != VENDOR_FACTS_VERSION) {
		if (json_is_integer(v))
			snprintf(err, errlen, "version %lld, this gdrcheck reads %d",
				 (long long)json_integer_value(v),
				 VENDOR_FACTS_VERSION);
		else
			snprintf(err, errlen, "no version, this gdrcheck reads %d",
				 VENDOR_FACTS_VERSION);
		goto out;
	}
	ret = caps_from_doc(&d, doc, len, vf);
	if (!ret)
		ret = dec_obj(&d, t_facts, json_object_get(doc, "facts"),
			      (char *)vf);
	if (!ret)
		compute_mode_compat(doc, vf);
	/* A stage caught "running" was never finished: not a state to replay. */
	for (int s = 0; !ret && s < WSTAGE_COUNT; s++) {
		if ((unsigned int)vf->stage[s].state > STAGE_DEADLINE) {
			snprintf(err, errlen, "facts.stage[%d].state: %d unknown",
				 s, (int)vf->stage[s].state);
			ret = -1;
		}
	}
out:
	json_decref(doc);
	if (ret)
		vendor_facts_free(vf);
	return ret;
}

/* --- capture and replay -------------------------------------------------- */

void vendor_json_record(struct sysroot *sr, const struct vendor_facts *vf)
{
	char *text;

	if (!sysroot_recording(sr))
		return;
	text = vendor_json_encode(vf);
	if (!text)
		return;		/* a capture without facts: replays say so */
	sysroot_record_file(sr, VENDOR_FACTS_PATH, text, strlen(text));
	free(text);
}

/* Largest facts file read back: 256 pairs of outcomes fit with room. */
#define VENDOR_FACTS_MAX (16u << 20)

int vendor_json_replay(struct sysroot *sr, struct vendor_facts *vf, char *err,
		       size_t errlen)
{
	struct stat st;
	char *text = NULL;
	ssize_t n = 0;
	int fd, ret = -1;

	fd = sysroot_open_regular(sr, VENDOR_FACTS_PATH);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", VENDOR_FACTS_PATH,
			 sysroot_strerror(-fd));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < 0 ||
	    (unsigned long long)st.st_size > VENDOR_FACTS_MAX) {
		snprintf(err, errlen, "%s: not a regular file of at most %u bytes",
			 VENDOR_FACTS_PATH, VENDOR_FACTS_MAX);
		goto out;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		snprintf(err, errlen, "%s: out of memory", VENDOR_FACTS_PATH);
		goto out;
	}
	while (n < st.st_size) {
		ssize_t r = read(fd, text + n, (size_t)(st.st_size - n));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(err, errlen, "%s: %s", VENDOR_FACTS_PATH,
				 r ? strerror(errno) : "shorter than its size");
			goto out;
		}
		n += r;
	}
	ret = vendor_json_decode(text, (size_t)n, vf, err, errlen);
	if (ret) {
		char why[VF_TEXT];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "%s: %s", VENDOR_FACTS_PATH, why);
	} else {
		snprintf(vf->replayed_from, sizeof(vf->replayed_from), "%s%s",
			 sysroot_get(sr), VENDOR_FACTS_PATH);
		ret = 1;
	}
out:
	free(text);
	close(fd);
	return ret;
}
