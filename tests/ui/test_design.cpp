// The design-space and co-design views (issue #4), offscreen.
#include "madmax/scenario_io.hpp"
#include "madmax/search_io.hpp"
#include "ui_support.hpp"

#include "charts/explorer_chart.hpp"
#include "export.hpp"

#include <QAbstractAxis>
#include <QAbstractSeries>
#include <QLegend>

#include <QFile>
#include <QTemporaryDir>

#include <catch2/catch.hpp>

#include <QSignalSpy>

using namespace madmax;

namespace {
bool waitFor(QSignalSpy& spy, int ms = 60000) {
    return spy.count() > 0 || spy.wait(ms);
}
} // namespace

TEST_CASE("Before any run the design-space and co-design charts say what to run, over no axes") {
    // Issue #32's review: both tabs opened on empty axes with legends of nothing.
    test::Explorer e;
    auto& w = *e.window;
    for (const char* id :
         {"heatmap", "scatter", "tornado", "sweep", "pareto", "pareto_cost", "cloud"}) {
        INFO(id);
        const ui::ExplorerChart* c = w.chart(id);
        REQUIRE(c != nullptr);
        CHECK_FALSE(c->emptyMessage().isEmpty()); // "Run a search …", "Sweep the checked knobs …"
        CHECK_FALSE(c->chart()->legend()->isVisible());
        for (const QAbstractAxis* a : c->chart()->axes())
            CHECK_FALSE(a->isVisible());
    }
}

TEST_CASE("Searching fills the heatmap, the scatter and the ranked table - a row loads into the "
          "sliders") {
    test::Explorer e("llama2-7b-8-a100-40gb");
    auto& w = *e.window;
    auto* panel = w.designSpace();
    QSignalSpy done(panel, &ui::DesignSpacePanel::searchFinished);
    panel->runSearch();
    REQUIRE(waitFor(done));
    CHECK_FALSE(done.first().first().toBool()); // not cancelled
    REQUIRE(panel->result());
    const SearchResult direct = search(w.document()->scenario(), {}, [] {
        SearchOptions o;
        o.topN = 100;
        return o;
    }());
    // Streamed in shards, the final ranking equals one direct search.
    REQUIRE(panel->result()->top.size() == direct.top.size());
    CHECK(toJson(panel->result()->top.front()) == toJson(direct.top.front()));
    CHECK(panel->table()->rowCount() == int(direct.top.size()));
    CHECK(w.chart("heatmap")->table().rows.size() > 0);
    CHECK(w.chart("scatter")->table().rows.size() > 0);

    panel->loadRow(2);
    REQUIRE(e.settle());
    const int rank = panel->table()->item(2, 0)->data(Qt::UserRole).toInt();
    CHECK(toJson(w.document()->scenario().strategy) ==
          toJson(direct.top[std::size_t(rank)].strategy));
    CHECK(w.shown().result.stepTimeS == Approx(direct.top[std::size_t(rank)].stepTimeS));
}

TEST_CASE("A long search can be cancelled and the GUI keeps answering") {
    test::Explorer e("llama31-405b-16384-h100");
    auto& w = *e.window;
    auto* panel = w.designSpace();
    QSignalSpy done(panel, &ui::DesignSpacePanel::searchFinished);
    panel->runSearch();
    CHECK(panel->running());
    // The GUI thread still evaluates slider moves while the search runs.
    w.strategyPanel()->check("tp_comm_overlap")->setChecked(true);
    panel->cancel();
    REQUIRE(waitFor(done));
    CHECK_FALSE(panel->running());
    REQUIRE(e.settle());
    CHECK(w.shown().scenario.strategy.tpCommOverlap);
}

