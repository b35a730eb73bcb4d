// Rules files: parsing with line numbers, validation, matching, writing
// (contracts and format in rules.hpp and docs/rules.md).
#include "tuning/rules.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "plan/registry.hpp"
#include "common/text_util.hpp"

namespace genx {


namespace {

using json = nlohmann::json;

// ------------------------------------------------------------ line index
//
// nlohmann::json keeps no source positions, so after it has accepted the
// text a second, small scanner walks the same text and records the line of
// every object member and array element by JSON pointer.  It also rejects
// duplicate keys, which nlohmann accepts silently (keeping the last), since
// a rules file whose two "bytes" keys disagree has no single meaning.

std::string pointer_escape(const std::string& key) {
    std::string out;
    for (char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

class LineIndex {
  public:
    // `text` must be valid JSON (checked by nlohmann first).  Fails only on
    // a duplicate key, naming it.
    Status build(const std::string& text, const std::string& source) {
        text_ = &text;
        source_ = &source;
        pos_ = 0;
        line_ = 1;
        lines_.clear();
        lines_[""] = 1;
        return value("", "");
    }

    // Line of the value at `pointer`, or of its nearest recorded ancestor.
    int line_of(std::string pointer) const {
        for (;;) {
            auto it = lines_.find(pointer);
            if (it != lines_.end()) return it->second;
            const size_t slash = pointer.rfind('/');
            if (slash == std::string::npos) return 1;
            pointer.resize(slash);
        }
    }

  private:
    char peek() const { return pos_ < text_->size() ? (*text_)[pos_] : '\0'; }
    void advance() {
        if (peek() == '\n') ++line_;
        ++pos_;
    }
    void skip_ws() {
        while (pos_ < text_->size() && std::isspace(static_cast<unsigned char>(peek()))) advance();
    }
    // Reads a string token; decodes the simple escapes (enough to name the
    // keys of a rules file; a \u escape stays as written, so such a key is
    // located at its parent).
    std::string string_token() {
        std::string out;
        advance();  // opening quote
        while (pos_ < text_->size() && peek() != '"') {
            if (peek() == '\\') {
                advance();
                const char e = peek();
                switch (e) {
                    case 'n': out += '\n'; break;
                    case 't': out += '\t'; break;
                    case 'r': out += '\r'; break;
                    case 'b': out += '\b'; break;
                    case 'f': out += '\f'; break;
                    case 'u': out += "\\u"; break;
                    default: out += e; break;
                }
                advance();
            } else {
                out += peek();
                advance();
            }
        }
        advance();  // closing quote
        return out;
    }
    Status value(const std::string& pointer, const std::string& dotted) {
        skip_ws();
        if (lines_.find(pointer) == lines_.end()) lines_[pointer] = line_;
        const char c = peek();
        if (c == '{') {
            advance();
            std::set<std::string> seen;
            for (;;) {
                skip_ws();
                if (peek() == '}') break;
                if (peek() == ',') {
                    advance();
                    continue;
                }
                const int key_line = line_;
                const std::string key = string_token();
                const std::string child = pointer + "/" + pointer_escape(key);
                const std::string child_dotted = dotted.empty() ? key : dotted + "." + key;
                if (!seen.insert(key).second)
                    return Status::invalid(*source_ + ":" + std::to_string(key_line) + ": " +
                                           child_dotted + ": key '" + key +
                                           "' appears twice in one object");
                lines_[child] = key_line;
                skip_ws();
                advance();  // ':'
                GENX_RETURN_IF_ERROR(value(child, child_dotted));
            }
            advance();
        } else if (c == '[') {
            advance();
            int i = 0;
            for (;;) {
                skip_ws();
                if (peek() == ']') break;
                if (peek() == ',') {
                    advance();
                    continue;
                }
                GENX_RETURN_IF_ERROR(value(pointer + "/" + std::to_string(i),
                                           dotted + "[" + std::to_string(i) + "]"));
                ++i;
            }
            advance();
        } else if (c == '"') {
            string_token();
        } else {
            while (pos_ < text_->size() && peek() != ',' && peek() != '}' && peek() != ']' &&
                   !std::isspace(static_cast<unsigned char>(peek())))
                advance();
        }
        return Status::ok();
    }

    const std::string* text_ = nullptr;
    const std::string* source_ = nullptr;
    size_t pos_ = 0;
    int line_ = 1;
    std::map<std::string, int> lines_;
};

// "allreduce[3].bytes" -> "/allreduce/3/bytes" (genx's own field names have
// no '.', '[' or '/').
std::string dotted_to_pointer(const std::string& dotted) {
    std::string out = "/";
    for (char c : dotted) {
        if (c == '.' || c == '[')
            out += '/';
        else if (c != ']')
            out += c;
    }
    return out == "/" ? "" : out;
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}


std::string algorithm_names() {
    std::vector<std::string> names;
    for (const GeneratorInfo& g : generators()) names.push_back(g.name);
    return join(names);
}

// One parse: the source, the line index and error formatting.
class Parser {
  public:
    Parser(const std::string& source, const LineIndex& index) : source_(source), index_(index) {}

    Status error(const std::string& field, const std::string& what) const {
        return Status::invalid(source_ + ":" +
                               std::to_string(index_.line_of(dotted_to_pointer(field))) + ": " +
                               (field.empty() ? "" : field + ": ") + what);
    }

    Status check_keys(const json& obj, const std::string& field,
                      const std::vector<std::string>& known) const {
        if (!obj.is_object()) return error(field, "expected an object, got " + obj.dump());
        for (auto it = obj.begin(); it != obj.end(); ++it) {
            if (std::find(known.begin(), known.end(), it.key()) != known.end()) continue;
            const std::string pointer = dotted_to_pointer(field) + "/" + pointer_escape(it.key());
            return Status::invalid(source_ + ":" + std::to_string(index_.line_of(pointer)) + ": " +
                                   (field.empty() ? "" : field + ".") + it.key() +
                                   ": unknown key (known here: " + join(known) + ")");
        }
        return Status::ok();
    }

    Status string_field(const json& obj, const std::string& field, const char* key,
                        bool required, std::string* out) const {
        const std::string f = field.empty() ? key : field + "." + key;
        auto it = obj.find(key);
        if (it == obj.end())
            return required ? error(f, "required key is missing") : Status::ok();
        if (!it->is_string()) return error(f, "expected a string, got " + it->dump());
        *out = it->get<std::string>();
        return Status::ok();
    }

    Status int_field(const json& obj, const std::string& field, const char* key, bool required,
                     long lo, int* out) const {
        const std::string f = field.empty() ? key : field + "." + key;
        auto it = obj.find(key);
        if (it == obj.end())
            return required ? error(f, "required key is missing") : Status::ok();
        if (!it->is_number_integer() || it->get<long>() < lo || it->get<long>() > 1L << 30)
            return error(f, "expected an integer >= " + std::to_string(lo) + ", got " + it->dump());
        *out = static_cast<int>(it->get<long>());
        return Status::ok();
    }

    Status count_range(const json& obj, const std::string& field, const char* key,
                       CountRange* out) const {
        const std::string f = field + "." + key;
        auto it = obj.find(key);
        if (it == obj.end()) return Status::ok();
        CountRange r;
        if (it->is_number_integer()) {
            if (it->get<long>() < 1)
                return error(f, "a count must be >= 1, got " + it->dump());
            r.lo = r.hi = it->get<long>();
            r.any = false;
        } else if (it->is_string()) {
            Status st = parse_count_range(it->get<std::string>(), &r);
            if (!st) return error(f, st.message());
        } else {
            return error(f, "expected an integer or a range string like \"2-8\" or \"4-inf\", got " +
                                it->dump());
        }
        *out = r;
        return Status::ok();
    }

    // A "model" rule's object of KEY: {FAMILY: value, ...}, each family one
    // the rule lists: `does` says what the key gives them, `value` what an
    // entry holds; check(f, v) reads one value (f: its field).
    template <class Check>
    Status per_family(const json& obj, const std::string& field, const std::string& key,
                      const AllreduceRule& r, const std::string& does, const std::string& value,
                      const Check& check) const {
        if (!r.by_model() || r.families.empty())
            return error(field + "." + key,
                         "only a rule with \"algorithm\": \"model\" and \"families\" " + does);
        if (!obj.is_object())
            return error(field + "." + key, "expected an object of family: " + value + ", got " + obj.dump());
        for (const auto& [fam, v] : obj.items()) {
            const std::string f = field + "." + key + "." + fam;
            if (std::find(r.families.begin(), r.families.end(), fam) == r.families.end())
                return error(f, "\"" + fam + "\" is not one of the rule's \"families\"");
            GENX_RETURN_IF_ERROR(check(f, fam, v));
        }
        return Status::ok();
    }

    // "scale": {FAMILY: factor > 0, ...}.
    Status scale(const json& sc, const std::string& field, AllreduceRule* r) const {
        return per_family(sc, field, "scale", *r, "scales their prices", "factor",
                          [&](const std::string& f, const std::string& fam, const json& v) {
                              if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
                                  return error(f, "expected a positive factor such as 1.3, got " + v.dump());
                              r->scale[fam] = v.get<double>();
                              return Status::ok();
                          });
    }

    // "pipeline": {FAMILY: depth from 1 to 1024, ...}.
    Status pipeline(const json& pl, const std::string& field, AllreduceRule* r) const {
        return per_family(pl, field, "pipeline", *r, "names their pipeline depths", "depth",
                          [&](const std::string& f, const std::string& fam, const json& v) {
                              if (!v.is_number_integer() || v.get<long>() < 1 || v.get<long>() > 1024)
                                  return error(f, "expected a pipeline depth from 1 to 1024, got " + v.dump());
                              r->pipeline[fam] = v.get<int>();
                              return Status::ok();
                          });
    }

    Status rule(const json& j, int index, AllreduceRule* out) const {
        const std::string field = "allreduce[" + std::to_string(index) + "]";
        GENX_RETURN_IF_ERROR(check_keys(j, field,
                                        {"call", "comm_size", "nodes", "ppn", "switch_levels", "rated",
                                         "bytes", "algorithm", "params", "families", "margin", "scale",
                                         "pipeline", "comment"}));
        AllreduceRule r;
        r.index = index;
        r.line = index_.line_of(dotted_to_pointer(field));
        std::string call;
        GENX_RETURN_IF_ERROR(string_field(j, field, "call", false, &call));
        if (j.contains("call")) {
            if (call == "blocking")
                r.call = CallKind::Blocking;
            else if (call == "nonblocking")
                r.call = CallKind::Nonblocking;
            else
                return error(field + ".call", "expected \"blocking\" (MPI_Allreduce) or "
                                              "\"nonblocking\" (MPI_Iallreduce and persistent "
                                              "allreduce), got \"" + call + "\"");
        }
        GENX_RETURN_IF_ERROR(count_range(j, field, "comm_size", &r.comm_size));
        GENX_RETURN_IF_ERROR(count_range(j, field, "nodes", &r.nodes));
        GENX_RETURN_IF_ERROR(count_range(j, field, "ppn", &r.ppn));
        GENX_RETURN_IF_ERROR(count_range(j, field, "switch_levels", &r.switch_levels));
        if (auto rt = j.find("rated"); rt != j.end()) {
            if (!rt->is_boolean())
                return error(field + ".rated", "expected true or false, got " + rt->dump());
            r.rated_only = rt->get<bool>();
        }
        std::string bytes;
        GENX_RETURN_IF_ERROR(string_field(j, field, "bytes", false, &bytes));
        if (j.contains("bytes")) {
            Status st = parse_byte_range(bytes, &r.bytes);
            if (!st) return error(field + ".bytes", st.message());
        }
        GENX_RETURN_IF_ERROR(string_field(j, field, "comment", false, &r.comment));
        GENX_RETURN_IF_ERROR(string_field(j, field, "algorithm", true, &r.algorithm));
        const GeneratorInfo* gen = find_generator(r.algorithm);
        if (gen == nullptr && !r.by_model() && !r.defers())
            return error(field + ".algorithm", "unknown algorithm '" + r.algorithm +
                                                   "' (known: " + algorithm_names() + ", " +
                                                   kModelAlgorithm + ", " + kFallbackAlgorithm +
                                                   ")");
        std::string params;
        GENX_RETURN_IF_ERROR(string_field(j, field, "params", false, &params));
        ParamMap pm;
        Status st = parse_params(params, &pm);
        if (!st) return error(field + ".params", st.message());
        if (r.defers()) {
            for (const auto& kv : pm)
                if (kv.first != kBaseParam)
                    return error(field + ".params",
                                 "'" + kv.first + "' is not a parameter of \"fallback\" (accepted: " +
                                     kBaseParam + "=NAME, one of Open MPI's allreduce algorithms: " +
                                     base_algorithm_names() + ")");
            auto b = pm.find(kBaseParam);
            if (b != pm.end() && find_base_algorithm(b->second) == nullptr)
                return error(field + ".params",
                             "unknown Open MPI allreduce algorithm '" + b->second + "' (known: " +
                                 base_algorithm_names() + ")");
            if (b != pm.end() && r.call == CallKind::Nonblocking)
                return error(field + ".params",
                             "Open MPI's allreduce algorithms (base=" + b->second +
                                 ") are blocking only; a \"nonblocking\" fallback rule leaves "
                                 "calls to the displaced component and takes no parameters");
        } else {
            for (const auto& kv : pm) {
                const bool exec = is_exec_key(kv.first);
                const bool own = gen != nullptr && std::find(gen->param_keys.begin(),
                                                             gen->param_keys.end(),
                                                             kv.first) != gen->param_keys.end();
                if (!exec && !own && gen != nullptr &&
                    !retired_key_message(*gen, kv.first).empty())
                    return error(field + ".params", retired_key_message(*gen, kv.first));
                if (!exec && !own) {
                    std::vector<std::string> keys = gen != nullptr ? gen->param_keys
                                                                   : std::vector<std::string>{};
                    keys.insert(keys.end(), kExecParamKeys.begin(), kExecParamKeys.end());
                    return error(field + ".params",
                                 "'" + kv.first + "' is not a parameter of " + r.algorithm +
                                     " (accepted: " + join(keys) + ")");
                }
            }
        }
        r.params = format_params(pm);
        auto fam = j.find("families");
        if (fam != j.end()) {
            if (!r.by_model())
                return error(field + ".families",
                             "only a rule with \"algorithm\": \"model\" chooses among families");
            if (!fam->is_array() || fam->empty())
                return error(field + ".families",
                             "expected a non-empty list of algorithm names, got " + fam->dump());
            for (size_t i = 0; i < fam->size(); ++i) {
                const std::string f = field + ".families[" + std::to_string(i) + "]";
                const json& v = (*fam)[i];
                if (i == 0 && v.is_string() && v.get<std::string>() == kFallbackAlgorithm) {
                    r.families.push_back(kFallbackAlgorithm);
                    continue;
                }
                if (!v.is_string() || find_generator(v.get<std::string>()) == nullptr)
                    return error(f, "unknown algorithm " + v.dump() + " (known: " +
                                        algorithm_names() + "; \"fallback\" only first)");
                r.families.push_back(v.get<std::string>());
            }
        }
        if (auto m = j.find("margin"); m != j.end()) {
            if (!r.by_model() || r.families.size() < 2)
                return error(field + ".margin",
                             "only a rule with \"algorithm\": \"model\" and two or more "
                             "\"families\" has a margin (the first family is the incumbent)");
            if (!m->is_number() || m->get<double>() < 0 || m->get<double>() >= 1)
                return error(field + ".margin",
                             "expected a fraction in [0, 1) such as 0.2, got " + m->dump());
            r.margin = m->get<double>();
        }
        if (!r.families.empty() && r.families[0] == kFallbackAlgorithm && r.families.size() < 2)
            return error(field + ".families",
                         "\"fallback\" is an incumbent: list the families that may replace it");
        if (auto sc = j.find("scale"); sc != j.end()) GENX_RETURN_IF_ERROR(scale(*sc, field, &r));
        if (auto pl = j.find("pipeline"); pl != j.end()) GENX_RETURN_IF_ERROR(pipeline(*pl, field, &r));
        *out = std::move(r);
        return Status::ok();
    }

    Status file(const json& j, const RulesCheck& check, RulesFile* out) const {
        if (!j.is_object()) return error("", "expected a JSON object (not a genx rules file)");
        // The format first: a model file or tuned's JSON given by mistake
        // should be told so, not about its first unknown key.
        RulesFile f;
        f.source = source_;
        std::string format;
        auto fmt = j.find("format");
        if (fmt == j.end())
            return error("format", "required key is missing (not a genx rules file?)");
        GENX_RETURN_IF_ERROR(string_field(j, "", "format", true, &format));
        if (format != kRulesFormatName)
            return error("format", "expected \"" + std::string(kRulesFormatName) + "\", got \"" +
                                       format + "\" (not a genx rules file)");
        GENX_RETURN_IF_ERROR(check_keys(
            j, "", {"$schema", "format", "version", "comment", "provenance", "model", "allreduce"}));
        auto v = j.find("version");
        if (v == j.end()) return error("version", "required key is missing");
        if (!v->is_number_integer() || v->get<long>() != kRulesFormatVersion)
            return error("version", "this genx reads rules format version " +
                                        std::to_string(kRulesFormatVersion) + ", the file has " +
                                        v->dump());
        f.version = kRulesFormatVersion;

        auto prov = j.find("provenance");
        if (prov != j.end()) {
            GENX_RETURN_IF_ERROR(check_keys(
                *prov, "provenance", {"genx_version", "date", "hosts", "topology", "generator"}));
            Provenance& p = f.provenance;
            GENX_RETURN_IF_ERROR(string_field(*prov, "provenance", "genx_version", false,
                                              &p.genx_version));
            GENX_RETURN_IF_ERROR(string_field(*prov, "provenance", "date", false, &p.date));
            GENX_RETURN_IF_ERROR(int_field(*prov, "provenance", "hosts", false, 0, &p.hosts));
            GENX_RETURN_IF_ERROR(
                string_field(*prov, "provenance", "topology", false, &p.topology));
            GENX_RETURN_IF_ERROR(
                string_field(*prov, "provenance", "generator", false, &p.generator));
            if (!check.fingerprint.empty() && !p.topology.empty() && p.topology != "*" &&
                p.topology != check.fingerprint) {
                Status elsewhere = error("provenance.topology", "the file was made for \"" + p.topology +
                                                                    "\" but this host is \"" +
                                                                    check.fingerprint + "\"");
                if (check.mismatch == nullptr) return elsewhere;
                *check.mismatch = elsewhere.message();
            }
        }

        auto model = j.find("model");
        if (model != j.end()) {
            Status st = model_params_from_json(*model, "model", &f.model);
            if (!st) {
                // The model's messages start with the dotted field.
                const std::string& m = st.message();
                const size_t colon = m.find(": ");
                const std::string field = colon == std::string::npos ? "model" : m.substr(0, colon);
                const std::string what = colon == std::string::npos ? m : m.substr(colon + 2);
                return error(field, what);
            }
            f.has_model = true;
        }

        auto list = j.find("allreduce");
        if (list == j.end()) return error("allreduce", "required key is missing");
        if (!list->is_array())
            return error("allreduce", "expected a list of rules, got " + list->dump());
        for (size_t i = 0; i < list->size(); ++i) {
            AllreduceRule r;
            GENX_RETURN_IF_ERROR(rule((*list)[i], static_cast<int>(i), &r));
            f.allreduce.push_back(std::move(r));
        }
        *out = std::move(f);
        return Status::ok();
    }

  private:
    const std::string& source_;
    const LineIndex& index_;
};

bool parse_long(const std::string& s, long* out) {
    if (s.empty() || s.size() > 12) return false;
    long v = 0;
    for (char c : s) {
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
        v = v * 10 + (c - '0');
    }
    *out = v;
    return true;
}

}  // namespace

Status parse_byte_range(const std::string& text, ByteRange* out) {
    const std::string t = trim(text);
    const size_t dash = t.find('-');
    if (dash == std::string::npos)
        return Status::invalid("'" + text +
                               "' is not a byte range: write \"LO-HI\" (sizes with K/M/G, HI may "
                               "be inf), e.g. \"64K-1M\" for 64K <= bytes < 1M");
    const std::string lo_text = trim(t.substr(0, dash));
    const std::string hi_text = trim(t.substr(dash + 1));
    ByteRange r;
    Status st = parse_size(lo_text, &r.lo);
    if (!st) return Status::invalid("lower bound of '" + text + "': " + st.message());
    if (lower(hi_text) == "inf") {
        r.hi = ByteRange::kNoLimit;
    } else {
        st = parse_size(hi_text, &r.hi);
        if (!st) return Status::invalid("upper bound of '" + text + "': " + st.message());
        if (r.hi <= r.lo)
            return Status::invalid("byte range '" + text +
                                   "' is empty (the upper bound is exclusive and must exceed the "
                                   "lower bound)");
    }
    *out = r;
    return Status::ok();
}

Status parse_count_range(const std::string& text, CountRange* out) {
    const std::string t = trim(text);
    CountRange r;
    r.any = false;
    const size_t dash = t.find('-');
    const std::string lo_text = trim(t.substr(0, dash));
    const std::string hi_text = dash == std::string::npos ? lo_text : trim(t.substr(dash + 1));
    if (!parse_long(lo_text, &r.lo))
        return Status::invalid("'" + text +
                               "' is not a count range: write N, \"LO-HI\" (inclusive) or "
                               "\"LO-inf\"");
    if (lower(hi_text) == "inf") {
        r.hi = -1;
    } else if (!parse_long(hi_text, &r.hi)) {
        return Status::invalid("'" + text +
                               "' is not a count range: write N, \"LO-HI\" (inclusive) or "
                               "\"LO-inf\"");
    }
    if (r.lo < 1) return Status::invalid("count range '" + text + "' starts below 1");
    if (r.hi >= 0 && r.hi < r.lo)
        return Status::invalid("count range '" + text + "' is empty (upper bound below lower)");
    *out = r;
    return Status::ok();
}

std::string format_byte_range(const ByteRange& r) {
    return format_bytes(r.lo) + "-" + format_bytes(r.hi);
}

std::string format_count_range(const CountRange& r) {
    if (r.any) return "";
    if (r.hi == r.lo) return std::to_string(r.lo);
    return std::to_string(r.lo) + "-" + (r.hi < 0 ? std::string("inf") : std::to_string(r.hi));
}

std::string rule_location(const RulesFile& rules, const AllreduceRule& rule) {
    return rules.source + ":" + std::to_string(rule.line) + " (allreduce[" +
           std::to_string(rule.index) + "])";
}

Status parse_rules(const std::string& text, const std::string& source, const RulesCheck& check,
                   RulesFile* out) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        const int line = line_before_byte(text, e.byte);
        std::string what = e.what();
        const size_t at = what.find("syntax error");
        if (at != std::string::npos) what = what.substr(at);
        return Status::parse_error(source + ":" + std::to_string(line) +
                                   ": (JSON syntax): " + what);
    }
    LineIndex index;
    GENX_RETURN_IF_ERROR(index.build(text, source));
    Parser parser(source, index);
    return parser.file(j, check, out);
}

Status load_rules_file(const std::string& path, const RulesCheck& check, RulesFile* out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::io_error(path + ": cannot open the rules file");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return Status::io_error(path + ": read error");
    return parse_rules(ss.str(), path, check, out);
}

Status load_model_file(const std::string& path, ModelParams* out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::io_error(path + ": cannot open the model or rules file");
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const json j = json::parse(text, nullptr, false);
    if (j.is_object() && j.contains("format")) {
        RulesFile f;
        GENX_RETURN_IF_ERROR(parse_rules(text, path, RulesCheck{}, &f));
        *out = f.has_model ? f.model : builtin_rules().model;
        return Status::ok();
    }
    return load_model_params(path, out);
}

const RulesFile& builtin_rules() {
    static const RulesFile rules = [] {
        RulesFile f;
        const Status st = parse_rules(builtin_rules_text(), "built-in defaults", RulesCheck{}, &f);
        if (!st) {
            f = RulesFile{};
            f.source = "built-in defaults (broken: " + st.message() + ")";
        }
        return f;
    }();
    return rules;
}

void use_builtin_model_if_none(RulesFile* f) {
    if (f->has_model) return;
    f->model = builtin_rules().model;
    f->has_model = builtin_rules().has_model;
}

Status load_rules_or_defaults(const std::string& path, bool strict, const RulesCheck& check,
                              RulesFile* out, std::string* warning) {
    if (warning != nullptr) warning->clear();
    if (path.empty()) {
        *out = builtin_rules();
        return Status::ok();
    }
    RulesFile f;
    const Status st = load_rules_file(path, check, &f);
    if (st) {
        use_builtin_model_if_none(&f);
        *out = std::move(f);
        return Status::ok();
    }
    if (strict)
        return Status(st.code(), st.message() + "; aborting because rules_strict is set");
    if (warning != nullptr)
        *warning = st.message() +
                   "; genx ignores this file and uses its built-in defaults (rules_strict=1 "
                   "aborts instead)";
    *out = builtin_rules();
    return Status::ok();
}

bool rule_applies(const AllreduceRule& r, const CommShape& shape, bool nonblocking) {
    if (!r.applies_to(nonblocking)) return false;
    if (!r.comm_size.contains(shape.size)) return false;
    if (!r.nodes.any && (shape.nodes <= 0 || !r.nodes.contains(shape.nodes))) return false;
    if (!r.ppn.any && (shape.ppn <= 0 || !r.ppn.contains(shape.ppn))) return false;
    if (!r.switch_levels.any && !r.switch_levels.contains(shape.switch_levels())) return false;
    if (r.rated_only && !shape.rated()) return false;
    return true;
}

int CommShape::switch_levels() const {
    if (!topology || topology->direct || topology->empty()) return 0;
    // Levels are worth something only priced: every link of the tree needs
    // a declared rate (an overlay), else the file counts as no levels (a
    // topology.conf alone, or the virtual root genx adds over several
    // top switches, says nothing about the links).
    // Levels inside a host (discovered, never rated by genx) are no switch
    // levels: they neither count nor make the network's levels count 0.
    for (const TopoNode& n : topology->nodes) {
        if (n.parent < 0 || n.in_host > 0) continue;
        if (n.up_class < 0 || static_cast<size_t>(n.up_class) >= topology->link_classes.size() ||
            !(topology->link_classes[static_cast<size_t>(n.up_class)].rate > 0))
            return 0;
    }
    return topology->depth();
}

bool CommShape::rated() const {
    if (!topology || topology->empty()) return false;
    if (!topology->direct) return switch_levels() >= 1;
    if (topology->links.empty()) return false;
    for (const TopoLink& l : topology->links)
        if (l.cls < 0 || static_cast<size_t>(l.cls) >= topology->link_classes.size() ||
            !(topology->link_classes[static_cast<size_t>(l.cls)].rate > 0))
            return false;
    return true;
}

const AllreduceRule* match_rule(const RulesFile& rules, const CommShape& shape, size_t bytes,
                                bool nonblocking) {
    for (const AllreduceRule& r : rules.allreduce)
        if (rule_applies(r, shape, nonblocking) && r.bytes.contains(bytes)) return &r;
    return nullptr;
}

json rules_to_json(const RulesFile& rules) {
    json j = json::object();
    j["format"] = kRulesFormatName;
    j["version"] = rules.version;
    const Provenance& p = rules.provenance;
    json prov = json::object();
    if (!p.genx_version.empty()) prov["genx_version"] = p.genx_version;
    if (!p.date.empty()) prov["date"] = p.date;
    if (p.hosts > 0) prov["hosts"] = p.hosts;
    if (!p.topology.empty()) prov["topology"] = p.topology;
    if (!p.generator.empty()) prov["generator"] = p.generator;
    j["provenance"] = prov;
    if (rules.has_model) j["model"] = model_params_to_json(rules.model);
    json list = json::array();
    for (const AllreduceRule& r : rules.allreduce) {
        json o = json::object();
        if (r.call != CallKind::Any)
            o["call"] = r.call == CallKind::Blocking ? "blocking" : "nonblocking";
        if (!r.comm_size.any) o["comm_size"] = format_count_range(r.comm_size);
        if (!r.nodes.any) o["nodes"] = format_count_range(r.nodes);
        if (!r.ppn.any) o["ppn"] = format_count_range(r.ppn);
        if (!r.switch_levels.any) o["switch_levels"] = format_count_range(r.switch_levels);
        if (r.rated_only) o["rated"] = true;
        if (r.bytes.lo != 0 || r.bytes.hi != ByteRange::kNoLimit)
            o["bytes"] = format_byte_range(r.bytes);
        o["algorithm"] = r.algorithm;
        if (!r.params.empty()) o["params"] = r.params;
        if (!r.families.empty()) o["families"] = r.families;
        if (r.margin > 0) o["margin"] = r.margin;
        if (!r.scale.empty()) o["scale"] = r.scale;
        if (!r.pipeline.empty()) o["pipeline"] = r.pipeline;
        if (!r.comment.empty()) o["comment"] = r.comment;
        list.push_back(o);
    }
    j["allreduce"] = list;
    return j;
}

std::string format_rules(const RulesFile& rules) {
    const json j = rules_to_json(rules);
    std::string out = "{\n";
    out += "  \"format\": " + j["format"].dump() + ",\n";
    out += "  \"version\": " + j["version"].dump() + ",\n";
    out += "  \"provenance\": " + j["provenance"].dump() + ",\n";
    if (j.contains("model")) {
        const json& m = j["model"];
        out += "  \"model\": {\n";
        out += "    \"links\": {\n";
        out += "      \"intra\": " + m["links"]["intra"].dump() + ",\n";
        out += "      \"inter\": " + m["links"]["inter"].dump();
        if (m["links"].contains("classes"))
            out += ",\n      \"classes\": " + m["links"]["classes"].dump();
        out += "\n    },\n";
        out += "    \"host\": " + m["host"].dump();
        // Every other key of the model (topology_rates, nonblocking_step).
        for (auto it = m.begin(); it != m.end(); ++it)
            if (it.key() != "links" && it.key() != "host")
                out += ",\n    \"" + it.key() + "\": " + it.value().dump();
        out += "\n  },\n";
    }
    out += "  \"allreduce\": [";
    const json& list = j["allreduce"];
    for (size_t i = 0; i < list.size(); ++i)
        out += std::string(i == 0 ? "\n" : ",\n") + "    " + list[i].dump();
    out += list.empty() ? "]\n" : "\n  ]\n";
    out += "}\n";
    return out;
}

std::string local_fingerprint() {
    std::string machine = "unknown";
    struct utsname u;
    if (uname(&u) == 0) machine = u.machine;
    std::string cpu;
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (cpu.empty() && std::getline(in, line)) {
        // x86 "model name", arm64 "CPU part" is less readable; take the
        // first descriptive key present.
        for (const char* key : {"model name", "Model", "cpu model", "CPU part"}) {
            if (line.compare(0, std::strlen(key), key) != 0) continue;
            const size_t colon = line.find(':');
            if (colon != std::string::npos) cpu = trim(line.substr(colon + 1));
            break;
        }
    }
    if (cpu.empty()) cpu = "unknown cpu";
    const long n = sysconf(_SC_NPROCESSORS_CONF);
    return machine + "; " + cpu + "; " + std::to_string(n > 0 ? n : 0) + " cpus";
}

const std::vector<BaseAlgorithm>& base_algorithms() {
    static const std::vector<BaseAlgorithm> all = {{"basic_linear", 1},
                                                   {"nonoverlapping", 2},
                                                   {"recursive_doubling", 3},
                                                   {"ring", 4},
                                                   {"rabenseifner", 6}};
    return all;
}

const BaseAlgorithm* find_base_algorithm(const std::string& name) {
    for (const BaseAlgorithm& b : base_algorithms())
        if (name == b.name) return &b;
    return nullptr;
}

const BaseAlgorithm* find_base_algorithm(int tuned_id) {
    for (const BaseAlgorithm& b : base_algorithms())
        if (tuned_id == b.tuned_id) return &b;
    return nullptr;
}

std::string base_algorithm_params(const BaseAlgorithm& b) {
    return std::string(kBaseParam) + "=" + b.name;
}

int base_algorithm_id(const std::string& params) {
    if (params.empty()) return 0;
    ParamMap pm;
    if (!parse_params(params, &pm)) return 0;
    auto it = pm.find(kBaseParam);
    const BaseAlgorithm* b = it != pm.end() ? find_base_algorithm(it->second) : nullptr;
    return b != nullptr ? b->tuned_id : 0;
}

std::string base_algorithm_names() {
    std::vector<std::string> names;
    for (const BaseAlgorithm& b : base_algorithms()) names.push_back(b.name);
    return join(names);
}

}  // namespace genx
