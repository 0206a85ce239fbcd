// The headline numbers: step time, tokens/s, tokens/s/GPU, MFU, memory used / capacity, each
// with its change against the pinned baseline.
#pragma once

#include "madmax/result.hpp"
#include "madmax/uncertainty.hpp"

#include <QLabel>
#include <QWidget>

#include <array>

namespace madmax::ui {

class HeadlineStrip : public QWidget {
    Q_OBJECT
  public:
    explicit HeadlineStrip(QWidget* parent = nullptr);
    void setResults(const Result& current, const Result* baseline);
    /// How far to trust the prediction: the residuals of similar published runs, under the
    /// first tile ("±4.4% typical, 12 published H100 dense training runs").
    void setUncertainty(const UncertaintyBand& band);
    QString uncertaintyText() const { return band_->text(); }
    void setFontScale(double scale);
    /// The text each tile shows (tests, screenshots).
    QString valueText(int tile) const { return values_[tile]->text(); }
    QString deltaText(int tile) const { return deltas_[tile]->text(); }
    QString nameText(int tile) const { return names_[tile]->text(); }
    static constexpr int kTiles = 5;

  private:
    void setServingResults(const Result& current, const Result* baseline);
    std::array<QLabel*, kTiles> names_{}, values_{}, deltas_{};
    QLabel* band_;
};

} // namespace madmax::ui
