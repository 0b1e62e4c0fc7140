package dev.quell.cli.internal;

import dev.quell.sim.Dependency;
import dev.quell.sim.EdgeReport;
import dev.quell.sim.Incident;
import dev.quell.sim.NodeReport;
import dev.quell.sim.Overload;
import dev.quell.sim.Phase;
import dev.quell.sim.ScenarioResult;
import dev.quell.sim.Second;
import dev.quell.sim.Simulation;
import dev.quell.sim.SimulationReport;
import dev.quell.sim.Target;
import dev.quell.sim.internal.Text;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Rectangle;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.LegendItemCollection;
import org.jfree.chart.annotations.XYPointerAnnotation;
import org.jfree.chart.annotations.XYTextAnnotation;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.IntervalMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.Layer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.jfree.svg.SVGGraphics2D;
import org.jspecify.annotations.Nullable;

/**
 * The charts of {@code quell simulate}, drawn with JFreeChart, written as PNG or as SVG for the HTML
 * report. The run chart shows the first seed: attempts against offered calls with the dependency's
 * capacity and each budget's bound, availability, and each budget's balance, over a shared time
 * axis with the incidents shaded and the headline numbers written on it. The sweep chart shows the
 * trade-off: this client's availability against the dependency's worst second, one point per value.
 */
public final class Chart {
  private static final Color[] ARM_COLOURS = {
      new Color(0xD6, 0x27, 0x28), // red: usually "budget off"
      new Color(0x1F, 0x77, 0xB4), // blue: usually "budget on"
      new Color(0x2C, 0xA0, 0x2C),
      new Color(0x94, 0x67, 0xBD),
      new Color(0x8C, 0x56, 0x4B),
      new Color(0xE3, 0x77, 0xC2),
  };
  private static final Color OFFERED = new Color(0x55, 0x55, 0x55);
  private static final Color CAPACITY = new Color(0x00, 0x00, 0x00);
  private static final Color INCIDENT = new Color(0xFF, 0xA5, 0x00, 0x40);
  private static final Font NOTE = new Font(Font.SANS_SERIF, Font.PLAIN, 12);
  /** At most this many points per line; longer runs are drawn as means over a few seconds. */
  private static final int MOST_POINTS = 1500;

  static {
    System.setProperty("java.awt.headless", "true");
  }

  private Chart() {}

  /** Colour of the arm at {@code index}, the same in every chart and in the HTML report. */
  static Color colour(int index) {
    return ARM_COLOURS[index % ARM_COLOURS.length];
  }

  /** The steady bound of a token-bucket budget: retries funded by {@code fraction} of successes plus a floor. */
  public record BudgetBound(double fraction, double minimumPerSecond) {}

  /** Writes {@code chart} as a PNG of {@code width} × {@code height}. */
  static void png(JFreeChart chart, Path file, int width, int height) throws IOException {
    ChartUtils.saveChartAsPNG(file.toFile(), chart, width, height);
  }

  /** Draws {@code chart} as an SVG element of {@code width} × {@code height}. */
  static String svg(JFreeChart chart, int width, int height) {
    SVGGraphics2D g = new SVGGraphics2D(width, height);
    chart.draw(g, new Rectangle(0, 0, width, height));
    return g.getSVGElement();
  }

