// `madmax merge`: the --json outputs of sharded search or sweep runs combined into one.
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

void addMergeCommand(CLI::App& app) {
    struct Options {
        std::vector<std::string> files;
        bool json = false, csv = false;
        int top = 10;
    };
    auto o = std::make_shared<Options>();
    auto* merge =
        app.add_subcommand("merge", "Combine the --json outputs of sharded search or sweep runs");
    merge
        ->add_option("files", o->files,
                     "JSON files written by `madmax search|sweep --shard I/N --json`")
        ->required();
    merge->add_flag("--json", o->json, "Print JSON (the default)");
    merge->add_flag("--csv", o->csv, "Print CSV");
    merge->add_option("--top", o->top, "How many to keep from a search, 0 to 2^30 (default 10)")
        ->check(CLI::Range(0, 1 << 30));
    merge->callback([o] {
        std::vector<SearchResult> searches;
        std::vector<SweepResult> sweeps;
        for (const auto& f : o->files) {
            const auto j = readJsonFile(f);
            if (schemaOf(j) == "madmax-sweep/1")
                sweeps.push_back(sweepFromJson(j, f));
            else
                searches.push_back(searchFromJson(j, f));
        }
        if (!searches.empty() && !sweeps.empty())
            throw InputError("merge", "",
                             "the files mix search and sweep outputs; merge one kind at a time");
        if (!sweeps.empty()) {
            const SweepResult r = mergeSweeps(sweeps);
            if (o->csv)
                std::cout << sweepCsv(r);
            else
                std::cout << toJson(r).dump(2) << "\n";
        } else {
            checkSearchShards(searches, o->files);
            const SearchResult r = mergeResults(searches, o->top);
            if (o->csv)
                std::cout << searchCsv(r);
            else
                std::cout << toJson(r).dump(2) << "\n";
        }
        return;
    });
}

} // namespace madmax::cli
