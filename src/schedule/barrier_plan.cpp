// Barrier planning: walks the kernel through the hazard model and marks, for each hazard, the
// statement before which a barrier resolves it; a planned barrier also resets the state, so one
// barrier serves every hazard up to it (the fewest barriers per straight-line run).
#include "schedule/barriers.h"

#include "schedule/shared_access.h"
#include "support/check.h"

namespace tlc::schedule {

namespace {

class Planner : public HazardWalker {
public:
    BarrierPlan plan;
    std::vector<std::pair<const ir::Stmt*, std::string>> divergent;

protected:
    bool on_hazard(const ir::Stmt* at, const std::string& why, bool async_race, HazardState& state) override {
        TLC_CHECK(!async_race, "barrier planner: " + why + " (the pipeliner must place an AsyncWait first)");
        plan.emplace(at, why);
        state.barrier();
        return true;
    }
    void on_divergent_hazard(const ir::Stmt* branch, const std::string& why) override {
        for (auto& [b, w] : divergent)
            if (b == branch) return;
        divergent.emplace_back(branch, why);
    }
    void before(const ir::Stmt* at, HazardState& state) override {
        if (plan.count(at)) state.barrier();
    }
};

} // namespace

BarrierPlan plan_barriers(const ir::StmtPtr& body, std::vector<std::pair<const ir::Stmt*, std::string>>* divergent) {
    Planner p;
    HazardState state;
    p.walk(body, state);
    if (divergent) *divergent = p.divergent;
    return p.plan;
}

} // namespace tlc::schedule
