// Barrier verifier: an independent walk of the final IR through the hazard model; any hazard left
// (a missing barrier, or a read of an async copy's data before its wait) is an internal error —
// never silently wrong code.
#include "schedule/barriers.h"

#include "schedule/shared_access.h"
#include "support/check.h"

#include <string>

namespace tlc::schedule {

namespace {

class Verifier : public HazardWalker {
public:
    explicit Verifier(const ir::Kernel& k) : kernel_(k) {}

protected:
    bool on_hazard(const ir::Stmt* at, const std::string& why, bool, HazardState&) override {
        TLC_CHECK(false, "barrier verifier: kernel `" + kernel_.name + "` has an unsynchronised " + why + " at line " +
                             std::to_string(at->range.begin.line));
        return false;
    }

    void on_divergent_hazard(const ir::Stmt* branch, const std::string& why) override {
        TLC_CHECK(false, "barrier verifier: kernel `" + kernel_.name + "` has an unsynchronised " + why +
                             " inside the divergent branch at line " + std::to_string(branch->range.begin.line));
    }

private:
    const ir::Kernel& kernel_;
};

} // namespace

size_t verify_barriers(const ir::Kernel& kernel) {
    Verifier v(kernel);
    HazardState state;
    v.walk(kernel.body, state);
    return 0;
}

} // namespace tlc::schedule
