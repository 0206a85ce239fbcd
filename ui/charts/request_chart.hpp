// One request's path through the deployment to its second token: on one pool, the wait for a
// continuous-batching round, the prompt's prefill, then one decode round; disaggregated, the
// prompt on the prefill pool, its KV cache over the scale-out network, the decode pool's wait for
// its next round and one decode round. A pinned scenario of the other pool completes the
// picture; the remaining tokens are listed in the table, not drawn.
#pragma once

#include "explorer_chart.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QHorizontalStackedBarSeries>
#include <QValueAxis>

#include <vector>

namespace madmax::ui {

/// One segment of a request's timeline, in seconds from its arrival.
struct RequestSegment {
    QString lane, part;
    double startS = 0, durationS = 0;
};
/// The request's segments for a serving result of `phase`, joined with `other` (a result of
/// the complementary pool, or nullptr) when the two make one disaggregated deployment.
std::vector<RequestSegment> requestSegments(const Result& r, ServingPhase phase,
                                            const Result* other, ServingPhase otherPhase);

class RequestChart : public ExplorerChart {
    Q_OBJECT
  public:
    explicit RequestChart(QWidget* parent = nullptr);
    QString id() const override { return "request"; }
    QString title() const override { return "One request to its second token"; }
    QString description() const override;
    void setInput(const ChartInput& in) override;
    ChartTable table() const override;

  protected:
    void restyle() override;

  private:
    QHorizontalStackedBarSeries* series_;
    QBarCategoryAxis* lanes_;
    QValueAxis* seconds_;
    std::vector<QBarSet*> sets_; ///< [0] the transparent lead-in, then the parts
    std::vector<bool> active_;
    QStringList names_;
    std::vector<RequestSegment> segments_;
};

} // namespace madmax::ui
