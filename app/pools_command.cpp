// `madmax pools`: a disaggregated deployment's prefill and decode pools, balanced for the
// request mix (madmax/serving.hpp balancePools).
#include "search_commands.hpp"

#include "madmax/error.hpp"
#include "madmax/report.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/serving.hpp"

#include <cstdio>
#include <iostream>
#include <memory>

namespace madmax::cli {

void addPoolsCommand(CLI::App& app) {
    struct Options {
        std::string prefill, decode;
        int gpus = 0;
        bool json = false;
    };
    auto o = std::make_shared<Options>();
    auto* pools = app.add_subcommand(
        "pools", "Serving: size a prefill pool and a decode pool so neither waits on the other");
    pools->add_option("prefill", o->prefill, "The prefill pool: a serving scenario, phase prefill")
        ->required();
    pools->add_option("decode", o->decode, "The decode pool: a serving scenario, phase decode")
        ->required();
    pools->add_option("--gpus", o->gpus, "GPUs for both pools together")
        ->required()
        ->check(CLI::Range(2, 1 << 30));
    pools->add_flag("--json", o->json, "Print JSON");
    pools->callback([o] {
        const auto& lib = PresetLibrary::builtin();
        const Scenario p = loadScenario(o->prefill, lib, {});
        const Scenario d = loadScenario(o->decode, lib, {});
        const PoolBalance b = balancePools(p, d, o->gpus);
        if (o->json) {
            std::cout << nlohmann::json{{"prefill_gpus", b.prefillGpus},
                                        {"decode_gpus", b.decodeGpus},
                                        {"prefill_share", b.prefillShare},
                                        {"requests_per_s", b.requestsPerS},
                                        {"output_tokens_per_s", b.outputTokensPerS},
                                        {"output_tokens_per_s_per_gpu", b.outputTokensPerSPerGpu},
                                        {"ttft_s", b.ttftS},
                                        {"tpot_s", b.tpotS}}
                             .dump(2)
                      << "\n";
            return;
        }
        std::printf("Prefill pool  %d GPUs (%s)\nDecode pool   %d GPUs (%s)\n", b.prefillGpus,
                    p.name.c_str(), b.decodeGpus, d.name.c_str());
        std::printf("Balanced prefill share %.1f%% of the GPUs; %.2f requests/s, %.0f output "
                    "tokens/s (%.1f per GPU)\n",
                    100 * b.prefillShare, b.requestsPerS, b.outputTokensPerS,
                    b.outputTokensPerSPerGpu);
        std::printf("TTFT %s (prefill, KV transfer, first decode round)  TPOT %s\n",
                    formatSeconds(b.ttftS).c_str(), formatSeconds(b.tpotS).c_str());
    });
}

} // namespace madmax::cli