TEST_CASE("Co-design: sensitivity fills the tornado - sweeps draw a line per knob") {
    test::Explorer e("llama2-7b-8-a100-40gb");
    auto& w = *e.window;
    auto* panel = w.coDesign();
    QSignalSpy done(panel, &ui::CoDesignPanel::runFinished);
    panel->runSensitivity();
    REQUIRE(waitFor(done));
    REQUIRE(panel->sensitivity());
    // 10 knobs: FLOP/s, HBM bandwidth and capacity, both tiers' bandwidth and latency, the
    // scale-up domain, the host's speed and the A100 preset's exponential rate.
    CHECK(panel->sensitivity()->size() == 10);
    CHECK(w.chart("tornado")->table().rows.size() == 10);
    done.clear();
    panel->runSweeps({"hbm_bw", "scale_out_bw"}, "0.5,1,2");
    REQUIRE(waitFor(done));
    REQUIRE(panel->sweeps());
    CHECK(panel->sweeps()->size() == 2);
    CHECK(w.chart("sweep")->table().rows.size() == 6);
}

TEST_CASE("A bad factor list is explained and nothing runs") {
    test::Explorer e;
    auto* panel = e.window->coDesign();
    panel->runSweeps({"hbm_bw"}, "1,two");
    CHECK_FALSE(panel->running());
}

TEST_CASE("Sweeping GPU counts in the design space reports the throughput-vs-GPUs front") {
    test::Explorer e;
    auto* panel = e.window->designSpace();
    panel->setGpuCounts("64, 128, 256");
    QSignalSpy done(panel, &ui::DesignSpacePanel::searchFinished);
    panel->runSearch();
    REQUIRE(waitFor(done));
    REQUIRE(panel->result());
    CHECK(panel->result()->paretoGpus.size() >= 2);
    CHECK(panel->status().contains("Throughput vs GPU count"));
    panel->setGpuCounts("64,lots");
    panel->runSearch();
    CHECK_FALSE(panel->running());
    CHECK(panel->status().contains("not a non-negative integer"));
    // More GPUs than the system holds: said, not skipped into an empty result.
    panel->setGpuCounts("256, 65536");
    panel->runSearch();
    CHECK_FALSE(panel->running());
    CHECK(panel->status().contains("65536 GPUs exceeds the 32768"));
}

TEST_CASE("Serving scenarios: the design space finds the serving configurations and co-design "
          "reports real speedups") {
    // Issue #9: switched to serving, Design space found 0 configurations (the CLI found 40) and
    // Co-design showed every knob at -100%.
    test::Explorer e("serve-llama2-70b-8xh100-offline");
    auto& w = *e.window;
    auto* panel = w.designSpace();
    QSignalSpy done(panel, &ui::DesignSpacePanel::searchFinished);
    panel->runSearch();
    REQUIRE(waitFor(done));
    REQUIRE(panel->result());
    const SearchResult direct = search(w.document()->scenario(), {}, SearchOptions{});
    CHECK(direct.stats.feasible > 10); // the CLI finds these too (`madmax search` on the file)
    CHECK(panel->table()->rowCount() == int(std::min<std::size_t>(100, direct.stats.feasible)));
    CHECK(panel->table()->horizontalHeaderItem(4)->text() == "replicas");
    CHECK(panel->table()->horizontalHeaderItem(5)->text() == "precision");
    CHECK(panel->table()->horizontalHeaderItem(6)->text() == "batch");
    CHECK(panel->status().contains("output tokens/s per GPU"));
    // A row is a precision as well as degrees: loading a BF16 row into this FP8 scenario runs it
    // in BF16, so the explorer shows the row's own TPOT (it had loaded only the degrees and
    // shown the FP8 configuration's).
    REQUIRE(w.document()->scenario().workload.precision == Precision::FP8);
    int bf16Row = -1;
    for (int r = 0; r < panel->table()->rowCount() && bf16Row < 0; ++r)
        if (panel->table()->item(r, 5)->text() == "bf16") bf16Row = r;
    REQUIRE(bf16Row >= 0);
    const Candidate& row =
        panel->result()
            ->top[std::size_t(panel->table()->item(bf16Row, 0)->data(Qt::UserRole).toInt())];
    CHECK(panel->table()->item(bf16Row, 6)->text() == QString::number(row.servingBatch));
    panel->loadRow(bf16Row);
    const Scenario& loaded = w.document()->scenario();
    CHECK(loaded.workload.precision == Precision::BF16);
    CHECK(loaded.workload.inference.weightPrecision == Precision::BF16);
    CHECK(loaded.workload.inference.kvPrecision == Precision::BF16);
    CHECK(loaded.strategy.pp == row.strategy.pp);
    CHECK(evaluate(loaded).stepTimeS == Approx(row.stepTimeS).epsilon(1e-9));
    // A training objective is said not to apply, and nothing runs (it had been ignored).
    panel->objectiveBox()->setCurrentIndex(panel->objectiveBox()->findData("cost"));
    panel->runSearch();
    CHECK_FALSE(panel->running());
    CHECK(panel->status().contains("choose Throughput"));
    panel->objectiveBox()->setCurrentIndex(panel->objectiveBox()->findData("throughput"));

    auto* co = w.coDesign();
    QSignalSpy coDone(co, &ui::CoDesignPanel::runFinished);
    co->runSensitivity();
    REQUIRE(waitFor(coDone));
    REQUIRE(co->sensitivity());
    for (const auto& s : *co->sensitivity()) {
        INFO(s.knob);
        CHECK(s.speedupHalf > 0.2); // a real ratio, not -100%
        CHECK(s.speedupDouble > 0.2);
    }
    const auto hbm = std::find_if(co->sensitivity()->begin(), co->sensitivity()->end(),
                                  [](const Sensitivity& s) { return s.knob == "hbm_bw"; });
    REQUIRE(hbm != co->sensitivity()->end());
    CHECK(hbm->speedupDouble > 1.0); // decode is bandwidth-bound: more HBM bandwidth helps
}

