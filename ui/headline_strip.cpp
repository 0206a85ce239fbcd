#include "headline_strip.hpp"

#include "madmax/report.hpp"

#include <QGridLayout>

#include <algorithm>
#include <cmath>

namespace madmax::ui {

namespace {
const char* kNames[HeadlineStrip::kTiles] = {"Step time", "Tokens/s", "Tokens/s per GPU", "MFU",
                                             "Memory / GPU"};
const char* kTips[HeadlineStrip::kTiles] = {
    "Predicted time of one optimizer step = compute + exposed communication + pipeline bubble of "
    "the slowest pipeline stage, + any framework overhead the scenario states "
    "(docs/developer/model.md §4).",
    "Global batch × sequence length / step time.", "Tokens/s divided by the GPU count.",
    "Model FLOPs utilisation: model FLOPs (3 × forward, full attention; Megatron/PaLM convention) "
    "/ "
    "(step time × GPUs × dense peak of the workload precision).",
    "Memory of the fullest pipeline stage against HBM capacity; red when it does not fit "
    "(ZeRO: Rajbhandari et al. SC20; activations: Korthikanti et al. 2022)."};

QString compact(double v) {
    if (v >= 1e6) return QString::number(v / 1e6, 'f', 2) + " M";
    if (v >= 1e3) return QString::number(v / 1e3, 'f', 1) + " k";
    return QString::number(v, 'f', 1);
}

/// "+3.2%" in green when better, red when worse; `higherIsBetter` picks the direction. A
/// configuration that cannot run (it does not fit in memory) earns no green: its performance
/// change is shown in grey with the reason.
QString delta(double cur, double base, bool higherIsBetter, bool runnable = true) {
    if (base <= 0) return {};
    const double pct = 100.0 * (cur - base) / base;
    if (!runnable)
        return QString("<span style='color:gray'>%1%2% — does not fit</span>")
            .arg(pct > 0 ? "+" : "")
            .arg(pct, 0, 'f', 1);
    if (std::abs(pct) < 0.05) return "<span style='color:gray'>±0.0% vs baseline</span>";
    const bool better = (pct > 0) == higherIsBetter;
    return QString("<span style='color:%1'>%2%3% vs baseline</span>")
        .arg(better ? "#009E73" : "#D55E00")
        .arg(pct > 0 ? "+" : "")
        .arg(pct, 0, 'f', 1);
}
} // namespace

HeadlineStrip::HeadlineStrip(QWidget* parent) : QWidget(parent) {
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(6, 4, 6, 4);
    for (int i = 0; i < kTiles; ++i) {
        names_[i] = new QLabel(kNames[i]);
        values_[i] = new QLabel("–");
        deltas_[i] = new QLabel;
        deltas_[i]->setTextFormat(Qt::RichText);
        for (QLabel* l : {names_[i], values_[i], deltas_[i]})
            l->setToolTip(kTips[i]);
        grid->addWidget(names_[i], 0, i);
        grid->addWidget(values_[i], 1, i);
        grid->addWidget(deltas_[i], 2, i);
    }
    band_ = new QLabel;
    band_->setStyleSheet("color: gray;");
    band_->setToolTip("The |error| of the published runs most like this scenario (same GPU "
                      "family and workload kind, else the same kind on any GPU; a kind "
                      "with no published run borrows the nearest kind's, and says so), from "
                      "`madmax validate` on the built-in dataset. Rows the calibration was "
                      "fitted on are included; see docs/guide/calibration-and-validation.md.");
    grid->addWidget(band_, 3, 0, 1, kTiles);
    setFontScale(1.0);
}

void HeadlineStrip::setFontScale(double scale) {
    for (int i = 0; i < kTiles; ++i) {
        QFont f = font();
        f.setPointSizeF(f.pointSizeF() * 1.6 * scale);
        f.setBold(true);
        values_[i]->setFont(f);
        QFont n = font();
        n.setPointSizeF(n.pointSizeF() * scale);
        names_[i]->setFont(n);
        deltas_[i]->setFont(n);
    }
}

void HeadlineStrip::setUncertainty(const UncertaintyBand& band) {
    if (!band.known) {
        band_->setText("Accuracy: no published run like this one to compare with");
        return;
    }
    QString text = QString("Accuracy: ±%1% typical, %2% at worst, over %3 published %4 %5")
                       .arg(band.medianAbsPct, 0, 'f', 1)
                       .arg(band.maxAbsPct, 0, 'f', 1)
                       .arg(band.runs)
                       .arg(QString::fromStdString(band.basis))
                       .arg(band.runs == 1 ? "run" : "runs");
    if (!band.standIn.empty())
        text += QString(", as no %1 run is published").arg(QString::fromStdString(band.standIn));
    band_->setText(text);
}

void HeadlineStrip::setResults(const Result& r, const Result* b) {
    if (r.isInference) {
        setServingResults(r, b && b->isInference ? b : nullptr);
        return;
    }
    const bool dlrm = r.dlrmResult.active;
    for (int i = 0; i < kTiles; ++i) {
        names_[i]->setText(kNames[i]);
        for (QLabel* l : {names_[i], values_[i], deltas_[i]})
            l->setToolTip(kTips[i]);
    }
    // A recommendation model trains samples, not tokens (its GPUs: groups × replicas).
    const double perGpu =
        dlrm ? r.samplesPerS / std::max(1, r.dlrmResult.groupSize * r.dlrmResult.replicas)
             : r.tokensPerSPerGpu;
    if (dlrm) {
        names_[1]->setText("Samples/s");
        names_[2]->setText("Samples/s per GPU");
        names_[3]->setText("MFU (dense part)");
        for (int i : {1, 2})
            for (QLabel* l : {names_[i], values_[i], deltas_[i]})
                l->setToolTip("Global batch (samples) / step time" +
                              QString(i == 2 ? ", divided by the GPU count." : "."));
    }
    values_[0]->setText(QString::fromStdString(formatSeconds(r.stepTimeS)));
    values_[1]->setText(compact(dlrm ? r.samplesPerS : r.tokensPerS));
    values_[2]->setText(QString::number(perGpu, 'f', 0));
    values_[3]->setText(QString::number(r.mfu * 100, 'f', 1) + "%");
    values_[4]->setText(QString("%1 / %2 GB")
                            .arg(r.memory.totalBytes() / 1e9, 0, 'f', 1)
                            .arg(r.memory.capacityBytes / 1e9, 0, 'f', 0));
    values_[4]->setStyleSheet(r.memory.fits() ? "" : "color: #D55E00;");
    values_[4]->setToolTip(
        QString(kTips[4]) +
        (r.memory.fits()
             ? QString("\nFits with %1 GB spare.").arg(r.memory.marginBytes() / 1e9, 0, 'f', 1)
             : QString("\nDOES NOT FIT: %1 GB over.")
                   .arg(-r.memory.marginBytes() / 1e9, 0, 'f', 1)));
    if (b && b->isInference) {
        for (auto* d : deltas_)
            d->setText("<span style='color:gray'>baseline is a serving run</span>");
    } else if (b) {
        const bool fits = r.memory.fits();
        deltas_[0]->setText(delta(r.stepTimeS, b->stepTimeS, false, fits));
        if (dlrm != b->dlrmResult.active) {
            for (auto* d : deltas_)
                d->setText("<span style='color:gray'>baseline is another kind of model</span>");
            return;
        }
        deltas_[1]->setText(dlrm ? delta(r.samplesPerS, b->samplesPerS, true, fits)
                                 : delta(r.tokensPerS, b->tokensPerS, true, fits));
        deltas_[2]->setText(dlrm ? delta(r.samplesPerS, b->samplesPerS, true, fits)
                                 : delta(r.tokensPerSPerGpu, b->tokensPerSPerGpu, true, fits));
        deltas_[3]->setText(delta(r.mfu, b->mfu, true, fits));
        deltas_[4]->setText(delta(r.memory.totalBytes(), b->memory.totalBytes(), false));
    } else {
        for (auto* d : deltas_)
            d->setText("<span style='color:gray'>no baseline pinned</span>");
    }
}

void HeadlineStrip::setServingResults(const Result& r, const Result* b) {
    // A prefill pool (disaggregation) generates no tokens to pace: its throughput is prompt
    // tokens, and it has no TPOT.
    const bool prompts = r.inference.prefillPool();
    struct TileText {
        const char* name;
        const char* tip;
    };
    static const TileText generating[kTiles] = {
        {"TTFT", "Time to first token: the prompt's prefill (compute-bound) plus, on average, "
                 "half an iteration of waiting."},
        {"TPOT", "Time per output token: one continuous-batching iteration (a decode step for the "
                 "whole batch plus the prefills of newly admitted requests)."},
        {"Output tokens/s", "Generated tokens per second over every replica: batch × replicas / "
                            "TPOT."},
        {"Tokens/s per GPU", "Output tokens/s divided by the GPU count."},
        {"Memory / GPU", "Weights, KV cache (the batch's reserved contexts), activations and "
                         "reserve against HBM capacity; red when the batch exceeds what fits."}};
    static const TileText promptPool[kTiles] = {
        {"TTFT", "Time to first token in a prefill pool: the wait for the pool below capacity, "
                 "the prompt's prefill and its KV cache's transfer to the decode pool."},
        {"TPOT", "A prefill pool paces no output tokens: the decode pool's scenario has the TPOT."},
        {"Prompt tokens/s", "Prompt tokens per second over every replica, prefix-cache hits "
                            "included, at the pool's load."},
        {"Prompt tokens/s per GPU", "Prompt tokens/s divided by the GPU count."},
        generating[4]};
    const TileText* tiles = prompts ? promptPool : generating;
    const InferenceResult& i = r.inference;
    // The throughput tiles' figures: prompt tokens for a prefill pool, generated ones otherwise.
    auto total = [prompts](const Result& x) {
        return prompts ? x.inference.inputTokensPerS : x.inference.outputTokensPerS;
    };
    auto perGpu = [prompts](const Result& x) {
        return prompts ? x.tokensPerSPerGpu : x.inference.outputTokensPerSPerGpu;
    };
    for (int k = 0; k < kTiles; ++k) {
        names_[k]->setText(tiles[k].name);
        for (QLabel* l : {names_[k], values_[k], deltas_[k]})
            l->setToolTip(tiles[k].tip);
    }
    values_[0]->setText(QString::fromStdString(formatSeconds(i.ttftS)));
    values_[1]->setText(prompts ? QString("—") : QString::fromStdString(formatSeconds(i.tpotS)));
    values_[2]->setText(compact(total(r)));
    values_[3]->setText(QString::number(perGpu(r), 'f', 0));
    values_[4]->setText(QString("%1 / %2 GB")
                            .arg(r.memory.totalBytes() / 1e9, 0, 'f', 1)
                            .arg(r.memory.capacityBytes / 1e9, 0, 'f', 0));
    values_[4]->setStyleSheet(r.memory.fits() ? "" : "color: #D55E00;");
    const bool meets = i.meetsObjectives;
    values_[1]->setStyleSheet(meets ? "" : "color: #D55E00;");
    if (b && !b->isInference) {
        for (auto* d : deltas_)
            d->setText("<span style='color:gray'>baseline is a training run</span>");
    } else if (b && b->inference.prefillPool() != prompts) {
        // A prefill pool against a pool that generates: their throughputs count other tokens.
        for (auto* d : deltas_)
            d->setText("<span style='color:gray'>baseline is another kind of pool</span>");
    } else if (b) {
        const InferenceResult& o = b->inference;
        const bool fits = r.memory.fits();
        deltas_[0]->setText(delta(i.ttftS, o.ttftS, false, fits));
        deltas_[1]->setText(delta(i.tpotS, o.tpotS, false, fits));
        deltas_[2]->setText(delta(total(r), total(*b), true, fits));
        deltas_[3]->setText(delta(perGpu(r), perGpu(*b), true, fits));
        deltas_[4]->setText(delta(r.memory.totalBytes(), b->memory.totalBytes(), false));
    } else {
        for (auto* d : deltas_)
            d->setText("<span style='color:gray'>no baseline pinned</span>");
        deltas_[1]->setText(
            !meets    ? QString("<span style='color:#D55E00'>objectives not met</span>")
            : prompts ? QString("<span style='color:gray'>prefill pool: passes of %1 prompts</span>")
                            .arg(i.batch)
                      : QString("<span style='color:gray'>batch %1 of %2 that fit</span>")
                            .arg(i.batch)
                            .arg(i.maxBatchThatFits));
    }
}

} // namespace madmax::ui
