// Unit tests of the launch stubs' TMA descriptor cache (runtime/tl/host/tma.h), with a counting
// encoder in place of the driver's: hits return the encoded bytes, every key field matters.
#include <doctest/doctest.h>

#include <tl/host/tma.h>

#include <cstring>
#include <functional>

namespace {

using Cache = tl::host::TensorMapCache<4>;

// A fake encoding: the descriptor's first bytes are the number of the call that produced it.
struct CountingEncoder {
    int calls = 0;
    bool fail = false;
    bool operator()(CUtensorMap* map) {
        if (fail) return false;
        ++calls;
        std::memset(map, 0, sizeof(*map));
        std::memcpy(map, &calls, sizeof(calls));
        return true;
    }
};

int stamp(const CUtensorMap& map) {
    int v = 0;
    std::memcpy(&v, &map, sizeof(v));
    return v;
}

int buffer[64];

tl::host::TensorMapKey key(int offset, int64_t rows = 128, int64_t cols = 64) {
    return {buffer + offset, 6, 2, 2, 0, {rows, cols}, 64, 64};
}

} // namespace

TEST_CASE("a repeated key is encoded once") {
    Cache cache;
    CountingEncoder enc;
    CUtensorMap map;
    for (int i = 0; i < 5; ++i) {
        REQUIRE(cache.get(&map, key(0), std::ref(enc)));
        CHECK(stamp(map) == 1);
    }
    CHECK(enc.calls == 1);
    CHECK(cache.hits() == 4);
}

TEST_CASE("every field of the key selects its own descriptor") {
    Cache cache;
    CountingEncoder enc;
    CUtensorMap map;
    tl::host::TensorMapKey base = key(0);
    tl::host::TensorMapKey variants[] = {base, base, base, base, base, base, base, base, base};
    variants[1].base = buffer + 8;
    variants[2].type = 7;
    variants[3].element_bytes = 4;
    variants[4].dims[0] = 129;
    variants[5].dims[1] = 72;
    variants[6].box_rows = 128;
    variants[7].rank = 3, variants[7].dims[2] = 64; // [128][64][64]
    variants[8].rank = 3, variants[8].dims[2] = 64, variants[8].row_dim = 1;
    for (const auto& k : variants) {
        int before = enc.calls;
        REQUIRE(cache.get(&map, k, std::ref(enc)));
        CHECK(enc.calls == before + 1); // a miss: no two of these keys are equal
        CHECK(stamp(map) == enc.calls);
    }
}

TEST_CASE("an evicted or failed key is encoded again") {
    Cache cache;
    CountingEncoder enc;
    CUtensorMap map;
    for (int i = 0; i < 32; ++i) REQUIRE(cache.get(&map, key(i % 16), std::ref(enc))); // more keys than slots
    CHECK(enc.calls >= 16);
    CHECK(enc.calls <= 32);
    enc.fail = true;
    CHECK_FALSE(cache.get(&map, key(40), std::ref(enc))); // failures are not cached
    enc.fail = false;
    int before = enc.calls;
    REQUIRE(cache.get(&map, key(40), std::ref(enc)));
    CHECK(enc.calls == before + 1);
}
