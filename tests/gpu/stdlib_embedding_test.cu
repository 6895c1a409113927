// stdlib_embedding_test.cu — stdlib/embedding.tl against the host lookup: Y[t, :] = Table[Ids[t], :],
// zeros for an id outside [0, V); T f16 by default (-DTLC_T=<type> for other builds). Ids include
// -1 and V; D not a multiple of the column tile; an empty NT.
#include "embedding.h"
#include "harness.h"

#ifndef TLC_T
#define TLC_T __half
#endif
using T = TLC_T;

namespace {

th::Outcome check(int64_t NT, int64_t V, int64_t D, uint64_t seed) {
    const auto table = th::random_vector<T>(th::numel({V, D}), seed);
    std::vector<int32_t> ids(static_cast<size_t>(NT));
    th::Rng rng(seed + 1);
    for (auto& id : ids) id = static_cast<int32_t>(rng.next() % uint64_t(V + 2)) - 1;  // -1 .. V
    th::DeviceBuffer<int32_t> Ids(ids);
    th::DeviceBuffer<T> Table(table), Y(th::numel({NT, D}));
    Y.poison();
    th::check_launch(tlc::embedding(Ids.get(), Table.get(), Y.get(), NT, V, D), "embedding");
    const auto y = Y.download();
    for (int64_t t = 0; t < NT; ++t)
        for (int64_t c = 0; c < D; ++c) {
            const int32_t id = ids[size_t(t)];
            const double want = id >= 0 && id < V ? th::to_f64(table[size_t(id * D + c)]) : 0.0;
            if (th::to_f64(y[size_t(t * D + c)]) != want)
                return th::expect(false, "Y[" + std::to_string(t) + ", " + std::to_string(c) + "] wrong (id " + std::to_string(id) + ")");
        }
    return th::expect(Ids.guards_intact() && Table.guards_intact() && Y.guards_intact(), "out-of-bounds write");
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("stdlib_embedding"));
    suite.run("embedding/NT=13,V=10,D=100", [] { return check(13, 10, 100, 100); });
    suite.run("embedding/NT=3,V=5,D=1000", [] { return check(3, 5, 1000, 200); });
    suite.run("embedding/NT=1,V=1,D=1", [] { return check(1, 1, 1, 300); });
    suite.run("embedding/NT=4097,V=1000,D=2048", [] { return check(4097, 1000, 2048, 400); }, th::When::full);
    suite.run("embedding/NT=0_empty_grid", [] {
        th::DeviceBuffer<int32_t> Ids(0);
        th::DeviceBuffer<T> Table(100), Y(0);
        th::check_launch(tlc::embedding(Ids.get(), Table.get(), Y.get(), 0, 10, 10), "embedding");
        return th::expect(Y.guards_intact(), "an empty launch wrote to Y");
    });
    suite.run("embedding/null_pointer", [] {
        th::DeviceBuffer<T> Table(100), Y(100);
        return th::expect_invalid([&] { return tlc::embedding(nullptr, Table.get(), Y.get(), 10, 10, 10); });
    });
    return suite.finish();
}
