// SPDX-License-Identifier: Apache-2.0
// The copy of an operand into the K-major layout that TF32 and FP8 wgmma read
// (gemm_k_major.hpp), on every device: A and B, each lying with k inner (a plain copy) and k
// outer (a transpose through local memory), with an offset, a leading dimension past the row,
// sizes off the copy's squares and two batch entries; every element lands where the tile maps
// read it, and the padding past k is zeros.
#include "algo/gemm/gemm_k_major.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

#include "support/device_param.hpp"

namespace {

using kiln::detail::gemm_element;
using kiln::detail::gemm_operand;

class gemm_k_major_test : public kiln::test::device_queue_test {
  protected:
    /// Copies an operand of `element` (rows x columns as stored) for A (`is_a`) or B and checks
    /// the copy byte for byte.
    void check_copy(gemm_element element, bool is_a, bool transposed) {
        const std::size_t bytes = kiln::detail::element_bytes(element);
        const std::size_t rows = 70, columns = 133, leading = columns + 3, offset = 5, batch = 2;
        const std::size_t stride = rows * leading + 7;
        std::vector<std::uint8_t> host((offset + batch * stride) * bytes);
        for (std::size_t i = 0; i < host.size(); ++i)
            host[i] = static_cast<std::uint8_t>(i * 2654435761u >> 13);
        const kiln::buffer<std::uint8_t> stored(q, host);
        const gemm_operand x{.storage = &stored.storage(),
                             .element = element,
                             .offset = offset,
                             .rows = rows,
                             .columns = columns,
                             .leading_dimension = leading,
                             .batch = batch,
                             .batch_stride = stride,
                             .transposed = transposed};
        const auto copy = kiln::detail::copy_k_major(q, x, is_a);
        const gemm_operand& shape = copy.shape;
        ASSERT_EQ(shape.rows, is_a ? x.product_rows() : x.product_columns());
        ASSERT_EQ(shape.columns, is_a ? x.product_columns() : x.product_rows());
        ASSERT_EQ(shape.leading_dimension * bytes % 16, 0u);
        const std::vector<std::byte> copied = copy.scratch.bytes().read(q);
        for (std::size_t e = 0; e < batch; ++e)
            for (std::size_t r = 0; r < shape.rows; ++r)
                for (std::size_t k = 0; k < shape.leading_dimension; ++k) {
                    // op(x)'s element (i, j): A's (r, k), B's (k, r).
                    const std::size_t i = is_a ? r : k, j = is_a ? k : r;
                    std::vector<std::uint8_t> expected(bytes, 0);
                    if (k < shape.columns) {
                        const std::size_t at =
                            offset + e * stride + (transposed ? j * leading + i : i * leading + j);
                        std::memcpy(expected.data(), host.data() + at * bytes, bytes);
                    }
                    const std::size_t to = e * shape.batch_stride + r * shape.leading_dimension + k;
                    ASSERT_EQ(std::memcmp(copied.data() + to * bytes, expected.data(), bytes), 0)
                        << "entry " << e << ", row " << r << ", k " << k;
                }
    }
};

TEST_P(gemm_k_major_test, every_element_lands_where_the_tile_maps_read_it) {
    for (const gemm_element element : {gemm_element::f32, gemm_element::e4m3})
        for (const bool is_a : {true, false})
            for (const bool transposed : {false, true}) {
                SCOPED_TRACE(std::string(kiln::detail::to_string(element)) + (is_a ? " A" : " B") +
                             (transposed ? " transposed" : ""));
                check_copy(element, is_a, transposed);
            }
}

}  // namespace

KILN_INSTANTIATE_FOR_EVERY_DEVICE(gemm_k_major_test);
