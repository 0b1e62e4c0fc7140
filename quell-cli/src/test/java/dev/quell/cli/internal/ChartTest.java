package dev.quell.cli.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quell.sim.ScenarioResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.annotations.XYAnnotation;
import org.jfree.chart.annotations.XYPointerAnnotation;
import org.jfree.chart.annotations.XYTextAnnotation;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.ui.TextAnchor;
import org.junit.jupiter.api.Test;

/**
 * Issue 23: the charts a newcomer found hard to read. The tail-at-scale chart shows the p99 its
 * story is about and does not pile five arms' words on one another; a sweep's labels are whole and
 * inside the plot. (The PNGs were looked at, too; these pin what was fixed.)
 */
class ChartTest {

  private static List<XYPlot> panels(JFreeChart chart) {
    List<XYPlot> panels = new ArrayList<>();
    for (Object o : ((CombinedDomainXYPlot) chart.getXYPlot()).getSubplots()) {
      panels.add((XYPlot) o);
    }
    return panels;
  }

  @Test
  void theTailAtScaleChartHasALatencyPanelAndNoPileOfArrows() {
    ScenarioResult result = Builtins.find("tail-at-scale").orElseThrow().scenario().run(1);
    JFreeChart chart = Chart.run(result, Map.of());
    List<XYPlot> panels = panels(chart);

    XYPlot latency = panels.stream().filter(p -> p.getRangeAxis().getLabel().startsWith("call latency p99"))
        .findFirst().orElseThrow();
    // no hedge's p99 is hundreds of milliseconds, every hedged arm's well under a hundred
    assertThat(latency.getDataset().getSeriesCount()).isEqualTo(5);
    // five arms: their worst seconds are dots, their figures in the legend, no arrow with words
    for (XYAnnotation a : panels.get(0).getAnnotations()) {
      assertThat(a).isNotInstanceOf(XYPointerAnnotation.class);
    }
    assertThat(panels.get(0).getDataset().getSeriesKey(1).toString()).isEqualTo("no hedge (worst second 1.00× at 0:00)");
  }

  @Test
  void aSweepLabelsEveryPointInFullInsideThePlot() {
    ScenarioFile file = Builtins.find("reference").orElseThrow();
    List<Sweep.Point> points = Sweep.parse("budget.fraction=0.05,0.06,0.1,0.5").apply(file, "reference");
    SweepResult sweep = new SweepResult("budget.fraction", "reference", 1, List.of("budget off", "budget on"),
        List.of(false, true));
    for (int v = 0; v < points.size(); v++) {
      var arms = v == 0 ? points.get(v).file().scenario().arms()
          : List.of(points.get(v).file().scenario().arms().get(1));
      sweep.add(points.get(v).value(), dev.quell.sim.Scenario.of("reference", "", arms).run(1));
    }
    XYPlot plot = Chart.tradeOff(sweep).getXYPlot();

    List<String> texts = new ArrayList<>();
    for (XYAnnotation a : plot.getAnnotations()) {
      XYTextAnnotation t = (XYTextAnnotation) a;
      texts.add(t.getText());
      assertThat(t.getX()).isBetween(plot.getDomainAxis().getLowerBound(), plot.getDomainAxis().getUpperBound());
      assertThat(t.getY()).isBetween(plot.getRangeAxis().getLowerBound(), plot.getRangeAxis().getUpperBound());
      // a label that reads rightwards ends inside the frame (at about 7 pixels a letter, 1,000 pixels across):
      // "budget off" was cut to "budget" at the right edge
      double perPixel = plot.getDomainAxis().getRange().getLength() / 1000;
      if (t.getTextAnchor() == TextAnchor.BOTTOM_LEFT || t.getTextAnchor() == TextAnchor.TOP_LEFT) {
        assertThat(t.getX() + t.getText().length() * 7 * perPixel).isLessThan(plot.getDomainAxis().getUpperBound());
      } else {
        assertThat(t.getX() - t.getText().length() * 7 * perPixel).isGreaterThan(plot.getDomainAxis().getLowerBound());
      }
    }
    assertThat(texts).containsExactlyInAnyOrder("budget off", "budget.fraction 0.05", "0.06", "0.1", "0.5");
  }
}
