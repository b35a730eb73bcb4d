// A communicator's compiled schedules (schedule_cache.hpp).
#include "genx/schedule_cache.hpp"

#include <utility>

namespace genx {

Status ScheduleCache::find(const RankPlan& p, size_t count, size_t elem_size,
                           const RankSchedule** out, std::shared_ptr<const RankSchedule>* keep) {
    ScheduleEntry* hit = nullptr;
    if (last_ != nullptr && last_->plan == &p && last_->count == count &&
        last_->elem_size == elem_size) {
        hit = last_;
    } else {
        for (auto& s : entries_)
            if (s->plan == &p && s->count == count && s->elem_size == elem_size) hit = s.get();
    }
    if (hit != nullptr) {
        touch(hit);
        *out = &hit->schedule;
        if (keep != nullptr) *keep = share(hit);
        return Status::ok();
    }
    auto e = std::make_shared<ScheduleEntry>();
    ++compiles_;
    GENX_RETURN_IF_ERROR(
        compile(p.header, p.program, p.rank, count, elem_size, p.exec, &e->schedule));
    e->plan = &p;
    e->count = count;
    e->elem_size = elem_size;
    e->last_used = ++tick_;
    e->bytes = schedule_bytes(e->schedule);
    while (!entries_.empty() && (entries_.size() >= kEntries || bytes_ + e->bytes > kBytes)) {
        size_t oldest = 0;
        for (size_t i = 1; i < entries_.size(); ++i)
            if (entries_[i]->last_used < entries_[oldest]->last_used) oldest = i;
        bytes_ -= entries_[oldest]->bytes;
        ++evictions_;
        entries_.erase(entries_.begin() + static_cast<long>(oldest));
    }
    bytes_ += e->bytes;
    entries_.push_back(std::move(e));
    last_ = entries_.back().get();
    *out = &last_->schedule;
    if (keep != nullptr) *keep = share(last_);
    return Status::ok();
}

// A hit: the entry becomes the most recently used and the one checked
// first.
void ScheduleCache::touch(ScheduleEntry* e) {
    e->last_used = ++tick_;
    last_ = e;
}

// The schedule of a cached entry, sharing the entry's ownership.
std::shared_ptr<const RankSchedule> ScheduleCache::share(const ScheduleEntry* e) const {
    for (const auto& s : entries_)
        if (s.get() == e) return std::shared_ptr<const RankSchedule>(s, &s->schedule);
    return nullptr;
}

void ScheduleCache::clear() {
    entries_.clear();
    bytes_ = 0;
    last_ = nullptr;
    ++evictions_;
}

void ScheduleCache::remember(const Call& call, size_t count, genx_dtype dtype, size_t elem_size,
                             genx_op op, int commutative, bool allowed) {
    LastCall& m = last_call_;
    m.valid =
        allowed && !call.kernel.is_callback() && last_ != nullptr && &last_->schedule == call.sched;
    if (!m.valid) return;
    m.count = count;
    m.dtype = dtype;
    m.elem_size = elem_size;
    m.op = op;
    m.commutative = commutative;
    m.evictions = evictions_;
    m.entry = last_;
    m.call = call;
}

const Call* ScheduleCache::remembered(size_t count, genx_dtype dtype, size_t elem_size, genx_op op,
                                      int commutative) {
    LastCall& m = last_call_;
    if (!m.valid || m.count != count || m.dtype != dtype || m.elem_size != elem_size ||
        m.op != op || m.commutative != commutative || m.evictions != evictions_)
        return nullptr;
    touch(m.entry);
    ++repeats_;
    return &m.call;
}

}  // namespace genx
