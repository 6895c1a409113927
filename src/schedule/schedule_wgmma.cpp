// Pass `schedule-wgmma` (see schedule_wgmma.h).
#include "schedule/schedule_wgmma.h"

#include "ir/mutate.h"
#include "ir/walk.h"
#include "schedule/verify_mbarriers.h"
#include "support/check.h"

#include <algorithm>
#include <optional>

namespace tlc::schedule {

namespace {

using Step = ir::ConsumerStep;
using Kind = ir::ConsumerStep::Kind;
using When = ir::ConsumerStep::When;

class ScheduleBuilder {
public:
    ScheduleBuilder(const ir::Kernel& kernel, const ir::WarpSpecializedLoop& loop)
        : loop_(loop), protocol_(protocol_of(kernel, loop)), wgmmas_(loop.wgmma_gemms()),
          once_read_by_first_gemm_only_(once_read_by_first_gemm_only(kernel, loop)) {}

    ir::ConsumerSchedule build() {
        if (loop_.issue_first_gemm_early)
            software_pipelined();
        else if (loop_.single_gemm())
            one_accumulating_gemm();
        else
            waits_before_use();
        out_.tokens = next_token_;
        return std::move(out_);
    }

private:
    static Step step(Kind kind, int ring = 0, int back = 0) {
        Step s;
        s.kind = kind, s.ring = ring, s.back = back;
        return s;
    }
    static Step run(const ir::StmtPtr& stmt) {
        Step s = step(Kind::Run);
        s.stmt = stmt;
        return s;
    }
    static Step wait(int pending, std::vector<int> fenced) {
        Step s = step(Kind::Wait);
        s.pending = pending, s.fenced = std::move(fenced);
        return s;
    }
    static Step release(int ring, int back, When when = When::Always) {
        Step s = step(Kind::Release, ring, back);
        s.when = when;
        return s;
    }
    static Step release_once(When when) {
        Step s = step(Kind::ReleaseOnce);
        s.when = when;
        return s;
    }
    // An issue step of `gemm` (a statement of the trip) reading trip it - back's stage; one token
    // per issue step of the schedule.
    Step issue(const ir::StmtPtr& gemm, int back) {
        Step s = step(Kind::Issue, 0, back);
        s.stmt = gemm;
        s.ring = loop_.first_stages > 0 && reads_first_ring(*gemm->as<ir::Gemm>()) ? 1 : 0;
        s.token = next_token_++;
        return s;
    }
    bool reads_first_ring(const ir::Gemm& g) const {
        return loop_.in_first_ring(g.a.buffer.get()) || loop_.in_first_ring(g.b.buffer.get());
    }
    bool is_wgmma(const ir::StmtPtr& s) const {
        auto* g = s->as<ir::Gemm>();
        return g && std::find(wgmmas_.begin(), wgmmas_.end(), g) != wgmmas_.end();
    }
    // The tiles loaded once per tile, when only the trip's first gemm reads them (attention's Q):
    // released as soon as the tile's last first gemm retired.
    static bool once_read_by_first_gemm_only(const ir::Kernel& kernel, const ir::WarpSpecializedLoop& loop) {
        if (loop.once.empty() || !loop.issue_first_gemm_early) return false;
        const std::vector<ir::StmtPtr>& stmts = loop.statements();
        for (const ir::BufferPtr& b : loop.once) {
            for (size_t i = 1; i < stmts.size(); ++i)
                if (ir::buffer_uses(stmts[i]).touches(b.get())) return false;
            bool after = false;
            for (const ir::StmtPtr& s : kernel.body->as<ir::Seq>()->stmts) {
                if (after && ir::buffer_uses(s).touches(b.get())) return false;
                after |= s.get() == &loop;
            }
        }
        return true;
    }

    // The plain GEMM main loop: one trip's wgmmas stay in flight.
    void one_accumulating_gemm() {
        const int lag = protocol_.release_lag;
        out_.trip = {step(Kind::StageIndex), step(Kind::WaitLoads), step(Kind::Lets), issue(loop_.statements().front(), 0),
                     wait(protocol_.mma_in_flight, {})};
        out_.trip.push_back(release(0, lag, When::TripExists));
        out_.tile_end.push_back(wait(0, {}));
        for (int back = 0; back < lag; ++back) out_.tile_end.push_back(release(0, back, When::TripExists));
        if (!loop_.once.empty()) out_.tile_end.push_back(release_once(When::Always));
    }

