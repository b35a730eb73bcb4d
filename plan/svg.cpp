// Plan drawing (layout and conventions in svg.hpp).
#include "plan/svg.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "plan/print.hpp"

namespace genx {

namespace {

std::string esc(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '&':
                out += "&amp;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

// Cuts a label to `max` characters (UTF-8 safe: block labels are ASCII).
std::string shorten(const std::string& s, size_t max) {
    if (s.size() <= max || max < 2) return s;
    return s.substr(0, max - 1) + "\xE2\x80\xA6";  // "…"
}

// Does rank `rank` fold data received in step `s` into a partial sum there?
bool reduces_received(const Step& st, const Transfer& recv) {
    for (const LocalOp& op : st.ops) {
        if (op.kind != OpKind::Reduce) continue;
        if (op.dst == recv.buffer) return true;
        for (BufferId b : op.srcs)
            if (b == recv.buffer) return true;
    }
    return false;
}

const Transfer* find_recv(const Plan& plan, int rank, int step, int from) {
    const Program& prog = plan.programs[static_cast<size_t>(rank)];
    if (step >= static_cast<int>(prog.steps.size())) return nullptr;
    for (const Transfer& t : prog.steps[static_cast<size_t>(step)].recvs)
        if (t.peer == from) return &t;
    return nullptr;
}

}  // namespace

std::string plan_to_svg(const Plan& plan) {
    const int P = plan.nranks;
    const int S = plan.max_steps();
    const double col = 160, left = 70, top = 64, bottom = 52;
    const double row = P <= 16 ? 44 : (P <= 48 ? 28 : 18);
    const int font = P <= 16 ? 11 : (P <= 48 ? 10 : 8);
    const double width = std::max(left + std::max(S, 1) * col + 30, 640.0);
    const double height = top + std::max(P, 1) * row + bottom;
    const size_t label_chars = static_cast<size_t>(col * 0.55 / (font * 0.6));
    auto y_of = [&](int r) { return top + (r + 0.5) * row; };
    auto x_at = [&](int s, double f) { return left + s * col + f * col; };

    std::string o;
    o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" +
         num(height) + "\" viewBox=\"0 0 " + num(width) + " " + num(height) +
         "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n";
    o += "<defs>"
         "<marker id=\"ar\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
         "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" "
         "fill=\"#2166ac\"/></marker>"
         "<marker id=\"ar-red\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
         "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" "
         "fill=\"#b2182b\"/></marker></defs>\n";
    o += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    const std::string heading = plan.algorithm +
                                (plan.params.empty() ? "" : " (" + plan.params + ")") +
                                ": P=" + std::to_string(P) + ", " + std::to_string(plan.nblocks) +
                                " blocks, " + std::to_string(S) + " steps";
    o += "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" + esc(heading) +
         "</text>\n";

    // Columns: alternating bands, step numbers, and whether the step reduces.
    for (int s = 0; s < S; ++s) {
        bool reduces = false;
        for (const Program& prog : plan.programs)
            if (s < static_cast<int>(prog.steps.size()))
                for (const LocalOp& op : prog.steps[static_cast<size_t>(s)].ops)
                    reduces = reduces || op.kind == OpKind::Reduce;
        if (s % 2 == 1)
            o += "<rect x=\"" + num(x_at(s, 0)) + "\" y=\"" + num(top - 6) + "\" width=\"" +
                 num(col) + "\" height=\"" + num(P * row + 12) + "\" fill=\"#f4f4f4\"/>\n";
        o += "<text x=\"" + num(x_at(s, 0.5)) + "\" y=\"" + num(top - 24) +
             "\" font-size=\"12\" text-anchor=\"middle\">step " + std::to_string(s) + "</text>\n";
        o += "<text x=\"" + num(x_at(s, 0.5)) + "\" y=\"" + num(top - 10) +
             "\" font-size=\"10\" text-anchor=\"middle\" fill=\"" +
             (reduces ? "#b2182b\">reduce" : "#2166ac\">store") + "</text>\n";
    }
    // Rows: rank labels and time lines.
    for (int r = 0; r < P; ++r) {
        o += "<text x=\"" + num(left - 10) + "\" y=\"" + num(y_of(r) + font * 0.35) +
             "\" font-size=\"" + std::to_string(font + 1) + "\" text-anchor=\"end\">rank " +
             std::to_string(r) + "</text>\n";
        o += "<line x1=\"" + num(left) + "\" y1=\"" + num(y_of(r)) + "\" x2=\"" +
             num(left + S * col) + "\" y2=\"" + num(y_of(r)) +
             "\" stroke=\"#cccccc\" stroke-width=\"1\"/>\n";
    }

    // Messages, then the local-op marks on top of them.
    for (int r = 0; r < P; ++r) {
        const Program& prog = plan.programs[static_cast<size_t>(r)];
        for (size_t s = 0; s < prog.steps.size(); ++s) {
            const Step& st = prog.steps[s];
            const int si = static_cast<int>(s);
            for (size_t k = 0; k < st.sends.size(); ++k) {
                const Transfer& t = st.sends[k];
                if (t.peer < 0 || t.peer >= P) continue;
                const Transfer* rv = find_recv(plan, t.peer, si, r);
                const bool red =
                    rv != nullptr &&
                    reduces_received(plan.programs[static_cast<size_t>(t.peer)].steps[s], *rv);
                const std::string colour = red ? "#b2182b" : "#2166ac";
                const double x1 = x_at(si, 0.08), x2 = x_at(si, 0.90);
                const double y1 = y_of(r), y2 = y_of(t.peer);
                const std::string blocks = format_blocks(t.blocks);
                o += "<g><title>" +
                     esc("step " + std::to_string(s) + ": rank " + std::to_string(r) + " -> " +
                         std::to_string(t.peer) + ": " + blocks + " from " +
                         format_buffer(t.buffer) +
                         (rv ? " into " + format_buffer(rv->buffer) : " (no matching receive)")) +
                     "</title>";
                o += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) +
                     "\" y2=\"" + num(y2) + "\" stroke=\"" + colour +
                     "\" stroke-width=\"1.3\" stroke-opacity=\"0.8\" marker-end=\"url(#" +
                     (red ? "ar-red" : "ar") + ")\"/>";
                // Labels sit on the sender's row on the side the arrow
                // leaves from (above a downward arrow, below an upward one),
                // where only crossing arrows pass; several messages of one
                // rank in one step stack away from the row.
                const bool down = y2 > y1;
                const double lx = x1 + 2;
                const double ly = down ? y1 - 3 - static_cast<double>(k) * (font + 1)
                                       : y1 + font + 1 + static_cast<double>(k) * (font + 1);
                o += "<text x=\"" + num(lx) + "\" y=\"" + num(ly) + "\" font-size=\"" +
                     std::to_string(font) + "\" fill=\"" + colour +
                     "\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">" +
                     esc(shorten(blocks, label_chars)) + "</text></g>\n";
            }
        }
    }
    for (int r = 0; r < P; ++r) {
        const Program& prog = plan.programs[static_cast<size_t>(r)];
        for (size_t s = 0; s < prog.steps.size(); ++s) {
            const Step& st = prog.steps[s];
            if (st.ops.empty()) continue;
            bool any_reduce = false;
            std::string tip = "step " + std::to_string(s) + ", rank " + std::to_string(r) + ":";
            for (const LocalOp& op : st.ops) {
                any_reduce = any_reduce || op.kind == OpKind::Reduce;
                tip += op.kind == OpKind::Reduce ? " reduce " + format_buffer(op.dst) + " ⊕="
                                                 : " copy " + format_buffer(op.dst) + " :=";
                for (BufferId b : op.srcs) tip += " " + format_buffer(b);
                tip += " on " + format_blocks(op.blocks) + ";";
            }
            const double cx = x_at(static_cast<int>(s), 0.955), cy = y_of(r);
            const double rad = std::min(7.0, row * 0.22);
            o += "<g><title>" + esc(tip) + "</title><circle cx=\"" + num(cx) + "\" cy=\"" +
                 num(cy) + "\" r=\"" + num(rad) + "\" fill=\"white\" stroke=\"" +
                 (any_reduce ? "#b2182b" : "#444444") + "\" stroke-width=\"1.2\"/>";
            o += "<text x=\"" + num(cx) + "\" y=\"" + num(cy + rad * 0.55) + "\" font-size=\"" +
                 num(rad * 1.6) + "\" text-anchor=\"middle\" fill=\"" +
                 (any_reduce ? "#b2182b\">⊕" : "#444444\">=") + "</text></g>\n";
        }
    }

    o += "<text x=\"10\" y=\"" + num(height - 26) +
         "\" font-size=\"11\" fill=\"#555555\">arrow: one message from the sender's row to the "
         "receiver's row, labelled with its blocks</text>\n";
    o += "<text x=\"10\" y=\"" + num(height - 11) +
         "\" font-size=\"11\" fill=\"#555555\">red: the receiver reduces it, blue: stored as is; "
         "⊕: local reduce after the step's transfers; hover for buffers</text>\n";
    o += "</svg>\n";
    return o;
}

}  // namespace genx
