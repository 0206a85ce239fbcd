// The validation report as the command line prints it: each case's measurement, prediction and
// error with its notes, then the error summary by kind and metric and the rank correlations.
#include "madmax/validation.hpp"

#include "files/text_columns.hpp"

#include <algorithm>

namespace madmax {

using detail::fmt;
using detail::pad;

std::string formatValidation(const ValidationReport& r) {
    // The case column fits the longest id (ids run into the metric otherwise).
    std::size_t w = 44;
    for (const auto& c : r.cases)
        w = std::max(w, c.id.size() + 2);
    std::string o =
        pad("case", w) + pad("metric", 26) + pad("measured", 12) + pad("predicted", 12) + "error\n";
    for (const auto& c : r.cases) {
        if (c.predicted) {
            o += pad(c.id, w) + pad(c.metric, 26) + pad(fmt("%.4g", c.measured), 12) +
                 pad(fmt("%.4g", *c.predicted), 12) + fmt("%+.1f%%", c.errorPct()) + "\n";
            for (const auto& n : c.notes)
                o += "    " + n + "\n";
        } else
            o += pad(c.id, w) + "skipped: " + c.skipped + "\n";
    }
    auto stats = [&](const std::string& name, const ErrorStats& s) {
        o += pad(name, 36) + fmt("n=%-4.0f", double(s.count)) +
             fmt(" median %5.1f%%", s.medianAbsPct) + fmt("  p90 %5.1f%%", s.p90AbsPct) +
             fmt("  max %5.1f%%\n", s.maxAbsPct);
    };
    o += "\nSummary (absolute % error)\n";
    stats("all predicted", r.overall);
    for (const auto& [k, v] : r.byKind)
        stats("  kind " + k, v);
    for (const auto& [k, v] : r.byMetric)
        stats("  metric " + k, v);
    if (r.artifact) {
        o += "The cases' artifact_prediction (another model's own predictions), same cases\n";
        stats("  the artifact's", *r.artifact);
        stats("  this engine's", *r.oursOnArtifactCases);
    }
    if (r.spearmanMean) {
        o += fmt("Spearman rank correlation within groups: mean %.2f\n", *r.spearmanMean);
        for (const auto& [g, v] : r.spearmanByGroup)
            o += "  " + pad(g, 60) + fmt("%+.2f\n", v);
    }
    return o;
}

} // namespace madmax
