// `madmax curve`: a serving scenario's latency against throughput as the batch grows.
#include "search_commands.hpp"

#include "cli_checks.hpp"

#include "madmax/codesign.hpp"
#include "madmax/error.hpp"
#include "madmax/json_reader.hpp"
#include "madmax/report.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/search_io.hpp"
#include "madmax/serving.hpp"

#include <cstdio>
#include <iostream>
#include <memory>

namespace madmax::cli {

void addCurveCommand(CLI::App& app) {
    struct Options {
        std::string scenario = PresetLibrary::kDefaultScenario;
        std::vector<std::string> sets;
        bool json = false;
    };
    auto o = std::make_shared<Options>();
    auto* curve = app.add_subcommand("curve", "Serving: latency vs throughput as the batch grows (a prefill pool: as its load grows)");
    curve->add_option("scenario", o->scenario, "An inference scenario file or preset id")
        ->required();
    curve->add_option("--set", o->sets, "Override a field: path=value")->type_name("PATH=VALUE");
    curve->add_flag("--json", o->json, "Print JSON");
    curve->callback([o] {
        std::vector<Override> ov;
        for (const auto& x : o->sets)
            ov.push_back(parseOverride(x));
        const Scenario sc = loadScenario(o->scenario, PresetLibrary::builtin(), ov);
        if (sc.workload.kind != WorkloadKind::Inference)
            throw InputError(o->scenario, "workload.kind",
                             "the curve is for inference scenarios (kind \"inference\")");
        const auto pts = latencyThroughputCurve(sc);
        const bool prefill = sc.workload.inference.phase == ServingPhase::Prefill;
        if (o->json) {
            nlohmann::json a = nlohmann::json::array();
            for (const auto& p : pts) {
                nlohmann::json row = {{"batch", p.batch},
                                      {"ttft_s", p.ttftS},
                                      {"tpot_s", p.tpotS},
                                      {"e2e_latency_s", p.e2eS},
                                      {"output_tokens_per_s_per_gpu", p.outputTokensPerSPerGpu},
                                      {"fits", p.fits}};
                if (prefill) {
                    row["load"] = p.load;
                    row["prompt_tokens_per_s_per_gpu"] = p.promptTokensPerSPerGpu;
                }
                a.push_back(row);
            }
            std::cout << a.dump(2) << "\n";
        } else if (prefill) {
            // A prefill pool runs one pass at every load: its curve sweeps the load.
            std::cout << " load        TTFT  prompt tok/s/GPU  memory\n";
            for (const auto& p : pts)
                std::printf("%5.2f  %10s  %16.1f  %s\n", p.load, formatSeconds(p.ttftS).c_str(),
                            p.promptTokensPerSPerGpu, p.fits ? "fits" : "DOES NOT FIT");
        } else {
            std::cout << "batch        TTFT        TPOT   tok/s/GPU  memory\n";
            for (const auto& p : pts)
                std::printf("%5d  %10s  %10s  %10.1f  %s\n", p.batch,
                            formatSeconds(p.ttftS).c_str(), formatSeconds(p.tpotS).c_str(),
                            p.outputTokensPerSPerGpu, p.fits ? "fits" : "DOES NOT FIT");
        }
    });
}

} // namespace madmax::cli
