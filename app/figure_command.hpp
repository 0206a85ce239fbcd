// `madmax figure`: the explorer's charts rendered headless (no display needed).
#pragma once

#include "madmax/scenario_io.hpp"

#include <string>
#include <vector>

namespace madmax::cli {

struct FigureRequest {
    std::string scenario;
    std::vector<Override> overrides;
    std::string chart;
    std::string format; ///< --format; empty: the output file name's extension says it
    double widthIn = 3.5;
    double heightIn = 2.6;
    int scale = 2;
    bool hatching = false;
    std::string output;
    /// --chart sweep: the knobs (NAME=F1,F2,…); default scale_up_bw, scale_out_bw, hbm_bw at
    /// ×0.25…×4. `gpus=0.25,0.5,1,2,4` draws MAD-Max's Figure-1 resource–performance curve.
    std::vector<std::string> knobs;
    /// --chart pareto / pareto_cost: systems to compare (default: the scenario's) and GPU
    /// counts (default: the scenario's × 1/8 … ×4).
    std::vector<std::string> systems;
    std::vector<int> gpus;
    /// --baseline and --pin: scenarios (files or preset ids) pinned beside this one, the
    /// baseline first: the comparison chart's bars, every other chart's ghost bars and deltas.
    std::vector<std::string> pins;
};

std::vector<std::string> figureChartNames();
/// Returns the process exit code (0 ok, 2 bad input); messages go to stderr.
int runFigure(const FigureRequest& r, const char* argv0);

} // namespace madmax::cli
