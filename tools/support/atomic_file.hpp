// SPDX-License-Identifier: Apache-2.0
// How kiln's programs write their output files: the library's writer (src/runtime/atomic_file.hpp,
// which the profiler uses too), under the programs' names.
#pragma once

#include "runtime/atomic_file.hpp"

namespace kiln::programs {

using detail::delivery;
using detail::file_replacement;
using detail::file_system_calls;
using detail::open_replacement_part;
using detail::replacement_failure;
using detail::write_file;
using detail::write_stream;

}  // namespace kiln::programs