TEST_CASE("MoE design space: EP and ETP are columns, and a row loads its expert layout") {
    test::Explorer e("qwen3-235b-256-h100");
    auto& w = *e.window;
    auto* panel = w.designSpace();
    QSignalSpy done(panel, &ui::DesignSpacePanel::searchFinished);
    panel->runSearch();
    REQUIRE(waitFor(done, 120000));
    REQUIRE(panel->result());
    REQUIRE_FALSE(panel->result()->top.empty());
    QStringList headers;
    for (int c = 0; c < panel->table()->columnCount(); ++c)
        headers << panel->table()->horizontalHeaderItem(c)->text();
    CHECK(headers.indexOf("EP") == headers.indexOf("DP") + 1);
    CHECK(headers.indexOf("ETP") == headers.indexOf("EP") + 1);
    panel->loadRow(0);
    REQUIRE(e.settle());
    const int rank = panel->table()->item(0, 0)->data(Qt::UserRole).toInt();
    const Strategy& best = panel->result()->top[std::size_t(rank)].strategy;
    CHECK(w.document()->scenario().strategy.ep == best.ep);
    CHECK(w.document()->scenario().strategy.etp == best.etp);
    CHECK(panel->table()->item(0, headers.indexOf("EP"))->text().toInt() == best.ep);
}

TEST_CASE("DLRM: the design space points to the plan search, co-design sweeps re-run it") {
    test::Explorer e("dlrm-dcnv2-64-h100");
    auto& w = *e.window;
    auto* panel = w.designSpace();
    QSignalSpy done(panel, &ui::DesignSpacePanel::searchFinished);
    panel->runSearch();
    REQUIRE(waitFor(done));
    CHECK_FALSE(panel->running());
    CHECK(panel->status().contains("sharding plan"));
    // Co-design re-runs the plan search at every point: more HBM bandwidth is never slower.
    auto* co = w.coDesign();
    QSignalSpy coDone(co, &ui::CoDesignPanel::runFinished);
    co->runSweeps({"hbm_bw"}, "0.5,1,2");
    REQUIRE(waitFor(coDone));
    REQUIRE(co->sweeps());
    const auto& pts = co->sweeps()->front().points;
    REQUIRE(pts.size() == 3);
    CHECK(pts[0].speedup <= pts[1].speedup);
    CHECK(pts[1].speedup == Approx(1.0));
    CHECK(pts[2].speedup >= pts[1].speedup);
    // The explorer still answers: the scenario evaluates.
    REQUIRE(e.settle());
    CHECK(w.shown().result.dlrmResult.active);
}

