// SPDX-License-Identifier: Apache-2.0
// kiln::graph on CUDA: the recorded commands as a CUDA graph of kernel, memcpy and memset nodes,
// one after another, instantiated once and launched on any stream of the context.
#include <cstring>
#include <variant>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_error.hpp"
#include "backend/cuda/cuda_launch.hpp"

namespace kiln::detail::cuda {

namespace {

class cuda_graph final : public native_graph_impl {
  public:
    cuda_graph(std::shared_ptr<cuda_context> context, graph_handle graph, graph_exec_handle exec)
        : context_(std::move(context)), graph_(std::move(graph)), exec_(std::move(exec)) {}

    bool replays_on(queue_impl& q) const override {
        const auto* queue = dynamic_cast<const cuda_queue*>(&q);
        return queue != nullptr && queue->context() == context_;
    }
    std::shared_ptr<event_impl> launch(queue_impl& q, event_list after) override {
        return static_cast<cuda_queue&>(q).launch_graph(exec_.get().raw, after);
    }

  private:
    std::shared_ptr<cuda_context> context_;  // outlives the graph's handles
    graph_handle graph_;
    graph_exec_handle exec_;
};

/// The nodes of a graph in a chain: each runs after the one added before it, as the commands ran
/// on one stream.
class node_chain {
  public:
    node_chain(const graph_api& api, CUgraph graph) : api_(api), graph_(graph) {}

    template <class Params>
    void kernel(const Params& params) {
        add(
            [&](CUgraphNode* node, const CUgraphNode* after, std::size_t count) {
                return api_.cuGraphAddKernelNode(node, graph_, after, count, &params);
            },
            "cuGraphAddKernelNode");
    }
    void copy(const CUDA_MEMCPY3D& params, CUcontext context) {
        add(
            [&](CUgraphNode* node, const CUgraphNode* after, std::size_t count) {
                return api_.cuGraphAddMemcpyNode(node, graph_, after, count, &params, context);
            },
            "cuGraphAddMemcpyNode");
    }
    void memset(const CUDA_MEMSET_NODE_PARAMS& params, CUcontext context) {
        add(
            [&](CUgraphNode* node, const CUgraphNode* after, std::size_t count) {
                return api_.cuGraphAddMemsetNode(node, graph_, after, count, &params, context);
            },
            "cuGraphAddMemsetNode");
    }

  private:
    template <class Add>
    void add(Add&& adder, const char* call) {
        CUgraphNode node = nullptr;
        check(adder(&node, last_ ? &last_ : nullptr, last_ ? 1 : 0), call);
        last_ = node;
    }

    const graph_api& api_;
    CUgraph graph_;
    CUgraphNode last_ = nullptr;
};

/// The memory's device address, or 0 where it belongs to another context (a copy between
/// devices, which a graph of this context does not hold).
CUdeviceptr address_in(const cuda_context& context, memory_impl& memory, std::size_t offset) {
    auto* cuda = dynamic_cast<cuda_memory*>(&memory);
    if (cuda == nullptr || cuda->context().get() != &context) return 0;
    return cuda->address() + offset;
}

}  // namespace

std::shared_ptr<event_impl> cuda_queue::launch_graph(CUgraphExec graph, event_list after) {
    auto c = begin(after);
    check(graph_driver()->cuGraphLaunch(graph, stream()), "cuGraphLaunch");
    return end(c);
}

std::unique_ptr<native_graph_impl> cuda_queue::record(std::span<const graph_command> commands) {
    const graph_api* api = graph_driver();
    if (api == nullptr) return nullptr;
    context_->make_current();
    CUgraph raw_graph = nullptr;
    check(api->cuGraphCreate(&raw_graph, 0), "cuGraphCreate");
    graph_handle graph({context_->get(), raw_graph});
    node_chain nodes(*api, raw_graph);
    for (const auto& command : commands) {
        if (const auto* launch = std::get_if<graph_launch>(&command)) {
            prepared_launch prepared(launch->kernel, context_, launch->geometry, launch->args);
            // Constant areas are shared with eager launches of the kernel on every stream, which
            // take turns through a lock a graph cannot hold: such graphs replay launch by launch.
            if (!prepared.constant_fills().empty()) return nullptr;
            prepared.for_each_part([&](const launch_shape& shape, void** parameters) {
                CUDA_KERNEL_NODE_PARAMS params{};
                params.func = prepared.function();
                params.gridDimX = shape.grid[0];
                params.gridDimY = shape.grid[1];
                params.gridDimZ = shape.grid[2];
                params.blockDimX = shape.block[0];
                params.blockDimY = shape.block[1];
                params.blockDimZ = shape.block[2];
                params.sharedMemBytes = shape.dynamic_shared;
                // The node keeps copies of the values, so the arguments may go once it is added.
                params.kernelParams = parameters;
                nodes.kernel(params);
            });
        } else if (const auto* copy = std::get_if<graph_copy>(&command)) {
            if (copy->bytes == 0) continue;
            const CUdeviceptr source = address_in(*context_, copy->source, copy->source_offset);
            const CUdeviceptr target =
                address_in(*context_, copy->destination, copy->destination_offset);
            if (source == 0 || target == 0) return nullptr;
            CUDA_MEMCPY3D params{};
            params.srcMemoryType = CU_MEMORYTYPE_DEVICE;
            params.srcDevice = source;
            params.dstMemoryType = CU_MEMORYTYPE_DEVICE;
            params.dstDevice = target;
            params.WidthInBytes = copy->bytes;
            params.Height = 1;
            params.Depth = 1;
            nodes.copy(params, context_->get());
        } else {
            const auto& fill = std::get<graph_fill>(command);
            if (fill.bytes == 0) continue;
            const CUdeviceptr target = address_in(*context_, fill.destination, fill.offset);
            const std::size_t size = fill.pattern_size;
            // What fill() refuses is refused at launch, by the list.
            if (target == 0 || size == 0 || size > 128 || (size & (size - 1)) != 0 ||
                fill.bytes % size != 0 || target % size != 0)
                return nullptr;
            if (size <= 4) {
                CUDA_MEMSET_NODE_PARAMS params{};
                params.dst = target;
                std::memcpy(&params.value, fill.pattern, size);
                params.elementSize = static_cast<unsigned>(size);
                params.width = fill.bytes / size;
                params.height = 1;
                nodes.memset(params, context_->get());
            } else {
                wide_fill wide(target, fill.pattern, size, fill.bytes);
                CUDA_KERNEL_NODE_PARAMS params{};
                params.func = context_->fill_function();
                params.gridDimX = wide.blocks();
                params.gridDimY = params.gridDimZ = 1;
                params.blockDimX = wide_fill::threads;
                params.blockDimY = params.blockDimZ = 1;
                params.kernelParams = wide.parameters();
                nodes.kernel(params);
            }
        }
    }
    CUgraphExec raw_exec = nullptr;
    check(api->cuGraphInstantiate(&raw_exec, raw_graph, 0), "cuGraphInstantiate");
    graph_exec_handle exec({context_->get(), raw_exec});
    return std::make_unique<cuda_graph>(context_, std::move(graph), std::move(exec));
}

}  // namespace kiln::detail::cuda
