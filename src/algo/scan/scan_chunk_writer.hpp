// SPDX-License-Identifier: Apache-2.0
// The chunk kernels' writer (scan_chunks.hpp): the kernels' frame, the scratch pointers and
// the look-back between chunks, written once. What each kernel does with its chunk's elements is
// a chunk_loops strategy of the algorithm: the scan's (scan_chunks.cpp, scan_chunk_lanes.cpp),
// stream compaction's (scan_chunks.cpp, compaction_chunks.cpp) and reduce_by_key's
// (reduce_by_key_chunks.cpp, reduce_by_key_lane_chunks.cpp).
#pragma once

#include <cstddef>
#include <kiln/detail/algo/scan_chunks.hpp>
#include <string>

namespace kiln::detail {

/// The OpenCL C name of lane `j` of a vector (.s0 ... .s9, .sa ... .sf), for the loops by
/// vectors.
inline std::string lane(std::size_t j) {
    return std::string(".s") + "0123456789abcdef"[j];
}

/// An algorithm's loops over one chunk, elements [begin, end) with `idx` the index, emitted
/// inside a chunk kernel, reading the input as the algorithm describes it (Input: element_input,
/// compaction_input or reduce_by_key_input).
template <class Input>
class chunk_loops {
  public:
    virtual ~chunk_loops() = default;
    /// Whether the kernels take an `out` array (scans) or write through the input's own
    /// parameters (scattering programs).
    virtual bool writes_out() const = 0;
    /// Leaves `kiln_chunk_total` (of the scan's value type), the combination of the chunk's
    /// elements.
    virtual void reduce(source_builder& b, const Input& input) const = 0;
    /// Given `prefix`, the combination of everything before the chunk where `have` is set, and
    /// `kiln_chunk_total`, the chunk's own (reduce's), writes the chunk's results.
    virtual void finish(source_builder& b, const Input& input) const = 0;
    /// The same where the two run in kernels of their own (two passes), for loops whose finish
    /// reads more of what their reduce left than the total: reduce_only leaves the total alone,
    /// and finish_only has nothing else.
    virtual void reduce_only(source_builder& b, const Input& input) const { reduce(b, input); }
    virtual void finish_only(source_builder& b, const Input& input) const { finish(b, input); }
};

/// What the frame asks of an algorithm in each kernel it writes, whatever the algorithm's input:
/// its loops together with the input they read.
class chunk_kernel_steps {
  public:
    virtual ~chunk_kernel_steps() = default;
    virtual bool writes_out() const = 0;
    /// Declares the input's kernel parameters (after the kernel's own) for the kernel being
    /// written; reduce and finish then read its text.
    virtual void declare_parameters(source_builder& b) = 0;
    virtual void reduce(source_builder& b) const = 0;
    virtual void finish(source_builder& b) const = 0;
    virtual void reduce_only(source_builder& b) const = 0;
    virtual void finish_only(source_builder& b) const = 0;
};

/// Writes the program's kernels (chunk_scan_kernels: the chained one, or local and fix, as
/// `schedule` says) for chunks of `chunk` elements.
std::string chunk_program_source(const scan_operation& op, std::size_t chunk,
                                 scan_schedule schedule, chunk_kernel_steps& steps);

/// The same, with `loops` over the input that `input` declares.
template <class Input>
std::string chunk_program_source(const scan_operation& op, const declare_input<Input>& input,
                                 std::size_t chunk, scan_schedule schedule,
                                 const chunk_loops<Input>& loops) {
    class loops_over_input final : public chunk_kernel_steps {
      public:
        loops_over_input(const declare_input<Input>& declare, const chunk_loops<Input>& loops)
            : declare_(declare), loops_(loops) {}
        bool writes_out() const override { return loops_.writes_out(); }
        void declare_parameters(source_builder& b) override { input_ = declare_(b); }
        void reduce(source_builder& b) const override { loops_.reduce(b, input_); }
        void finish(source_builder& b) const override { loops_.finish(b, input_); }
        void reduce_only(source_builder& b) const override { loops_.reduce_only(b, input_); }
        void finish_only(source_builder& b) const override { loops_.finish_only(b, input_); }

      private:
        const declare_input<Input>& declare_;
        const chunk_loops<Input>& loops_;
        Input input_{};
    };
    loops_over_input steps(input, loops);
    return chunk_program_source(op, chunk, schedule, steps);
}

}  // namespace kiln::detail
