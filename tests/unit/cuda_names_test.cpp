// Unit tests of codegen's C++ spellings of user names (codegen/cuda_names.h): which kernel names
// keep their launch functions `tlc::<name>` and `tlc_<name>`, and how other user names are made safe.
#include "codegen/cuda_names.h"

#include <doctest/doctest.h>

using namespace tlc::codegen;

TEST_CASE("kernel names that C++ can take inside namespace tlc keep their launch functions") {
    for (const char* name : {"gemm", "tl", "tl_topk", "main", "std", "tlc", "min_kernel", "half", "blockIdx", "cuda_gemm",
                             "cumsum", "CUMSUM", "INT32", "x_"})
        CHECK_MESSAGE(!host_name_problem(name), name);
}

TEST_CASE("kernel names that C++ cannot take there are reported with the reason") {
    CHECK(host_name_problem("class")->find("C++ keyword") != std::string::npos);
    CHECK(host_name_problem("and")->find("C++ keyword") != std::string::npos);
    for (const char* name : {"__x", "_x", "_X", "a__b", "x__"})
        CHECK_MESSAGE(host_name_problem(name)->find("reserves") != std::string::npos, name);
    for (const char* name : {"int64_t", "uint8_t", "dim3"})
        CHECK_MESSAGE(host_name_problem(name)->find("type") != std::string::npos, name);
    for (const char* name : {"cudaMalloc", "cudaStream_t", "cuMemAlloc", "CUtensorMap", "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
                             "CUDA_VERSION", "CUDART_INF_F"})
        CHECK_MESSAGE(host_name_problem(name)->find("CUDA API") != std::string::npos, name);
    for (const char* name : {"assert", "errno", "INT32_MAX", "NULL"})
        CHECK_MESSAGE(host_name_problem(name)->find("macro") != std::string::npos, name);
    CHECK(host_name_problem("last_error_message").has_value());
}

TEST_CASE("other user names are mangled where the generated code needs their spelling") {
    CHECK(identifier("x") == "x");
    CHECK(identifier("class") == "class_");
    CHECK(identifier("not") == "not_");
    CHECK(identifier("tl_i") == "tl_i_");
    CHECK(identifier("stream") == "stream_");
    CHECK(identifier("__x") == "__x_");
    // A user function never takes a __global__ function's name.
    CHECK(function_identifier("gelu") == "gelu");
    CHECK(function_identifier("scale_kernel") == "scale_kernel_");
    CHECK(function_identifier("scale_kernel_sm90") == "scale_kernel_sm90_");
}