  /** The run chart of a scenario's first seed; {@code bounds} gives each arm's budget, if it has one. */
  static JFreeChart run(ScenarioResult result, Map<String, BudgetBound> bounds) {
    List<ScenarioResult.ArmResult> arms = result.arms();
    SimulationReport model = arms.get(0).first();
    boolean topology = model.nodes().size() > 1;
    // in a topology, the deepest target shows the compounding; otherwise it is the one dependency
    NodeReport watched = model.nodes().get(model.nodes().size() - 1);
    Simulation simulation = result.scenario().arms().get(0).simulation();
    int pods = simulation.load().peers() + 1;
    int seconds = model.series().size();
    int bucket = Math.max(1, (seconds + MOST_POINTS - 1) / MOST_POINTS);
    TimeScale scale = TimeScale.of(seconds);

    XYSeriesCollection attempts = new XYSeriesCollection();
    XYSeriesCollection availability = new XYSeriesCollection();
    XYSeriesCollection tokens = new XYSeriesCollection();
    List<Second> first = model.series();
    long[] offered = new long[seconds];
    for (int s = 0; s < seconds; s++) {
      offered[s] = topology ? first.get(s).offered() * watched.paths() : first.get(s).offered();
    }
    attempts.addSeries(line("calls offered", offered, bucket, scale));
    double top = 0;
    for (ScenarioResult.ArmResult arm : arms) {
      SimulationReport r = arm.first();
      long[] perSecond = new long[seconds];
      if (topology) {
        long[] at = r.node(watched.name()).attemptsPerSecond();
        System.arraycopy(at, 0, perSecond, 0, Math.min(seconds, at.length));
      } else {
        for (int s = 0; s < seconds; s++) {
          perSecond[s] = r.series().get(s).attempts();
        }
      }
      XYSeries a = line(arm.name(), perSecond, bucket, scale);
      top = Math.max(top, a.getMaxY());
      attempts.addSeries(a);
      double[] av = new double[seconds];
      double[] t = new double[seconds];
      boolean anyTokens = false;
      for (int s = 0; s < seconds; s++) {
        Second sec = r.series().get(s);
        av[s] = sec.offered() > 0 ? 100.0 * sec.availability() : Double.NaN;
        t[s] = sec.budgetTokens();
        anyTokens |= !Double.isNaN(t[s]);
      }
      availability.addSeries(line(arm.name(), av, bucket, scale));
      if (anyTokens) {
        tokens.addSeries(line(arm.name(), t, bucket, scale));
      }
    }
    top = Math.max(top, attempts.getSeries(0).getMaxY());

    // the budget's bound and the dependency's capacity, in the same units as the attempts
    int extra = 0;
    if (!topology) {
      for (int i = 0; i < arms.size(); i++) {
        BudgetBound b = bounds.get(arms.get(i).name());
        if (b != null) {
          double[] bound = new double[seconds];
          for (int s = 0; s < seconds; s++) {
            bound[s] = offered[s] * (1 + b.fraction()) + b.minimumPerSecond();
          }
          XYSeries bs = line(arms.get(i).name() + ": budget's bound (" + Text.number(b.fraction() * 100)
              + "% of calls + " + Text.number(b.minimumPerSecond()) + "/s)", bound, bucket, scale);
          attempts.addSeries(bs);
          extra++;
        }
      }
    }
    double[] capacity = capacityPerSecond(simulation.target(), watched, seconds, pods);
    String capacityNote = null;
    if (capacity != null) {
      attempts.addSeries(line("dependency's capacity" + (pods > 1 ? " (this pod's share)" : ""), capacity, bucket,
          scale));
      double lowest = Double.MAX_VALUE;
      for (double c : capacity) {
        lowest = Math.min(lowest, c);
      }
      if (lowest > top * 1.25) {
        capacityNote = "capacity " + String.format(Locale.ROOT, "%,.0f", lowest) + " attempts/s and up: off the scale";
      }
    }

    NumberAxis time = new NumberAxis("simulated time (" + scale.unit + ")");
    time.setRange(0, seconds / scale.divisor);
    CombinedDomainXYPlot plot = new CombinedDomainXYPlot(time);
    plot.setGap(12);

    String perPod = pods > 1 ? " from this pod (1 of " + pods + ")" : "";
    XYPlot attemptsPlot = panel(attempts, (topology ? "attempts/s at " + watched.name() : "attempts/s") + perPod
        + (bucket > 1 ? ", " + bucket + " s means" : ""), true);
    XYLineAndShapeRenderer renderer = (XYLineAndShapeRenderer) attemptsPlot.getRenderer();
    renderer.setSeriesPaint(0, OFFERED);
    renderer.setSeriesStroke(0, dashed(1.5f, 4f));
    for (int i = 0; i < arms.size(); i++) {
      renderer.setSeriesPaint(i + 1, colour(i));
    }
    int next = arms.size() + 1;
    for (int i = 0; i < arms.size(); i++) {
      if (!topology && bounds.get(arms.get(i).name()) != null) {
        renderer.setSeriesPaint(next, colour(i));
        renderer.setSeriesStroke(next, dashed(1f, 2f));
        next++;
      }
    }
    if (capacity != null) {
      renderer.setSeriesPaint(next, CAPACITY);
      renderer.setSeriesStroke(next, new BasicStroke(1.4f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 1f,
          new float[] {8f, 3f, 2f, 3f}, 0f));
    }
    ((NumberAxis) attemptsPlot.getRangeAxis()).setRange(0, Math.max(1, top * 1.3));
    if (capacityNote != null) {
      XYTextAnnotation note = new XYTextAnnotation(capacityNote, seconds / scale.divisor * 0.01, top * 1.25);
      note.setFont(NOTE);
      note.setTextAnchor(TextAnchor.TOP_LEFT);
      attemptsPlot.addAnnotation(note);
    }
    // the headline: each arm's worst second, where it happened
    for (int i = 0; i < arms.size(); i++) {
      SimulationReport r = arms.get(i).first();
      double worst = topology ? r.node(watched.name()).worstSecond() : r.worstSecond();
      int at = topology ? r.node(watched.name()).worstSecondAt() : r.worstSecondAt();
      if (at < 0 || Double.isNaN(worst)) {
        continue;
      }
      double y = topology ? r.node(watched.name()).attemptsPerSecond()[at] : r.series().get(at).attempts();
      XYPointerAnnotation p = new XYPointerAnnotation(arms.get(i).name() + ": worst second " + Text.fixed(worst, 2)
          + "× at " + Text.clock(Duration.ofSeconds(at)), at / scale.divisor, y, i % 2 == 0 ? -Math.PI / 4
          : Math.PI * 5 / 4);
      p.setFont(NOTE);
      p.setPaint(colour(i));
      p.setArrowPaint(colour(i));
      p.setTextAnchor(i % 2 == 0 ? TextAnchor.BOTTOM_LEFT : TextAnchor.BOTTOM_RIGHT);
      // arms on the same side get longer arrows, so that labels of worst seconds at one point stay apart
      p.setBaseRadius(p.getBaseRadius() + 30 * (i / 2));
      attemptsPlot.addAnnotation(p);
    }
    plot.add(attemptsPlot, 3);

    XYPlot availabilityPlot = panel(availability, "availability %" + (pods > 1 ? " (this pod)" : ""), false);
    ((NumberAxis) availabilityPlot.getRangeAxis()).setRange(0, 105);
    colourArms(availabilityPlot, arms.size());
    // the headline: availability during each incident, written inside it
    for (int p = 0; p < model.phases().size(); p++) {
      Phase phase = model.phases().get(p);
      if (!phase.incident()) {
        continue;
      }
      double mid = (phase.from().toNanos() + phase.to().toNanos()) / 2e9 / scale.divisor;
      for (int i = 0; i < arms.size(); i++) {
        double a = arms.get(i).first().phases().get(p).availability();
        XYTextAnnotation note = new XYTextAnnotation(arms.get(i).name() + ": " + Text.percent(a), mid, 12 + 11 * i);
        note.setFont(NOTE);
        note.setPaint(colour(i));
        availabilityPlot.addAnnotation(note);
      }
    }
    plot.add(availabilityPlot, 2);

    if (tokens.getSeriesCount() > 0) {
      XYPlot tokensPlot = panel(tokens, "budget tokens" + (pods > 1 ? " (this pod)" : ""), true);
      double most = 1;
      for (int k = 0; k < tokens.getSeriesCount(); k++) {
        most = Math.max(most, tokens.getSeries(k).getMaxY());
      }
      // room below the line for naming each budget
      int named = 0;
      int k = 0;
      for (int i = 0; i < arms.size(); i++) {
        EdgeReport entry = arms.get(i).first().entry();
        if (!"none".equals(entry.budget())) {
          tokensPlot.getRenderer().setSeriesPaint(k++, colour(i));
          XYTextAnnotation name = new XYTextAnnotation(arms.get(i).name() + " spends from budget " + describe(entry,
              bounds.get(arms.get(i).name())), seconds / scale.divisor * 0.01, -most * (0.08 + 0.14 * named++));
          name.setFont(NOTE);
          name.setPaint(colour(i));
          name.setTextAnchor(TextAnchor.CENTER_LEFT);
          tokensPlot.addAnnotation(name);
        }
      }
      ((NumberAxis) tokensPlot.getRangeAxis()).setRange(-most * (0.02 + 0.14 * named), most * 1.08);
      plot.add(tokensPlot, 2);
    }

    for (Phase p : model.phases()) {
      if (!p.incident()) {
        continue;
      }
      for (Object o : plot.getSubplots()) {
        XYPlot sub = (XYPlot) o;
        IntervalMarker m = new IntervalMarker(p.from().toNanos() / 1e9 / scale.divisor,
            p.to().toNanos() / 1e9 / scale.divisor);
        m.setPaint(INCIDENT);
        if (sub == attemptsPlot) { // name the incident once, on the top panel
          m.setLabel(p.name().replaceFirst("^during ", ""));
          m.setLabelFont(NOTE);
          m.setLabelAnchor(RectangleAnchor.TOP);
          m.setLabelTextAnchor(TextAnchor.TOP_CENTER);
        }
        sub.addDomainMarker(m, Layer.BACKGROUND);
      }
    }
    LegendItemCollection legend = attemptsPlot.getLegendItems();
    plot.setFixedLegendItems(legend);

    String title = "quell simulate: " + result.scenario().name() + " (seed " + model.seed() + ")";
    JFreeChart chart = new JFreeChart(title, new Font(Font.SANS_SERIF, Font.BOLD, 16), plot, true);
    StringBuilder headline = new StringBuilder();
    for (ScenarioResult.ArmResult arm : arms) {
      SimulationReport r = arm.first();
      if (headline.length() > 0) {
        headline.append("   ·   ");
      }
      headline.append(arm.name()).append(": load ").append(Text.fixed(r.loadMultiplier(), 2)).append("×, worst second ")
          .append(Text.fixed(r.worstSecond(), 2)).append("×, availability ").append(Text.percent(r.availability()))
          .append(", ").append(r.diagnosis().label());
    }
    chart.addSubtitle(new TextTitle(headline.toString(), new Font(Font.SANS_SERIF, Font.PLAIN, 13)));
    chart.setBackgroundPaint(Color.WHITE);
    return chart;
  }

