package dev.quell.cli.internal;

import dev.quell.sim.KneeBenchmark;
import dev.quell.sim.KneeBenchmark.Contender;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * A benchmark file: a scenario with {@code benchmark: adaptive-limits} runs {@link KneeBenchmark}
 * instead of arms, and prints its table. The built-in one is {@code adaptive-limits}
 * (docs/scenarios/benchmarks/adaptive-limits.yaml).
 */
final class BenchmarkFile {
  static final String BUILT_IN = "adaptive-limits";
  private static final Set<String> KEYS = Set.of("name", "description", "benchmark", "variants", "contenders", "seeds");
  private static final Map<String, Contender> CONTENDERS = new LinkedHashMap<>();

  static {
    CONTENDERS.put("quell", Contender.quellAdaptive());
    CONTENDERS.put("quell-loss", Contender.quellLoss());
    CONTENDERS.put("envoy-gradient", Contender.envoyGradient());
  }

  final List<KneeBenchmark.Variant> variants;
  final List<Contender> contenders;
  final long[] seeds;

  private BenchmarkFile(List<KneeBenchmark.Variant> variants, List<Contender> contenders, long[] seeds) {
    this.variants = variants;
    this.contenders = contenders;
    this.seeds = seeds;
  }

  /** The benchmark {@code scenario} names (the built-in, or a YAML file with a benchmark key); null when it is none. */
  static @Nullable BenchmarkFile find(String scenario) {
    String text;
    if (scenario.toLowerCase(Locale.ROOT).equals(BUILT_IN)) {
      text = builtIn();
    } else {
      Path file;
      try {
        file = Paths.get(scenario);
      } catch (RuntimeException e) {
        return null;
      }
      if (!Files.isRegularFile(file)) {
        return null;
      }
      try {
        text = Files.readString(file, StandardCharsets.UTF_8);
      } catch (IOException e) {
        return null; // the scenario reader reports it
      }
    }
    Object root;
    try {
      root = new Yaml(new SafeConstructor(new LoaderOptions())).load(text);
    } catch (YAMLException e) {
      return null; // the scenario reader reports it, with its line
    }
    if (!(root instanceof Map) || !((Map<?, ?>) root).containsKey("benchmark")) {
      return null;
    }
    return parse((Map<?, ?>) root);
  }

  static String builtIn() {
    try (InputStream in = BenchmarkFile.class.getResourceAsStream(
        "/dev/quell/cli/scenarios/benchmarks/" + BUILT_IN + ".yaml")) {
      if (in == null) {
        throw new IllegalStateException("the built-in benchmark " + BUILT_IN + " is missing from the command's jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read the built-in benchmark " + BUILT_IN, e);
    }
  }

  private static BenchmarkFile parse(Map<?, ?> root) {
    for (Object key : root.keySet()) {
      if (!KEYS.contains(String.valueOf(key))) {
        throw new ScenarioException("benchmark file: unknown key '" + key + "'; the keys are " + KEYS);
      }
    }
    if (!BUILT_IN.equals(String.valueOf(root.get("benchmark")))) {
      throw new ScenarioException("benchmark must be " + BUILT_IN + ", was \"" + root.get("benchmark") + "\"");
    }
    List<KneeBenchmark.Variant> variants = new ArrayList<>();
    Object v = root.get("variants");
    if (v == null || "all".equals(v)) {
      variants.addAll(KneeBenchmark.variants());
    } else {
      for (Object name : list(v, "variants")) {
        try {
          variants.add(KneeBenchmark.variant(String.valueOf(name)));
        } catch (IllegalArgumentException e) {
          throw new ScenarioException("variants: " + e.getMessage());
        }
      }
    }
    List<Contender> contenders = new ArrayList<>();
    Object c = root.get("contenders");
    if (c == null) {
      contenders.addAll(CONTENDERS.values());
    } else {
      for (Object name : list(c, "contenders")) {
        Contender known = CONTENDERS.get(String.valueOf(name));
        if (known == null) {
          throw new ScenarioException("contenders: no contender '" + name + "'; the contenders are "
              + CONTENDERS.keySet());
        }
        contenders.add(known);
      }
    }
    long[] seeds = {1};
    Object s = root.get("seeds");
    if (s != null) {
      List<?> given = list(s, "seeds");
      seeds = new long[given.size()];
      for (int i = 0; i < given.size(); i++) {
        if (!(given.get(i) instanceof Number)) {
          throw new ScenarioException("seeds[" + i + "] must be a whole number, was \"" + given.get(i) + "\"");
        }
        seeds[i] = ((Number) given.get(i)).longValue();
      }
    }
    return new BenchmarkFile(variants, contenders, seeds);
  }

  private static List<?> list(Object value, String key) {
    if (value instanceof List && !((List<?>) value).isEmpty()) {
      return (List<?>) value;
    }
    throw new ScenarioException(key + " must be a non-empty list, was \"" + value + "\"");
  }

  /** Runs each seed and prints its table. */
  void run(long @Nullable [] cliSeeds, PrintWriter out) {
    for (long seed : cliSeeds != null ? cliSeeds : seeds) {
      List<KneeBenchmark.Row> rows = new ArrayList<>();
      for (KneeBenchmark.Variant variant : variants) {
        rows.add(KneeBenchmark.row(variant, contenders, seed));
      }
      out.println("adaptive-limit benchmark, seed " + seed + " (goodput against the best fixed limit a sweep finds;"
          + " in band: share of time within [K/2, 3K/2] of the knee)");
      out.print(KneeBenchmark.table(rows));
      out.flush();
    }
  }
}
