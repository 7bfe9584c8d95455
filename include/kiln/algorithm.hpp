// kiln's algorithms on vectors and vector expressions: scans, stream compaction, reduce by key
// and sorts, with the temporary pool, tuning table and kernel cache they share.
#pragma once
#pragma GCC visibility push(default)

#include <kiln/algo/algorithm_program.hpp>
#include <kiln/algo/compaction.hpp>
#include <kiln/algo/operation.hpp>
#include <kiln/algo/reduce_by_key.hpp>
#include <kiln/algo/scan.hpp>
#include <kiln/algo/sort.hpp>
#include <kiln/algo/temporary_pool.hpp>
#include <kiln/algo/tuning.hpp>
#pragma GCC visibility pop
