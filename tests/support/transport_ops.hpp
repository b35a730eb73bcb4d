// The reverse of OpsTransport: a C function table over a C++ transport, for
// tests and benchmarks that drive the C API over the loopback.
#pragma once

#include "common/genx_types.h"
#include "runtime/transport.hpp"

namespace genx {

// A table whose ctx is `t`; its send is set only where `t` has a blocking
// send.
genx_transport_ops transport_ops_for(Transport* t);

}  // namespace genx
