// kiln: everything in one include.
#pragma once

#include <kiln/algorithm.hpp>
#include <kiln/error.hpp>
#include <kiln/fft.hpp>
#include <kiln/kernel_struct.hpp>
#include <kiln/random.hpp>
#include <kiln/reduce.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/cache.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/program.hpp>
#include <kiln/runtime/queue.hpp>
#include <kiln/sparse.hpp>
#include <kiln/stencil.hpp>
#include <kiln/vector.hpp>