  private static String describe(EdgeReport entry, @Nullable BudgetBound bound) {
    String budget = entry.budget();
    if (bound == null) {
      return budget;
    }
    return budget + ", refilled by " + Text.number(bound.fraction() * 100) + "% of successes + " + Text.number(
        bound.minimumPerSecond()) + "/s";
  }

  /** The dependency's throughput in attempts a second (this pod's share), second by second; null if unlimited. */
  private static double @Nullable [] capacityPerSecond(Target target, NodeReport watched, int seconds, int pods) {
    if (!(target instanceof Dependency) || watched.capacity().isEmpty()) {
      return null;
    }
    Dependency d = (Dependency) target;
    int serving = d.capacity().getAsInt();
    if (d.overload().kind() == Overload.Kind.CONCURRENCY_LIMIT) {
      serving = Math.min(serving, d.overload().limit());
    }
    double healthy = serving / (d.meanLatency().toNanos() / 1e9) / pods;
    double[] c = new double[seconds];
    for (int s = 0; s < seconds; s++) {
      double slowdown = 1;
      long t = s * 1_000_000_000L;
      for (Incident i : d.incidents()) {
        long from = i.from().toNanos();
        long to = i.to().map(Duration::toNanos).orElse(Long.MAX_VALUE);
        if (t >= from && t < to) {
          slowdown *= i.factor();
        }
      }
      c[s] = healthy / slowdown;
    }
    return c;
  }

