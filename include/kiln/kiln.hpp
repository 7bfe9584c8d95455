// SPDX-License-Identifier: Apache-2.0
// kiln: everything in one include.
#pragma once
#pragma GCC visibility push(default)

#include <kiln/algorithm.hpp>
#include <kiln/error.hpp>
#include <kiln/expr/graph_value.hpp>
#include <kiln/fft.hpp>
#include <kiln/float8.hpp>
#include <kiln/half.hpp>
#include <kiln/kernel.hpp>
#include <kiln/kernel_struct.hpp>
#include <kiln/matrix.hpp>
#include <kiln/multivector.hpp>
#include <kiln/random.hpp>
#include <kiln/reduce.hpp>
#include <kiln/reduce_dimension.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/cache.hpp>
#include <kiln/runtime/determinism.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/graph.hpp>
#include <kiln/runtime/image.hpp>
#include <kiln/runtime/pinned.hpp>
#include <kiln/runtime/profile.hpp>
#include <kiln/runtime/program.hpp>
#include <kiln/runtime/queue.hpp>
#include <kiln/sparse.hpp>
#include <kiln/stencil.hpp>
#include <kiln/vector.hpp>
#pragma GCC visibility pop
