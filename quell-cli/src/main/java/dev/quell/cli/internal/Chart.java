package dev.quell.cli.internal;

import dev.quell.sim.NodeReport;
import dev.quell.sim.Phase;
import dev.quell.sim.ScenarioResult;
import dev.quell.sim.Second;
import dev.quell.sim.SimulationReport;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.IntervalMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.ui.Layer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The PNG chart of a scenario's first seed: per-second attempts against offered calls, per-second
 * availability, and the budget's balance, one panel each over a shared time axis, with the incident
 * windows shaded.
 */
public final class Chart {
  private static final Color[] ARM_COLOURS = {
      new Color(0xD6, 0x27, 0x28), // red: usually "budget off"
      new Color(0x1F, 0x77, 0xB4), // blue: usually "budget on"
      new Color(0x2C, 0xA0, 0x2C),
      new Color(0x94, 0x67, 0xBD),
  };
  private static final Color OFFERED = new Color(0x55, 0x55, 0x55);
  private static final Color INCIDENT = new Color(0xFF, 0xA5, 0x00, 0x40);

  static {
    System.setProperty("java.awt.headless", "true");
  }

  private Chart() {}

  /** Draws {@code result} and writes it to {@code file} as a PNG of {@code width} × {@code height}. */
  public static void write(ScenarioResult result, Path file, int width, int height) throws IOException {
    List<ScenarioResult.ArmResult> arms = result.arms();
    SimulationReport model = arms.get(0).first();
    boolean topology = model.nodes().size() > 1;
    // in a topology, the deepest target shows the compounding; otherwise it is the one dependency
    NodeReport watched = model.nodes().get(model.nodes().size() - 1);

    XYSeriesCollection attempts = new XYSeriesCollection();
    XYSeriesCollection availability = new XYSeriesCollection();
    XYSeriesCollection tokens = new XYSeriesCollection();
    XYSeries offered = new XYSeries("calls offered", false, false);
    for (Second s : model.series()) {
      offered.add(s.second(), topology ? s.offered() * watched.paths() : s.offered());
    }
    attempts.addSeries(offered);
    boolean anyBudget = false;
    for (ScenarioResult.ArmResult arm : arms) {
      SimulationReport r = arm.first();
      XYSeries a = new XYSeries(arm.name(), false, false);
      if (topology) {
        long[] perSecond = r.node(watched.name()).attemptsPerSecond();
        for (int s = 0; s < perSecond.length; s++) {
          a.add(s, perSecond[s]);
        }
      } else {
        for (Second s : r.series()) {
          a.add(s.second(), s.attempts());
        }
      }
      attempts.addSeries(a);
      XYSeries av = new XYSeries(arm.name(), false, false);
      XYSeries t = new XYSeries(arm.name(), false, false);
      for (Second s : r.series()) {
        if (s.offered() > 0) {
          av.add(s.second(), 100.0 * s.availability());
        }
        if (!Double.isNaN(s.budgetTokens())) {
          t.add(s.second(), s.budgetTokens());
          anyBudget = true;
        }
      }
      availability.addSeries(av);
      tokens.addSeries(t);
    }

    NumberAxis time = new NumberAxis("simulated time (s)");
    time.setRange(0, model.series().size());
    CombinedDomainXYPlot plot = new CombinedDomainXYPlot(time);
    plot.setGap(12);

    XYPlot attemptsPlot = panel(attempts, topology ? "attempts/s at " + watched.name() : "attempts/s", true);
    attemptsPlot.getRenderer().setSeriesPaint(0, OFFERED);
    attemptsPlot.getRenderer().setSeriesStroke(0, new BasicStroke(1.5f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND,
        1f, new float[] {4f, 4f}, 0f));
    for (int i = 0; i < arms.size(); i++) {
      attemptsPlot.getRenderer().setSeriesPaint(i + 1, ARM_COLOURS[i % ARM_COLOURS.length]);
    }
    plot.add(attemptsPlot, 3);

    XYPlot availabilityPlot = panel(availability, "availability %", false);
    ((NumberAxis) availabilityPlot.getRangeAxis()).setRange(0, 102);
    colourArms(availabilityPlot, arms.size(), 0);
    plot.add(availabilityPlot, 2);

    if (anyBudget) {
      XYPlot tokensPlot = panel(tokens, "budget tokens", true);
      colourArms(tokensPlot, arms.size(), 0);
      plot.add(tokensPlot, 2);
    }

    for (Phase p : model.phases()) {
      if (!p.incident()) {
        continue;
      }
      for (Object o : plot.getSubplots()) {
        XYPlot sub = (XYPlot) o;
        IntervalMarker m = new IntervalMarker(p.from().toNanos() / 1e9, p.to().toNanos() / 1e9);
        m.setPaint(INCIDENT);
        if (sub == attemptsPlot) { // name the incident once, on the top panel
          m.setLabel(p.name().replaceFirst("^during ", ""));
          m.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
          m.setLabelAnchor(RectangleAnchor.TOP);
          m.setLabelTextAnchor(TextAnchor.TOP_CENTER);
        }
        sub.addDomainMarker(m, Layer.BACKGROUND);
      }
    }
    // one legend: the arms keep their colour in every panel
    plot.setFixedLegendItems(attemptsPlot.getLegendItems());

    String title = "quell simulate: " + result.scenario().name() + " (seed " + model.seed() + ")";
    JFreeChart chart = new JFreeChart(title, new Font(Font.SANS_SERIF, Font.BOLD, 16), plot, true);
    chart.setBackgroundPaint(Color.WHITE);
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    ChartUtils.saveChartAsPNG(file.toFile(), chart, width, height);
  }

  private static XYPlot panel(XYSeriesCollection data, String label, boolean fromZero) {
    NumberAxis axis = new NumberAxis(label);
    axis.setAutoRangeIncludesZero(fromZero);
    XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, false);
    for (int i = 0; i < data.getSeriesCount(); i++) {
      renderer.setSeriesStroke(i, new BasicStroke(1.6f));
    }
    XYPlot plot = new XYPlot(data, null, axis, renderer);
    plot.setBackgroundPaint(Color.WHITE);
    plot.setDomainGridlinePaint(new Color(0xDD, 0xDD, 0xDD));
    plot.setRangeGridlinePaint(new Color(0xDD, 0xDD, 0xDD));
    return plot;
  }

  private static void colourArms(XYPlot plot, int arms, int offset) {
    for (int i = 0; i < arms; i++) {
      plot.getRenderer().setSeriesPaint(i + offset, ARM_COLOURS[i % ARM_COLOURS.length]);
    }
  }
}
