/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_NVML_API_H
#define GDRCHECK_NVML_API_H

/*
 * The small subset of NVML (libnvidia-ml.so.1) gdrcheck calls, declared
 * here so that building needs no CUDA toolkit or GDK. Values and layouts
 * are NVIDIA's public nvml.h (NVML API reference, "Device Queries" and
 * "NvLink Methods"); symbol names are the versioned exports nvml.h maps
 * the plain names to (nvmlInit -> nvmlInit_v2, ...).
 */

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef unsigned int nvmlEnableState_t;
typedef unsigned int nvmlIntNvLinkDeviceType_t;

/* nvmlReturn_t */
#define NVML_SUCCESS				0
#define NVML_ERROR_UNINITIALIZED		1
#define NVML_ERROR_INVALID_ARGUMENT		2
#define NVML_ERROR_NOT_SUPPORTED		3
#define NVML_ERROR_NO_PERMISSION		4
#define NVML_ERROR_ALREADY_INITIALIZED		5
#define NVML_ERROR_NOT_FOUND			6
#define NVML_ERROR_INSUFFICIENT_SIZE		7
#define NVML_ERROR_INSUFFICIENT_POWER		8
#define NVML_ERROR_DRIVER_NOT_LOADED		9
#define NVML_ERROR_TIMEOUT			10
#define NVML_ERROR_IRQ_ISSUE			11
#define NVML_ERROR_LIBRARY_NOT_FOUND		12
#define NVML_ERROR_FUNCTION_NOT_FOUND		13
#define NVML_ERROR_CORRUPTED_INFOROM		14
#define NVML_ERROR_GPU_IS_LOST			15
#define NVML_ERROR_RESET_REQUIRED		16
#define NVML_ERROR_OPERATING_SYSTEM		17
#define NVML_ERROR_LIB_RM_VERSION_MISMATCH	18
#define NVML_ERROR_IN_USE			19
#define NVML_ERROR_MEMORY			20
#define NVML_ERROR_NO_DATA			21
#define NVML_ERROR_UNKNOWN			999

/* nvmlEnableState_t */
#define NVML_FEATURE_DISABLED	0
#define NVML_FEATURE_ENABLED	1

/* nvmlIntNvLinkDeviceType_t */
#define NVML_NVLINK_DEVICE_TYPE_GPU	0x00
#define NVML_NVLINK_DEVICE_TYPE_IBMNPU	0x01
#define NVML_NVLINK_DEVICE_TYPE_SWITCH	0x02
#define NVML_NVLINK_DEVICE_TYPE_UNKNOWN	0xFF

/* Links per GPU (18 since NVML 12 / Hopper; 6 and 12 before). */
#define NVML_NVLINK_MAX_LINKS	18

#define NVML_DEVICE_UUID_V2_BUFFER_SIZE		96
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE	32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE	16

/* The layout nvmlDeviceGetPciInfo_v3 and ..RemotePciInfo_v2 fill. */
typedef struct nvmlPciInfo_st {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;	/* device id << 16 | vendor id */
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE]; /* "00000000:3B:00.0" */
} nvmlPciInfo_t;

/* nvmlDeviceGetC2cModeInfoV (R550+): one field, no version tag. */
typedef struct nvmlC2cModeInfo_v1_st {
	unsigned int isC2cEnabled;
} nvmlC2cModeInfo_v1_t;

typedef nvmlReturn_t (*nvmlInit_fn)(void);
typedef nvmlReturn_t (*nvmlShutdown_fn)(void);
typedef const char *(*nvmlErrorString_fn)(nvmlReturn_t result);
typedef nvmlReturn_t (*nvmlSystemGetDriverVersion_fn)(char *version,
		unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetCount_fn)(unsigned int *count);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_fn)(unsigned int index,
		nvmlDevice_t *device);
typedef nvmlReturn_t (*nvmlDeviceGetUUID_fn)(nvmlDevice_t device, char *uuid,
		unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetPciInfo_fn)(nvmlDevice_t device,
		nvmlPciInfo_t *pci);
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkState_fn)(nvmlDevice_t device,
		unsigned int link, nvmlEnableState_t *active);
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkRemotePciInfo_fn)(nvmlDevice_t device,
		unsigned int link, nvmlPciInfo_t *pci);
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkRemoteDeviceType_fn)(
		nvmlDevice_t device, unsigned int link,
		nvmlIntNvLinkDeviceType_t *type);
typedef nvmlReturn_t (*nvmlDeviceGetC2cModeInfoV_fn)(nvmlDevice_t device,
		nvmlC2cModeInfo_v1_t *info);

#endif
