// SPDX-License-Identifier: Apache-2.0
// The PTX instructions of NVIDIA's tensor cores and their copies, one row each
// (src/runtime/ptx_instructions.cpp): the wrapper a kernel calls, its PTX and operands, and for
// the mma.sync atoms their shape and fragment layouts. The OpenCL inline-asm vocabulary
// (src/codegen/device_vocabulary.cpp) and the CUDA prelude (src/backend/cuda) are both written
// from these rows, so that the PTX is in one place.
#pragma once
#pragma GCC visibility push(default)

#include <array>
#include <span>
#include <string>
#include <string_view>

namespace kiln::detail {

/// Where the wrappers are written: OpenCL C's inline asm (NVIDIA's OpenCL), or the CUDA prelude.
enum class ptx_dialect : unsigned char { opencl_inline_asm, cuda_prelude };

/// The wrappers' sets: the tensor-core one (mma.sync, ldmatrix, cp.async: compute capability 8.0
/// on, both dialects), and Hopper's warpgroup one (wgmma, mbarrier, the tensor memory
/// accelerator: sm_90a cubins, CUDA only).
enum class ptx_set : unsigned char { tensor_cores, warpgroup };

/// How a wrapper's parameter reaches its asm statement.
enum class ptx_operand_use : unsigned char {
    accumulate,         ///< registers read and written ("+f")
    read,               ///< registers or a scalar read ("r", "f", "d", "l")
    write,              ///< registers written ("=r")
    shared_address,     ///< a local-memory pointer, as its 32-bit address in the shared window
    global_address,     ///< a global pointer, as its 64-bit address
    reference_address,  ///< a struct the wrapper takes by reference (CUDA), as its address
    immediate,          ///< 0 or 1, choosing which asm statement runs: no operand
};

/// What a parameter holds: a scalar's or an array element's type, or a pointer's pointee.
enum class ptx_value : unsigned char { u32, s32, u64, f32, f64, u16, tile_map };

struct ptx_operand {
    std::string_view name;
    ptx_operand_use use = ptx_operand_use::read;
    ptx_value value = ptx_value::u32;
    /// Registers of an array parameter (the PTX's brace list); 0: a scalar.
    unsigned count = 0;
    /// A pointer whose pointee the instruction writes (not const).
    bool written = false;
};

/// One mode of a fragment layout: `extent` steps, each `row` rows and `column` columns on.
struct ptx_layout_mode {
    unsigned extent = 1, row = 0, column = 0;
};

/// Which element of an operand's rows x columns tile a lane's value holds: the lane and the
/// value's index, each split over its modes (the first the fastest), sum the modes' steps. A
/// warpgroup's layouts (wgmma) have 128 lanes, the warp its third mode.
struct ptx_fragment_layout {
    unsigned rows = 0, columns = 0;
    std::array<ptx_layout_mode, 3> lanes{};
    std::array<ptx_layout_mode, 3> values{};

    struct coordinate {
        unsigned row = 0, column = 0;
        bool operator==(const coordinate&) const = default;
    };
    coordinate at(unsigned lane, unsigned value) const noexcept;
    unsigned lane_count() const noexcept;
    unsigned value_count() const noexcept;
};

/// A tensor-core atom: D (m x n) += A (m x k) B (k x n), each operand's layout over the lanes of
/// a warp (mma.sync), or D's over a warpgroup (wgmma, whose A and B are read from local memory).
struct ptx_mma_shape {
    unsigned m = 0, n = 0, k = 0;
    ptx_fragment_layout a, b, c;
};

struct ptx_instruction {
    /// The wrapper's name, as kernels call it.
    std::string_view function;
    ptx_set set = ptx_set::tensor_cores;
    /// The compute capability (x 10) the CUDA prelude guards the tensor-core set's body with.
    unsigned architecture = 80;
    /// The PTX: `$name` is an operand (a brace list for an array), `$name[i]` one register of it.
    std::string_view ptx;
    /// The parameters in order, each an operand of the asm statement unless an immediate.
    std::span<const ptx_operand> operands{};
    /// asm volatile (an effect beyond the outputs), and a "memory" clobber.
    bool has_effects = false, clobbers_memory = false;
    /// mma.sync and wgmma atoms: the shape and fragments (m 0 for the other instructions).
    ptx_mma_shape mma{};
};

/// Every row.
std::span<const ptx_instruction> ptx_instructions() noexcept;
/// The row of `function`; nullptr where there is none.
const ptx_instruction* find_ptx_instruction(std::string_view function) noexcept;

/// The wrappers of `set` in `dialect`: OpenCL C functions with inline asm, or the CUDA prelude's
/// __device__ functions (the tensor-core set's bodies guarded by their compute capability).
std::string ptx_wrappers(ptx_dialect dialect, ptx_set set);

}  // namespace kiln::detail
#pragma GCC visibility pop
