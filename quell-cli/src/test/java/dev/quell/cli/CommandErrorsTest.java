package dev.quell.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * SPEC §9 and issue 10: every invalid scenario value, flag or combination is one line on standard
 * error naming the key path, the value and what is allowed, with exit code 2, no stack trace, and
 * nothing run.
 */
class CommandErrorsTest {
  /** A valid scenario, short; each case changes one line of it. */
  private static final String GOOD = String.join("\n",
      "duration: 5m",
      "load: {perSecond: 50}",
      "dependency:",
      "  p50: 20ms",
      "  p99: 100ms",
      "  capacity: 400",
      "  incidents: [{brownout: 8, from: 2m, to: 3m}]",
      "arms:",
      "  - {name: budget off, policy: {attempts: 3, budget: none}}",
      "  - {name: budget on, policy: {attempts: 3, budget: automatic}}",
      "");

  @TempDir
  static Path dir;

  private static Arguments file(String name, String yaml, String... expected) {
    return Arguments.of(name, yaml, List.of(), List.of(expected));
  }

  /** GOOD with a dependency {@code tail}. */
  private static Arguments tail(String name, String tail, String... expected) {
    return file(name, GOOD.replace("  capacity: 400", "  capacity: 400\n  tail: " + tail), expected);
  }

  /** GOOD with {@code keys} added to the first arm's policy. */
  private static Arguments policy(String name, String keys, String... expected) {
    return file(name, GOOD.replace("attempts: 3, budget: none", "attempts: 3, budget: none, " + keys), expected);
  }

  private static Arguments flags(String name, List<String> args, String... expected) {
    return Arguments.of(name, null, args, List.of(expected));
  }

