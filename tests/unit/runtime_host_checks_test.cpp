// Unit tests of the launch functions' argument checks (runtime/tl/host/launch.h): pointers (null
// only for an empty tensor, aligned to the element size) and dims.
#include <doctest/doctest.h>

#include <tl/host/launch.h>

#include <string>

namespace {

alignas(16) char memory[64];

} // namespace

TEST_CASE("a null pointer is accepted for a tensor without elements only") {
    CHECK(tl::host::check_pointer(nullptr, "k", "X", 2, /*empty=*/true) == cudaSuccess);
    CHECK(tl::host::check_pointer(nullptr, "k", "X", 2) == cudaErrorInvalidValue);
    CHECK(tl::host::last_error_storage() == "k: `X` is a null pointer");
    CHECK(tl::host::check_pointer(nullptr, "k", "X", 2, /*empty=*/false) == cudaErrorInvalidValue);
}

TEST_CASE("a pointer must be aligned to its element size, empty tensor or not") {
    CHECK(tl::host::check_pointer(memory, "k", "X", 4) == cudaSuccess);
    CHECK(tl::host::check_pointer(memory + 2, "k", "X", 4) == cudaErrorInvalidValue);
    CHECK(tl::host::last_error_storage() == "k: `X` is not aligned to its element size (4 bytes)");
    CHECK(tl::host::check_pointer(memory + 2, "k", "X", 4, /*empty=*/true) == cudaErrorInvalidValue);
    CHECK(tl::host::check_pointer(memory + 2, "k", "X", 2) == cudaSuccess);
}

TEST_CASE("dims are non-negative and fit in 32 bits") {
    CHECK(tl::host::check_dim(0, "k", "N") == cudaSuccess);
    CHECK(tl::host::check_dim(-1, "k", "N") == cudaErrorInvalidValue);
    CHECK(tl::host::last_error_storage() == "k: dimension `N` is negative (-1)");
    CHECK(tl::host::check_dim(int64_t(1) << 31, "k", "N") == cudaErrorInvalidValue);
}