    // Any other trip: each wgmma waited for just before its result (or register operand) is
    // touched, the stage released once the last one retired. wgmma groups retire in the order they
    // were issued, so a statement that needs the i-th oldest pending gemm waits until only the
    // gemms issued after it are in flight (wgmma_wait<pending - 1 - i>): they keep running under it.
    void waits_before_use() {
        TLC_CHECK(protocol_.mma_in_flight == 0 && protocol_.release_lag == 0, "a general warp-specialized trip waits for its wgmmas");
        std::vector<Step>& trip = out_.trip;
        trip = {step(Kind::StageIndex), step(Kind::WaitLoads), step(Kind::Lets)};
        std::vector<std::pair<int, const ir::Gemm*>> pending; // token, gemm; oldest first
        size_t issued = 0;
        auto retire_through = [&](size_t newest) {
            std::vector<int> fenced;
            for (size_t i = 0; i <= newest; ++i) fenced.push_back(pending[i].first);
            trip.push_back(wait(static_cast<int>(pending.size() - 1 - newest), fenced));
            pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(newest + 1));
            if (issued == wgmmas_.size() && pending.empty()) trip.push_back(release(0, 0));
        };
        for (const ir::StmtPtr& s : loop_.statements()) {
            // The newest pending gemm this statement must see retired. A gemm reading a tile the
            // consumers write retires before their next barrier: past it another warpgroup may
            // overwrite the tile (the barrier orders the writes after the reads).
            std::optional<size_t> newest;
            for (size_t i = 0; i < pending.size(); ++i) {
                const ir::Gemm& g = *pending[i].second;
                if (ir::touches_async_operands(s, g) || (s->kind == ir::StmtKind::Barrier && loop_.reads_written(g))) newest = i;
            }
            if (newest) retire_through(*newest);
            if (!is_wgmma(s)) {
                trip.push_back(run(s));
                continue;
            }
            trip.push_back(issue(s, 0));
            pending.emplace_back(trip.back().token, s->as<ir::Gemm>());
            ++issued;
        }
        if (!pending.empty()) retire_through(pending.size() - 1);
        if (!loop_.once.empty()) out_.tile_end.push_back(release_once(When::Always));
    }

    // Ping-pong: a run of issues (with the waits for their loads between them) is one turn.
    void turn(std::vector<Step>& steps, const std::vector<Step>& issues) const {
        if (loop_.pingpong) steps.push_back(step(Kind::TurnBegin));
        steps.insert(steps.end(), issues.begin(), issues.end());
        if (loop_.pingpong) steps.push_back(step(Kind::TurnEnd));
    }