TEST_CASE("Co-design: resource vs performance draws both Pareto charts, and they export") {
    test::Explorer e("llama2-7b-8-a100-40gb");
    auto& w = *e.window;
    auto* co = w.coDesign();
    QSignalSpy done(co, &ui::CoDesignPanel::runFinished);
    co->runPareto({"scenario", "dgx-h100-superpod"}, "8,16");
    REQUIRE(waitFor(done));
    QTest::qWait(20); // the result is posted to the GUI thread
    REQUIRE(co->pareto());
    CHECK(co->pareto()->points.size() == 4);
    const auto gpus = co->chart("pareto")->table();
    CHECK(gpus.rows.size() == 4);
    CHECK(co->chart("pareto")->emptyMessage().isEmpty());
    CHECK(co->status().contains("Resource vs performance"));
    // The H100 build is faster at each count: its points are the GPU front.
    for (const auto& row : gpus.rows)
        CHECK((row[6] == "1") == (row[0] == "dgx-h100-superpod"));
    // Both presets state a price: the dollar chart draws too; a figure exports.
    CHECK(co->chart("pareto_cost")->emptyMessage().isEmpty());
    QTemporaryDir dir;
    ui::ExportOptions o;
    o.format = ui::ExportFormat::Csv;
    // What the explorer's export menu hands the chart: the window's chart input.
    const ui::ChartInput in = w.chartInput();
    REQUIRE(in.pareto == co->pareto());
    const QString file = dir.filePath("pareto.csv");
    CHECK(ui::exportChart("pareto_cost", in, file, o).isEmpty());
    QFile f(file);
    REQUIRE(f.open(QIODevice::ReadOnly));
    CHECK(f.readAll().count('\n') == 5);
    // A typo in the GPU counts is explained, nothing runs.
    co->runPareto({"scenario"}, "8,x");
    CHECK(co->status().contains("whole numbers"));
    CHECK_FALSE(co->running());
}

TEST_CASE("Co-design: the artifact's cloud table draws cost against energy, one series per "
          "cloud, and exports its rows") {
    // Issue #31: the MAD-Max artifact's DLRM-A table ('[A] Cloud Provider Results.xlsx')
    // drawn as its cost/energy figure. presets/seed/cloud-dlrm-a.json holds 113 rows; the
    // three clouds are priced, so each gets a series.
    test::Explorer e;
    auto& w = *e.window;
    auto* co = w.coDesign();
    QSignalSpy done(co, &ui::CoDesignPanel::runFinished);
    co->runCloudTable();
    REQUIRE(waitFor(done));
    QTest::qWait(20); // the result is posted to the GUI thread
    REQUIRE(co->cloud());
    CHECK(co->cloud()->size() == 113);
    CHECK(co->status().contains("Cloud table: 113 rows"));
    const ui::ExplorerChart* c = co->chart("cloud");
    CHECK(c->emptyMessage().isEmpty());
    QStringList series;
    for (const QAbstractSeries* s : c->chart()->series())
        series << s->name();
    CHECK(series == QStringList{"Cloud A", "Cloud B", "Cloud C"});
    const ui::ChartTable t = c->table();
    REQUIRE(t.rows.size() == 113);
    // The sheet's first DLRM-A row (row 23: Cloud_A V100-16GB, 512 GPUs, FSDP, 210,000 QPS,
    // $10,361.90 for 5B samples) beside the reference engine's re-run of it.
    CHECK(t.rows[0][0] == "Cloud_A");
    CHECK(t.rows[0][4] == "210000");
    CHECK(t.rows[0][6].toDouble() == Approx(10361.904761904761).epsilon(1e-6));
    CHECK(t.rows[0][7].toDouble() ==
          Approx(co->cloud()->front().reference5b.costUsd).epsilon(1e-6));
    // What the export menu hands the chart: the window's chart input, which draws it.
    const ui::ChartInput in = w.chartInput();
    REQUIRE(in.cloud == co->cloud());
    QTemporaryDir dir;
    ui::ExportOptions o;
    o.format = ui::ExportFormat::Svg;
    CHECK(ui::exportChart("cloud", in, dir.filePath("cloud.svg"), o).isEmpty());
}

