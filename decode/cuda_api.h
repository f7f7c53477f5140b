/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_CUDA_API_H
#define GDRCHECK_CUDA_API_H

/*
 * The small subset of the CUDA Driver API gdrcheck calls, declared here so
 * that building needs no CUDA toolkit. Numeric values are fixed by the
 * documented driver ABI (cuda.h); symbol names are the versioned exports of
 * libcuda.so.1 (e.g. cuMemAlloc_v2, which cuda.h maps cuMemAlloc to).
 */
#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef unsigned long long CUdeviceptr;

#define CUDA_SUCCESS			0
#define CUDA_ERROR_INVALID_VALUE	1
#define CUDA_ERROR_OUT_OF_MEMORY	2
#define CUDA_ERROR_NOT_INITIALIZED	3
#define CUDA_ERROR_DEINITIALIZED	4
#define CUDA_ERROR_NO_DEVICE		100
#define CUDA_ERROR_INVALID_DEVICE	101
#define CUDA_ERROR_OPERATING_SYSTEM	304
#define CUDA_ERROR_NOT_SUPPORTED	801
#define CUDA_ERROR_SYSTEM_NOT_READY	802
#define CUDA_ERROR_SYSTEM_DRIVER_MISMATCH 803
#define CUDA_ERROR_UNKNOWN		999
#define CUDA_ERROR_INSUFFICIENT_DRIVER	35
/* "CUDA-capable device(s) is/are busy or unavailable": the compute mode
 * (EXCLUSIVE_PROCESS held by another process, or PROHIBITED). */
#define CUDA_ERROR_DEVICE_UNAVAILABLE	46

/* CUdevice_attribute */
#define CU_DEVICE_ATTRIBUTE_COMPUTE_MODE				20
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR			75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR			76
#define CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED		102
#define CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED	110
#define CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED			116
#define CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS	117
#define CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING		118
#define CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED				124

/* CUcomputemode (1, EXCLUSIVE_THREAD, is gone since CUDA 8) */
#define CU_COMPUTEMODE_DEFAULT			0
#define CU_COMPUTEMODE_EXCLUSIVE_THREAD		1
#define CU_COMPUTEMODE_PROHIBITED		2
#define CU_COMPUTEMODE_EXCLUSIVE_PROCESS	3

/* CUflushGPUDirectRDMAWritesOptions bits */
#define CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST	(1 << 0)
#define CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_MEMOPS	(1 << 1)

/* CUGPUDirectRDMAWritesOrdering */
#define CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE		0
#define CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER	100
#define CU_GPU_DIRECT_RDMA_WRITES_ORDERING_ALL_DEVICES	200

/* CUmemRangeHandleType */
#define CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD	0x1
/* cuMemGetHandleForAddressRange flags (CUDA >= 12.8): map the dma-buf
 * through PCIe, not C2C (NCCL net.cc getHandleForAddressRangeFlags). */
#define CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE	0x1

/* CUpointer_attribute */
#define CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE 15

/*
 * Virtual memory management (cuMemCreate and friends, CUDA >= 10.2), laid
 * out as cuda.h declares it: NCCL allocates its buffers so (see
 * access/reg.c).
 */
typedef unsigned long long CUmemGenericAllocationHandle;

/* CUmemAllocationType, CUmemLocationType, CUmemAllocationHandleType */
#define CU_MEM_ALLOCATION_TYPE_PINNED			0x1
#define CU_MEM_LOCATION_TYPE_DEVICE			0x1
#define CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR	0x1
/* CUmemAllocationGranularity_flags */
#define CU_MEM_ALLOC_GRANULARITY_MINIMUM		0x0
/* CUmemAccess_flags */
#define CU_MEM_ACCESS_FLAGS_PROT_READWRITE		0x3

typedef struct {
	int type;			/* CUmemLocationType */
	int id;
} CUmemLocation;

typedef struct {
	int type;			/* CUmemAllocationType */
	int requestedHandleTypes;	/* CUmemAllocationHandleType */
	CUmemLocation location;
	void *win32HandleMetaData;
	struct {
		unsigned char compressionType;
		unsigned char gpuDirectRDMACapable;
		unsigned short usage;
		unsigned char reserved[4];
	} allocFlags;
} CUmemAllocationProp;

typedef struct {
	CUmemLocation location;
	int flags;			/* CUmemAccess_flags */
} CUmemAccessDesc;

/* cuMemGetHandleForAddressRange appeared in CUDA 11.7. */
#define CUDA_DRIVER_MIN_DMABUF 11070

typedef CUresult (*cuInit_fn)(unsigned int flags);
typedef CUresult (*cuDriverGetVersion_fn)(int *version);
typedef CUresult (*cuDeviceGetCount_fn)(int *count);
typedef CUresult (*cuDeviceGet_fn)(CUdevice *dev, int ordinal);
typedef CUresult (*cuDeviceGetName_fn)(char *name, int len, CUdevice dev);
typedef CUresult (*cuDeviceGetAttribute_fn)(int *val, int attr, CUdevice dev);
typedef CUresult (*cuDeviceGetPCIBusId_fn)(char *bus, int len, CUdevice dev);
typedef CUresult (*cuDeviceTotalMem_fn)(size_t *bytes, CUdevice dev);
typedef CUresult (*cuGetErrorName_fn)(CUresult err, const char **str);
typedef CUresult (*cuGetErrorString_fn)(CUresult err, const char **str);
typedef CUresult (*cuDevicePrimaryCtxRetain_fn)(CUcontext *ctx, CUdevice dev);
typedef CUresult (*cuDevicePrimaryCtxRelease_fn)(CUdevice dev);
typedef CUresult (*cuCtxSetCurrent_fn)(CUcontext ctx);
typedef CUresult (*cuMemAlloc_fn)(CUdeviceptr *ptr, size_t bytes);
typedef CUresult (*cuMemFree_fn)(CUdeviceptr ptr);
typedef CUresult (*cuMemGetHandleForAddressRange_fn)(void *handle,
		CUdeviceptr ptr, size_t size, int type, unsigned long long flags);
typedef CUresult (*cuPointerGetAttribute_fn)(void *data, int attr,
		CUdeviceptr ptr);
typedef CUresult (*cuMemcpyHtoD_fn)(CUdeviceptr dst, const void *src,
		size_t bytes);
typedef CUresult (*cuMemcpyDtoH_fn)(void *dst, CUdeviceptr src, size_t bytes);
typedef CUresult (*cuMemGetAllocationGranularity_fn)(size_t *granularity,
		const CUmemAllocationProp *prop, int option);
typedef CUresult (*cuMemCreate_fn)(CUmemGenericAllocationHandle *handle,
		size_t size, const CUmemAllocationProp *prop,
		unsigned long long flags);
typedef CUresult (*cuMemRelease_fn)(CUmemGenericAllocationHandle handle);
typedef CUresult (*cuMemAddressReserve_fn)(CUdeviceptr *ptr, size_t size,
		size_t alignment, CUdeviceptr addr, unsigned long long flags);
typedef CUresult (*cuMemAddressFree_fn)(CUdeviceptr ptr, size_t size);
typedef CUresult (*cuMemMap_fn)(CUdeviceptr ptr, size_t size, size_t offset,
		CUmemGenericAllocationHandle handle, unsigned long long flags);
typedef CUresult (*cuMemUnmap_fn)(CUdeviceptr ptr, size_t size);
typedef CUresult (*cuMemSetAccess_fn)(CUdeviceptr ptr, size_t size,
		const CUmemAccessDesc *desc, size_t count);

#endif