  /** The trade-off of a sweep: availability against the dependency's worst second, one point per value. */
  static JFreeChart tradeOff(SweepResult sweep) {
    XYSeriesCollection data = new XYSeriesCollection();
    List<String> arms = sweep.armNames();
    double lowestAvailability = 100;
    for (int a = 0; a < arms.size(); a++) {
      XYSeries s = new XYSeries(arms.get(a) + (sweep.changed(a) ? "" : " (unchanged by " + sweep.key() + ")"), false,
          true);
      for (SweepResult.Cell cell : sweep.cells(a)) {
        s.add(cell.worstSecond(), 100 * cell.availability());
        lowestAvailability = Math.min(lowestAvailability, 100 * cell.availability());
      }
      data.addSeries(s);
    }
    NumberAxis x = new NumberAxis("the dependency's worst second (attempts ÷ offered calls, ×)");
    x.setAutoRangeIncludesZero(false);
    NumberAxis y = new NumberAxis("availability of this client (%)");
    y.setAutoRangeIncludesZero(false);
    XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
    XYPlot plot = new XYPlot(data, x, y, renderer);
    plot.setBackgroundPaint(Color.WHITE);
    plot.setDomainGridlinePaint(new Color(0xDD, 0xDD, 0xDD));
    plot.setRangeGridlinePaint(new Color(0xDD, 0xDD, 0xDD));
    for (int a = 0; a < arms.size(); a++) {
      renderer.setSeriesPaint(a, colour(a));
      renderer.setSeriesStroke(a, new BasicStroke(1.8f));
      for (SweepResult.Cell cell : sweep.cells(a)) {
        String text = sweep.changed(a) ? " " + sweep.key() + " " + cell.value() : " " + arms.get(a);
        XYTextAnnotation label = new XYTextAnnotation(text, cell.worstSecond(), 100 * cell.availability());
        label.setFont(NOTE);
        label.setPaint(colour(a));
        label.setTextAnchor(TextAnchor.BOTTOM_LEFT);
        plot.addAnnotation(label);
      }
    }
    JFreeChart chart = new JFreeChart("The trade-off over " + sweep.key() + ": " + sweep.scenarioName(),
        new Font(Font.SANS_SERIF, Font.BOLD, 16), plot, true);
    chart.addSubtitle(new TextTitle("up and to the left is better: more of this client's calls succeed, and"
        + " the dependency's worst second stays lower (median of " + sweep.seeds() + (sweep.seeds() == 1 ? " seed"
        : " seeds") + ")", NOTE));
    chart.setBackgroundPaint(Color.WHITE);
    return chart;
  }

