// Names of IR enumerations and small constructors shared by every IR user.
#include "ir/ir.h"
#include "ir/walk.h"

namespace tlc::ir {

const char* scope_name(Scope s) {
    static const char* names[] = {"global", "shared", "fragment", "local"};
    return names[static_cast<int>(s)];
}

const char* op_name(UnaryOp op) {
    static const char* names[] = {"-", "!", "~"};
    return names[static_cast<int>(op)];
}

const char* op_name(BinaryOp op) {
    static const char* names[] = {"+", "-", "*", "/", "%", "<<", ">>", "<", "<=", ">", ">=", "==", "!=",
                                  "&", "^", "|", "&&", "||", "min", "max"};
    return names[static_cast<int>(op)];
}

const char* builtin_name(BuiltinKind k) {
    static const char* names[] = {"block.x", "block.y", "block.z", "thread.x", "grid.x", "grid.y", "grid.z", "threads", "sm_count"};
    return names[static_cast<int>(k)];
}

const char* intrinsic_name(Intrinsic i) {
    static const char* names[] = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "erf", "sigmoid",
                                  "abs", "pow", "floor", "ceil", "fma", "cdiv"};
    return names[static_cast<int>(i)];
}

const char* loop_kind_name(LoopKind k) {
    static const char* names[] = {"serial", "unroll", "parallel", "pipelined"};
    return names[static_cast<int>(k)];
}

const char* reduce_op_name(ReduceOp op) {
    static const char* names[] = {"sum", "max", "min", "absmax"};
    return names[static_cast<int>(op)];
}

int64_t element_count(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t e : shape) n *= e;
    return n;
}

int64_t Buffer::num_elements() const { return element_count(const_shape); }

std::vector<int64_t> Region::tile_shape() const {
    std::vector<int64_t> shape;
    for (const Range& r : ranges)
        if (!r.is_point) shape.push_back(r.extent);
    return shape;
}

std::vector<ExprPtr> Region::tile_limits() const {
    std::vector<ExprPtr> limits;
    bool any = false;
    for (const Range& r : ranges) {
        if (r.is_point) continue;
        limits.push_back(r.limit);
        any |= r.limit != nullptr;
    }
    return any ? limits : std::vector<ExprPtr>{};
}

bool Region::is_whole() const {
    for (size_t d = 0; d < ranges.size(); ++d) {
        std::optional<int64_t> start = const_int(ranges[d].start);
        if (ranges[d].is_point || !start || *start != 0 || ranges[d].extent != buffer->const_shape[d]) return false;
    }
    return true;
}

bool Region::gathers() const {
    for (const Range& r : ranges)
        if (r.gather) return true;
    return false;
}

bool Region::gathers_rows() const {
    for (const Range& r : ranges)
        if (r.gather && !r.is_point) return true;
    return false;
}

Region whole(const BufferPtr& buffer) {
    Region r;
    r.buffer = buffer;
    for (size_t d = 0; d < buffer->const_shape.size(); ++d)
        r.ranges.push_back(Range{make_int(0), buffer->const_shape[d], false, nullptr,
                                 d < buffer->limits.size() ? buffer->limits[d] : nullptr});
    return r;
}

const std::vector<std::string>& transformation_switches() {
    static const std::vector<std::string> names{"pipeline", "async-copy", "tma", "warp-specialize", "persistent",
                                                "deepen-ring", "overlap-wgmma", "pingpong", "split-rings", "dynamic-tiles", "chunk-loops",
                                                "order-blocks", "prefetch-registers", "tma-store", "sink-gemms",
                                                "stage-fragment-reads"};
    return names;
}

bool disable_transformation(KernelOptions& options, const std::string& name) {
    if (name == "pipeline") options.pipeline = false;
    else if (name == "async-copy") options.async_copy = false;
    else if (name == "tma") options.tma = false;
    else if (name == "warp-specialize") options.warp_specialize = false;
    else if (name == "persistent") options.persistent = false;
    else if (name == "deepen-ring") options.deepen_ring = false;
    else if (name == "overlap-wgmma") options.overlap_wgmma = false;
    else if (name == "pingpong") options.pingpong = false;
    else if (name == "split-rings") options.split_rings = false;
    else if (name == "dynamic-tiles") options.dynamic_tiles = false;
    else if (name == "chunk-loops") options.chunk_loops = false;
    else if (name == "order-blocks") options.order_blocks = false;
    else if (name == "prefetch-registers") options.prefetch_registers = false;
    else if (name == "tma-store") options.tma_store = false;
    else if (name == "sink-gemms") options.sink_gemms = false;
    else if (name == "stage-fragment-reads") options.stage_fragment_reads = false;
    else return false;
    return true;
}

std::string KernelVariant::values_text() const {
    std::string text;
    for (const auto& [name, value] : values) text += (text.empty() ? "" : ", ") + name + " = " + value;
    return text;
}

ExprPtr make_int(int64_t v, Dtype t) { return std::make_shared<IntImm>(t, v); }

std::optional<int64_t> const_int(const ExprPtr& e) {
    if (auto* i = e ? e->as<IntImm>() : nullptr) return i->value;
    return std::nullopt;
}

