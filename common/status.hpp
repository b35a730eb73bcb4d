// Errors are values in genx's core: a Status says what was wrong and where;
// no exception crosses a module boundary (and none crosses into C).
#pragma once

#include <memory>
#include <string>
#include <utility>

namespace genx {

enum class Code { Ok, InvalidArgument, NotFound, Unsupported, ParseError, IoError, Internal };

// The success path is the hot path (every executor step returns a
// Status): an Ok Status is a code and a null pointer, so making, moving and
// destroying one touches no string.  Only an error carries its message, on
// the heap.
class Status {
  public:
    Status() = default;
    Status(Code code, std::string message)
        : code_(code),
          message_(code == Code::Ok && message.empty()
                       ? nullptr
                       : std::make_unique<std::string>(std::move(message))) {}
    Status(const Status& o) : code_(o.code_), message_(copy(o.message_)) {}
    Status& operator=(const Status& o) {
        if (this != &o) {
            message_ = copy(o.message_);  // first: a bad_alloc leaves *this as it was
            code_ = o.code_;
        }
        return *this;
    }
    Status(Status&&) noexcept = default;
    Status& operator=(Status&&) noexcept = default;

    static Status ok() { return Status(); }
    static Status invalid(std::string m) { return Status(Code::InvalidArgument, std::move(m)); }
    static Status unsupported(std::string m) { return Status(Code::Unsupported, std::move(m)); }
    static Status not_found(std::string m) { return Status(Code::NotFound, std::move(m)); }
    static Status parse_error(std::string m) { return Status(Code::ParseError, std::move(m)); }
    static Status io_error(std::string m) { return Status(Code::IoError, std::move(m)); }
    static Status internal(std::string m) { return Status(Code::Internal, std::move(m)); }

    bool is_ok() const { return code_ == Code::Ok; }
    explicit operator bool() const { return is_ok(); }
    Code code() const { return code_; }
    const std::string& message() const { return message_ ? *message_ : empty(); }

  private:
    static const std::string& empty() {
        static const std::string e;
        return e;
    }
    static std::unique_ptr<std::string> copy(const std::unique_ptr<std::string>& m) {
        return m ? std::make_unique<std::string>(*m) : nullptr;
    }
    Code code_ = Code::Ok;
    std::unique_ptr<std::string> message_;
};

#define GENX_RETURN_IF_ERROR(expr)                 \
    do {                                           \
        ::genx::Status genx_status_ = (expr);      \
        if (!genx_status_.is_ok()) return genx_status_; \
    } while (0)

}  // namespace genx
