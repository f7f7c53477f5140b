// SPDX-License-Identifier: MIT
/*
 * The floor gdrcheck is measured against on a GPU node: only the driver
 * work a GPUDirect RDMA check cannot avoid — cuInit, the attribute queries,
 * one cuMemAlloc per GPU and one DMA-BUF export — in one process, with no
 * isolation and no report. Built like gdrcheck (dlopen, no CUDA toolkit).
 * With --no-alloc it stops after the attributes: the floor of gdrcheck
 * --no-alloc, cuInit and the driver's teardown of a process that called it.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "decode/cuda_api.h"

#define LOAD(h, name, type) ((type)dlsym(h, name))

int main(int argc, char **argv)
{
	static const int attrs[] = {
		CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
		CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
		CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED,
		CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
		CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS,
		CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING,
	};
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	cuInit_fn init;
	cuDeviceGetCount_fn count;
	cuDeviceGet_fn get;
	cuDeviceGetAttribute_fn attr;
	cuDevicePrimaryCtxRetain_fn retain;
	cuDevicePrimaryCtxRelease_fn release;
	cuCtxSetCurrent_fn set;
	cuMemAlloc_fn alloc;
	cuMemFree_fn mfree;
	cuMemGetHandleForAddressRange_fn handle;
	int n = 0, exported = 0;
	int no_alloc = argc > 1 && !strcmp(argv[1], "--no-alloc");

	if (!h) {
		fprintf(stderr, "cuda-floor: %s\n", dlerror());
		return 1;
	}
	init = LOAD(h, "cuInit", cuInit_fn);
	count = LOAD(h, "cuDeviceGetCount", cuDeviceGetCount_fn);
	get = LOAD(h, "cuDeviceGet", cuDeviceGet_fn);
	attr = LOAD(h, "cuDeviceGetAttribute", cuDeviceGetAttribute_fn);
	retain = LOAD(h, "cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain_fn);
	release = LOAD(h, "cuDevicePrimaryCtxRelease_v2",
		       cuDevicePrimaryCtxRelease_fn);
	set = LOAD(h, "cuCtxSetCurrent", cuCtxSetCurrent_fn);
	alloc = LOAD(h, "cuMemAlloc_v2", cuMemAlloc_fn);
	mfree = LOAD(h, "cuMemFree_v2", cuMemFree_fn);
	handle = LOAD(h, "cuMemGetHandleForAddressRange",
		      cuMemGetHandleForAddressRange_fn);
	if (!init || !count || !get || !attr || !retain || !release || !set ||
	    !alloc || !mfree || !handle || init(0) || count(&n))
		return 1;
	for (int i = 0; i < n; i++) {
		CUcontext ctx;
		CUdeviceptr p;
		CUdevice d;
		int v, fd = -1;

		if (get(&d, i))
			return 1;
		for (size_t a = 0; a < sizeof(attrs) / sizeof(attrs[0]); a++)
			attr(&v, attrs[a], d);
		if (no_alloc)
			continue;
		if (retain(&ctx, d) || set(ctx) || alloc(&p, 2u << 20))
			return 1;
		if (!handle(&fd, p, 2u << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
			    0) && fd >= 0) {
			exported++;
			close(fd);
		}
		mfree(p);
		set(NULL);
		release(d);
	}
	printf("cuda-floor: %d GPU(s), %d dma-buf export(s)\n", n, exported);
	return 0;
}