const WarpSpecializedLoop* warp_specialized_loop(const Kernel& kernel) {
    if (auto* seq = kernel.body ? kernel.body->as<Seq>() : nullptr)
        for (const StmtPtr& s : seq->stmts)
            if (auto* w = s->as<WarpSpecializedLoop>()) return w;
    return nullptr;
}

const std::vector<StmtPtr>& WarpSpecializedLoop::statements() const {
    static const std::vector<StmtPtr> none;
    if (auto* seq = body ? body->as<Seq>() : nullptr) return seq->stmts;
    return none;
}

bool WarpSpecializedLoop::loads_into(const Buffer* b) const {
    for (const TmaLoad& ld : loads)
        if (ld.dst.get() == b) return true;
    return false;
}

int tma_row_axis(const Region& src) {
    const int rank = static_cast<int>(src.ranges.size());
    if (rank < 2 || rank > 5 || src.ranges.back().is_point) return -1;
    int row = -1, ranged = 0;
    for (int i = 0; i < rank; ++i)
        if (!src.ranges[i].is_point) {
            if (row < 0) row = i;
            ++ranged;
        }
    return ranged == 2 ? row : -1;
}

bool WarpSpecializedLoop::in_first_ring(const Buffer* b) const {
    for (const TmaLoad& ld : loads)
        if (ld.dst.get() == b) return ld.first_ring;
    return false;
}

bool WarpSpecializedLoop::loads_once(const Buffer* b) const {
    for (const BufferPtr& t : once)
        if (t.get() == b) return true;
    return false;
}

std::vector<const std::vector<ConsumerStep>*> ConsumerSchedule::parts_of_trip(int64_t k, int64_t n) const {
    std::vector<const std::vector<ConsumerStep>*> parts{software_pipelined() && k == 0 ? &first_trip : &trip};
    if (k + 1 == n) parts.insert(parts.end(), {&drain, &tile_end});
    return parts;
}

bool touches_async_operands(const StmtPtr& s, const Gemm& g) {
    const BufferUses uses = buffer_uses(s);
    return uses.touches(g.c.buffer.get()) || (g.a.buffer->scope == Scope::Fragment && uses.touches(g.a.buffer.get()));
}

bool WarpSpecializedLoop::writes_operand(const Buffer* b) const {
    for (const BufferPtr& t : written)
        if (t.get() == b) return true;
    return false;
}

std::vector<const Gemm*> WarpSpecializedLoop::wgmma_gemms() const {
    auto register_operand = [](const Buffer* b) { return b->scope == Scope::Fragment && dtype_bytes(b->dtype) == 2; };
    std::vector<const Gemm*> out;
    for (const StmtPtr& s : statements())
        if (auto* g = s->as<Gemm>(); g && holds_wgmma_layout(g->b.buffer.get()) &&
                                     (holds_wgmma_layout(g->a.buffer.get()) || register_operand(g->a.buffer.get())))
            out.push_back(g);
    return out;
}

size_t WarpSpecializedLoop::trailing_begin() const {
    const std::vector<StmtPtr>& stmts = statements();
    auto* first = stmts.empty() ? nullptr : stmts.front()->as<Gemm>();
    size_t begin = 1;
    for (size_t i = 1; first && i < stmts.size(); ++i)
        if (buffer_uses(stmts[i]).touches(first->c.buffer.get())) begin = i + 1;
    return begin;
}

bool WarpSpecializedLoop::single_gemm() const {
    const auto& stmts = statements();
    auto* g = stmts.size() == 1 ? stmts[0]->as<Gemm>() : nullptr;
    return g && !g->clear && wgmma_gemms().size() == 1;
}

std::string multicast_axes_name(int multicast_axes) {
    std::string out;
    for (int a = 0; a < 3; ++a)
        if (multicast_axes & (1 << a)) out += "xyz"[a];
    return out;
}

std::vector<const Copy*> tma_store_copies(const Kernel& kernel) {
    std::vector<const Copy*> out;
    if (auto* seq = kernel.body ? kernel.body->as<Seq>() : nullptr)
        for (const StmtPtr& s : seq->stmts)
            if (auto* c = s->as<Copy>(); c && c->tma_store) out.push_back(c);
    return out;
}

const Copy* tma_store_copy(const Kernel& kernel) {
    const std::vector<const Copy*> copies = tma_store_copies(kernel);
    return copies.empty() ? nullptr : copies.front();
}

std::vector<const Copy*> tma_once_copies(const Kernel& kernel) {
    std::vector<const Copy*> out;
    if (auto* seq = kernel.body ? kernel.body->as<Seq>() : nullptr)
        for (const StmtPtr& s : seq->stmts)
            if (auto* c = s->as<Copy>(); c && c->tma_once) out.push_back(c);
    return out;
}

bool is_per_thread(const Stmt& s) {
    auto local = [](const Region& r) { return r.buffer && r.buffer->scope == Scope::Local; };
    auto memory_or_local = [](const Region& r) { return r.buffer && r.buffer->scope != Scope::Fragment; };
    if (auto* c = s.as<Copy>())
        return (local(c->src) && memory_or_local(c->dst)) || (local(c->dst) && memory_or_local(c->src));
    if (auto* f = s.as<Fill>()) return local(f->dst);
    if (auto* r = s.as<Reduce>()) return local(r->src) && local(r->dst);
    if (auto* c = s.as<Cumsum>()) return local(c->src) && local(c->dst);
    return false;
}

} // namespace tlc::ir
