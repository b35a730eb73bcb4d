// A schedule's scratch area (RankSchedule::scratch_bytes), kept from call
// to call: grown on demand, never shrunk, 64-byte aligned as compile()
// lays its slots out.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace genx {

class ScratchArea {
  public:
    static constexpr size_t kAlign = 64;

    // At least `bytes` (the whole area rounded up to kAlign, and never
    // empty), grown if needed; throws std::bad_alloc.
    unsigned char* reserve(size_t bytes) {
        if (bytes > size_ || !data_) {
            const size_t n = std::max<size_t>(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
            void* p = std::aligned_alloc(kAlign, n);
            if (p == nullptr) throw std::bad_alloc();
            data_.reset(static_cast<unsigned char*>(p));
            size_ = n;
        }
        return data_.get();
    }
    unsigned char* data() const { return data_.get(); }
    size_t size() const { return size_; }
    // Frees the area (the next reserve() allocates another).
    void reset() {
        data_.reset();
        size_ = 0;
    }
    // Gives the area up without freeing it: after a failed collective the
    // transport may still write into it (leaked, never reused).
    void strand() {
        (void)data_.release();
        size_ = 0;
    }

  private:
    struct FreeDeleter {
        void operator()(unsigned char* p) const { std::free(p); }
    };
    std::unique_ptr<unsigned char, FreeDeleter> data_;
    size_t size_ = 0;
};

}  // namespace genx
