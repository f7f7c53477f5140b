/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_CUDA_H
#define GDRCHECK_CUDA_H

#include "access/vendor.h"

#define LIBCUDA_DEFAULT "libcuda.so.1"
/* Bytes allocated per GPU for the DMA-BUF export check. */
#define CUDA_EXPORT_BYTES (2u << 20)

#include "decode/cuda_api.h"

/* libcuda's entry points as the worker resolved them. */
struct cuda_table {
	cuInit_fn init;
	cuDriverGetVersion_fn driver_get_version;
	cuDeviceGetCount_fn device_get_count;
	cuDeviceGet_fn device_get;
	cuDeviceGetName_fn device_get_name;
	cuDeviceGetAttribute_fn device_get_attribute;
	cuDeviceGetPCIBusId_fn device_get_pci_bus_id;
	cuDeviceTotalMem_fn device_total_mem;
	cuGetErrorName_fn get_error_name;
	cuDevicePrimaryCtxRetain_fn primary_ctx_retain;
	cuDevicePrimaryCtxRelease_fn primary_ctx_release;
	cuCtxSetCurrent_fn ctx_set_current;
	cuMemAlloc_fn mem_alloc;
	cuMemFree_fn mem_free;
	cuMemGetHandleForAddressRange_fn mem_get_handle_for_address_range;
	cuPointerGetAttribute_fn pointer_get_attribute;
	cuMemcpyHtoD_fn memcpy_htod;
	cuMemcpyDtoH_fn memcpy_dtoh;
	/* VMM (optional: a driver without them gets no VMM proof). */
	cuMemGetAllocationGranularity_fn mem_get_allocation_granularity;
	cuMemCreate_fn mem_create;
	cuMemRelease_fn mem_release;
	cuMemAddressReserve_fn mem_address_reserve;
	cuMemAddressFree_fn mem_address_free;
	cuMemMap_fn mem_map;
	cuMemUnmap_fn mem_unmap;
	cuMemSetAccess_fn mem_set_access;
};

/* Worker stages (run inside the isolated worker process). */
void cuda_stage_query(const struct vendor_options *opt,
		      struct vendor_facts *vf, struct stage_status *st);
void cuda_stage_export(const struct vendor_options *opt,
		       struct vendor_facts *vf, struct stage_status *st);

/* The table once libcuda is loaded and cuInit succeeded, else NULL. */
const struct cuda_table *cuda_api(const struct vendor_options *opt,
				  struct vendor_facts *vf,
				  struct stage_status *st);
/* The GPU's primary context, retained once for the worker's life. */
int cuda_primary_ctx(int ordinal, CUcontext *ctx, struct cu_call *rec,
		     struct stage_status *st);
/* Release every retained context (the worker's last act). */
void cuda_release_all(void);

/* Room for the primary contexts of ordinals [0, n) before threads ask for
 * them (cuda_primary_ctx grows its table otherwise). False: no memory. */
bool cuda_primary_reserve(int n);

/* Record a call's result with the driver's error name. */
void cuda_call_record(struct cu_call *c, int rc, double t0);

/* Fallback names for CUresult values when cuGetErrorName is absent. */
const char *cuda_result_name(int rc);

#endif