  static Stream<Arguments> mistakes() {
    return Stream.of(
        file("zero rate", GOOD.replace("perSecond: 50", "perSecond: 0"),
            "load.perSecond", "above 0", "was 0"),
        file("negative rate", GOOD.replace("perSecond: 50", "perSecond: -5"), "load.perSecond", "was -5"),
        file("rate not a number", GOOD.replace("perSecond: 50", "perSecond: .nan"),
            "load.perSecond", "finite number", "NaN"),
        file("rate a word", GOOD.replace("perSecond: 50", "perSecond: lots"), "load.perSecond", "\"lots\""),
        file("negative peers", GOOD.replace("perSecond: 50}", "perSecond: 50, peers: -1}"),
            "load.peers", "from 0 to 1000000", "was -1"),
        file("empty list of arms", GOOD.substring(0, GOOD.indexOf("arms:")) + "arms: []\n",
            "arms", "at least one arm"),
        file("duration over the limit", GOOD.replace("duration: 5m", "duration: 48h"),
            "duration", "from 1s to 24h", "was 48h"),
        file("duration that overflows", GOOD.replace("duration: 5m", "duration: 99999999999999h"),
            "duration", "too long"),
        file("duration without a unit", GOOD.replace("duration: 5m", "duration: 300"), "duration", "needs a unit"),
        file("negative duration", GOOD.replace("duration: 5m", "duration: PT-5M"), "duration", "was -5m"),
        file("incident after the run", GOOD.replace("from: 2m, to: 3m", "from: 6m, to: 7m"),
            "dependency.incidents[0].from", "after the end of the run", "was 6m"),
        file("incident ending before it starts", GOOD.replace("from: 2m, to: 3m", "from: 2m, to: 1m"),
            "dependency.incidents[0].to", "after from", "was 1m"),
        file("incident with from only", GOOD.replace("from: 2m, to: 3m", "from: 2m"),
            "dependency.incidents[0].to", "is missing"),
        file("duplicate key", GOOD.replace("  capacity: 400", "  capacity: 400\n  capacity: 500"),
            "line 7", "duplicate key 'capacity'"),
        file("unknown key", GOOD.replace("capacity: 400", "capacty: 400"),
            "dependency.capacty is not a key here", "capacity", "overload"),
        file("non-ASCII look-alike key", GOOD.replace("load: {", "lоad: {"), "lоad is not a key here"),
        file("budget hint speaks YAML", GOOD.replace("budget: automatic", "budget: {fraction: 0}"),
            "arms[1].policy.budget", "budget: none"),
        file("budget off, which YAML reads as false", GOOD.replace("budget: automatic", "budget: off"),
            "arms[1].policy.budget", "was false", "YAML reads an unquoted off", "write none to turn it off"),
        file("budget on, which YAML reads as true", GOOD.replace("budget: automatic", "budget: on"),
            "arms[1].policy.budget", "was true", "YAML reads an unquoted on"),
        policy("breaker no, which YAML reads as false", "breaker: no", "arms[0].policy.breaker", "was false",
            "write none to turn it off"),
        file("budget that is a word", GOOD.replace("budget: automatic", "budget: plenty"),
            "arms[1].policy.budget", "none, automatic", "\"plenty\""),
        file("zero capacity", GOOD.replace("capacity: 400", "capacity: 0"), "dependency.capacity", "from 1 to"),
        file("capacity too large", GOOD.replace("capacity: 400", "capacity: 99999999999999999999"),
            "dependency.capacity", "from 1 to 1000000000"),
        file("p99 below p50", GOOD.replace("p99: 100ms", "p99: 10ms"), "dependency.p99", "at least p50"),
        file("error rate above one", GOOD.replace("  capacity: 400", "  capacity: 400\n  errorRate: 1.5"),
            "dependency.errorRate", "from 0 to 1", "1.5"),
        file("zero attempts", GOOD.replace("attempts: 3, budget: none", "attempts: 0, budget: none"),
            "arms[0].policy.attempts", "from 1 to 1000", "was 0"),
        file("bounded queue below zero", GOOD.replace("  capacity: 400", "  capacity: 400\n  overload: {boundedQueue: -1}"),
            "dependency.overload.boundedQueue", "from 0 to"),
        file("unknown overload model", GOOD.replace("  capacity: 400", "  capacity: 400\n  overload: lifo"),
            "dependency.overload", "unboundedQueue", "\"lifo\""),
        // breakers, limiters, hedges and measured timing (issues 8 and 9): hostile values for every new key
        policy("breaker failure rate as a percentage", "breaker: {failureRate: 50}",
            "arms[0].policy.breaker", "failureRate", "50.0", "(0, 1]"),
        policy("breaker failure rate not a number", "breaker: {failureRate: .nan}",
            "arms[0].policy.breaker.failureRate", "finite number"),
        policy("breaker minimum calls negative", "breaker: {minimumCalls: -1}",
            "arms[0].policy.breaker.minimumCalls", "from 1 to", "was -1"),
        policy("breaker minimum calls huge", "breaker: {minimumCalls: 99999999999999999999999}",
            "arms[0].policy.breaker.minimumCalls", "from 1 to"),
        policy("breaker window of zero", "breaker: {window: 0ms}", "arms[0].policy.breaker", "window", "1 ms"),
        policy("breaker window that overflows", "breaker: {window: 99999999999999999h}",
            "arms[0].policy.breaker.window", "too long"),
        policy("breaker break negative", "breaker: {breakDuration: PT-5S}",
            "arms[0].policy.breaker", "breakDuration", "-5"),
        // how breaker settings fit together is judged where the breaker is built: the policy's key
        policy("breaker longest break below the first", "breaker: {breakDuration: 10s, maxBreakDuration: 5s}",
            "arms[0].policy", "breaker maxBreakDuration was 5000 ms", "breakDuration (10000 ms)"),
        policy("breaker probes zero", "breaker: {probes: 0}", "arms[0].policy.breaker.probes", "from 1 to 1000"),
        policy("breaker slow calls without a rate", "breaker: {slowCalls: {duration: 2s}}",
            "arms[0].policy.breaker.slowCalls.rate is missing"),
        policy("breaker slow-call rate above one", "breaker: {slowCalls: {duration: 2s, rate: 1.5}}",
            "arms[0].policy.breaker", "slow", "1.5"),
        policy("breaker a word", "breaker: yes", "arms[0].policy.breaker", "none, default", "true"),
        policy("breaker unknown setting", "breaker: {threshold: 0.5}",
            "arms[0].policy.breaker.threshold is not a key here", "failureRate"),
        policy("breaker key in look-alike letters", "brеaker: default", "brеaker is not a key here", "breaker"),
        policy("limiter of two kinds", "limiter: {rate: 50, burst: 5, concurrency: 10}",
            "arms[0].policy.limiter", "exactly one kind"),
        policy("limiter rate of zero", "limiter: {rate: 0, burst: 5}",
            "arms[0].policy.limiter", "perSecond", "greater than 0"),
        policy("limiter rate infinite", "limiter: {rate: .inf, burst: 5}",
            "arms[0].policy.limiter.rate", "finite number"),
        policy("limiter rate without a burst", "limiter: {rate: 50}", "arms[0].policy.limiter.burst is missing"),
        policy("limiter burst of zero", "limiter: {rate: 50, burst: 0}", "arms[0].policy.limiter.burst", "from 1"),
        policy("limiter burst beyond an int", "limiter: {rate: 50, burst: 3000000000}",
            "arms[0].policy.limiter.burst", "from 1 to 2147483647"),
        policy("limiter refill of centuries", "limiter: {rate: 0.000000001, burst: 100}",
            "arms[0].policy.limiter", "100 years"),
        policy("limiter negative wait", "limiter: {concurrency: 10, maxWait: PT-1S}",
            "arms[0].policy.limiter.maxWait", "must not be negative"),
        policy("limiter concurrency of zero", "limiter: {concurrency: 0}",
            "arms[0].policy.limiter.concurrency", "from 1"),
        policy("limiter adaptive mode unknown", "limiter: {adaptive: {mode: vegas}}",
            "arms[0].policy.limiter.adaptive.mode", "loss or gradient", "\"vegas\""),
        policy("limiter adaptive backoff ratio too low", "limiter: {adaptive: {backoffRatio: 0.3}}",
            "arms[0].policy.limiter.adaptive", "backoffRatio", "0.3"),
        policy("limiter adaptive limits out of order", "limiter: {adaptive: {minLimit: 50, maxLimit: 10}}",
            "arms[0].policy.limiter", "adaptive"),
        policy("limiter and limiters both", "limiter: {concurrency: 5}, limiters: [{concurrency: 5}]",
            "arms[0].policy", "both limiter: and limiters:"),
        policy("limiters not a list", "limiters: {concurrency: 5}", "arms[0].policy.limiters", "must be a list"),
        policy("hedge with both ways", "hedge: {after: 10ms, maxExtraLoad: 0.05}",
            "arms[0].policy.hedge", "exactly one of after:"),
        policy("hedge extra load of one", "hedge: {maxExtraLoad: 1}", "arms[0].policy.hedge.maxExtraLoad",
            "below 1", "was 1"),
        policy("hedge extra load negative", "hedge: {maxExtraLoad: -0.05}", "arms[0].policy.hedge.maxExtraLoad",
            "was -0.05"),
        policy("hedge delay negative", "hedge: {after: PT-0.01S}", "arms[0].policy.hedge.after",
            "must not be negative"),
        policy("hedge delay that overflows", "hedge: {after: 99999999999999999h}", "arms[0].policy.hedge.after",
            "too long"),
        policy("hedge delay without a unit", "hedge: {after: 10}", "arms[0].policy.hedge.after", "needs a unit"),
        policy("hedges too many", "hedge: {after: 10ms, maxHedges: 11}", "arms[0].policy.hedge.maxHedges",
            "from 1 to 10"),
        policy("hedge floor with a fixed delay", "hedge: {after: 10ms, floor: 1ms}", "arms[0].policy.hedge.floor",
            "maxExtraLoad"),
        policy("hedge retries a word", "hedge: {after: 10ms, retries: sometimes}", "arms[0].policy.hedge.retries",
            "true or false"),
        file("hedge with one attempt",
            GOOD.replace("attempts: 3, budget: none", "attempts: 1, budget: none, hedge: {after: 10ms}"),
            "arms[0].policy", "hedge"),
        policy("measured timing without its multiple", "measuredTiming: {floor: 50ms}",
            "arms[0].policy.measuredTiming.multipleOfP95 is missing"),
        policy("measured timing multiple of zero", "measuredTiming: {multipleOfP95: 0}",
            "arms[0].policy.measuredTiming", "multiple", "0"),
        policy("measured timing window of zero", "measuredTiming: {multipleOfP95: 3, window: 0s}",
            "arms[0].policy.measuredTiming", "window"),
        policy("measured timing minimum samples of zero", "measuredTiming: {multipleOfP95: 3, minSamples: 0}",
            "arms[0].policy.measuredTiming.minSamples", "from 1"),
        tail("tail share of zero", "{share: 0, p50: 1s, p99: 2s}", "dependency.tail.share", "above 0 and below 1",
            "was 0"),
        tail("tail share above one", "{share: 1.5, p50: 1s, p99: 2s}", "dependency.tail.share", "was 1.5"),
        tail("tail p99 below its p50", "{share: 0.1, p50: 1s, p99: 2ms}", "dependency.tail.p99", "at least p50"),
        tail("tail without a median", "{share: 0.1, p99: 2s}", "dependency.tail.p50 is missing"),
        tail("tail a number", "0.02", "dependency.tail must be a mapping"),
        flags("sweep of a breaker no arm has", List.of("--sweep", "breaker.window=10s,20s"), "--sweep breaker.window",
            "no arm has a breaker"),
        file("a seed named twice", GOOD + "seeds: [1, 1]\n", "seeds", "twice"),
        file("no load", GOOD.replace("load: {perSecond: 50}\n", ""), "load is missing", "perSecond"),
        file("not a mapping", "- one\n- two\n", "the scenario must be a mapping", "a list"),
        file("empty file", "", "is empty"),
        file("broken YAML", GOOD.replace("load: {perSecond: 50}", "load: {perSecond: 50"), "not valid YAML",
            "line"),
        file("arm names repeated", GOOD.replace("name: budget on", "name: budget off"),
            "arms[1].name", "repeats the arm name"),
        flags("no-chart with chart", List.of("--no-chart", "--chart", "x.png"), "--no-chart", "--chart",
            "contradict"),
        flags("chart into a missing folder", List.of("--chart", "no/such/folder/x.png"), "--chart",
            "does not exist"),
        flags("chart that is not a png", List.of("--chart", "x.txt"), "--chart", ".png"),
        flags("html that is not html", List.of("--html", "report.pdf"), "--html", ".html"),
        flags("json with csv on standard output", List.of("--json", "--csv"), "--json", "--csv", "standard output"),
        flags("zero seeds", List.of("--seeds", "0"), "--seeds", "from 1 to 1000", "\"0\""),
        flags("seeds a word", List.of("--seeds", "many"), "--seeds", "\"many\""),
        flags("a seed twice", List.of("--seeds", "1,1"), "--seeds", "twice"),
        flags("zero threads", List.of("--threads", "0"), "--threads", "from 1 to 1024", "was 0"),
        flags("threads a word", List.of("--threads", "all"), "--threads", "all"),
        flags("sweep without values", List.of("--sweep", "budget.fraction"), "--sweep", "KEY=V1,V2"),
        flags("sweep of one value", List.of("--sweep", "budget.fraction=0.1"), "--sweep", "from 2 to 50 values"),
        flags("sweep of words", List.of("--sweep", "budget.fraction=low,high"), "--sweep",
            "numbers or durations", "\"low\""),
        flags("sweep of an unknown key", List.of("--sweep", "colour.depth=1,2"), "--sweep", "colour.depth",
            "not a scenario key"),
        flags("sweep to a value the key refuses", List.of("--sweep", "budget.fraction=0,0.5"),
            "--sweep budget.fraction=0", "arms[1].policy.budget", "(0, 1]", "budget: none"),
        flags("sweep to a negative peer count", List.of("--scenario", "topology", "--sweep", "load.peers=0,-1"),
            "--sweep load.peers=-1", "load.peers", "from 0"),
        flags("unknown scenario", List.of("--scenario", "nonsense"), "--scenario", "reference", "no file"),
        flags("scenario that is a folder", List.of("--scenario", "."), "--scenario", "folder"),
        flags("unknown option", List.of("--bogus"), "Unknown option", "--bogus", "--help"),
        flags("stray argument", List.of("extra"), "extra"),
        flags("a run far too big", List.of("--scenario", "HUGE"), "too big", "--allow-large",
            "200,000,000 attempts"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("mistakes")
  void aMistakeIsOneLineWithExitCodeTwo(String name, String yaml, List<String> flags, List<String> expected)
      throws Exception {
    List<String> args = new ArrayList<>(List.of("simulate", "--no-chart"));
    if (flags.contains("--chart") || flags.contains("--no-chart")) {
      args.remove("--no-chart");
    }
    if (yaml != null) {
      Path f = dir.resolve(name.replaceAll("[^a-z]+", "-") + ".yaml");
      Files.writeString(f, yaml);
      args.add("--scenario");
      args.add(f.toString());
    }
    for (String flag : flags) {
      args.add(flag.equals("HUGE") ? huge().toString() : flag);
    }
    QuellRunner quell = new QuellRunner();
    int code = quell.run(args.toArray(new String[0]));

    String err = quell.err();
    assertThat(code).as(err).isEqualTo(2);
    assertThat(err.strip().lines().count()).as(err).isEqualTo(1);
    assertThat(err).startsWith("quell simulate: ").doesNotContain("Exception").doesNotContain("\tat ");
    for (String fragment : expected) {
      assertThat(err).as("message").contains(fragment);
    }
    assertThat(quell.out()).as("nothing ran").isEmpty();
  }

  @Test
  void withoutASubcommandTheUsageGoesToStandardErrorWithExitCodeTwo() {
    QuellRunner quell = new QuellRunner();
    int code = quell.run();

    assertThat(code).isEqualTo(2);
    assertThat(quell.err()).startsWith("quell: which command?").contains("Usage: quell").contains("simulate");
    assertThat(quell.out()).isEmpty();
  }

  @Test
  void aFileThatCannotBeWrittenSaysWhyWithExitCodeOne() throws Exception {
    // a folder this user may not write in: a read-only one, or, for root (who may write anywhere else), /sys
    Path readOnly = Files.createDirectory(dir.resolve("read-only"));
    readOnly.toFile().setWritable(false);
    Path folder = Files.isWritable(readOnly) ? Path.of("/sys") : readOnly;
    assumeTrue(Files.isDirectory(folder), "no folder refuses a file here");
    try {
      QuellRunner quell = new QuellRunner();
      int code = quell.run("simulate", "--no-chart", "--html", folder.resolve("r.html").toString());

      assertThat(code).isEqualTo(1);
      assertThat(quell.err().strip()).isEqualTo("quell simulate: cannot write " + folder.resolve("r.html")
          + ": permission denied");
    } finally {
      readOnly.toFile().setWritable(true);
    }
  }

  private static Path huge() throws Exception {
    Path f = dir.resolve("huge.yaml");
    Files.writeString(f, GOOD.replace("duration: 5m", "duration: 24h").replace("perSecond: 50", "perSecond: 1000000"));
    return f;
  }
}
