// Algorithm selection (docs/design.md §5): the rules file, or genx's built-in
// defaults (themselves a rules file), and the cost model it carries, turned
// into one decision table per communicator shape (decision_table.hpp); a
// call is a lookup in its communicator's table.
//
// Both steps are cached for the whole process: the MCA parameters that name
// the rules file are per process, and communicators of one shape (size,
// nodes, ranks per node) get the same table, so after the first
// communicator of a shape a new one costs a map lookup.  Thread-safe:
// MPI_THREAD_MULTIPLE programs may create communicators concurrently.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "tuning/decision_table.hpp"
#include "tuning/rules.hpp"

namespace genx {

// The rules for `path` ("" = the built-in defaults) with the policy of
// load_rules_or_defaults() against this host's fingerprint, loaded once per
// (path, strict).  *warning is set (non-empty) only by the call that loaded
// a rejected file, so a process reports it once.
Status selector_rules(const std::string& path, bool strict,
                      std::shared_ptr<const RulesFile>* out, std::string* warning);

// The table of `rules` for `shape`, built once per (rules, shape, options).
// Skipped-rule warnings come back only from the call that built it.
Status selector_table(const std::shared_ptr<const RulesFile>& rules, const CommShape& shape,
                      const TableOptions& options, std::shared_ptr<const DecisionTable>* out,
                      std::vector<std::string>* warnings);

}  // namespace genx
