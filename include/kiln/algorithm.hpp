// SPDX-License-Identifier: Apache-2.0
// kiln's algorithms on vectors and vector expressions: scans, stream compaction, reduce by key
// and sorts, with the temporary pool, tuning table and kernel cache they share.
#pragma once
#pragma GCC visibility push(default)

#include <kiln/algo/compaction.hpp>
#include <kiln/algo/histogram.hpp>
#include <kiln/algo/reduce_by_key.hpp>
#include <kiln/algo/scan.hpp>
#include <kiln/algo/segmented.hpp>
#include <kiln/algo/segmented_sort.hpp>
#include <kiln/algo/sort.hpp>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/operation.hpp>
#include <kiln/detail/algo/tuning.hpp>
#include <kiln/detail/temporary_pool.hpp>
#pragma GCC visibility pop
