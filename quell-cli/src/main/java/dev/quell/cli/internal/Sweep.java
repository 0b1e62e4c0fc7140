package dev.quell.cli.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * {@code --sweep KEY=V1,V2,...}: one numeric scenario key, run at each value. A key is a path in the
 * scenario file ({@code load.perSecond}, {@code dependency.capacity},
 * {@code dependency.overload.boundedQueue}, {@code arms[1].policy.attempts}), or a policy key
 * ({@code attempts}, {@code budget.fraction}, {@code breaker.window}, {@code hedge.after},
 * {@code policy.deadline}...), which applies to every policy of every arm. A budget key leaves a
 * policy without a budget ({@code budget: none}) alone, and turns {@code automatic} into the same
 * budget written out ({@code fraction: 0.1, minimumPerSecond: 3}) with the swept key changed; a
 * breaker, limiter, hedge or measured-timing key likewise leaves a policy without one alone, and
 * writes {@code breaker: default} out as an empty mapping (the defaults) before changing it.
 */
public final class Sweep {
  private static final Set<String> POLICY_KEYS = Set.of("attempts", "deadline", "attemptTimeout", "backoff", "budget",
      "breaker", "limiter", "hedge", "measuredTiming");
  /** Policy keys a policy may lack (or set to none): a sweep of one of their settings leaves such a policy alone. */
  private static final Set<String> OPTIONAL = Set.of("breaker", "limiter", "hedge", "measuredTiming");
  private static final Set<String> TOP_KEYS = Set.of("duration", "load", "dependency", "dependencies", "services",
      "arms");
  private static final Pattern SEGMENT = Pattern.compile("([A-Za-z][A-Za-z0-9_-]*)((?:\\[\\d+])*)");
  private static final int MOST_VALUES = 50;

  private final String key;
  private final List<String> texts;
  private final List<Object> values;

  private Sweep(String key, List<String> texts, List<Object> values) {
    this.key = key;
    this.texts = texts;
    this.values = values;
  }

  /** Reads {@code KEY=V1,V2,...}. */
  public static Sweep parse(String option) {
    int eq = option.indexOf('=');
    if (eq <= 0) {
      throw new ScenarioException("--sweep must be KEY=V1,V2,... such as budget.fraction=0.05,0.1,0.2,0.5, was \""
          + option + "\"");
    }
    String key = option.substring(0, eq).trim();
    for (String segment : key.split("\\.", -1)) {
      if (!SEGMENT.matcher(segment).matches()) {
        throw new ScenarioException("--sweep key must be a path of names such as load.perSecond, budget.fraction or"
            + " arms[1].policy.attempts, was \"" + key + "\"");
      }
    }
    String[] parts = option.substring(eq + 1).split(",", -1);
    if (parts.length < 2 || parts.length > MOST_VALUES) {
      throw new ScenarioException("--sweep " + key + " needs from 2 to " + MOST_VALUES + " values separated by commas,"
          + " was \"" + option.substring(eq + 1) + "\"");
    }
    List<String> texts = new ArrayList<>();
    List<Object> values = new ArrayList<>();
    for (String part : parts) {
      String text = part.trim();
      Object value = scalar(text);
      if (!(value instanceof Number) && !isDuration(text)) {
        throw new ScenarioException("--sweep " + key + " values must be numbers or durations (such as 0.1, 400 or"
            + " 160ms), was \"" + text + "\"");
      }
      if (texts.contains(text)) {
        throw new ScenarioException("--sweep " + key + " names the value " + text + " twice");
      }
      texts.add(text);
      values.add(value);
    }
    return new Sweep(key, List.copyOf(texts), values);
  }

  private static Object scalar(String text) {
    if (text.isEmpty()) {
      return "";
    }
    Object v = ScenarioFile.load(text, "--sweep");
    return v == null ? "" : v;
  }

