// SPDX-License-Identifier: Apache-2.0
// Uses an installed kiln: one kernel on the default device, checked on the host.
#include <cstdio>
#include <kiln/kiln.hpp>
#include <vector>

int main() {
    auto dev = kiln::default_device();
    kiln::queue q(dev);
    std::vector<int> host{1, 2, 3, 4, 5};
    kiln::buffer<int> data(q, host);
    kiln::program(dev, "kernel void twice(global int* x) { x[get_global_id(0)] *= 2; }")
        .kernel("twice")(data)
        .launch(q, {host.size()});
    auto result = data.read(q);
    for (std::size_t i = 0; i < host.size(); ++i)
        if (result[i] != 2 * host[i]) return 1;
    std::printf("consumer: installed kiln ran on %s\n", dev.name().c_str());
    return 0;
}
