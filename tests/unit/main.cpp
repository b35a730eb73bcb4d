// The one translation unit that instantiates Catch2's runner; every other
// tests/unit/test_*.cpp file only defines test cases.
//
// Tests tagged [.long] are hidden: make check leaves them out, and make
// check-long (GENX_CHECK_LONG=1 in the environment) runs them with the
// rest when no test is named on the command line.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char* argv[]) {
    std::vector<char*> args(argv, argv + argc);
    static char every[] = "~[.],[long]";  // the default's tests, or [long] ones
    const char* want_long = std::getenv("GENX_CHECK_LONG");
    if (argc == 1 && want_long != nullptr && std::strcmp(want_long, "1") == 0) args.push_back(every);
    return Catch::Session().run(static_cast<int>(args.size()), args.data());
}