  private static boolean isDuration(String text) {
    try {
      Durations.parse(text, "");
      return true;
    } catch (ScenarioException e) {
      return false;
    }
  }

  /** The key swept, as given. */
  public String key() {
    return key;
  }

  /** The values, as given. */
  public List<String> values() {
    return texts;
  }

  /** One point of the sweep: the scenario with the key set to one value, and the arms that changed. */
  public record Point(String value, ScenarioFile file, List<Boolean> changed) {}

  /** The scenario at every value; every value is checked before any runs. */
  public List<Point> apply(ScenarioFile base, String origin) {
    Map<String, Object> original = base.tree();
    List<Point> points = new ArrayList<>();
    for (int v = 0; v < values.size(); v++) {
      Map<String, Object> tree = Trees.copy(original);
      boolean everywhere = set(tree, values.get(v));
      ScenarioFile file;
      try {
        file = ScenarioFile.of(tree, base.scenario().name(), origin, base.source());
      } catch (ScenarioException e) {
        throw new ScenarioException("--sweep " + key + "=" + texts.get(v) + ": " + e.getMessage(), e);
      }
      List<Boolean> changed = new ArrayList<>();
      List<?> before = arms(original);
      List<?> after = arms(tree);
      for (int a = 0; a < after.size(); a++) {
        changed.add(everywhere || !Objects.equals(before.get(a), after.get(a)));
      }
      points.add(new Point(texts.get(v), file, changed));
    }
    return points;
  }

  private static List<?> arms(Map<String, Object> tree) {
    Object arms = tree.get("arms");
    if (arms instanceof List) {
      return (List<?>) arms;
    }
    return List.of(tree.getOrDefault("policy", Map.of()));
  }

  /** Sets the key in {@code tree}; true when the change is outside the arms (so every arm changed). */
  @SuppressWarnings("unchecked")
  private boolean set(Map<String, Object> tree, Object value) {
    List<String> path = new ArrayList<>(List.of(key.split("\\.")));
    String first = name(path.get(0));
    if (first.equals("policy") || POLICY_KEYS.contains(first)) {
      if (first.equals("policy")) {
        path.remove(0);
        if (path.isEmpty()) {
          throw new ScenarioException("--sweep policy needs a policy key after it, such as policy.attempts");
        }
      }
      int applied = 0;
      for (Map<String, Object> policy : policies(tree)) {
        applied += setInPolicy(policy, path, value) ? 1 : 0;
      }
      if (applied == 0) {
        String head = path.get(0);
        throw new ScenarioException("--sweep " + key + " changes no policy: no arm has a " + head + " to change"
            + " (every arm's " + head + " is none)");
      }
      return false;
    }
    if (!TOP_KEYS.contains(first)) {
      throw new ScenarioException("--sweep key " + key + " is not a scenario key: start it with one of "
          + String.join(", ", List.of("load", "dependency", "dependencies", "duration", "arms")) + ", or a policy key ("
          + String.join(", ", List.of("attempts", "deadline", "attemptTimeout", "backoff", "budget", "breaker",
          "limiter", "hedge", "measuredTiming")) + ")");
    }
    Object at = tree;
    for (int i = 0; i < path.size(); i++) {
      boolean last = i == path.size() - 1;
      Matcher m = SEGMENT.matcher(path.get(i));
      m.matches();
      String name = m.group(1);
      List<Integer> indexes = indexes(m.group(2));
      if (!(at instanceof Map)) {
        throw new ScenarioException("--sweep " + key + ": " + String.join(".", path.subList(0, i))
            + " is not a mapping in this scenario, so it has no key " + name);
      }
      Map<String, Object> map = (Map<String, Object>) at;
      if (last && indexes.isEmpty()) {
        map.put(name, value);
        break;
      }
      Object next = map.get(name);
      if (next == null || next instanceof String && name.equals("overload")) {
        if (!indexes.isEmpty()) {
          throw new ScenarioException("--sweep " + key + ": this scenario has no list " + name);
        }
        next = new LinkedHashMap<String, Object>();
        map.put(name, next);
      }
      for (int k = 0; k < indexes.size(); k++) {
        int index = indexes.get(k);
        if (!(next instanceof List) || index >= ((List<?>) next).size()) {
          throw new ScenarioException("--sweep " + key + ": " + name + " has no entry [" + index + "] in this scenario");
        }
        if (last && k == indexes.size() - 1) {
          ((List<Object>) next).set(index, value);
          return !first.equals("arms");
        }
        next = ((List<?>) next).get(index);
      }
      at = next;
    }
    return !first.equals("arms");
  }

