// The chunk kernels' writer (scan_chunks.hpp): the three kernels' frame, the scratch pointers and
// the look-back between chunks, written once. What each kernel does with its chunk's elements is
// a chunk_loops strategy of the algorithm: the scan's (scan_chunks.cpp), a scattering program's
// (scan_chunks.cpp, stream compaction) and reduce_by_key's (reduce_by_key_chunks.cpp).
#pragma once

#include <cstddef>
#include <kiln/detail/algo/scan_chunks.hpp>
#include <string>

namespace kiln::detail {

/// An algorithm's loops over one chunk, elements [begin, end) with `idx` the index, emitted
/// inside a chunk kernel.
class chunk_loops {
  public:
    virtual ~chunk_loops() = default;
    /// Whether the kernels take an `out` array (scans) or write through the input's own
    /// parameters (scattering programs).
    virtual bool writes_out() const = 0;
    /// Leaves `kiln_chunk_total` (of the scan's value type), the combination of the chunk's
    /// elements.
    virtual void reduce(source_builder& b, const element_text& element) const = 0;
    /// Given `prefix`, the combination of everything before the chunk where `have` is set,
    /// writes the chunk's results.
    virtual void finish(source_builder& b, const element_text& element) const = 0;
};

/// Writes the program's three kernels (chunk_scan_kernels) for chunks of `chunk` elements.
std::string chunk_program_source(const scan_operation& op, const declare_input& input,
                                 std::size_t chunk, const chunk_loops& loops);

}  // namespace kiln::detail
