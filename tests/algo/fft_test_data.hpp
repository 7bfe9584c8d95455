// SPDX-License-Identifier: Apache-2.0
// What the FFT tests share: random complex data and the element count of a shape.
#pragma once

#include <complex>
#include <cstddef>
#include <random>
#include <vector>

namespace kiln::test {

template <class T>
std::vector<std::complex<T>> random_complex(std::size_t n, unsigned seed) {
    std::mt19937 engine(seed);
    std::uniform_real_distribution<T> value(-1, 1);
    std::vector<std::complex<T>> data(n);
    for (auto& z : data) z = {value(engine), value(engine)};
    return data;
}

inline std::size_t product(const std::vector<std::size_t>& sizes) {
    std::size_t n = 1;
    for (std::size_t s : sizes) n *= s;
    return n;
}

}  // namespace kiln::test