  private static String name(String segment) {
    int bracket = segment.indexOf('[');
    return bracket < 0 ? segment : segment.substring(0, bracket);
  }

  private static List<Integer> indexes(String brackets) {
    List<Integer> list = new ArrayList<>();
    Matcher m = Pattern.compile("\\[(\\d+)]").matcher(brackets);
    while (m.find()) {
      try {
        list.add(Integer.parseInt(m.group(1)));
      } catch (NumberFormatException e) {
        throw new ScenarioException("--sweep index [" + m.group(1) + "] is too large");
      }
    }
    return list;
  }

  /** Every policy of every arm: each arm's policy, then its named policies. */
  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> policies(Map<String, Object> tree) {
    List<Map<String, Object>> all = new ArrayList<>();
    List<Object> arms = new ArrayList<>();
    if (tree.get("arms") instanceof List) {
      arms.addAll((List<Object>) tree.get("arms"));
    } else if (tree.get("policy") instanceof Map) {
      all.add((Map<String, Object>) tree.get("policy"));
    }
    for (Object arm : arms) {
      if (!(arm instanceof Map)) {
        continue;
      }
      Map<String, Object> a = (Map<String, Object>) arm;
      if (!(a.get("policy") instanceof Map)) {
        a.put("policy", new LinkedHashMap<String, Object>());
      }
      all.add((Map<String, Object>) a.get("policy"));
      if (a.get("policies") instanceof Map) {
        for (Object p : ((Map<String, Object>) a.get("policies")).values()) {
          if (p instanceof Map) {
            all.add((Map<String, Object>) p);
          }
        }
      }
    }
    return all;
  }

  @SuppressWarnings("unchecked")
  private boolean setInPolicy(Map<String, Object> policy, List<String> path, Object value) {
    String head = path.get(0);
    if (path.size() == 1) {
      policy.put(head, value);
      return true;
    }
    if (path.size() > 2) {
      throw new ScenarioException("--sweep " + key + " is too deep: a policy key has at most two parts, such as"
          + " budget.fraction or backoff.max");
    }
    @Nullable Object current = policy.get(head);
    if (head.equals("budget")) {
      if ("none".equals(current)) {
        return false;
      }
      if (current == null || "automatic".equals(current)) {
        Map<String, Object> written = new LinkedHashMap<>();
        written.put("fraction", 0.1);
        written.put("minimumPerSecond", 3);
        current = written;
      }
    } else if (OPTIONAL.contains(head)) {
      if (current == null || "none".equals(current)) {
        return false; // a policy without one keeps going without one
      }
      if ("default".equals(current)) {
        current = new LinkedHashMap<String, Object>(); // the defaults, written out (with no setting changed)
      }
    } else if (head.equals("backoff") && current instanceof String && !"none".equals(current)) {
      Map<String, Object> written = new LinkedHashMap<>();
      written.put("exponential", current);
      current = written;
    }
    if (!(current instanceof Map)) {
      throw new ScenarioException("--sweep " + key + ": a policy's " + head + " is " + ScenarioFile.show(current)
          + ", which has no " + path.get(1));
    }
    Map<String, Object> inner = Trees.copy((Map<String, Object>) current);
    inner.put(path.get(1), value);
    policy.put(head, inner);
    return true;
  }
}
