// SPDX-License-Identifier: Apache-2.0
// A kiln vector out as a DLPack tensor and back: a consumer that knows only DLPack reshapes it
// into a matrix with a row stride and hands it back, kiln multiplies into it, and the vector
// sees the product in its own memory: no copy on the way out or in. Checked against the CPU.
#include <cstdio>
#include <exception>
#include <kiln/interop/dlpack.hpp>
#include <kiln/kiln.hpp>
#include <vector>

namespace {

/// What a consumer of DLPack alone does: a tensor of its own over the memory of `exported`
/// (`rows` rows, `row_stride` elements apart, `columns` of them used), which gives the memory
/// back to `exported`'s producer when it is deleted.
struct reshaped_tensor {
    std::int64_t shape[2], strides[2];
    DLManagedTensorVersioned tensor;
    DLManagedTensorVersioned* exported;
};

DLManagedTensorVersioned* reshape(DLManagedTensorVersioned* exported, std::int64_t rows,
                                  std::int64_t columns, std::int64_t row_stride) {
    auto* made = new reshaped_tensor{{rows, columns}, {row_stride, 1}, {}, exported};
    made->tensor.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    made->tensor.manager_ctx = made;
    made->tensor.deleter = [](DLManagedTensorVersioned* self) {
        auto* owner = static_cast<reshaped_tensor*>(self->manager_ctx);
        owner->exported->deleter(owner->exported);
        delete owner;
    };
    made->tensor.dl_tensor = exported->dl_tensor;
    made->tensor.dl_tensor.ndim = 2;
    made->tensor.dl_tensor.shape = made->shape;
    made->tensor.dl_tensor.strides = made->strides;
    return &made->tensor;
}

}  // namespace

int main() {
    try {
        kiln::queue q(kiln::default_device());
        // A 3 x 4 matrix in rows 6 apart: 18 elements, of which columns 4 and 5 are not its.
        kiln::vector<float> memory(q, std::vector<float>(18, -1.0f));
        kiln::matrix<float> A(q, 3, 2, std::vector<float>{1, 2, 3, 4, 5, 6}),
            B(q, 2, 4, std::vector<float>{1, 0, 2, 1, 0, 1, 1, 2});
        // [doc:dlpack-round-trip]
        DLManagedTensorVersioned* out = kiln::to_dlpack(memory);  // memory's, no copy
        DLManagedTensorVersioned* in = reshape(out, 3, 4, 6);     // what a consumer hands back
        {
            auto C = kiln::matrix_from_dlpack<float>(q, in);  // in's memory, no copy
            kiln::gemm(C, A, B);                              // C = A B
        }  // kiln is done with `in`: its deleter ran, and gave `out` back
        // [/doc]
        const std::vector<float> expected{1,  2,  4,  5, -1, -1, 3,  4,  10,
                                          11, -1, -1, 5, 6,  16, 17, -1, -1};
        const std::vector<float> seen = memory.read();
        for (std::size_t i = 0; i < expected.size(); ++i)
            if (seen[i] != expected[i]) {
                std::fprintf(stderr, "dlpack_round_trip: element %zu is %g, not %g\n", i, seen[i],
                             expected[i]);
                return 1;
            }
        std::printf("dlpack_round_trip: a 3 x 4 product through DLPack on %s: OK\n",
                    q.device().name().c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "dlpack_round_trip: %s\n", e.what());
        return 1;
    }
}
