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
import java.awt.geom.Ellipse2D;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.LegendItemCollection;
import org.jfree.chart.annotations.XYDrawableAnnotation;
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
  /** Behind words written over lines, so a line crossing them does not strike them through. */
  private static final Color LABEL_BACKGROUND = new Color(0xFF, 0xFF, 0xFF, 0xC8);
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
  public static void png(JFreeChart chart, Path file, int width, int height) throws IOException {
    // through NIO, so a failure is a typed exception that says why (java.io's names only the file)
    try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file))) {
      ChartUtils.writeChartAsPNG(out, chart, width, height);
    }
  }

  /** Draws {@code chart} as an SVG element of {@code width} × {@code height}. */
  static String svg(JFreeChart chart, int width, int height) {
    SVGGraphics2D g = new SVGGraphics2D(width, height);
    chart.draw(g, new Rectangle(0, 0, width, height));
    return g.getSVGElement();
  }

  /** The run chart of a scenario's first seed; {@code bounds} gives each arm's budget, if it has one. */
  public static JFreeChart run(ScenarioResult result, Map<String, BudgetBound> bounds) {
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
      // with more than two arms the worst second goes into the arm's name in the legend (see below)
      String worst = arms.size() > 2 ? worstFigure(r, topology, watched) : null;
      XYSeries a = line(worst == null ? arm.name() : arm.name() + " (" + worst + ")", perSecond, bucket, scale);
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

    // the budget's bound and the dependency's capacity, in the same units as the attempts; arms with
    // the same bound share one line (five identical dashed lines would only hide the attempts)
    List<BudgetBound> distinct = new ArrayList<>();
    List<String> boundNames = new ArrayList<>();
    List<Color> boundColours = new ArrayList<>();
    if (!topology) {
      for (int i = 0; i < arms.size(); i++) {
        BudgetBound b = bounds.get(arms.get(i).name());
        if (b != null && !distinct.contains(b)) {
          distinct.add(b);
          boundColours.add(colour(i));
          boundNames.add(arms.get(i).name());
        }
      }
      long budgeted = arms.stream().filter(a -> bounds.get(a.name()) != null).count();
      for (int k = 0; k < distinct.size(); k++) {
        BudgetBound b = distinct.get(k);
        double[] bound = new double[seconds];
        for (int s = 0; s < seconds; s++) {
          bound[s] = offered[s] * (1 + b.fraction()) + b.minimumPerSecond();
        }
        String owner = distinct.size() == 1 && budgeted > 1 ? "every budget's bound" : boundNames.get(k) + ": budget's bound";
        if (distinct.size() == 1 && budgeted > 1) {
          boundColours.set(0, OFFERED);
        }
        attempts.addSeries(line(owner + " (" + Text.number(b.fraction() * 100) + "% of calls + "
            + Text.number(b.minimumPerSecond()) + "/s)", bound, bucket, scale));
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
    for (Color c : boundColours) {
      renderer.setSeriesPaint(next, c);
      renderer.setSeriesStroke(next, dashed(1f, 2f));
      next++;
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
    // the headline: each arm's worst second, where it happened. Two arms get an arrow each, pointing
    // away from the nearer edge so the words stay inside; more arms would pile their words on one
    // another, so each gets a dot and its figure goes into its name in the legend instead
    boolean arrows = arms.size() <= 2;
    double[] highestWorst = {0};
    for (ScenarioResult.ArmResult arm : arms) {
      SimulationReport r = arm.first();
      int at = topology ? r.node(watched.name()).worstSecondAt() : r.worstSecondAt();
      if (at >= 0) {
        highestWorst[0] = Math.max(highestWorst[0],
            topology ? r.node(watched.name()).attemptsPerSecond()[at] : r.series().get(at).attempts());
      }
    }
    boolean[] firstUp = {false};
    double span = seconds / scale.divisor;
    for (int i = 0; i < arms.size(); i++) {
      SimulationReport r = arms.get(i).first();
      double worst = topology ? r.node(watched.name()).worstSecond() : r.worstSecond();
      int at = topology ? r.node(watched.name()).worstSecondAt() : r.worstSecondAt();
      if (at < 0 || Double.isNaN(worst)) {
        continue;
      }
      double x = at / scale.divisor;
      double y = topology ? r.node(watched.name()).attemptsPerSecond()[at] : r.series().get(at).attempts();
      String figure = worstFigure(r, topology, watched);
      if (arrows) {
        // text to the right of the point in the left part of the chart, to its left in the right part
        // and above the higher point, below the lower one unless that is near the panel's floor
        boolean right = x < span * 0.55;
        boolean up = y >= highestWorst[0] || y < Math.max(1, top * 1.3) * 0.25;
        double angle = right ? (up ? -Math.PI / 4 : Math.PI / 4) : (up ? -Math.PI * 3 / 4 : Math.PI * 3 / 4);
        XYPointerAnnotation p = new XYPointerAnnotation(arms.get(i).name() + ": " + figure, x, y, angle);
        p.setFont(NOTE);
        p.setPaint(colour(i));
        p.setArrowPaint(colour(i));
        p.setBackgroundPaint(LABEL_BACKGROUND);
        p.setTextAnchor(right ? (up ? TextAnchor.BOTTOM_LEFT : TextAnchor.TOP_LEFT)
            : (up ? TextAnchor.BOTTOM_RIGHT : TextAnchor.TOP_RIGHT));
        // when both go the same way, the second arm's arrow is longer, so their words stay apart
        if (up == firstUp[0] && i > 0) {
          p.setBaseRadius(p.getBaseRadius() + 45);
        }
        firstUp[0] = up;
        attemptsPlot.addAnnotation(p);
      } else {
        Color c = colour(i);
        attemptsPlot.addAnnotation(new XYDrawableAnnotation(x, y, 9, 9, (g, area) -> {
          g.setPaint(c);
          g.fill(new Ellipse2D.Double(area.getX(), area.getY(), area.getWidth(), area.getHeight()));
        }));
      }
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
    // a panel with nothing to show (every arm near 100% all along) gets less room
    boolean steady = true;
    for (ScenarioResult.ArmResult arm : arms) {
      for (Second sec : arm.first().series()) {
        steady &= sec.offered() == 0 || sec.availability() >= 0.99;
      }
    }
    plot.add(availabilityPlot, steady ? 1 : 2);

    if (latencyMatters(arms)) {
      XYSeriesCollection latency = new XYSeriesCollection();
      double highest = 1;
      for (ScenarioResult.ArmResult arm : arms) {
        double[] p99 = new double[seconds];
        for (int s = 0; s < seconds; s++) {
          p99[s] = arm.first().series().get(s).latencyP99Millis();
        }
        XYSeries l = line(arm.name(), p99, bucket, scale);
        latency.addSeries(l);
        highest = Math.max(highest, l.isEmpty() ? 0 : l.getMaxY());
      }
      XYPlot latencyPlot = panel(latency, "call latency p99 (ms)" + (bucket > 1 ? ", " + bucket + " s means" : ""),
          true);
      colourArms(latencyPlot, arms.size());
      ((NumberAxis) latencyPlot.getRangeAxis()).setRange(0, highest * 1.08);
      plot.add(latencyPlot, 2);
    }

    if (tokens.getSeriesCount() > 0) {
      XYPlot tokensPlot = panel(tokens, "budget tokens" + (pods > 1 ? " (this pod)" : ""), true);
      double most = 1;
      for (int k = 0; k < tokens.getSeriesCount(); k++) {
        most = Math.max(most, tokens.getSeries(k).getMaxY());
      }
      // room below the lines for naming the budgets: one line per distinct budget, naming its arms
      Map<String, List<Integer>> spenders = new LinkedHashMap<>();
      int k = 0;
      for (int i = 0; i < arms.size(); i++) {
        EdgeReport entry = arms.get(i).first().entry();
        if (!"none".equals(entry.budget())) {
          tokensPlot.getRenderer().setSeriesPaint(k++, colour(i));
          spenders.computeIfAbsent(describe(entry, bounds.get(arms.get(i).name())), d -> new ArrayList<>()).add(i);
        }
      }
      int named = 0;
      for (Map.Entry<String, List<Integer>> e : spenders.entrySet()) {
        List<Integer> who = e.getValue();
        String text = who.size() == 1 ? arms.get(who.get(0)).name() + " spends from budget " + e.getKey()
            : (who.size() == k ? "each arm" : who.size() + " arms") + " spends from a budget of its own: " + e.getKey();
        XYTextAnnotation name = new XYTextAnnotation(text, seconds / scale.divisor * 0.01,
            -most * (0.08 + 0.14 * named++));
        name.setFont(NOTE);
        name.setPaint(who.size() == 1 ? colour(who.get(0)) : OFFERED);
        name.setTextAnchor(TextAnchor.CENTER_LEFT);
        tokensPlot.addAnnotation(name);
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
      if (topology) { // the entry's figures and the drawn node's are different numbers: each names its node
        headline.append(arm.name()).append(": load ").append(Text.fixed(r.loadMultiplier(), 2))
            .append("× and worst second ").append(Text.fixed(r.worstSecond(), 2)).append("× at ").append(r.entry().to())
            .append(" (").append(Text.fixed(r.node(watched.name()).worstSecond(), 2)).append("× at ")
            .append(watched.name()).append(')');
      } else {
        headline.append(arm.name()).append(": load ").append(Text.fixed(r.loadMultiplier(), 2))
            .append("×, worst second ").append(Text.fixed(r.worstSecond(), 2)).append('×');
      }
      headline.append(", availability ").append(Text.percent(r.availability())).append(", ")
          .append(r.diagnosis().label());
    }
    chart.addSubtitle(new TextTitle(headline.toString(), new Font(Font.SANS_SERIF, Font.PLAIN, 13)));
    chart.setBackgroundPaint(Color.WHITE);
    return chart;
  }

  /**
   * Whether the chart needs a latency panel: when an arm hedges (its story is the tail), or when the
   * arms' call p99s differ by a quarter or more.
   */
  private static boolean latencyMatters(List<ScenarioResult.ArmResult> arms) {
    double low = Double.MAX_VALUE;
    double high = 0;
    for (ScenarioResult.ArmResult a : arms) {
      if (!"none".equals(a.first().entry().hedge())) {
        return true;
      }
      double p99 = a.first().latency().p99().toNanos();
      low = Math.min(low, p99);
      high = Math.max(high, p99);
    }
    return arms.size() > 1 && high > 1.25 * Math.max(1, low);
  }

  /** "worst second 1.13× at 4:49", naming the node in a topology; null when no call arrived. */
  private static @Nullable String worstFigure(SimulationReport r, boolean topology, NodeReport watched) {
    double worst = topology ? r.node(watched.name()).worstSecond() : r.worstSecond();
    int at = topology ? r.node(watched.name()).worstSecondAt() : r.worstSecondAt();
    if (at < 0 || Double.isNaN(worst)) {
      return null;
    }
    return (topology ? watched.name() + "'s " : "") + "worst second " + Text.fixed(worst, 2) + "× at "
        + Text.clock(Duration.ofSeconds(at));
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
    // room around the points, so no point sits on the frame and no label runs off it
    double xLow = Double.MAX_VALUE;
    double xHigh = -Double.MAX_VALUE;
    double yLow = Double.MAX_VALUE;
    double yHigh = -Double.MAX_VALUE;
    for (int a = 0; a < arms.size(); a++) {
      for (SweepResult.Cell cell : sweep.cells(a)) {
        xLow = Math.min(xLow, cell.worstSecond());
        xHigh = Math.max(xHigh, cell.worstSecond());
        yLow = Math.min(yLow, 100 * cell.availability());
        yHigh = Math.max(yHigh, 100 * cell.availability());
      }
    }
    double dx = Math.max(xHigh - xLow, Math.max(0.05 * Math.abs(xHigh), 0.01));
    double dy = Math.max(yHigh - yLow, 0.5);
    x.setRange(xLow - 0.12 * dx, xHigh + 0.12 * dx);
    y.setRange(yLow - 0.1 * dy, yHigh + 0.12 * dy);
    Labels placed = new Labels(x.getLowerBound(), x.getUpperBound(), y.getLowerBound(), y.getUpperBound());
    for (int a = 0; a < arms.size(); a++) {
      for (SweepResult.Cell cell : sweep.cells(a)) {
        placed.point(cell.worstSecond(), 100 * cell.availability());
      }
    }
    for (int a = 0; a < arms.size(); a++) {
      renderer.setSeriesPaint(a, colour(a));
      renderer.setSeriesStroke(a, new BasicStroke(1.8f));
      boolean first = true;
      for (SweepResult.Cell cell : sweep.cells(a)) {
        // the key once per curve, then the values alone: close points keep their labels apart
        String text = sweep.changed(a) ? (first ? sweep.key() + " " : "") + cell.value() : arms.get(a);
        first = false;
        XYTextAnnotation label = placed.place(text, cell.worstSecond(), 100 * cell.availability());
        label.setFont(NOTE);
        label.setPaint(colour(a));
        label.setBackgroundPaint(LABEL_BACKGROUND);
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

  /**
   * Where each label of the sweep chart goes: beside its point, on the first side (right above,
   * right below, left above, left below) where it overlaps no label placed before and stays inside
   * the plot. Sizes are estimated in pixels of the 1100 × 750 chart the command draws.
   */
  private static final class Labels {
    private static final double PLOT_WIDTH = 1000;
    private static final double PLOT_HEIGHT = 600;
    private static final double CHAR_WIDTH = 7;
    private static final double LINE_HEIGHT = 16;
    private static final double GAP = 5;
    private final double xLow;
    private final double xSpan;
    private final double yLow;
    private final double ySpan;
    private final List<double[]> taken = new ArrayList<>();

    Labels(double xLow, double xHigh, double yLow, double yHigh) {
      this.xLow = xLow;
      this.xSpan = xHigh - xLow;
      this.yLow = yLow;
      this.ySpan = yHigh - yLow;
    }

    /** Keeps labels off the point (x, y). */
    void point(double x, double y) {
      double px = (x - xLow) / xSpan * PLOT_WIDTH;
      double py = (y - yLow) / ySpan * PLOT_HEIGHT;
      taken.add(new double[] {px - 4, py - 4, px + 4, py + 4});
    }

    /** Places a label for the point (x, y): the anchor, and where the anchor goes, in the chart's units. */
    XYTextAnnotation place(String text, double x, double y) {
      double px = (x - xLow) / xSpan * PLOT_WIDTH;
      double py = (y - yLow) / ySpan * PLOT_HEIGHT; // upwards
      double w = text.length() * CHAR_WIDTH + GAP;
      double h = LINE_HEIGHT;
      TextAnchor[] anchors = {TextAnchor.BOTTOM_LEFT, TextAnchor.TOP_LEFT, TextAnchor.BOTTOM_RIGHT,
          TextAnchor.TOP_RIGHT};
      // beside the point first; when every side is taken, stacked a line further away each time
      for (int away = 0; away < 12; away++) {
        for (int side = 0; side < anchors.length; side++) {
          boolean right = side < 2;
          boolean up = side % 2 == 0;
          double left = right ? px + GAP : px - GAP - w;
          double bottom = up ? py + away * h : py - h - away * h;
          double[] box = {left, bottom, left + w, bottom + h};
          if (box[0] < 0 || box[2] > PLOT_WIDTH || box[1] < 0 || box[3] > PLOT_HEIGHT || !free(box)) {
            continue;
          }
          taken.add(box);
          double ax = xLow + (right ? box[0] : box[2]) / PLOT_WIDTH * xSpan;
          double ay = yLow + (up ? box[1] : box[3]) / PLOT_HEIGHT * ySpan;
          XYTextAnnotation label = new XYTextAnnotation(text, ax, ay);
          label.setTextAnchor(anchors[side]);
          return label;
        }
      }
      XYTextAnnotation label = new XYTextAnnotation(text, x, y); // nowhere free: on the point, inside the plot
      label.setTextAnchor(px + w <= PLOT_WIDTH ? TextAnchor.BOTTOM_LEFT : TextAnchor.BOTTOM_RIGHT);
      return label;
    }

    private boolean free(double[] b) {
      for (double[] t : taken) {
        if (!(b[2] <= t[0] || b[0] >= t[2] || b[3] <= t[1] || b[1] >= t[3])) {
          return false;
        }
      }
      return true;
    }
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
