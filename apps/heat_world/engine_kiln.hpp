// SPDX-License-Identifier: Apache-2.0
// The kiln engines: the heat world stepped by the OpenCL C kernels of kernels/ on a kiln device.
#pragma once

#include <string>

#include "engine.hpp"

namespace kiln::heat {

// Adds naive, resident, packed, tiled and temporal to the registry (see engine_kiln.cpp for
// what each does and when one of them becomes step_world's default).
void register_kiln_engines(engine_registry& registry);

// The devices kiln sees, for an error message's one line: "0: NAME (opencl, cpu), 1: ...", or
// "none".
std::string device_list_text();

}  // namespace kiln::heat
