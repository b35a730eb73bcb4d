// Errors are values in genx's core: a Status says what was wrong and where;
// no exception crosses a module boundary (and none crosses into C).
#pragma once

#include <string>
#include <utility>

namespace genx {

enum class Code { Ok, InvalidArgument, NotFound, Unsupported, ParseError, IoError, Internal };

class Status {
  public:
    Status() = default;
    Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
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
    const std::string& message() const { return message_; }

  private:
    Code code_ = Code::Ok;
    std::string message_;
};

#define GENX_RETURN_IF_ERROR(expr)                 \
    do {                                           \
        ::genx::Status genx_status_ = (expr);      \
        if (!genx_status_.is_ok()) return genx_status_; \
    } while (0)

}  // namespace genx