  private static XYSeries line(String name, long[] values, int bucket, TimeScale scale) {
    double[] d = new double[values.length];
    for (int i = 0; i < values.length; i++) {
      d[i] = values[i];
    }
    return line(name, d, bucket, scale);
  }

  /** A line of per-second values, as means over {@code bucket} seconds (NaN seconds left out). */
  private static XYSeries line(String name, double[] values, int bucket, TimeScale scale) {
    XYSeries series = new XYSeries(name, false, false);
    for (int start = 0; start < values.length; start += bucket) {
      double sum = 0;
      int n = 0;
      for (int s = start; s < Math.min(values.length, start + bucket); s++) {
        if (!Double.isNaN(values[s])) {
          sum += values[s];
          n++;
        }
      }
      if (n > 0) {
        series.add(start / scale.divisor, sum / n);
      }
    }
    return series;
  }

  private static BasicStroke dashed(float width, float dash) {
    return new BasicStroke(width, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND, 1f, new float[] {dash, dash}, 0f);
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

  private static void colourArms(XYPlot plot, int arms) {
    for (int i = 0; i < arms; i++) {
      plot.getRenderer().setSeriesPaint(i, colour(i));
    }
  }

  /** Seconds, minutes or hours on the time axis, whichever reads best for the run's length. */
  private static final class TimeScale {
    final String unit;
    final double divisor;

    private TimeScale(String unit, double divisor) {
      this.unit = unit;
      this.divisor = divisor;
    }

    static TimeScale of(int seconds) {
      if (seconds <= 1200) {
        return new TimeScale("s", 1);
      }
      return seconds <= 36_000 ? new TimeScale("min", 60) : new TimeScale("h", 3600);
    }
  }
}