    // The software-pipelined trip (FlashAttention-3's overlap of one trip's softmax with the
    // previous trip's P V and this trip's Q Kᵀ).
    void software_pipelined() {
        TLC_CHECK(protocol_.mma_in_flight == 1 && protocol_.release_lag == 1, "a software-pipelined trip keeps one trip in flight");
        const std::vector<ir::StmtPtr>& stmts = loop_.statements();
        const size_t tail_begin = loop_.trailing_begin();
        TLC_CHECK(tail_begin > 1 && tail_begin < stmts.size(), "a software-pipelined trip: its first gemm's result used, then trailing gemms");
        for (size_t j = tail_begin; j < stmts.size(); ++j)
            TLC_CHECK(is_wgmma(stmts[j]), "a software-pipelined trip whose trailing statements are not all wgmma gemms");
        // B starts at the first statement that touches a trailing gemm's accumulator or register operand.
        size_t b_begin = tail_begin;
        for (size_t i = 1; i < tail_begin && b_begin == tail_begin; ++i)
            for (size_t j = tail_begin; j < stmts.size(); ++j)
                if (ir::touches_async_operands(stmts[i], *stmts[j]->as<ir::Gemm>())) b_begin = i;
        const bool split = loop_.first_stages > 0;
        const int first_ring = split ? 1 : 0;
        auto run_range = [&](std::vector<Step>& steps, size_t from, size_t to) {
            for (size_t i = from; i < to; ++i) steps.push_back(run(stmts[i]));
        };
        auto trip_start = [&](std::vector<Step>& steps) {
            steps.insert(steps.end(), {step(Kind::StageIndex, first_ring), step(Kind::Lets), step(Kind::WaitLoads, first_ring)});
        };
        // Issues the trailing gemms of trip it - back, after waiting for their loads (two rings).
        auto trailing = [&](int back, std::vector<int>& tokens) {
            std::vector<Step> steps;
            if (split) steps.push_back(step(Kind::WaitLoads, 0, back));
            for (size_t j = tail_begin; j < stmts.size(); ++j) {
                steps.push_back(issue(stmts[j], back));
                tokens.push_back(steps.back().token);
            }
            return steps;
        };
        auto after_first = [&](std::vector<Step>& steps, int first_token, int pending, When last) {
            steps.push_back(wait(pending, {first_token}));
            if (split) steps.push_back(release(1, 0));
            if (once_read_by_first_gemm_only_) steps.push_back(release_once(last));
        };

        // Trip 0: its first gemm and the statements before its trailing gemms.
        std::vector<Step>& first = out_.first_trip;
        trip_start(first);
        const Step f0 = issue(stmts.front(), 0);
        turn(first, {f0});
        after_first(first, f0.token, 0, When::LastTrip);
        run_range(first, 1, tail_begin);

        // Trips 1 .. n - 1: F(t) issued with T(t - 1).
        std::vector<Step>& trip = out_.trip;
        trip.push_back(step(Kind::StageIndex, 0, 1));
        trip_start(trip);
        std::vector<int> tail_tokens;
        std::vector<Step> issues{issue(stmts.front(), 0)};
        const int f = issues.front().token;
        for (Step& s : trailing(1, tail_tokens)) issues.push_back(std::move(s));
        turn(trip, issues);
        after_first(trip, f, static_cast<int>(tail_tokens.size()), When::LastTrip);
        run_range(trip, 1, b_begin);
        trip.push_back(wait(0, tail_tokens));
        trip.push_back(release(0, 1));
        run_range(trip, b_begin, tail_begin);

        // The last trip's trailing gemms.
        std::vector<Step>& drain = out_.drain;
        drain.push_back(step(Kind::StageIndex));
        std::vector<int> last_tokens;
        turn(drain, trailing(0, last_tokens));
        drain.push_back(wait(0, last_tokens));
        drain.push_back(release(0, 0));
        if (!loop_.once.empty()) out_.tile_end.push_back(release_once(once_read_by_first_gemm_only_ ? When::NoTrips : When::Always));
    }

    const ir::WarpSpecializedLoop& loop_;
    const MbarrierProtocol protocol_;
    const std::vector<const ir::Gemm*> wgmmas_;
    const bool once_read_by_first_gemm_only_;
    ir::ConsumerSchedule out_;
    int next_token_ = 0;
};

} // namespace

void schedule_wgmma(ir::Kernel& kernel) {
    if (!kernel.warp_specialization.enabled) return;
    auto* seq = kernel.body ? kernel.body->as<ir::Seq>() : nullptr;
    if (!seq) return;
    std::vector<ir::StmtPtr> stmts = seq->stmts;
    for (ir::StmtPtr& s : stmts)
        if (auto* w = s->as<ir::WarpSpecializedLoop>()) {
            ir::ConsumerSchedule schedule = ScheduleBuilder(kernel, *w).build();
            s = ir::rebuild(std::static_pointer_cast<const ir::WarpSpecializedLoop>(s),
                            [&](ir::WarpSpecializedLoop& n) { n.schedule = std::move(schedule); });
        }
    kernel.body = ir::rebuild(std::static_pointer_cast<const ir::Seq>(kernel.body), [&](ir::Seq& n) { n.stmts = std::move(stmts); });
}

} // namespace tlc::schedule
