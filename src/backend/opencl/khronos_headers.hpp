// SPDX-License-Identifier: Apache-2.0
// The Khronos OpenCL headers, which the OpenCL backend includes from here alone: the API version
// it is written against is said once, beside the include, rather than on every compile command
// of kiln, so that kiln's other sources compile the same way with or without OpenCL (and a build
// without it reuses their objects from the compiler cache).
#pragma once

// OpenCL 3.0's entry points, and the 1.2 ones deprecated since 2.0 that kiln calls:
// clCreateCommandQueue, which every platform has.
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
