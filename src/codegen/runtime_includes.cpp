// Chooses the runtime headers of a generated .cu from the runtime names its code mentions.
#include "codegen/runtime_includes.h"

namespace tlc::codegen {

const std::vector<OptionalRuntimeHeader>& optional_runtime_headers() {
    // In runtime/tl/tl.cuh's order. Any `tl::sm90::` name brings arch.cuh (it also comes with every
    // other sm90 header).
    static const std::vector<OptionalRuntimeHeader> headers = {
        {"tl/sm90/arch.cuh", {"tl::sm90::", "TL_SM90A_DEVICE"}},
        {"tl/sm90/mbarrier.cuh", {"tl::sm90::mbarrier_"}},
        {"tl/sm90/tma.cuh", {"tl::sm90::tma_", "tl::sm90::bulk_", "tl::sm90::fence_proxy_", "CUtensorMap"}},
        {"tl/sm90/warpgroup.cuh",
         {"tl::sm90::release_registers", "tl::sm90::claim_registers", "tl::sm90::named_barrier_", "tl::sm90::pingpong_"}},
        {"tl/sm90/wgmma.cuh",
         {"tl::sm90::warpgroup_gemm", "tl::sm90::wgmma_", "tl::sm90::Wgmma", "tl::sm90::fence_accumulators",
          "tl::sm90::swizzle", "tl::sm90::matrix_descriptor", "tl::sm90::issue_gemm", "tl::sm90::rs_slabs"}},
        {"tl/sm90/tile_order.cuh", {"tl::sm90::claim_next_tile", "tl::sm90::hand_over_tile", "tl::sm90::tile_in_mailbox"}},
        {"tl/sm90/cluster.cuh",
         {"tl::sm90::cluster_", "tl::sm90::ClusterShare", "tl::sm90::mbarrier_arrive_each_block", "tl::sm90::mbarrier_arrive_in_block",
          "_multicast("}},
        {"tl/host/tma.h",
         {"tl::host::tma_", "tl::host::make_tensor_map", "tl::host::tensor_map", "tl::host::TensorMap"}},
        {"tl/host/workspace.h", {"tl::host::stream_workspace", "tl::host::workspace_"}},
        {"tl/host/tile_counter.h", {"tl::host::tile_counter"}},
    };
    return headers;
}

std::vector<std::string> runtime_includes(std::string_view code) {
    std::vector<std::string> includes = {"tl/core.cuh"};
    for (const OptionalRuntimeHeader& header : optional_runtime_headers())
        for (std::string_view prefix : header.prefixes)
            if (code.find(prefix) != std::string_view::npos) {
                includes.emplace_back(header.path);
                break;
            }
    return includes;
}

} // namespace tlc::codegen
