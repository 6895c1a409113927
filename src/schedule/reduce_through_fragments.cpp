// reduce-through-fragments (see reduce_through_fragments.h): a reduce of a fragment into shared
// memory computes into a fragment of the result's shape, then copies it.
#include "schedule/reduce_through_fragments.h"

#include "ir/mutate.h"
#include "ir/walk.h"

#include <set>
#include <string>
#include <vector>

namespace tlc::schedule {

namespace {

class Rewriter : public ir::Mutator {
public:
    explicit Rewriter(const ir::Kernel& kernel) : taken_(ir::names_in(kernel)) {}
    std::vector<ir::StmtPtr> allocs; // the result fragments, declared at the top of the body

protected:
    using ir::Mutator::visit;
    // A rewritten reduce's statements take its place in the enclosing sequence.
    ir::StmtPtr visit(const ir::NodePtr<ir::Seq>& op) override {
        return ir::mutate_splicing(*this, op, [](const ir::Stmt& c) { return c.as<ir::Reduce>() != nullptr; });
    }

    ir::StmtPtr visit(const ir::NodePtr<ir::Reduce>& op) override {
        const ir::Buffer& src = *op->src.buffer;
        const ir::Buffer& dst = *op->dst.buffer;
        if (src.scope != ir::Scope::Fragment || dst.scope != ir::Scope::Shared) return op;
        auto result = std::make_shared<ir::Buffer>();
        result->name = ir::fresh_name(taken_, dst.name + "_result");
        result->scope = ir::Scope::Fragment;
        result->dtype = dst.dtype;
        result->const_shape = op->dst.tile_shape();
        for (int64_t extent : result->const_shape) result->shape.push_back(ir::make_int(extent));
        result->limits = op->dst.tile_limits();
        result->stands_for = dst.declared_name();
        result->range = op->range;
        allocs.push_back(std::make_shared<ir::Alloc>(result, nullptr, op->range));
        const ir::Region whole = ir::whole(result);
        std::vector<ir::StmtPtr> out;
        if (!op->clear) out.push_back(std::make_shared<ir::Copy>(op->dst, whole, nullptr, op->range));
        out.push_back(std::make_shared<ir::Reduce>(op->op, op->src, whole, op->axis, op->clear, op->range));
        out.push_back(std::make_shared<ir::Copy>(whole, op->dst, nullptr, op->range));
        return std::make_shared<ir::Seq>(std::move(out), op->range);
    }

private:
    std::set<std::string> taken_;
};

} // namespace

int reduce_through_fragments(ir::Kernel& kernel) {
    Rewriter r(kernel);
    ir::StmtPtr body = r.mutate(kernel.body);
    if (r.allocs.empty()) return 0;
    std::vector<ir::StmtPtr> stmts = r.allocs;
    if (auto* seq = body->as<ir::Seq>())
        stmts.insert(stmts.end(), seq->stmts.begin(), seq->stmts.end());
    else
        stmts.push_back(body);
    kernel.body = std::make_shared<ir::Seq>(std::move(stmts), kernel.body->range);
    return static_cast<int>(r.allocs.size());
}

} // namespace tlc::schedule
