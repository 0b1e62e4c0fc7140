package dev.quell.sim;

import dev.quell.sim.KneeBenchmark.Contender;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Prints the benchmark when asked: -Dquell.benchmark=all (or a variant's name). */
class KneeBenchmarkPrint {
  @Test
  void print() {
    String which = System.getProperty("quell.benchmark");
    org.junit.jupiter.api.Assumptions.assumeTrue(which != null, "run with -Dquell.benchmark=all to print the table");
    List<Contender> contenders = new ArrayList<>(Contender.builtIn());
    if (!"quell".equals(System.getProperty("quell.contenders"))) {
      contenders.addAll(NetflixContenders.all());
    } else {
      contenders = List.of(Contender.quellAdaptive());
    }
    List<KneeBenchmark.Row> rows = new ArrayList<>();
    for (KneeBenchmark.Variant v : KneeBenchmark.variants()) {
      if ("all".equals(which) || which.contains(v.name())) {
        long t0 = System.nanoTime();
        KneeBenchmark.Row row = KneeBenchmark.row(v, contenders, 1);
        rows.add(row);
        System.out.print(KneeBenchmark.table(List.of(row)));
        System.out.println("  (" + (System.nanoTime() - t0) / 1_000_000 + " ms)");
      }
    }
    System.out.println(KneeBenchmark.markdown(rows));
  }
}
